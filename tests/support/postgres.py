"""A throwaway PostgreSQL server on loopback, started from the Debian binaries.

PostgreSQL refuses to run as root, so under root the cluster belongs to the
`postgres` system user and its commands run through `runuser`.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.ports import free_port


def find_pg_bin() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


@dataclass
class PostgresServer:
    bin_dir: Path
    root: Path
    port: int

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=True, capture_output=True, text=True)

    @classmethod
    def start(cls) -> PostgresServer:
        bin_dir = find_pg_bin()
        if bin_dir is None:
            raise FileNotFoundError("PostgreSQL server binaries (initdb) not found")
        root = Path(tempfile.mkdtemp(prefix="tmdns-pg-"))
        if os.geteuid() == 0:
            shutil.chown(root, "postgres", "postgres")
        server = cls(bin_dir, root, free_port())
        data = root / "data"
        server._run(
            "initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8"
        )
        server._run(
            "pg_ctl",
            "-D",
            str(data),
            "-l",
            str(root / "log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-c listen_addresses=127.0.0.1 -p {server.port} -k {root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            "start",
        )
        server._wait_ready()
        return server

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            probe = subprocess.run(
                [
                    str(self.bin_dir / "pg_isready"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                ],
                capture_output=True,
                check=False,
            )
            if probe.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise TimeoutError("PostgreSQL did not become ready in 30 s")
            time.sleep(0.1)

    def create_database(self, name: str) -> str:
        subprocess.run(
            [
                str(self.bin_dir / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                name,
            ],
            check=True,
            capture_output=True,
        )
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(
                "pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"
            )
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
