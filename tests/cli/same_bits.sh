#!/usr/bin/env bash
# same_bits.sh OUTDIR -- COMMAND...
# Runs COMMAND (a minisgd run that writes no files of its own) with 1, 2 and 4 Kokkos threads
# and passes when the weights it writes are bitwise identical: the kernels reduce in a fixed
# order, whatever the thread count. On a backend without threads the runs are simply repeated.
set -u
out=$1
shift 2
mkdir -p "$out"
for t in 1 2 4; do
  KOKKOS_NUM_THREADS=$t timeout --kill-after=5 60 "$@" --set output.weights="$out/w$t" > "$out/log$t" 2>&1
  rc=$?
  if [ "$rc" -gt 1 ]; then echo "FAIL: exit code $rc at $t threads"; cat "$out/log$t"; exit 1; fi
done
for t in 2 4; do
  if ! cmp -s "$out/w1" "$out/w$t"; then
    echo "FAIL: weights at $t threads differ from 1 thread"; diff "$out/w1" "$out/w$t" | head; exit 1
  fi
done
echo "ok: weights bitwise identical at 1, 2 and 4 threads ($(wc -l < "$out/w1") values)"
