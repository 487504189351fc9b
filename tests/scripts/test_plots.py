#!/usr/bin/env python3
"""The plotting scripts against real tpusim reports and a synthetic results.csv: the files are
whole PNG/SVG images, and the numbers the scripts print (ridge point, MXU utilization over the
timeline, a unit's busy time, Pareto fronts) equal what this test derives on its own, from the
chip YAML, the trace or the CSV. Bad inputs give one line and exit code 2.

Usage: test_plots.py --tpusim EXE --source DIR [unittest arguments, e.g. a class name]"""

import argparse
import csv
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

import yaml

PYTHON = "/usr/bin/python3"  # Debian's, with python3-matplotlib; never a virtualenv's
TPUSIM = SOURCE = None


def script(name):
    return os.path.join(SOURCE, "scripts", name)


def run(args, cwd=None):
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    return subprocess.run(args, cwd=cwd or SOURCE, env=env, capture_output=True, text=True,
                          timeout=300)


def tpusim_run(chip, workload, out, *sets):
    args = [TPUSIM, "run", "-q", "-c", chip, "-w", workload, "-o", out]
    for s in sets:
        args += ["--set", s]
    r = run(args)
    if r.returncode != 0:
        raise AssertionError("tpusim failed: %s" % r.stderr)
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)


def check_png(test, path):
    """A whole PNG: signature, IHDR first with a sensible size, chunks to IEND at the very end."""
    with open(path, "rb") as f:
        data = f.read()
    test.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n", path)
    at, chunks = 8, []
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        chunks.append((kind, data[at + 8:at + 8 + length]))
        at += 12 + length
    test.assertEqual(at, len(data), path)
    test.assertEqual(chunks[0][0], b"IHDR", path)
    test.assertEqual(chunks[-1][0], b"IEND", path)
    width, height = struct.unpack(">II", chunks[0][1][:8])
    test.assertTrue(400 <= width <= 4000 and 300 <= height <= 4000, (path, width, height))


def check_svg(test, path):
    root = ET.parse(path).getroot()
    test.assertEqual(root.tag, "{http://www.w3.org/2000/svg}svg", path)
    test.assertGreater(len(list(root.iter())), 50, path)  # axes, ticks, bars: not an empty canvas


def quantity(text, units):
    """"700 MHz" -> 7e8 with units {"MHz": 1e6, ...}."""
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(\S+)\s*", str(text))
    return float(m.group(1)) * units[m.group(2)]


def union_seconds(intervals):
    """Total length of the union of (start, end) intervals: a sweep over sorted endpoints."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals],
                    key=lambda x: (x[0], -x[1]))
    depth, opened, total = 0, 0.0, 0.0
    for t, step in events:
        if depth == 0 and step == 1:
            opened = t
        depth += step
        if depth == 0:
            total += t - opened
    return total


class ReportTests(unittest.TestCase):
    """ResNet-50 on tpu-v1, the published-roofline check of issue #8."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="tpusim-plots-")
        cls.run_dir = os.path.join(cls.dir, "r50")
        cls.report = tpusim_run("tpu-v1", "resnet50", cls.run_dir)
        cls.out = os.path.join(cls.dir, "plots")
        cls.result = run([PYTHON, script("plot_report.py"),
                          os.path.join(cls.run_dir, "report.json"), "-o", cls.out, "--format",
                          "both"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_writes_every_figure_as_whole_png_and_svg(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertEqual(self.result.stderr, "")
        for name in ("timeline", "energy", "operators", "roofline"):
            check_png(self, os.path.join(self.out, name + ".png"))
            check_svg(self, os.path.join(self.out, name + ".svg"))
        self.assertEqual(sorted(os.listdir(self.out)), sorted(
            n + "." + f for n in ("timeline", "energy", "operators", "roofline")
            for f in ("png", "svg")))

    def test_ridge_point_is_the_published_one(self):
        # TPUv1 (ISCA'17): 65,536 MACs at 700 MHz against 34 GB/s of weight memory, ~1350 MAC/B.
        # Recomputed here from the chip YAML, not from the report the script read.
        with open(os.path.join(SOURCE, "configs/chips/tpu-v1.yaml")) as f:
            chip = yaml.safe_load(f)
        mxu = chip["core"]["mxu"]
        clock = quantity(chip["clock"], {"MHz": 1e6, "GHz": 1e9})
        peak = clock * chip["cores"] * mxu["count"] * mxu["rows"] * mxu["cols"] * max(
            mxu["precisions"].values())
        bandwidth = quantity(chip["memory"]["bandwidth"], {"GB/s": 1e9})
        m = re.search(r"^roofline: .*ridge point ([0-9.]+) MAC/B$", self.result.stdout, re.M)
        self.assertIsNotNone(m, self.result.stdout)
        ridge = float(m.group(1))
        print("tpu-v1 ridge point: %.1f MAC/B (published ~1350; YAML %.1f)" % (
            ridge, peak / bandwidth))
        self.assertAlmostEqual(ridge, peak / bandwidth, delta=0.05)
        self.assertLess(abs(ridge - 1350) / 1350, 0.05)

    def test_timeline_mxu_utilization_integrates_to_the_run_figure(self):
        # The script spreads each operator's utilization over its span; the simulator divides
        # all MXU PE-cycles by the run's. Same PE-cycles, so the means agree.
        m = re.search(r"^timeline: MXU utilization mean ([0-9.]+)$", self.result.stdout, re.M)
        self.assertAlmostEqual(float(m.group(1)), self.report["utilization"]["mxu"], delta=1e-4)

    def test_timeline_unit_busy_time_matches_the_trace(self):
        with open(os.path.join(self.run_dir, "trace.json")) as f:
            events = json.load(f)["traceEvents"]
        names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "thread_name"}
        for unit in ("chip.memory", "chip.core0.vpu", "chip.core0.mxu0"):
            spans = [(e["ts"] * 1e-6, (e["ts"] + e["dur"]) * 1e-6) for e in events
                     if e["ph"] == "X" and names[(e["pid"], e["tid"])] == unit]
            want = union_seconds(spans) / self.report["seconds"]
            m = re.search(r"^timeline: %s busy ([0-9.]+)$" % re.escape(unit), self.result.stdout,
                          re.M)
            self.assertIsNotNone(m, unit)
            self.assertAlmostEqual(float(m.group(1)), want, delta=1e-4, msg=unit)

    def test_reruns_write_identical_files(self):
        again = os.path.join(self.dir, "again")
        r = run([PYTHON, script("plot_report.py"), os.path.join(self.run_dir, "report.json"),
                 "-o", again, "--format", "svg"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("roofline", "energy"):
            with open(os.path.join(self.out, name + ".svg"), "rb") as a, \
                    open(os.path.join(again, name + ".svg"), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)


class IdealMemoryTests(unittest.TestCase):
    """A run with no off-chip limit (memory.model ideal) and only a few hundred cycles."""

    def test_roofline_without_a_ridge_and_a_short_timeline(self):
        d = tempfile.mkdtemp(prefix="tpusim-plots-")
        try:
            report = tpusim_run("tpu-v4i", "workloads/teach/matmul-4x4.yaml", d,
                                "memory.model=ideal")
            self.assertEqual(report["peak"]["memory_bandwidth_bytes_per_s"], 0)
            r = run([PYTHON, script("plot_report.py"), os.path.join(d, "report.json"), "-o",
                     os.path.join(d, "p")])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("off-chip bandwidth unlimited (memory.model ideal): no ridge point",
                          r.stdout)
            for name in ("timeline", "energy", "operators", "roofline"):
                check_png(self, os.path.join(d, "p", name + ".png"))
        finally:
            shutil.rmtree(d)


SWEEP_HEADER = ["point", "workload", "core.mxu.rows", "core.mxu.dataflow", "status", "error",
                "cycles", "seconds", "mxu_utilization", "vpu_utilization",
                "memory_bw_utilization", "hbm_read_bytes", "hbm_write_bytes", "macs", "energy_j",
                "edp_js", "report"]


def synthetic_rows():
    """Two workloads x four array sizes x two dataflows, one failed point, and a front with a
    duplicate and a tie, so the Pareto rules are all exercised."""
    rows, point = [], 0
    for w, scale in (("resnet50", 1.0), ("bert-base-layer-s128", 0.2)):
        for df in ("ws", "os"):
            for rows_ in (32, 64, 128, 256):
                if w == "bert-base-layer-s128" and rows_ == 256 and df == "os":
                    rows.append([point, w, rows_, df, "failed", "tpusim exited 1: no fit"] +
                                [""] * 10 + [""])
                    point += 1
                    continue
                seconds = scale * 1e-3 * (128 / rows_) ** (0.8 if df == "ws" else 0.7)
                energy = scale * 1e-3 * (rows_ / 128) ** 0.9 * (1.1 if df == "os" else 1.0)
                cycles = round(seconds * 1.05e9)
                rows.append([point, w, rows_, df, "ok", "", cycles, seconds, 0.1 * rows_ / 128,
                             0.05, 0.4, 10_000_000, 2_000_000, 4_090_000_000, energy,
                             energy * seconds, "points/%d/report.json" % point])
                point += 1
    # Ties: the same seconds as point 0 with more energy (dominated), and a copy of point 1
    # (not dominated, so on the front when point 1 is).
    first = rows[0]
    rows.append([point, first[1], 48, "ws", "ok", "", first[6], first[7], 0.1, 0.05, 0.4,
                 1, 1, 1, first[14] * 1.5, first[14] * 1.5 * first[7], ""])
    rows.append([point + 1] + rows[1][1:])
    return rows


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


class SweepTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tpusim-plots-")
        self.csv = write_csv(os.path.join(self.dir, "results.csv"), SWEEP_HEADER, synthetic_rows())

    def tearDown(self):
        shutil.rmtree(self.dir)

    def plot(self, *args):
        return run([PYTHON, script("plot_sweep.py"), self.csv] + list(args))

    def test_lines_by_hue_on_log_axes_as_png_and_svg(self):
        for ext, check in (("png", check_png), ("svg", check_svg)):
            out = os.path.join(self.dir, "sub", "rows." + ext)
            r = self.plot("--x", "core.mxu.rows", "--y", "seconds", "--hue", "core.mxu.dataflow",
                          "--logx", "--logy", "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("(17 points, 1 failed skipped)", r.stdout)
            check(self, out)

    def test_a_fraction_on_a_log_axis(self):
        # Its minor-tick labels are percents, which need the axis (this crashed with a traceback).
        out = os.path.join(self.dir, "util.png")
        r = self.plot("--x", "core.mxu.rows", "--y", "mxu_utilization", "--logy", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        check_png(self, out)

    def test_categorical_axis_and_one_workload(self):
        out = os.path.join(self.dir, "df.png")
        r = self.plot("--x", "core.mxu.dataflow", "--y", "edp_js", "--hue", "core.mxu.rows",
                      "--workload", "bert-base-layer-s128", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(7 points, 1 failed skipped)", r.stdout)
        check_png(self, out)

    def test_pareto_front_is_every_undominated_point(self):
        out = os.path.join(self.dir, "pareto.png")
        r = self.plot("--x", "seconds", "--y", "energy_j", "--hue", "core.mxu.rows",
                      "--pareto", "seconds,energy_j", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        check_png(self, out)
        printed, workload = {}, None
        for line in r.stdout.splitlines():
            m = re.match(r"pareto front of workload (\S+), minimising seconds and energy_j: "
                         r"(\d+) of (\d+) points$", line)
            if m:
                workload = m.group(1)
                printed[workload] = []
                continue
            m = re.match(r"  point (\d+): seconds=(\S+) energy_j=(\S+)$", line)
            if m:
                printed[workload].append(int(m.group(1)))
        # Brute force: a point is on the front unless another is no worse in both and better in one.
        ok = [row for row in synthetic_rows() if row[4] == "ok"]
        want = {}
        for w in ("resnet50", "bert-base-layer-s128"):
            mine = [row for row in ok if row[1] == w]
            want[w] = sorted(
                p[0] for p in mine
                if not any(q[7] <= p[7] and q[14] <= p[14] and (q[7] < p[7] or q[14] < p[14])
                           for q in mine))
        self.assertEqual({w: sorted(v) for w, v in printed.items()}, want)
        self.assertIn(1, want["resnet50"])
        self.assertIn(len(synthetic_rows()) - 1, want["resnet50"])  # the copy of point 1
        self.assertNotIn(len(synthetic_rows()) - 2, want["resnet50"])  # the tie on seconds


class ErrorTests(unittest.TestCase):
    """Each malformed input: exit code 2 and one line that names the file and the key."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="tpusim-plots-")
        cls.run_dir = os.path.join(cls.dir, "run")
        cls.report = tpusim_run("tpu-v4i", "workloads/teach/matmul-4x4.yaml", cls.run_dir)
        cls.csv = write_csv(os.path.join(cls.dir, "results.csv"), SWEEP_HEADER, synthetic_rows())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def fails(self, args, *needles):
        r = run([PYTHON] + args)
        self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
        self.assertRegex(r.stderr, r"^error: [^\n]+\n$")
        for n in needles:
            self.assertIn(n, r.stderr)
        return r.stderr

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def broken_report(self, name, edit):
        report = json.loads(json.dumps(self.report))
        edit(report)
        path = self.write(name + "/report.json", json.dumps(report))
        shutil.copy(os.path.join(self.run_dir, "trace.json"), os.path.dirname(path))
        return path

    def test_report_errors(self):
        plot = script("plot_report.py")
        out = os.path.join(self.dir, "out")
        missing = os.path.join(self.dir, "nope.json")
        self.fails([plot, missing, "-o", out], missing, "no such file")
        self.fails([plot, self.write("text.json", "cycles: 3\n"), "-o", out], "text.json:1:1",
                   "not JSON")
        self.fails([plot, self.broken_report("nopeak", lambda r: r.pop("peak")), "-o", out],
                   "nopeak/report.json", "missing key 'peak'")
        self.fails([plot, self.broken_report("badop", lambda r: r["ops"][0].update(macs="many")),
                    "-o", out], "badop/report.json", "'ops[0].macs'", "expected a number")
        self.fails([plot, self.broken_report("schema", lambda r: r.update(schema="x/9")), "-o",
                    out], "schema/report.json", "'schema'")
        # json.dumps writes NaN and Infinity, which json.load takes back.
        self.fails([plot, self.broken_report("nan", lambda r: r.update(seconds=float("nan"))),
                    "-o", out], "nan/report.json", "'seconds'", "expected a number >= 0, got nan")
        self.fails([plot, self.broken_report("inf", lambda r: r["energy_pj"].update(
            mxu=float("inf"))), "-o", out], "inf/report.json", "'energy_pj.mxu'")
        alone = self.write("alone/report.json", json.dumps(self.report))
        self.fails([plot, alone, "-o", out], os.path.join(self.dir, "alone", "trace.json"),
                   "no such file")
        trace = self.write("t/trace.json", json.dumps({"traceEvents": [{"ph": "X", "pid": 0}]}))
        self.fails([plot, os.path.join(self.run_dir, "report.json"), "--trace", trace, "-o", out],
                   "t/trace.json", "'traceEvents[0].tid'")
        self.fails([plot, os.path.join(self.run_dir, "report.json")], "-o")
        self.fails([plot, os.path.join(self.run_dir, "report.json"), "-o", out, "--format", "gif"],
                   "--format")
        self.assertFalse(os.path.exists(out))  # nothing written by any failed run

    def test_sweep_errors(self):
        plot = script("plot_sweep.py")
        out = os.path.join(self.dir, "s.png")
        missing = os.path.join(self.dir, "nope.csv")
        self.fails([plot, missing, "--x", "a", "--y", "b", "-o", out], missing, "no such file")
        self.fails([plot, self.csv, "--x", "core.mxu.colz", "--y", "seconds", "-o", out],
                   "results.csv", "--x", "'core.mxu.colz'")
        self.fails([plot, self.csv, "--x", "seconds", "--y", "energy_j", "--pareto",
                    "seconds,joules", "-o", out], "--pareto", "'joules'")
        self.fails([plot, self.csv, "--x", "seconds", "--y", "core.mxu.dataflow", "-o", out],
                   "results.csv:2", "'core.mxu.dataflow'", "expected a number")
        self.fails([plot, self.csv, "--x", "seconds", "--y", "energy_j", "-o",
                    os.path.join(self.dir, "s.jpg")], ".png or .svg")
        self.fails([plot, self.csv, "--x", "seconds", "--y", "energy_j", "--workload", "vgg",
                    "-o", out], "'vgg'", "resnet50")
        self.fails([plot, os.path.join(self.run_dir, "ops.csv"), "--x", "id", "--y", "macs",
                    "-o", out], "ops.csv:1", "missing column 'point'")
        self.fails([plot, self.write("empty.csv", ""), "--x", "a", "--y", "b", "-o", out],
                   "empty.csv", "empty file")
        short = write_csv(os.path.join(self.dir, "short.csv"), SWEEP_HEADER,
                          [synthetic_rows()[0][:5]])
        self.fails([plot, short, "--x", "seconds", "--y", "energy_j", "-o", out], "short.csv:2",
                   "5 fields")
        failed = write_csv(os.path.join(self.dir, "failed.csv"), SWEEP_HEADER,
                           [r for r in synthetic_rows() if r[4] == "failed"])
        self.fails([plot, failed, "--x", "seconds", "--y", "energy_j", "-o", out], "failed.csv",
                   "no successful points")
        self.fails([plot, self.csv, "--x", "seconds", "--y", "energy_j"], "-o")
        self.assertFalse(os.path.exists(out))

    def test_help(self):
        for name, needle in (("plot_report.py", "--format"), ("plot_sweep.py", "--pareto")):
            r = run([PYTHON, script(name), "--help"])
            self.assertEqual(r.returncode, 0)
            self.assertIn("usage: " + name, r.stdout)
            self.assertIn(needle, r.stdout)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--tpusim", required=True)
    parser.add_argument("--source", required=True)
    known, rest = parser.parse_known_args()
    TPUSIM, SOURCE = os.path.abspath(known.tpusim), os.path.abspath(known.source)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
