"""docs/benchmarks.png: queries per second per name, one bar per server, so the
gaps between the servers show at a glance."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.bench.dns_results import Report
from tests.bench.dns_zone import CASES

HATCHES = {"powerdns-shared": "//", "powerdns-nocache": ".."}
COLOURS = {
    "tmdns": "#1f77b4",
    "gdnsd": "#2ca02c",
    "powerdns-shared": "#ff7f0e",
    "powerdns-nocache": "#8c1c13",
}


def chart(report: Report, path: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        sys.exit("matplotlib is missing: pip install -e '.[dev]' (or matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    keys = list(report.titles)
    width = 0.8 / len(keys)
    figure, axes = plt.subplots(figsize=(12, 5.5))
    for i, key in enumerate(keys):
        values = [getattr(report.get(key, c.key), "qps", 0.0) for c in CASES]
        offsets = [x + (i - (len(keys) - 1) / 2) * width for x in range(len(CASES))]
        bars = axes.bar(
            offsets,
            values,
            width,
            label=report.titles[key],
            color=COLOURS.get(key, "#d62728"),
            hatch=HATCHES.get(key),
            edgecolor="white",
        )
        axes.bar_label(
            bars, labels=[f"{v / 1000:.0f}k" for v in values], fontsize=7, padding=2
        )
    axes.set_xticks(range(len(CASES)), [c.label for c in CASES])
    axes.set_ylabel("queries per second")
    axes.set_title(
        f"DNS queries per second, one core each (dnsperf, {report.seconds:g} s "
        f"per bar, {report.date[:10]})"
    )
    axes.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    axes.legend(
        fontsize=8,
        ncol=len(keys),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.08),
        frameon=False,
    )
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
