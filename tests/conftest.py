"""Shared fixtures: seeded randomness, databases on both engines, real servers."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from random import Random

import pytest

from tests.support.postgres import PostgresServer

IN_CI = bool(os.environ.get("CI"))
_database_names = itertools.count(1)


def require(reason: str) -> None:
    """A missing external part skips locally but fails in CI, where nothing may skip."""
    if IN_CI:
        pytest.fail(f"{reason} (CI must provide it)")
    pytest.skip(reason)


@pytest.fixture
def rng() -> Random:
    return Random(1234)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    try:
        server = PostgresServer.start()
    except FileNotFoundError as exc:
        require(str(exc))
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database on each engine: a SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/tmdns.db"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database(f"tmdns_{os.getpid()}_{next(_database_names)}")
