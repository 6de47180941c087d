#!/usr/bin/python3
"""Study: every gradient compressor at size, on real shaped links and under comm.emulate.

Time mode (default): the hashed click-log-shaped problem of input_decks/sparse/hashed-gtopk.yaml
at d = --features (default 2^22), --rows rows, --epochs epochs, P = --ranks, every method run
twice per round: on perf/net/links.sh's shaped TCP links (one network namespace per rank) and
in one process group under `comm.emulate` with the profile's nominal latency and rate. The
target is the dense method's final loss + 1%, the same for every method (measured first, at P
ranks, on no network). gTop-k runs without its density warm-up (k = density·d from the first
step). Each case's time is the least of --repeats rounds.

Bytes mode (--bytes): at P = --ranks (say 3) and d = 2^24, every method's bytes on the wire per
rank and step (links.sh's interface counters, headers included, two runs of --steps and
3·--steps steps differenced so set-up and warm-up traffic cancel) against the bytes the report
books (the bandwidth-optimal count for the method's payload: docs/compression.md, "Methods,
wire formats and exact bytes").

Root only (network namespaces). Writes links_at_size.json (or links_bytes.json) to --out-dir
and prints a Markdown table.

  perf/studies/links_at_size.py BUILD [--ranks 4] [--profile 1g] [--features 4194304]
                                [--rows 20000] [--epochs 2] [--repeats 2] [--out-dir .]
  perf/studies/links_at_size.py BUILD --bytes --ranks 3 --features 16777216
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from minisgd_runs import ENV, ROOT, least_in_rounds, run_report

DECK = os.path.join(ROOT, "input_decks", "sparse", "hashed-gtopk.yaml")
LINKS = os.path.join(ROOT, "perf", "net", "links.sh")
METHODS = ["none", "sparse", "cast", "topk", "gtopk", "qsgd", "global-qsgd", "aps", "loco"]
EXTRA = {"gtopk": ["compression.gtopk.warmup_epochs=0"]}
PROFILES = {"1g": (50.0, 0.125), "10g": (10.0, 1.25), "100g": (2.0, 12.5)}  # us, GB/s
WIRE = re.compile(r"links\.sh: wire bytes sent((?: r\d+ \d+)+)")


def problem_sets(features, rows, epochs):
    """The --set overrides that size the study's problem (the deck's d, rows and epochs)."""
    return [f"data.synthetic.features={features}", f"data.synthetic.rows={rows}",
            f"solver.epochs={epochs}"]


def add_problem_args(ap):
    """The problem's and the network's arguments, shared with perf/studies/headlines.py."""
    ap.add_argument("build")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--profile", choices=sorted(PROFILES), default="1g")
    ap.add_argument("--features", type=int, default=1 << 22)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--epochs", type=int, default=2)


def method_sets(method):
    """The --set overrides of one method (gTop-k without its density warm-up)."""
    return [f"compression.method={method}"] + EXTRA.get(method, [])


def on_links(build, P, profile, sets, report):
    """Runs the deck on shaped links; returns (report, [bytes each rank's link sent])."""
    cmd = [LINKS, "run", str(P), profile, "--", os.path.join(build, "src", "minisgd"), DECK,
           "--set", f"output.report={report}", "--set", "output.history=",
           *[a for s in sets for a in ("--set", s)]]
    done = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    wire = WIRE.search(done.stderr)
    sent = [int(x) for x in wire.group(1).split()[1::2]] if wire else []
    with open(report) as f:
        return json.load(f), sent


def time_mode(a, tmp):
    base = problem_sets(a.features, a.rows, a.epochs)
    report = os.path.join(tmp, "r.json")
    dense = run_report(a.build, DECK, a.ranks, base + ["compression.method=none"], report)
    ref = dense["result"]["final_loss"]
    base += [f"validation.reference_loss={ref:.9g}", "validation.tolerance=0.01"]
    lat, bw = PROFILES[a.profile]
    jobs = [(net, m) for m in METHODS for net in ("links", "emulate")]

    def run(job):
        net, m = job
        sets = base + method_sets(m)
        if net == "links":
            r, _ = on_links(a.build, a.ranks, a.profile, sets, report)
        else:
            sets += [f"comm.emulate.latency_us={lat:g}", f"comm.emulate.bandwidth_GBps={bw:g}"]
            r = run_report(a.build, DECK, a.ranks, sets, report, invalid_ok=True)
        ttt = r["result"].get("time_to_target") or {}
        return (ttt["seconds"] if ttt.get("reached") else float("inf")), r

    best, reports = least_in_rounds(jobs, a.repeats, run)
    # The shape perf/studies/links_model.py reads: a method's bytes and steps to target (the
    # links run's), then each network's times.
    rows = {}
    for (net, m), t, r in zip(jobs, best, reports):
        res = r["result"]
        row = rows.setdefault(m, {})
        if net == "links":
            row["bytes_per_step"] = (r.get("compression") or {}).get("bytes_per_step")
            row["iterations_to_target"] = (res.get("time_to_target") or {}).get("iteration")
        row[net] = {"step_ms": 1e3 * res["fom_time_s"] / max(res["fom_iterations"], 1),
                    "time_to_target_s": t if t < float("inf") else None,
                    "final_loss": res["final_loss"], "loss_gap": res["final_loss"] / ref - 1}
    out = {"date": time.strftime("%Y-%m-%d"),
           "command": " ".join(["perf/studies/links_at_size.py"] + sys.argv[1:]),
           "deck": os.path.relpath(DECK, ROOT), "ranks": a.ranks, "profile": a.profile,
           "features": a.features, "rows": a.rows, "epochs": a.epochs, "reference_loss": ref,
           "target": ref * 1.01, "methods": rows}

    def fmt(x, spec=".3g"):
        return "—" if x is None else format(x, spec)

    print(f"P = {a.ranks}, d = {a.features}, {a.profile}: target {ref * 1.01:.6f} "
          f"(dense final {ref:.6f} + 1%); least of {a.repeats} rounds\n")
    print("| method | bytes/step | emulate ms/step | emulate to target (s) | links ms/step "
          "| links to target (s) | links/emulate | vs dense (links) | vs sparse (links) | loss gap |")
    print("|---" * 10 + "|")
    d_links = rows["none"]["links"]["time_to_target_s"]
    s_links = rows["sparse"]["links"]["time_to_target_s"]
    for m in METHODS:
        e, l = rows[m]["emulate"], rows[m]["links"]
        lt, et = l["time_to_target_s"], e["time_to_target_s"]
        print(f"| {m} | {fmt(rows[m]['bytes_per_step'], '.4g')} | {e['step_ms']:.1f} | {fmt(et)} "
              f"| {l['step_ms']:.1f} | {fmt(lt)} | {fmt(lt / et if lt and et else None, '.2f')} "
              f"| {fmt(d_links / lt if lt and d_links else None, '.2f')}× "
              f"| {fmt(s_links / lt if lt and s_links else None, '.2f')}× | {l['loss_gap']:+.2%} |")
    return out


def bytes_mode(a, tmp):
    report = os.path.join(tmp, "r.json")
    base = [f"data.synthetic.features={a.features}", f"data.synthetic.rows={a.rows}"]
    out = {"ranks": a.ranks, "features": a.features, "methods": {}}
    print(f"P = {a.ranks}, d = {a.features}: bytes per rank and step (the most any rank sent)\n")
    print("| method | booked (optimum) | on the wire | wire/booked |")
    print("|---|---|---|---|")
    for m in a.methods:
        sent, booked = [], None
        for steps in (a.steps, 3 * a.steps):
            r, s = on_links(a.build, a.ranks, "none", base + [f"compression.method={m}",
                            f"solver.max_iters={steps}"] + EXTRA.get(m, []), report)
            sent.append(s)
            booked = r["compression"]["bytes_per_step"]
        wire = max((b - c) / (2 * a.steps) for b, c in zip(sent[1], sent[0]))
        out["methods"][m] = {"booked": booked, "wire": wire}
        print(f"| {m} | {booked:.4g} | {wire:.4g} | {wire / booked:.3f} |", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_problem_args(ap)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--bytes", action="store_true", help="wire bytes against booked bytes")
    ap.add_argument("--steps", type=int, default=5, help="--bytes: steps of the shorter run")
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=METHODS,
                    help="--bytes: the methods to measure")
    ap.add_argument("--out-dir", default=".")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("links_at_size.py: network namespaces need root")
    with tempfile.TemporaryDirectory() as tmp:
        out = bytes_mode(a, tmp) if a.bytes else time_mode(a, tmp)
    os.makedirs(a.out_dir, exist_ok=True)
    name = "links_bytes.json" if a.bytes else "links_at_size.json"
    with open(os.path.join(a.out_dir, name), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
