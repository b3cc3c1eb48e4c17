"""tmdns as a user runs it: `tmdns migrate`, then `tmdns serve --demo`, as processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.ports import free_port

TMDNS = [sys.executable, "-m", "app"]


@dataclass
class ServedDemo:
    process: subprocess.Popen[bytes]
    dns_port: int
    api_port: int
    log: Path

    def banner(self) -> str:
        return self.log.read_text()


@contextlib.contextmanager
def serve_demo(
    workdir: Path, extra_env: dict[str, str] | None = None
) -> Iterator[ServedDemo]:
    env = {**os.environ, "TMDNS_DB__URL": f"sqlite:///{workdir}/tmdns.db"}
    env |= extra_env or {}
    env.pop("TMDNS_BOOTSTRAP_TOKEN", None)
    subprocess.run([*TMDNS, "migrate"], env=env, check=True, capture_output=True)
    dns_port, api_port = free_port(), free_port()
    log = workdir / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                *TMDNS,
                "serve",
                "--demo",
                "--dns",
                f"127.0.0.1:{dns_port}",
                "--api",
                f"127.0.0.1:{api_port}",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = ServedDemo(process, dns_port, api_port, log)
    try:
        _wait_for_banner(served)
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)


def _wait_for_banner(served: ServedDemo) -> None:
    deadline = time.monotonic() + 20
    while "Stop with Ctrl-C" not in served.banner():
        assert served.process.poll() is None, served.banner()
        assert time.monotonic() < deadline, served.banner()
        time.sleep(0.1)
