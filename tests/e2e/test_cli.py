"""The command line as a new user meets it: global flags anywhere, no database
created by a read, clear words for a missing or unmigrated database, a help
text for users, and a revoked token's name free again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def tmdns(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMDNS_")}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(Path(__file__).parents[2])},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_read_never_creates_a_database_and_says_what_to_do(tmp_path: Path) -> None:
    listed = tmdns("token", "list", cwd=tmp_path)
    assert listed.returncode == 1
    assert f"no database at {tmp_path}/var/tmdns.db" in listed.stderr
    assert "tmdns migrate" in listed.stderr
    exported = tmdns("export", cwd=tmp_path)
    assert exported.returncode == 1 and "no database" in exported.stderr
    assert not (tmp_path / "var").exists()
    (tmp_path / "empty.db").touch()
    unmigrated = tmdns(
        "token", "list", "--db", f"sqlite:///{tmp_path}/empty.db", cwd=tmp_path
    )
    assert unmigrated.returncode == 1
    assert "not migrated (run `tmdns migrate`)" in unmigrated.stderr


def test_global_flags_work_after_the_subcommand_and_names_can_be_reused(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    assert tmdns("migrate", "--db", db, cwd=tmp_path).returncode == 0
    made = tmdns("token", "create", "--name", "ci", "--db", db, cwd=tmp_path)
    assert made.returncode == 0 and made.stdout.startswith("tmdns_")
    again = tmdns("token", "create", "--name", "ci", "--db", db, cwd=tmp_path)
    assert again.returncode == 1 and "revoke it first" in again.stderr
    assert tmdns("--db", db, "token", "revoke", "ci", cwd=tmp_path).returncode == 0
    twice = tmdns("token", "revoke", "ci", "--db", db, cwd=tmp_path)
    assert "already revoked" in twice.stderr
    reused = tmdns("token", "create", "--name", "ci", "--db", db, cwd=tmp_path)
    assert reused.returncode == 0
    listed = tmdns("token", "list", "--db", db, cwd=tmp_path).stdout
    assert listed.count("ci\t") == 1 and "live" in listed


def test_help_speaks_to_users() -> None:
    top = tmdns("--help", cwd=Path.cwd()).stdout
    assert "authoritative DNS traffic manager" in top and "Settings once" not in top
    create = tmdns("token", "create", "--help", cwd=Path.cwd()).stdout
    assert "default: read" in create
