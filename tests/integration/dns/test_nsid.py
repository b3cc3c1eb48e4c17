"""NSID (RFC 5001) through real clients: `dig +nsid` and `kdig +nsid` show the
name of the instance that answered, so an operator of a fleet can tell."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require
from tests.support.sample import ZONE
from tests.support.tmdns import started_tmdns


@pytest.mark.parametrize("client", ["dig", "kdig"])
async def test_a_client_that_asks_sees_the_instance_name(
    tmp_path: Path, client: str
) -> None:
    if shutil.which(client) is None:
        require(f"{client} is not installed")
    settings = {"dns": {"listen": "127.0.0.1:0", "nsid": "dns-eu-1"}}
    async with started_tmdns(f"sqlite:///{tmp_path}/t.db", **settings) as tm:
        await tm.ok("POST", "/zones", ZONE)
        asked = await asyncio.to_thread(
            subprocess.run,
            [
                client,
                "@127.0.0.1",
                "-p",
                str(tm.run.dns_port),
                "+nsid",
                "tm.example.",
                "SOA",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
        plain = await asyncio.to_thread(
            subprocess.run,
            [client, "@127.0.0.1", "-p", str(tm.run.dns_port), "tm.example.", "SOA"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
    assert "NSID" in asked.stdout and "dns-eu-1" in asked.stdout, asked.stdout
    assert "NSID" not in plain.stdout
