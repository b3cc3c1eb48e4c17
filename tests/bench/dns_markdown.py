"""docs/benchmarks.md: the tables of a `make bench` run with what a reader needs
to judge them (how it was measured, where the servers differ, which side set
the pace, the machine, every configuration), so the page stands on its own."""

from __future__ import annotations

import os
import platform

from tests.bench import (
    dns_fullpath,
    dns_latency,
    dns_machine,
    dns_memory,
    dns_metrics_cost,
    dns_scaling,
    dns_tables,
)
from tests.bench.dns_results import Report, bound
from tests.bench.dns_zone import CASES
from tests.bench.dnsperf import CLIENTS, OUTSTANDING


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    align = ["---"] + ["---:"] * (len(head) - 1)
    lines = [head, align, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


NOTES = """\
How to read it:

* Each server ran alone, pinned to core 0, with dnsperf pinned to core 1: one
  name per run, each for the same time, over UDP on 127.0.0.1, with EDNS
  (`-e`), {clients} sockets (`-c {clients}`) and {outstanding} queries in flight
  (`-q {outstanding}`), no rate cap. QPS is dnsperf's; the latencies come from
  its per-query `-v` lines (p99 is the nearest rank); a query unanswered after
  5 s is lost. "server CPU" is the share of a core the server's processes
  used meanwhile (from /proc), "dnsperf CPU" the same for dnsperf, and "busy
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
* tmdns answers from replies encoded once and patched per query
  (docs/behaviour.md, "Fast path and UDP I/O"): per snapshot for the names
  that do not depend on the client, per deciding prefix for the subnet name,
  and dnsperf sends the same ECS /16 in every query, so the subnet row
  measures that cache, not many clients.
  It runs DNS, API, prober and snapshot refresh in one Python process on
  uvloop (the default `TMDNS_EVENT_LOOP`);
  gdnsd runs 2 UDP threads, PowerDNS 1 receiver and 3 distributor threads, all
  confined to the same single core.
"""


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


def scaling_section(report: Report) -> list[str]:
    if not report.scaling:
        return []
    return goal_section(
        "tmdns with 1 and 2 worker processes",
        dns_scaling.heading(report),
        dns_scaling.rows(report),
        dns_scaling.summary(report),
        dns_scaling.notes(),
    )


METRICS_COST_NOTES = """\
How to read it: the query metrics (`/metrics`, the dashboard's traffic) are
counted where replies leave, a dictionary update per reply and a comparison
with the last client (whose run of queries is added in one go), and labelled
only when scraped; `TMDNS_DNS__QUERY_METRICS=false` skips the
counting, and exists for this measurement. A counting and a not counting
server ran at once, each on core 0 with dnsperf on core 1, taking turns name
by name, so the machine's other work fell on both; two such pairs ran one
after the other, started in opposite orders, since two servers that do the
same differ by a few per cent and the first started is not always the faster.
"per core" sums every round of one server and name, and "end to end" is how
much of it the counting server gave up. The precise figure is one the
machine's other work does not move: the benchmark compiles the snapshot the
servers wrote, sends the same queries through one counting and one not
counting handler in its own process, in alternating rounds, and keeps each
handler's fastest round ("handler ns": CPU per reply, the I/O excluded; each
query comes from a new source string, as from the socket, so counting pays
for hashing it). "added ns" is what counting adds to a reply; "server CPU per
reply ns" is what a whole reply (receiving, deciding, sending) costs the
server that does not count, one over its "per core"; "cost" is the first over
the second. The goal holds for a name when "cost" and "end to end" are both
within it.
"""

FULL_PATH_NOTES = """\
How to read it: a tmdns of its own, started after the main table with
`TMDNS_DNS__FAST_PATH=false`, answers every query the way it answers one that
no pre-encoded reply fits (docs/behaviour.md, "Fast path and UDP I/O"): it
decodes the query, decides the answer from the snapshot and encodes the reply
anew. It is placed and
measured as in the main table (alone on core 0, dnsperf on core 1, the same
dnsperf options). "per core" is QPS divided by "server CPU": the queries
answered per second of server CPU, which does not depend on how much of its
core tmdns got; "fast path per core" is the same figure for the main table's
tmdns on the same name, and "full/fast per core" the share of it the full
path keeps. The goal of {goal:,} per server-CPU-second is what one core must
carry when every query misses the stored replies.
"""

LATENCY_NOTES = """\
How to read it: right after each name's run in the main table, on the same
tmdns process, with the same placement and dnsperf options, dnsperf ran the
name once more with a rate cap (`-Q`) of {share:.0%} of the QPS tmdns had just
reached: "offered q/s". At the maximum dnsperf keeps {outstanding} queries in
flight and they queue, so the main table's latencies are mostly waiting; here
the server has headroom, as a server in service should, and p50, p99 (nearest
rank) and max are the time one query takes. Measuring on the same server
seconds after its maximum keeps the rate relative to what that process did
under the same conditions on the machine; each capped run finds what the main
run of its name left (a warm prefix cache for the random ECS name, for
instance). "answered q/s" below "offered q/s" means the rate was not held.
"""

MEMORY_NOTES = """\
How to read it: a fresh tmdns (fast path on, alone on core 0, dnsperf on core
1) answered the random ECS name {runs} times back to back, and its resident
memory (VmRSS from /proc) was read before the first run and after each. Each
run sends 100,000 random /24s of its own (another random seed per run), so the
runs together ask for more client networks than the prefix cache keeps: it
holds {cap:,} per-prefix replies and is emptied and refilled when full, so the
RSS should stop growing once it has filled, whatever the number of clients.
The GeoIP database file is memory-mapped: the pages of it the lookups have
touched count in the RSS too, and "file-backed" (RssFile: mapped files, the
GeoIP database and the program's code) tells them from the server's own
memory. What the process frees when the cache is emptied mostly stays with
it for reuse (Python's allocator seldom hands it back), so the RSS is a
high-water mark: levelling off is what shows the cap holds.
"""


def goal_section(
    title: str,
    heading: str,
    table: dns_tables.Table,
    summary: str,
    notes: str,
) -> list[str]:
    """One extra section: what it compares, its table, the measured result in
    a sentence, and how to read it."""
    return [
        f"## {title}",
        "",
        heading + ".",
        "",
        markdown_table(*table),
        "",
        summary,
        "",
        notes.rstrip(),
        "",
    ]


def tmdns_sections(report: Report) -> list[str]:
    """The full path, latency at 80 % and memory sections, those that ran."""
    parts: list[str] = []
    if report.full_path:
        parts += goal_section(
            "tmdns on the full path",
            dns_fullpath.heading(report),
            dns_tables.fullpath_rows(report),
            dns_tables.fullpath_summary(report),
            FULL_PATH_NOTES.format(goal=dns_fullpath.GOAL_PER_CORE),
        )
    if report.metrics_cost:
        parts += goal_section(
            "What the query metrics cost",
            dns_metrics_cost.heading(report),
            dns_metrics_cost.rows(report),
            dns_metrics_cost.summary(report),
            METRICS_COST_NOTES,
        )
    if report.latency:
        parts += goal_section(
            f"tmdns latency at {dns_latency.SHARE:.0%} of its maximum",
            dns_latency.heading(report),
            dns_tables.latency_rows(report),
            dns_tables.latency_summary(report),
            LATENCY_NOTES.format(share=dns_latency.SHARE, outstanding=OUTSTANDING),
        )
    if report.memory:
        parts += goal_section(
            "tmdns memory under random ECS",
            dns_memory.heading(report),
            dns_tables.memory_rows(report),
            dns_tables.memory_summary(report),
            MEMORY_NOTES.format(runs=dns_memory.RUNS, cap=dns_memory.PREFIX_CACHE),
        )
    return parts


def machine_section(report: Report) -> list[str]:
    machine = [
        ("CPU", dns_machine.cpu_model()),
        ("cores", str(os.cpu_count())),
        ("memory", dns_machine.memory()),
        ("kernel", f"{platform.system()} {platform.release()}"),
        ("load average before / after", f"{report.load_before} / {report.load_after}"),
        ("CPU time taken by the host (steal)", f"{report.stolen:.0%} of the run"),
    ]
    versions = dns_machine.python_versions() | dns_machine.debian_versions()
    return [
        "## Machine and versions",
        "",
        *(f"* {k}: {v}" for k, v in machine),
        *(f"* {k}: {v}" for k, v in versions.items()),
        "",
        "The machine may be shared: other work running at the same time lowers "
        "the numbers. The load average counts the benchmark's own processes too "
        "(it keeps both cores busy), so only a high value before it started "
        "points at other work. On a virtual machine the host may also take CPU "
        "time from its cores (steal): every server loses it, but not evenly "
        "over the runs.",
        "",
    ]


def configurations(report: Report) -> list[str]:
    parts = ["## Configurations", ""]
    for key, files in report.files.items():
        parts += [f"<details><summary>{report.titles[key]}</summary>", ""]
        for name, text in files.items():
            parts += [f"`{name}`", "", "```", text.rstrip(), "```", ""]
        parts += ["</details>", ""]
    return parts


def markdown(report: Report, chart: str) -> str:
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
        markdown_table(*dns_tables.main_rows(report)),
        "",
        f"![Queries per second per name and server]({chart})",
        "",
        NOTES.format(clients=CLIENTS, outstanding=OUTSTANDING).rstrip(),
        *limits(report),
        "",
    ]
    if dns_tables.has_variants(report):
        parts += [
            "## PowerDNS variants",
            "",
            markdown_table(*dns_tables.variant_rows(report)),
            "",
        ]
    parts += scaling_section(report)
    parts += tmdns_sections(report)
    parts += [
        "## Every run",
        "",
        markdown_table(*dns_tables.detail_rows(report)),
        "",
    ]
    parts += machine_section(report)
    parts += configurations(report)
    return "\n".join(parts)
