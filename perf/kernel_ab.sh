#!/usr/bin/env bash
# Two builds' kernel tables (perf/kernel_table.sh) alternated back to back, A, B, A, B, …, so a
# slow spell of a machine falls on both: for each row, each build's median rate and median
# fraction of its ceiling (measured in the same process), in wall time and in CPU time (the
# steadier of the two where other work shares the machine), and B over A. Rows where B's median
# fraction is below 0.95 of A's are marked. Use it for a change that must not
# cost speed (old build against new), or for two builds of one tree (the default build against
# MINISGD_ARCH=native).
#
# Usage: [ROUNDS=R] perf/kernel_ab.sh BUILD_A BUILD_B [OUT_DIR] [-- extra benchmark arguments]
#   R rounds (default 5) of one kernel_table.sh process per build; FILTER, MIN_TIME and the
#   thread variables pass through to kernel_table.sh. OUT_DIR (default kernel_ab) keeps each
#   round's JSON. Take it on a quiet machine: the table prints the load average.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 2 ]] || { echo "usage: perf/kernel_ab.sh BUILD_A BUILD_B [OUT_DIR] [-- benchmark args]" >&2; exit 2; }
a=$1 b=$2
shift 2
out=kernel_ab
if [[ $# -gt 0 && $1 != "--" ]]; then out=$1; shift; fi
[[ ${1:-} == "--" ]] && shift
rounds=${ROUNDS:-5}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "kernel_ab: ROUNDS must be a positive integer (got '$rounds')" >&2; exit 2; }
for build in "$a" "$b"; do
  [[ -x $build/perf/bench_kernels ]] || { echo "kernel_ab: $build/perf/bench_kernels: not built" >&2; exit 2; }
done
mkdir -p "$out"
for ((r = 1; r <= rounds; ++r)); do
  ROUNDS=1 "$root/perf/kernel_table.sh" "$a" "$out/a$r.json" -- "$@" > /dev/null
  ROUNDS=1 "$root/perf/kernel_table.sh" "$b" "$out/b$r.json" -- "$@" > /dev/null
  echo "kernel_ab: round $r of $rounds done"
done
python3 - "$a" "$b" "$out" "$rounds" <<'PY'
import json, os, statistics, sys
a, b, out, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def rows(side):
    by = {}
    for r in range(1, rounds + 1):
        for k in json.load(open(os.path.join(out, "%s%d.json" % (side, r))))["kernels"]:
            by.setdefault((k["kernel"], k["shape"]), []).append(k)
    return by
ra, rb = rows("a"), rows("b")
print("A: %s\nB: %s\n%d rounds alternated; medians\n" % (a, b, rounds))
print("%-44s %-16s %10s %10s %6s %7s %7s %6s %7s" % ("kernel", "shape", "A rate", "B rate", "B/A",
                                                     "A of", "B of", "B/A", "cpu B/A"))
worst = None
for key in ra:
    if key not in rb:
        continue
    med = lambda ks, f: statistics.median(k[f] for k in ks)
    rate_a, rate_b = med(ra[key], "rate"), med(rb[key], "rate")
    frac_a, frac_b = med(ra[key], "fraction"), med(rb[key], "fraction")
    cpu = lambda ks: statistics.median(float(k["fraction_cpu"]) for k in ks
                                       if k.get("fraction_cpu") not in (None, ""))
    ratio = frac_b / frac_a if frac_a else float("nan")
    try:
        cpu_ratio = "%7.3f" % (cpu(rb[key]) / cpu(ra[key]))
    except (statistics.StatisticsError, ValueError, ZeroDivisionError):
        cpu_ratio = "%7s" % "-"
    worst = ratio if worst is None or ratio < worst else worst
    print("%-44s %-16s %10.3f %10.3f %6.3f %7.3f %7.3f %6.3f %s%s" % (
        key[0][:44], key[1][:16], rate_a, rate_b, rate_b / rate_a if rate_a else float("nan"),
        frac_a, frac_b, ratio, cpu_ratio, "  <-- below 0.95" if ratio < 0.95 else ""))
print("\nworst B/A of the fraction: %.3f" % worst if worst is not None else "no common rows")
PY
