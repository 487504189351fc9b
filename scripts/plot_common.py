"""Shared by plot_report.py and plot_sweep.py: one-line input errors with exit code 2, figure
files that appear whole or not at all, deterministic SVG/PNG, and unit-aware tick labels."""

import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display on build machines; must precede pyplot

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402

# SVG element ids are random unless salted, and both formats stamp the date: fix both so two
# runs on the same input give the same bytes.
matplotlib.rcParams["svg.hashsalt"] = "tpusim"
matplotlib.rcParams["figure.dpi"] = 100
matplotlib.rcParams["savefig.dpi"] = 120
matplotlib.rcParams["axes.titlesize"] = "medium"
_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}


class InputError(Exception):
    """A malformed input or an unusable option: reported as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse with tpusim's error convention: one line on stderr, exit code 2."""

    def error(self, message):
        fail("%s: %s (see --help)" % (self.prog, message))


def fail(message):
    print("error: " + message, file=sys.stderr)
    sys.exit(2)


def run(main):
    try:
        main()
    except InputError as e:
        fail(str(e))


def save(fig, path, fmt):
    """Writes through a temporary file and renames it, so a failure leaves no half-written plot."""
    temp = path + ".partial"
    try:
        fig.savefig(temp, format=fmt, metadata=_METADATA[fmt], bbox_inches="tight")
        os.replace(temp, path)
    except OSError as e:
        if os.path.exists(temp):
            os.remove(temp)
        raise InputError("%s: cannot write file (%s)" % (path, e.strerror or e))


def close(fig):
    plt.close(fig)


def eng(value, unit, places=2):
    """45.875e12, "MAC/s" -> "45.88 TMAC/s"."""
    return ticker.EngFormatter(unit=unit, places=places, sep=" ")(value)


# Units of the numbers tpusim writes (report.json keys, results.csv columns); each entry is the
# axis-label unit and a tick formatter.
def percent_formatter():
    return ticker.PercentFormatter(xmax=1.0, decimals=None)  # decimals follow the axis range


def formatter_for(unit):
    if unit == "fraction":
        return percent_formatter()
    if unit in ("", None):
        return ticker.EngFormatter(sep="")
    return ticker.EngFormatter(unit=unit, sep=" ")
