"""The results of `make bench` as a terminal table, docs/benchmarks.md and the
chart docs/benchmarks.png."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from tests.bench.dns_zone import CASES
from tests.bench.dnsperf import CLIENTS, OUTSTANDING, Measurement

MAIN = ("tmdns", "gdnsd", "powerdns")
DEBIAN = ("dnsperf", "gdnsd", "pdns-server", "pdns-backend-bind")
PYTHON = ("tmdns", "dnspython", "matplotlib")
FULL = 0.95  # a process using this much of its core is the bottleneck
SHORT = {
    "powerdns": "default",
    "powerdns-shared": "shared Lua",
    "powerdns-nocache": "no packet cache",
}


@dataclass
class Report:
    seconds: float
    command: str
    date: str
    titles: dict[str, str] = field(default_factory=dict)  # server key -> title
    results: dict[tuple[str, str], Measurement] = field(default_factory=dict)
    files: dict[str, dict[str, str]] = field(default_factory=dict)
    load_before: str = ""
    load_after: str = ""

    def get(self, server: str, case: str) -> Measurement | None:
        return self.results.get((server, case))


def _qps(m: Measurement | None) -> str:
    return f"{m.qps:,.0f}" if m else "–"


def _ratio(a: Measurement | None, b: Measurement | None) -> str:
    return f"{a.qps / b.qps:.2f}" if a and b and b.qps else "–"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _lost(m: Measurement | None) -> str:
    return str(m.lost) if m else "–"


def main_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    head = [
        "name",
        "tmdns QPS",
        "gdnsd QPS",
        "PowerDNS QPS",
        "tmdns/gdnsd",
        "tmdns/PowerDNS",
        "tmdns avg ms",
        "tmdns p99 ms",
        "lost tmdns/gdnsd/PowerDNS",
    ]
    rows = []
    for case in CASES:
        t, g, p = (report.get(s, case.key) for s in MAIN)
        rows.append(
            [
                case.label,
                _qps(t),
                _qps(g),
                _qps(p),
                _ratio(t, g),
                _ratio(t, p),
                _ms(t.avg_ms if t else None),
                _ms(t.p99_ms if t else None),
                "/".join(_lost(m) for m in (t, g, p)),
            ]
        )
    return head, rows


def variant_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    keys = [k for k in report.titles if k.startswith("powerdns")]
    head = ["name"] + [f"{SHORT.get(k, k)} QPS" for k in keys]
    head.append("packet cache hits (default)")
    rows = []
    for case in CASES:
        ms = [report.get(k, case.key) for k in keys]
        default = report.get("powerdns", case.key)
        hits = default.cache_hits if default else None
        rows.append(
            [case.label, *(_qps(m) for m in ms), "–" if hits is None else f"{hits:.0%}"]
        )
    return head, rows


def detail_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    head = [
        "server",
        "name",
        "QPS",
        "avg ms",
        "p50 ms",
        "p99 ms",
        "max ms",
        "lost",
        "reply bytes",
        "server CPU",
        "dnsperf CPU",
        "busy core",
        "response codes",
    ]
    rows = []
    for key, title in report.titles.items():
        for case in CASES:
            m = report.get(key, case.key)
            if m is None:
                continue
            rows.append(
                [
                    title,
                    case.label,
                    _qps(m),
                    _ms(m.avg_ms),
                    _ms(m.p50_ms),
                    _ms(m.p99_ms),
                    _ms(m.max_ms),
                    str(m.lost),
                    str(m.reply_bytes),
                    f"{m.server_cpu:.2f}",
                    f"{m.client_cpu:.2f}",
                    bound(m),
                    m.rcodes,
                ]
            )
    return head, rows


def text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(head), rule, *(line(r) for r in rows)])


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    align = ["---"] + ["---:"] * (len(head) - 1)
    lines = [head, align, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def print_tables(report: Report) -> None:
    print()
    print(f"DNS benchmark: {report.seconds:g} s per measurement, queries per second")
    print(text_table(*main_rows(report)))
    if len([k for k in report.titles if k.startswith("powerdns")]) > 1:
        print()
        print(text_table(*variant_rows(report)))
    print()
    print(text_table(*detail_rows(report)))


# --- the machine -----------------------------------------------------------------


def _output(cmd: list[str]) -> str:
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=20, check=False
        ).stdout
    except OSError:
        return ""


def cpu_model() -> str:
    for line in _output(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return f"{int(line.split()[1]) / 2**20:.0f} GiB"
    return "unknown"


def debian_versions() -> dict[str, str]:
    out = _output(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *DEBIAN])
    found = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    return {name: found.get(name, "not installed") for name in DEBIAN}


def python_versions() -> dict[str, str]:
    versions = {"Python": platform.python_version()}
    for name in PYTHON:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# --- docs ------------------------------------------------------------------------

NOTES = """\
How to read it:

* Each server ran alone, pinned to core 0, with dnsperf pinned to core 1: one
  name per run, each for the same time, over UDP on 127.0.0.1, with EDNS
  (`-e`), {clients} sockets (`-c {clients}`) and {outstanding} queries in flight
  (`-q {outstanding}`), no rate cap. QPS is dnsperf's; the latencies come from
  its per-query `-v` lines (p99 is the nearest rank); a query unanswered after
  5 s is lost. "server CPU" is the share of a core the server process used
  meanwhile (from /proc), "dnsperf CPU" the same for dnsperf, and "busy
  core" says which of them used its whole core (0.95 or more): the one that
  set the pace.
* The record data is the same on all three servers, checked before measuring
  (priority: always 127.0.0.1; weighted: one of three at 50/30/20; multivalue:
  2 distinct of 4; SRV: three targets at priority 10, weights 50/30/20, port
  5060; subnet: 127.0.3.1 for ECS 10.1.0.0/16, 127.0.3.2 otherwise; the apex
  SOA with the same serial and timers).
* **gdnsd 3 never adds the SRV targets' A records to the additional section**
  (gdnsd 3.0 minimised every response), so its SRV reply is smaller than the
  two others' (3 SRV records against 3 SRV plus 3 A: see "reply bytes"). It
  also clamps the SOA TTL to the zone's negative TTL (60 s, not 3600 s). Its
  multivalue name is the `weighted` plugin with `multi = true` over two groups
  of two equal addresses, which answers one address per group: always 2 of the
  4, at random (never both of one group), where tmdns answers a rotating window
  of 2 and PowerDNS `pickrandomsample(2, …)`. Its priority name is `metafo`
  over two single-address datacenters, both `up` (not monitored), as in tmdns
  (monitor `none`).
* **PowerDNS synthesises LUA records anew for every query, and their answers
  never enter its packet cache** (the packet handler marks them `noCache`):
  the packet cache (`cache-ttl=20`, on by default and left on) serves only the
  static SOA and SRV names, as the "packet cache hits" column shows. With
  `enable-lua-records=yes` each LUA query also builds a fresh Lua state;
  `shared` keeps one per thread (the variant measured beside it). Its
  priority name is `ifportup(port, {{'127.0.0.1', '127.0.0.2'}})` against a TCP
  listener the benchmark opens on 127.0.0.1 only: the `ifportup` of PowerDNS
  4.7 takes one flat list and answers a random address among those up, so the
  primary wins because nothing listens on the secondary (ordered sets exist
  only in `ifurlup`). Its other settings are the defaults:
  `receiver-threads=1`, `distributor-threads=3`, `cache-ttl=20`,
  `query-cache-ttl=20`, `negquery-cache-ttl=60`.
* tmdns answers plain queries from replies pre-encoded per snapshot; a query
  with ECS (the subnet row) takes its full path, decoded and answered per
  query. It runs DNS, API, prober and snapshot refresh in one Python process;
  gdnsd runs 2 UDP threads, PowerDNS 1 receiver and 3 distributor threads, all
  confined to the same single core.
"""


def bound(m: Measurement) -> str:
    """Which side used its whole core in a run: the one that set the pace."""
    if m.server_cpu >= FULL:
        return "server"
    return "dnsperf" if m.client_cpu >= FULL else "neither"


def limits(report: Report) -> list[str]:
    """A note for each server that dnsperf, on its one core, could not load
    fully: there its QPS is a lower bound."""
    notes = []
    for key, title in report.titles.items():
        cases = [
            c.label
            for c in CASES
            if (m := report.get(key, c.key)) is not None and bound(m) == "dnsperf"
        ]
        if cases:
            notes.append(
                f"* {title}: dnsperf, not the server, used its whole core in "
                f"{len(cases)} of {len(CASES)} runs ({', '.join(cases)}); there "
                "its QPS is a lower bound."
            )
    return notes


def markdown(report: Report, chart: str) -> str:
    machine = [
        ("CPU", cpu_model()),
        ("cores", str(os.cpu_count())),
        ("memory", memory()),
        ("kernel", f"{platform.system()} {platform.release()}"),
        ("load average before / after", f"{report.load_before} / {report.load_after}"),
    ]
    versions = python_versions() | debian_versions()
    parts = [
        "# DNS benchmark",
        "",
        "`make bench` (`python -m tests.bench.dns_bench`) serves the same zone "
        "`tm.example.` from tmdns, gdnsd and PowerDNS in turn and measures each "
        "name with dnsperf. Regenerate this page with it.",
        "",
        f"Date: {report.date}. Command: `{report.command}` "
        f"({report.seconds:g} s per measurement).",
        "",
        "## Queries per second",
        "",
        markdown_table(*main_rows(report)),
        "",
        f"![Queries per second per name and server]({chart})",
        "",
        NOTES.format(clients=CLIENTS, outstanding=OUTSTANDING).rstrip(),
        *limits(report),
        "",
    ]
    if len([k for k in report.titles if k.startswith("powerdns")]) > 1:
        parts += [
            "## PowerDNS variants",
            "",
            markdown_table(*variant_rows(report)),
            "",
        ]
    parts += [
        "## Every run",
        "",
        markdown_table(*detail_rows(report)),
        "",
        "## Machine and versions",
        "",
        *(f"* {k}: {v}" for k, v in machine),
        *(f"* {k}: {v}" for k, v in versions.items()),
        "",
        "The machine may be shared: other work running at the same time lowers "
        "the numbers. The load average counts the benchmark's own processes too "
        "(it keeps both cores busy), so only a high value before it started "
        "points at other work.",
        "",
        "## Configurations",
        "",
    ]
    for key, files in report.files.items():
        parts += [f"<details><summary>{report.titles[key]}</summary>", ""]
        for name, text in files.items():
            parts += [f"`{name}`", "", "```", text.rstrip(), "```", ""]
        parts += ["</details>", ""]
    return "\n".join(parts)


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
    hatches = {"powerdns-shared": "//", "powerdns-nocache": ".."}
    colours = {
        "tmdns": "#1f77b4",
        "gdnsd": "#2ca02c",
        "powerdns-shared": "#ff7f0e",
        "powerdns-nocache": "#8c1c13",
    }
    for i, key in enumerate(keys):
        values = [getattr(report.get(key, c.key), "qps", 0.0) for c in CASES]
        offsets = [x + (i - (len(keys) - 1) / 2) * width for x in range(len(CASES))]
        bars = axes.bar(
            offsets,
            values,
            width,
            label=report.titles[key],
            color=colours.get(key, "#d62728"),
            hatch=hatches.get(key),
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
