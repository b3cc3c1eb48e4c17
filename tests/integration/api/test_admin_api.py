"""The admin API's contract for automation: tokens and scopes, ETags, change
generations, paging, the audit log, the error envelope, CORS and TLS."""

import asyncio
import io
import json
import os
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict

from tests.support.sip_responder import make_self_signed_cert
from tests.support.tmdns import Tmdns, started_tmdns

pytestmark = pytest.mark.postgres
ZONE = {"name": "tm.example", "ns": ["ns.example.net"]}
PROFILES = "/zones/tm.example/profiles"
APP = {
    "name": "app",
    "method": "priority",
    "monitor": {"protocol": "none"},
    "endpoints": [
        {"name": f"e{i}", "address": f"127.0.0.{i}", "enabled": i % 2 == 1}
        for i in range(1, 8)
    ],
}


async def seeded(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", PROFILES, APP)


async def request(
    tm: Tmdns, method: str, path: str, body: Any = None, **headers: str
) -> tuple[int, CIMultiDict[str], Any]:
    headers = {"Authorization": "Bearer test-token-with-write-scope", **headers}
    async with tm.http.request(method, tm.base + path, json=body, headers=headers) as r:
        payload = None if r.status == 204 else await r.json()
        return r.status, CIMultiDict(r.headers), payload


def tmdns_cli(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMDNS_DB__URL": db_url}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


async def test_cli_tokens_are_shown_once_scoped_listed_and_revoked(
    tm: Tmdns, db_url: str
) -> None:
    await seeded(tm)
    made = await asyncio.to_thread(
        tmdns_cli, db_url, "token", "create", "--name", "grafana", "--scope", "read"
    )
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    assert secret.startswith("tmdns_") and "shown only once" in made.stderr
    status, _ = await tm.call("GET", "/zones", token=secret)
    assert status == 200
    status, payload = await tm.call(
        "POST", "/zones", {"name": "x.example", "ns": ["ns.example.net"]}, token=secret
    )
    assert status == 403 and payload["error"]["code"] == "forbidden"
    listed = await asyncio.to_thread(tmdns_cli, db_url, "token", "list")
    assert "grafana\tread" in listed.stdout and secret not in listed.stdout
    revoked = await asyncio.to_thread(tmdns_cli, db_url, "token", "revoke", "grafana")
    assert revoked.returncode == 0
    assert (await tm.call("GET", "/zones", token=secret))[0] == 401
    # A revoked token's name may be used again, for a new secret.
    again = await asyncio.to_thread(
        tmdns_cli, db_url, "token", "create", "--name", "grafana"
    )
    assert again.returncode == 0 and again.stdout.strip() != secret
    assert (await tm.call("GET", "/zones", token=secret))[0] == 401
    assert (await tm.call("GET", "/zones", token=again.stdout.strip()))[0] == 200


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_repeated_failures_from_one_address_are_slowed_down(tm: Tmdns) -> None:
    started = time.monotonic()
    for _ in range(5):
        assert (await tm.call("GET", "/zones", token="wrong"))[0] == 401
    fast = time.monotonic() - started
    started = time.monotonic()
    for _ in range(3):
        assert (await tm.call("GET", "/zones", token="wrong"))[0] == 401
    slowed = time.monotonic() - started
    assert slowed >= 0.1 + 0.2 + 0.4 - 0.05 and slowed > fast


async def test_stale_if_match_is_412_and_changes_nothing(tm: Tmdns) -> None:
    await seeded(tm)
    status, headers, _ = await request(tm, "GET", PROFILES + "/app")
    etag = headers["ETag"]
    status, headers, body = await request(
        tm, "PATCH", PROFILES + "/app", {"ttl": 30}, **{"If-Match": etag}
    )
    assert status == 200 and headers["ETag"] != etag and body["ttl"] == 30
    status, _, body = await request(
        tm, "PATCH", PROFILES + "/app", {"ttl": 10}, **{"If-Match": etag}
    )
    assert status == 412 and body["error"]["code"] == "precondition_failed"
    status, _, _ = await request(tm, "DELETE", PROFILES + "/app", **{"If-Match": etag})
    assert status == 412
    assert (await tm.ok("GET", PROFILES + "/app"))["ttl"] == 30


async def test_concurrent_conflicting_patches_exactly_one_wins(tm: Tmdns) -> None:
    await seeded(tm)
    path = PROFILES + "/app/endpoints/e1"
    _, headers, _ = await request(tm, "GET", path)
    etag = headers["ETag"]
    results = await asyncio.gather(
        *(
            request(tm, "PATCH", path, {"weight": w}, **{"If-Match": etag})
            for w in range(2, 10)
        )
    )
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [200] + [412] * 7
    [winner] = [body for status, _, body in results if status == 200]
    assert (await tm.ok("GET", path))["weight"] == winner["weight"]


async def test_a_change_says_which_generation_holds_it(tm: Tmdns) -> None:
    status, headers, _ = await request(tm, "POST", "/zones", ZONE)
    assert status == 201
    generation = int(headers["X-Tmdns-Generation"])
    healthz = tm.base.removesuffix("/api/v1") + "/healthz"

    async def holds() -> bool:
        async with tm.http.get(healthz) as r:
            return (await r.json())["snapshot_generation"] >= generation

    await tm.wait_for(holds, limit=1.0)
    assert (await tm.query("tm.example.", "SOA")).answer[0][0].serial == generation


async def test_endpoints_page_and_filter(tm: Tmdns) -> None:
    await seeded(tm)
    base = PROFILES + "/app/endpoints"
    status, headers, body = await request(tm, "GET", base + "?limit=3")
    assert [e["name"] for e in body] == ["e1", "e2", "e3"]
    assert headers["X-Total-Count"] == "7" and 'rel="next"' in headers["Link"]
    _, headers, body = await request(tm, "GET", base + "?limit=3&offset=6")
    assert [e["name"] for e in body] == ["e7"] and "Link" not in headers
    _, headers, body = await request(tm, "GET", base + "?enabled=false")
    assert [e["name"] for e in body] == ["e2", "e4", "e6"]

    async def disabled() -> bool:
        _, _, body = await request(tm, "GET", base + "?state=disabled")
        return [e["name"] for e in body] == ["e2", "e4", "e6"]

    await tm.wait_for(disabled, limit=1.0)  # states come from the live snapshot
    status, _, body = await request(tm, "GET", base + "?limit=0")
    assert status == 422 and body["error"]["details"][0]["field"] == "limit"


async def test_the_audit_log_records_who_changed_what(tm: Tmdns) -> None:
    await seeded(tm)
    await tm.ok(
        "PATCH",
        PROFILES + "/app/endpoints/e1",
        {"override": {"state": "drain", "reason": "kernel update"}},
    )
    entries = await tm.ok("GET", "/audit?resource=tm.example./app&limit=10")
    latest = entries[0]
    assert latest["actor"] == "bootstrap" and latest["action"] == "endpoint.update"
    before = next(e for e in latest["before"]["endpoints"] if e["name"] == "e1")
    after = next(e for e in latest["after"]["endpoints"] if e["name"] == "e1")
    assert before["override"] is None and after["override"]["reason"] == "kernel update"
    # Names are normalised as everywhere: no trailing dot, any case.
    assert await tm.ok("GET", "/audit?resource=TM.example/app&limit=10") == entries
    assert await tm.ok("GET", "/audit?actor=nobody") == []
    assert len(await tm.ok("GET", "/audit?since=2000-01-01T00:00:00Z")) >= 3
    assert await tm.ok("GET", "/audit?until=2000-01-01T00:00:00Z") == []
    assert "Authorization" not in str(entries) and "test-token" not in str(entries)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_every_error_has_the_envelope(tm: Tmdns) -> None:
    auth = {"Authorization": "Bearer test-token-with-write-scope"}
    cases = [
        ("GET", "/nothing/here", None, {}, 404),
        ("PUT", "/zones", b"{}", {"Content-Type": "application/json"}, 405),
        (
            "POST",
            "/zones",
            io.BytesIO(b"x" * (2 << 20)),
            {"Content-Type": "application/json"},
            413,
        ),
        ("POST", "/zones", b"name=x", {"Content-Type": "text/plain"}, 415),
        ("POST", "/zones", b"{broken", {"Content-Type": "application/json"}, 400),
    ]
    for method, path, data, headers, expected in cases:
        async with tm.http.request(
            method, tm.base + path, data=data, headers={**auth, **headers}
        ) as r:
            body = await r.json()
            assert r.status == expected, (path, r.status, body)
            assert set(body["error"]) == {"code", "message", "details"}


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    "header",
    [
        b"X-Folded: one\r\n two\r\n",  # obs-fold, refused since RFC 7230
        b"X-Nul: a\x00b\r\n",
        b"Bad Name: x\r\n",
    ],
)
async def test_a_request_that_cannot_be_read_gets_the_envelope_too(
    tm: Tmdns, header: bytes
) -> None:
    """aiohttp refuses these before any middleware; the answer still has the
    JSON envelope every other error has."""
    reader, writer = await asyncio.open_connection("127.0.0.1", tm.run.api_port)
    writer.write(b"GET /api/v1/zones HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n")
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == b"400", raw
    assert b"application/json" in head
    error = json.loads(body)["error"]
    assert error["code"] == "bad_request" and "could not be read" in error["message"]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_cors_only_for_configured_origins(db_url: str) -> None:
    async with started_tmdns(
        db_url, api={"listen": "127.0.0.1:0", "cors_origins": ["https://ops.example"]}
    ) as tm:
        for origin, allowed in (
            ("https://ops.example", True),
            ("https://evil.example", False),
        ):
            async with tm.http.options(
                tm.base + "/zones",
                headers={"Origin": origin, "Access-Control-Request-Method": "POST"},
            ) as r:
                assert (
                    r.headers.get("Access-Control-Allow-Origin") == origin
                ) is allowed
            _, headers, _ = await request(tm, "GET", "/zones", Origin=origin)
            assert ("Access-Control-Allow-Origin" in headers) is allowed


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_the_api_can_listen_with_tls(db_url: str, tmp_path: Path) -> None:
    cert = make_self_signed_cert(tmp_path)
    api = {
        "listen": "127.0.0.1:0",
        "tls_certificate": str(cert.cert),
        "tls_key": str(cert.key),
    }
    async with started_tmdns(db_url, api=api) as tm:
        url = tm.base.replace("http://", "https://") + "/zones"
        context = cert.client_context()
        async with aiohttp.ClientSession() as client:
            async with client.get(
                url,
                ssl=context,
                headers={"Authorization": "Bearer test-token-with-write-scope"},
            ) as r:
                assert r.status == 200
            with pytest.raises(aiohttp.ClientError):
                async with client.get(tm.base + "/zones") as r:
                    await r.read()
        assert isinstance(context, ssl.SSLContext)
