#!/usr/bin/python3
"""How close minisgd's untuned defaults and scikit-learn's best-tuned averaged SGD get to the
optimum in the same epochs (perf/peers/compare_sklearn.sh; figures: docs/convergence.md).

Every real set the repository uses: LIBLINEAR's heart_scale and scikit-learn's bundled
breast_cancer, digits (0-4 against 5-9) and diabetes, each standardized here (a constant column
stays 0). Logistic regression on the three with classes, least squares on all four (the classes
as ±1 targets; diabetes' target standardized). Then minisgd's three synthetic kinds, drawn
here (20 000 x 32): synth (logistic), linear-synth (least squares) and poisson-synth (Poisson
regression, minisgd alone against F*). Both sides minimize

    F(w, β) = (1/m) Σ ℓ(x_i·w + β, y_i) + (λ/2)‖w‖²

with an unregularized intercept β: scikit-learn's fit_intercept=True, minisgd's
model.intercept: unregularized. F* comes from Newton's method in FP64 to a gradient below 1e-13
(d ≤ 65: each step is an exact solve), the gap is (F − F*)/F*, a mean over --seeds shuffles with
its standard error.

minisgd runs as a user would without tuning: solver.step_size: auto (the probe picks η₀; the
schedule and averaging are its defaults), at batch 1 and at --batch (16), FP64, nothing else
set but the problem, the epochs and run.seed. scikit-learn gets its best: SGDClassifier /
SGDRegressor with average=True, shuffle=True, at each of its four schedules, "optimal" (its
own first step) and "constant", "invscaling" and "adaptive" at η₀ in {1, 0.1, 0.01, 0.001}
(tol=None but for adaptive, whose step falls on tol), the least mean gap of those 13 per cell.
Its SGD takes one row a step; minisgd at batch b takes b rows a step, b times fewer steps in the
same epochs.

Verdict per cell and batch: "ok" when minisgd's mean gap ≤ 1.1 × scikit-learn's best + 1e-4,
"FAIL" otherwise (exit status 1).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_svmlight_file
from sklearn.linear_model import SGDClassifier, SGDRegressor


def synthetic(kind, rows=20000, features=32):
    """minisgd's planted models (docs/input_deck.md, data.synthetic): features N(0, 1), a true
    w* with x·w* of standard deviation 2 (logistic), 1 (linear, noise 0.5) or 0.5 (Poisson)."""
    rng = np.random.RandomState(7)
    x = rng.standard_normal((rows, features))
    w = rng.standard_normal(features)
    z = x @ (w / np.linalg.norm(w))
    if kind == "synth":
        y = np.where(rng.random_sample(rows) < 1 / (1 + np.exp(-2 * z)), 1.0, -1.0)
    elif kind == "linear-synth":
        y = z + 0.5 * rng.standard_normal(rows)
    else:
        y = rng.poisson(np.exp(0.5 * z)).astype(float)
    return x, y


def problems(heart_scale):
    """(name, loss, features, targets) of every set and loss compared: the real sets, then
    minisgd's synthetic kinds (Poisson: minisgd alone, scikit-learn's SGD has no such loss)."""
    x, y = load_svmlight_file(heart_scale)
    sets = [("heart_scale", x.toarray(), y, ("logistic", "linear"))]
    d = load_breast_cancer()
    sets.append(("breast_cancer", d.data, np.where(d.target == 1, 1.0, -1.0),
                 ("logistic", "linear")))
    d = load_digits()  # several pixel columns are constant
    sets.append(("digits", d.data, np.where(d.target >= 5, 1.0, -1.0), ("logistic", "linear")))
    d = load_diabetes()
    sets.append(("diabetes", d.data, (d.target - d.target.mean()) / d.target.std(), ("linear",)))
    for kind, loss in (("synth", "logistic"), ("linear-synth", "linear"),
                       ("poisson-synth", "poisson")):
        sets.append((kind, *synthetic(kind), (loss,)))
    for name, x, y, losses in sets:
        mean, std = x.mean(axis=0), x.std(axis=0)
        z = (x - mean) / np.where(std > 0, std, 1.0)
        for loss in losses:
            yield name, loss, z, y


def objective(loss, x, y, w, lam):
    """F at w = (weights, intercept) and its gradient and curvature weights."""
    z = x @ w[:-1] + w[-1]
    if loss == "logistic":
        yz = y * z
        f = np.mean(np.logaddexp(0.0, -yz))
        u = -y * np.exp(-np.logaddexp(0.0, yz))
        h = np.exp(-np.logaddexp(0.0, yz) - np.logaddexp(0.0, -yz))
    elif loss == "poisson":
        ez = np.exp(z)
        f = np.mean(ez - y * z)
        u, h = ez - y, ez
    else:
        f = np.mean(0.5 * (z - y) ** 2)
        u, h = z - y, np.ones_like(z)
    reg = np.r_[w[:-1], 0.0]
    g = np.r_[x.T @ u, u.sum()] / len(y) + lam * reg
    return f + 0.5 * lam * (w[:-1] @ w[:-1]), g, h


def optimum(loss, x, y, lam):
    """F* by Newton's method with backtracking."""
    xo = np.hstack([x, np.ones((len(y), 1))])
    w = np.zeros(xo.shape[1])
    for _ in range(200):
        f, g, h = objective(loss, x, y, w, lam)
        if np.abs(g).max() < 1e-13:
            break
        hess = (xo.T * h) @ xo / len(y) + lam * np.diag(np.r_[np.ones(x.shape[1]), 0.0])
        step = np.linalg.solve(hess + 1e-14 * np.eye(len(w)), g)
        t = 1.0
        while objective(loss, x, y, w - t * step, lam)[0] > f - 1e-4 * t * (g @ step) and t > 1e-10:
            t *= 0.5
        w = w - t * step
    return objective(loss, x, y, w, lam)[0]


def write_libsvm(path, x, y):
    with open(path, "w") as f:
        for row, label in zip(x, y):
            items = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{label:.17g} {items}\n")


def minisgd(exe, deck, path, loss, lam, epochs, batch, seed, work):
    """Final objective and chosen η₀ of minisgd's defaults with step_size: auto."""
    report = os.path.join(work, "report.json")
    args = [exe, deck, "--set", "data.source=libsvm", "--set", f"data.path={path}",
            "--set", "data.cache=false", "--set", f"model.loss={loss}",
            "--set", f"model.l2={lam}", "--set", "model.intercept=unregularized",
            "--set", f"solver.batch_size={batch}", "--set", f"solver.epochs={epochs}",
            "--set", "solver.step_size=auto", "--set", f"run.seed={seed}",
            "--set", "precision.preset=fp64", "--set", f"output.report={report}"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"minisgd failed ({out.returncode}): {out.stdout}{out.stderr}")
    with open(report) as f:
        r = json.load(f)
    return r["result"]["final_loss"], r["step_size_auto"]["eta0"]


def sklearn_grid(loss, x, y, lam, epochs, seeds, fstar):
    """Mean gap of each of scikit-learn's 13 settings."""
    grid = [("optimal", 0.01)] + [(r, e) for r in ("constant", "invscaling", "adaptive")
                                  for e in (1.0, 0.1, 0.01, 0.001)]
    gaps = {}
    for rate, eta0 in grid:
        g = []
        for seed in range(seeds):
            kw = dict(alpha=lam, penalty="l2", fit_intercept=True, average=True,
                      max_iter=epochs, tol=1e-3 if rate == "adaptive" else None, shuffle=True,
                      learning_rate=rate, eta0=eta0, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # divergence and max_iter warnings
                m = (SGDClassifier(loss="log_loss", **kw) if loss == "logistic" else
                     SGDRegressor(loss="squared_error", **kw)).fit(x, y)
            w = np.r_[m.coef_.ravel(), m.intercept_.ravel()]
            f = objective(loss, x, y, w, lam)[0] if np.all(np.isfinite(w)) else np.inf
            g.append(f / fstar - 1 if np.isfinite(f) else np.inf)
        gaps[f"{rate} {eta0:g}" if rate != "optimal" else "optimal"] = mean_sem(g)
    return gaps


def mean_sem(gaps):
    """Mean and standard error of the mean over the shuffles."""
    g = np.asarray(gaps, dtype=float)
    if not np.all(np.isfinite(g)):
        return np.inf, 0.0
    return float(g.mean()), float(g.std(ddof=1) / np.sqrt(len(g))) if len(g) > 1 else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--heart-scale", default="/usr/share/doc/liblinear-tools/examples/heart_scale")
    ap.add_argument("--data", nargs="+", default=["heart_scale", "breast_cancer", "digits",
                                                   "diabetes", "synth", "linear-synth",
                                                   "poisson-synth"])
    ap.add_argument("--loss", nargs="+", default=["logistic", "linear", "poisson"])
    ap.add_argument("--epochs", type=int, nargs="+", default=[5, 20, 60])
    ap.add_argument("--l2", type=float, nargs="+", default=[1e-4, 1e-3])
    ap.add_argument("--batch", type=int, default=16, help="minisgd's mini-batch besides 1")
    ap.add_argument("--seeds", type=int, default=10)
    a = ap.parse_args()
    print(f"{'data':13} {'loss':8} {'l2':>6} {'ep':>3} {'F*':>10} {'sk best':>18} {'(setting)':15}"
          f" {'mini b=1':>18} {'eta0':>7} {'mini b=' + str(a.batch):>18} {'eta0':>7}  verdict")
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        deck = os.path.join(work, "deck.yaml")
        with open(deck, "w") as f:  # every key from --set, the rest minisgd's defaults
            f.write("{}\n")  # (an empty file is refused: no YAML document)
        for name, loss, x, y in problems(a.heart_scale):
            if name not in a.data or loss not in a.loss:
                continue
            path = os.path.join(work, f"{name}-{loss}.libsvm")
            write_libsvm(path, x, y)
            for lam in a.l2:
                fstar = optimum(loss, x, y, lam)
                for epochs in a.epochs:
                    if loss == "poisson":
                        sk, sk_key = {"-": (np.nan, np.nan)}, "-"
                    else:
                        sk = sklearn_grid(loss, x, y, lam, epochs, a.seeds, fstar)
                        sk_key = min(sk, key=lambda k: sk[k][0])
                    best = sk[sk_key]
                    cells, verdicts = [], []
                    for b in (1, a.batch):
                        runs = [minisgd(a.exe, deck, path, loss, lam, epochs, b, seed + 1, work)
                                for seed in range(a.seeds)]
                        gap = mean_sem([f / fstar - 1 for f, _ in runs])
                        eta0 = float(np.exp(np.mean(np.log([e for _, e in runs]))))
                        ok = loss == "poisson" or gap[0] <= 1.1 * best[0] + 1e-4
                        failed += not ok
                        verdicts.append("-" if loss == "poisson" else "ok" if ok else "FAIL")
                        cells.append(f"{gap[0]:10.3e}±{gap[1]:.1e} {eta0:7.3g}")
                    peer = (f"{'-':>18} {'':15}" if loss == "poisson" else
                            f"{best[0]:10.3e}±{best[1]:.1e} {'(' + sk_key + ')':15}")
                    print(f"{name:13} {loss:8} {lam:6.0e} {epochs:3d} {fstar:10.8f} {peer} "
                          + " ".join(cells) + "  " + "/".join(verdicts), flush=True)
    print(f"{failed} case(s) where minisgd's defaults end farther from the optimum than "
          "1.1 x scikit-learn's best + 1e-4")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
