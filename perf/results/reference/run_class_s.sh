#!/usr/bin/env bash
# Reference results of the class-S decks (docs/procurement.md, sections 6, 10 and 11): every
# deck at each rank count, official runs (run.min_seconds), with the files of a submission.
#
#   perf/results/reference/run_class_s.sh BUILD OUTDIR [MIN_SECONDS [RANKS...]]
#
# Writes OUTDIR/S-<deck>-P<P>[-r<k>].{json,csv,log,sh}, system.txt (lscpu, memory, kernel),
# build.txt (CMake cache lines) and summary.txt (perf/summary.py with the worksheet against
# OUTDIR itself). Defaults: 10 s, ranks 1 2. REPEATS (environment, default 1) runs each
# (deck, P) that many times. Never run in CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "$1" && pwd) out=$2 min=${3:-10}
shift $(($# < 3 ? $# : 3))
ranks=("${@:-1 2}")
read -ra ranks <<<"${ranks[*]}"
repeats=${REPEATS:-1}
mkdir -p "$out"
out=$(cd "$out" && pwd)
source "$root/ci/env.sh"
for deck in "$root"/input_decks/classes/S/*.yaml; do
  n=$(basename "$deck" .yaml)
  for P in "${ranks[@]}"; do
    for ((k = 1; k <= repeats; k++)); do
      tag=S-$n-P$P$([[ $repeats -gt 1 ]] && echo "-r$k" || true)
      cmd=(mpirun -np "$P" "$build/src/minisgd" "input_decks/classes/S/$n.yaml"
           --set run.min_seconds="$min" --set output.report="$out/$tag.json"
           --set output.history="$out/$tag.csv")
      printf '#!/bin/sh\n# %s\ncd "$(git rev-parse --show-toplevel)"\nenv -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE KOKKOS_NUM_THREADS=1 %s\n' \
        "$(date -u +%FT%TZ), commit $(git -C "$root" rev-parse --short=12 HEAD)" "${cmd[*]}" > "$out/$tag.sh"
      (cd "$root" && env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE KOKKOS_NUM_THREADS=1 "${cmd[@]}") \
        > "$out/$tag.log" 2>&1 || echo "$tag: exit $?"
      grep -E '^(run rule|FOM|VALID|INVALID)' "$out/$tag.log" | sed "s|^|$tag: |"
    done
  done
done
{
  echo "# $(date -u +%FT%TZ), commit $(git -C "$root" rev-parse --short=12 HEAD), $(hostname)"
  lscpu | grep -E '^(Model name|CPU family|Model:|Stepping|CPU\(s\)|Thread|Core|Socket|Hypervisor|L[123])'
  grep MemTotal /proc/meminfo
  uname -sr
  echo "binding: none (mpirun defaults, KOKKOS_NUM_THREADS=1); shared machine: other builds ran"
} > "$out/system.txt"
grep -E '^(CMAKE_BUILD_TYPE|CMAKE_CXX_COMPILER|CMAKE_CXX_FLAGS|Kokkos_DIR|KokkosKernels_DIR|MINISGD_)[A-Z_]*:' \
  "$build/CMakeCache.txt" > "$out/build.txt" || true
"$root/perf/summary.py" "$out"/S-*.json --worksheet "$out" > "$out/summary.txt"
/usr/bin/python3 "$root/tests/report/validate_reports.py" "$root/docs/report.schema.json" "$out"/S-*.json
