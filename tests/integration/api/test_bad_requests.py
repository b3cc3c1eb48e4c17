"""Every bad request is refused with a 4xx naming the field, and
nothing is written; afterwards the API, `tmdns export` and DNS still work.

One live server per engine builds the baseline once and then runs the whole
corpus (bad_request_cases.py); every failing case is listed in one assertion
message, with what the server answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import dns.exception
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.store.engine import make_engine
from app.store.tables import Base
from tests.integration.api.bad_request_cases import (
    BASELINE_PROFILES,
    CASES,
    LATENCY,
    NO_BODY,
    NONE,
    OTHER_ZONE,
    ZONE,
    Case,
)
from tests.support.tmdns import Tmdns

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[3]
TABLES = sorted(Base.metadata.tables)
# Tags a discriminated union may put in an error's path (`address.weight`).
UNION_TAGS = {"address", "host", "nested"}
TIMEOUT = aiohttp.ClientTimeout(total=20)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: Any  # the parsed JSON, or None
    text: str


async def send(tm: Tmdns, case: Case) -> Answer:
    headers = dict(case.headers)
    if case.token:
        headers["Authorization"] = f"Bearer {case.token}"
    data = case.body
    if data is NO_BODY:
        data = None
    elif not isinstance(data, bytes):
        data = json.dumps(data).encode()
    if case.content_type:
        headers["Content-Type"] = case.content_type
    async with tm.http.request(
        case.method, tm.base + case.path, data=data, headers=headers, timeout=TIMEOUT
    ) as response:
        body_text = await response.text(errors="replace")
        try:
            body = json.loads(body_text)
        except ValueError:
            body = None
        return Answer(response.status, dict(response.headers), body, body_text)


async def written(engine: AsyncEngine) -> dict[str, int]:
    """Row counts of every table and the configuration generation."""
    columns = [f'(SELECT count(*) FROM "{t}") AS "{t}"' for t in TABLES]
    columns.append('(SELECT max(generation) FROM "meta") AS "meta.generation"')
    async with engine.connect() as connection:
        row = (await connection.execute(text("SELECT " + ", ".join(columns)))).one()
    return dict(row._mapping)


def _plain(field: str) -> str:
    """The field path without the union tags or model names pydantic may put
    before a field (`address.weight`, `HostEndpointIn.target`)."""
    *parents, leaf = field.split(".")
    kept = [p for p in parents if p not in UNION_TAGS and not p[:1].isupper()]
    return ".".join(p for p in [*kept, leaf] if "[" not in p)


def names_field(case: Case, error: dict[str, Any]) -> bool:
    """The field is in details[].field (or below it), or in the message when
    there are no details; a 404 names the missing resource in its message."""
    wanted = (case.field,) if isinstance(case.field, str) else case.field or ()
    fields = [_plain(str(d.get("field", ""))) for d in error["details"]]
    message = error["message"].lower()
    for want in wanted:
        if any(f == want or f.startswith(want + ".") for f in fields):
            return True
        if (not fields or case.status == 404) and want.lower() in message:
            return True
    return not wanted


def envelope_problem(body: Any) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "no JSON error envelope"
    shape = (
        isinstance(error.get("code"), str)
        and isinstance(error.get("message"), str)
        and isinstance(error.get("details"), list)
        and all(
            isinstance(d, dict)
            and isinstance(d.get("field"), str)
            and isinstance(d.get("message"), str)
            for d in error["details"]
        )
    )
    return (
        None
        if shape
        else "the envelope is not {code, message, details[field, message]}"
    )


def verdict(
    case: Case, answer: Answer, before: dict[str, int], after: dict[str, int]
) -> list[str]:
    """What is wrong with the answer to one case (nothing: an empty list)."""
    wanted = case.status if isinstance(case.status, tuple) else (case.status,)
    problems = []
    if answer.status not in wanted:
        problems.append(f"status {answer.status}, wanted {'/'.join(map(str, wanted))}")
    if answer.status >= 500:
        problems.append("5xx")
    if 405 in wanted and not answer.headers.get("Allow"):
        problems.append("no Allow header")
    if envelope := envelope_problem(answer.body):
        problems.append(envelope)
    elif not names_field(case, answer.body["error"]):
        problems.append(f"does not name {case.field!r}")
    if changed := sorted(k for k in before if before[k] != after[k]):
        problems.append(
            "wrote " + ", ".join(f"{k} {after[k] - before[k]:+d}" for k in changed)
        )
    return problems


def report_line(case: Case, answer: Answer, problems: list[str]) -> str:
    body = " ".join(answer.text.split())
    body = body if len(body) <= 200 else body[:200] + "…"
    path = case.path if len(case.path) <= 70 else case.path[:70] + "…"
    return (
        f"{case.id}: {'; '.join(problems)}\n"
        f"    {case.method} {path} → {answer.status} {body}"
    )


async def build_baseline(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", "/zones", OTHER_ZONE)
    for zone, profiles in BASELINE_PROFILES.items():
        for profile in profiles:
            await tm.ok("POST", f"/zones/{zone}/profiles", profile)
    await tm.ok("PUT", "/latency", LATENCY)


async def readable(tm: Tmdns) -> list[str]:
    """Every zone and profile still reads (GET /zones, each zone, each profile)."""
    problems = []
    status, listed = await tm.call("GET", "/zones")
    zones = set(BASELINE_PROFILES)
    if status == 200:
        zones |= {z["name"] for z in listed}
    else:
        problems.append(f"GET /zones → {status} {listed}")
    for zone in sorted(zones):
        paths = [f"/zones/{zone}", f"/zones/{zone}/profiles"]
        status, profiles = await tm.call("GET", paths[1])
        baseline = BASELINE_PROFILES.get(zone, [])
        named = [p["name"] for p in (profiles if status == 200 else baseline)]
        paths += [f"/zones/{zone}/profiles/{p}" for p in named]
        for path in paths:
            status, body = await tm.call("GET", path)
            if status != 200:
                problems.append(f"GET {path} → {status} {str(body)[:200]}")
    return problems


async def exported(db_url: str) -> list[str]:
    """`tmdns export` on that database works and shows the baseline zone."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app",
        "--db",
        db_url,
        "export",
        "--format",
        "json",
        cwd=REPO,
        env=os.environ | {"PYTHONPATH": str(REPO)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    if process.returncode != 0 or b'"tm.example."' not in out:
        tail = " / ".join(line.strip() for line in err.decode().splitlines()[-4:])
        return [f"tmdns export → exit {process.returncode}: {tail[:400]}"]
    return []


async def answered(tm: Tmdns) -> list[str]:
    """A valid change afterwards is answered over DNS within 1 s."""
    profile = {
        "name": "after",
        "method": "priority",
        "monitor": NONE,
        "endpoints": [{"name": "e1", "address": "192.0.2.250"}],
    }
    status, body = await tm.call("POST", "/zones/tm.example./profiles", profile)
    if status != 201:
        return [f"POST a valid profile afterwards → {status} {str(body)[:200]}"]
    started = time.monotonic()
    while True:
        try:
            got: Any = await tm.addresses("after.tm.example.")
        except (dns.exception.DNSException, OSError) as exc:
            got = repr(exc)
        if got == ["192.0.2.250"]:
            return []
        if time.monotonic() - started > 1.0:
            return [f"after.tm.example. A not answered within 1 s (got {got})"]
        await asyncio.sleep(0.02)


async def test_every_bad_request_is_refused_and_writes_nothing(
    tm: Tmdns, db_url: str
) -> None:
    ids = [c.id for c in CASES]
    assert len(ids) >= 150 and len(set(ids)) == len(ids)
    await build_baseline(tm)
    engine = make_engine(db_url)
    failures = []
    try:
        for case in CASES:
            before = await written(engine)
            answer = await send(tm, case)
            problems = verdict(case, answer, before, await written(engine))
            if problems:
                failures.append(report_line(case, answer, problems))
    finally:
        await engine.dispose()
    afterwards = await readable(tm) + await exported(db_url) + await answered(tm)
    assert not failures and not afterwards, (
        f"{len(failures)} of {len(CASES)} bad requests were mishandled:\n"
        + "\n".join(failures)
        + "\n\nafterwards:\n"
        + "\n".join(afterwards or ["all well"])
    )
