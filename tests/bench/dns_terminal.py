"""The tables of `make bench` printed as aligned plain text, for the terminal
the benchmark was started from."""

from __future__ import annotations

from tests.bench import (
    dns_fullpath,
    dns_latency,
    dns_memory,
    dns_metrics_cost,
    dns_scaling,
    dns_tables,
)
from tests.bench.dns_results import Report


def text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(head), rule, *(line(r) for r in rows)])


def _section(title: str, table: dns_tables.Table, summary: str) -> None:
    print()
    print(title)
    print(text_table(*table))
    if summary:
        print(summary)


def print_tables(report: Report) -> None:
    print()
    print(f"DNS benchmark: {report.seconds:g} s per measurement, queries per second")
    print(text_table(*dns_tables.main_rows(report)))
    if dns_tables.has_variants(report):
        print()
        print(text_table(*dns_tables.variant_rows(report)))
    if report.scaling:
        _section(dns_scaling.heading(report), dns_scaling.rows(report), "")
    if report.full_path:
        _section(
            dns_fullpath.heading(report),
            dns_tables.fullpath_rows(report),
            dns_tables.fullpath_summary(report),
        )
    if report.metrics_cost:
        _section(
            dns_metrics_cost.heading(report),
            dns_metrics_cost.rows(report),
            dns_metrics_cost.summary(report),
        )
    if report.latency:
        _section(
            dns_latency.heading(report),
            dns_tables.latency_rows(report),
            dns_tables.latency_summary(report),
        )
    if report.memory:
        _section(
            dns_memory.heading(report),
            dns_tables.memory_rows(report),
            dns_tables.memory_summary(report),
        )
    print()
    print(text_table(*dns_tables.detail_rows(report)))
