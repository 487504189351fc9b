#!/usr/bin/env python3
"""Runs the TPUv1 paper's memory-bound applications (workloads/tpuv1/) on tpu-v1 and sets the
throughput tpusim gives beside the one the paper measured with the chip's performance counters
(Jouppi et al., ISCA 2017, Table 3, row 9; ../shared/realhw/tpu_papers).

    /usr/bin/python3 scripts/compare_tpuv1.py [--tpusim build/tpusim] [--papers DIR] [--set K=V]...

Prints one row per application (TOPS counted as 2 ops per MAC, as the paper's 92 TOPS peak is;
time ratio = tpusim's time / the chip's) and the mean |err| of the time. The CNNs of Table 1 are
left out: their layer shapes are not published. Exit 2 on a missing or malformed input.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APPS = ["MLP0", "MLP1", "LSTM0", "LSTM1"]


def fail(message):
    print(f"compare_tpuv1: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_csv(papers, name):
    path = os.path.join(papers, name)
    try:
        with open(path, newline="") as f:
            return path, list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: {e.strerror}")


def batch_sizes(papers):
    path, rows = read_csv(papers, "tpuv1_isca2017_table1_apps.csv")
    try:
        batch = {row["app"]: int(row["tpu_batch_size"]) for row in rows}
        return {app: batch[app] for app in APPS}
    except (KeyError, ValueError):
        fail(f"{path}: expected 'app' and 'tpu_batch_size' columns covering {', '.join(APPS)}")


def measured_tops(papers):
    path, rows = read_csv(papers, "tpuv1_isca2017_table3_perf_counters.csv")
    for row in rows:
        if row.get("metric", "").startswith("teraops_per_s"):
            try:
                return {app: float(row[app]) for app in APPS}
            except (KeyError, ValueError):
                fail(f"{path}: the teraops row lacks a number for one of {', '.join(APPS)}")
    fail(f"{path}: no 'teraops_per_s' row")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="Exit 2 on a missing or malformed input.")
    parser.add_argument("--tpusim", default=os.path.join(ROOT, "build", "tpusim"),
                        help="the tpusim binary (default: build/tpusim)")
    parser.add_argument("--papers", default=os.path.join(ROOT, "..", "shared", "realhw", "tpu_papers"),
                        help="folder of the papers' tables (default: ../shared/realhw/tpu_papers)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a chip override passed to every run (e.g. memory.model=hbm)")
    args = parser.parse_args()
    if not os.access(args.tpusim, os.X_OK):
        fail(f"{args.tpusim}: not an executable (build first, or pass --tpusim)")
    tops = measured_tops(args.papers)
    batch = batch_sizes(args.papers)
    overrides = [a for kv in args.set for a in ("--set", kv)]

    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        for app in APPS:
            workload = os.path.join(ROOT, "workloads", "tpuv1", app.lower() + ".yaml")
            out = os.path.join(tmp, app)
            run = subprocess.run([args.tpusim, "run", "-q", "-c", "tpu-v1", *overrides, "-w", workload,
                                  "-o", out], cwd=ROOT, env=env, capture_output=True, text=True)
            if run.returncode != 0:
                fail(f"{app}: tpusim exited {run.returncode}: {run.stderr.strip()}")
            with open(os.path.join(out, "report.json")) as f:
                report = json.load(f)
            ours = 2 * report["macs"] / report["seconds"] / 1e12
            table.append((app, tops[app], ours, report))

    print(f"{'app':6s} {'TPUv1 TOPS':>10s} {'tpusim TOPS':>11s} {'time ratio':>10s} "
          f"{'HBM MiB':>8s} {'weights MiB':>11s}")
    ratios = []
    for app, hw, ours, report in table:
        ratio = hw / ours  # the same work: times are in inverse proportion to throughput
        ratios.append(ratio)
        traffic = sum(report["traffic_bytes"].get(k, 0) for k in ("hbm_read", "hbm_write"))
        weights = report["macs"] / batch[app]  # an FC layer's MACs are batch x its weights
        print(f"{app:6s} {hw:10.1f} {ours:11.2f} {ratio:10.2f} {traffic / 2**20:8.2f} "
              f"{weights / 2**20:11.2f}")
    mean = sum(abs(r - 1) for r in ratios) / len(ratios)
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"\nmean |err| of the time {100 * mean:.1f}%, geomean time ratio {geo:.2f}")


if __name__ == "__main__":
    main()
