"""A throwaway PostgreSQL server on loopback, started from the Debian binaries.

PostgreSQL refuses to run as root, so under root the cluster belongs to the
`postgres` system user and its commands run through `runuser`.

The fault tests stop and start a server on its own data directory and port
(`stop_server`, `start_server`, `restart`), and make a hot standby of it with
`pg_basebackup -R` (`standby`): a second server on its own port that follows
the first by streaming replication.
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


# No durability between the tests' own restarts is needed beyond what the OS
# page cache keeps, so fsync is off; a restart with `-m immediate` still runs
# crash recovery from the WAL, which is what a fault test wants to see.
SPEED = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"


@dataclass
class PostgresServer:
    bin_dir: Path
    root: Path
    port: int
    primary: PostgresServer | None = None  # set on a standby: whom it follows
    options: str = ""  # more `-c name=value` for this server's command line

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _command(self, *args: str) -> list[str]:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return command

    def _reach(self) -> tuple[str, ...]:
        """How a client program reaches this server: loopback, its port."""
        return ("-h", "127.0.0.1", "-p", str(self.port))

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self._command(*args), check=True, capture_output=True, text=True
        )

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
        server.start_server()
        return server

    def start_server(self) -> None:
        """Start (again) on the same data directory and port; return once it
        accepts connections (a standby: once it accepts read-only ones)."""
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} {SPEED} "
            f"{self.options}",
            "start",
        )
        self._wait_ready()

    def stop_server(self, mode: str = "fast") -> None:
        """`pg_ctl stop -m fast` (clients are disconnected, a clean shutdown) or
        `-m immediate` (every process killed, crash recovery at the next start).
        Returns once the server is down; the data directory stays."""
        if mode not in {"smart", "fast", "immediate"}:
            raise ValueError(f"unknown shutdown mode {mode!r}")
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def restart(self, mode: str = "fast", down_for: float = 0.0) -> float:
        """Stop, stay down for `down_for` seconds, start again. Returns the
        monotonic time at which the server accepted connections again."""
        self.stop_server(mode)
        # The outage itself is the point here: this is the one fixed wait.
        time.sleep(max(0.0, down_for))
        self.start_server()
        return time.monotonic()

    def is_running(self) -> bool:
        status = subprocess.run(
            self._command("pg_ctl", "-D", str(self.data), "status"),
            capture_output=True,
            check=False,
        )
        return status.returncode == 0

    def standby(self) -> PostgresServer:
        """A hot standby of this server on its own loopback port, made with
        `pg_basebackup -R` (which writes `primary_conninfo` and
        `standby.signal`) and started; it follows by streaming replication.

        `initdb -A trust` already lets local and loopback `replication`
        connections in, and `wal_level=replica` and `max_wal_senders=10` are
        the defaults, so the primary needs no change."""
        root = Path(tempfile.mkdtemp(prefix="tmdns-pg-standby-"))
        if os.geteuid() == 0:
            shutil.chown(root, "postgres", "postgres")
        # A standby retries a lost primary every 5 s by default; 200 ms keeps a
        # primary restart from showing up as seconds of replication lag.
        replica = PostgresServer(
            self.bin_dir,
            root,
            free_port(),
            primary=self,
            options="-c wal_retrieve_retry_interval=200ms",
        )
        try:
            self._run(
                "pg_basebackup",
                *self._reach(),
                "-U",
                "postgres",
                "-D",
                str(replica.data),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
            )
            replica.start_server()
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return replica

    def replay_lag_bytes(self) -> int | None:
        """On a standby: WAL bytes the primary has written that this standby has
        not replayed yet (None when either cannot be asked)."""
        if self.primary is None:
            return None
        written = self.primary.sql("SELECT pg_current_wal_lsn()")
        replayed = self.sql("SELECT pg_last_wal_replay_lsn()")
        if not written or not replayed:
            return None
        return int(
            self.sql(f"SELECT pg_wal_lsn_diff('{written}', '{replayed}')::bigint")
        )

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Run one statement with psql; its output, unaligned, without headers."""
        done = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                *self._reach(),
                "-U",
                "postgres",
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-qAtc",
                statement,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return done.stdout.strip()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            probe = subprocess.run(
                [str(self.bin_dir / "pg_isready"), *self._reach()],
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
                *self._reach(),
                "-U",
                "postgres",
                name,
            ],
            check=True,
            capture_output=True,
        )
        return self.url(name)

    def stop(self) -> None:
        """Stop for good (if it still runs) and remove the data directory."""
        try:
            if self.data.exists() and self.is_running():
                self.stop_server("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
