#!/usr/bin/env bash
# Installs what is missing, builds minisgd into build/, and runs the quick-start deck on two
# MPI ranks. Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source ci/env.sh
ci/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMINISGD_ENABLE_TESTS=OFF \
      -DMINISGD_ENABLE_BENCHMARKS=OFF > build.log 2>&1 || { tail -30 build.log; exit 1; }
cmake --build build -j"$(nproc)" >> build.log 2>&1 || { tail -30 build.log; exit 1; }
rm -f build.log
mpirun -np 2 build/src/minisgd input_decks/quickstart.yaml "$@"
