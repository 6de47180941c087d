#!/usr/bin/python3
# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
"""The statistical reference loss of a synthetic logistic deck (docs/procurement.md, section 5).

    perf/reference_loss.py DECK.yaml [--set key=value ...] [--json]

The synthetic generator (src/minisgd/data/synthetic.hpp) plants a model: the entries of X are
i.i.d., centred, of variance feature_scale^2 (a sum of four uniform bytes), and each label is
+1 with probability sigma(x.w*), for true weights w* drawn by Philox from run.seed. The
objective the program evaluates is the mean logistic loss over the m training rows plus
l2/2 |w|^2. As m grows it tends to the population objective

    G(w) = E[ log(1 + exp(-y x.w)) ] + l2/2 |w|^2,

whose minimizer lies along w* (x is isotropic): w = a w*. The margin z = x.w* is a sum of d
independent terms, normal to a very good approximation, with standard deviation
sigma_z = |w*| feature_scale computed here from the very w* the program draws. Then

    G(a) = E_z[ sig(z) l(a z) + (1 - sig(z)) l(-a z) ] + l2/2 a^2 |w*|^2,  l(t) = log(1 + e^-t)

is a one-dimensional integral (Gauss-Hermite, 200 nodes) minimized over a. G* = min G is the
loss every long enough training on enough rows approaches; the script prints it with the
standard error of a mean of m row losses at the optimum (the sampling spread of F over m rows).
It reads the deck's run.seed, data.synthetic.{kind,rows,features}, model.l2 and
model.intercept; only the kinds synth and epsilon-like (logistic labels) are modelled.
"""
import argparse
import json
import math
import pathlib
import sys

import numpy as np

M32 = 0xFFFFFFFF
SHAPES = {  # kind: rows, features, feature_scale, margin_std (src/minisgd/data/loader.cpp)
    "synth": (100000, 256, 1.0, 2.0),
    "epsilon-like": (400000, 2000, 1.0 / math.sqrt(2000.0), 2.0),
}
LEVEL_STD = 147.80054127  # sqrt(4 (256^2 - 1) / 12): std of an entry's integer level
LEVEL_VAR = 4 * (256 ** 2 - 1) / 12
WEIGHT_UNITS = 65536.0


def philox4x32(ctr, key):
    """Random123's Philox4x32-10."""
    c, k = list(ctr), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & M32, p1 & M32, ((p0 >> 32) ^ c[3] ^ k[1]) & M32, p0 & M32]
    return c


def true_weights(seed, d):
    """W_j of SyntheticGenerator::true_weight: w*_j = w_scale W_j / 2^16."""
    key = (seed & M32, (seed >> 32) & M32)
    out = np.empty(d)
    for j in range(d):
        r = philox4x32((j & M32, (j >> 32) & M32, 1, 1), key)
        u1 = (r[0] + 0.5) * 2.3283064365386963e-10
        u2 = (r[1] + 0.5) * 2.3283064365386963e-10
        out[j] = round(WEIGHT_UNITS * math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2))
    return out


def softplus_neg(t):
    """log(1 + e^-t), without overflow."""
    return np.maximum(-t, 0) + np.log1p(np.exp(-np.abs(t)))


def reference(seed, rows, d, scale, margin_std, l2):
    W = true_weights(seed, d)
    w_scale = margin_std / (scale * math.sqrt(d))
    unit = float(np.float32(scale / LEVEL_STD))  # the generator stores entries as floats
    wstar = W * w_scale / WEIGHT_UNITS
    sx = math.sqrt(LEVEL_VAR) * unit  # std of an entry
    sz = sx * float(np.linalg.norm(wstar))
    nodes, weights = np.polynomial.hermite_e.hermegauss(200)
    z, pz = sz * nodes, weights / weights.sum()
    p1 = 1.0 / (1.0 + np.exp(-z))
    wn2 = float(wstar @ wstar)

    def G(a):
        return float(pz @ (p1 * softplus_neg(a * z) + (1 - p1) * softplus_neg(-a * z))) + 0.5 * l2 * a * a * wn2

    lo, hi = 0.0, 2.0  # golden section: G is convex in a
    g = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if G(a) < G(b):
            hi = b
        else:
            lo = a
    a = (lo + hi) / 2
    loss = p1 * softplus_neg(a * z) + (1 - p1) * softplus_neg(-a * z)
    second = p1 * softplus_neg(a * z) ** 2 + (1 - p1) * softplus_neg(-a * z) ** 2
    var = float(pz @ second) - float(pz @ loss) ** 2
    return {"reference_loss": G(a), "scale_a": a, "margin_std": sz,
            "sampling_stderr": math.sqrt(var / rows), "rows": rows, "features": d}


def deck_value(deck, dotted, default=None):
    node = deck
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("deck", type=pathlib.Path)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="as minisgd's --set, for run.seed, data.synthetic.rows/features, model.l2")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args()
    import yaml  # Debian's python3-yaml

    deck = yaml.safe_load(a.deck.read_text())
    for kv in a.set:
        key, _, value = kv.partition("=")
        node = deck
        *head, last = key.split(".")
        for part in head:
            node = node.setdefault(part, {})
        node[last] = yaml.safe_load(value)
    kind = deck_value(deck, "data.synthetic.kind", "synth")
    if deck_value(deck, "data.source", "synthetic") != "synthetic" or kind not in SHAPES:
        sys.exit(f"{a.deck}: only synthetic decks of kind {', '.join(SHAPES)} are modelled")
    if deck_value(deck, "model.intercept", False) or deck_value(deck, "model.loss", "logistic") != "logistic":
        sys.exit(f"{a.deck}: only logistic decks without an intercept are modelled")
    rows0, d0, scale, margin = SHAPES[kind]
    rows = int(deck_value(deck, "data.synthetic.rows", 0) or rows0)
    d = int(deck_value(deck, "data.synthetic.features", 0) or d0)
    r = reference(int(deck_value(deck, "run.seed", 42)), rows, d, scale, margin,
                  float(deck_value(deck, "model.l2", 0.0)))
    if a.json:
        print(json.dumps(r))
    else:
        print(f"{a.deck}: {kind} {rows} x {d}: population reference loss {r['reference_loss']:.8f} "
              f"(margin std {r['margin_std']:.4f}, optimum {r['scale_a']:.4f} w*, "
              f"sampling std error over {rows} rows {r['sampling_stderr']:.2e})")


if __name__ == "__main__":
    main()
