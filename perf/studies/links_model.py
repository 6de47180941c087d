#!/usr/bin/python3
"""The step model against the links study, and its projections to P = 8..1024.

Check: for the problem of perf/studies/links_at_size.py (its deck and --set overrides, imported
from it), perf/predict's time per step of every method at the measured P (4) on this machine's
figures (--here, host.cores included: 4 ranks on 2 cores run at the pace of a core holding two)
with the network section replaced by the measured profile's nominal latency and rate (1g:
50 us, 0.125 GB/s), set beside the measured ms a step on the shaped links and under
comm.emulate (--measured: links_at_size.json as that study writes it, e.g. a dated copy in
perf/results/), as model/links and model/emulate; a ratio more than --tolerance (0.20) from 1
is flagged.

Projections: the same problem at P = --project on one rank per node with the node figures of
--node (perf/machines/gbe-cluster.yaml: a dual-socket server, no cores shared) and each
profile's network (1g, 10g, 100g of perf/net/links.sh), at d = --features; time to target =
the steps to target measured at P = 4 (held fixed: not measured beyond P = 4) times the
model's step. Then which method has the least step per network, d and P, with its speed-up
over dense and over the exact sparse AllReduce, and the best of the lossy compressors.

The deck's rows are sparse (39 nonzeros of Zipf draws, exponent 1.1): perf/predict prices them
itself (docs/performance_model.md, "Sparse rows"): SGD's gradient by its nonzeros, the exact
sparse AllReduce by the expected columns a rank's batch touches, top-k and gTop-k's selection
on those columns.

  perf/studies/links_model.py [--build build/gcc-serial]
      [--measured perf/results/links_at_size_2026-12-07.json] [--here perf/machines/dev-xeon-2core.yaml]
      [--node perf/machines/gbe-cluster.yaml] [--project 8 16 32 64 128 256 512 1024]
      [--features 4194304 16777216] [--tolerance 0.2] [--compressors 'cast: 1.76, ...']
      [--json OUT.json]
"""
import argparse
import json
import math
import os
import sys
import tempfile

from links_at_size import DECK, METHODS, PROFILES, method_sets, problem_sets
from minisgd_runs import ROOT, machine_file, predict, with_section

LOSSY = [m for m in METHODS if m not in ("none", "sparse")]


def with_network(base, profile, folder, compressors=None):
    """base's machine file with its network section the profile's nominal figures (and its
    compressors section `compressors: {...}` when given)."""
    lat, bw = PROFILES[profile]
    with open(base) as f:
        text = f.read()
    text = with_section(text, "network", f"network: {{latency_us: {lat:g}, bandwidth_GBps: {bw:g}}}\n")
    if compressors:
        text = with_section(text, "compressors", f"compressors: {{{compressors}}}\n")
    path = os.path.join(folder, f"{os.path.basename(base)[:-5]}-{profile}.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


class Model:
    def __init__(self, build, rows, epochs):
        self.build, self.rows, self.epochs = build, rows, epochs

    def step(self, machine, P, d, method):
        """{compute_s, latency_s, bandwidth_s, total_s, bytes} of one step: perf/predict's."""
        sets = problem_sets(d, self.rows, self.epochs) + method_sets(method)
        s = predict(self.build, DECK, machine, P, d, sets, self.rows)["step"]
        return {k: s[k] for k in ("compute_s", "latency_s", "bandwidth_s", "total_s", "bytes")}


def si(x):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g}"


def ms(x):
    return f"{1e3 * x:.3g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "gcc-serial"))
    ap.add_argument("--measured",
                    default=os.path.join(ROOT, "perf", "results", "links_at_size_2026-12-07.json"))
    ap.add_argument("--here", default=machine_file("dev-xeon-2core"))
    ap.add_argument("--node", default=machine_file("gbe-cluster"))
    ap.add_argument("--project", type=int, nargs="+", default=[8, 16, 32, 64, 128, 256, 512, 1024])
    ap.add_argument("--features", type=int, nargs="+", default=[1 << 22, 1 << 24])
    ap.add_argument("--tolerance", type=float, default=0.20)
    ap.add_argument("--compressors", help="the check's per-value figures in place of --here's, "
                    "as `cast: 1.76, qsgd: 17.3` (ns a value: perf/bench_compress at size)")
    ap.add_argument("--json", help="write every figure to this file")
    a = ap.parse_args()
    if not os.access(os.path.join(a.build, "perf", "predict"), os.X_OK):
        sys.exit(f"links_model.py: no {a.build}/perf/predict (build the perf targets)")
    with open(a.measured) as f:
        meas = json.load(f)
    P0, d0, prof0 = meas["ranks"], meas["features"], meas["profile"]
    model = Model(a.build, meas["rows"], meas["epochs"])
    out = {"measured": a.measured, "check": {}, "projection": []}
    with tempfile.TemporaryDirectory() as tmp:
        here = with_network(a.here, prof0, tmp, a.compressors)
        print(f"## Check: P = {P0}, d = {d0}, {prof0} ({meas['date']}; {meas['command']})\n")
        print(f"Model: {os.path.relpath(a.here, ROOT)} (compute at the pace of a core holding "
              f"ceil(P/cores) ranks) with network {PROFILES[prof0][0]:g} us, "
              f"{PROFILES[prof0][1]:g} GB/s; ms a step; flagged: |ratio - 1| > {a.tolerance:g}\n")
        print("| method | bytes measured / model | model compute | latency | bandwidth "
              "| model | emulate | links | model/emulate | model/links | emulate less model's network |")
        print("|---" * 11 + "|")
        for m in METHODS:
            s = model.step(here, P0, d0, m)
            e, l = meas["methods"][m]["emulate"]["step_ms"], meas["methods"][m]["links"]["step_ms"]
            re_, rl = 1e3 * s["total_s"] / e, 1e3 * s["total_s"] / l
            flag = lambda r: f"**{r:.2f}**" if abs(r - 1) > a.tolerance else f"{r:.2f}"
            print(f"| {m} | {si(meas['methods'][m]['bytes_per_step'])} / {si(s['bytes'])} "
                  f"| {ms(s['compute_s'])} | {ms(s['latency_s'])} | {ms(s['bandwidth_s'])} "
                  f"| {ms(s['total_s'])} | {e:.3g} | {l:.3g} | {flag(re_)} | {flag(rl)} "
                  f"| {e - 1e3 * (s['latency_s'] + s['bandwidth_s']):.3g} |")
            out["check"][m] = dict(s, emulate_ms=e, links_ms=l, model_over_emulate=re_,
                                   model_over_links=rl)
        outside = [m for m, c in out["check"].items() if abs(c["model_over_links"] - 1) > a.tolerance]
        print(f"\nmodel/links outside {a.tolerance:.0%}: {', '.join(outside) or 'none'}")
        print("(emulate less model's network: the emulated run's ms a step less the model's "
              "latency and bandwidth parts, the local work it implies, against model compute)")

        print(f"\n## Projections: the model alone, one rank a node "
              f"({os.path.relpath(a.node, ROOT)}'s node figures)\n")
        print(f"Time to target = steps to target measured at P = {P0} (held fixed) x the "
              "model's step.\n")
        wins = []
        for prof in PROFILES:
            node = with_network(a.node, prof, tmp)
            for d in a.features:
                table = {(m, P): model.step(node, P, d, m)
                         for m in METHODS for P in a.project}
                print(f"{prof}, d = {d}: ms a step (time to target, s)\n")
                print("| method | " + " | ".join(f"P = {P}" for P in a.project) + " |")
                print("|---" * (len(a.project) + 1) + "|")
                for m in METHODS:
                    its = meas["methods"][m]["iterations_to_target"]
                    cells = []
                    for P in a.project:
                        t = table[(m, P)]["total_s"]
                        cells.append(f"{ms(t)} ({t * its:.3g})")
                        out["projection"].append({"profile": prof, "features": d, "ranks": P,
                                                  "method": m, **table[(m, P)],
                                                  "time_to_target_s": t * its})
                    print(f"| {m} | " + " | ".join(cells) + " |")
                print()
                for P in a.project:
                    tt = {m: table[(m, P)]["total_s"] * meas["methods"][m]["iterations_to_target"]
                          for m in METHODS}
                    best = min(METHODS, key=tt.get)
                    lossy = min(LOSSY, key=tt.get)
                    wins.append((prof, d, P, best, tt["none"] / tt[best], tt["sparse"] / tt[best],
                                 lossy, tt["none"] / tt[lossy], tt["sparse"] / tt[lossy]))
        print("## Which method wins (least time to target; the model alone)\n")
        print("Cell: the best method (speed-up over dense, over exact sparse); below it the best "
              "lossy compressor\n")
        print("| network | d | " + " | ".join(f"P = {P}" for P in a.project) + " |")
        print("|---" * (len(a.project) + 2) + "|")
        for prof in PROFILES:
            for d in a.features:
                row = [w for w in wins if w[0] == prof and w[1] == d]
                print(f"| {prof} | 2^{int(math.log2(d))} | " + " | ".join(
                    f"{w[3]} ({w[4]:.3g}×, {w[5]:.2g}×)" for w in row) + " |")
                print(f"| | best lossy | " + " | ".join(
                    f"{w[6]} ({w[7]:.3g}×, {w[8]:.2g}×)" for w in row) + " |")
        out["wins"] = [dict(zip(("profile", "features", "ranks", "best", "over_dense",
                                 "over_sparse", "best_lossy", "lossy_over_dense",
                                 "lossy_over_sparse"), w)) for w in wins]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
