#!/usr/bin/env python3
"""Plots of one tpusim run (report.json and the trace.json beside it): a utilization timeline, the
energy breakdown, per-operator cycles coloured by bound, and the chip's roofline with every
operator placed on it. docs/plots.md describes each figure and where its numbers come from."""

import json
import math
import os

import numpy as np

import plot_common as pc
from plot_common import InputError

import matplotlib.pyplot as plt  # noqa: E402  (plot_common selects the Agg backend first)
from matplotlib import ticker  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

FIGURES = ("timeline", "energy", "operators", "roofline")
ENERGY_PARTS = ("mxu", "vpu", "sram", "hbm", "noc")
PART_COLOURS = {"mxu": "#4c72b0", "vpu": "#55a868", "sram": "#8172b2", "hbm": "#c44e52",
                "noc": "#ccb974", "static": "#8c8c8c"}
PART_NAMES = {"mxu": "MXU", "vpu": "VPU", "sram": "SRAM", "hbm": "off-chip (HBM/DRAM)",
              "noc": "NoC", "static": "static"}
BOUND_COLOURS = {"compute": "#4c72b0", "memory": "#c44e52", "no MACs": "#8c8c8c"}
BOUND_LABELS = {"compute": "compute-bound (MXU)", "memory": "memory-bound (off-chip)",
                "no MACs": "no MXU work (vector unit, DMA)"}
MAX_OPERATORS = 30  # bars in the operators figure; the rest are counted in its title
MAX_ENERGY_OPS = 12


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise InputError("%s: no such file" % path)
    except (OSError, UnicodeDecodeError) as e:
        raise InputError("%s: cannot read (%s)" % (path, getattr(e, "strerror", None) or e))
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError("%s:%d:%d: not JSON (%s)" % (path, e.lineno, e.colno, e.msg))


class Reader:
    """Typed key access that names the file and the key path of whatever is missing or wrong."""

    def __init__(self, path):
        self.path = path

    def get(self, obj, key, where, kind="number"):
        name = where + key
        if not isinstance(obj, dict) or key not in obj:
            raise InputError("%s: missing key '%s'" % (self.path, name))
        v = obj[key]
        ok = {"number": isinstance(v, (int, float)) and not isinstance(v, bool),
              "string": isinstance(v, str), "object": isinstance(v, dict),
              "list": isinstance(v, list)}[kind]
        if not ok:
            raise InputError("%s: key '%s': expected %s %s, got %s" % (
                self.path, name, "an" if kind == "object" else "a", kind, json.dumps(v)[:40]))
        # json.load takes NaN and Infinity, which no report holds and matplotlib cannot place.
        if kind == "number" and (not math.isfinite(v) or v < 0):
            raise InputError("%s: key '%s': expected a number >= 0, got %s" % (self.path, name, v))
        return v


def read_report(path):
    data = load_json(path)
    r = Reader(path)
    if not isinstance(data, dict):
        raise InputError("%s: expected a JSON object (a tpusim report.json)" % path)
    schema = r.get(data, "schema", "", "string")
    if schema != "tpusim.report/1":
        raise InputError("%s: key 'schema': expected tpusim.report/1, got %s" % (path, schema))
    rep = {k: r.get(data, k, "") for k in ("cycles", "seconds", "clock_hz", "macs")}
    rep["chip"] = r.get(data, "chip", "", "string")
    rep["workload"] = os.path.basename(r.get(data, "workload", "", "string"))
    util = r.get(data, "utilization", "", "object")
    rep["mxu_utilization"] = r.get(util, "mxu", "utilization.")
    energy = r.get(data, "energy_pj", "", "object")
    rep["energy"] = {p: r.get(energy, p, "energy_pj.") for p in ENERGY_PARTS + ("static",)}
    peak = r.get(data, "peak", "", "object")
    macs = r.get(peak, "macs_per_s", "peak.", "object")
    rep["peaks"] = {t: r.get(macs, t, "peak.macs_per_s.") for t in sorted(macs)}
    if not rep["peaks"] or max(rep["peaks"].values()) <= 0:
        raise InputError("%s: key 'peak.macs_per_s': no operand type with a peak > 0" % path)
    rep["bandwidth"] = r.get(peak, "memory_bandwidth_bytes_per_s", "peak.")
    if rep["seconds"] <= 0 or rep["clock_hz"] <= 0:
        raise InputError("%s: key 'seconds' or 'clock_hz' is 0: a run that took no time has "
                         "nothing to plot" % path)
    rep["ops"] = []
    for i, o in enumerate(r.get(data, "ops", "", "list")):
        where = "ops[%d]." % i
        op = {k: r.get(o, k, where) for k in ("id", "start_cycle", "end_cycle", "cycles", "macs",
                                              "hbm_read_bytes", "hbm_write_bytes", "energy_pj",
                                              "mxu_utilization")}
        op["name"] = r.get(o, "name", where, "string")
        parts = r.get(o, "energy_breakdown_pj", where, "object")
        op["energy"] = {p: r.get(parts, p, where + "energy_breakdown_pj.") for p in ENERGY_PARTS}
        rep["ops"].append(op)
    return rep


def read_trace(path):
    """Per track (unit path): its intervals in seconds, from the complete ("X") events."""
    data = load_json(path)
    r = Reader(path)
    if not isinstance(data, dict):
        raise InputError("%s: expected a JSON object (a tpusim trace.json)" % path)
    names, intervals = {}, {}
    for i, e in enumerate(r.get(data, "traceEvents", "", "list")):
        where = "traceEvents[%d]." % i
        ph = r.get(e, "ph", where, "string")
        key = (r.get(e, "pid", where), r.get(e, "tid", where))
        if ph == "M" and r.get(e, "name", where, "string") == "thread_name":
            names[key] = r.get(r.get(e, "args", where, "object"), "name", where + "args.", "string")
        elif ph == "X":
            start = r.get(e, "ts", where) * 1e-6
            intervals.setdefault(key, []).append((start, start + r.get(e, "dur", where) * 1e-6))
    for key in intervals:
        if key not in names:
            raise InputError("%s: events on pid %s tid %s, which no thread_name names" % (
                path, *key))
    if not names:
        raise InputError("%s: no unit tracks (no thread_name events in 'traceEvents')" % path)
    # A unit whose events overlap spreads them over several threads of one name (its lanes).
    tracks = {}
    for k in sorted(names, key=lambda k: (names[k], k)):
        tracks.setdefault(names[k], []).extend(intervals.get(k, []))
    return tracks


def busy_fraction(intervals, edges):
    """Fraction of each bin [edges[i], edges[i+1]) covered by the union of the intervals."""
    merged = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    if not merged:
        return np.zeros(len(edges) - 1)
    starts = np.array([m[0] for m in merged])
    lengths = np.array([m[1] - m[0] for m in merged])
    before = np.concatenate(([0.0], np.cumsum(lengths)))  # busy time before interval k starts
    k = np.searchsorted(starts, edges, side="right") - 1
    at = np.maximum(k, 0)
    inside = np.clip(edges - starts[at], 0, lengths[at])  # busy time inside interval k so far
    covered = np.where(k >= 0, before[at] + inside, 0.0)
    return np.diff(covered) / np.diff(edges)


def mxu_timeline(rep, edges):
    """The chip's MXU utilization per bin, each operator's own utilization spread evenly over its
    span: it integrates to the run's utilization.mxu, since both count the same PE-cycles."""
    out = np.zeros(len(edges) - 1)
    hz = rep["clock_hz"]
    for op in rep["ops"]:
        if op["cycles"] <= 0 or op["mxu_utilization"] <= 0:
            continue
        s, e = op["start_cycle"] / hz, op["end_cycle"] / hz
        overlap = np.clip(np.minimum(edges[1:], e) - np.maximum(edges[:-1], s), 0, None)
        out += op["mxu_utilization"] * overlap / np.diff(edges)
    return out


def plot_timeline(rep, tracks, bins):
    end = rep["seconds"]
    edges = np.linspace(0.0, end, bins + 1)
    mxu = mxu_timeline(rep, edges)
    names = list(tracks)
    activity = np.array([busy_fraction(tracks[n], edges) for n in names])
    labels = [n + " (dispatch stalled)" if n.endswith(".seq") else n for n in names]
    height = 2.2 + 0.28 * max(len(names), 4)
    fig, (top, heat) = plt.subplots(2, 1, sharex=True, figsize=(11, height),
                                    gridspec_kw={"height_ratios": [2.0, 0.28 * max(len(names), 4)]})
    top.fill_between(edges, np.append(mxu, mxu[-1]), step="post", color=PART_COLOURS["mxu"],
                     alpha=0.8)
    top.set_ylim(0, min(1.0, mxu.max() * 1.15) if mxu.max() > 0 else 1.0)
    top.yaxis.set_major_formatter(pc.percent_formatter())
    top.set_ylabel("MXU utilization\n(PE-cycles, %)")
    top.set_title("%s on %s: utilization over time (%d cycles, %s)\nMXU: each operator's "
                  "utilization spread over its span (mean %.3g%%); units: time with an "
                  "instruction in flight" % (rep["workload"], rep["chip"], rep["cycles"],
                                             pc.eng(end, "s"), 100 * mxu.mean()))
    top.grid(axis="y", alpha=0.3)
    image = heat.imshow(activity, aspect="auto", interpolation="nearest", cmap="viridis",
                        vmin=0, vmax=1, extent=(0, end, len(names), 0))
    heat.set_yticks(np.arange(len(names)) + 0.5)
    heat.set_yticklabels(labels, fontsize=8)
    heat.set_xlim(0, end)
    heat.xaxis.set_major_formatter(pc.formatter_for("s"))
    heat.set_xlabel("simulated time (s)")
    bar = fig.colorbar(image, ax=[top, heat], fraction=0.025, pad=0.01)
    bar.set_label("fraction of bin busy")
    bar.ax.yaxis.set_major_formatter(pc.percent_formatter())
    summary = {n: float(a.mean()) for n, a in zip(names, activity)}
    return fig, float(mxu.mean()), summary


def plot_energy(rep):
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.2),
                                      gridspec_kw={"width_ratios": [1, 1.5]})
    parts = ENERGY_PARTS + ("static",)
    values = [rep["energy"][p] * 1e-12 for p in parts]
    total = sum(values)
    y = np.arange(len(parts))
    left.barh(y, values, color=[PART_COLOURS[p] for p in parts])
    left.set_yticks(y)
    left.set_yticklabels([PART_NAMES[p] for p in parts])
    left.invert_yaxis()
    left.xaxis.set_major_formatter(pc.formatter_for("J"))
    left.set_xlabel("energy (J)")
    left.set_xlim(0, max(values) * 1.45 if total > 0 else 1)
    for yi, v in zip(y, values):
        left.text(v, yi, "  %s (%.1f%%)" % (pc.eng(v, "J"), 100 * v / total if total else 0),
                  va="center", fontsize=8)
    left.set_title("run total %s" % pc.eng(total, "J"))
    left.xaxis.set_major_locator(ticker.MaxNLocator(4))

    ops = sorted(rep["ops"], key=lambda o: (-o["energy_pj"], o["id"]))
    shown, rest = ops[:MAX_ENERGY_OPS], ops[MAX_ENERGY_OPS:]
    # The remainder is named in the title, not drawn: one bar for dozens of operators would
    # dwarf the ones shown.
    rows = [("%d %s" % (o["id"], short(o["name"])), o["energy"]) for o in shown]
    y = np.arange(len(rows))
    left_edge = np.zeros(len(rows))
    for p in ENERGY_PARTS:
        v = np.array([e[p] * 1e-12 for _, e in rows])
        right.barh(y, v, left=left_edge, color=PART_COLOURS[p], label=PART_NAMES[p])
        left_edge += v
    right.set_yticks(y)
    right.set_yticklabels([name for name, _ in rows], fontsize=8)
    right.invert_yaxis()
    right.xaxis.set_major_formatter(pc.formatter_for("J"))
    right.set_xlabel("dynamic energy (J)")
    right.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    title = "the %d operators with the most dynamic energy" % len(shown)
    if rest:
        title += "\n(the other %d: %s; static energy is charged to the run only)" % (
            len(rest), pc.eng(sum(o["energy_pj"] for o in rest) * 1e-12, "J"))
    right.set_title(title)
    fig.suptitle("%s on %s: energy breakdown" % (rep["workload"], rep["chip"]))
    fig.tight_layout()
    return fig


def short(name, width=30):
    return name if len(name) <= width else name[: width - 1] + "\u2026"


def peak_mac_rate(rep):
    """The highest peak and the operand types that reach it ("bf16/int8")."""
    peak = max(rep["peaks"].values())
    return "/".join(t for t in sorted(rep["peaks"]) if rep["peaks"][t] == peak), peak


def bound(op, peak, bandwidth):
    """Roofline bound: compute when the MXUs at peak need at least as long as the off-chip bytes
    at peak bandwidth (arithmetic intensity >= ridge point)."""
    if op["macs"] <= 0:
        return "no MACs"
    traffic = op["hbm_read_bytes"] + op["hbm_write_bytes"]
    if bandwidth <= 0:
        return "compute"
    return "compute" if op["macs"] / peak >= traffic / bandwidth else "memory"


def plot_operators(rep):
    _, peak = peak_mac_rate(rep)
    ops = rep["ops"]
    chosen = sorted(ops, key=lambda o: (-o["cycles"], o["id"]))[:MAX_OPERATORS]
    chosen.sort(key=lambda o: o["id"])  # execution order, top to bottom
    kinds = [bound(o, peak, rep["bandwidth"]) for o in chosen]
    fig, ax = plt.subplots(figsize=(11, 2.4 + 0.24 * max(len(chosen), 4)))
    y = np.arange(len(chosen))
    ax.barh(y, [o["cycles"] for o in chosen], color=[BOUND_COLOURS[k] for k in kinds])
    ax.set_yticks(y)
    ax.set_yticklabels(["%d %s" % (o["id"], short(o["name"])) for o in chosen], fontsize=8)
    ax.xaxis.set_major_formatter(pc.formatter_for(""))
    ax.set_xlabel("operator span (cycles, first start to last end; operators may overlap)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(handles=[Patch(color=BOUND_COLOURS[k], label=BOUND_LABELS[k])
                       for k in BOUND_COLOURS if k in kinds], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_ylim(max(len(chosen), 4) - 0.5, -0.5)  # a lone bar keeps the width of one of four
    which = "all %d operator%s" % (len(ops), "s" if len(ops) > 1 else "") \
        if len(chosen) == len(ops) else \
        "the %d of %d operators with the most cycles" % (len(chosen), len(ops))
    ax.set_title("%s on %s: cycles per operator, %s\ncoloured by roofline bound at the chip's "
                 "peaks" % (rep["workload"], rep["chip"], which))
    fig.tight_layout()
    return fig


def plot_roofline(rep):
    dtype, peak = peak_mac_rate(rep)
    bw = rep["bandwidth"]
    ridge = peak / bw if bw > 0 else None
    points = []
    for op in rep["ops"]:
        if op["macs"] <= 0 or op["cycles"] <= 0:
            continue
        traffic = op["hbm_read_bytes"] + op["hbm_write_bytes"]
        achieved = op["macs"] / (op["cycles"] / rep["clock_hz"])
        points.append((op["macs"] / traffic if traffic else None, achieved,
                       bound(op, peak, bw)))
    known = [p[0] for p in points if p[0] is not None]
    lo = min(known + [ridge or 1.0]) / 4
    hi = max(known + [ridge or 1.0]) * 8
    if hi / lo < 1e3:  # at least three decades, so the axis has labelled ticks
        widen = (1e3 / (hi / lo)) ** 0.5
        lo, hi = lo / widen, hi * widen
    fig, ax = plt.subplots(figsize=(9, 6))
    x = np.logspace(np.log10(lo), np.log10(hi), 400)
    styles = ["-", "--", ":", "-."]
    rates = {}
    for t in sorted(rep["peaks"]):
        if rep["peaks"][t] > 0:
            rates.setdefault(rep["peaks"][t], []).append(t)
    for i, p in enumerate(sorted(rates, reverse=True)):
        t = "/".join(rates[p])
        roof = np.minimum(p, x * bw) if bw > 0 else np.full_like(x, p)
        ax.plot(x, roof, styles[min(i, 3)], color="black", lw=1.6 if i == 0 else 1.0,
                label="%s roof: %s" % (t, pc.eng(p, "MAC/s")))
    if ridge:
        ax.axvline(ridge, color="grey", ls=":", lw=1)
        ax.annotate("ridge point %.0f MAC/B\n(%s / %s)" % (ridge, pc.eng(peak, "MAC/s"),
                                                             pc.eng(bw, "B/s")),
                    xy=(ridge, peak), xytext=(8, -34), textcoords="offset points", fontsize=8)
    for kind in BOUND_COLOURS:
        xs = [p[0] for p in points if p[2] == kind and p[0] is not None]
        ys = [p[1] for p in points if p[2] == kind and p[0] is not None]
        if xs:
            ax.scatter(xs, ys, s=22, color=BOUND_COLOURS[kind], alpha=0.8, zorder=3,
                       label="operator, " + BOUND_LABELS[kind])
    edge = [p[1] for p in points if p[0] is None]
    if edge:
        ax.scatter([hi / 1.6] * len(edge), edge, marker=">", s=30, color=BOUND_COLOURS["compute"],
                   zorder=3, label="operator with no off-chip traffic (intensity \u221e)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ys = [p[1] for p in points] + [peak]
    ax.set_ylim(min(ys) / 4, peak * 3)
    ax.xaxis.set_major_formatter(pc.formatter_for(""))
    ax.yaxis.set_major_formatter(pc.formatter_for(""))
    ax.set_xlabel("arithmetic intensity (MACs per byte of off-chip traffic)")
    ax.set_ylabel("achieved MAC/s (operator MACs / operator span)")
    ax.grid(which="major", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    memory = pc.eng(bw, "B/s") if bw > 0 else "unlimited"
    ax.set_title("%s on %s: roofline (peak %s %s, off-chip %s)" % (
        rep["workload"], rep["chip"], pc.eng(peak, "MAC/s"), dtype, memory))
    fig.tight_layout()
    return fig, dtype, peak, bw, ridge


def main():
    p = pc.Parser(prog="plot_report.py", description=__doc__.split("\n\n")[0],
                  epilog="Writes DIR/{timeline,energy,operators,roofline}.{png,svg}; prints the "
                         "roofline's ridge point and each unit's mean activity.")
    p.add_argument("report", help="a report.json written by tpusim exec/run -o DIR")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="directory for the plots")
    p.add_argument("--format", choices=("png", "svg", "both"), default="png",
                   help="image format (default png)")
    p.add_argument("--trace", metavar="FILE",
                   help="trace.json for the timeline (default: trace.json beside the report)")
    p.add_argument("--bins", type=int, default=200, help="time bins of the timeline (default 200)")
    a = p.parse_args()
    if a.bins < 1:
        p.error("--bins: expected an integer >= 1, got %d" % a.bins)
    rep = read_report(a.report)
    trace_path = a.trace or os.path.join(os.path.dirname(a.report) or ".", "trace.json")
    tracks = read_trace(trace_path)
    try:
        os.makedirs(a.out, exist_ok=True)
    except OSError as e:
        raise InputError("%s: cannot create output directory (%s)" % (a.out, e.strerror))
    formats = ("png", "svg") if a.format == "both" else (a.format,)

    bins = int(min(a.bins, max(1, rep["cycles"])))
    timeline, mxu_mean, activity = plot_timeline(rep, tracks, bins)
    roofline, dtype, peak, bw, ridge = plot_roofline(rep)
    figures = {"timeline": timeline, "energy": plot_energy(rep),
               "operators": plot_operators(rep), "roofline": roofline}
    for name in FIGURES:
        for fmt in formats:
            path = os.path.join(a.out, "%s.%s" % (name, fmt))
            pc.save(figures[name], path, fmt)
            print("wrote " + path)
        pc.close(figures[name])
    if ridge:
        print("roofline: peak %s (%s), off-chip %s, ridge point %.1f MAC/B" % (
            pc.eng(peak, "MAC/s"), dtype, pc.eng(bw, "B/s"), ridge))
    else:
        print("roofline: peak %s (%s), off-chip bandwidth unlimited (memory.model ideal): "
              "no ridge point" % (pc.eng(peak, "MAC/s"), dtype))
    print("timeline: MXU utilization mean %.4f" % mxu_mean)
    for name, mean in activity.items():
        print("timeline: %s busy %.4f" % (name, mean))


if __name__ == "__main__":
    pc.run(main)
