"""What /proc tells about the processes a server is made of: their CPU time,
the worker processes a server started itself, which of them holds the UDP
port, and stopping one by PID without hitting a stranger that reused it.

tmdns with `--workers N` is N processes, so a benchmark that read only the
first PID would count a fraction of the CPU used and could leave workers
running after the main process was killed."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (field 3 onwards)."""
    stat = (PROC / str(pid) / "stat").read_text()
    return stat[stat.rindex(")") + 2 :].split()


def cpu_seconds(pid: int) -> float:
    """User plus system seconds of a process and all its threads."""
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def total_cpu_seconds(pids: Iterable[int]) -> float:
    return sum(cpu_seconds(pid) for pid in pids)


def context_switches(pid: int) -> int:
    """Voluntary and involuntary context switches of every thread of a process
    so far (0 once it is gone): how often it gave up its core."""
    total = 0
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return 0
    for task in tasks:
        try:
            status = (task / "status").read_text()
        except OSError:
            continue  # a thread that ended meanwhile
        for line in status.splitlines():
            if "ctxt_switches:" in line:
                total += int(line.split()[1])
    return total


@dataclass(frozen=True)
class Pid:
    """A process, told apart from a later one that reuses its number."""

    pid: int
    started: int  # clock ticks after boot

    @classmethod
    def of(cls, pid: int) -> Pid:
        return cls(pid, int(_stat_fields(pid)[19]))

    def alive(self) -> bool:
        """Still this process, and not a zombie waiting for its parent."""
        try:
            fields = _stat_fields(self.pid)
        except (FileNotFoundError, ProcessLookupError):
            return False
        return fields[0] != "Z" and int(fields[19]) == self.started


def children(parent: int) -> list[Pid]:
    """The live processes whose parent is `parent`."""
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields(int(entry.name))
        except OSError:
            continue  # exited meanwhile
        if int(fields[1]) == parent and fields[0] != "Z":
            found.append(Pid(int(entry.name), int(fields[19])))
    return sorted(found, key=lambda p: p.pid)


def _udp_inodes(port: int) -> set[str]:
    """The socket inodes bound to UDP `port` on any IPv4 address."""
    inodes = set()
    for line in (PROC / "net" / "udp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].rsplit(":", 1)[1], 16) == port:
            inodes.add(fields[9])
    return inodes


def holds_udp_port(pid: int, port: int) -> bool:
    """Whether the process has a socket bound to UDP `port` (SO_REUSEPORT lets
    several processes hold one)."""
    wanted = {f"socket:[{inode}]" for inode in _udp_inodes(port)}
    try:
        descriptors = list((PROC / str(pid) / "fd").iterdir())
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            if os.readlink(descriptor) in wanted:
                return True
        except OSError:
            continue  # closed meanwhile
    return False


def stop_pid(process: Pid, limit: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after `limit` seconds; only while it is still the
    same process."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not process.alive():
            return
        try:
            os.kill(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + limit
        while process.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
    if process.alive():
        raise RuntimeError(f"process {process.pid} survived SIGKILL")
