#!/usr/bin/env bash
# Every gradient compressor at d = 2^24 on a hashed-shape sparse problem (input_decks/sparse/
# hashed-gtopk.yaml), P ranks (default 4), STEPS steps (default 20): per method the final loss,
# samples/s, bytes sent per rank and step, and each rank's peak resident memory (GNU time),
# against the d-vectors the method keeps (weights, gradient, reduced gradient: 3·d·4 bytes).
# Usage: perf/studies/sparse_at_size.sh BUILD [P] [STEPS]; never run in CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1 P=${2:-4} steps=${3:-20}
source "$root/ci/env.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%-12s %10s %12s %14s %s\n' method loss samples/s "sent B/step" "peak RSS per rank (MB)"
for m in none cast topk gtopk qsgd global-qsgd aps loco; do
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE mpirun -np "$P" /usr/bin/time -f "rss %M" \
    "$build/src/minisgd" "$root/input_decks/sparse/hashed-gtopk.yaml" \
    --set compression.method="$m" --set solver.max_iters="$steps" \
    --set output.report="$dir/$m.json" --set output.history= > "$dir/$m.log" 2>&1 || true
  [[ -s $dir/$m.json ]] || { echo "$m: no report"; tail -5 "$dir/$m.log"; continue; }
  rss=$(awk '/^rss /{printf "%d ", $2/1024}' "$dir/$m.log")
  /usr/bin/python3 - "$dir/$m.json" "$m" "$rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
res = r["result"]
sent = r["compression"]["bytes_per_step"]
print(f"{sys.argv[2]:<12} {res['final_loss']:10.6f} {res['samples_per_s']:12.4g} {sent:14.4g} {sys.argv[3]}")
PY
done
