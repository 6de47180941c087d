#!/usr/bin/python3
"""Study: minisgd beside its peers on identical rows, in one run (docs/performance.md, "Peers").

One synthetic logistic-regression problem (m rows × d features, fp32, labels ±1 drawn from
σ(x·w*)) is written once, as LIBSVM for minisgd and as .npz for the peers: every solver reads
the same rows. Plain mini-batch SGD, global batch b, constant step η, L2 λ, no intercept:
  - minisgd, row decomposition, fp32, at P ranks (FOM samples/s, result.time_to_target);
  - PyTorch DDP over gloo at P processes with its communication hooks none, fp16, bf16 and
    PowerSGD (perf/peers/torch_ddp_target.py); with --device cuda over NCCL, one GPU a process
    (then BUILD is a CUDA build of minisgd, which runs on the same GPUs);
  - scikit-learn's SGDClassifier (one process; its SGD takes one row per step, so its constant
    step is --sklearn-eta, not η).
The target loss is minisgd's final loss at one rank times (1 + --tolerance); every solver gets
up to --epochs-cap epochs to reach it, evaluated every --eval-every steps outside the timed
loop. Writes peers.json and peers.png; the ratios are minisgd's over each peer's, from the
same run. Installs nothing: needs Debian's python3-torch and python3-sklearn (the PyTorch peer
runs under the Python that runs this script, so a Python with a CUDA PyTorch serves a GPU).

  perf/studies/peers.py BUILD [--ranks 1 2] [--rows 65536] [--features 128] [--device cpu]
                        [--out-dir .]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from minisgd_runs import ENV, ROOT, run_report

TORCH = os.path.join(ROOT, "perf", "peers", "torch_ddp_target.py")
HOOKS = ["none", "fp16", "bf16", "powersgd"]


def write_problem(tmp, m, d, seed):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((m, d)) / np.sqrt(d)).astype(np.float32)
    w_star = rng.standard_normal(d) * 2.0
    y = np.where(rng.random(m) < 1 / (1 + np.exp(-(X.astype(np.float64) @ w_star))), 1.0, -1.0)
    np.savez(os.path.join(tmp, "rows.npz"), X=X, y=y)
    with open(os.path.join(tmp, "rows.libsvm"), "w") as f:
        for row, label in zip(X, y):
            f.write(f"{int(label)} " + " ".join(f"{j + 1}:{v:.9g}" for j, v in enumerate(row)) + "\n")
    return X.astype(np.float64), y


def deck(tmp, a):
    text = (f"run: {{seed: 1}}\n"
            f"data: {{source: libsvm, path: {tmp}/rows.libsvm, features: {a.features}}}\n"
            f"model: {{loss: logistic, l2: {a.l2}}}\n"
            f"solver: {{method: sgd, decomposition: row, batch_size: {a.batch}, "
            f"step_size: {{eta0: {a.eta}, schedule: constant}}, epochs: 1, "
            f"eval_every: {a.eval_every}}}\n"
            f"precision: {{preset: fp32}}\n")
    path = os.path.join(tmp, "deck.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def minisgd(build, path, P, tmp, epochs, target=None):
    sets = [f"solver.epochs={epochs:g}"]
    if target is not None:
        sets += [f"validation.reference_loss={target:.17g}", "validation.tolerance=1e-12"]
    r = run_report(build, path, P, sets, os.path.join(tmp, "r.json"), invalid_ok=True)["result"]
    return {"peer": "minisgd", "ranks": P, "samples_per_s": r["samples_per_s"],
            "final_loss": r["final_loss"],
            "time_to_target_s": (r.get("time_to_target") or {}).get("seconds")}


def torch_ddp(tmp, P, hook, a, target):
    """The peer's JSON line, or the error it stopped with (torch 1.13's bf16 hook needs NCCL)."""
    out = subprocess.run([sys.executable, TORCH, os.path.join(tmp, "rows.npz"), "--ranks",
                          str(P), "--hook", hook, "--batch", str(a.batch), "--eta", str(a.eta),
                          "--l2", str(a.l2), "--epochs", str(a.epochs_cap), "--eval-every",
                          str(a.eval_every), "--target", repr(target), "--device", a.device],
                         env=ENV, capture_output=True, text=True)
    if out.returncode != 0:
        why = [line for line in out.stderr.splitlines() if "Error" in line]
        return {"peer": f"torch-ddp-{'nccl' if a.device == 'cuda' else 'gloo'}", "hook": hook,
                "ranks": P, "error": why[-1] if why else out.stderr[-300:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def sklearn(X, y, a, target):
    from sklearn.linear_model import SGDClassifier
    clf = SGDClassifier(loss="log_loss", alpha=a.l2, learning_rate="constant", eta0=a.sklearn_eta,
                        fit_intercept=False, shuffle=False, random_state=1)
    seconds, reached, loss = 0.0, None, None
    for epoch in range(int(a.epochs_cap)):
        start = time.perf_counter()
        clf.partial_fit(X, y, classes=[-1.0, 1.0])
        seconds += time.perf_counter() - start
        w = clf.coef_.ravel()
        loss = float(np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.5 * a.l2 * (w @ w))
        if reached is None and loss <= target:
            reached = seconds
    return {"peer": "sklearn-sgd", "ranks": 1, "samples_per_s": len(y) * (epoch + 1) / seconds,
            "final_loss": loss, "time_to_target_s": reached}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rows", type=int, default=65536)
    ap.add_argument("--features", type=int, default=128)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--eta", type=float, default=1.0)
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--sklearn-eta", type=float, default=0.05,
                    help="scikit-learn's constant step (one row per step: b times smaller)")
    ap.add_argument("--eval-every", type=int, default=32)
    ap.add_argument("--tolerance", type=float, default=0.002)
    ap.add_argument("--epochs-cap", type=float, default=3)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="where the PyTorch peer runs (cuda: NCCL, one GPU a process)")
    ap.add_argument("--out-dir", default=".")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        X, y = write_problem(tmp, a.rows, a.features, 7)
        path = deck(tmp, a)
        target = minisgd(a.build, path, 1, tmp, 1)["final_loss"] * (1 + a.tolerance)
        print(f"target loss {target:.8f} (minisgd's one-epoch loss at P = 1, +{a.tolerance:g})")
        for P in a.ranks:
            rows.append(minisgd(a.build, path, P, tmp, a.epochs_cap, target))
            for hook in HOOKS:
                rows.append(torch_ddp(tmp, P, hook, a, target))
        rows.append(sklearn(X, y, a, target))
    for r in rows:
        if "error" in r:
            print(f"{r['peer']:14s} {r['hook']:9s} P={r['ranks']}  not run: {r['error']}")
            continue
        mine = next(x for x in rows if x["peer"] == "minisgd" and x["ranks"] == r["ranks"]) \
            if r["peer"] != "sklearn-sgd" else rows[0]
        r["minisgd_rate_ratio"] = mine["samples_per_s"] / r["samples_per_s"]
        tt, mt = r["time_to_target_s"], mine["time_to_target_s"]
        r["minisgd_time_ratio"] = tt / mt if tt and mt else None
        print(f"{r['peer']:14s} {r.get('hook', ''):9s} P={r['ranks']}  {r['samples_per_s']:.3e} "
              f"samples/s  time to target {tt if tt is None else f'{tt:.4f} s':>10}  "
              f"minisgd faster by {r['minisgd_rate_ratio']:.2f}x (rate), "
              f"{r['minisgd_time_ratio'] and round(r['minisgd_time_ratio'], 2)}x (time)", flush=True)
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "peers.json"), "w") as f:
        json.dump({"shape": vars(a), "target_loss": target, "rows": rows}, f, indent=1)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in rows if "error" not in r]
    labels = [f"{r['peer']}{'/' + r['hook'] if 'hook' in r else ''}\nP={r['ranks']}" for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    axes[0].bar(range(len(rows)), [r["samples_per_s"] for r in rows])
    axes[0].set_ylabel("samples/s")
    axes[1].bar(range(len(rows)), [r["time_to_target_s"] or 0 for r in rows])
    axes[1].set_ylabel(f"seconds to loss {target:.5f} (0: not reached)")
    for ax in axes:
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(labels, rotation=70, fontsize=7)
        ax.set_yscale("log")
    fig.suptitle(f"logistic, {a.rows} x {a.features} fp32, batch {a.batch}, eta {a.eta}, "
                 f"{'one GPU a process' if a.device == 'cuda' else 'CPU'}")
    fig.tight_layout()
    fig.savefig(os.path.join(a.out_dir, "peers.png"), dpi=120)


if __name__ == "__main__":
    main()
