"""What counting adds to one fast-path reply, measured inside the benchmark's
own process: the snapshot a running tmdns wrote (its snapshot file), one
handler counting and one not, the same queries through both in alternating
rounds, the CPU time of the fastest round of each.

Two identical tmdns servers differ by several per cent from run to run on a
shared machine, more than counting costs; a difference of handler CPU per
reply does not depend on the machine's other work (the fastest round is the
one least disturbed), and divided by what a whole reply costs the server (its
queries per server-CPU-second, from dnsperf) it is the share of the server's
CPU that counting takes."""

from __future__ import annotations

import time
from pathlib import Path
from random import Random

import dns.message

from app import snapshot_file
from app.dns.handler import DnsHandler
from app.domain.snapshot import Snapshot, compile_snapshot
from tests.bench.dns_zone import Case

ROUNDS = 40
QUERIES = 2_000  # per round
HOST, PORT = "127.0.0.1", 40_000
WAIT = 20.0  # seconds for the server to write its snapshot file


def load_snapshot(path: Path, name: str) -> Snapshot:
    """The snapshot in a running server's file, once it holds `name`."""
    deadline = time.monotonic() + WAIT
    while True:
        saved = snapshot_file.read(path) if path.exists() else None
        if saved is not None:
            snapshot = compile_snapshot(
                saved.config, saved.health, saved.generation, time.time()
            )
            if name in snapshot.nodes:
                return snapshot
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path}: no snapshot with {name} in {WAIT:g} s")
        time.sleep(0.2)


def queries(case: Case) -> list[bytes]:
    """The case's queries as dnsperf sends them (EDNS on), QUERIES of them."""
    rng = Random(case.seed)
    names = [
        f"r{rng.randrange(1 << 40):x}.{case.qname}" if case.random_names else case.qname
        for _ in range(QUERIES)
    ]
    return [dns.message.make_query(n, case.qtype, use_edns=0).to_wire() for n in names]


def ns_per_reply(snapshot: Snapshot, case: Case) -> dict[bool, float]:
    """CPU nanoseconds per reply of a counting (True) and a not counting
    (False) handler: the fastest of ROUNDS rounds each, in alternating order."""
    handlers = {
        on: DnsHandler(
            lambda: snapshot, Random(1), time.time, lambda _: None, query_metrics=on
        )
        for on in (True, False)
    }
    wires = queries(case)
    best = {True: float("inf"), False: float("inf")}
    for round_ in range(ROUNDS):
        for on in (True, False) if round_ % 2 == 0 else (False, True):
            handle = handlers[on]
            asked = list(zip(wires, fresh_peers(len(wires)), strict=True))
            started = time.thread_time_ns()
            for wire, peer in asked:
                if handle(wire, peer, True) is None:
                    raise RuntimeError(f"{case.label}: no reply in-process")
            took = (time.thread_time_ns() - started) / len(wires)
            best[on] = min(best[on], took)
    return best


def fresh_peers(n: int) -> list[tuple[str, int]]:
    """Source addresses as the server's socket gives them: a new string per
    datagram, whose hash nobody has worked out yet (counting pays for it)."""
    return [("".join(HOST), PORT) for _ in range(n)]
