#!/usr/bin/python3
"""Study: mixed-precision CA-SGD against FP32 SGD, and against the best SGD, on the five small
paper problems.

Measured here at P ranks under comm.emulate (latency α, bandwidth β), set beside what the step
model predicts for this machine (calibrated at P ranks, or --machine), and projected by the
model (perf/predict) to the published GPU systems in perf/machines/ at --project-ranks. The
speedup is the ratio of the FOM window's time per step (fom_time_s / fom_iterations; CA-SGD
takes the same steps as SGD), the least of --repeats runs made in rounds over every case (as
perf/model_check.py does: a slow spell of the host then hits different cases, not all the
repeats of one, and the least is the statistic the calibration keeps); a row passes when the measured
speedup is at least (1 − --slack) times the model's. The best SGD is the faster of FP32 SGD and
SGD with bf16 storage (the same deck with precision.data = bf16: half the bytes streamed); the
speedup over it is measured only. Writes casgd_vs_sgd.json and
casgd_vs_sgd.png (docs/performance_model.md, "Studies"); exit status 1 when a row fails.

  perf/studies/casgd_vs_sgd.py BUILD [--ranks 2] [--latency-us 0 20 200] [--bandwidth-GBps 25]
                               [--epochs 3] [--repeats 3] [--machine FILE]
                               [--project-ranks 4 16 64] [--out-dir .]
"""
import argparse
import json
import os
import sys
import tempfile

from minisgd_runs import ROOT, calibrate, least_in_rounds, machine_file, predict, step_seconds

PAPER = os.path.join(ROOT, "input_decks", "paper", "small")
PROBLEMS = ["higgs", "susy", "epsilon", "synth", "poisson-synth"]
GPU_MACHINES = ["perlmutter-a100-slingshot", "h100-infiniband"]


def runs_of(a, prob, lat):
    """The three runs of one row: FP32 SGD, SGD with bf16 storage, mixed CA-SGD (deck, --sets)."""
    sgd_deck = os.path.join(PAPER, f"{prob}-sgd-fp32.yaml")
    ca_deck = os.path.join(PAPER, f"{prob}-casgd-mixed.yaml")
    net = [] if lat == 0 else [f"comm.emulate.latency_us={lat:g}",
                               f"comm.emulate.bandwidth_GBps={a.bandwidth_GBps:g}"]
    sets = net + [f"solver.epochs={a.epochs:g}"]
    return {"sgd": (sgd_deck, sets), "bf16": (sgd_deck, sets + ["precision.data=bf16"]),
            "ca": (ca_deck, sets)}, net


def measure(a, prob, lat, times, reports, machine):
    """One row of the study from its runs' least times and reports (keyed as runs_of): measured,
    predicted here, projected to the GPUs."""
    runs, net = runs_of(a, prob, lat)
    sgd_s, bf16_s, ca_s = (times[k] for k in ("sgd", "bf16", "ca"))
    sgd, bf16, ca = (reports[k] for k in ("sgd", "bf16", "ca"))
    sgd_deck, ca_deck = runs["sgd"][0], runs["ca"][0]
    features = sgd["problem"]["features"]
    model = {d: predict(a.build, deck, machine, a.ranks, features, net,
                        sgd["problem"]["rows"])["step"]["total_s"]
             for d, deck in (("sgd", sgd_deck), ("ca", ca_deck))}
    row = {"problem": prob, "ranks": a.ranks, "latency_us": lat,
           "bandwidth_GBps": a.bandwidth_GBps if lat else None,
           "sgd_step_s": sgd_s, "casgd_step_s": ca_s, "speedup": sgd_s / ca_s,
           "model_sgd_step_s": model["sgd"], "model_casgd_step_s": model["ca"],
           "model_speedup": model["sgd"] / model["ca"],
           "sgd_bf16_step_s": bf16_s, "best_sgd": "fp32" if sgd_s <= bf16_s else "bf16",
           "speedup_over_best_sgd": min(sgd_s, bf16_s) / ca_s,
           "sgd_loss": sgd["result"]["final_loss"], "casgd_loss": ca["result"]["final_loss"],
           "sgd_bf16_loss": bf16["result"]["final_loss"],
           "loss_gap": ca["result"]["final_loss"] / sgd["result"]["final_loss"] - 1,
           "sgd_bf16_loss_gap": bf16["result"]["final_loss"] / sgd["result"]["final_loss"] - 1}
    row["ok"] = row["speedup"] >= (1 - a.slack) * row["model_speedup"]
    for m in GPU_MACHINES:
        for P in a.project_ranks:
            row[f"projected_speedup_{m}_P{P}"] = (
                predict(a.build, sgd_deck, machine_file(m), P, features)["step"]["total_s"] /
                predict(a.build, ca_deck, machine_file(m), P, features)["step"]["total_s"])
    return row


def plot(a, rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(11, 4.5))
    series = []
    for lat in a.latency_us:
        at = [r for r in rows if r["latency_us"] == lat]
        series += [(f"measured, P={a.ranks}, alpha={lat:g} us", [r["speedup"] for r in at]),
                   (f"model here, P={a.ranks}, alpha={lat:g} us", [r["model_speedup"] for r in at]),
                   (f"measured over the best SGD, alpha={lat:g} us",
                    [r["speedup_over_best_sgd"] for r in at])]
    series += [(f"model, {m}, P={P}",
                [r[f"projected_speedup_{m}_P{P}"] for r in rows if r["latency_us"] == a.latency_us[0]])
               for m in GPU_MACHINES for P in a.project_ranks]
    width = 0.8 / len(series)
    colors = plt.get_cmap("tab20").colors  # one colour a series (the default cycle has 10)
    for k, (label, values) in enumerate(series):
        ax.bar([i + k * width for i in range(len(PROBLEMS))], values, width, label=label,
               color=colors[k % len(colors)], hatch="//" if label.startswith("model") else None)
    ax.axhline(1, color="k", lw=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(PROBLEMS))], PROBLEMS)
    ax.set_ylabel("CA-SGD (mixed) speedup over SGD, per step")
    ax.set_yscale("log")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--latency-us", type=float, nargs="+", default=[0, 20, 200])
    ap.add_argument("--bandwidth-GBps", type=float, default=25)
    ap.add_argument("--epochs", type=float, default=3,
                    help="solver.epochs of every run (the decks' own give FOM windows of a few ms)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--slack", type=float, default=0.2)
    ap.add_argument("--machine", help="machine file for the model here (default: calibrate at P)")
    ap.add_argument("--project-ranks", type=int, nargs="+", default=[4, 16, 64])
    ap.add_argument("--out-dir", default=".")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        machine = a.machine or calibrate(a.build, min(a.ranks, os.cpu_count() or a.ranks), tmp)
        with open(machine) as f:
            machine_text = f.read()  # in the JSON: the model here is only as good as this
        cases = [(prob, lat) for prob in PROBLEMS for lat in a.latency_us]
        jobs = [(c, kind, deck, sets) for c in cases for kind, (deck, sets) in runs_of(a, *c)[0].items()]
        best, last = least_in_rounds(jobs, a.repeats,
                                     lambda job: step_seconds(a.build, job[2], a.ranks, job[3], tmp))
        times, reports = {c: {} for c in cases}, {c: {} for c in cases}
        for (c, kind, _, _), t, r in zip(jobs, best, last):
            times[c][kind], reports[c][kind] = t, r
        for prob, lat in cases:
            r = measure(a, prob, lat, times[(prob, lat)], reports[(prob, lat)], machine)
            rows.append(r)
            print(f"{prob:14s} P={a.ranks} alpha={lat:5g} us  SGD {r['sgd_step_s']*1e6:8.2f} us  "
                  f"SGD bf16 {r['sgd_bf16_step_s']*1e6:8.2f} us  "
                  f"CA-SGD {r['casgd_step_s']*1e6:8.2f} us  speedup {r['speedup']:5.2f}x  "
                  f"model here {r['model_speedup']:5.2f}x {'ok' if r['ok'] else 'BELOW'}  "
                  f"over the best SGD ({r['best_sgd']}) {r['speedup_over_best_sgd']:5.2f}x  "
                  f"loss gap {100*r['loss_gap']:+.3f}%  projected: "
                  + "  ".join(f"{m.split('-')[0]} P={P} {r[f'projected_speedup_{m}_P{P}']:.1f}x"
                              for m in GPU_MACHINES for P in a.project_ranks), flush=True)
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "casgd_vs_sgd.json"), "w") as f:
        json.dump({"rows": rows, "project_ranks": a.project_ranks, "slack": a.slack,
                   "machine": machine_text}, f, indent=1)
    plot(a, rows, os.path.join(a.out_dir, "casgd_vs_sgd.png"))
    below = sum(not r["ok"] for r in rows)
    print(f"{below} row(s) where the measured speedup is below (1 - {a.slack:g}) x the model's")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
