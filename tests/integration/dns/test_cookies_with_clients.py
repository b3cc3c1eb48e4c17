"""DNS cookies through real clients: `dig +cookie` and `kdig +cookie` get a
server cookie, and a wrong server cookie gets a fresh one, as Knot and NSD
answer."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require
from tests.support.sample import ZONE
from tests.support.tmdns import started_tmdns

SECRET = "000102030405060708090a0b0c0d0e0f"
CLIENT = "0102030405060708"
WRONG = CLIENT + "01000000" + "00000000" + "0000000000000000"


def _cookie(output: str) -> str:
    found = re.search(r"COOKIE: ([0-9a-fA-F]+)", output)
    assert found, output
    return found.group(1).lower()


@pytest.mark.parametrize("client", ["dig", "kdig"])
async def test_clients_get_a_server_cookie_and_a_fresh_one_for_a_wrong_one(
    tmp_path: Path, client: str
) -> None:
    if shutil.which(client) is None:
        require(f"{client} is not installed")
    settings = {"dns": {"listen": "127.0.0.1:0", "cookie_secret": SECRET}}
    async with started_tmdns(f"sqlite:///{tmp_path}/t.db", **settings) as tm:
        await tm.ok("POST", "/zones", ZONE)
        port = str(tm.run.dns_port)

        async def ask(*flags: str) -> str:
            done = await asyncio.to_thread(
                subprocess.run,
                [client, "@127.0.0.1", "-p", port, *flags, "tm.example.", "SOA"],
                capture_output=True,
                text=True,
                check=True,
                timeout=10,
            )
            return done.stdout

        given = _cookie(await ask(f"+cookie={CLIENT}"))
        assert given.startswith(CLIENT) and len(given) == 48
        fresh = _cookie(await ask(f"+cookie={WRONG}"))
        assert fresh.startswith(CLIENT) and fresh != WRONG and len(fresh) == 48
        kept = _cookie(await ask(f"+cookie={given}"))
        assert kept == given  # a good cookie comes back as it went
