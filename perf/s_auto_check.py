#!/usr/bin/python3
"""How good solver.s: auto's choice is (docs/performance_model.md, "Choosing s in a run").

For each rank count P it calibrates this machine (perf/calibrate at P ranks), runs each CA-SGD
deck with s: auto on that machine file (the choice and the model's predictions come from the
report's s_auto), then measures the time per step of every candidate s (FOM window:
fom_time_s / fom_iterations), the sweep repeated --repeats times in interleaved order and the
median kept. A case passes when the chosen s's measured time is within --slack (10%) of the
best measured s. Prints the table and writes it as JSON; exit status 1 when a case fails.

  perf/s_auto_check.py BUILD [--ranks 1 2] [--decks D ...] [--emulate none 20:25]
                       [--repeats 3] [--epochs 5] [--out s_auto_check.json]

At one rank only the run without emulation is made (nothing is sent).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "studies"))
from minisgd_runs import ROOT, calibrate, run_report, seconds_per_step  # noqa: E402

PAPER = os.path.join(ROOT, "input_decks", "paper", "small")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--decks", nargs="+", default=["higgs-casgd-mixed", "susy-casgd-mixed"])
    ap.add_argument("--emulate", nargs="+", default=["none", "20:25"],
                    help="networks: 'none' or LAT_US:GBPS (comm.emulate)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--epochs", type=float, default=5,
                    help="solver.epochs of every run (the decks' 1 epoch is a 15 ms FOM window)")
    ap.add_argument("--slack", type=float, default=0.10)
    ap.add_argument("--out", default="s_auto_check.json")
    a = ap.parse_args()
    rows, failed = [], 0
    print(f"{'deck':20} {'P':>2} {'network':>8} {'auto s':>6} {'best s':>6} {'ratio':>6}  "
          "measured (predicted) us per step by s")
    with tempfile.TemporaryDirectory() as tmp:
        for P in a.ranks:
            machine = calibrate(a.build, P, tmp, fast_state=False)  # medians, as the sweeps
            for name in a.decks:
                deck = os.path.join(PAPER, name + ".yaml")
                for net in (a.emulate if P > 1 else ["none"]):  # one rank sends nothing
                    lat, _, gbps = net.partition(":")
                    sets = [f"solver.epochs={a.epochs:g}"]
                    if net != "none":
                        sets += [f"comm.emulate.latency_us={lat}",
                                 f"comm.emulate.bandwidth_GBps={gbps}"]
                    auto = run_report(a.build, deck, P,
                                      sets + ["solver.s=auto", f"solver.machine={machine}"],
                                      os.path.join(tmp, "auto.json"))["s_auto"]
                    candidates = [k["s"] for k in auto["candidates"]]
                    predicted = {k["s"]: k["step_s"] for k in auto["candidates"]}
                    times = {s: [] for s in candidates}
                    for rep in range(a.repeats):  # interleaved: drift hits every s alike
                        order = candidates if rep % 2 == 0 else candidates[::-1]
                        for s in order:
                            times[s].append(seconds_per_step(run_report(
                                a.build, deck, P, sets + [f"solver.s={s}"],
                                os.path.join(tmp, "sweep.json"))))
                    measured = {s: statistics.median(t) for s, t in times.items()}
                    best = min(measured, key=measured.get)
                    ratio = measured[auto["s"]] / measured[best]
                    ok = ratio <= 1 + a.slack
                    failed += not ok
                    rows.append({"deck": name, "ranks": P, "network": net, "auto_s": auto["s"],
                                 "best_s": best, "ratio": ratio, "ok": ok,
                                 "measured_step_s": measured, "all_step_s": times,
                                 "predicted_step_s": predicted})
                    cells = " ".join(f"{s}:{measured[s] * 1e6:.2f}({predicted[s] * 1e6:.2f})"
                                     for s in candidates)
                    print(f"{name:20} {P:2d} {net:>8} {auto['s']:6d} {best:6d} {ratio:6.3f}  "
                          f"{cells}  {'ok' if ok else 'MISS'}", flush=True)
    with open(a.out, "w") as f:
        json.dump(rows, f, indent=1)
    print(f"{failed} case(s) where the chosen s is more than {a.slack:.0%} slower than the best")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
