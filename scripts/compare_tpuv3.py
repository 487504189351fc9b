#!/usr/bin/env python3
"""Runs the 22 TPUv3 validation workloads (workloads/tpuv3/) on one TPUv3 core and sets tpusim's
cycles beside the real chip's and other simulators' (../shared/realhw/pytorchsim_tpuv3).

    /usr/bin/python3 scripts/compare_tpuv3.py [--tpusim build/tpusim] [--baseline FILE] [--csv OUT]
                                              [--set K=V]...

Prints one row per workload (cycles, tpusim / TPUv3) and, per simulator, the mean and the
geometric-mean error over the workloads it covers. Exit 2 on a missing or malformed input.
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
# One TensorCore of a TPUv3 chip: half the chip's cores and half its HBM (each core has its own
# two HBM stacks, facts.md 1.1), so a single-core run sees 450 GB/s, not the chip's 900.
CORE_OVERRIDES = ["--set", "cores=1", "--set", "memory.bandwidth=450GB/s", "--set", "memory.capacity=16GiB",
                  "--set", "memory.channels=32", "--set", "memory.hbm.stacks=2"]


def fail(message):
    print(f"compare_tpuv3: error: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="Exit 2 on a missing or malformed input.")
    parser.add_argument("--tpusim", default=os.path.join(ROOT, "build", "tpusim"),
                        help="the tpusim binary (default: build/tpusim)")
    parser.add_argument("--baseline", default=os.path.join(ROOT, "..", "shared", "realhw", "pytorchsim_tpuv3",
                                                           "baseline_cycle.csv"),
                        help="the measured cycles CSV (default: "
                             "../shared/realhw/pytorchsim_tpuv3/baseline_cycle.csv)")
    parser.add_argument("--csv", help="also write the table here")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a chip override passed to every run (e.g. memory.model=hbm)")
    args = parser.parse_args()
    if not os.access(args.tpusim, os.X_OK):
        fail(f"{args.tpusim}: not an executable (build first, or pass --tpusim)")
    try:
        with open(args.baseline, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{args.baseline}: {e.strerror}")
    if not rows or "Workload" not in rows[0] or "TPUv3" not in rows[0]:
        fail(f"{args.baseline}: expected a 'Workload' and a 'TPUv3' column")
    others = [k for k in rows[0] if k not in ("Workload", "TPUv3")]

    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            name = row["Workload"].strip()
            if not name:
                continue
            workload = os.path.join(ROOT, "workloads", "tpuv3", name + ".yaml")
            out = os.path.join(tmp, name)
            run = subprocess.run([args.tpusim, "run", "-q", "-c", "tpu-v3", *CORE_OVERRIDES,
                                  *[a for kv in args.set for a in ("--set", kv)], "-w", workload, "-o", out],
                                 cwd=ROOT, env=env, capture_output=True, text=True)
            if run.returncode != 0:
                fail(f"{name}: tpusim exited {run.returncode}: {run.stderr.strip()}")
            with open(os.path.join(out, "report.json")) as f:
                cycles = json.load(f)["cycles"]
            table.append((name, float(row["TPUv3"]), cycles, {k: row[k] for k in others}))

    print(f"{'workload':32s} {'TPUv3':>10s} {'tpusim':>10s} {'ratio':>6s}")
    for name, hw, ours, _ in table:
        print(f"{name:32s} {hw:10.0f} {ours:10d} {ours / hw:6.2f}")
    print()
    print(f"{'simulator':14s} {'workloads':>9s} {'mean |err|':>10s} {'geomean ratio':>13s}")
    for sim in ["tpusim"] + others:
        pairs = [(hw, ours if sim == "tpusim" else float(o[sim])) for _, hw, ours, o in table
                 if sim == "tpusim" or o[sim].strip()]
        if not pairs:
            continue
        mean = sum(abs(s - h) / h for h, s in pairs) / len(pairs)
        geo = math.exp(sum(math.log(s / h) for h, s in pairs) / len(pairs))
        print(f"{sim:14s} {len(pairs):9d} {100 * mean:9.1f}% {geo:13.2f}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["workload", "tpuv3_cycles", "tpusim_cycles"])
            for name, hw, ours, _ in table:
                w.writerow([name, int(hw), ours])


if __name__ == "__main__":
    main()
