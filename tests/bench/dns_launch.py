"""Starting and stopping the servers of `make bench`: each one a subprocess on
the cores it is given (core 0 unless said otherwise) on a free 127.0.0.1 port,
measured only once its answers are right, stopped by its process ID."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bench import dns_zone as z
from tests.bench.dns_programs import tool
from tests.bench.processes import Pid

ROOT = Path(__file__).resolve().parents[2]
SERVER_CORE = 0
CLIENT_CORE = 1 if (os.cpu_count() or 1) > 1 else 0
ALL_CORES = ",".join(str(core) for core in range(os.cpu_count() or 1))
START_LIMIT = 30.0


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
    workers: tuple[Pid, ...] = ()  # processes it started to share the port

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def pids(self) -> tuple[int, ...]:
        """Every process that answers queries: its CPU is the server's."""
        return (self.process.pid, *(w.pid for w in self.workers))


def spawn(
    cmd: list[str],
    log: Path,
    env: dict[str, str] | None = None,
    cores: str = str(SERVER_CORE),
) -> Any:
    """Start `cmd` on `cores` (taskset execs it: same PID; its children inherit
    the cores)."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [tool("taskset"), "-c", cores, *cmd],
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


def wait_ready(running: Running, log: Path) -> None:
    """Return once every check of dns_zone passes; raise with the log's tail."""

    def alive() -> bool:
        return running.process.poll() is None

    try:
        z.wait_until_correct(
            running.port, running.serial, running.srv_additional, alive, START_LIMIT
        )
    except RuntimeError as problem:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{running.title}: {problem}\n--- log ---\n{tail}") from None


def write_files(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
