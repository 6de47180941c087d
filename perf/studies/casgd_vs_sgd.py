#!/usr/bin/python3
"""Study: mixed-precision CA-SGD against FP32 SGD on the five small paper problems.

Measured here at P ranks under comm.emulate (latency α, bandwidth β), and projected by the step
model (perf/predict) to the published GPU systems in perf/machines/ at --project-ranks. Writes
casgd_vs_sgd.json and casgd_vs_sgd.png (docs/performance_model.md, "Studies").

  perf/studies/casgd_vs_sgd.py BUILD [--ranks 2] [--latency-us 0 20 200] [--bandwidth-GBps 25]
                               [--project-ranks 64] [--out-dir .]
"""
import argparse
import json
import os
import tempfile

from minisgd_runs import ROOT, machine_file, predict, run_report

PAPER = os.path.join(ROOT, "input_decks", "paper", "small")
PROBLEMS = ["higgs", "susy", "epsilon", "synth", "poisson-synth"]
GPU_MACHINES = ["perlmutter-a100-slingshot", "h100-infiniband"]

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--latency-us", type=float, nargs="+", default=[0, 20, 200])
    ap.add_argument("--bandwidth-GBps", type=float, default=25)
    ap.add_argument("--project-ranks", type=int, nargs="+", default=[4, 16, 64])
    ap.add_argument("--out-dir", default=".")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for prob in PROBLEMS:
            sgd_deck = os.path.join(PAPER, f"{prob}-sgd-fp32.yaml")
            ca_deck = os.path.join(PAPER, f"{prob}-casgd-mixed.yaml")
            for lat in a.latency_us:
                net = [] if lat == 0 else [f"comm.emulate.latency_us={lat:g}",
                                           f"comm.emulate.bandwidth_GBps={a.bandwidth_GBps:g}"]
                sgd = run_report(a.build, sgd_deck, a.ranks, net, os.path.join(tmp, "r.json"))
                ca = run_report(a.build, ca_deck, a.ranks, net, os.path.join(tmp, "r.json"))
                row = {"problem": prob, "ranks": a.ranks, "latency_us": lat,
                       "bandwidth_GBps": a.bandwidth_GBps if lat else None,
                       "sgd_train_s": sgd["result"]["train_time_s"],
                       "casgd_train_s": ca["result"]["train_time_s"],
                       "speedup": sgd["result"]["train_time_s"] / ca["result"]["train_time_s"],
                       "sgd_loss": sgd["result"]["final_loss"],
                       "casgd_loss": ca["result"]["final_loss"],
                       "loss_gap": ca["result"]["final_loss"] / sgd["result"]["final_loss"] - 1,
                       "casgd_valid": ca["result"]["valid"]}
                features = sgd["problem"]["features"]
                for m in GPU_MACHINES:
                    for P in a.project_ranks:
                        row[f"projected_speedup_{m}_P{P}"] = (
                            predict(a.build, sgd_deck, machine_file(m), P, features)["step"]["total_s"] /
                            predict(a.build, ca_deck, machine_file(m), P, features)["step"]["total_s"])
                rows.append(row)
                print(f"{prob:14s} P={a.ranks} alpha={lat:5g} us  SGD {row['sgd_train_s']:.3f} s  "
                      f"CA-SGD {row['casgd_train_s']:.3f} s  speedup {row['speedup']:.2f}x  "
                      f"loss gap {100*row['loss_gap']:+.3f}%  model: "
                      + "  ".join(f"{m.split('-')[0]} P={P} {row[f'projected_speedup_{m}_P{P}']:.1f}x"
                                  for m in GPU_MACHINES for P in a.project_ranks), flush=True)
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "casgd_vs_sgd.json"), "w") as f:
        json.dump({"rows": rows, "project_ranks": a.project_ranks}, f, indent=1)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(11, 4.5))
    series = [(f"measured, P={a.ranks}, alpha={lat:g} us", [r["speedup"] for r in rows
                                                             if r["latency_us"] == lat])
              for lat in a.latency_us]
    series += [(f"model, {m}, P={P}",
                [r[f"projected_speedup_{m}_P{P}"] for r in rows if r["latency_us"] == a.latency_us[0]])
               for m in GPU_MACHINES for P in a.project_ranks]
    width = 0.8 / len(series)
    for k, (label, values) in enumerate(series):
        ax.bar([i + k * width for i in range(len(PROBLEMS))], values, width, label=label)
    ax.axhline(1, color="k", lw=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(PROBLEMS))], PROBLEMS)
    ax.set_ylabel("CA-SGD (mixed) speedup over FP32 SGD")
    ax.set_yscale("log")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(os.path.join(a.out_dir, "casgd_vs_sgd.png"), dpi=120)


if __name__ == "__main__":
    main()
