"""Soak: the fault-suite fleet (api + prober + two dns on one PostgreSQL) for
several minutes under a fixed DNS load, one API write a second, a PostgreSQL
restart every 2 minutes and a prober kill -9 every 3 minutes.

    python -m tests.bench.soak [--minutes 10] [--rate 2000]

Prints answers, wrong answers, timeouts, the worst staleness after each
recovery (from the database accepting connections again to the newest write
being answered by both DNS instances), API 5xx, and the RSS of every tmdns
process at start and at end. Exits 1 when a goal is missed:
0 wrong answers, 0 API 5xx other than 503, staleness ≤ 2 s after each
recovery, RSS growth under 10 %.

A wrong answer is one that contradicts the data known to be written: an
address never written for that name, an older version than one the same
instance already answered before the query was sent, or NXDOMAIN/NODATA for
a name that exists all along. Every address is on 127.0.0.0/8 or in a
documentation range; nothing is sent anywhere but loopback.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.dnsload import (
    ANSWER,
    NODATA,
    NXDOMAIN,
    SERVFAIL,
    TIMEOUT,
    WRONG,
    DnsLoad,
)
from tests.support.fleet import Fleet, Member
from tests.support.postgres import PostgresServer
from tests.support.sample import ZONE

DATABASE = "tmdns_soak"
PROFILES = "/zones/tm.example./profiles"
STALENESS_GOAL = 2.0
RSS_GROWTH_GOAL = 0.10
VISIBLE_LIMIT = 10.0  # a confirmed write not answered by then counts as lost


def address_of(profile: int, version: int) -> str:
    """Version `version` of profile number `profile`, as a loopback address."""
    return f"127.{profile + 1}.{(version >> 8) & 255}.{version & 255}"


def version_of(address: str) -> tuple[int, int] | None:
    parts = address.split(".")
    if len(parts) != 4 or parts[0] != "127":
        return None
    return int(parts[1]) - 1, int(parts[2]) * 256 + int(parts[3])


@dataclass
class Truth:
    """What has been written, for judging answers while the load runs."""

    profiles: int
    attempted: list[set[int]] = field(default_factory=list)  # versions ever sent
    seen: dict[tuple[str, int], tuple[int, float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.attempted = [{0} for _ in range(self.profiles)]

    def qname(self, profile: int) -> str:
        return f"soak{profile}.tm.example."

    def judge(
        self, instance: str, qname: str, addresses: list[str], sent: float, got: float
    ) -> bool:
        profile = int(qname.split(".", maxsplit=1)[0].removeprefix("soak"))
        if len(addresses) != 1:
            return False  # NXDOMAIN / NODATA / several: the name always has one
        decoded = version_of(addresses[0])
        if decoded is None or decoded[0] != profile:
            return False
        version = decoded[1]
        with self.lock:
            if version not in self.attempted[profile]:
                return False
            best, best_at = self.seen.get((instance, profile), (-1, 0.0))
            if version < best and sent > best_at:
                return False  # went back to an older version than already answered
            if version > best:
                self.seen[(instance, profile)] = (version, got)
        return True


@dataclass
class Tally:
    writes: int = 0
    confirmed: int = 0
    status_503: int = 0
    status_5xx: int = 0  # other than 503
    status_other: dict[int, int] = field(default_factory=dict)
    no_answer: int = 0
    lost: int = 0  # confirmed but not answered within VISIBLE_LIMIT
    visible: list[float] = field(default_factory=list)
    recoveries: list[tuple[str, float]] = field(default_factory=list)


class Writer(threading.Thread):
    """One API write a second: mostly a new address for a load profile (a
    PATCH), every tenth a new profile (a POST); each confirmed write is
    checked on both DNS instances."""

    def __init__(
        self, fleet: Fleet, truth: Truth, tally: Tally, stop: threading.Event
    ) -> None:
        super().__init__(name="writer", daemon=True)
        self.fleet, self.truth, self.tally, self.stop_event = fleet, truth, tally, stop
        self.versions = [0] * truth.profiles
        self.recovered: tuple[str, float] | None = None  # (what, when back)
        self.lock = threading.Lock()

    def database_back(self, what: str, at: float) -> None:
        with self.lock:
            self.recovered = (what, at)

    def run(self) -> None:
        api = self.fleet["api"].api
        dns = [self.fleet["dns1"], self.fleet["dns2"]]
        tick = time.monotonic()
        n = 0
        while not self.stop_event.is_set():
            n += 1
            began = time.monotonic()
            if n % 10 == 0:
                qname, address = f"extra{n}.tm.example.", f"192.0.2.{n % 250 + 1}"
                body = {
                    "name": f"extra{n}",
                    "method": "priority",
                    "monitor": {"protocol": "none"},
                    "endpoints": [{"name": "only", "address": address}],
                }
                reply = api.call("POST", PROFILES, body)
            else:
                profile = n % self.truth.profiles
                version = self.versions[profile] + 1
                self.versions[profile] = version
                address = address_of(profile, version)
                qname = self.truth.qname(profile)
                with self.truth.lock:  # before sending: it may commit and fail
                    self.truth.attempted[profile].add(version)
                reply = api.call(
                    "PATCH",
                    f"{PROFILES}/soak{profile}/endpoints/only",
                    {"address": address},
                )
            self.tally.writes += 1
            if 200 <= reply.status < 300:
                self.tally.confirmed += 1
                self._check_visible(dns, qname, address, began)
            elif reply.status == 503:
                self.tally.status_503 += 1
            elif reply.status >= 500:
                self.tally.status_5xx += 1
                print(f"  API {reply.status}: {reply.body}", flush=True)
            elif reply.status == 0:
                self.tally.no_answer += 1
            else:
                other = self.tally.status_other
                other[reply.status] = other.get(reply.status, 0) + 1
            tick += 1.0
            self.stop_event.wait(max(0.0, tick - time.monotonic()))
            if time.monotonic() - tick > 5:
                tick = time.monotonic()  # far behind (a long check): start afresh

    def _check_visible(
        self, dns: list[Member], qname: str, address: str, began: float
    ) -> None:
        deadline = time.monotonic() + VISIBLE_LIMIT
        pending = list(dns)
        while pending and time.monotonic() < deadline:
            pending = [m for m in pending if m.addresses(qname) != [address]]
            if pending:
                time.sleep(0.02)
        now = time.monotonic()
        if pending:
            self.tally.lost += 1
            print(f"  not answered in {VISIBLE_LIMIT} s: {qname} {address}", flush=True)
            return
        self.tally.visible.append(now - began)
        with self.lock:
            recovered, self.recovered = self.recovered, None
            if recovered is not None and began < recovered[1]:
                self.recovered = recovered  # written before the database was back
                return
        if recovered is not None:
            what, back = recovered
            self.tally.recoveries.append((what, now - back))
            print(
                f"  {what}: newest write on both DNS {now - back:.2f} s after",
                flush=True,
            )


def rss(fleet: Fleet) -> dict[str, int | None]:
    return {m.name: m.rss_kib() for m in fleet.members.values()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=2000.0, help="DNS qps in all")
    parser.add_argument("--profiles", type=int, default=20)
    parser.add_argument("--restart-every", type=float, default=120.0, help="seconds")
    parser.add_argument("--kill-every", type=float, default=180.0, help="seconds")
    parser.add_argument("--down-for", type=float, default=3.0, help="seconds")
    args = parser.parse_args(argv)
    minutes = min(max(args.minutes, 0.1), 120.0)
    rate = min(max(args.rate, 1.0), 20_000.0)
    profiles = min(max(args.profiles, 1), 250)

    pg = PostgresServer.start()
    workdir = Path(tempfile.mkdtemp(prefix="tmdns-soak-"))
    try:
        url = pg.create_database(DATABASE)
        with Fleet(workdir, url, max_lag=1.0, refresh_interval=0.2) as fleet:
            return soak(pg, fleet, minutes, rate, profiles, args)
    finally:
        pg.stop()
        print(f"logs in {workdir}")


def soak(
    pg: PostgresServer,
    fleet: Fleet,
    minutes: float,
    rate: float,
    profiles: int,
    args: Any,
) -> int:
    fleet.migrate()
    fleet.start_together(
        ("api", "api"), ("prober", "prober"), ("dns1", "dns"), ("dns2", "dns")
    )
    api = fleet["api"].api
    api.ok("POST", "/zones", ZONE)
    truth = Truth(profiles)
    for p in range(profiles):
        api.ok(
            "POST",
            PROFILES,
            {
                "name": f"soak{p}",
                "method": "priority",
                "monitor": {"protocol": "none"},
                "endpoints": [{"name": "only", "address": address_of(p, 0)}],
            },
        )
    dns = [fleet["dns1"], fleet["dns2"]]
    for member in dns:
        deadline = time.monotonic() + 10
        while member.addresses(truth.qname(profiles - 1)) != [
            address_of(profiles - 1, 0)
        ]:
            assert time.monotonic() < deadline, member.tail()
            time.sleep(0.05)
    rss_start = rss(fleet)
    print(
        f"soak: {minutes:g} min, {rate:g} qps over {len(dns)} DNS instances, "
        f"{profiles} profiles, PostgreSQL restart every {args.restart_every:g} s, "
        f"prober kill every {args.kill_every:g} s",
        flush=True,
    )

    tally = Tally()
    stop = threading.Event()
    writer = Writer(fleet, truth, tally, stop)
    load = DnsLoad(
        {m.name: m.dns_port for m in dns},
        [truth.qname(p) for p in range(profiles)],
        rate=rate / len(dns),
        judge=truth.judge,
        max_seconds=minutes * 60 + 30,
    )
    started = time.monotonic()
    end = started + minutes * 60
    next_restart = started + args.restart_every
    next_kill = started + args.kill_every
    restarts = kills = 0
    events: list[tuple[float, str]] = []  # (monotonic time, what happened)
    load.start()
    writer.start()
    try:
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_restart:
                restarts += 1
                mode = "fast" if restarts % 2 else "immediate"
                print(
                    f"[{now - started:6.1f} s] PostgreSQL restart -m {mode}", flush=True
                )
                events.append((now, f"restart -m {mode}"))
                back = pg.restart(mode, args.down_for)
                writer.database_back(f"restart {restarts} (-m {mode})", back)
                next_restart += args.restart_every
            elif now >= next_kill:
                kills += 1
                print(f"[{now - started:6.1f} s] prober kill -9", flush=True)
                events.append((now, "prober kill"))
                fleet["prober"].restart(kill=True)
                next_kill += args.kill_every
            else:
                time.sleep(min(0.5, max(0.0, min(next_restart, next_kill, end) - now)))
    finally:
        stop.set()
        writer.join(timeout=VISIBLE_LIMIT + 5)
        load.stop()
    elapsed = time.monotonic() - started
    rss_end = rss(fleet)
    code = report(fleet, load, tally, rss_start, rss_end, elapsed, restarts, kills)
    timeouts_by_window(load, events, started)
    return code


def timeouts_by_window(
    load: DnsLoad, events: list[tuple[float, str]], started: float
) -> None:
    """Where the timeouts fall: each 10-second window that had any, with the
    event (a restart, a kill) that began in or just before it."""
    windows: dict[int, int] = {}
    for failure in load.failures:
        if failure.kind == TIMEOUT:
            window = int((failure.sent_at - started) // 10)
            windows[window] = windows.get(window, 0) + 1
    near = {int((t - started) // 10): what for t, what in events}
    print("timeouts by 10 s window (s from start: count, event)")
    for window, count in sorted(windows.items()):
        event = near.get(window) or near.get(window - 1) or ""
        print(f"  {window * 10:4d}–{window * 10 + 10:<4d} {count:6d}  {event}")


def report(
    fleet: Fleet,
    load: DnsLoad,
    tally: Tally,
    rss_start: dict[str, int | None],
    rss_end: dict[str, int | None],
    elapsed: float,
    restarts: int,
    kills: int,
) -> int:
    total = load.total()
    print(
        f"\n== soak: {elapsed:.0f} s, {restarts} PostgreSQL restarts, "
        f"{kills} prober kills"
    )
    print(f"DNS queries        {total} ({total / elapsed:.0f} qps achieved)")
    for name, counts in load.counts.items():
        print(
            f"  {name:<8} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )
    print(f"answers            {load.total(ANSWER)}")
    print(f"wrong answers      {load.total(WRONG)}")
    print(f"timeouts           {load.total(TIMEOUT)}")
    print(f"SERVFAIL           {load.total(SERVFAIL)}")
    print(f"NXDOMAIN / NODATA  {load.total(NXDOMAIN)} / {load.total(NODATA)}")
    print(
        f"API writes         {tally.writes}: {tally.confirmed} confirmed, "
        f"{tally.status_503} × 503, {tally.status_5xx} other 5xx, "
        f"{tally.no_answer} unanswered, other {tally.status_other}"
    )
    if tally.visible:
        ordered = sorted(tally.visible)
        print(
            f"write → both DNS   median {ordered[len(ordered) // 2]:.2f} s, "
            f"worst {ordered[-1]:.2f} s, {tally.lost} never answered"
        )
    worst = max((s for _, s in tally.recoveries), default=None)
    for what, staleness in tally.recoveries:
        print(f"staleness          {what}: {staleness:.2f} s")
    print(f"worst staleness    {'n/a' if worst is None else f'{worst:.2f} s'}")
    growth_ok = True
    print("RSS (kB)           start → end")
    for name, before in rss_start.items():
        after = rss_end.get(name)
        member = fleet[name]
        restarted = member.starts > 1
        note = f" (restarted {member.starts - 1}×)" if restarted else ""
        change = ""
        if before and after:
            ratio = after / before - 1
            change = f" {ratio:+.1%}"
            if not restarted and ratio >= RSS_GROWTH_GOAL:
                growth_ok = False
        print(f"  {name:<8} {before} → {after}{change}{note}")
    goals = {
        "0 wrong answers": load.total(WRONG) == 0,
        "0 API 5xx (other than 503)": tally.status_5xx == 0,
        "every confirmed write answered": tally.lost == 0,
        f"staleness ≤ {STALENESS_GOAL:g} s after each recovery": restarts == 0
        or (
            worst is not None
            and worst <= STALENESS_GOAL
            and len(tally.recoveries) == restarts
        ),
        f"RSS growth < {RSS_GROWTH_GOAL:.0%}": growth_ok,
    }
    for goal, met in goals.items():
        print(f"{'met ' if met else 'MISSED'} {goal}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
