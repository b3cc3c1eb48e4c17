"""The fault suite ("never silently stale"): api + prober + two dns
processes on one PostgreSQL, under a steady light query load on both DNS
instances, while the database restarts, roles are killed, the prober's link to
the database is cut, a poisoned row appears, a DNS instance starts with the
database down, and a DNS instance reads a hot standby.

It is the topology of deploy/compose.yaml as processes, without containers:
`tmdns migrate`, then the members of TOPOLOGY, named as the compose services.

The module has its own PostgreSQL (it stops and starts it), and its prober
reaches the database through a TCP proxy that one test cuts. Each test leaves
the fleet running; `healed` puts back anything a failed test left down.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require
from tests.support.dnsload import ANSWER, NODATA, DnsLoad
from tests.support.fleet import Fleet, Member, Reply, wait_until
from tests.support.ports import free_port
from tests.support.postgres import PostgresServer
from tests.support.sample import ZONE
from tests.support.tcpproxy import TcpProxy

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

DATABASE = "tmdns_faults"
PROFILES = "/zones/tm.example./profiles"
STEADY = "steady.tm.example."  # queried all along; never changes
STEADY_ADDRESS = "192.0.2.1"
MAX_LAG = 1.0  # TMDNS_HEALTHZ__MAX_LAG for every member
LOAD_RATE = 20.0  # queries per second on each DNS instance
# Member name → role, as the services of deploy/compose.yaml
# (tests/unit/test_deploy_files.py checks that the two agree).
TOPOLOGY = {"api": "api", "dns1": "dns", "dns2": "dns", "prober": "prober"}
# Queries of the steady load that may fail in a window where nothing that
# answers them was stopped: a tiny tolerance for scheduling on a busy machine.
TOLERATED_FAILURES = 2
_names = iter(range(1, 10_000))


def profile_body(name: str, address: str, **more: Any) -> dict[str, Any]:
    return {
        "name": name,
        "method": "priority",
        "monitor": {"protocol": "none"},
        "endpoints": [{"name": "only", "address": address}],
    } | more


def fresh(prefix: str) -> tuple[str, str, str]:
    """A new profile name, its query name and a documentation address for it."""
    n = next(_names)
    name = f"{prefix}{n}"
    return name, f"{name}.tm.example.", f"198.51.100.{n % 250 + 1}"


# ---- fixtures -------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg() -> Iterator[PostgresServer]:
    try:
        server = PostgresServer.start()
    except FileNotFoundError as exc:
        require(str(exc))
    try:
        server.create_database(DATABASE)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def proxy(pg: PostgresServer) -> Iterator[TcpProxy]:
    """The prober's way to the database, so a test can cut only that."""
    with TcpProxy("127.0.0.1", pg.port) as running:
        yield running


@pytest.fixture(scope="module")
def fleet(
    pg: PostgresServer, proxy: TcpProxy, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Fleet]:
    url = pg.url(DATABASE)
    workdir = tmp_path_factory.mktemp("fleet")
    with Fleet(workdir, url, max_lag=MAX_LAG, refresh_interval=0.2) as running:
        running.migrate()
        # The prober reaches the database through the proxy a test cuts.
        via_proxy = f"postgresql://postgres@127.0.0.1:{proxy.port}/{DATABASE}"
        for name, role in TOPOLOGY.items():
            db_url = via_proxy if role == "prober" else None
            running.add(name, role, db_url=db_url, wait=False)
        for member in running.members.values():
            member.wait_up()
        api = running["api"].api
        api.ok("POST", "/zones", ZONE)
        api.ok("POST", PROFILES, profile_body("steady", STEADY_ADDRESS))
        for member in dns_members(running):
            wait_until(
                lambda m=member: m.addresses(STEADY) == [STEADY_ADDRESS],
                5,
                what=f"{member.name} answers {STEADY}",
            )
        try:
            yield running
        except BaseException:
            print(running.logs())
            raise


@pytest.fixture(scope="module")
def load(fleet: Fleet) -> Iterator[DnsLoad]:
    """The steady light query load on both DNS instances, for the whole module."""
    instances = {m.name: m.dns_port for m in dns_members(fleet)}
    running = DnsLoad(instances, [STEADY], rate=LOAD_RATE, max_seconds=600).start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def healed(
    pg: PostgresServer, proxy: TcpProxy, fleet: Fleet, load: DnsLoad
) -> Iterator[None]:
    """Before and after each test: the database up, the proxy open, every member
    running (whatever a failed test left behind)."""
    heal(pg, proxy, fleet)
    yield
    heal(pg, proxy, fleet)


def heal(pg: PostgresServer, proxy: TcpProxy, fleet: Fleet) -> None:
    if not pg.is_running():
        pg.start_server()
    if proxy.is_cut:
        proxy.restore()
    for name in [n for n in fleet.members if n not in BASE]:
        fleet.remove(name)
    for member in fleet.members.values():
        if not member.alive():
            member.start()


BASE = tuple(TOPOLOGY)


def dns_members(fleet: Fleet) -> list[Member]:
    return [fleet["dns1"], fleet["dns2"]]


# ---- helpers --------------------------------------------------------------------


def create(fleet: Fleet, body: dict[str, Any], limit: float = 10.0) -> Reply:
    """POST a profile, retrying while the API says 503 (the database is away);
    never a 500 on the way."""
    reply, statuses = fleet["api"].api.write("POST", PROFILES, body, limit)
    assert not [s for s in statuses if s >= 500 and s != 503], statuses
    assert reply.status == 201, (reply.status, reply.body, statuses)
    return reply


def answered_within(
    members: list[Member], qname: str, address: str, limit: float
) -> float:
    """Seconds until every member answers `qname` with `address` (≤ `limit`)."""
    started = time.monotonic()
    for member in members:
        left = limit - (time.monotonic() - started)
        wait_until(
            lambda m=member: m.addresses(qname) == [address],
            max(left, 0.0),
            every=0.02,
            what=f"{member.name} answers {qname} {address}",
        )
    return time.monotonic() - started


def assert_load_ok(load: DnsLoad, since: float, until: float, *instances: str) -> None:
    """The steady name was answered on `instances` throughout the window."""
    # A query sent just before `until` may still be in flight: let it finish.
    wait_until(lambda: time.monotonic() > until + load.timeout + 0.1, load.timeout + 1)
    for instance in instances:
        failed = load.failures_between(since, until, instance)
        kinds = sorted({f.kind for f in failed})
        assert len(failed) <= TOLERATED_FAILURES, (
            f"{instance}: {len(failed)} failed queries {kinds} in a "
            f"{until - since:.1f} s window"
        )


def is_up(status: int, body: Any) -> bool:
    return status == 200 and isinstance(body, dict) and body.get("status") == "ok"


def health_of(fleet: Fleet, profile: str) -> dict[str, Any]:
    reply = fleet["api"].api.call("GET", f"{PROFILES}/{profile}/health")
    assert reply.status == 200, (reply.status, reply.body)
    body: dict[str, Any] = reply.body
    return body


def saved_generation(path: Path) -> int | None:
    """The generation in a DNS instance's snapshot file (JSON with a header
    and a payload holding `generation`); None while there is none."""
    try:
        document = json.loads(path.read_text())
        return int(document["payload"]["generation"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def at(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


# ---- the tests ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_database_restart_keeps_answers_flags_503_and_catches_up(
    mode: str, pg: PostgresServer, fleet: Fleet, load: DnsLoad
) -> None:
    members = dns_members(fleet)
    for member in members:
        member.wait_health(is_up, 10, "ok before the outage")
    window = time.monotonic()
    pg.stop_server(mode)
    down_at = time.monotonic()
    for member in members:
        _, body = member.wait_health(
            lambda s, b: s == 503, MAX_LAG + 3, "503 while the database is down"
        )
        assert body["status"] == "failing" and body["database"] == "unreachable", body
        assert body["store_generation"] is None, body
    # Stay down about 3 s in all, answering the old data all along.
    wait_until(lambda: time.monotonic() - down_at >= 3.0, 5)
    for member in members:
        assert member.addresses(STEADY) == [STEADY_ADDRESS], member.name
    pg.start_server()
    back_at = time.monotonic()

    name, qname, address = fresh(f"after-{mode}-")
    create(fleet, profile_body(name, address))
    written_at = time.monotonic()
    took = answered_within(members, qname, address, 2.0)
    print(
        f"{mode}: database back → API write {written_at - back_at:.2f} s, "
        f"→ both DNS answer {written_at - back_at + took:.2f} s"
    )
    for member in [*members, fleet["api"]]:
        member.wait_health(is_up, 5, "back to 200")
    assert_load_ok(load, window, time.monotonic(), "dns1", "dns2")


def test_kill_minus_9_each_role_and_restart(fleet: Fleet, load: DnsLoad) -> None:
    for victim in ("api", "prober", "dns1", "dns2"):
        member = fleet[victim]
        others = [m for m in dns_members(fleet) if m is not member]
        window = time.monotonic()
        member.kill()
        assert not member.alive()
        for other in others:
            assert other.addresses(STEADY) == [STEADY_ADDRESS], other.name
        member.start()
        if victim == "api":
            wait_until(
                lambda m=member: m.api.call("GET", "/zones").status == 200,
                5,
                what="the API serves again",
            )
        if victim.startswith("dns"):
            wait_until(
                lambda m=member: m.addresses(STEADY) == [STEADY_ADDRESS],
                5,
                what=f"{victim} answers again",
            )
        assert_load_ok(load, window, time.monotonic(), *(o.name for o in others))
        for other in fleet.members.values():
            assert other.alive(), f"{other.name} died when {victim} was killed"
    name, qname, address = fresh("after-kills-")
    create(fleet, profile_body(name, address))
    answered_within(dns_members(fleet), qname, address, 2.0)
    for member in fleet.members.values():
        member.wait_health(is_up, 10, "ok after the kills")


def test_prober_cut_from_database_loses_no_transition(
    fleet: Fleet, proxy: TcpProxy
) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    port = free_port()
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    try:
        name, _, _ = fresh("probed-")
        monitor = {
            "protocol": "tcp",
            "port": port,
            "interval": 1,
            "timeout": 0.5,
            "tolerated_failures": 0,
        }
        create(fleet, profile_body(name, "127.0.0.1", monitor=monitor))

        def went(to: str) -> list[dict[str, Any]]:
            return [
                t
                for t in health_of(fleet, name)["transitions"]
                if t["endpoint"] == "only" and t["to"] == to
            ]

        wait_until(lambda: went("online"), 10, 0.2, "the endpoint is seen online")

        proxy.cut()
        cut_at = time.time()
        prober = fleet["prober"]
        with contextlib.suppress(AssertionError):
            prober.wait_health(
                lambda s, b: isinstance(b, dict) and b.get("database") == "unreachable",
                MAX_LAG + 3,
                "the prober sees the database away",
            )
        listener.close()  # the endpoint goes offline while the prober is cut
        closed_at = time.time()
        # Hold the cut over three probe intervals so the verdict is made in it.
        wait_until(lambda: time.time() - closed_at >= 3.0, 5)
        restored_at = time.time()
        proxy.restore()

        offline = wait_until(
            lambda: went("offline"), 10, 0.2, "the offline transition is stored"
        )
        when = at(offline[0]["at"])
        assert offline[0]["from"] == "online", offline
        assert cut_at - 0.5 <= when <= restored_at + 0.5, (
            f"transition at {when:.2f}, cut from {cut_at:.2f} to {restored_at:.2f}"
        )
        prober.wait_health(is_up, 10, "ok after the cut")
    finally:
        listener.close()


def test_poisoned_row_is_quarantined_and_everything_else_flows(
    pg: PostgresServer, fleet: Fleet, load: DnsLoad
) -> None:
    members = dns_members(fleet)
    victim, victim_qname, victim_address = fresh("victim-")
    create(fleet, profile_body(victim, victim_address))
    answered_within(members, victim_qname, victim_address, 2.0)
    window = time.monotonic()

    profile_id = (
        "(SELECT p.id FROM profile p JOIN zone z ON z.id = p.zone_id "
        f"WHERE z.name = 'tm.example.' AND p.name = '{victim}')"
    )
    pg.sql(
        "BEGIN;"
        f"UPDATE endpoint SET address = 'fe80::1%eth0' WHERE profile_id = {profile_id};"
        "UPDATE profile SET revision = (SELECT generation + 1 FROM meta) "
        f"WHERE id = {profile_id};"
        "UPDATE meta SET generation = generation + 1;"
        "COMMIT;",
        DATABASE,
    )
    try:
        for member in members:
            member.wait_health(
                lambda s, b: (
                    isinstance(b, dict)
                    and any(
                        victim in str(q.get("profile"))
                        for q in b.get("quarantined", [])
                    )
                ),
                5,
                f"{victim} quarantined",
            )
            assert member.addresses(victim_qname) == [victim_address], member.name

        name, qname, address = fresh("beside-poison-")
        create(fleet, profile_body(name, address))
        took = answered_within(members, qname, address, 1.0)
        print(f"a change beside the poisoned row: both DNS answer in {took:.2f} s")

        fresh_dns = fleet.add("dns-fresh", "dns")
        assert fresh_dns.addresses(STEADY) == [STEADY_ADDRESS]
        answered_within([fresh_dns], qname, address, 2.0)
        assert fresh_dns.alive()
        assert_load_ok(load, window, time.monotonic(), "dns1", "dns2")
    finally:
        # Mend the row so the rest of the module sees a clean database.
        pg.sql(
            "BEGIN;"
            f"UPDATE endpoint SET address = '{victim_address}' "
            f"WHERE profile_id = {profile_id};"
            "UPDATE profile SET revision = (SELECT generation + 1 FROM meta) "
            f"WHERE id = {profile_id};"
            "UPDATE meta SET generation = generation + 1;"
            "COMMIT;",
            DATABASE,
        )
        with contextlib.suppress(KeyError):
            fleet.remove("dns-fresh")


def test_dns_restarted_while_database_down_serves_its_file(
    pg: PostgresServer, fleet: Fleet
) -> None:
    dns2 = fleet["dns2"]
    name, qname, address = fresh("before-outage-")
    generation = create(fleet, profile_body(name, address)).generation
    answered_within(dns_members(fleet), qname, address, 2.0)
    # The file holds the newest snapshot before the database goes (it is
    # written at most once a second after a change, so wait for it).
    wait_until(
        lambda: (saved_generation(dns2.snapshot_file) or 0) >= (generation or 1),
        5,
        what=f"the snapshot file holds generation {generation}",
    )

    pg.stop_server("fast")
    dns2.kill()
    dns2.start()
    status, body = dns2.healthz()
    assert isinstance(body, dict) and body["source"] == "file", (status, body)
    assert dns2.addresses(STEADY) == [STEADY_ADDRESS]
    assert dns2.addresses(qname) == [address]

    pg.start_server()
    later, later_qname, later_address = fresh("after-outage-")
    create(fleet, profile_body(later, later_address))
    answered_within(dns_members(fleet), later_qname, later_address, 5.0)
    _, body = dns2.wait_health(is_up, 10, "live again")
    assert body["source"] == "database", body


def test_dns_on_a_hot_standby_follows_the_primary(
    pg: PostgresServer, fleet: Fleet
) -> None:
    standby = pg.standby()
    try:
        reader = fleet.add("dns-standby", "dns", db_url=standby.url(DATABASE))
        wait_until(
            lambda: reader.addresses(STEADY) == [STEADY_ADDRESS],
            5,
            what="the standby's DNS answers",
        )
        for _ in range(3):
            name, qname, address = fresh("replicated-")
            create(fleet, profile_body(name, address))
            took = answered_within([reader], qname, address, 3.0)
            print(f"primary write → answer from the standby's DNS: {took:.2f} s")
        reader.wait_health(is_up, 5, "ok on a standby")
    finally:
        with contextlib.suppress(KeyError):
            fleet.remove("dns-standby")
        standby.stop()


def test_the_steady_load_was_answered(load: DnsLoad) -> None:
    """Across the whole module: answers far outnumber everything else (the
    windows where an instance was killed on purpose account for the rest)."""
    answered = load.total(ANSWER) + load.total(NODATA)
    assert answered > 0
    assert answered >= 0.9 * load.total(), dict(load.counts)
