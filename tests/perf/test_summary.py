#!/usr/bin/env python3
# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
"""perf/summary.py on hand-written reports: grouping, speedups, and the --compare verdicts.

Usage: test_summary.py <source root>. Python 3 standard library only (no plots).
"""
import copy
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(sys.argv.pop(1) if len(sys.argv) > 1 else ".").resolve()
SUMMARY = ROOT / "perf" / "summary.py"


def report(name, ranks, fom, loss, host="nodeA", space="Serial", **deck_changes):
    deck = {"run": {"name": name, "seed": 7}, "solver": {"batch_size": 48},
            "comm": {"backend": "mpi"}, "output": {"report": f"{name}-{ranks}.json", "history": ""}}
    for key, value in deck_changes.items():
        section, field = key.split("__")
        deck[section][field] = value
    return {"program": "minisgd", "version": "0.1.0", "git_hash": "abc", "compiler": "GNU 12",
            "kokkos": {"version": "4.3.0", "backends": [space], "default_execution_space": space,
                       "concurrency": 1},
            "ranks": ranks, "host": host, "deck": deck,
            "result": {"final_loss": loss, "reference_loss": 0.5, "tolerance": 0.01,
                       "valid": abs(loss - 0.5) <= 0.005, "verdict": "…", "train_time_s": 1.0,
                       "samples_per_s": fom},
            "fom": {"name": "samples_per_s", "value": fom}}


class Summary(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = pathlib.Path(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, rep):
        p = self.path / name
        p.write_text(json.dumps(rep))
        return str(p)

    def run_summary(self, *args):
        return subprocess.run([sys.executable, str(SUMMARY), *args], capture_output=True, text=True)

    def test_table_groups_and_speedups(self):
        files = [self.write("a1.json", report("S-x", 1, 100.0, 0.5)),
                 self.write("a2.json", report("S-x", 2, 150.0, 0.5)),
                 self.write("a2b.json", report("S-x", 2, 180.0, 0.5)),  # repetitions: the median
                 self.write("a2c.json", report("S-x", 2, 170.0, 0.5)),
                 self.write("a4.json", dict(report("S-x", 4, 300.0, 0.6),
                                            fom={"name": "samples_per_s", "value": 300.0,
                                                 "time_to_target_s": 2.5}))]
        out = self.run_summary(*files, "--baseline", files[0])
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = {l.split()[2]: l for l in out.stdout.splitlines() if l.startswith("S-x")}
        self.assertEqual(set(lines), {"1", "2", "4"})
        self.assertIn("170 (median of 3, 150-180)", lines["2"])
        self.assertIn("1.70 (P=1)", lines["2"])
        self.assertIn("3.00 (P=1)", lines["4"])
        self.assertIn("INVALID", lines["4"])
        self.assertIn("2.00e-01", lines["4"])  # loss gap |0.6 - 0.5| / 0.5
        self.assertIn("1 INVALID", out.stdout)
        self.assertEqual(lines["4"].split()[4], "2.5")  # time to target, where the report has it
        self.assertEqual(lines["1"].split()[4], "-")

    def test_worksheet_scores_each_system_and_class(self):
        refdir = self.path / "reference"
        refdir.mkdir()
        for name, ranks, fom in (("S-x", 1, 100.0), ("S-x", 2, 160.0), ("S-y", 1, 50.0),
                                 ("M-x", 1, 10.0)):
            (refdir / f"{name}-{ranks}.json").write_text(
                json.dumps(report(name, ranks, fom, 0.5, host="ref")))
        files = [self.write("b1.json", report("S-x", 1, 320.0, 0.5, host="big")),  # best P: 320
                 self.write("b2.json", report("S-x", 2, 300.0, 0.5, host="big")),
                 self.write("b3.json", report("S-y", 4, 200.0, 0.5, host="big")),
                 self.write("c1.json", report("S-x", 1, 80.0, 0.5, host="small")),
                 self.write("c2.json", report("S-y", 1, 25.0, 0.6, host="small"))]  # INVALID
        out = self.run_summary(*files, "--worksheet", str(refdir))
        self.assertEqual(out.returncode, 0, out.stderr)
        scores = {tuple(l.split()[:2]): l for l in out.stdout.splitlines()
                  if l.split()[:2] in (["big/Serial", "S"], ["small/Serial", "S"])
                  and "of" in l.split()[3:5]}
        # big: sqrt(320/160 * 200/50) = sqrt(8)
        self.assertIn("2.828", scores[("big/Serial", "S")])
        self.assertIn("every deck VALID", scores[("big/Serial", "S")])
        self.assertIn("S-y not VALID", scores[("small/Serial", "S")])
        self.assertNotIn("M", [k[1] for k in scores])  # no M runs: no M score

    def test_compare_agrees_within_tolerance(self):
        a = self.write("a.json", report("S-x", 1, 100.0, 0.5, space="OpenMP", comm__backend="nccl"))
        b = self.write("b.json", report("S-x", 1, 50.0, 0.502))
        out = self.run_summary("--compare", a, b)
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertIn("AGREE", out.stdout)
        self.assertIn("deck differs (allowed): comm.backend", out.stdout)
        self.assertIn("FOM A/B = 2", out.stdout)

    def test_compare_rejects_a_changed_deck_or_a_far_loss(self):
        base = report("S-x", 1, 100.0, 0.5)
        b = self.write("b.json", base)
        changed = self.write("c.json", report("S-x", 1, 100.0, 0.5, solver__batch_size=96))
        out = self.run_summary("--compare", changed, b)
        self.assertEqual(out.returncode, 1, out.stdout)
        self.assertIn("NOT ALLOWED): solver.batch_size", out.stdout)
        far = copy.deepcopy(base)
        far["result"]["final_loss"] = 0.52  # 4% apart, tolerance 1%
        out = self.run_summary("--compare", self.write("f.json", far), b)
        self.assertEqual(out.returncode, 1, out.stdout)
        self.assertIn("DISAGREE", out.stdout)

    def test_compare_shows_both_provenances_side_by_side(self):
        def with_provenance(blas, nodes):
            r = report("S-x", 8, 100.0, 0.5)
            r.update({"schema_version": 1, "build": {"type": "Release", "cxx_flags": "-O3",
                                                      "options": {"cuda": False, "dnnl": True}},
                      "blas": {"vendor": blas, "detail": f"{blas} 1.0"},
                      "mpi": {"library_version": "Open MPI v4.1.4", "standard": "3.1"},
                      "gpu": None, "nodes": nodes, "ranks_per_node": {"min": 8 // nodes,
                                                                      "max": 8 // nodes},
                      "threads_per_rank": {"min": 4, "max": 4}})
            r["kokkos"]["arch"] = ["SKX"]
            return r
        a = self.write("a.json", with_provenance("OpenBLAS", 1))
        b = self.write("b.json", with_provenance("Intel oneMKL", 2))
        out = self.run_summary("--compare", a, b)
        self.assertEqual(out.returncode, 0, out.stdout)
        rows = {l[2:18].strip(): l for l in out.stdout.splitlines() if l[:1] in " *"}
        for field, a_text, b_text, differs in (
                ("blas", "OpenBLAS: OpenBLAS 1.0", "Intel oneMKL: Intel oneMKL 1.0", True),
                ("nodes", "1", "2", True), ("ranks per node", "8", "4", True),
                ("threads per rank", "4", "4", False), ("kokkos arch", "SKX", "SKX", False),
                ("mpi", "Open MPI v4.1.4 (MPI 3.1)", "Open MPI v4.1.4 (MPI 3.1)", False),
                ("options", "~cuda +dnnl", "~cuda +dnnl", False), ("gpu", "none", "none", False)):
            line = rows[field]
            self.assertEqual(line.startswith("*"), differs, line)
            self.assertLess(line.index(a_text), line.rindex(b_text), line)  # A left, B right
        # A report made before schema_version 1 shows '?' for what it lacks.
        old = self.write("old.json", report("S-x", 8, 100.0, 0.5))
        out = self.run_summary("--compare", a, old)
        rows = {l[2:18].strip(): l for l in out.stdout.splitlines() if l[:1] in " *"}
        self.assertTrue(rows["blas"].startswith("*") and rows["blas"].rstrip().endswith("?"))

    def test_not_a_report(self):
        out = self.run_summary(self.write("x.json", {"hello": 1}))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("not a minisgd report", out.stderr)


if __name__ == "__main__":
    unittest.main()
