#!/usr/bin/env bash
# Runs every deck in input_decks/compression at P ranks and prints one table: deck, final loss,
# relative gap to the same deck run dense (compression.method none), bytes sent per rank and
# step (maximum over ranks, from the communicator's counters), their ratio to a dense fp32
# AllReduce (2(P-1)/P * 4d), training time and the verdict.
#
# Usage: perf/compression_table.sh [MINISGD_EXECUTABLE] [RANKS]   (defaults: build/src/minisgd, 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=${1:-$root/build/src/minisgd}
ranks=${2:-4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export KOKKOS_NUM_THREADS=${KOKKOS_NUM_THREADS:-1}

run() {  # NAME DECK [--set ...]: exit code 1 is an INVALID verdict, which the table shows
  local name=$1 deck=$2 code=0
  shift 2
  mpirun --oversubscribe -np "$ranks" "$exe" "$deck" --set "output.report=$work/$name.json" \
    --set "output.history=$work/$name.csv" "$@" > "$work/$name.log" 2>&1 || code=$?
  if [ "$code" -gt 1 ]; then
    echo "$name: minisgd exited with $code" >&2
    tail -5 "$work/$name.log" >&2
  fi
}
for deck in "$root"/input_decks/compression/*.yaml; do
  name=$(basename "$deck" .yaml)
  run "$name" "$deck"
  # The dense reference of this deck's own solver settings (gTop-k's deck runs longer).
  case $name in *-none|*-none-adam) ;; *) run "$name.dense" "$deck" --set compression.method=none ;; esac
done

python3 - "$work" "$ranks" <<'PY'
import glob, json, os, sys
work, ranks = sys.argv[1], sys.argv[2]
reports = {os.path.basename(p)[:-5]: json.load(open(p)) for p in sorted(glob.glob(work + "/*.json"))}
print(f"compression decks at P = {ranks} (bytes: per rank and step, maximum over ranks)")
print(f"{'deck':<22}{'final loss':>12}{'gap':>9}{'bytes/step':>12}{'ratio':>8}{'time s':>8}  verdict")
for name, r in reports.items():
    if name.endswith(".dense"):
        continue
    loss = r["result"]["final_loss"]
    dense = reports.get(name + ".dense", r)
    gap = (loss - dense["result"]["final_loss"]) / dense["result"]["final_loss"] if dense else float("nan")
    c = r["compression"]
    ratio = c["ratio_to_dense"]
    print(f"{name:<22}{loss:>12.6f}{gap:>+9.2%}{c['bytes_per_step']:>12.0f}"
          f"{(ratio if ratio is not None else float('nan')):>8.3f}{r['result']['train_time_s']:>8.3f}"
          f"  {'VALID' if r['result']['valid'] else 'INVALID'}")
PY
