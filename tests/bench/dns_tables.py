"""The tables of `make bench` as rows of text cells, assembled once from a
Report so the terminal and docs/benchmarks.md show the same figures."""

from __future__ import annotations

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


def scaling_rows(report: Report) -> Table:
    """tmdns with 1 and with N workers: one row per run, each against the
    1-worker run of the same name."""
    head = [
        "name",
        "workers",
        "QPS",
        "vs 1 worker",
        "p99 ms",
        "lost",
        "server CPU",
        "CPU per process",
        "dnsperf CPU",
        "QPS per server core",
    ]
    rows = []
    for case in CASES:
        runs = sorted(
            ((w, m) for (w, key), m in report.scaling.items() if key == case.key),
            key=lambda run: run[0],
        )
        one = report.scaling.get((1, case.key))
        for workers, m in runs:
            rows.append(
                [
                    case.label,
                    str(workers),
                    _qps(m),
                    _ratio(m, one) if workers > 1 else "–",
                    _ms(m.p99_ms),
                    str(m.lost),
                    f"{m.server_cpu:.2f}",
                    " + ".join(f"{c:.2f}" for c in m.process_cpu),
                    f"{m.client_cpu:.2f}",
                    f"{m.qps / m.server_cpu:,.0f}" if m.server_cpu else "–",
                ]
            )
    return head, rows


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
