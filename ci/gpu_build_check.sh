#!/usr/bin/env bash
# CUDA compile-and-link checks (docs/gpu.md). There is no GPU on these machines: nothing
# here runs on one. Called at the end of ci/test.sh; fails CI when anything fails to build.
#
#  (a) host side: the Kokkos-free cuBLAS and NCCL sources (kernels/gram/cublas_gram.cpp,
#      comm/nccl_communicator.cpp, app/capabilities.cpp) built by the host compiler against
#      the toolkit in $MINISGD_CUDA13 (default /usr/local/cuda: CUDA 13 with cuBLAS and NCCL)
#      into ci/gpu_host_check's driver, which then runs and checks that, without a GPU, every
#      GPU entry point refuses with a reason.
#  (b) minisgd — library, programs, benchmarks and the tests whose own sources hold Kokkos code
#      (MINISGD_TESTS_DEVICE_ONLY: the other tests are host code the host stages build) — with Kokkos
#      3.4.01 + CUDA 11.8 (ci/build_kokkos.sh cuda, cached) through nvcc_wrapper with g++-11,
#      cuBLAS from the same toolkit and NCCL from $MINISGD_CUDA13 (its nccl.h alone is copied
#      to a directory of its own so no CUDA 13 header leaks into the 11.8 build; libnccl.so
#      carries its CUDA runtime statically). Nothing is run.
#
# MINISGD_GPU_CHECK=off skips both, =host runs (a) only. The build trees (build/gpu-host,
# build/cuda) are kept, so a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source ci/env.sh

mode=${MINISGD_GPU_CHECK:-all}
CUDA13=${MINISGD_CUDA13:-/usr/local/cuda}
jobs=${MINISGD_JOBS:-$(nproc)}
SECONDS=0
[[ "$mode" == off ]] && { echo "=== GPU build check: skipped (MINISGD_GPU_CHECK=off)"; exit 0; }
mkdir -p build

# Ninja when there is one (fewer restat costs on rebuilds), else Make.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# ---- (a) host-side sources against CUDA 13 ---------------------------------------------
echo "=== GPU build check (a): host-side cuBLAS/NCCL sources against $CUDA13"
if [[ ! -f "$CUDA13/include/cublas_v2.h" || ! -f "$CUDA13/include/nccl.h" ]]; then
  echo "GPU build check (a): FAILED: no cuBLAS/NCCL headers in $CUDA13 (set MINISGD_CUDA13)" >&2
  exit 1
fi
t0=$SECONDS
log=build/gpu-host.log
if ! { cmake -S ci/gpu_host_check -B build/gpu-host "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
         -DCUDAToolkit_ROOT="$CUDA13" && cmake --build build/gpu-host -j"$jobs"; } >"$log" 2>&1; then
  grep -E 'error|Error' "$log" | head -40 || tail -40 "$log"
  echo "GPU build check (a): FAILED to compile/link (log: $log)" >&2
  exit 1
fi
echo "compiled and linked build/gpu-host/gpu_host_check in $((SECONDS - t0)) s; running it:"
build/gpu-host/gpu_host_check
[[ "$mode" == host ]] && exit 0

# ---- (b) the whole of minisgd with Kokkos CUDA --------------------------------------------
echo "=== GPU build check (b): minisgd with Kokkos 3.4.01 + CUDA 11.8 (nvcc_wrapper, g++-11)"
t0=$SECONDS
# Kokkos Kernels for CUDA is built without explicit instantiations (see build_kokkos.sh), so
# the KokkosBlas calls are compiled for the CUDA space right here, in minisgd's own sources.
prefix=$(ci/build_kokkos.sh cuda | tail -n 1)
echo "Kokkos CUDA prefix $prefix ($((SECONDS - t0)) s)"
export CUDA_ROOT=/usr NVCC_WRAPPER_DEFAULT_COMPILER=g++-11
export PATH="/usr/bin:$PATH"  # Debian's ptxas/nvlink before CUDA 13's (see build_kokkos.sh)

# ccache (content-hashed, so it hits across fresh clones): a rebuild with nothing changed
# takes seconds instead of a full nvcc build. Installed here when missing (root only).
launcher=()
if ! command -v ccache >/dev/null && ((EUID == 0)); then
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y \
    --no-install-recommends ccache >build/ccache-install.log 2>&1 ||
    { apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends ccache; } \
      >>build/ccache-install.log 2>&1 || echo "(ccache not installed: building without it)"
fi
if command -v ccache >/dev/null; then
  export CCACHE_DIR=$MINISGD_CACHE/ccache-cuda CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-3G}
  ccache --zero-stats >/dev/null
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

nccl_dir=$MINISGD_CACHE/nccl-header-only/include  # outside the tree: CMake's export rules
mkdir -p "$nccl_dir"
cp -u "$CUDA13/include/nccl.h" "$nccl_dir/"

t0=$SECONDS
log=build/cuda.log
cfg=(-S . -B build/cuda "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper"
     -DCMAKE_PREFIX_PATH="$prefix" -DKokkos_DIR="$prefix/lib/cmake/Kokkos"
     -DKokkosKernels_DIR="$prefix/lib/cmake/KokkosKernels"
     -DCUDAToolkit_ROOT=/usr
     -DMINISGD_ENABLE_CUBLAS=ON -DMINISGD_ENABLE_NCCL=ON
     -DNCCL_INCLUDE_DIR="$nccl_dir" -DNCCL_LIBRARY="$CUDA13/lib64/libnccl.so"
     -DMINISGD_ENABLE_TESTS=ON -DMINISGD_TESTS_DEVICE_ONLY=ON -DMINISGD_ENABLE_BENCHMARKS=ON
     -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 "${launcher[@]}")
# (Unity sources, as gcc-openmp and clang-checked: nvcc parses Kokkos' CUDA headers once a unit,
# not once a source; gcc-serial compiles each source alone.)
if ! cmake "${cfg[@]}" >"$log" 2>&1; then
  tail -40 "$log"
  echo "GPU build check (b): FAILED to configure (log: $log)" >&2
  exit 1
fi
grep -E '^-- minisgd GPU:' "$log" || true
if ! cmake --build build/cuda -j"$jobs" >>"$log" 2>&1; then
  grep -E -B2 -A6 'error|Error' "$log" | head -80
  echo "GPU build check (b): FAILED to compile/link (log: $log)" >&2
  exit 1
fi
# A host function called from device code (#20011-#20015) or a KOKKOS_LAMBDA capturing
# `this` (#20178: a host pointer on the device) compiles with a warning and fails only when
# the kernel runs on a GPU: in minisgd's own sources that is an error here.
# (ccache replays the messages of the clone that compiled them: match paths by their tail.)
if grep -E '/(src/minisgd|src/app|tests|perf|testkit)/[^ ]*\([0-9]+\): warning #(2001[1-5]|20178)' "$log" |
   sort -u >build/cuda-host-device.txt &&
   [[ -s build/cuda-host-device.txt ]]; then
  sed -E 's/(function\("[^"]{0,120})[^"]*"/\1..."/g' build/cuda-host-device.txt | head -20
  echo "GPU build check (b): FAILED: host functions called from device code (above)" >&2
  exit 1
fi
[[ ${#launcher[@]} -gt 0 ]] && echo "ccache: $(ccache --print-stats | awk -F'\t' \
  '$1=="direct_cache_hit"{d=$2} $1=="preprocessed_cache_hit"{p=$2} $1=="cache_miss"{m=$2} END{printf "%d hits, %d misses", d+p, m}')"
# What was built: every executable and library of the project (not CMake's own probes).
mapfile -t built < <(find build/cuda -path '*/CMakeFiles' -prune -o -type f \
  \( -name '*.a' -o -name '*.so' -o -perm -u+x \) -print | while read -r f; do
    file -b "$f" | grep -qE 'ELF|ar archive' && echo "$f"; done | sort)
n=${#built[@]}
((n > 0)) || { echo "GPU build check (b): FAILED: nothing was built" >&2; exit 1; }
printf '  %s\n' "${built[@]#build/cuda/}"
echo "CUDA build: compiled and linked $n targets in $((SECONDS - t0)) s (nothing run: no GPU here)"
echo "=== GPU build check done in $SECONDS s"
