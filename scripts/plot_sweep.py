#!/usr/bin/env python3
"""Plots a tpusim sweep's results.csv: one metric against one axis (or any two columns), one line
or colour per value of a hue column, one panel per workload, optionally with the Pareto front of
two columns that are both to be minimised (e.g. energy_j vs seconds). docs/plots.md has examples."""

import csv
import math
import os

import plot_common as pc
from plot_common import InputError

import matplotlib.pyplot as plt  # noqa: E402  (plot_common selects the Agg backend first)
from matplotlib import ticker  # noqa: E402

REQUIRED = ("point", "workload", "status")
# Label and unit of the metric columns tpusim sweep writes; sweep axes are labelled by their key.
METRICS = {
    "cycles": ("cycles", ""),
    "seconds": ("run time", "s"),
    "mxu_utilization": ("MXU utilization", "fraction"),
    "vpu_utilization": ("VPU utilization", "fraction"),
    "memory_bw_utilization": ("off-chip bandwidth utilization", "fraction"),
    "hbm_read_bytes": ("off-chip bytes read", "B"),
    "hbm_write_bytes": ("off-chip bytes written", "B"),
    "macs": ("MACs", "MAC"),
    "energy_j": ("energy", "J"),
    "edp_js": ("energy-delay product", "J\u00b7s"),
}


def label(column):
    name, unit = METRICS.get(column, (column, None))
    if unit is None:
        return column
    return "%s (%s)" % (name, {"fraction": "%", "": "count"}.get(unit, unit)) if unit != "" \
        else name


def number(text):
    """float(text), or None when the text is not a finite number."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def read_results(path):
    """(header, rows): rows are dicts of the cells plus "_line", the line number in the file."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            table = [(reader.line_num, row) for row in reader]
    except FileNotFoundError:
        raise InputError("%s: no such file" % path)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise InputError("%s: cannot read (%s)" % (path, getattr(e, "strerror", None) or e))
    if not table or not any(c.strip() for c in table[0][1]):
        raise InputError("%s: empty file (expected a results.csv header)" % path)
    header = table[0][1]
    for column in REQUIRED:
        if column not in header:
            raise InputError("%s:1: missing column '%s' (not a tpusim results.csv?)" % (
                path, column))
    rows = []
    for line, cells in table[1:]:
        if not cells:
            continue
        if len(cells) != len(header):
            raise InputError("%s:%d: %d fields, the header has %d" % (path, line, len(cells),
                                                                    len(header)))
        row = dict(zip(header, cells))
        if row["status"] not in ("ok", "failed"):
            raise InputError("%s:%d: column 'status': expected ok or failed, got '%s'" % (
                path, line, row["status"]))
        row["_line"] = line
        rows.append(row)
    return header, rows


def need_column(path, header, column, option):
    if column not in header:
        shown = ", ".join(c for c in header)
        raise InputError("%s: %s: no column '%s' (columns: %s)" % (path, option, column, shown))


def numeric(path, rows, column):
    """The column as numbers; every cell must be one."""
    out = []
    for r in rows:
        v = number(r[column])
        if v is None:
            raise InputError("%s:%d: column '%s': expected a number, got '%s'" % (
                path, r["_line"], column, r[column]))
        out.append(v)
    return out


def all_numeric(rows, column):
    return all(number(r[column]) is not None for r in rows)


def ordered(values, as_numbers):
    """Distinct values: numerically sorted when numeric, else in order of first appearance."""
    seen = list(dict.fromkeys(values))
    return sorted(seen, key=float) if as_numbers else seen


def pareto_front(points):
    """Indices of the points no other point dominates, both coordinates minimised; sorted by x."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1]))
    front, best_y = [], math.inf
    for i in order:
        x, y = points[i]
        if y < best_y:
            front.append(i)
            best_y = y
        elif y == best_y and front and points[front[-1]] == (x, y):
            front.append(i)  # an exact duplicate of a front point is not dominated either
    return front


def minor_log_formatter(unit, ratio, axis):
    """Labels for a log axis's minor ticks (2..9 x 10^k): all of them within a decade, 2 and 5
    within about two, none beyond, so that a narrow range still gets several labels."""
    eng = pc.formatter_for(unit)
    eng.set_axis(axis)  # a percent formatter reads its axis's range
    keep = range(2, 10) if ratio < 8 else (2, 5) if ratio < 60 else ()

    def label(v, pos):
        mantissa = round(v / 10 ** math.floor(math.log10(v) + 1e-9))
        return eng(v, pos) if mantissa in keep else ""
    return ticker.FuncFormatter(label)


def draw_panel(ax, path, rows, a, hues, x_numeric, kind):
    xs = numeric(path, rows, a.x) if x_numeric else None
    categories = None if x_numeric else ordered([r[a.x] for r in rows], False)
    ys = numeric(path, rows, a.y)
    if not x_numeric:
        xs = [categories.index(r[a.x]) for r in rows]
    groups = {}
    for r, x, y in zip(rows, xs, ys):
        groups.setdefault(r[a.hue] if a.hue else "", []).append((x, y))
    colours = plt.get_cmap("tab10")
    for i, h in enumerate(hues):
        pts = groups.get(h, [])
        if not pts:
            continue
        name = "%s = %s" % (a.hue, h) if a.hue else None
        colour = colours(i % 10)
        if kind == "line":
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=colour, label=name,
                    ms=5, lw=1.5)
        else:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], color=colour, label=name, s=28,
                       zorder=3)
    if categories is not None:
        ax.set_xlim(-0.5, len(categories) - 0.5)
        ax.set_xticks(range(len(categories)))
        ax.set_xticklabels([os.path.basename(c) for c in categories],
                           rotation=30 if max(len(c) for c in categories) > 8 else 0, ha="right"
                           if max(len(c) for c in categories) > 8 else "center", fontsize=8)
    return xs, ys


def main():
    p = pc.Parser(prog="plot_sweep.py", description=__doc__.split("\n\n")[0],
                  epilog="Metric columns: %s. Any sweep axis column (e.g. core.mxu.rows) works "
                         "as --x or --hue; failed points are skipped." % ", ".join(METRICS))
    p.add_argument("results", help="a results.csv written by tpusim sweep")
    p.add_argument("--x", required=True, metavar="COLUMN", help="column on the x axis")
    p.add_argument("--y", required=True, metavar="COLUMN", help="numeric column on the y axis")
    p.add_argument("--hue", metavar="COLUMN", help="one colour (and line) per value of this column")
    p.add_argument("--pareto", metavar="X,Y",
                   help="mark the Pareto front of two numeric columns, both minimised, per "
                        "workload, and print its points")
    p.add_argument("--workload", metavar="NAME", help="only this workload's rows")
    p.add_argument("--kind", choices=("auto", "line", "scatter"), default="auto",
                   help="auto: lines when --x is a numeric sweep axis (not a metric) and each "
                        "hue has one point per x; points otherwise")
    p.add_argument("--logx", action="store_true", help="logarithmic x axis")
    p.add_argument("--logy", action="store_true", help="logarithmic y axis")
    p.add_argument("-o", "--out", required=True, metavar="FILE", help="FILE.png or FILE.svg")
    a = p.parse_args()
    fmt = os.path.splitext(a.out)[1].lower().lstrip(".")
    if fmt not in ("png", "svg"):
        p.error("-o %s: the file name must end in .png or .svg" % a.out)
    pareto = None
    if a.pareto is not None:
        pareto = a.pareto.split(",")
        if len(pareto) != 2 or not all(pareto):
            p.error("--pareto: expected two columns X,Y, got '%s'" % a.pareto)

    header, rows = read_results(a.results)
    for option, column in (("--x", a.x), ("--y", a.y), ("--hue", a.hue)) + (
            tuple(("--pareto", c) for c in pareto) if pareto else ()):
        if column:
            need_column(a.results, header, column, option)
    if a.workload is not None:
        known = ordered([r["workload"] for r in rows if r["status"] == "ok"], False)
        rows = [r for r in rows if r["workload"] == a.workload]
    failed = sum(r["status"] == "failed" for r in rows)
    rows = [r for r in rows if r["status"] == "ok"]
    if a.workload is not None:
        if not rows:
            raise InputError("%s: --workload: no successful rows for '%s' (workloads: %s)" % (
                a.results, a.workload, ", ".join(known)))
    if not rows:
        raise InputError("%s: no successful points to plot (%d failed)" % (a.results, failed))
    x_numeric = all_numeric(rows, a.x)
    for option, column, log in (("--logx", a.x, a.logx), ("--logy", a.y, a.logy)):
        if log:
            if not all_numeric(rows, column):
                p.error("%s: column '%s' is not numeric" % (option, column))
            bad = [r for r in rows if number(r[column]) <= 0]
            if bad:
                raise InputError("%s:%d: %s: column '%s' is %s, which a log axis cannot show" % (
                    a.results, bad[0]["_line"], option, column, bad[0][column]))
    hues = ordered([r[a.hue] for r in rows], all_numeric(rows, a.hue)) if a.hue else [""]
    workloads = ordered([r["workload"] for r in rows], False)
    kind = a.kind
    if kind == "auto":
        keys = [(r["workload"], r[a.hue] if a.hue else "", r[a.x]) for r in rows]
        # A line joins the values of one sweep axis; a metric against a metric is a cloud.
        kind = "line" if x_numeric and a.x not in METRICS and len(set(keys)) == len(keys) \
            else "scatter"

    cols = min(len(workloads), 3)
    panel_rows = (len(workloads) + cols - 1) // cols
    fig, axes = plt.subplots(panel_rows, cols, figsize=(5.6 * cols + 1.5, 4.4 * panel_rows + 0.6),
                             squeeze=False)
    fronts = []
    for i, w in enumerate(workloads):
        ax = axes[i // cols][i % cols]
        mine = [r for r in rows if r["workload"] == w]
        xs, ys = draw_panel(ax, a.results, mine, a, hues, x_numeric, kind)
        if pareto:
            pts = list(zip(numeric(a.results, mine, pareto[0]),
                           numeric(a.results, mine, pareto[1])))
            front = pareto_front(pts)
            fronts.append((w, [(mine[j], pts[j]) for j in front], len(mine)))
            ax.scatter([xs[j] for j in front], [ys[j] for j in front], s=110, facecolors="none",
                       edgecolors="black", linewidths=1.4, zorder=4,
                       label="Pareto front (min %s, %s)" % tuple(pareto))
            if [a.x, a.y] in (pareto, pareto[::-1]) and x_numeric:
                line = sorted((xs[j], ys[j]) for j in front)
                ax.step([q[0] for q in line], [q[1] for q in line], where="post",
                        color="black", lw=0.9, ls="--", zorder=2)
        ax.set_title("workload %s" % w)
        ax.set_xlabel(label(a.x))
        ax.set_ylabel(label(a.y))
        for axis, column, log in ((ax.xaxis, a.x, a.logx), (ax.yaxis, a.y, a.logy)):
            unit = METRICS[column][1] if column in METRICS else ""
            if log:
                (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log")
                # Within about a decade the major (power of ten) ticks are one or none: label
                # the minor ones too.
                values = xs if axis is ax.xaxis else ys
                axis.set_minor_formatter(minor_log_formatter(unit, max(values) / min(values), axis))
            if column in METRICS and (axis is ax.yaxis or x_numeric):
                axis.set_major_formatter(pc.formatter_for(unit))
        distinct = sorted(set(xs))
        if x_numeric and a.x not in METRICS and len(distinct) <= 12:
            # A sweep axis has few values (64, 128, 256): tick exactly those, written plainly.
            ax.xaxis.set_major_locator(ticker.FixedLocator(distinct))
            ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: "%g" % v))
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.grid(alpha=0.3)
        if a.hue or pareto:
            ax.legend(fontsize=8)
    for j in range(len(workloads), panel_rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    title = "%s vs %s" % (METRICS.get(a.y, (a.y,))[0], METRICS.get(a.x, (a.x,))[0])
    if a.hue:
        title += ", by %s" % a.hue
    fig.suptitle("%s (%s, %d points%s)" % (
        title, a.results, len(rows), ", %d failed not shown" % failed if failed else ""))
    fig.tight_layout()
    out_dir = os.path.dirname(a.out)
    if out_dir:
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            raise InputError("%s: cannot create output directory (%s)" % (out_dir, e.strerror))
    pc.save(fig, a.out, fmt)
    pc.close(fig)
    print("wrote %s (%d points, %d failed skipped)" % (a.out, len(rows), failed))
    for w, front, total in fronts:
        print("pareto front of workload %s, minimising %s and %s: %d of %d points" % (
            w, pareto[0], pareto[1], len(front), total))
        for r, (px, py) in front:
            print("  point %s: %s=%.6g %s=%.6g" % (r["point"], pareto[0], px, pareto[1], py))


if __name__ == "__main__":
    pc.run(main)
