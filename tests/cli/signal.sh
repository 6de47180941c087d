#!/usr/bin/env bash
# signal.sh DIR GLOB -- COMMAND...
# Runs COMMAND (mpirun ... minisgd ...), waits until DIR/GLOB exists (the run is writing: a
# data cache's temporary, a checkpoint), sends SIGTERM to the ranks (the command's children,
# as a batch system's scancel does) and passes when the job exits 143 within 10 s and DIR
# holds no *.tmp.* file.
set -u
dir=$1 glob=$2
shift 3
"$@" >"$dir/signal.log" 2>&1 &
job=$!
for _ in $(seq 1000); do
  compgen -G "$dir/$glob" >/dev/null && break
  kill -0 "$job" 2>/dev/null || break
  sleep 0.01
done
if ! compgen -G "$dir/$glob" >/dev/null; then
  kill -KILL "$job" 2>/dev/null
  echo "FAIL: $dir/$glob never appeared"; cat "$dir/signal.log"; exit 1
fi
ranks=$(pgrep -P "$job")
kill -TERM $ranks 2>/dev/null
for _ in $(seq 100); do
  kill -0 "$job" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$job" 2>/dev/null; then
  kill -KILL "$job" $ranks 2>/dev/null
  echo "FAIL: still running 10 s after SIGTERM"; exit 1
fi
wait "$job"
rc=$?
left=$(compgen -G "$dir/*.tmp.*")
if [ "$rc" -ne 143 ]; then echo "FAIL: exit code $rc, expected 143"; cat "$dir/signal.log"; exit 1; fi
if [ -n "$left" ]; then echo "FAIL: left behind: $left"; exit 1; fi
echo "ok: exit 143, nothing left in $dir"
