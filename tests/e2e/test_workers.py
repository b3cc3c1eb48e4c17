"""`tmdns serve --workers 2`: two processes answer on one port (SO_REUSEPORT),
and a change reaches the answers of both within a second."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import dns.message
import dns.query
import pytest

from tests.support.ports import free_port

pytestmark = pytest.mark.e2e


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[tuple[int, int, str]]:
    env = {
        **os.environ,
        "TMDNS_DB__URL": f"sqlite:///{tmp_path}/tmdns.db",
        "TMDNS_BOOTSTRAP_TOKEN": "workers-token",
    }
    subprocess.run(
        [sys.executable, "-m", "app", "migrate"],
        env=env,
        check=True,
        capture_output=True,
    )
    dns_port, api_port = free_port(), free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app",
            "serve",
            "--demo",
            "--workers",
            "2",
            "--dns",
            f"127.0.0.1:{dns_port}",
            "--api",
            f"127.0.0.1:{api_port}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        text = ""
        while len(re.findall("DNS listening", text)) < 2:
            assert time.monotonic() < deadline and server.poll() is None, text
            time.sleep(0.1)
            text = (tmp_path / "serve.log").read_text()
        yield dns_port, api_port, "workers-token"
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=15) == 0
        log.close()
    # Stopping the main process stopped its worker too.
    left = subprocess.run(
        ["pgrep", "-f", f"role dns --dns 127.0.0.1:{dns_port}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert left.stdout.strip() == ""


def answers_from_many_sockets(port: int, count: int = 60) -> set[str]:
    """Each query from a fresh socket, so the kernel spreads them over workers."""
    seen = set()
    for _ in range(count):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            query = dns.message.make_query("app.tm.example.", "A")
            reply = dns.query.udp(query, "127.0.0.1", port=port, timeout=2, sock=sock)
            seen.update(rd.to_text() for rrset in reply.answer for rd in rrset)
    return seen


def test_two_workers_share_the_port_and_follow_changes(workers) -> None:
    dns_port, api_port, token = workers
    assert answers_from_many_sockets(dns_port) == {"127.0.0.1"}
    request = urllib.request.Request(
        f"http://127.0.0.1:{api_port}/api/v1/zones/tm.example./profiles/app/endpoints/primary",
        data=json.dumps({"enabled": False}).encode(),
        method="PATCH",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200
    changed = time.monotonic()
    while answers_from_many_sockets(dns_port) != {"127.0.0.2"}:
        assert time.monotonic() - changed < 1.5, "a worker kept the old answer"
    workers_running = subprocess.run(
        ["pgrep", "-f", f"role dns --dns 127.0.0.1:{dns_port}"],
        capture_output=True,
        check=False,
        text=True,
    ).stdout.split()
    assert len(workers_running) == 1


def _worker_pids(dns_port: int) -> list[str]:
    return subprocess.run(
        ["pgrep", "-f", f"role dns --dns 127.0.0.1:{dns_port}"],
        capture_output=True,
        check=False,
        text=True,
    ).stdout.split()


def test_a_killed_worker_is_replaced_logged_and_counted(workers) -> None:
    dns_port, api_port, _ = workers
    [victim] = _worker_pids(dns_port)
    os.kill(int(victim), signal.SIGKILL)
    killed = time.monotonic()
    while True:
        pids = _worker_pids(dns_port)
        if pids and pids != [victim]:
            break
        assert time.monotonic() - killed < 5, "the worker was not replaced"
        time.sleep(0.05)
    assert answers_from_many_sockets(dns_port, 20) == {"127.0.0.1"}
    with urllib.request.urlopen(
        f"http://127.0.0.1:{api_port}/metrics", timeout=5
    ) as response:
        text = response.read().decode()
    assert 'tmdns_loop_restarts_total{loop="workers"} 1.0' in text
