"""A fleet of tmdns processes on loopback, one role each, for the fault suite
and the soak: start, stop, kill -9 and restart them; ask their `/healthz`,
`/metrics` and DNS; call the API; and keep a steady DNS query load on them.

Every member is a real `python -m app serve --role …` process with its own
ports (tests/support/ports.py), its own log file in the fleet's directory
(appended to across restarts), and, for a DNS role, its own snapshot file.
`/healthz` and `/metrics` come from the member's metrics listener
(`TMDNS_METRICS__LISTEN`); the environment variable rather than `--metrics`
keeps the harness runnable against code that has no such flag yet (unknown
`TMDNS_*` variables are ignored). Nothing here talks to anything but loopback.
The query load is tests/support/dnsload.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dns.exception
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

from tests.support.ports import free_port

TOKEN = "fleet-token-with-write-scope"
TMDNS = [sys.executable, "-m", "app"]
HOST = "127.0.0.1"
SOURCE = Path(__file__).resolve().parents[2]  # the tree whose `app` is run


def wait_until(
    check: Callable[[], Any], limit: float, every: float = 0.05, what: str = ""
) -> Any:
    """Poll `check()` until it returns something truthy (returned), at most
    `limit` seconds; then fail with `what` and the last value seen."""
    deadline = time.monotonic() + limit
    value = check()
    while not value:
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {limit} s: {what} (last: {value!r})")
        time.sleep(every)
        value = check()
    return value


# ---- HTTP ---------------------------------------------------------------------


@dataclass
class Reply:
    status: int  # 0: no HTTP answer at all (refused, reset, timed out)
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def generation(self) -> int | None:
        value = self.headers.get("X-Tmdns-Generation")
        return int(value) if value and value.isdigit() else None


def http(
    method: str,
    url: str,
    body: Any = None,
    token: str | None = None,
    timeout: float = 5.0,
) -> Reply:
    """One HTTP request with urllib; any status is returned, never raised."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Reply(response.status, _decode(response.read()), response.headers)
    except urllib.error.HTTPError as error:
        with error:
            return Reply(error.code, _decode(error.read()), error.headers)
    except (OSError, urllib.error.URLError):
        return Reply(0, None)


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


@dataclass
class Api:
    """The REST API of one member, under /api/v1, with the fleet's write token."""

    port: int
    token: str = TOKEN

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}/api/v1"

    def call(self, method: str, path: str, body: Any = None) -> Reply:
        return http(method, self.base + path, body, self.token)

    def ok(self, method: str, path: str, body: Any = None) -> Reply:
        reply = self.call(method, path, body)
        assert 200 <= reply.status < 300, (method, path, reply.status, reply.body)
        return reply

    def write(
        self, method: str, path: str, body: Any = None, limit: float = 10.0
    ) -> tuple[Reply, list[int]]:
        """A write retried while the API says the database is away (503, or
        no answer while it restarts) for at most `limit` seconds. Returns the
        final reply and every status seen on the way, so a test can assert
        that none of them was a 500."""
        seen: list[int] = []
        deadline = time.monotonic() + limit
        while True:
            reply = self.call(method, path, body)
            seen.append(reply.status)
            if reply.status not in (0, 503) or time.monotonic() > deadline:
                return reply, seen
            time.sleep(0.1)


# ---- processes ------------------------------------------------------------------


@dataclass
class Member:
    """One tmdns process of the fleet: a role with its ports, log and files."""

    name: str
    role: str  # dns | api | prober | all
    workdir: Path
    env: dict[str, str]
    dns_port: int = field(default_factory=free_port)
    api_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    cwd: Path = SOURCE

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.name}.log"

    @property
    def snapshot_file(self) -> Path:
        return self.workdir / f"{self.name}.snapshot"

    @property
    def api(self) -> Api:
        return Api(self.api_port, self.env.get("TMDNS_BOOTSTRAP_TOKEN", TOKEN))

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    # -- life --

    def start(self, wait: bool = True, timeout: float = 30.0) -> Member:
        assert not self.alive(), f"{self.name} already runs"
        self.starts += 1
        command = [*TMDNS, "serve", "--role", self.role]
        command += [
            "--dns",
            f"{HOST}:{self.dns_port}",
            "--api",
            f"{HOST}:{self.api_port}",
        ]
        with self.log.open("ab") as out:
            out.write(f"=== fleet: start {self.starts} of {self.name} ===\n".encode())
            out.flush()
            self.process = subprocess.Popen(
                command,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.cwd,
                start_new_session=True,  # its own group: kill -9 takes any worker too
            )
        if wait:
            self.wait_up(timeout)
        return self

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL after `timeout`; the exit status."""
        process = self.process
        if process is None or process.poll() is not None:
            return None if process is None else process.returncode
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return process.returncode

    def kill(self) -> None:
        """kill -9 this member's process group (our own child, by its id)."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def restart(self, kill: bool = False, wait: bool = True) -> Member:
        if kill:
            self.kill()
        else:
            self.stop()
        return self.start(wait=wait)

    def wait_up(self, timeout: float = 30.0) -> None:
        """Until the process answers: its /healthz with any status or, on code
        without a metrics listener, its own port (DNS or API) or first log line."""
        deadline = time.monotonic() + timeout
        while True:
            assert self.alive(), f"{self.name} exited:\n{self.tail()}"
            if self.healthz()[0] or self._answers_otherwise():
                return
            assert time.monotonic() < deadline, (
                f"{self.name} not up in {timeout} s:\n{self.tail()}"
            )
            time.sleep(0.1)

    def _answers_otherwise(self) -> bool:
        if self.role in ("dns", "all"):
            return self.query("tmdns-fleet-probe.invalid.", timeout=0.3) is not None
        if self.role == "api":
            return http("GET", f"http://{HOST}:{self.api_port}/healthz").status != 0
        text = self.log_text(last_start=True)
        return "snapshot" in text or "prober" in text.lower()

    # -- what it says --

    def healthz(self, timeout: float = 2.0) -> tuple[int, Any]:
        """(status, JSON body) of GET /healthz on the metrics listener; (0, None)
        when nothing answers."""
        reply = http(
            "GET", f"http://{HOST}:{self.metrics_port}/healthz", timeout=timeout
        )
        return reply.status, reply.body

    def wait_health(
        self, check: Callable[[int, Any], bool], limit: float, what: str = ""
    ) -> tuple[int, Any]:
        """Poll /healthz until `check(status, body)`; the (status, body) seen."""
        seen: list[tuple[int, Any]] = [(0, None)]

        def probe() -> bool:
            seen[0] = self.healthz()
            return check(*seen[0])

        try:
            wait_until(probe, limit, 0.1, f"{self.name} /healthz {what}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; last /healthz: {seen[0]}") from None
        return seen[0]

    def metrics(self) -> dict[str, float]:
        """The Prometheus text of GET /metrics as {'name{labels}': value}."""
        reply = http("GET", f"http://{HOST}:{self.metrics_port}/metrics")
        found: dict[str, float] = {}
        if reply.status == 200 and isinstance(reply.body, str):
            for line in reply.body.splitlines():
                if line and not line.startswith("#"):
                    key, _, value = line.rpartition(" ")
                    with contextlib.suppress(ValueError):
                        found[key] = float(value)
        return found

    def query(
        self, name: str, rtype: str = "A", timeout: float = 1.0
    ) -> dns.message.Message | None:
        """One UDP query to this member; None when nothing came back in time."""
        try:
            return dns.query.udp(
                dns.message.make_query(name, rtype),
                HOST,
                port=self.dns_port,
                timeout=timeout,
            )
        except (dns.exception.Timeout, OSError, dns.exception.DNSException):
            return None

    def addresses(self, name: str, rtype: str = "A") -> list[str] | None:
        """The sorted addresses answered for `name`; [] for NXDOMAIN or NODATA;
        None for no answer or SERVFAIL."""
        reply = self.query(name, rtype)
        if reply is None or reply.rcode() not in (
            dns.rcode.NOERROR,
            dns.rcode.NXDOMAIN,
        ):
            return None
        return sorted(rd.to_text() for rrset in reply.answer for rd in rrset)

    def rss_kib(self) -> int | None:
        """Resident memory of the process (kB), from /proc."""
        if not self.alive():
            return None
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return None

    def log_text(self, last_start: bool = False) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        if last_start:
            text = text.rpartition(f"=== fleet: start {self.starts} of")[2]
        return text

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])


class Fleet:
    """Members on one database (each may name its own URL: a standby, or a
    proxy in front of the primary)."""

    def __init__(
        self,
        workdir: Path,
        db_url: str,
        token: str = TOKEN,
        max_lag: float = 1.0,
        refresh_interval: float = 0.2,
        env: Mapping[str, str] | None = None,
        source: Path = SOURCE,
    ) -> None:
        self.workdir = workdir
        self.source = source
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.db_url = db_url
        self.token = token
        self.members: dict[str, Member] = {}
        base = {k: v for k, v in os.environ.items() if not k.startswith("TMDNS_")}
        self.env = base | {
            "TMDNS_DB__URL": db_url,
            "TMDNS_HEALTHZ__MAX_LAG": str(max_lag),
            "TMDNS_REFRESH_INTERVAL": str(refresh_interval),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }

    def migrate(self, db_url: str | None = None) -> None:
        subprocess.run(
            [*TMDNS, "migrate"],
            env=self.env | {"TMDNS_DB__URL": db_url or self.db_url},
            cwd=self.source,
            check=True,
            capture_output=True,
            timeout=120,
        )

    def add(
        self,
        name: str,
        role: str,
        db_url: str | None = None,
        env: Mapping[str, str] | None = None,
        start: bool = True,
        wait: bool = True,
    ) -> Member:
        assert name not in self.members, name
        member = Member(name, role, self.workdir, {}, cwd=self.source)
        member.env = self.env | {
            "TMDNS_DB__URL": db_url or self.db_url,
            "TMDNS_METRICS__LISTEN": f"{HOST}:{member.metrics_port}",
        }
        if role in ("api", "all"):
            member.env["TMDNS_BOOTSTRAP_TOKEN"] = self.token
        if role in ("dns", "all"):
            member.env["TMDNS_DNS__SNAPSHOT_FILE"] = str(member.snapshot_file)
        member.env |= dict(env or {})
        self.members[name] = member
        if start:
            member.start(wait=wait)
        return member

    def start_together(self, *specs: tuple[str, str]) -> list[Member]:
        """Start several (name, role) members at once and wait for them all:
        a process takes about a second to import, so this saves seconds."""
        started = [self.add(name, role, wait=False) for name, role in specs]
        for member in started:
            member.wait_up()
        return started

    def __getitem__(self, name: str) -> Member:
        return self.members[name]

    def of_role(self, role: str) -> list[Member]:
        return [m for m in self.members.values() if m.role == role]

    def remove(self, name: str) -> None:
        self.members.pop(name).stop()

    def close(self) -> None:
        for member in self.members.values():
            with contextlib.suppress(Exception):
                member.stop(timeout=10)

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def logs(self, lines: int = 30) -> str:
        return "\n".join(
            f"--- {m.name} ({m.role}, pid {m.pid}) ---\n{m.tail(lines)}"
            for m in self.members.values()
        )
