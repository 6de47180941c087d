#!/usr/bin/python3
"""Kernel launches per step: runs decks with the Kokkos Tools library
perf/support/launch_count_tool.cpp and divides what it counted inside the FOM window by the
window's steps (the report's fom_iterations; for CA-SGD also per outer step of s steps). On a GPU
every launch costs microseconds whatever it does, so this bounds how short a step can get. cuBLAS
GEMMs and the communicator's collectives are not Kokkos launches and are not counted.

  perf/launches.py BUILD DECK [DECK ...] [--ranks 1] [--set KEY=VALUE ...] [--names]
                   [--out launches.json]
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "studies"))
from minisgd_runs import run_report  # noqa: E402


def count(build, deck, ranks, sets, folder):
    """Rank 0's counts over its FOM window, and the run's report."""
    tool = os.path.join(build, "perf", "liblaunch_count_tool.so")
    log = os.path.join(folder, "launches")
    env = {"KOKKOS_PROFILE_LIBRARY": tool, "KOKKOS_TOOLS_LIBS": tool, "MINISGD_LAUNCH_LOG": log}
    report = run_report(build, deck, ranks, sets, os.path.join(folder, "r.json"),
                        invalid_ok=True, env=env)
    counts, names = {}, {"kernel": {}, "fence": {}}
    with open(log + ".0") as f:
        for line in f:
            key, rest = line.rstrip("\n").split(" ", 1)
            if key in names:
                n, name = rest.split(" ", 1)
                names[key][name] = int(n)
            else:
                counts[key] = int(rest)
    return counts, names, report


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("build")
    p.add_argument("decks", nargs="+")
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--set", action="append", default=[], dest="sets")
    p.add_argument("--names", action="store_true", help="list a step's kernels and fences by name")
    p.add_argument("--out", default="launches.json")
    a = p.parse_args()
    rows = []
    print(f"{'deck':34} {'method':7} {'s':>3} {'steps':>6} {'kernels/step':>13} "
          f"{'copies/step':>12} {'fences/step':>12} {'kernels/outer':>14}")
    with tempfile.TemporaryDirectory() as folder:
        for deck in a.decks:
            counts, names, report = count(a.build, deck, a.ranks, a.sets, folder)
            steps = max(report["result"]["fom_iterations"], 1)
            solver = report["deck"]["solver"]
            method = solver["method"]
            s = int(solver.get("s", 1)) if method == "ca-sgd" else 1
            row = {"deck": os.path.relpath(deck), "method": method, "s": s, "ranks": a.ranks,
                   "steps": steps, **{k: v / steps for k, v in counts.items()},
                   "kernels_per_outer_step": counts["kernels"] * s / steps,
                   "kernels_by_name": {k: v / steps for k, v in names["kernel"].items()},
                   "fences_by_name": {k: v / steps for k, v in names["fence"].items()}}
            rows.append(row)
            print(f"{row['deck'][-34:]:34} {method:7} {s:3d} {steps:6d} {row['kernels']:13.2f} "
                  f"{row['deep_copies']:12.2f} {row['fences']:12.2f} "
                  f"{row['kernels_per_outer_step']:14.2f}")
            if a.names:
                for what in ("kernels", "fences"):
                    for name, n in sorted(row[what + "_by_name"].items(), key=lambda kv: -kv[1]):
                        print(f"    {n:8.2f}  {what[:-1]} {name}")
    with open(a.out, "w") as f:
        json.dump({"ranks": a.ranks, "sets": a.sets, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
