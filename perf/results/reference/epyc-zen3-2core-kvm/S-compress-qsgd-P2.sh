#!/bin/sh
# 2026-12-03T07:18:47Z, commit b5962c736ff4
cd "$(git rev-parse --show-toplevel)"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE KOKKOS_NUM_THREADS=1 mpirun -np 2 /work/wt-proc/build/gcc-serial/src/minisgd input_decks/classes/S/compress-qsgd.yaml --set run.min_seconds=10 --set output.report=/work/wt-proc/perf/results/reference/epyc-zen3-2core-kvm/S-compress-qsgd-P2.json --set output.history=/work/wt-proc/perf/results/reference/epyc-zen3-2core-kvm/S-compress-qsgd-P2.csv
