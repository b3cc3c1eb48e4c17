"""The programs `make bench` drives (dnsperf, gdnsd, PowerDNS, taskset): where
they are, and installing the Debian packages when one is missing, so the
benchmark needs no set-up step of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

DEBIAN_PACKAGES = ("dnsperf", "gdnsd", "pdns-server", "pdns-backend-bind")
BIND_BACKEND = "/usr/lib/*/pdns/libbindbackend.so"


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
