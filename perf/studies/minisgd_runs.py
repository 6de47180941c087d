"""Running minisgd and perf/predict from the perf scripts (studies, model_check.py)."""
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_mpi_yield_when_idle="1")
for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # benchmark runs only
    ENV.pop(var, None)


def mpirun(P, *args, ok=(0,), env=None):
    """stdout of `mpirun -np P args` (extra environment `env`); exits with the command's stderr
    when its exit status is not in `ok`."""
    cmd = ["mpirun", "--oversubscribe", "-np", str(P), *args]
    done = subprocess.run(cmd, env=dict(ENV, **(env or {})), capture_output=True, text=True)
    if done.returncode not in ok:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def calibration(build, P, clock="wall"):
    """One perf/calibrate at P ranks (kernels on the `clock` given): its machine file's text."""
    return mpirun(P, os.path.join(build, "perf", "calibrate"), f"this-np{P}", "--clock", clock)


def combined(texts, P, folder, fast_state=True):
    """Calibrations of one machine at P ranks combined into one machine file in folder; returns
    its path. The network section of the one with the fastest 1 MiB AllReduce (at P > 1), and
    each other figure (memory, kernels, host) the median over the calibrations in the machine's
    fast state: those whose SGD loop (host.sgd_step_us, measured directly) is within 15% of the
    fastest one's (fast_state False: over all of them, for a check that compares medians of
    runs, which mix the states as such a median does). On this VM a process is fast or slow for
    its whole life (the same 1 MiB AllReduce took 125 and 580-715 us in calibrations seconds
    apart; four one-rank calibrations in a row gave an SGD loop of 0.72, 0.74, 1.01 and 0.97
    us, CA-SGD's inner step 1.5-1.6 and 2.1 us), the network and the kernels independently, and
    a fitted figure can be off alone in one process (CA-SGD's ca_row_ns: 23, 23, 24, 64 and 73
    ns in five calibrations minutes apart). The median of all of them mixed the two states,
    where the runs they predict are the least of several (the fast state): at one rank every
    prediction came out 4-73% slow. Whole files chosen by the AllReduce once kept a slow
    process's kernels (CA-SGD predicted 1.9x its measured time); chosen by the triad, one kept a
    ca_row_ns of 64 ns."""
    def bandwidth(text):
        return float(re.search(r"network: \{[^}]*?bandwidth_GBps: ([0-9.e+]+)", text).group(1))

    def loop_us(text):
        return float(re.search(r"sgd_step_us: ([0-9.e+-]+)", text).group(1))

    fastest = min(map(loop_us, texts))
    machine_text = median_figures(
        [t for t in texts if not fast_state or loop_us(t) <= 1.15 * fastest])
    if P > 1:
        machine_text = with_section(machine_text, "network", max(texts, key=bandwidth))
    machine = os.path.join(folder, f"this-np{P}.yaml")
    with open(machine, "w") as f:
        f.write(machine_text)
    return machine


def calibrate(build, P, folder, clock="wall", tries=3, fast_state=True):
    """`tries` calibrations at P ranks one after the other, combined (combined()): the machine
    file's path."""
    return combined([calibration(build, P, clock) for _ in range(tries)], P, folder, fast_state)


# a key (the compressors' names have hyphens: global-qsgd, not qsgd) and its number
NUMBER = re.compile(r"([\w-]+): (-?[0-9.]+(?:e[-+]?[0-9]+)?)(?=[,}\s])")
# a curve, `key: [[x, y], ...]` (over several lines), and one of its points
_NUM = r"-?[0-9.]+(?:e[-+]?[0-9]+)?"
CURVE = re.compile(r"([\w-]+): \[((?:\s*\[[^\[\]]*\],?)*\s*)\]")
POINT = re.compile(rf"\[\s*({_NUM}),\s*({_NUM})\s*\]")


def sections(text):
    """{top-level key: its lines} of a machine file, in order (comments and the lines before
    the first key under None)."""
    out, name = {}, None
    for line in text.splitlines(keepends=True):
        if line[:1] not in (" ", "", "#"):
            name = line.split(":", 1)[0]
        out.setdefault(name, []).append(line)
    return out


def median_figures(texts):
    """The first machine file with each `key: number` of its sections the median of that
    figure over all of them (the same key in the same section), and each point [x, y] of a
    curve `key: [[x, y], ...]` the median y of the files whose curve has that x."""
    parsed = [sections(t) for t in texts]
    out = []
    for name, lines in parsed[0].items():
        texts_of_section = ["".join(p.get(name, [])) for p in parsed]
        values = [{k: float(v) for k, v in NUMBER.findall(t)} for t in texts_of_section]
        curves = [{m.group(1): {float(x): float(y) for x, y in POINT.findall(m.group(2))}
                   for m in CURVE.finditer(t)} for t in texts_of_section]

        def median(m):
            key = m.group(1)
            xs = [v[key] for v in values if key in v]
            return f"{key}: {statistics.median(xs):.4g}"

        def curve_median(m):
            key = m.group(1)

            def point(p):
                x = float(p.group(1))
                ys = [c[key][x] for c in curves if x in c.get(key, {})]
                return f"[{p.group(1)}, {statistics.median(ys):.4g}]"
            return f"{key}: [{POINT.sub(point, m.group(2))}]"
        out.append(NUMBER.sub(median, CURVE.sub(curve_median, texts_of_section[0])))
    return "".join(out)


def with_section(text, key, donor):
    """text with its top-level `key:` section (the line that starts it and the indented lines
    after it) replaced by donor's."""
    ours, theirs = sections(text), sections(donor)
    if key not in ours or key not in theirs:
        raise SystemExit(f"calibrate: no `{key}:` section in perf/calibrate's output")
    ours[key] = theirs[key]
    return "".join(line for lines in ours.values() for line in lines)


def run_report(build, deck, P, sets, report, invalid_ok=False, env=None):
    """Runs a deck at P ranks with --set overrides; returns its JSON report. invalid_ok: an
    INVALID verdict (exit 1) is fine, as when a timing run changes the epochs."""
    mpirun(P, os.path.join(build, "src", "minisgd"), deck, "--set", f"output.report={report}",
           "--set", "output.history=", *[a for s in sets for a in ("--set", s)],
           ok=(0, 1) if invalid_ok else (0,), env=env)
    with open(report) as f:
        return json.load(f)


def seconds_per_step(report):
    """Wall seconds per step in a report's FOM window."""
    r = report["result"]
    return r["fom_time_s"] / max(r["fom_iterations"], 1)


def step_seconds(build, deck, P, sets, folder):
    """One timing run (an INVALID verdict is fine): its seconds per step, and its report."""
    r = run_report(build, deck, P, sets, os.path.join(folder, "r.json"), invalid_ok=True)
    return seconds_per_step(r), r


def least_in_rounds(jobs, repeats, run, before_round=None):
    """run(job) -> (seconds, report) for every job, `repeats` rounds over all of them; the least
    seconds of each job and its last report. Rounds rather than back-to-back repeats: a slow
    spell of the host then hits different jobs, not every repeat of one; the least is the
    statistic perf/calibrate keeps (the machine's speed when each rank has its core).
    before_round(), when given, runs at the start of each round (a calibration spread over the
    runs' time as they are)."""
    best, reports = [float("inf")] * len(jobs), [None] * len(jobs)
    for _ in range(repeats):
        if before_round:
            before_round()
        for k, job in enumerate(jobs):
            t, reports[k] = run(job)
            best[k] = min(best[k], t)
    return best, reports


def predict(build, deck, machine_file, P, features, sets=(), rows=0):
    """perf/predict's JSON for a deck on a machine file (rows: the training rows, for the rate
    of a pass over them; 0: from memory)."""
    out = subprocess.run([os.path.join(build, "perf", "predict"), deck, machine_file, "--ranks",
                          str(P), "--features", str(features), "--rows", str(rows),
                          *[a for s in sets for a in ("--set", s)]],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def machine_file(name):
    return os.path.join(ROOT, "perf", "machines", name + ".yaml")
