"""The machine and software a `make bench` run measured on (CPU, cores, memory,
kernel, package versions, load average), so a reader can tell whether the
figures apply to their own setup."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

DEBIAN = ("dnsperf", "gdnsd", "pdns-server", "pdns-backend-bind")
PYTHON = ("tmdns", "dnspython", "matplotlib")


def _output(cmd: list[str]) -> str:
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=20, check=False
        ).stdout
    except OSError:
        return ""


def cpu_model() -> str:
    for line in _output(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return f"{int(line.split()[1]) / 2**20:.0f} GiB"
    return "unknown"


def debian_versions() -> dict[str, str]:
    out = _output(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *DEBIAN])
    found = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    return {name: found.get(name, "not installed") for name in DEBIAN}


def python_versions() -> dict[str, str]:
    versions = {"Python": platform.python_version()}
    for name in PYTHON:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def load() -> str:
    """The load average (1, 5, 15 minutes): how busy the machine was."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cpu_ticks() -> tuple[int, int]:
    """(all, stolen) CPU ticks since boot over every core, from /proc/stat:
    "steal" is time a virtual machine's cores waited for the host, which no
    measurement here can see from inside the processes."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    steal = fields[7] if len(fields) > 7 else 0
    return sum(fields[:8]), steal


def stolen_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of CPU time the host took between two readings."""
    total = after[0] - before[0]
    return (after[1] - before[1]) / total if total > 0 else 0.0
