#!/usr/bin/env bash
# The reference losses of the M, L and XL class decks (docs/procurement.md, section 5): FP64
# runs of the project's own code on one rank where the problem fits this machine, beside the
# statistical reference of perf/reference_loss.py (the planted model's population loss).
#
#   perf/studies/references.sh BUILD [m|l|weak|all]
#
#   m     the M decks at their size: FP64 SGD (the reference of sgd and ca-sgd: FP64 CA-SGD takes
#         the same iterates), FP64 compress-none of 3 epochs (the reference of every compressor
#         but gtopk) and of 6 epochs (gtopk's), and FP64 CA-SGD itself as a check
#   l     L/ca-sgd at its own size (P = 64: 1 000 000 x 4 096) in FP64 arithmetic on data stored
#         in fp32 (16.4 GB; FP64 storage, 32.8 GB, does not fit here), and what fp32 storage
#         moves on M/sgd's problem (against its FP64 reference)
#   weak  the weak-scaling decks at the sizes of P' = 1, 2, 4 ranks, run on one rank (the data do
#         not depend on P): the trend of the FP64 loss toward the statistical reference as P grows
#
# Needs up to 8.2 GB of memory (M sgd in FP64; l: 17 GB); a few minutes on two cores. Never
# run in CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1 what=${2:-all}
source "$root/ci/env.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
C=$root/input_decks/classes

fp64() {  # fp64 NAME DECK [--set ...]: one FP64 run on one rank, one training; prints its loss
  local name=$1 deck=$2
  shift 2
  # Exit 1 (INVALID) is expected at a size other than the deck's own: its reference is the
  # nominal P's. Only a missing report is a failure.
  mpirun -np 1 "$build/src/minisgd" "$deck" --set precision.preset=fp64 --set run.min_seconds=0 \
    --set output.report="$dir/$name.json" --set output.history= "$@" > "$dir/$name.log" 2>&1 || true
  [[ -s $dir/$name.json ]] || { echo "$name: no report"; tail -3 "$dir/$name.log"; return 0; }
  /usr/bin/python3 "$root/perf/reference_loss.py" "$deck" "$@" --json > "$dir/$name.stat"
  /usr/bin/python3 - "$dir/$name.json" "$dir/$name.stat" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
res, p = r["result"], r["problem"]
gap = (res["final_loss"] - s["reference_loss"]) / s["reference_loss"]
print(f"{sys.argv[3]:<28} {p['rows']:>9} x {p['features']:<6} {res['iterations']:>7} steps  "
      f"FP64 loss {res['final_loss']:.8f}  statistical {s['reference_loss']:.8f} "
      f"(+-{s['sampling_stderr']:.1e})  FP64 above it by {gap:+.2e}  {res['train_time_s']:.1f} s")
PY
}

printf '%-28s %20s %13s\n' run "rows x features" steps
if [[ $what == m || $what == all ]]; then
  fp64 M-sgd "$C/M/sgd.yaml"
  fp64 M-compress-none "$C/M/compress-none.yaml"
  fp64 M-compress-none-6-epochs "$C/M/compress-none.yaml" --set solver.epochs=6
  fp64 M-ca-sgd "$C/M/ca-sgd.yaml"
fi
if [[ $what == l || $what == all ]]; then
  fp64 M-sgd-fp32-data "$C/M/sgd.yaml" --set precision.data=fp32
  # CA-SGD in FP64 takes SGD's iterates: L/ca-sgd.yaml's problem and step at P = 64, run by SGD.
  fp64 L-ca-sgd-at-P64-fp32-data "$C/L/sgd.yaml" --set data.synthetic.rows=1000000 \
    --set data.synthetic.features=4096 --set solver.batch_size=64 \
    --set solver.step_size.eta0=0.03125 --set precision.data=fp32
fi
if [[ $what == weak || $what == all ]]; then
  for P in 1 2 4; do
    fp64 "L-sgd-at-P$P" "$C/L/sgd.yaml" --set data.synthetic.rows=$((1000000 * P)) \
      --set solver.batch_size=$((64 * P))
    fp64 "L-compress-none-at-P$P" "$C/L/compress-none.yaml" \
      --set data.synthetic.rows=$((100000 * P)) --set solver.batch_size=$((48 * P))
    # CA-SGD in FP64 takes SGD's iterates: L/ca-sgd.yaml's problem and step (128/d), run by SGD.
    fp64 "L-ca-sgd-at-P$P" "$C/L/sgd.yaml" --set data.synthetic.rows=1000000 \
      --set data.synthetic.features=$((64 * P)) --set solver.batch_size=64 \
      --set solver.step_size.eta0="$(awk "BEGIN{print 2/$P}")"
  done
fi
