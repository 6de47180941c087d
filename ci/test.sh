#!/usr/bin/env bash
# Installs what is missing, then builds and runs the whole test suite through ctest on every
# Kokkos backend available here: Debian's Serial Kokkos and a cached OpenMP build of the same
# release (ci/build_kokkos.sh). A race in a team kernel is invisible on Serial.
# MINISGD_BACKENDS="serial openmp" selects backends.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source ci/env.sh
ci/check_layers.sh  # no upward include between the layers of src/minisgd (docs/design.md)
ci/install_deps.sh
jobs=$(nproc)

build_and_test() {  # name, extra cmake args...
  local name=$1; shift
  local dir=build/$name
  echo "=== minisgd: configure and build ($name)"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" > "$dir.log" 2>&1 || { tail -40 "$dir.log"; return 1; }
  cmake --build "$dir" -j"$jobs" >> "$dir.log" 2>&1 || { grep -E 'error|Error' "$dir.log" | head -40; return 1; }
  echo "=== minisgd: tests ($name)"
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 600)
}

install_check() {  # the installed package works for a downstream find_package(minisgd)
  local dir=$PWD/build/$1  # absolute: CMake does not resolve a relative CMAKE_PREFIX_PATH
  echo "=== minisgd: install and find_package(minisgd) from a downstream project ($1)"
  rm -rf "$dir-install" "$dir-consumer"
  cmake --install "$dir" --prefix "$dir-install" > /dev/null
  cmake -S tests/install_consumer -B "$dir-consumer" -DCMAKE_PREFIX_PATH="$dir-install;${2:-}" > "$dir-consumer.log" 2>&1 &&
    cmake --build "$dir-consumer" >> "$dir-consumer.log" 2>&1 || { tail -30 "$dir-consumer.log"; return 1; }
  "$dir-consumer/consumer"
}

mkdir -p build
for backend in ${MINISGD_BACKENDS:-serial openmp}; do
  case $backend in
    serial) build_and_test serial && install_check serial ;;
    openmp)
      prefix=$(ci/build_kokkos.sh openmp | tail -n 1)
      build_and_test openmp -DCMAKE_PREFIX_PATH="$prefix" -DKokkos_DIR="$prefix/lib/cmake/Kokkos" \
                     -DKokkosKernels_DIR="$prefix/lib/cmake/KokkosKernels" ;;
    *) echo "unknown backend '$backend'" >&2; exit 2 ;;
  esac
done

# CUDA build of minisgd, compiled and linked, nothing run (no GPU here): docs/gpu.md.
ci/gpu_build_check.sh
