"""Running minisgd and perf/predict from the perf scripts (studies, model_check.py)."""
import json
import os
import re
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


def calibrate(build, P, folder, clock="wall", tries=3):
    """perf/calibrate at P ranks (kernels on the `clock` given), written as a machine file in
    folder; returns its path. Of `tries` calibrations, the network section of the one with the
    fastest 1 MiB AllReduce (at P > 1) and every other section of the one with the fastest
    triad: on this VM a process is fast or slow for its whole life (the same 1 MiB AllReduce
    took 125 and 580-715 us in calibrations seconds apart; HIGGS SGD at one rank 1.2-1.4 or
    1.8-2.0 us a step), the two independently, and the runs' times are the least of several
    processes too. (Choosing whole files by the AllReduce once kept a slow process's kernels:
    CA-SGD predicted 1.9x its measured time.)"""
    def bandwidth(section, text):
        return float(re.search(section + r": \{[^}]*?bandwidth_GBps: ([0-9.e+]+)", text).group(1))

    texts = [mpirun(P, os.path.join(build, "perf", "calibrate"), f"this-np{P}", "--clock", clock)
             for _ in range(tries)]
    best = max(texts, key=lambda t: bandwidth("memory", t))
    if P > 1:
        best = with_section(best, "network", max(texts, key=lambda t: bandwidth("network", t)))
    machine = os.path.join(folder, f"this-np{P}.yaml")
    with open(machine, "w") as f:
        f.write(best)
    return machine


def with_section(text, key, donor):
    """text with its top-level `key:` section (the line that starts it and the indented lines
    after it) replaced by donor's."""
    def split(t):
        sections, name = {}, None
        for line in t.splitlines(keepends=True):
            if line[:1] not in (" ", ""):
                name = line.split(":", 1)[0]
            sections.setdefault(name, []).append(line)
        return sections
    ours, theirs = split(text), split(donor)
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


def least_in_rounds(jobs, repeats, run):
    """run(job) -> (seconds, report) for every job, `repeats` rounds over all of them; the least
    seconds of each job and its last report. Rounds rather than back-to-back repeats: a slow
    spell of the host then hits different jobs, not every repeat of one; the least is the
    statistic perf/calibrate keeps (the machine's speed when each rank has its core)."""
    best, reports = [float("inf")] * len(jobs), [None] * len(jobs)
    for _ in range(repeats):
        for k, job in enumerate(jobs):
            t, reports[k] = run(job)
            best[k] = min(best[k], t)
    return best, reports


def predict(build, deck, machine_file, P, features, sets=()):
    """perf/predict's JSON for a deck on a machine file."""
    out = subprocess.run([os.path.join(build, "perf", "predict"), deck, machine_file, "--ranks",
                          str(P), "--features", str(features),
                          *[a for s in sets for a in ("--set", s)]],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def machine_file(name):
    return os.path.join(ROOT, "perf", "machines", name + ".yaml")
