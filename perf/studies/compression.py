#!/usr/bin/python3
"""Study: time to a target loss for every gradient compressor.

Measured at P = 2..4 ranks on the synth-* decks of input_decks/compression (epsilon-shaped,
2000 features) under two emulated networks (1 GbE: 50 us, 0.117 GB/s; 100 Gb/s: 2 us,
12.5 GB/s), and projected by the step model to P = 8..1024 on the matching machine files: the
iterations a method needed at the largest measured P times the model's time per step at P
(an assumption: iterations to target are taken as independent of P beyond what was measured);
and, by the model alone, each method's time per step at P = 8..1024 on a gradient of a paper's
size (--scale-features, default ResNet-50's 25 557 032 parameters).
Each case's time is the least of --repeats runs made in rounds over all cases (a slow spell of
the host then hits different cases, not every run of one). Writes compression.json and
compression.png (docs/performance_model.md, "Studies").

  perf/studies/compression.py BUILD [--ranks 2 3 4] [--project 8 32 128 1024] [--repeats 3]
                              [--scale-features 25557032] [--out-dir .]
"""
import argparse
import json
import os
import tempfile

from minisgd_runs import ROOT, least_in_rounds, machine_file, predict, run_report

DECKS = os.path.join(ROOT, "input_decks", "compression")
METHODS = ["none", "cast", "topk", "qsgd", "global-qsgd", "aps", "gtopk", "loco"]
NETWORKS = {"1GbE": (50.0, 0.117, "gbe-cluster"), "100Gbps": (2.0, 12.5, "cpu-100g-cluster")}

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--ranks", type=int, nargs="+", default=[2, 3, 4])
    ap.add_argument("--project", type=int, nargs="+", default=[8, 32, 128, 1024])
    ap.add_argument("--scale-features", type=int, default=25557032,
                    help="d of the per-step projection at a paper's scale (ResNet-50's parameters)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="runs of each case, in rounds over all cases; the least time to target is kept")
    ap.add_argument("--out-dir", default=".")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        jobs = [(net, method, P) for net in NETWORKS for method in METHODS for P in a.ranks]

        def run(job):
            net, method, P = job
            lat, bw, _ = NETWORKS[net]
            r = run_report(a.build, os.path.join(DECKS, f"synth-{method}.yaml"), P,
                           [f"comm.emulate.latency_us={lat:g}", f"comm.emulate.bandwidth_GBps={bw:g}"],
                           report)
            ttt = r["result"].get("time_to_target") or {}
            return ttt.get("seconds", float("inf")), r

        best, last = least_in_rounds(jobs, a.repeats, run)
        measured = {job: (t, r) for job, t, r in zip(jobs, best, last)}
        for net, (lat, bw, machine) in NETWORKS.items():
            for method in METHODS:
                deck = os.path.join(DECKS, f"synth-{method}.yaml")
                for P in a.ranks:
                    t, r = measured[(net, method, P)]
                    ttt = r["result"].get("time_to_target") or {}
                    rows.append({"network": net, "method": method, "ranks": P, "measured": True,
                                 "time_to_target_s": t if t < float("inf") else None,
                                 "iterations_to_target": ttt.get("iteration"),
                                 "train_time_s": r["result"]["train_time_s"],
                                 "final_loss": r["result"]["final_loss"],
                                 "valid": r["result"]["valid"],
                                 "bytes_ratio": (r.get("compression") or {}).get("ratio_to_dense")})
                    print(f"{net:8s} {method:12s} P={P:4d} measured  time to target "
                          f"{rows[-1]['time_to_target_s']} s  (iteration "
                          f"{rows[-1]['iterations_to_target']}), loss {r['result']['final_loss']:.6f}"
                          f" {'VALID' if r['result']['valid'] else 'INVALID'}", flush=True)
                last_row = rows[-1]
                if last_row["iterations_to_target"] is None:
                    continue
                features = r["problem"]["features"]
                for P in a.project:
                    step = predict(a.build, deck, machine_file(machine), P, features)["step"]["total_s"]
                    rows.append({"network": net, "method": method, "ranks": P, "measured": False,
                                 "machine": machine,
                                 "time_to_target_s": step * last_row["iterations_to_target"]})
                    print(f"{net:8s} {method:12s} P={P:4d} model     time to target "
                          f"{rows[-1]['time_to_target_s']:.4g} s", flush=True)
        # Per step at a paper's scale: the model alone (no run has a gradient this long here).
        for net, (_, _, machine) in NETWORKS.items():
            for method in METHODS:
                deck = os.path.join(DECKS, f"synth-{method}.yaml")
                for P in a.project:
                    step = predict(a.build, deck, machine_file(machine), P, a.scale_features)["step"]
                    rows.append({"network": net, "method": method, "ranks": P, "measured": False,
                                 "machine": machine, "features": a.scale_features,
                                 "step_s": step["total_s"], "bytes_per_step": step["bytes"]})
                    print(f"{net:8s} {method:12s} P={P:4d} model     d = {a.scale_features}: "
                          f"{1e3 * step['total_s']:.4g} ms a step", flush=True)
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "compression.json"), "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(NETWORKS), figsize=(12, 4.5), sharey=True)
    for ax, net in zip(axes, NETWORKS):
        for method in METHODS:
            pts = sorted((r["ranks"], r["time_to_target_s"]) for r in rows
                         if r["network"] == net and r["method"] == method and r.get("time_to_target_s"))
            if pts:
                ax.plot(*zip(*pts), marker="o", label=method)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.axvline(max(a.ranks) + 0.5, color="grey", lw=0.6, ls="--")
        ax.set_title(f"{net} (measured P <= {max(a.ranks)}, model beyond)")
        ax.set_xlabel("ranks P")
    axes[0].set_ylabel("time to target loss (s)")
    axes[-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(os.path.join(a.out_dir, "compression.png"), dpi=120)


if __name__ == "__main__":
    main()
