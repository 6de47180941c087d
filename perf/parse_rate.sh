#!/usr/bin/env bash
# Parse rate of the parallel LIBSVM loader: perf/parse_rate.sh BUILD FILE [P...]
# Loads FILE (e.g. from build/perf/make_libsvm FILE 2700000 28) at each rank count P (default
# 1 2 4) with one SGD step, and prints the report's loader figures: parse MB/s per rank (wall,
# slowest rank), load seconds (wall and CPU, max over ranks) and text MB per CPU-second per rank.
# Run it twice: the first run warms the page cache.
set -euo pipefail
build=$1 file=$2
shift 2
ranks=("$@")
((${#ranks[@]})) || ranks=(1 2 4)
# shellcheck source=ci/env.sh
source "$(dirname "$0")/../ci/env.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
features=$(head -1 "$file" | awk '{split($NF, a, ":"); print a[1]}')
cat > "$dir/deck.yaml" <<DECK
run: {name: parse-rate, seed: 42}
data: {source: libsvm, path: $file, features: $features, cache: false}
model: {loss: logistic, l2: 1.0e-6}
solver: {method: sgd, decomposition: row, batch_size: 32, epochs: 1, max_iters: 1}
precision: {preset: fp32}
output: {report: $dir/report.json, history: "", weights: ""}
DECK
bytes=$(stat -c %s "$file")
printf '%3s %16s %8s %12s %18s\n' P parse_MBps/rank load_s load_cpu_s MB/CPU-s/rank
for P in "${ranks[@]}"; do
  rm -f "$dir/report.json"  # (one step is no convergence: the run says INVALID and exits 1)
  mpirun -np "$P" "$build/src/minisgd" "$dir/deck.yaml" > "$dir/log" 2>&1 || true
  [[ -s $dir/report.json ]] || { cat "$dir/log"; exit 1; }
  /usr/bin/python3 - "$dir/report.json" "$P" "$bytes" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["data_load"]
P, b = int(sys.argv[2]), int(sys.argv[3])
print(f"{P:3d} {d['parse_MBps_per_rank']:16.0f} {d['load_s']:8.2f} {d['load_cpu_s']:12.2f} "
      f"{b / P / 1e6 / d['load_cpu_s']:18.0f}")
PY
done
