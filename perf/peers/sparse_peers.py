#!/usr/bin/python3
"""minisgd against scikit-learn's SGDClassifier and LIBLINEAR on the same sparse rows.

One LIBSVM file (e.g. from perf/make_libsvm OUT ROWS FEATURES NNZ), L2-regularized logistic
regression F(w) = (1/m) sum log(1 + exp(-y x.w)) + (lam/2)|w|^2, batch 1, a constant step,
no intercept, one rank, one thread each:
- minisgd (data.layout: sparse, solver.batch_size: --batch, default 1, with η = --eta times the
  batch, so that a step of b rows moves w as b steps of one): samples/s of training, and the
  training seconds until F first reaches the target, read off its history (one row an epoch);
- SGDClassifier(loss="log_loss", alpha=lam, learning_rate="constant", the same eta0 and
  epochs, shuffle=True, average=False): the update w <- (1 - eta lam) w - eta l'(x.w) x that
  minisgd takes at b = 1, on the CSR matrix load_svmlight_file gives; its samples/s, and the
  time of the first epoch count whose F is at or below the target;
- LIBLINEAR (liblinear-train -s 0, C = 1/(lam m), -e EPS): the seconds its solver takes and
  the F of its weights, beside them (a second-order solver, not SGD).
The target is the F that SGDClassifier reaches after the last epoch (the worse of the two SGD
finals when minisgd's is worse). Prints one table; never run in CI.

Usage: perf/peers/sparse_peers.py --exe build/native/src/minisgd --file F [--epochs 5]
       [--eta 0.1] [--lam 1e-5] [--batch 1] [--eta-minisgd E]
"""
import argparse
import csv
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import scipy.sparse
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier


def objective(X, y, w, lam):
    z = y * (X @ w)
    return float(np.mean(np.logaddexp(0.0, -z)) + 0.5 * lam * np.dot(w, w))


def run_minisgd(args, d, workdir):
    deck = os.path.join(workdir, "deck.yaml")
    report, history = os.path.join(workdir, "r.json"), os.path.join(workdir, "h.csv")
    with open(deck, "w") as f:
        f.write(f"""run: {{name: sparse-peers, seed: 1}}
data: {{source: libsvm, path: {args.file}, features: {d}, layout: sparse, cache: false}}
model: {{loss: logistic, l2: {args.lam}}}
solver: {{method: sgd, batch_size: {args.batch}, epochs: {args.epochs}, step_size: {args.eta_minisgd},
          reshuffle: true}}
precision: {{preset: fp64}}
output: {{report: {report}, history: {history}, weights: ""}}
""")
    env = dict(os.environ, KOKKOS_NUM_THREADS="1")
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    subprocess.run([args.exe, deck], env=env, stdout=subprocess.DEVNULL, check=False)
    rep = json.load(open(report))
    rows = [r for r in csv.DictReader(open(history))]
    return rep, [(int(r["iteration"]), float(r["loss"]), float(r["train_seconds"])) for r in rows]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--exe", required=True)
    p.add_argument("--file", required=True)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--eta", type=float, default=0.1)
    p.add_argument("--lam", type=float, default=1e-5)
    p.add_argument("--eps", type=float, default=0.01)
    p.add_argument("--batch", type=int, default=1, help="minisgd's batch size (scikit-learn: 1)")
    p.add_argument("--eta-minisgd", type=float, default=None,
                   help="minisgd's step size (default --eta times --batch)")
    args = p.parse_args()
    if args.eta_minisgd is None:
        args.eta_minisgd = args.eta * args.batch

    X, y = load_svmlight_file(args.file, dtype=np.float64)
    X = scipy.sparse.csr_matrix(X)
    m, d = X.shape
    y = np.where(y > 0, 1.0, -1.0)

    # scikit-learn, one epoch at a time (warm start keeps w and its step count).
    sk = SGDClassifier(loss="log_loss", penalty="l2", alpha=args.lam, learning_rate="constant",
                       eta0=args.eta, max_iter=1, tol=None, shuffle=True, average=False,
                       fit_intercept=False, warm_start=True, random_state=1)
    sk_t, sk_curve = 0.0, []
    for _ in range(args.epochs):
        t0 = time.perf_counter()
        sk.partial_fit(X, y, classes=[-1.0, 1.0])
        sk_t += time.perf_counter() - t0
        sk_curve.append((objective(X, y, sk.coef_.ravel(), args.lam), sk_t))

    with tempfile.TemporaryDirectory() as work:
        rep, curve = run_minisgd(args, d, work)
        # LIBLINEAR: C = 1/(lam m) minimizes the same F (times lam m).
        model = os.path.join(work, "ll.model")
        t0 = time.perf_counter()
        subprocess.run(["liblinear-train", "-s", "0", "-B", "-1", "-c", str(1.0 / (args.lam * m)),
                        "-e", str(args.eps), args.file, model], stdout=subprocess.DEVNULL,
                       check=True)
        ll_t = time.perf_counter() - t0
        lines = open(model).read().split("\n")
        w_ll = np.array([float(v) for v in lines[lines.index("w") + 1:] if v.strip()])
        if open(model).read().find("label -1 1") >= 0:
            w_ll = -w_ll
        w_ll = np.pad(w_ll, (0, d - len(w_ll)))[:d]
    ll_f = objective(X, y, w_ll, args.lam)

    ms_final = curve[-1][1]
    target = max(sk_curve[-1][0], ms_final)
    ms_hit = next((t for it, f, t in curve if it > 0 and f <= target), None)
    sk_hit = next((t for f, t in sk_curve if f <= target), None)
    ms_rate = rep["result"]["samples_per_s"]
    sk_rate = m * args.epochs / sk_t
    print(f"file {args.file}: {m} rows x {d} features, {X.nnz} nonzeros "
          f"({X.nnz / m:.1f} per row); lam {args.lam}, {args.epochs} epochs; scikit-learn b = 1, "
          f"eta {args.eta}; minisgd b = {args.batch}, eta {args.eta_minisgd}")
    print(f"target F = {target:.8f}")
    print(f"{'peer':<28} {'samples/s':>12} {'final F':>12} {'s to target':>12}")
    print(f"{'minisgd (sparse, fp64, b=%d)' % args.batch:<28} {ms_rate:12.4g} {ms_final:12.8f} "
          f"{ms_hit if ms_hit is not None else float('nan'):12.3f}")
    print(f"{'scikit-learn SGDClassifier':<28} {sk_rate:12.4g} {sk_curve[-1][0]:12.8f} "
          f"{sk_hit if sk_hit is not None else float('nan'):12.3f}")
    print(f"{'LIBLINEAR -s 0':<28} {'':>12} {ll_f:12.8f} {ll_t:12.3f}  (solver, whole run)")
    print(f"minisgd / scikit-learn: {ms_rate / sk_rate:.2f}x samples/s"
          + (f", {sk_hit / ms_hit:.2f}x time to target" if ms_hit and sk_hit else ""))


if __name__ == "__main__":
    main()
