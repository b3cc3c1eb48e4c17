"""The tables of `make bench` printed as aligned plain text, for the terminal
the benchmark was started from."""

from __future__ import annotations

from tests.bench import dns_tables
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


def print_tables(report: Report, scaling_title: str) -> None:
    print()
    print(f"DNS benchmark: {report.seconds:g} s per measurement, queries per second")
    print(text_table(*dns_tables.main_rows(report)))
    if dns_tables.has_variants(report):
        print()
        print(text_table(*dns_tables.variant_rows(report)))
    if report.scaling:
        print()
        print(scaling_title)
        print(text_table(*dns_tables.scaling_rows(report)))
    print()
    print(text_table(*dns_tables.detail_rows(report)))
