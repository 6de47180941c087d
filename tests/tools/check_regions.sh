#!/usr/bin/env bash
# check_regions.sh TOOL_LIB FENCES ORDER -- COMMAND...
# Runs COMMAND (a minisgd run) with the region recorder (region_recorder.cpp) loaded as a
# Kokkos Tools library, then checks every rank's record:
#  - the regions named in ORDER (space-separated) first appear in that order;
#  - minisgd's own fences inside minisgd::fom_window (the "minisgd::fence <why>" events of
#    core/kokkos.hpp): FENCES "none" (a default run) allows none at all on host backends, and on
#    device backends (MINISGD_ASYNC_KERNELS=1) only the waits before the host or MPI reads
#    what kernels wrote (sync_for_host), never a phase timer's; "some" (phase timers on) wants
#    at least one phase-timer fence, so the check can see them.
# Kokkos' own fence callbacks (4.x: deep copies, deallocations) are not minisgd's and not
# counted; the recorder asks Kokkos 4 not to fence around kernels for it.
set -u
lib=$1 fences=$2 order=$3
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export MINISGD_TOOL_LOG=$dir/regions KOKKOS_PROFILE_LIBRARY=$lib KOKKOS_TOOLS_LIBS=$lib
out=$(timeout --kill-after=5 120 "$@" 2>&1) || { echo "FAIL: the run failed"; echo "$out"; exit 1; }
logs=("$dir"/regions.*)
[ -e "${logs[0]}" ] || { echo "FAIL: the tool wrote nothing (not loaded?)"; echo "$out"; exit 1; }
status=0
for log in "${logs[@]}"; do
  result=$(awk -v async="${MINISGD_ASYNC_KERNELS:-0}" '
    /^push / { name = substr($0, 6); stack[++d] = name
               if (name == "minisgd::fom_window") inwin++
               if (!(name in seen)) { seen[name] = 1; first = first " " name }
               next }
    /^pop/   { if (stack[d] == "minisgd::fom_window") inwin--; d--; next }
    /^event minisgd::fence / { if (inwin > 0 && (!async || /^event minisgd::fence phase timer/)) {
                                   n++; if (!example) example = $0 } }
    END { print n + 0; print first; print example }' "$log")
  n=$(sed -n 1p <<<"$result"); seen=$(sed -n 2p <<<"$result"); example=$(sed -n 3p <<<"$result")
  # ORDER must be a subsequence of the first appearances.
  rest=" $seen "
  for name in $order; do
    case $rest in
      *" $name "*) rest=" ${rest#* $name }" ;;
      *) echo "FAIL ($(basename "$log")): region $name missing or out of order; first appearances:$seen"; status=1 ;;
    esac
  done
  if [ "$fences" = none ] && [ "$n" -ne 0 ]; then
    echo "FAIL ($(basename "$log")): $n fence(s) inside minisgd::fom_window, e.g. '$example'"; status=1
  elif [ "$fences" = some ] && [ "$n" -eq 0 ]; then
    echo "FAIL ($(basename "$log")): no fence inside minisgd::fom_window with phase timers on"; status=1
  else
    echo "ok ($(basename "$log")): regions in order, $n fence(s) inside minisgd::fom_window"
  fi
done
exit $status
