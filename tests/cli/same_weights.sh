#!/usr/bin/env bash
# same_weights.sh THREADS... -- COMMAND...
# Runs COMMAND (a minisgd command line) once per Kokkos thread count with
# `--set output.weights=FILE` appended and passes when every weights file is byte-identical:
# results must not depend on the thread count (fixed reduction orders).
set -u
threads=()
while [ "$1" != "--" ]; do threads+=("$1"); shift; done
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for t in "${threads[@]}"; do
  if ! out=$(KOKKOS_NUM_THREADS=$t OMP_NUM_THREADS=$t timeout 120 "$@" \
             --set output.weights="$dir/w$t.bin" 2>&1); then
    echo "FAIL: run with $t threads failed"; echo "$out"; exit 1
  fi
done
first=${threads[0]}
for t in "${threads[@]:1}"; do
  if ! cmp "$dir/w$first.bin" "$dir/w$t.bin"; then
    echo "FAIL: weights with $first and $t threads differ"; exit 1
  fi
done
echo "ok: weights identical for ${threads[*]} threads"
