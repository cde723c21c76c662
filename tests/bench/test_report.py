#!/usr/bin/env python3
"""bench/peers/report.py: the closed-form Laplacian spectra its exact-eigenvalue column compares with."""
import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("report", os.path.join(HERE, "..", "..", "bench", "peers", "report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


class ExactLaplacianSpectra(unittest.TestCase):
    def test_2x2_grid(self):
        # [[4,-1,-1,0],[-1,4,0,-1],[-1,0,4,-1],[0,-1,-1,4]]: eigenvalues 2, 4, 4, 6 (by hand)
        self.assertEqual([round(x, 12) for x in report.exact_eigs("lap2d", 4, "largest", 4)], [6, 4, 4, 2])
        self.assertEqual([round(x, 12) for x in report.exact_eigs("lap2d", 4, "smallest", 2)], [2, 4])

    def test_2x2x2_grid(self):
        # 6 - (+-1 +-1 +-1): 3, 5 (three times), 7 (three times), 9
        self.assertEqual([round(x, 12) for x in report.exact_eigs("lap3d", 8, "largest", 8)], [9, 7, 7, 7, 5, 5, 5, 3])

    def test_other_matrices_and_sizes_have_none(self):
        self.assertIsNone(report.exact_eigs("powerlaw", 2000000, "largest", 1))
        self.assertIsNone(report.exact_eigs("lap2d", 5, "largest", 1))  # not a square grid

    def test_missed_copy_shows_in_the_error(self):
        exact = report.exact_eigs("lap3d", 8, "largest", 4)  # 9, 7, 7, 7
        ok = {"status": "ok", "time_s": 1.0, "eigs": [9.0, 7.0, 7.0, 7.0]}
        missed = {"status": "ok", "time_s": 1.0, "eigs": [9.0, 7.0, 5.0, 5.0]}  # one copy of 7, then the 5s
        self.assertLess(report.exact_error(ok, exact), 1e-14)
        self.assertAlmostEqual(report.exact_error(missed, exact), 2 / 7)
        self.assertIsNone(report.exact_error({"status": "timeout"}, exact))


if __name__ == "__main__":
    unittest.main()
