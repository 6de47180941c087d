#!/usr/bin/env bash
# The checks of a GPU node lent for a short time, most valuable first, inside one deadline:
# whatever is cut short still leaves the results before it. Each step's output goes to OUT
# (a log per step, plus the JSON and PNG files the perf scripts write); the summary lines go
# to stdout.
#
#   1 tests     the GPU-facing tests (device kernels bit for bit, CA-SGD, cuBLAS Gram, SGD,
#               the CSR kernels)
#   2 launches  kernel launches, deep copies and fences per SGD step and CA-SGD outer step
#   3 machine   perf/calibrate at one rank: this node's machine file (step 4's model too)
#   4 decks     the five paper problems at one rank: FP32 SGD, bf16 SGD, mixed CA-SGD, medians
#               of three rounds, beside the model on step 3's file and its projections
#               (perf/studies/casgd_vs_sgd.py --ranks 1 --latency-us 0)
#   5 phases    fenced phase timers: mixed CA-SGD at s = 16 and 64 (where an outer step goes),
#               FP32 SGD in the column and the row decomposition
#   6 peers     PyTorch DDP on the same GPU and rows (perf/studies/peers.py --device cuda)
#   7 model     perf/model_check.py at one rank, one repeat (it calibrates for itself)
#   8 kernels   perf/kernel_table.sh against the card's copy and GEMM ceilings
#   9 ctest     the rest of the test suite, in the time left
#
# Usage: perf/device_checks.sh BUILD OUT [DEADLINE_S]   (default 540 s; a CUDA build of
#        minisgd with tests and benchmarks)
# STEPS="1 2 3" runs only those steps; PYTHON names a Python 3 with numpy and matplotlib (and
# PyTorch for step 5; default python3). Never run by CI (it needs a GPU).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: perf/device_checks.sh BUILD OUT [DEADLINE_S]}" && pwd)
out=${2:?usage: perf/device_checks.sh BUILD OUT [DEADLINE_S]}
deadline=${3:-540}
steps=${STEPS:-1 2 3 4 5 6 7 8 9}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
export build out py paper  # for the functions that run under timeout
start=$(date +%s)
left() { echo $((deadline - ($(date +%s) - start))); }
gpu_tests='^test_(sgd_kernels|ca_sgd_kernels|ca_sgd|gpu|gram|sgd|sparse)(\.np[0-9])?$'
paper=$root/input_decks/paper/small

# step N NAME LIMIT_S COMMAND...: runs the command (or a function of this script) with at most
# LIMIT_S seconds (less if the deadline is nearer), its output in OUT/N-NAME.log, and prints the
# log's last lines.
step() {
  local n=$1 name=$2 limit=$3
  shift 3
  [[ " $steps " == *" $n "* ]] || return 0
  local t=$(left)
  ((t < limit)) && limit=$t
  if ((limit < 10)); then
    echo "== $n $name: skipped, $t s left"
    return 0
  fi
  echo "== $n $name (at $(($(date +%s) - start)) s, at most $limit s)"
  if declare -F "$1" > /dev/null; then  # a function: timeout runs programs only
    timeout "$limit" bash -c "$(declare -f "$1"); $*" > "$out/$n-$name.log" 2>&1
  else
    timeout "$limit" "$@" > "$out/$n-$name.log" 2>&1
  fi
  local code=$?
  tail -n "${TAIL:-25}" "$out/$n-$name.log"
  ((code == 124)) && echo "   ($name stopped at its limit)"
  return 0
}

phases() {  # mixed CA-SGD at s = 16 and 64, and FP32 SGD in both decompositions, phase
  # timers fenced: µs per step of each phase of the step (loading and evaluation, outside the
  # FOM window, left out; the timers count the warm-up steps too, cuBLAS' first call with them)
  local p s d
  show() {
    "$py" -c 'import json, sys
r = json.load(open(sys.argv[1])); n = max(r["result"]["iterations"], 1)
f = max(r["result"]["fom_iterations"], 1)  # the timers cover every step, warm-up too
print(sys.argv[2], "%.1f us a step:" % (r["result"]["fom_time_s"] / f * 1e6),
      ", ".join("%s %.2f" % (k, v["max"] / n * 1e6) for k, v in r["timers"].items()
                if k not in ("load", "eval")))' "$1" "$2"
  }
  run() {  # run NAME DECK [--set ...]
    local name=$1 deck=$2
    shift 2
    "$build/src/minisgd" "$deck" "$@" --set output.phase_timers=true \
      --set "output.report=$out/phases-$name.json" --set output.history= > /dev/null ||
      [ $? -eq 1 ]
    show "$out/phases-$name.json" "$name"
  }
  for p in higgs epsilon synth; do
    for s in 16 64; do run "$p-s$s" "$paper/$p-casgd-mixed.yaml" --set solver.s=$s; done
  done
  for d in column row; do
    run "higgs-sgd-$d" "$paper/higgs-sgd-fp32.yaml" --set solver.decomposition=$d
  done
}

machine() { mpirun -np 1 "$build/perf/calibrate" this-gpu > "$out/this-gpu.yaml"; }

command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total \
  --format=csv,noheader
step 1 tests 150 ctest --test-dir "$build" -R "$gpu_tests" -j 8 --timeout 90 --output-on-failure
step 2 launches 60 "$py" "$root/perf/launches.py" "$build" "$paper/higgs-sgd-fp32.yaml" \
  "$paper/higgs-casgd-mixed.yaml" --names --out "$out/launches.json"
step 3 machine 90 machine
machine_file=$out/this-gpu.yaml
[ -s "$machine_file" ] || machine_file=  # (not run, or failed: step 4 calibrates itself)
step 4 decks 200 "$py" "$root/perf/studies/casgd_vs_sgd.py" "$build" --ranks 1 \
  --latency-us 0 --repeats 3 ${machine_file:+--machine "$machine_file"} --out-dir "$out"
step 5 phases 60 phases
step 6 peers 150 "$py" "$root/perf/studies/peers.py" "$build" --ranks 1 --device cuda \
  --out-dir "$out"
step 7 model 220 "$py" "$root/perf/model_check.py" "$build" --ranks 1 --repeats 1 \
  --out "$out/model_check.json"
step 8 kernels 90 env MIN_TIME=0.05 "$root/perf/kernel_table.sh" "$build" "$out/kernel_table.json"
TAIL=5 step 9 ctest "$(left)" ctest --test-dir "$build" -E "$gpu_tests" -j "$(nproc)" --timeout 60
if [[ " $steps " == *" 9 "* && -f $out/9-ctest.log ]]; then  # the counts, also when cut short
  echo "   ctest so far: $(grep -c ' Passed ' "$out/9-ctest.log") passed, $(grep -cE \
    '\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception' "$out/9-ctest.log") failed, \
    $(grep -c 'Skipped' "$out/9-ctest.log") skipped"
fi
echo "== done at $(($(date +%s) - start)) s"
