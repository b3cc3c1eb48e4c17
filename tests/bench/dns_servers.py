"""The three servers of `make bench`, each configured for the zone in dns_zone,
started as a subprocess pinned to core 0 on a free 127.0.0.1 port (UDP and TCP)
and stopped by its process ID: tmdns, gdnsd and PowerDNS (bind backend with
LUA records)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bench import dns_zone as z
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
SERVER_CORE = 0
CLIENT_CORE = 1 if (os.cpu_count() or 1) > 1 else 0
DEBIAN_PACKAGES = ("dnsperf", "gdnsd", "pdns-server", "pdns-backend-bind")
BIND_BACKEND = "/usr/lib/*/pdns/libbindbackend.so"
START_LIMIT = 30.0


def tool(name: str) -> str:
    """The absolute path of a program, looking in the sbin folders too."""
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin"
    found = shutil.which(name, path=path)
    if found is None:
        raise FileNotFoundError(name)
    return found


def ensure_packages() -> None:
    """Install dnsperf, gdnsd and PowerDNS from Debian when one is missing (no
    service starts: the machine's policy-rc.d forbids it)."""
    missing = [n for n in ("dnsperf", "gdnsd", "pdns_server") if not _has(n)]
    if not missing and list(Path("/").glob(BIND_BACKEND.lstrip("/"))):
        return
    print(f"installing {' '.join(DEBIAN_PACKAGES)} (missing: {missing or 'bind'})")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update"], check=True, env=env, timeout=600)
    subprocess.run(
        ["apt-get", "install", "-y", *DEBIAN_PACKAGES], check=True, env=env, timeout=900
    )


def _has(name: str) -> bool:
    try:
        tool(name)
    except FileNotFoundError:
        return False
    return True


@dataclass
class Running:
    """A started server, as the measurements need it."""

    key: str
    title: str
    port: int
    serial: int
    process: subprocess.Popen[bytes]
    srv_additional: bool  # puts the SRV targets' A records in the additional section
    files: dict[str, str] = field(default_factory=dict)  # its configuration
    counters: Callable[[], dict[str, int]] | None = None

    @property
    def pid(self) -> int:
        return self.process.pid


def spawn(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> Any:
    """Start `cmd` pinned to the server core (taskset execs it: same PID)."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [tool("taskset"), "-c", str(SERVER_CORE), *cmd],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
            start_new_session=True,  # a Ctrl-C reaches the benchmark, which stops it
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def _ready(running: Running, log: Path) -> None:
    def alive() -> bool:
        return running.process.poll() is None

    try:
        z.wait_until_correct(
            running.port, running.serial, running.srv_additional, alive, START_LIMIT
        )
    except RuntimeError as problem:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{running.title}: {problem}\n--- log ---\n{tail}") from None


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


# --- tmdns -----------------------------------------------------------------------

_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only


def _http(method: str, url: str, token: str, body: Any = None) -> int:
    """Send one API call; return the configuration generation that holds it."""
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        },
    )
    with _HTTP.open(request, timeout=10) as response:
        return int(response.headers["X-Tmdns-Generation"])


def _wait_http(url: str, process: subprocess.Popen[bytes], limit: float) -> None:
    deadline = time.monotonic() + limit
    while True:
        try:
            with _HTTP.open(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers, even if not yet healthy
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("tmdns exited during start-up") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"tmdns API not up within {limit:g} s") from None
            time.sleep(0.2)


def _no_monitor() -> dict[str, str]:
    return {"protocol": "none"}


def tmdns_requests() -> list[tuple[str, dict[str, Any]]]:
    """The API calls that set tmdns up: (path, JSON body)."""
    zone = {"name": z.ZONE, "ns": [z.NS], "glue": {z.NS: [z.NS_ADDRESS]}}
    profiles: list[dict[str, Any]] = [
        {
            "name": "prio",
            "method": "priority",
            "monitor": _no_monitor(),
            "endpoints": [
                {"name": "primary", "address": z.PRIORITY[0], "priority": 1},
                {"name": "secondary", "address": z.PRIORITY[1], "priority": 2},
            ],
        },
        {
            "name": "weighted",
            "method": "weighted",
            "monitor": _no_monitor(),
            "endpoints": [
                {"name": n, "address": a, "weight": w} for n, a, w in z.WEIGHTED
            ],
        },
        {
            "name": "multi",
            "method": "multivalue",
            "max_return": z.MULTI_RETURN,
            "monitor": _no_monitor(),
            "endpoints": [
                {"name": f"m{i}", "address": a} for i, a in enumerate(z.MULTI, 1)
            ],
        },
        {
            "name": "sip",
            "method": "weighted",
            "monitor": _no_monitor(),
            "srv": [{"service": z.SIP_SERVICE, "port": z.SIP_PORT}],
            "endpoints": [{"name": n, "address": a, "weight": w} for n, a, w in z.SIP],
        },
        {
            "name": "net",
            "method": "subnet",
            "monitor": _no_monitor(),
            "endpoints": [
                {"name": "a", "address": z.NET_INSIDE, "subnets": [z.NET_RANGE]},
                {"name": "b", "address": z.NET_OTHER},
            ],
        },
    ]
    zone_path = f"/zones/{z.ZONE}/profiles"
    return [("/zones", zone)] + [(zone_path, p) for p in profiles]


@contextlib.contextmanager
def tmdns(workdir: Path) -> Iterator[Running]:
    folder = workdir / "tmdns"
    folder.mkdir()
    token = secrets.token_urlsafe(24)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMDNS_")}
    env |= {
        "TMDNS_DB__URL": f"sqlite:///{folder}/bench.db",
        "TMDNS_BOOTSTRAP_TOKEN": token,
        "TMDNS_LOG_LEVEL": "WARNING",
    }
    python = [sys.executable, "-m", "app"]
    migrate = [*python, "migrate"]
    subprocess.run(
        migrate, env=env, cwd=ROOT, check=True, capture_output=True, timeout=120
    )
    port, api_port = free_port(), free_port()
    log = folder / "serve.log"
    serve = [*python, "serve", "--dns", f"127.0.0.1:{port}"]
    process = spawn([*serve, "--api", f"127.0.0.1:{api_port}"], log, env)
    try:
        _wait_http(f"http://127.0.0.1:{api_port}/healthz", process, START_LIMIT)
        base = f"http://127.0.0.1:{api_port}/api/v1"
        requests = tmdns_requests()
        for path, body in requests:
            serial = _http("POST", base + path, token, body)  # the SOA serial too
        files = {f"POST {p}": json.dumps(b, indent=1) for p, b in requests}
        running = Running("tmdns", "tmdns", port, serial, process, True, files)
        _ready(running, log)
        yield running
    finally:
        stop(process)


# --- gdnsd -----------------------------------------------------------------------


def gdnsd_files(folder: Path, port: int, serial: int) -> dict[str, str]:
    weighted = "\n".join(f"      {n} => [ {a}, {w} ]" for n, a, w in z.WEIGHTED)
    sip = "\n".join(f"      {n} => [ {a}, {w} ]" for n, a, w in z.SIP)
    # weighted with multi = true over groups returns one address from each group
    # whose weight is the highest (all equal here): two groups of two give
    # exactly 2 of the 4 addresses, at random, in every answer
    m = z.MULTI
    config = f"""\
options => {{
  listen => [ 127.0.0.1:{port} ]
  run_dir => {folder}/run
  state_dir => {folder}/state
  edns_client_subnet => true
}}
plugins => {{
  metafo => {{
    resources => {{
      prio => {{
        datacenters => [ primary, secondary ]
        dcmap => {{ primary => {z.PRIORITY[0]}, secondary => {z.PRIORITY[1]} }}
      }}
    }}
  }}
  weighted => {{
    weighted_res => {{
{weighted}
    }}
    sip_res => {{
{sip}
    }}
    multi_res => {{
      multi => true
      g1 => {{ m1 => [ {m[0]}, 1 ], m3 => [ {m[2]}, 1 ] }}
      g2 => {{ m2 => [ {m[1]}, 1 ], m4 => [ {m[3]}, 1 ] }}
    }}
  }}
  geoip => {{
    maps => {{
      net => {{
        datacenters => [ other, inside ]
        nets => nets
      }}
    }}
    resources => {{
      net => {{
        map => net
        dcmap => {{ inside => {z.NET_INSIDE}, other => {z.NET_OTHER} }}
      }}
    }}
  }}
}}
"""
    refresh, retry, expire, minimum = z.SOA_TIMERS
    srv = "".join(
        f"_sip._udp.sip SRV {z.SIP_PRIORITY} {w} {z.SIP_PORT} {n}.sip\n"
        for n, _a, w in z.SIP
    )
    targets = "".join(f"{n}.sip A {a}\n" for n, a, _w in z.SIP)
    zone = f"""\
$TTL {z.TTL}
@ {z.SOA_TTL} SOA ns1 hostmaster {serial} {refresh} {retry} {expire} {minimum}
@ {z.SOA_TTL} NS ns1
ns1 {z.SOA_TTL} A {z.NS_ADDRESS}
prio DYNA metafo!prio
weighted DYNA weighted!weighted_res
multi DYNA weighted!multi_res
sip DYNA weighted!sip_res
{srv}{targets}net DYNA geoip!net
"""
    return {
        "config": config,
        "zones/tm.example": zone,
        "geoip/nets": f"{z.NET_RANGE} => [ inside ]\n",
    }


@contextlib.contextmanager
def gdnsd(workdir: Path, serial: int) -> Iterator[Running]:
    folder = workdir / "gdnsd"
    folder.mkdir()
    port = free_port()
    files = gdnsd_files(folder, port, serial)
    _write(folder, files)
    gdnsd_bin = tool("gdnsd")
    check = subprocess.run(
        [gdnsd_bin, "-c", str(folder), "checkconf"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check.returncode != 0:
        raise RuntimeError(f"gdnsd checkconf failed:\n{check.stderr}")
    log = folder / "gdnsd.log"
    process = spawn([gdnsd_bin, "-c", str(folder), "start"], log)
    try:
        running = Running("gdnsd", "gdnsd", port, serial, process, False, files)
        _ready(running, log)
        yield running
    finally:
        stop(process)


# --- PowerDNS --------------------------------------------------------------------

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
    _write(folder, files)
    log = folder / "pdns.log"
    process = spawn([tool("pdns_server"), f"--config-dir={folder}"], log)
    try:
        running = Running(variant, title, port, serial, process, True, files)
        running.counters = lambda: _pdns_counters(folder)
        _ready(running, log)
        yield running
    finally:
        stop(process)
