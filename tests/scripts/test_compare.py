#!/usr/bin/env python3
"""The validation scripts (scripts/compare_tpuv1.py, compare_tpuv3.py): the TPUv1 table's rows
carry the paper's measured TOPS and the throughput of a tpusim run this test makes itself; the
weights column is Table 1's weight count; bad inputs give one line and exit code 2.

Usage: test_compare.py --tpusim EXE --source DIR [unittest arguments]"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

PYTHON = "/usr/bin/python3"
TPUSIM = SOURCE = None
ENV = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")


def run(args):
    return subprocess.run(args, cwd=SOURCE, env=ENV, capture_output=True, text=True, timeout=600)


# The two tables the script reads (Jouppi et al., ISCA 2017, Tables 1 and 3, as transcribed in
# ../shared/realhw/tpu_papers), written here so the test does not need files outside the repo.
TABLE1 = """app,loc,fc_layers,conv_layers,vector_layers,pool_layers,total_layers,nonlinearity,weights,tpu_ops_per_weight_byte,tpu_batch_size,pct_deployed_tpus_jul2016
MLP0,100,5,0,0,0,5,ReLU,20M,200,200,61%
MLP1,1000,4,0,0,0,4,ReLU,5M,168,168,
LSTM0,1000,24,0,34,0,58,sigmoid+tanh,52M,64,64,29%
LSTM1,1500,37,0,19,0,56,sigmoid+tanh,34M,96,96,
"""
TABLE3 = """row,metric,MLP0,MLP1,LSTM0,LSTM1,CNN0,CNN1,mean
9,teraops_per_s_(92_peak),12.3,9.7,3.7,2.8,86.0,14.1,21.4
"""


class CompareTpuv1Tests(unittest.TestCase):
    def test_rows_are_the_papers_figures_beside_tpusims(self):
        papers = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", papers]))
        for name, text in (("tpuv1_isca2017_table1_apps.csv", TABLE1),
                           ("tpuv1_isca2017_table3_perf_counters.csv", TABLE3)):
            with open(os.path.join(papers, name), "w") as f:
                f.write(text)
        r = run([PYTHON, os.path.join(SOURCE, "scripts", "compare_tpuv1.py"), "--tpusim", TPUSIM,
                 "--papers", papers])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()
                if line.split() and line.split()[0] in ("MLP0", "MLP1", "LSTM0", "LSTM1")}
        self.assertEqual(sorted(rows), ["LSTM0", "LSTM1", "MLP0", "MLP1"])
        # Table 3, row 9 and Table 1's weights (millions), as published.
        paper = {"MLP0": (12.3, 20), "MLP1": (9.7, 5), "LSTM0": (3.7, 52), "LSTM1": (2.8, 34)}
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "mlp0")
            ours = run([TPUSIM, "run", "-q", "-c", "tpu-v1", "-w", "workloads/tpuv1/mlp0.yaml",
                        "-o", out])
            self.assertEqual(ours.returncode, 0, ours.stderr)
            with open(os.path.join(out, "report.json")) as f:
                report = json.load(f)
        tops = 2 * report["macs"] / report["seconds"] / 1e12
        self.assertAlmostEqual(float(rows["MLP0"][2]), tops, places=2)
        self.assertAlmostEqual(float(rows["MLP0"][3]), 12.3 / tops, places=2)
        for app, (measured, weights_m) in paper.items():
            self.assertEqual(float(rows[app][1]), measured)
            self.assertAlmostEqual(float(rows[app][5]), weights_m * 1e6 / 2**20, delta=0.02 * weights_m)

    def test_a_missing_table_is_one_line_and_exit_2(self):
        r = run([PYTHON, os.path.join(SOURCE, "scripts", "compare_tpuv1.py"), "--tpusim", TPUSIM,
                 "--papers", "/nonexistent"])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        self.assertIn("/nonexistent/tpuv1_isca2017_table3_perf_counters.csv", r.stderr)

    def test_tpuv3_missing_baseline_is_one_line_and_exit_2(self):
        r = run([PYTHON, os.path.join(SOURCE, "scripts", "compare_tpuv3.py"), "--tpusim", TPUSIM,
                 "--baseline", "/nonexistent.csv"])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        self.assertIn("/nonexistent.csv", r.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tpusim", required=True)
    parser.add_argument("--source", required=True)
    args, rest = parser.parse_known_args()
    TPUSIM, SOURCE = os.path.abspath(args.tpusim), os.path.abspath(args.source)
    unittest.main(argv=[sys.argv[0]] + rest)
