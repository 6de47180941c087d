#!/usr/bin/env bash
# CI (what .ci/run runs): static checks, then a matrix of build configurations, each built once
# (through ccache, whose cache persists under $MINISGD_CACHE) and its whole ctest suite run once,
# then the CUDA compile check. One timing line per stage, and a summary with the total at the end.
#
#   gcc-serial     GCC 12, Debian's Serial Kokkos 3.4.01, every optional part (oneDNN, Google
#                  Benchmark, tests); then install + find_package(minisgd) from a downstream project
#   gcc-openmp     GCC 12, OpenMP Kokkos 3.4.01 + Kernels with OpenBLAS (ci/build_kokkos.sh
#                  openmp), every optional part: a race in a team kernel is invisible on Serial;
#                  the host kernels' generic vector tier alone (MINISGD_SIMD=generic), which the
#                  other stages run beside the AVX2 and AVX-512 tiers the machine has
#   clang-checked  Clang 14 with every optional part absent (oneDNN, benchmarks; Kokkos Kernels
#                  without a BLAS TPL), tests on, under AddressSanitizer + UndefinedBehaviorSanitizer,
#                  on a Serial Kokkos 3.4.01 with View bounds checking (ci/build_kokkos.sh
#                  serial-checked)
#   gpu            CUDA compile-and-link check of the whole project (ci/gpu_build_check.sh)
#
# A warning in minisgd's own sources fails its stage (found in the build log rather than by
# -Werror, so the flags, and ccache's entries, are those of a developer's build).
# MINISGD_CI_STAGES="gcc-serial clang-checked" runs a subset (default: every stage).
# shellcheck disable=SC2317  # (stage functions are called through `stage`)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source ci/env.sh
jobs=$(nproc)
mkdir -p build

# ccache for every host configuration: content-hashed with paths relative to the checkout, so
# fresh clones hit the same cache.
export CCACHE_DIR=${CCACHE_DIR:-$MINISGD_CACHE/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-4G}
launcher=()     # ccache, once the deps stage has installed it (below)
ctest_extra=()  # a stage's own ctest arguments

# ---- stage bookkeeping -----------------------------------------------------------------------
CI_START=$SECONDS
summary=()
stage() {  # name, command...: runs it, prints and records its wall time
  local name=$1 t0=$SECONDS; shift
  echo "=== [$name] start ($(date -u +%H:%M:%S) UTC)"
  if "$@"; then
    summary+=("$(printf '  %-16s ok     %5d s' "$name" $((SECONDS - t0)))")
    echo "=== [$name] ok in $((SECONDS - t0)) s"
  else
    summary+=("$(printf '  %-16s FAILED %5d s' "$name" $((SECONDS - t0)))")
    echo "=== [$name] FAILED after $((SECONDS - t0)) s"
    return 1
  fi
}
print_summary() {
  echo "=== CI summary ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '%s\n' "${summary[@]}"
  printf '  %-16s        %5d s\n' total $((SECONDS - CI_START))
}
trap print_summary EXIT
want() { [[ " ${MINISGD_CI_STAGES:-deps static gcc-serial gcc-openmp clang-checked gpu} " == *" $1 "* ]]; }

# ---- configure, build, test ------------------------------------------------------------------
# (Stage functions run as an `if` condition, where `set -e` does not apply: every step that can
# fail says `|| return 1`.)
build_and_test() {  # name, extra cmake args...
  local name=$1; shift
  local dir=build/$name t0=$SECONDS
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" \
    > "$dir.log" 2>&1 || { tail -40 "$dir.log"; return 1; }
  grep -E '^-- (oneDNN|Google Benchmark|minisgd GPU)' "$dir.log" || true
  if ((${#launcher[@]})); then ccache --zero-stats > /dev/null; fi
  cmake --build "$dir" -j"$jobs" >> "$dir.log" 2>&1 ||
    { grep -E -A5 'error|Error' "$dir.log" | head -60; return 1; }
  echo "built $dir in $((SECONDS - t0)) s${launcher:+ ($(ccache_line))}"
  # (ccache replays a cached compile's warnings, so a warm build reports them too.)
  if grep -E '(^|/)(src|tests|perf|testkit)/[^ :]+:[0-9]+:[0-9]+: warning:' "$dir.log" | sort -u > "$dir.warnings" &&
     [[ -s "$dir.warnings" ]]; then
    head -40 "$dir.warnings"; echo "$(wc -l < "$dir.warnings") warnings in minisgd's sources"; return 1
  fi
  t0=$SECONDS
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 600 "${ctest_extra[@]}") || return 1
  echo "tested $dir in $((SECONDS - t0)) s"
}
ccache_line() {
  ccache --print-stats | awk -F'\t' '$1=="direct_cache_hit"{d=$2} $1=="preprocessed_cache_hit"{p=$2}
    $1=="cache_miss"{m=$2} END{printf "ccache: %d hits, %d misses", d+p, m}'
}

install_check() {  # the installed package works for a downstream find_package(minisgd)
  local dir=$PWD/build/$1  # absolute: CMake does not resolve a relative CMAKE_PREFIX_PATH
  echo "install and find_package(minisgd) from a downstream project ($1)"
  rm -rf "$dir-install" "$dir-consumer"
  cmake --install "$dir" --prefix "$dir-install" > /dev/null
  cmake -S tests/install_consumer -B "$dir-consumer" -DCMAKE_PREFIX_PATH="$dir-install;${2:-}" > "$dir-consumer.log" 2>&1 &&
    cmake --build "$dir-consumer" >> "$dir-consumer.log" 2>&1 || { tail -30 "$dir-consumer.log"; return 1; }
  "$dir-consumer/consumer"
}

# gcc-serial compiles each source on its own, as a developer does (so a source that misses an
# include fails there). The other stages check other compilers, backends and sanitizers on the
# same code: they compile it as unity sources, a fraction of the CPU time when nothing is cached.
# (GCC warns about anonymous-namespace types used in lambdas of an included .cpp: only unity
# sources include a .cpp.)
unity=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)

kokkos_args() {  # prefix -> the CMake arguments that select that Kokkos (+ Kernels) install
  echo "-DCMAKE_PREFIX_PATH=$1 -DKokkos_DIR=$1/lib/cmake/Kokkos -DKokkosKernels_DIR=$1/lib/cmake/KokkosKernels"
}

gcc_serial() { build_and_test gcc-serial -DCMAKE_CXX_COMPILER=g++ && install_check gcc-serial; }

gcc_openmp() {
  local prefix
  prefix=$(ci/build_kokkos.sh openmp | tail -n 1) || return 1
  # Header self-containment is a property of the sources, not of the backend: gcc-serial checks
  # it. So is the handling of input, outputs and signals (the CLI tests labelled "input": the
  # readers run before any kernel): gcc-serial runs them at 1 and 4 ranks, clang-checked at 1
  # under the sanitizers.
  # A parallel test gives two threads to a lone rank and one to each of several (tests/
  # CMakeLists.txt): at 2 and 4 ranks this stage would rerun gcc-serial's runs on one thread
  # each. It runs 1 rank (threads) and 3 (several ranks on this backend); gcc-serial runs 1..4.
  local -a ctest_extra=(-E '^header_self_containment$' -LE input)
  # shellcheck disable=SC2046
  build_and_test gcc-openmp -DCMAKE_CXX_COMPILER=g++ -DMINISGD_SIMD=generic $(kokkos_args "$prefix") \
    "${unity[@]}" -DCMAKE_CXX_FLAGS=-Wno-subobject-linkage -DMINISGD_TEST_RANKS="1;3"
}

clang_checked() {
  local prefix san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  prefix=$(ci/build_kokkos.sh serial-checked | tail -n 1) || return 1
  # Open MPI's runtime leaks by design: leak checking off; every other report fails the test.
  # -O2 with assertions on (no NDEBUG). The deck-level runs of every compressor
  # (test_compression_decks) are left to the GCC stages: under ASan + bounds checks they took
  # over 300 s per rank count at -O1; test_compressors and test_codecs cover the same code here.
  # Parallel tests at 1 and 3 ranks (one rank, and a count that is not a power of two); the GCC
  # stages run every count of 1..4. Also left to the GCC stages: the thread-count invariance
  # runs (this Kokkos is Serial: one thread) and the CLI's input-handling tests at 4 ranks
  # (label input_np4; they run here at 1 rank).
  # The CLI tests' hang limits (10 s) are for optimized builds: three times that here.
  # HWLOC_COMPONENTS=-pci: at two ranks or more MPI_Init has hwloc read the PCI devices, whose
  # many reallocs under ASan made every parallel run start in ~8 s (0.7 s without; a tiny deck
  # at P = 2), most of this stage's time. The optimized builds do not need it (0.75 s either way).
  # shellcheck disable=SC2046
  (export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 MINISGD_TEST_TIME_SCALE=3 \
          HWLOC_COMPONENTS=-pci
   ctest_extra=(-E '^(test_compression_decks[.]|header_self_containment$|cli[.]same_weights_any_threads[.])' -LE input_np4)
   build_and_test clang-checked -DCMAKE_CXX_COMPILER=clang++ $(kokkos_args "$prefix") "${unity[@]}" \
      -DMINISGD_ENABLE_DNNL=OFF -DMINISGD_ENABLE_BENCHMARKS=OFF -DMINISGD_ENABLE_TESTS=ON \
      -DMINISGD_TEST_RANKS="1;3" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1" \
      -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san")
}

want deps && stage deps ci/install_deps.sh
# Looked up only now: on a fresh machine the deps stage is what installs ccache, and a cold run
# that built without it left the next run an empty cache (106 misses of 109 in gcc-serial).
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# On a cold machine the later stages first download Debian's trilinos sources (Kokkos) and the
# CUDA toolkit (network and disk), then build a Kokkos for each (about 5 minutes of CPU). Both
# run in the background from here: the downloads while gcc-serial compiles, the Kokkos builds
# at the lowest CPU priority, mostly while gcc-serial's tests leave a core idle (they wait on
# process start-up much of the time). build_kokkos.sh's lock lets one builder at a time into the
# cache and its stamp makes a finished build a no-op, so a stage that needs a Kokkos the
# background has not built yet builds or waits for it itself, and a failed background build is
# retried there with its own error.
background_pid=
background_kokkos() {
  local first=$1; shift
  MINISGD_KOKKOS_FETCH_ONLY=1 ci/build_kokkos.sh "$first" || true
  for backend in "$@"; do nice -n 19 ci/build_kokkos.sh "$backend" || true; done
}
backends=()
want gcc-openmp && backends+=(openmp)
want clang-checked && backends+=(serial-checked)
want gpu && [[ ${MINISGD_GPU_CHECK:-all} == all ]] && backends+=(cuda)
if ((${#backends[@]})); then
  # the CUDA fetch takes the trilinos sources too
  if [[ " ${backends[*]} " == *" cuda "* ]]; then first=cuda; else first=${backends[0]}; fi
  set -m  # a process group of its own, so that an early exit stops its builds too
  background_kokkos "$first" "${backends[@]}" > build/prefetch.log 2>&1 &
  background_pid=$!
  set +m
  trap 'kill -- -"$background_pid" 2>/dev/null || true; print_summary' EXIT
  trap 'exit 143' TERM HUP INT  # (so that a killed run also stops the background's builds)
fi
prefetched() {  # after the last stage: the background's outcome, once
  [[ -n $background_pid ]] || return 0
  wait "$background_pid" || true
  grep -E '^build_kokkos: .*(fetched|done|cached|FAILED)' build/prefetch.log | sed 's/^/background: /' || true
  background_pid=
}

# ---- static checks (fast: before anything is built) ------------------------------------------
# no upward include between the layers of src/minisgd (docs/design.md); clang-format clean;
# every repository path src/ and docs/ name exists
static_checks() { ci/check_layers.sh && ci/check_format.sh && ci/check_paths.sh; }
want static && stage static static_checks

# ---- the build matrix ------------------------------------------------------------------------
want gcc-serial && stage gcc-serial gcc_serial
want gcc-openmp && stage gcc-openmp gcc_openmp
want clang-checked && stage clang-checked clang_checked
# CUDA build of minisgd, compiled and linked, nothing run (no GPU here): docs/gpu.md.
want gpu && stage gpu ci/gpu_build_check.sh
prefetched
exit 0
