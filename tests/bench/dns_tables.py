"""The tables of `make bench` as rows of text cells, assembled once from a
Report so the terminal and docs/benchmarks.md show the same figures."""

from __future__ import annotations

from tests.bench.dns_fullpath import GOAL_PER_CORE
from tests.bench.dns_latency import GOAL_P99_MS, SHARE
from tests.bench.dns_results import Report, bound
from tests.bench.dns_zone import CASES
from tests.bench.dnsperf import Measurement

MAIN = ("tmdns", "gdnsd", "powerdns")
SHORT = {
    "powerdns": "default",
    "powerdns-shared": "shared Lua",
    "powerdns-nocache": "no packet cache",
}

Table = tuple[list[str], list[list[str]]]  # head, rows


def _qps(m: Measurement | None) -> str:
    return f"{m.qps:,.0f}" if m else "–"


def _ratio(a: Measurement | None, b: Measurement | None) -> str:
    return f"{a.qps / b.qps:.2f}" if a and b and b.qps else "–"


def _per_core(m: Measurement | None) -> float | None:
    """Queries per second of server CPU: the figure that does not depend on how
    much of a core the server could get (dnsperf shares the machine)."""
    if not m or m.server_cpu <= 0:
        return None
    return m.qps / m.server_cpu


def _core_ratio(a: Measurement | None, b: Measurement | None) -> str:
    x, y = _per_core(a), _per_core(b)
    return f"{x / y:.2f}" if x and y else "–"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _lost(m: Measurement | None) -> str:
    return str(m.lost) if m else "–"


def main_rows(report: Report) -> Table:
    head = [
        "name",
        "tmdns QPS",
        "gdnsd QPS",
        "PowerDNS QPS",
        "tmdns/gdnsd",
        "tmdns/gdnsd per core",
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
                _core_ratio(t, g),
                _ratio(t, p),
                _ms(t.avg_ms if t else None),
                _ms(t.p99_ms if t else None),
                "/".join(_lost(m) for m in (t, g, p)),
            ]
        )
    return head, rows


def has_variants(report: Report) -> bool:
    return len([k for k in report.titles if k.startswith("powerdns")]) > 1


def variant_rows(report: Report) -> Table:
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


def _per_core_text(m: Measurement | None) -> str:
    value = _per_core(m)
    return "–" if value is None else f"{value:,.0f}"


def fullpath_rows(report: Report) -> Table:
    """tmdns on the full path against the fast path of the main table, by
    queries per server-CPU-second (what a query costs, whatever CPU it got)."""
    head = [
        "name",
        "QPS",
        "server CPU",
        "per core",
        "p99 ms",
        "fast path per core",
        "full/fast per core",
    ]
    rows = []
    for case in CASES:
        m = report.full_path.get(case.key)
        if m is None:
            continue
        fast = report.get("tmdns", case.key)
        rows.append(
            [
                case.label,
                _qps(m),
                f"{m.server_cpu:.2f}",
                _per_core_text(m),
                _ms(m.p99_ms),
                _per_core_text(fast),
                _core_ratio(m, fast),
            ]
        )
    return head, rows


def fullpath_summary(report: Report) -> str:
    """The goal and how many names met it, in one sentence."""
    measured = [
        (case.label, value)
        for case in CASES
        if (value := _per_core(report.full_path.get(case.key))) is not None
    ]
    if not measured:
        return ""
    met = sum(value >= GOAL_PER_CORE for _, value in measured)
    label, lowest = min(measured, key=lambda item: item[1])
    return (
        f"Goal: at least {GOAL_PER_CORE:,} queries per server-CPU-second on the "
        f"full path. Met on {met} of {len(measured)} names; the lowest is "
        f"{lowest:,.0f} ({label})."
    )


def latency_rows(report: Report) -> Table:
    """tmdns with dnsperf capped at SHARE of the maximum of the main table."""
    head = ["name", "offered q/s", "answered q/s", "p50 ms", "p99 ms", "max ms", "lost"]
    rows = []
    for case in CASES:
        found = report.latency.get(case.key)
        if found is None:
            continue
        rate, m = found
        rows.append(
            [
                case.label,
                f"{rate:,}",
                _qps(m),
                _ms(m.p50_ms),
                _ms(m.p99_ms),
                _ms(m.max_ms),
                str(m.lost),
            ]
        )
    return head, rows


def latency_summary(report: Report) -> str:
    """The goal and how many names met it, in one sentence."""
    runs = [
        (case.label, found[1])
        for case in CASES
        if (found := report.latency.get(case.key))
    ]
    if not runs:
        return ""
    missed = [label for label, m in runs if m.p99_ms > GOAL_P99_MS]
    worst_label, worst = max(runs, key=lambda run: run[1].p99_ms)
    text = (
        f"Goal: p99 at most {GOAL_P99_MS:g} ms at {SHARE:.0%} of the maximum. "
        f"Met on {len(runs) - len(missed)} of {len(runs)} names; the highest p99 "
        f"is {worst.p99_ms:.2f} ms ({worst_label})"
    )
    if missed and len(missed) < len(runs):
        text += f"; missed on {', '.join(missed)}"
    return text + "."


def memory_rows(report: Report) -> Table:
    """tmdns's resident memory before the first random ECS run and after each;
    "file-backed" is the part that is mapped files (the GeoIP database, code)."""
    head = ["run", "QPS", "RSS after MiB", "change MiB", "file-backed MiB"]
    if not report.memory:
        return head, []
    files = report.memory_file_mib
    before = report.memory[0].rss_mib[0]
    rows = [["before", "–", f"{before:.0f}", "–", f"{files[0]:.0f}"]]
    previous = before
    for run, m in enumerate(report.memory, 1):
        after = m.rss_mib[1]
        file_backed = files[run] if run < len(files) else None
        rows.append(
            [
                str(run),
                _qps(m),
                f"{after:.0f}",
                f"{after - previous:+.0f}",
                "–" if file_backed is None else f"{file_backed:.0f}",
            ]
        )
        previous = after
    return head, rows


def memory_summary(report: Report) -> str:
    """How much the RSS grew in the first run and in the runs after it."""
    if not report.memory:
        return ""
    first = report.memory[0]
    last = report.memory[-1]
    text = (
        f"RSS {first.rss_mib[0]:.0f} MiB before, {first.rss_mib[1]:.0f} MiB after "
        f"run 1 ({first.rss_mib[1] - first.rss_mib[0]:+.0f} MiB)"
    )
    if len(report.memory) > 1:
        text += (
            f", {last.rss_mib[1]:.0f} MiB after run {len(report.memory)} "
            f"({last.rss_mib[1] - first.rss_mib[1]:+.0f} MiB over runs 2 to "
            f"{len(report.memory)})"
        )
    return text + "."


def detail_rows(report: Report) -> Table:
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
        "RSS MiB before → after",
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
                    "{:.0f} → {:.0f}".format(*m.rss_mib),
                    m.rcodes,
                ]
            )
    return head, rows
