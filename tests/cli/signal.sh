#!/usr/bin/env bash
# signal.sh DIR GLOB [SIGNAL [TARGET]] -- COMMAND...
# Runs COMMAND (mpirun ... minisgd ...), waits until DIR/GLOB exists (the run is writing: a
# data cache's temporary, a checkpoint), sends SIGNAL (TERM or INT, default TERM) to the ranks
# (the command's children, as a batch system's scancel does), or with TARGET "mpirun" to the
# command itself (as a user's kill or Ctrl-C does), and passes when the job ends within 10 s
# with exit code 128 + the signal's number (143, 130; sent to mpirun: mpirun's own code, not 0)
# and DIR holds no *.tmp.* file.
set -u
dir=$1 glob=$2 sig=TERM target=ranks
shift 2
[ "$1" != "--" ] && { sig=$1; shift; }
[ "$1" != "--" ] && { target=$1; shift; }
shift
expected=$((128 + $(kill -l "$sig")))
rm -f "$dir"/*.tmp.*  # an earlier test's failure is its own, not this one's
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
if [ "$target" = mpirun ]; then kill -"$sig" "$job"; else kill -"$sig" $ranks 2>/dev/null; fi
for _ in $(seq 100); do
  kill -0 "$job" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$job" 2>/dev/null; then
  kill -KILL "$job" $ranks 2>/dev/null
  echo "FAIL: still running 10 s after SIG$sig"; exit 1
fi
wait "$job"
rc=$?
left=$(compgen -G "$dir/*.tmp.*")
if { [ "$target" = ranks ] && [ "$rc" -ne "$expected" ]; } || [ "$rc" -eq 0 ]; then
  echo "FAIL: exit code $rc, expected $expected"; cat "$dir/signal.log"; exit 1
fi
if [ -n "$left" ]; then echo "FAIL: left behind: $left"; exit 1; fi
echo "ok: SIG$sig to the $target: exit $rc, nothing left in $dir"
