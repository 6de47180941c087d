#!/usr/bin/env bash
# restart.sh EVERY -- COMMAND...
# Checkpoint/restart is bitwise: runs COMMAND (an mpirun ... minisgd command line) to the end,
# then again with output.checkpoint every EVERY steps and a time limit that is spent at once
# (it stops at the first checkpoint with exit 4), restarts that checkpoint the same way (the
# next checkpoint, exit 4), and restarts the second checkpoint to the end. Passes when the final
# weights, the history's iterations, epochs and losses, and the verdict line (final and initial
# loss) are byte-identical to the uninterrupted run's, and the interrupted runs did stop early.
set -u
every=$1
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $1"; [ -n "${2:-}" ] && echo "$2"; exit 1; }
run() {  # name, expected codes (regex), minisgd arguments...
  local name=$1 codes=$2 out rc
  shift 2
  out=$(timeout --kill-after=5 120 "$@" --set output.weights="$dir/$name.w" \
        --set output.history="$dir/$name.csv" 2>&1)
  rc=$?
  [[ $rc =~ ^($codes)$ ]] || fail "$name: exit code $rc, expected $codes" "$out"
  grep -E '^(VALID|INVALID)' <<<"$out" > "$dir/$name.verdict"
  echo "$name: exit $rc$(grep -o '^checkpoint: .*' <<<"$out" | tr '\n' ';')"
}
ckpt=(--set output.checkpoint.path="$dir/ckpt" --set output.checkpoint.every="$every"
      --set solver.time_limit=1e-9)
run full "0|1" "$@"
run first 4 "$@" "${ckpt[@]}"
[ -s "$dir/ckpt" ] || fail "the stopped run wrote no checkpoint"
run second 4 "$@" "${ckpt[@]}" --set run.restart="$dir/ckpt"
run last "0|1" "$@" --set run.restart="$dir/ckpt"
cmp -s "$dir/full.w" "$dir/first.w" && fail "the first interrupted run was not stopped early"
cmp "$dir/full.w" "$dir/last.w" || fail "weights after two restarts differ from the uninterrupted run's"
# The history without its seconds column (wall time differs between runs).
cut -d, -f1-4 "$dir/full.csv" > "$dir/full.h"
cut -d, -f1-4 "$dir/last.csv" > "$dir/last.h"
cmp "$dir/full.h" "$dir/last.h" || fail "history after restarts differs" "$(diff "$dir/full.h" "$dir/last.h")"
# The verdict line: final and initial loss.
cmp "$dir/full.verdict" "$dir/last.verdict" ||
  fail "verdict after restarts differs" "$(cat "$dir/full.verdict" "$dir/last.verdict")"
echo "ok: weights and history identical after restarts at every $every steps"
