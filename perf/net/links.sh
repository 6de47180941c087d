#!/usr/bin/env bash
# Real, shaped network links on one machine: one network namespace per MPI rank,
# joined by veth pairs through a bridge, each rank's link shaped with tc.
#
#   links.sh up P PROFILE              make P rank namespaces + a hub namespace
#   links.sh run P PROFILE -- PROG...  up, mpirun PROG over TCP only, down (also on failure/kill);
#                                      prints each rank's bytes sent on its link (stderr)
#   links.sh down [PREFIX]             remove everything made (all msgd-* when no prefix)
#   links.sh check [PREFIX]            print anything left behind; non-zero if any
#   links.sh measure [P] PROFILE       bandwidth + latency between two rank namespaces (P unused)
#
# MSGD_NET_PREFIX names the namespaces (default msgd-<pid>; must start with "msgd-").
# A `run` stopped by INT/TERM stops mpirun and tears down; after a SIGKILL, `down` cleans up.
#
# PROFILE: 1g (1 Gbit/s, 50 us), 10g (10 Gbit/s, 10 us), 100g (100 Gbit/s, 2 us), none.
# Runs as root (ip netns, tc).  Layout, for prefix msgd-<pid>:
#   <prefix>-hub   holds the bridge "br0" at 10.54.0.254/24 and one veth end "r<i>" per rank
#   <prefix>-r<i>  holds the other end, always named "msgd0", at 10.54.0.<i+1>/24
# Nothing is created in the root namespace: everything goes when the namespaces are deleted.
#
# Why `run` works: mpirun itself runs inside the hub namespace, and each rank is started by
# a wrapper that does `ip netns exec <prefix>-r<rank>`.  A rank then cannot reach its
# daemon's PMIx server over loopback (another namespace), so the PMIx server is told to
# accept remote connections and to publish its bridge address
# (PMIX_MCA_ptl_tcp_remote_connections=1, PMIX_MCA_ptl_tcp_if_include=br0); the ranks
# reach it over their veth link like any other host.  Without these two, MPI_Init fails in
# every rank ("OPAL ERROR: Unreachable in file ext3x_client.c"): the PMIx server listens on
# loopback only, and the ranks' loopback is their own namespace's.  The MPI traffic itself is
# TCP only (--mca pml ob1 --mca btl tcp,self: UCX, where a machine has it, would take shared
# memory) on msgd0, so every byte between ranks crosses the shaped links.
#
# Shaping: netem (delay + rate) when the kernel has sch_netem; otherwise tbf (rate only) and
# a warning that the delay is not emulated (the development VM's kernel is built without
# CONFIG_NET_SCH_NETEM, so the netem branch has not been run there).  Both directions are shaped: egress of msgd0 in the rank, egress of r<i> in the hub.
set -euo pipefail

readonly TAG=msgd
readonly NET=10.54.0
readonly HUBIP=$NET.254
PREFIX=${MSGD_NET_PREFIX:-$TAG-$$}
[[ "$PREFIX" == "$TAG"-* ]] || { echo "links.sh: MSGD_NET_PREFIX must start with $TAG-" >&2; exit 2; }
MPIPID=""

die() { echo "links.sh: $*" >&2; exit 2; }

profile() {  # sets RATE (tc units) DELAY (us) BURST (bytes)
  case "$1" in
    1g) RATE=1gbit DELAY=50 BURST=262144 ;;
    10g) RATE=10gbit DELAY=10 BURST=2097152 ;;
    100g) RATE=100gbit DELAY=2 BURST=16777216 ;;
    none) RATE="" DELAY=0 BURST=0 ;;
    *) die "unknown profile '$1' (1g, 10g, 100g, none)" ;;
  esac
}

have_netem() {  # probe once in a scratch namespace
  local ns="$TAG-probe-$$" rc=1
  ip netns add "$ns" || return 1
  ip -n "$ns" link set lo up
  if tc -n "$ns" qdisc add dev lo root netem delay 1us 2>/dev/null; then rc=0; fi
  ip netns del "$ns"
  return $rc
}

shape() {  # ns dev
  local ns=$1 dev=$2
  [[ -z "$RATE" ]] && return 0
  if [[ "$NETEM" == 1 ]]; then
    tc -n "$ns" qdisc add dev "$dev" root netem delay "${DELAY}us" rate "$RATE" limit 100000
  else
    tc -n "$ns" qdisc add dev "$dev" root tbf rate "$RATE" burst "$BURST" latency 5ms
  fi
}

up() {  # P PROFILE PREFIX
  local p=$1 prefix=$3 hub="$3-hub" i ns
  [[ "$p" =~ ^[0-9]+$ && "$p" -ge 1 && "$p" -le 250 ]] || die "P must be 1..250"
  profile "$2"
  NETEM=0
  if [[ -n "$RATE" ]]; then
    if have_netem; then NETEM=1
    else echo "links.sh: no sch_netem in this kernel: shaping rate only (tbf), no delay" >&2; fi
  fi
  ip netns add "$hub"
  ip -n "$hub" link set lo up
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" addr add "$HUBIP/24" dev br0
  ip -n "$hub" link set br0 up
  for ((i = 0; i < p; i++)); do
    ns="$prefix-r$i"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$hub" link add "r$i" type veth peer name msgd0 netns "$ns"
    ip -n "$hub" link set "r$i" master br0 up
    ip -n "$ns" addr add "$NET.$((i + 1))/24" dev msgd0
    ip -n "$ns" link set msgd0 up
    shape "$ns" msgd0
    shape "$hub" "r$i"
  done
}

down() {  # [PREFIX]: deleting a namespace deletes its veths, bridge and qdiscs
  local ns
  for ns in $(ip netns list | awk '{print $1}'); do
    if [[ -n "${1:-}" ]]; then
      [[ "$ns" == "$1"-* ]] || continue
    else
      [[ "$ns" == "$TAG"-* ]] || continue
    fi
    ip netns del "$ns" || true
  done
}

check() {  # [PREFIX]: our namespaces left, or links named msgd* in the root namespace
  local left pat="^${1:-$TAG}-"
  left=$( { ip netns list | awk '{print $1}' | grep "$pat" || true
            ip -o link show | awk -F': ' '{print $2}' | grep "^$TAG" || true; } )
  if [[ -n "$left" ]]; then
    echo "links.sh: left behind:"; echo "$left"; return 1
  fi
  return 0
}

stop_mpi() {  # mpirun passes the TERM on to its ranks
  [[ -n "$MPIPID" ]] || return 0
  kill -TERM "$MPIPID" 2>/dev/null || true
  wait "$MPIPID" 2>/dev/null || true
}

run() {  # P PROFILE -- PROG ARGS...
  local p=$1 prof=$2 prefix=$PREFIX wrap
  shift 2
  [[ "${1:-}" == "--" ]] && shift
  [[ $# -ge 1 ]] || die "run: no program"
  wrap=$(mktemp /tmp/msgd-wrap.XXXXXX)
  # shellcheck disable=SC2064  # expand now: the trap must know this run's prefix
  trap "down '$prefix'; rm -f '$wrap'" EXIT
  # mpirun runs in the background and the shell waits for it: a shell waiting on a foreground
  # child would run these traps only once the child had finished on its own.
  trap 'stop_mpi; exit 130' INT
  trap 'stop_mpi; exit 143' TERM
  up "$p" "$prof" "$prefix"
  cat > "$wrap" <<EOF
#!/bin/sh
exec ip netns exec "$prefix-r\${OMPI_COMM_WORLD_RANK:?}" "\$@"
EOF
  chmod +x "$wrap"
  local rc=0
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=br0 \
    ip netns exec "$prefix-hub" mpirun -np "$p" --oversubscribe \
      --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include msgd0 --mca oob_tcp_if_include br0 \
      -x PMIX_MCA_ptl_tcp_remote_connections -x PMIX_MCA_ptl_tcp_if_include \
      "$wrap" "$@" &
  MPIPID=$!
  wait "$MPIPID" || rc=$?
  MPIPID=""
  wire_bytes "$p" "$prefix"
  return $rc
}

wire_bytes() {  # P PREFIX: what each rank's interface sent, headers included (stderr, one line)
  local i line="links.sh: wire bytes sent"
  for ((i = 0; i < $1; i++)); do
    line+=" r$i $(ip netns exec "$2-r$i" cat /sys/class/net/msgd0/statistics/tx_bytes 2>/dev/null ||
                  echo '?')"
  done
  echo "$line" >&2
}

measure() {  # PROFILE: iperf3 (TCP bandwidth) and an MPI ping-pong between r0 and r1
  local prof=$1 prefix=$PREFIX here pp
  here=$(cd "$(dirname "$0")" && pwd)
  if command -v iperf3 >/dev/null; then
    (
      # shellcheck disable=SC2064
      trap "down '$prefix'" EXIT
      up 2 "$prof" "$prefix"
      ip netns exec "$prefix-r1" iperf3 -s -1 -D -B "$NET.2" >/dev/null
      sleep 0.5
      ip netns exec "$prefix-r0" iperf3 -c "$NET.2" -t 3 -f g | grep -E 'receiver' |
        awk -v p="$prof" '{print "iperf3 " p ": " $(NF-2), $(NF-1)}'
    )
  else
    echo "links.sh: no iperf3 (apt-get install -y iperf3): TCP stream skipped" >&2
  fi
  command -v mpicc >/dev/null || die "measure needs mpicc for the ping-pong"
  pp=$(mktemp /tmp/msgd-pp.XXXXXX)
  mpicc -O2 -o "$pp" "$here/pingpong.c"
  MSGD_NET_PREFIX="$prefix-p" "$0" run 2 "$prof" -- "$pp" || { rm -f "$pp"; return 1; }
  rm -f "$pp"
}

cmd=${1:-}
[[ -n "$cmd" ]] && shift
case "$cmd" in
  up)
    [[ $# -ge 2 ]] || die "up P PROFILE"
    trap '[[ -n "${made:-}" ]] || down "$PREFIX"' EXIT  # a failed up leaves nothing half-made
    up "$1" "$2" "$PREFIX"
    made=1
    echo "$PREFIX" ;;
  run) [[ $# -ge 3 ]] || die "run P PROFILE -- PROG..."; run "$@" ;;
  down) down "${1:-}" ;;
  check) check "${1:-}" ;;
  measure) [[ $# -ge 1 ]] || die "measure PROFILE"; measure "${@: -1}" ;;
  *) sed -n '2,13p' "$0"; exit 2 ;;
esac
