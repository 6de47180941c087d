#!/usr/bin/python3
"""Study: each compression paper's own comparison, on the sparse problem at size.

The hashed click-log-shaped problem of input_decks/sparse/hashed-gtopk.yaml (the one
perf/studies/links_at_size.py runs) at d = --features, P = --ranks, under `comm.emulate` with a
network profile of perf/net/links.sh (default 1g: 50 us, 0.125 GB/s), or on its shaped links
with --links (root). Four groups, each against its own dense run (the same optimizer, no
compression), whose final loss + the group's tolerance is the group's target:

  gtopk       dense, top-k and gTop-k at the same density (--density, the paper's 0.001),
              tolerance 2%: gTop-k against dense and against top-k
  loco        under Adam (--adam-eta0): dense, LoCo 4-bit (beta 0.8, reset 1024) and plain
              4-bit, the same codes and collective without compensation (reset every step)
  global-qsgd QSGD and Global-QSGD, 8 bits: bytes a step against dense, and time to target
  aps         APS 8-bit (--aps-format, e5m2), and the same codes without its scaling
              (aps.scaling=false)

Prints one table per group (time to target, ms a step, bytes a step, final loss and its gap to
the group's dense) and writes headlines.json to --out-dir.

  perf/studies/headlines.py BUILD [--ranks 4] [--profile 1g] [--features 4194304]
        [--rows 20000] [--epochs 2] [--density 0.001] [--adam-eta0 0.03] [--aps-format e5m2] [--links]
        [--groups gtopk loco global-qsgd aps] [--out-dir .]
"""
import argparse
import json
import os
import sys
import tempfile

from links_at_size import DECK, PROFILES, add_problem_args, on_links, problem_sets
from minisgd_runs import run_report

TOLERANCE = {"gtopk": 0.02, "loco": 0.01, "global-qsgd": 0.01, "aps": 0.01}


def groups(a):
    """Each group's cases: (label, --set overrides); the first is the group's dense run."""
    adam = ["solver.optimizer=adam", f"solver.step_size.eta0={a.adam_eta0:g}"]
    loco = ["compression.method=loco", "compression.loco.bits=4"]
    aps = ["compression.method=aps", f"compression.aps.format={a.aps_format}"]
    return {
        "gtopk": [("dense", ["compression.method=none"]),
                  ("top-k", ["compression.method=topk", f"compression.topk.density={a.density:g}"]),
                  ("gTop-k", ["compression.method=gtopk", f"compression.gtopk.density={a.density:g}",
                              "compression.gtopk.warmup_epochs=0"])],
        "loco": [("dense (Adam)", ["compression.method=none"] + adam),
                 ("LoCo 4-bit (Adam)", loco + adam),
                 ("4-bit, no compensation (Adam)", loco + ["compression.loco.reset_period=1"] + adam)],
        "global-qsgd": [("dense", ["compression.method=none"]),
                        ("QSGD 8-bit", ["compression.method=qsgd", "compression.qsgd.bits=8"]),
                        ("Global-QSGD 8-bit", ["compression.method=global-qsgd",
                                               "compression.global-qsgd.bits=8"])],
        "aps": [("dense fp32", ["compression.method=none"]),
                (f"APS {a.aps_format}", aps),
                (f"{a.aps_format} without scaling", aps + ["compression.aps.scaling=false"])],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_problem_args(ap)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--adam-eta0", type=float, default=0.03)
    ap.add_argument("--aps-format", default="e5m2", help="APS's wire format (aps.format)")
    ap.add_argument("--links", action="store_true", help="on perf/net/links.sh's links (root)")
    ap.add_argument("--groups", nargs="+", choices=sorted(TOLERANCE), default=list(TOLERANCE))
    ap.add_argument("--out-dir", default=".")
    a = ap.parse_args()
    if a.links and os.geteuid() != 0:
        sys.exit("headlines.py: --links needs root (network namespaces)")
    lat, bw = PROFILES[a.profile]
    net = [] if a.links else [f"comm.emulate.latency_us={lat:g}", f"comm.emulate.bandwidth_GBps={bw:g}"]
    base = problem_sets(a.features, a.rows, a.epochs) + net
    out = {"ranks": a.ranks, "profile": a.profile, "network": "links" if a.links else "emulate",
           "features": a.features, "rows": a.rows, "epochs": a.epochs, "groups": {}}
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")

        def run(sets):
            if a.links:
                return on_links(a.build, a.ranks, a.profile, base + sets, report)[0]
            return run_report(a.build, DECK, a.ranks, base + sets, report, invalid_ok=True)

        for g in a.groups:
            cases = groups(a)[g]
            dense = run(cases[0][1])
            ref = dense["result"]["final_loss"]
            target = [f"validation.reference_loss={ref:.9g}", f"validation.tolerance={TOLERANCE[g]:g}"]
            rows = []
            for label, sets in cases:
                r = run(sets + target)
                res, comp = r["result"], r.get("compression") or {}
                ttt = res.get("time_to_target") or {}
                rows.append({"case": label, "final_loss": res["final_loss"],
                             "gap": res["final_loss"] / ref - 1,
                             "time_to_target_s": ttt.get("seconds") if ttt.get("reached") else None,
                             "iterations_to_target": ttt.get("iteration") if ttt.get("reached") else None,
                             "step_ms": 1e3 * res["fom_time_s"] / max(res["fom_iterations"], 1),
                             "bytes_per_step": comp.get("bytes_per_step"),
                             "ratio_to_dense": comp.get("ratio_to_dense")})
            out["groups"][g] = {"reference_loss": ref, "tolerance": TOLERANCE[g], "cases": rows}
            t0 = rows[0]["time_to_target_s"]
            print(f"\n{g}: target {ref * (1 + TOLERANCE[g]):.6f} (dense final {ref:.6f} "
                  f"+ {TOLERANCE[g]:.0%}), P = {a.ranks}, d = {a.features}, {a.profile} "
                  f"{out['network']}\n")
            print("| case | to target (s) | steps to target | ms/step | bytes/step | vs dense | final loss | gap |")
            print("|---" * 8 + "|")
            for x in rows:
                t = x["time_to_target_s"]
                print(f"| {x['case']} | {'not reached' if t is None else f'{t:.2f}'} "
                      f"| {x['iterations_to_target'] or '—'} | {x['step_ms']:.1f} "
                      f"| {x['bytes_per_step'] or 0:.4g} "
                      f"| {f'{t0 / t:.2f}×' if t and t0 else '—'} | {x['final_loss']:.6f} "
                      f"| {x['gap']:+.2%} |", flush=True)
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "headlines.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
