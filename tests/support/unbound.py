"""A real Unbound recursive resolver on loopback, delegating one zone to tmdns.

Unbound reaches the zone through a `stub-zone` (no parent zone needed). Nothing
it does may leave loopback: it is started with no trust anchor and no prefetch,
so it sends nothing on its own at start, and every name outside the stub zone
is forwarded to a loopback port where nothing listens (so it fails there instead
of being resolved from the root servers).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dns.asyncquery
import dns.exception
import dns.message
import dns.rdataclass

from tests.conftest import require
from tests.support.ports import free_port

UNBOUND = Path("/usr/sbin/unbound")
EDNS_BUFFER_SIZE = 1232  # what Unbound advertises upstream (its default, pinned)

CONFIG = """\
server:
    interface: 127.0.0.1
    port: {port}
    do-ip4: yes
    do-ip6: no
    do-udp: yes
    do-tcp: yes
    do-not-query-localhost: no
    access-control: 127.0.0.0/8 allow
    username: ""
    chroot: ""
    directory: "{root}"
    pidfile: "{root}/unbound.pid"
    use-syslog: no
    logfile: "{root}/unbound.log"
    verbosity: 1
    module-config: "iterator"
    qname-minimisation: yes
    harden-referral-path: no
    prefetch: no
    num-threads: 1
    so-reuseport: no
    outgoing-range: 64
    num-queries-per-thread: 32
    msg-cache-size: 1m
    rrset-cache-size: 1m
    key-cache-size: 1m
    neg-cache-size: 1m
    infra-cache-numhosts: 100
    edns-buffer-size: {edns}

stub-zone:
    name: "{zone}"
    stub-addr: 127.0.0.1@{stub_port}
    stub-first: no
    stub-prime: no

# Everything else goes to a loopback port where nothing listens: SERVFAIL,
# never a query to the root servers.
forward-zone:
    name: "."
    forward-addr: 127.0.0.1@{dead_port}
    forward-first: no

remote-control:
    control-enable: no
"""


@dataclass
class Unbound:
    port: int
    root: Path
    process: subprocess.Popen[bytes]

    async def query(
        self, name: str, rtype: str = "A", tcp: bool = False, **kw: Any
    ) -> dns.message.Message:
        """A recursive query (RD set) to Unbound, as a stub resolver sends it."""
        q = dns.message.make_query(name, rtype, **kw)
        send = dns.asyncquery.tcp if tcp else dns.asyncquery.udp
        return await send(q, "127.0.0.1", port=self.port, timeout=5)

    def log(self) -> str:
        path = self.root / "unbound.log"
        return path.read_text(errors="replace") if path.exists() else ""


def write_config(
    root: Path, port: int, stub_port: int, zone: str = "tm.example."
) -> Path:
    config = root / "unbound.conf"
    config.write_text(
        CONFIG.format(
            port=port,
            root=root,
            edns=EDNS_BUFFER_SIZE,
            zone=zone,
            stub_port=stub_port,
            dead_port=free_port(),
        )
    )
    return config


@contextlib.asynccontextmanager
async def started_unbound(
    stub_port: int, zone: str = "tm.example."
) -> AsyncIterator[Unbound]:
    """Unbound in the foreground, sending `zone` to tmdns at 127.0.0.1:stub_port."""
    if not UNBOUND.exists():
        require("unbound is not installed")
    root = Path(tempfile.mkdtemp(prefix="tmdns-unbound-"))
    port = free_port()
    config = write_config(root, port, stub_port, zone)
    with (root / "stderr").open("wb") as err:
        process = subprocess.Popen(
            [str(UNBOUND), "-d", "-c", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=subprocess.STDOUT,
        )
    server = Unbound(port, root, process)
    try:
        await _wait_ready(server)
        yield server
    finally:
        _stop(process)
        shutil.rmtree(root, ignore_errors=True)


async def _wait_ready(server: Unbound) -> None:
    """Poll until Unbound answers a question it answers itself (version.server)."""
    deadline = time.monotonic() + 10
    while True:
        if server.process.poll() is not None:
            stderr = (server.root / "stderr").read_text(errors="replace")
            raise RuntimeError(
                f"unbound exited with {server.process.returncode}:\n"
                f"{stderr}\n{server.log()}"
            )
        q = dns.message.make_query("version.server.", "TXT", rdclass=dns.rdataclass.CH)
        with contextlib.suppress(dns.exception.Timeout, OSError):
            await dns.asyncquery.udp(q, "127.0.0.1", port=server.port, timeout=0.2)
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"unbound did not answer in 10 s:\n{server.log()}")
        await asyncio.sleep(0.05)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop this one process by its ID: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
