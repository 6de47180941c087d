#!/usr/bin/env python3
# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
"""perf/studies/minisgd_runs.py's median of several calibrations' machine files, on
hand-written files: figures, hyphenated keys, and curves over several lines.

Usage: test_minisgd_runs.py <source root>. Python 3 standard library only.
"""
import pathlib
import sys
import unittest

ROOT = pathlib.Path(sys.argv.pop(1) if len(sys.argv) > 1 else ".").resolve()
sys.path.insert(0, str(ROOT / "perf" / "studies"))
import minisgd_runs  # noqa: E402


def machine(bandwidth, resident, transfer, qsgd, global_qsgd):
    points = ", ".join(f"[{x}, {y}]" for x, y in resident)
    lines = ",\n".join(f"    [{x}, {y}]" for x, y in transfer)
    return (f"# written by perf/calibrate\n"
            f"name: test\n"
            f"memory: {{bandwidth_GBps: {bandwidth}, cache_MB: 1,\n"
            f"  resident_GBps: [{points}]}}\n"
            f"network: {{latency_us: 0.5, ranks: 2,\n"
            f"  transfer_us: [\n{lines}]}}\n"
            f"compressors: {{qsgd: {qsgd}, global-qsgd: {global_qsgd}}}\n")


class MedianFigures(unittest.TestCase):
    def test_figures_and_curves_are_the_medians(self):
        files = [
            machine(20, [(2, 40), (4, 30), (8, 25)], [(1024, 1.0), (2048, 3.0)], 8, 12),
            machine(26, [(2, 50), (4, 36), (8, 21)], [(1024, 2.0), (2048, 1.0)], 9, 11),
            machine(23, [(4, 33), (8, 22)], [(1024, 9.0), (2048, 2.0)], 1, 30),
        ]
        combined = minisgd_runs.median_figures(files)
        # the first file's points, each y the median of the files that have its x
        self.assertIn("resident_GBps: [[2, 45], [4, 33], [8, 22]]", combined)
        self.assertIn("    [1024, 2],\n    [2048, 2]]", combined)
        self.assertIn("bandwidth_GBps: 23,", combined)
        self.assertIn("{qsgd: 8, global-qsgd: 12}", combined)  # not qsgd's figure twice

    def test_one_file_is_unchanged_but_for_the_numbers_format(self):
        text = machine(20.5, [(2, 40.25)], [(1024, 1.5)], 8, 12)
        self.assertEqual(minisgd_runs.median_figures([text]), text)


if __name__ == "__main__":
    unittest.main()
