"""PowerDNS 4 as `make bench` runs it: the bind backend with LUA records for the
routed names, in three variants (default, shared Lua state, no packet cache),
with a TCP listener for its `ifportup` check and its packet cache counters
read through pdns_control."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

from tests.bench import dns_zone as z
from tests.bench.dns_launch import Running, spawn, stop, wait_ready, write_files
from tests.bench.dns_programs import tool
from tests.support.ports import free_port

PDNS_VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "powerdns": ("PowerDNS", {}),
    "powerdns-shared": ("PowerDNS, shared Lua", {"enable-lua-records": "shared"}),
    "powerdns-nocache": ("PowerDNS, no packet cache", {"cache-ttl": "0"}),
}


def _lua_list(items: list[str]) -> str:
    return "{" + ", ".join(f"'{i}'" for i in items) + "}"


def powerdns_files(
    folder: Path, port: int, serial: int, check_port: int, extra: dict[str, str]
) -> dict[str, str]:
    settings = {
        "launch": "bind",
        "bind-config": f"{folder}/named.conf",
        "enable-lua-records": "yes",
        "edns-subnet-processing": "yes",
        "local-address": "127.0.0.1",
        "local-port": str(port),
        "daemon": "no",
        "guardian": "no",
        "disable-syslog": "yes",
        "socket-dir": str(folder),
        "api": "no",
        "webserver": "no",
        "primary": "no",
        "secondary": "no",
        "security-poll-suffix": "",  # no status query leaves the machine
    } | extra
    config = "".join(f"{k}={v}\n" for k, v in settings.items())
    named = f'zone "tm.example" {{ type master; file "{folder}/tm.example.zone"; }};\n'
    weighted = ", ".join(f"{{{w}, '{a}'}}" for _n, a, w in z.WEIGHTED)
    sip = ", ".join(f"{{{w}, '{a}'}}" for _n, a, w in z.SIP)
    net = (
        f"{{{{ {{'{z.NET_RANGE}'}}, {{'{z.NET_INSIDE}'}} }}, "
        f"{{ {{'0.0.0.0/0'}}, {{'{z.NET_OTHER}'}} }}}}"
    )
    refresh, retry, expire, minimum = z.SOA_TIMERS
    srv = "".join(
        f"_sip._udp.sip IN SRV {z.SIP_PRIORITY} {w} {z.SIP_PORT} {n}.sip.{z.ZONE}\n"
        for n, _a, w in z.SIP
    )
    targets = "".join(f"{n}.sip IN A {a}\n" for n, a, _w in z.SIP)
    prio = _lua_list(list(z.PRIORITY))
    multi = _lua_list(list(z.MULTI))
    zone = f"""\
$ORIGIN {z.ZONE}
$TTL {z.TTL}
@ {z.SOA_TTL} IN SOA {z.NS} {z.HOSTMASTER} {serial} {refresh} {retry} {expire} {minimum}
@ {z.SOA_TTL} IN NS {z.NS}
ns1 {z.SOA_TTL} IN A {z.NS_ADDRESS}
prio IN LUA A "ifportup({check_port}, {prio})"
weighted IN LUA A "pickwrandom({{{weighted}}})"
multi IN LUA A "pickrandomsample({z.MULTI_RETURN}, {multi})"
sip IN LUA A "pickwrandom({{{sip}}})"
{srv}{targets}net IN LUA A "view({net})"
geo IN LUA A "view({net})"
"""
    return {"pdns.conf": config, "named.conf": named, "tm.example.zone": zone}


@contextlib.contextmanager
def port_up() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 for PowerDNS's ifportup check of the primary
    (nothing listens on the secondary's 127.0.0.2, which it sees down)."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.2)
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        done.set()
        thread.join(timeout=5)
        server.close()


def _pdns_counters(folder: Path) -> dict[str, int]:
    out = subprocess.run(
        [tool("pdns_control"), f"--socket-dir={folder}", "show", "*"],
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    ).stdout
    pairs = (item.split("=", 1) for item in out.strip().strip(",").split(","))
    return {k: int(v) for k, v in pairs if v.isdigit()}


@contextlib.contextmanager
def powerdns(
    workdir: Path, serial: int, check_port: int, variant: str = "powerdns"
) -> Iterator[Running]:
    title, extra = PDNS_VARIANTS[variant]
    folder = workdir / variant
    folder.mkdir()
    port = free_port()
    files = powerdns_files(folder, port, serial, check_port, extra)
    write_files(folder, files)
    log = folder / "pdns.log"
    process = spawn([tool("pdns_server"), f"--config-dir={folder}"], log)
    try:
        running = Running(variant, title, port, serial, process, True, files)
        running.counters = lambda: _pdns_counters(folder)
        wait_ready(running, log)
        yield running
    finally:
        stop(process)
