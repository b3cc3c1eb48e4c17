"""Fixtures shared by the probe tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.kamailio import Kamailio


@pytest.fixture(scope="module")
def kamailio() -> Iterator[Kamailio]:
    """A real Kamailio on loopback (UDP, TCP and TLS), one per test module."""
    with Kamailio() as server:
        yield server
