"""deploy/acme/tmdns-acme-hook as certbot and lego run it: the TXT record is
in DNS when the hook returns, a wildcard and its base name can be validated
at once, and cleaning up removes only the hook's own value."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.sample import ZONE
from tests.support.tmdns import TOKEN, Tmdns

pytestmark = pytest.mark.e2e

HOOK = Path(__file__).parents[2] / "deploy" / "acme" / "tmdns-acme-hook"
NAME = "_acme-challenge.sip.tm.example."


def _run(tm: Tmdns, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    api = tm.base.removesuffix("/api/v1")
    settings = {
        "TMDNS_API": api,
        "TMDNS_TOKEN": TOKEN,
        "TMDNS_ZONE": "tm.example",
        "TMDNS_ACME_WAIT": "0",
        "PATH": os.environ["PATH"],
    }
    return subprocess.run(
        [sys.executable, str(HOOK), *args],
        env=settings | env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def _txt(tm: Tmdns) -> list[str]:
    reply = await tm.query(NAME, "TXT")
    return sorted(rd.to_text() for rrset in reply.answer for rd in rrset)


async def test_certbot_hooks_publish_both_challenges_and_remove_their_own(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    base = {"CERTBOT_DOMAIN": "sip.tm.example", "CERTBOT_VALIDATION": "one"}
    wild = {"CERTBOT_DOMAIN": "*.sip.tm.example", "CERTBOT_VALIDATION": "two"}
    first, second = await asyncio.gather(
        asyncio.to_thread(_run, tm, **base), asyncio.to_thread(_run, tm, **wild)
    )
    assert first.returncode == 0 and second.returncode == 0, (first, second)
    # In DNS as soon as the hooks return: what the ACME server will ask.
    assert await _txt(tm) == ['"one"', '"two"']
    done = await asyncio.to_thread(_run, tm, **base, CERTBOT_AUTH_OUTPUT="")
    assert done.returncode == 0, done.stderr
    assert await _txt(tm) == ['"two"']
    done = await asyncio.to_thread(_run, tm, **wild, CERTBOT_AUTH_OUTPUT="")
    assert done.returncode == 0, done.stderr
    assert (await tm.call("GET", "/zones/tm.example./rrsets/_acme-challenge.sip/TXT"))[
        0
    ] == 404


async def test_lego_exec_presents_and_cleans_up(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    made = await asyncio.to_thread(_run, tm, "present", NAME, "lego-token")
    assert made.returncode == 0, made.stderr
    assert await _txt(tm) == ['"lego-token"']
    gone = await asyncio.to_thread(_run, tm, "cleanup", NAME, "lego-token")
    assert gone.returncode == 0, gone.stderr
    assert await _txt(tm) == []
    outside = await asyncio.to_thread(
        _run, tm, "present", "_acme-challenge.other.example.", "x"
    )
    assert outside.returncode != 0 and "is not in the zone" in outside.stderr
