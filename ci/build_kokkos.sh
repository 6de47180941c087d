#!/usr/bin/env bash
# Build a standalone Kokkos 3.4.01 (+ Kokkos Kernels) for one backend and cache it.
#
#   ci/build_kokkos.sh openmp   -> $MINISGD_CACHE/kokkos-openmp  (Serial + OpenMP, Kernels w/ OpenBLAS)
#   ci/build_kokkos.sh serial-checked -> $MINISGD_CACHE/kokkos-serial-checked  (Serial with View
#                               bounds checking, Kernels without a BLAS TPL; CI's sanitizer stage)
#   ci/build_kokkos.sh cuda     -> $MINISGD_CACHE/kokkos-cuda    (Serial + CUDA 11.8, sm_80; compile-only here)
#
# MINISGD_KOKKOS_FETCH_ONLY=1: only download what the build needs (the sources and, for cuda, the
# toolkit) and return; ci/test.sh runs that in the background while the first stage compiles,
# then the builds themselves at the lowest priority.
#
# Why: Debian ships Kokkos 3.4.01 with the Serial backend only; a race in a
# team kernel is invisible on Serial, and CUDA code must at least compile.
# The sources are packages/kokkos{,-kernels} of Debian's `trilinos` source
# package, the only Kokkos source reachable from these machines.
# The last line printed is the install prefix (usable as CMAKE_PREFIX_PATH).
# A stamp holding the configuration makes a repeated call print "cached" and
# return at once; changing any option below rebuilds.
set -euo pipefail

usage() { echo "usage: $0 openmp|serial-checked|cuda" >&2; exit 2; }
(($# == 1)) || usage
BACKEND=$1
case "$BACKEND" in openmp | serial-checked | cuda) ;; *) usage ;; esac

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=ci/env.sh
source "$HERE/env.sh"

PREFIX="$MINISGD_CACHE/kokkos-$BACKEND"
SRC_CACHE="$MINISGD_CACHE/src"
BUILD="$MINISGD_CACHE/build/kokkos-$BACKEND"
STAMP="$PREFIX/.minisgd-build-stamp"
JOBS=${MINISGD_JOBS:-$(nproc)}

# CUDA: Debian's non-free toolkit (11.8) with g++-11 as host compiler.  Not
# /usr/local/cuda (CUDA 13): Kokkos 3.4 does not build with it.
CUDA_ROOT_DEBIAN=/usr
CUDA_HOST_CXX=g++-11

# ---- configuration (everything here goes into the stamp) -------------------
COMMON_ARGS=(
  -G Ninja
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_INSTALL_PREFIX="$PREFIX"
  -DCMAKE_INSTALL_LIBDIR=lib
  # Static + PIC: consumers need no RPATH/LD_LIBRARY_PATH, and can still
  # build shared libraries on top.
  -DBUILD_SHARED_LIBS=OFF
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
)
KOKKOS_ARGS=(
  -DKokkos_CXX_STANDARD=17
  -DKokkos_ENABLE_SERIAL=ON
  -DKokkos_ENABLE_TESTS=OFF
  -DKokkos_ENABLE_EXAMPLES=OFF
)
# Kernels: small explicit instantiation set (build time), the rest is
# instantiated in the user's translation units as needed (ETI_ONLY=OFF).
KERNELS_ARGS=(
  -DKokkosKernels_INST_DOUBLE=ON
  -DKokkosKernels_INST_FLOAT=ON
  -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF
  -DKokkosKernels_INST_COMPLEX_FLOAT=OFF
  -DKokkosKernels_INST_LAYOUTLEFT=ON
  -DKokkosKernels_INST_LAYOUTRIGHT=ON
  -DKokkosKernels_INST_OFFSET_INT=ON
  -DKokkosKernels_INST_OFFSET_SIZE_T=ON
  -DKokkosKernels_INST_ORDINAL_INT=ON
  -DKokkosKernels_INST_ORDINAL_INT64_T=OFF
  -DKokkosKernels_ENABLE_TESTS=OFF
  -DKokkosKernels_ENABLE_EXAMPLES=OFF
)
case "$BACKEND" in
  openmp)
    KOKKOS_ARGS+=(-DKokkos_ENABLE_OPENMP=ON)
    # OpenBLAS behind KokkosBlas (gemv/gemm/... on host views of double/float).
    KERNELS_ARGS+=(-DKokkosKernels_ENABLE_TPL_BLAS=ON -DBLA_VENDOR=OpenBLAS)
    # Instantiate the BLAS component for OpenMP only: the default (also sparse
    # and graph, and everything again for Serial) took > 15 min on 2 cores;
    # this set takes ~3.5 CPU-minutes.  Sparse/graph and Serial calls still
    # work, compiled in the caller's translation unit.
    KERNELS_ARGS+=(-DKokkosKernels_ENABLED_COMPONENTS=BLAS -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF)
    BUILD_KERNELS=1
    ;;
  serial-checked)
    # Every View access checked (Kokkos aborts with the label and index), and Kokkos Kernels
    # with no BLAS TPL, so its own gemm runs: the configuration with every optional part
    # absent. No explicit instantiations (as for CUDA): minisgd's sources instantiate the
    # few KokkosBlas kernels they call, and the library builds in about a minute.
    KOKKOS_ARGS+=(-DKokkos_ENABLE_DEBUG_BOUNDS_CHECK=ON)
    KERNELS_ARGS+=(-DKokkosKernels_ENABLE_TPL_BLAS=OFF -DKokkosKernels_ENABLED_COMPONENTS=BLAS
      -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF
      -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=OFF
      -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF
      -DKokkosKernels_INST_ORDINAL_INT=OFF)
    BUILD_KERNELS=1
    ;;
  cuda)
    KOKKOS_ARGS+=(
      -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON
      -DCUDAToolkit_ROOT="$CUDA_ROOT_DEBIAN"
    )
    KERNELS_ARGS+=(-DKokkosKernels_ENABLE_TPL_BLAS=OFF -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF
      -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF)
    # No explicit instantiations through nvcc (over an hour on 2 cores): the
    # library is then a handful of files (~30 s), and minisgd's translation
    # units instantiate the few BLAS kernels they call.
    KERNELS_ARGS+=(-DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF
      -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=OFF
      -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF
      -DKokkosKernels_INST_ORDINAL_INT=OFF)
    BUILD_KERNELS=${MINISGD_CUDA_KERNELS:-1}
    ;;
esac
STAMP_CONTENT="kokkos 3.4.01 backend=$BACKEND kernels=$BUILD_KERNELS
${COMMON_ARGS[*]}
${KOKKOS_ARGS[*]}
${KERNELS_ARGS[*]}"

# ---- fast path ---------------------------------------------------------------
if [[ -f "$STAMP" && "$(<"$STAMP")" == "$STAMP_CONTENT" ]]; then
  echo "build_kokkos: $BACKEND cached"
  echo "$PREFIX"
  exit 0
fi

mkdir -p "$MINISGD_CACHE" "$SRC_CACHE"
# One builder at a time per cache (parallel CI jobs share $MINISGD_CACHE).
exec 9>"$MINISGD_CACHE/.build_kokkos.lock"
flock 9
if [[ -f "$STAMP" && "$(<"$STAMP")" == "$STAMP_CONTENT" ]]; then
  echo "build_kokkos: $BACKEND cached (built by a concurrent job)"
  echo "$PREFIX"
  exit 0
fi

need_root() {
  if ((EUID != 0)); then
    echo "build_kokkos: needs root to $1" >&2
    exit 1
  fi
}

# Run a long step with its output in a log; show the tail only on failure.
run_logged() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "build_kokkos: FAILED: $*" >&2
    echo "---- last 40 lines of $log ----" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}

SECONDS=0

# ---- CUDA toolkit (Debian non-free) -----------------------------------------
if [[ "$BACKEND" == cuda ]]; then
  cuda_missing=()
  for pkg in nvidia-cuda-toolkit "$CUDA_HOST_CXX"; do
    [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)" == "install ok installed" ]] ||
      cuda_missing+=("$pkg")
  done
  if ((${#cuda_missing[@]})); then
    need_root "install ${cuda_missing[*]}"
    # nvidia-cuda-toolkit lives in non-free, and its libcuda1 dependency needs
    # nvidia-support from contrib; add both components for bookworm in a file
    # of its own unless some source already provides them.
    if ! grep -rqsE '^[^#]*non-free([[:space:]]|$)' /etc/apt/sources.list /etc/apt/sources.list.d/ ||
       ! grep -rqsE '^[^#]*contrib([[:space:]]|$)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      cat >/etc/apt/sources.list.d/minisgd-non-free.sources <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib non-free non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    fi
    echo "build_kokkos: installing ${cuda_missing[*]} (the CUDA toolkit is a large download)"
    t0=$SECONDS
    export DEBIAN_FRONTEND=noninteractive
    # DPkg::Lock::Timeout: wait for, rather than fail on, a concurrent apt run.
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${cuda_missing[@]}"
    echo "build_kokkos: toolkit install took $((SECONDS - t0)) s"
  fi
  [[ -x "$CUDA_ROOT_DEBIAN/bin/nvcc" ]] || { echo "build_kokkos: $CUDA_ROOT_DEBIAN/bin/nvcc missing" >&2; exit 1; }
  # nvcc_wrapper runs $CUDA_ROOT/bin/nvcc (else whatever `nvcc` is first in
  # PATH, which may be CUDA 13 from /usr/local/cuda) with this host compiler.
  export CUDA_ROOT=$CUDA_ROOT_DEBIAN
  export NVCC_WRAPPER_DEFAULT_COMPILER=$CUDA_HOST_CXX
  # Debian's nvcc finds ptxas, fatbinary and nvlink through PATH: its own must
  # come first, else CUDA 13's from /usr/local/cuda/bin run (no sm_35: fails).
  export PATH="$CUDA_ROOT_DEBIAN/bin:$PATH"
fi

# ---- sources ------------------------------------------------------------------
tarball=$(compgen -G "$SRC_CACHE/trilinos_*.orig.tar.gz" | head -n 1 || true)
if [[ -z "$tarball" ]]; then
  # `apt-get source` needs a deb-src entry; add one for bookworm main if absent.
  if ! grep -rqsE '^[^#]*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    need_root "add a deb-src entry"
    cat >/etc/apt/sources.list.d/minisgd-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get -o DPkg::Lock::Timeout=600 update -qq
  fi
  echo "build_kokkos: downloading Debian's trilinos source package (~170 MB) to $SRC_CACHE"
  (cd "$SRC_CACHE" && apt-get source --download-only trilinos)
  tarball=$(compgen -G "$SRC_CACHE/trilinos_*.orig.tar.gz" | head -n 1 || true)
  [[ -n "$tarball" ]] || { echo "build_kokkos: download failed" >&2; exit 1; }
fi

# Extract only the two packages we need (not the other ~1.5 GB), once.
SRC="$SRC_CACHE/trilinos-kokkos"
if [[ ! -f "$SRC/.extracted" ]]; then
  echo "build_kokkos: extracting packages/kokkos{,-kernels} from $(basename "$tarball")"
  rm -rf "$SRC" && mkdir -p "$SRC"
  # The orig tarball's top-level directory (Trilinos-trilinos-release-13-2-0).
  top=$(tar tzf "$tarball" 2>/dev/null | head -n 1 || true)
  top=${top%%/*}
  [[ -n "$top" ]] || { echo "build_kokkos: cannot read $tarball" >&2; exit 1; }
  tar xzf "$tarball" -C "$SRC" --strip-components=2 \
    "$top/packages/kokkos" "$top/packages/kokkos-kernels"
  grep -q 'set(Kokkos_VERSION_MINOR 4)' "$SRC/kokkos/CMakeLists.txt" ||
    { echo "build_kokkos: unexpected Kokkos version in $tarball" >&2; exit 1; }
  touch "$SRC/.extracted"
fi
if [[ "${MINISGD_KOKKOS_FETCH_ONLY:-0}" == 1 ]]; then
  echo "build_kokkos: $BACKEND: sources fetched in $SECONDS s, nothing built"
  exit 0
fi

# ---- build ----------------------------------------------------------------------
rm -rf "$BUILD" "$PREFIX"
mkdir -p "$BUILD"
echo "build_kokkos: building Kokkos ($BACKEND) in $BUILD, logs in $BUILD/*.log"

CXX_ARGS=()
if [[ "$BACKEND" == cuda ]]; then
  CXX_ARGS=(-DCMAKE_CXX_COMPILER="$SRC/kokkos/bin/nvcc_wrapper")
fi

t0=$SECONDS
run_logged "$BUILD/kokkos-configure.log" \
  cmake -S "$SRC/kokkos" -B "$BUILD/kokkos" "${COMMON_ARGS[@]}" "${CXX_ARGS[@]}" "${KOKKOS_ARGS[@]}"
run_logged "$BUILD/kokkos-build.log" cmake --build "$BUILD/kokkos" -j "$JOBS"
run_logged "$BUILD/kokkos-install.log" cmake --install "$BUILD/kokkos"
echo "build_kokkos: Kokkos built in $((SECONDS - t0)) s"

if ((BUILD_KERNELS)); then
  t0=$SECONDS
  run_logged "$BUILD/kernels-configure.log" \
    cmake -S "$SRC/kokkos-kernels" -B "$BUILD/kernels" "${COMMON_ARGS[@]}" "${CXX_ARGS[@]}" \
    -DKokkos_DIR="$PREFIX/lib/cmake/Kokkos" "${KERNELS_ARGS[@]}"
  run_logged "$BUILD/kernels-build.log" cmake --build "$BUILD/kernels" -j "$JOBS"
  run_logged "$BUILD/kernels-install.log" cmake --install "$BUILD/kernels"
  echo "build_kokkos: Kokkos Kernels built in $((SECONDS - t0)) s"
else
  echo "build_kokkos: Kokkos Kernels skipped for $BACKEND"
fi

# ---- smoke test: find_package + compile (+ run on host backends) -----------------
t0=$SECONDS
SMOKE_ARGS=(-DCMAKE_PREFIX_PATH="$PREFIX" -DSMOKE_KERNELS="$BUILD_KERNELS")
[[ "$BACKEND" == cuda ]] && SMOKE_ARGS+=(-DCMAKE_CXX_COMPILER="$PREFIX/bin/nvcc_wrapper")
run_logged "$BUILD/smoke-configure.log" \
  cmake -S "$HERE/smoke" -B "$BUILD/smoke" -G Ninja -DCMAKE_BUILD_TYPE=Release "${SMOKE_ARGS[@]}"
run_logged "$BUILD/smoke-build.log" cmake --build "$BUILD/smoke" -j "$JOBS"
if [[ "$BACKEND" == cuda ]]; then
  echo "build_kokkos: smoke test compiled and linked (not run: needs a GPU)"
else
  run_logged "$BUILD/smoke-run.log" env OMP_NUM_THREADS=2 OMP_PROC_BIND=false "$BUILD/smoke/kokkos_smoke"
  echo "build_kokkos: smoke test passed: $(tail -n 1 "$BUILD/smoke-run.log")"
fi
echo "build_kokkos: smoke test took $((SECONDS - t0)) s"

printf '%s' "$STAMP_CONTENT" >"$STAMP"
echo "build_kokkos: $BACKEND done in $SECONDS s"
echo "$PREFIX"
