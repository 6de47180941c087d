#!/usr/bin/env bash
# minisgd against PyTorch DDP (gloo, CPU) on one shape, in one session: synthetic logistic
# regression 100 000 × 2 000 in fp32, global batch 256, one epoch, plain SGD, one thread per
# rank (Kokkos Serial or KOKKOS_NUM_THREADS=1), at P = 1 and P = 2. Prints each rate (minisgd:
# its FOM line; PyTorch: the same samples/s of the training loop) and the ratios.
# Uses Debian's python3-torch at /usr/bin/python3; a peer comparison, never run in CI.
#
# Usage: perf/peers/compare_torch.sh [MINISGD_EXECUTABLE] [DTYPE]   (defaults: build/serial/src/minisgd, fp32)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exe=${1:-$root/build/serial/src/minisgd}
data=${2:-fp32}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$root/ci/env.sh"
# The peer's own packages, installed only when this comparison runs (never by CI).
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  ((EUID == 0)) || { echo "needs Debian's python3-torch (apt-get install python3-torch)" >&2; exit 1; }
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends python3-torch >/dev/null ||
    { apt-get update -qq && apt-get install -y --no-install-recommends python3-torch >/dev/null; }
fi
export KOKKOS_NUM_THREADS=1
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
shape=(--set data.synthetic.rows=100000 --set data.synthetic.features=2000 --set solver.batch_size=256
       --set solver.epochs=1 --set solver.decomposition=row --set precision.data="$data")
for P in 1 2; do
  mpirun --oversubscribe -np $P "$exe" "$root/input_decks/paper/synth-sgd-fp32.yaml" "${shape[@]}" \
    --set output.report="$work/r$P.json" --set output.history="$work/h$P.csv" > "$work/minisgd$P.log" 2>&1 || true
  mini=$(sed -n 's/^FOM: \([0-9.e+-]*\) samples\/s.*/\1/p' "$work/minisgd$P.log")
  [ -n "$mini" ] || { cat "$work/minisgd$P.log"; exit 1; }
  torch=$(/usr/bin/python3 "$root/perf/peers/torch_ddp_logistic.py" --ranks $P --threads 1 |
          sed -n 's/.*: \([0-9.e+-]*\) samples\/s.*/\1/p')
  printf 'P=%d  minisgd (%s) %.3e samples/s   PyTorch DDP %.3e samples/s   ratio %.2f\n' \
    "$P" "$data" "$mini" "$torch" "$(python3 -c "print($mini / $torch)")"
done
