#!/usr/bin/python3
# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
"""Summarize many minisgd JSON reports: a table and loss-vs-time, speedup and scaling plots.

    perf/summary.py results/**/*.json [--baseline REPORT.json] [--plots DIR] [--worksheet DIR]
    perf/summary.py --compare A.json B.json


Runs are grouped by deck (run.name), machine (host and Kokkos execution space, so two builds
on one host are two machines) and P (ranks). The table gives, per run, the FOM (training
samples/s), the time to target (where the report has it), VALID, the relative loss gap to
the deck's reference, the speedup against the smallest P of the same deck and machine, and,
with --baseline, the FOM ratio against that one run (a porting study: the same deck on
another build or machine). Several reports of one (deck, machine, P) are repetitions: the
table shows the median FOM (the repeats rule, docs/procurement.md, section 10), the count and
the lowest and highest FOM.

With --worksheet REFERENCE_DIR it also prints the worksheet of the minisgd score: per system
(machine) and class, the geometric mean over the class's decks of the FOM at the system's best P
over the reference machine's (perf/results/reference/<machine>/), and the same of the times to
target (reference / system: higher is better).

With --plots DIR it writes loss_vs_time.png (from the CSV histories the reports name, where
they can be found), speedup.png and scaling.png. Uses Debian's matplotlib (python3-matplotlib).

--compare is the porting-study check: the same deck run on two builds or machines. It prints
both provenances side by side ('*' where they differ: compiler, flags, Kokkos version, backends
and architecture, BLAS, MPI, GPU, nodes, ranks per node, threads per rank), the keys where the two resolved decks differ (only the implementation choices
the run rules allow may differ, docs/procurement.md), both verdicts, and whether the two final
losses agree within the deck's tolerance; it exits 0 when they do and the decks agree.
"""
import argparse
import collections
import csv
import json
import math
import pathlib
import statistics
import sys
import textwrap

Run = collections.namedtuple("Run", "path deck machine ranks fom ttt valid gap loss ref time history")


def load(path):
    r = json.loads(path.read_text())
    res = r["result"]
    ref = res.get("reference_loss")
    gap = abs(res["final_loss"] - ref) / abs(ref) if ref else math.nan
    machine = f"{r.get('host', '?')}/{r['kokkos']['default_execution_space']}"
    ttt = r["fom"].get("time_to_target_s")  # absent before the time-to-target FOM, null unreached
    return Run(path, r["deck"]["run"]["name"], machine, r["ranks"], r["fom"]["value"], ttt,
               res["valid"], gap, res["final_loss"], ref, res["train_time_s"],
               find_history(path, r["deck"].get("output", {}).get("history", "")))


def find_history(report, history):
    """The CSV as written (relative to where the run started), else beside the report."""
    if not history:
        return None
    for p in (pathlib.Path(history), report.parent / pathlib.Path(history).name):
        if p.is_file():
            return p
    return None


Group = collections.namedtuple("Group", "run count lowest highest")


def median_runs(runs):
    """One entry per (deck, machine, P), the repeats rule (docs/procurement.md, section 10):
    the median FOM and median time to target of the repetitions (a run carrying them, with the
    verdict VALID only when every repetition is), their count, and the lowest and highest FOM."""
    groups = collections.defaultdict(list)
    for r in runs:
        groups[(r.deck, r.machine, r.ranks)].append(r)
    out = {}
    for k, v in sorted(groups.items()):
        v.sort(key=lambda r: r.fom)
        reached = [r.ttt for r in v if r.ttt is not None]
        mid = v[(len(v) - 1) // 2]  # stands for the group: history, loss gap
        run = mid._replace(fom=statistics.median(r.fom for r in v),
                           ttt=statistics.median(reached) if len(reached) == len(v) else None,
                           valid=all(r.valid for r in v))
        out[k] = Group(run, len(v), v[0].fom, v[-1].fom)
    return out


def table(best, baseline):
    p_min = {}
    for (deck, machine, ranks), (run, *_) in best.items():
        p_min.setdefault((deck, machine), run)  # sorted: smallest P first
    head = ["deck", "machine", "P", "FOM samples/s", "time to target s", "verdict", "loss gap", "speedup vs Pmin"]
    if baseline:
        head.append(f"vs {baseline.deck}@{baseline.machine} P={baseline.ranks}")
    rows = []
    for (deck, machine, ranks), (run, n, lo, hi) in best.items():
        first = p_min[(deck, machine)]
        row = [deck, machine, str(ranks),
               f"{run.fom:.4g}" + (f" (median of {n}, {lo:.4g}-{hi:.4g})" if n > 1 else ""),
               "-" if run.ttt is None else f"{run.ttt:.4g}",
               "VALID" if run.valid else "INVALID",
               "-" if math.isnan(run.gap) else f"{run.gap:.2e}",
               f"{run.fom / first.fom:.2f} (P={first.ranks})"]
        if baseline:
            row.append(f"{run.fom / baseline.fom:.2f}")
        rows.append(row)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(r) for r in rows])


def read_history(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [float(r["train_seconds"]) for r in rows], [float(r["loss"]) for r in rows]


def plots(best, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    outdir.mkdir(parents=True, exist_ok=True)
    decks = sorted({k[0] for k in best})
    cols = min(4, len(decks))
    rows = math.ceil(len(decks) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, deck in zip(axes.flat, decks):
        for (d, machine, ranks), (run, *_) in best.items():
            if d != deck or not run.history:
                continue
            t, loss = read_history(run.history)
            ax.plot(t, loss, marker=".", label=f"{machine} P={ranks}")
            if run.ref:
                ax.axhline(run.ref, color="gray", lw=0.8, ls="--")
        ax.set(title=deck, xlabel="training s", ylabel="F(w)")
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(decks):]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(outdir / "loss_vs_time.png", dpi=110)
    plt.close(fig)

    series = collections.defaultdict(list)
    for (deck, machine, ranks), (run, *_) in best.items():
        series[(deck, machine)].append(run)
    for name, ylabel, value in (("speedup", "speedup vs smallest P", lambda r, s: r.fom / s[0].fom),
                                ("scaling", "FOM (training samples/s)", lambda r, s: r.fom)):
        fig, ax = plt.subplots(figsize=(7, 5))
        ps = sorted({k[2] for k in best})
        if name == "speedup":
            ax.plot(ps, [p / ps[0] for p in ps], "k:", label="ideal")
        for (deck, machine), s in series.items():
            ax.plot([r.ranks for r in s], [value(r, s) for r in s], marker="o",
                    label=f"{deck} ({machine})")
        ax.set(xscale="log", yscale="log", xlabel="MPI ranks P", ylabel=ylabel)
        ax.set_xticks(ps, [str(p) for p in ps])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.legend(fontsize=6, ncol=2)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(outdir / f"{name}.png", dpi=110)
        plt.close(fig)


# Deck keys a site may change (docs/procurement.md, section 2); every other key is the benchmark.
ALLOWED_DIFFERENCES = ("comm.backend", "comm.gpu_aware", "precision.gram_engine", "output.report",
                       "output.history", "output.weights",
                       "data.cache")


def flatten(tree, prefix=""):
    if not isinstance(tree, dict):
        return {prefix[:-1]: tree}
    flat = {}
    for k, v in tree.items():
        flat.update(flatten(v, f"{prefix}{k}."))
    return flat


def provenance(r):
    """(field, text) pairs of a report's provenance (docs/output.md); '?' where a report made
    before schema_version 1 lacks a field."""
    k, b, blas, mpi = (r.get(key) or {} for key in ("kokkos", "build", "blas", "mpi"))

    def span(x):
        if not isinstance(x, dict):
            return "?"
        return str(x["min"]) if x["min"] == x["max"] else f"{x['min']}-{x['max']}"

    gpu = r.get("gpu", "?")
    if isinstance(gpu, dict):
        gpu = (f"{gpu['model']} (sm {gpu['compute_capability']}), driver {gpu['driver_version']}, "
               f"CUDA {gpu['cuda_runtime_version']}")
    options = b.get("options")
    return [
        ("schema_version", str(r.get("schema_version", "none (before 1)"))),
        ("minisgd", f"{r.get('version', '?')} ({r.get('git_hash', '?')})"),
        ("compiler", r.get("compiler", "?")),
        ("build", f"{b['type']}: {b['cxx_flags']}" if b else "?"),
        ("options", " ".join(("+" if v else "~") + n for n, v in sorted(options.items()))
         if options else "?"),
        ("kokkos", f"{k.get('version', '?')} {'+'.join(k.get('backends', []))}, runs on "
                   f"{k.get('default_execution_space', '?')}, concurrency {k.get('concurrency', '?')}"),
        ("kokkos arch", (", ".join(k["arch"]) or "none") if "arch" in k else "?"),
        ("blas", f"{blas['vendor']}: {blas['detail']}" if blas else "?"),
        ("mpi", f"{mpi['library_version']} (MPI {mpi['standard']})" if mpi else "?"),
        ("gpu", "none" if gpu is None else gpu),
        ("ranks", str(r.get("ranks", "?"))),
        ("nodes", str(r.get("nodes", "?"))),
        ("ranks per node", span(r.get("ranks_per_node"))),
        ("threads per rank", span(r.get("threads_per_rank"))),
        ("host", r.get("host", "?")),
        ("date", r.get("date", "?")),
    ]


def side_by_side(a, b, width=46):
    """Both provenances in two columns; '*' marks the fields where they differ."""
    out = [f"  {'provenance':<16} {'A':<{width}}  B"]
    for (field, va), (_, vb) in zip(provenance(a), provenance(b)):
        ca, cb = (textwrap.wrap(v, width) or [""] for v in (va, vb))
        ca += [""] * (len(cb) - len(ca))
        cb += [""] * (len(ca) - len(cb))
        for i, (x, y) in enumerate(zip(ca, cb)):
            mark = "*" if i == 0 and va != vb else " "
            out.append(f"{mark} {field if i == 0 else '':<16} {x:<{width}}  {y}".rstrip())
    return "\n".join(out)


def compare(path_a, path_b):
    a, b = (json.loads(p.read_text()) for p in (path_a, path_b))
    print(f"A: {path_a}\nB: {path_b}")
    print(side_by_side(a, b))
    da, db = flatten(a["deck"]), flatten(b["deck"])
    differ = sorted(k for k in da.keys() | db.keys() if da.get(k) != db.get(k))
    forbidden = [k for k in differ if not k.startswith(ALLOWED_DIFFERENCES)]
    for k in differ:
        kind = "NOT ALLOWED" if k in forbidden else "allowed"
        print(f"deck differs ({kind}): {k}: A {da.get(k)!r}, B {db.get(k)!r}")
    ra, rb = a["result"], b["result"]
    tol = ra["tolerance"]
    gap = abs(ra["final_loss"] - rb["final_loss"]) / abs(rb["final_loss"])
    agree = gap <= tol
    for tag, r in (("A", ra), ("B", rb)):
        print(f"{tag}: {'VALID' if r['valid'] else 'INVALID'}: {r['verdict']}; "
              f"FOM {r['samples_per_s']:.4g} samples/s")
    print(f"final losses {ra['final_loss']:.8g} and {rb['final_loss']:.8g}: relative difference "
          f"{gap:.3g} {'<=' if agree else '>'} tolerance {tol:g}: {'AGREE' if agree else 'DISAGREE'}; "
          f"FOM A/B = {ra['samples_per_s'] / rb['samples_per_s']:.3g}")
    return 0 if agree and not forbidden else 1


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def worksheet(best, reference):
    """The minisgd score per system and class (docs/procurement.md, section 10): the geometric
    mean over the class's decks of FOM(system) / FOM(reference), each at its best P, and the
    same of reference / system time to target."""
    ref_machines = sorted({k[1] for k in reference})
    if len(ref_machines) != 1:
        sys.exit(f"--worksheet: the reference holds {len(ref_machines)} machines "
                 f"({', '.join(ref_machines)}); give the directory of one")

    def per_deck(groups):
        """(machine, deck) -> (FOM, its P, time to target, every run VALID): the highest median
        FOM over P (the layout is the site's choice) and the lowest median time to target."""
        by = collections.defaultdict(list)
        for (deck, machine, ranks), g in groups.items():
            by[(machine, deck)].append(g.run)
        out = {}
        for k, rs in by.items():
            top = max(rs, key=lambda r: r.fom)
            ttts = [r.ttt for r in rs if r.ttt is not None]
            out[k] = (top.fom, top.ranks, min(ttts) if ttts else None, all(r.valid for r in rs))
        return out

    ref = {deck: v for (_, deck), v in per_deck(reference).items()}
    sysd = per_deck(best)
    lines = [f"worksheet: minisgd score per system and class (docs/procurement.md, section 10)",
             f"reference machine: {ref_machines[0]}", ""]
    head = ["system", "class", "deck", "P", "FOM", "reference FOM", "ratio", "TTT ratio"]
    rows, scores = [], []
    classes = sorted({d.split("-", 1)[0] for d in ref})
    for machine in sorted({m for m, _ in sysd}):
        for cls in classes:
            decks = sorted(d for d in ref if d.split("-", 1)[0] == cls)
            have = [d for d in decks if (machine, d) in sysd]
            if not have:
                continue
            ratios, tratios, why = [], [], []
            for d in decks:
                if (machine, d) not in sysd:
                    why.append(f"{d} missing")
                    continue
                fom, ranks, ttt, valid = sysd[(machine, d)]
                rfom, _, rttt, _ = ref[d]
                if not valid:
                    why.append(f"{d} not VALID")
                ratios.append(fom / rfom)
                tr = rttt / ttt if ttt and rttt else None
                if tr:
                    tratios.append(tr)
                rows.append([machine, cls, d, str(ranks), f"{fom:.4g}", f"{rfom:.4g}",
                             f"{fom / rfom:.3f}", "-" if tr is None else f"{tr:.3f}"])
            score = "-" if why else f"{geomean(ratios):.3f}"
            tscore = f"{geomean(tratios):.3f}" if tratios and not why else "-"
            scores.append([machine, cls, f"{len(have)} of {len(decks)}", score, tscore,
                           "; ".join(why) or "every deck VALID"])
    widths = lambda hd, rs: [max(len(h), *(len(r[i]) for r in rs)) if rs else len(h)
                             for i, h in enumerate(hd)]
    fmt = lambda cells, w: "  ".join(c.ljust(x) for c, x in zip(cells, w)).rstrip()
    w = widths(head, rows)
    lines += [fmt(head, w), fmt(["-" * x for x in w], w)] + [fmt(r, w) for r in rows]
    shead = ["system", "class", "decks", "FOM score", "time-to-target score", "note"]
    w = widths(shead, scores)
    lines += ["", fmt(shead, w), fmt(["-" * x for x in w], w)] + [fmt(r, w) for r in scores]
    return "\n".join(lines)


def load_all(paths):
    runs = []
    for p in paths:
        try:
            runs.append(load(p))
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"{p}: not a minisgd report ({type(e).__name__}: {e})")
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="*", type=pathlib.Path, help="minisgd JSON reports")
    ap.add_argument("--compare", nargs=2, type=pathlib.Path, metavar=("A", "B"),
                    help="porting study: do two runs of one deck agree within its tolerance?")
    ap.add_argument("--baseline", type=pathlib.Path, help="the report every FOM is divided by")
    ap.add_argument("--plots", type=pathlib.Path, metavar="DIR", help="write the PNGs here")
    ap.add_argument("--worksheet", type=pathlib.Path, metavar="REFERENCE_DIR",
                    help="also print the minisgd score of each system and class against the "
                         "reference results in this directory (e.g. perf/results/reference/<machine>)")
    a = ap.parse_args()
    if a.compare:
        sys.exit(compare(*a.compare))
    if not a.reports:
        ap.error("no reports given")
    runs = load_all(a.reports)
    best = median_runs(runs)
    print(table(best, load(a.baseline) if a.baseline else None))
    invalid = sum(not g.run.valid for g in best.values())
    print(f"\n{len(runs)} report(s), {len(best)} (deck, machine, P) group(s), {invalid} INVALID")
    if a.worksheet:
        refs = sorted(a.worksheet.rglob("*.json"))
        if not refs:
            sys.exit(f"--worksheet: no reports in {a.worksheet}")
        print("\n" + worksheet(best, median_runs(load_all(refs))))
    if a.plots:
        plots(best, a.plots)
        print(f"plots: {a.plots}/loss_vs_time.png, speedup.png, scaling.png")


if __name__ == "__main__":
    main()
