#!/usr/bin/env bash
# perf/net/links.sh leaves nothing behind: after up + down, a failed up, a failed run, and a run
# stopped by SIGTERM or SIGINT.  Exits 77 (ctest SKIP) where not root or network namespaces are
# unavailable (a container without CAP_SYS_ADMIN, no iproute2).
set -uo pipefail
links=${1:?usage: test_links.sh path/to/perf/net/links.sh}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; "$links" down "$pfx" >/dev/null 2>&1; exit 1; }

[[ $(id -u) -eq 0 ]] || skip "not root"
{ command -v ip && command -v tc; } >/dev/null || skip "no ip/tc (iproute2)"
pfx=msgd-t$$
ip netns add "$pfx-probe" 2>/dev/null || skip "cannot create a network namespace"
# The shaping needs a veth pair and tbf: a kernel without them is a machine this cannot run on.
if ! ip -n "$pfx-probe" link add p0 type veth peer name p1 2>/dev/null ||
   ! ip netns exec "$pfx-probe" tc qdisc add dev p0 root tbf rate 1gbit burst 256kb latency 10ms 2>/dev/null; then
  ip netns del "$pfx-probe"
  skip "no veth or tbf in this kernel"
fi
ip netns del "$pfx-probe"

# up + down, shaped: check must see the namespaces while up and nothing after down.
MSGD_NET_PREFIX=$pfx "$links" up 3 1g >/dev/null 2>&1 || fail "up 3 1g failed"
[[ $(ip netns list | grep -c "^$pfx-") -eq 4 ]] || fail "up 3 1g: expected 4 namespaces"
"$links" check "$pfx" >/dev/null && fail "check saw nothing while up"
"$links" down "$pfx" || fail "down failed"
"$links" check "$pfx" || fail "left behind after down"

# An up that fails half-way (rank 1's namespace already taken) leaves nothing either.
ip netns add "$pfx-r1"
MSGD_NET_PREFIX=$pfx "$links" up 3 none >/dev/null 2>&1 && fail "up over a taken namespace returned 0"
"$links" check "$pfx" || fail "left behind after a failed up"

# A failed run tears down.
if command -v mpirun >/dev/null; then
  MSGD_NET_PREFIX=$pfx "$links" run 2 none -- false >/dev/null 2>&1 && fail "run of 'false' returned 0"
  "$links" check "$pfx" || fail "left behind after a failed run"

  # A run stopped by SIGTERM (and SIGINT) while its ranks sleep inside the namespaces tears
  # down and stops the ranks. A background job starts with SIGINT ignored, and bash cannot trap
  # a signal ignored at entry: `env --default-signal=INT` (coreutils 9) gives it back.
  sigs=TERM envdef=()
  if env --default-signal=INT true 2>/dev/null; then sigs="TERM INT" envdef=(--default-signal=INT); fi
  for sig in $sigs; do
    env "${envdef[@]}" MSGD_NET_PREFIX="$pfx" "$links" run 2 10g -- sleep 60 >/dev/null 2>&1 &
    pid=$!
    ranks=""
    for _ in $(seq 100); do
      mpi=$(pgrep -d, -P "$pid")
      [[ -n "$mpi" ]] && ranks=$(pgrep -x sleep -P "$mpi")
      [[ $(wc -w <<<"$ranks") -eq 2 ]] && break
      sleep 0.2
    done
    [[ $(wc -w <<<"$ranks") -eq 2 ]] || fail "$sig run: ranks never started"
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    for r in $ranks; do  # mpirun stops its ranks: give them 5 s (a zombie counts as gone)
      for _ in $(seq 25); do
        [[ $(ps -o stat= -p "$r" 2>/dev/null) == [^Z]* ]] || break
        sleep 0.2
      done
      [[ $(ps -o stat= -p "$r" 2>/dev/null) == [^Z]* ]] && { kill "$r"; fail "$sig run left rank $r running"; }
    done
    [[ $rc -ne 0 ]] || fail "$sig run returned 0"
    "$links" check "$pfx" || fail "left behind after a $sig run (rc $rc)"
  done
else
  echo "no mpirun: run tests skipped"
fi
echo "PASS"
