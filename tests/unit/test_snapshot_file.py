"""The local snapshot file: what a DNS instance serves when it starts while
the database is unreachable. It must give back exactly what was saved, and
ignore (with one log line) a file that is corrupt, edited, foreign or old."""

from __future__ import annotations

import hashlib
import json
import logging
from ipaddress import ip_address
from pathlib import Path

import pytest

from app import snapshot_file
from app.domain.model import (
    AllDown,
    Config,
    EndpointKind,
    Failback,
    Health,
    HealthState,
    HttpMethod,
    Location,
    Method,
    Monitor,
    MonitorProtocol,
    Override,
    OverrideState,
    Quarantined,
    SipSuccess,
    SrvService,
)
from tests.builders import make_endpoint, make_profile, make_zone

SIP = Monitor(
    protocol=MonitorProtocol.SIP_TLS,
    port=5061,
    host="sbc.example",
    headers=(("X-Probe", "1"),),
    expected_status="200-299",
    interval=5.0,
    timeout=2.5,
    tolerated_failures=1,
    method=HttpMethod.HEAD,
    sip_success=SipSuccess.ANY_RESPONSE,
    address="127.0.0.9",
)
RICH = Config(
    zones=(
        make_zone(
            make_profile(
                "sip",
                Method.PRIORITY,
                make_endpoint(
                    "a",
                    "2001:db8::1",
                    priority=2,
                    weight=7,
                    geo=("GEO-EU", "DE"),
                    subnets=("10.0.0.0/8", "10.1.0.1-10.1.0.9"),
                    location=Location(50.1, 8.7, "azure:germanywestcentral"),
                    port=5062,
                    always_serve=True,
                    monitor=SIP,
                    override=Override(OverrideState.DRAIN, "maintenance", 1.8e9),
                    id=11,
                ),
                make_endpoint(
                    "b", None, kind=EndpointKind.HOST, target="x.example.", id=12
                ),
                make_endpoint("c", None, kind=EndpointKind.NESTED, child="leaf", id=13),
                srv=(SrvService("_sip._tls", 5061),),
                failback=Failback.PARKING,
                all_down=AllDown.FALLBACK,
                fallback=ip_address("192.0.2.9"),
                geo_failover=True,
                ttl=30,
                id=1,
            ),
            make_profile(
                "leaf", Method.WEIGHTED, make_endpoint("d", "192.0.2.4", id=14), id=2
            ),
            glue=(("ns1.tm.example.", ip_address("192.0.2.53")),),
            negative_ttl=30,
            id=3,
        ),
    ),
    latency=(("198.51.100.0/24", {"azure:westeurope": 12.5}),),
    parked={1: 11},
)
HEALTH = {
    11: Health(HealthState.ONLINE, 1.7e9, "SIP 200 OK in 3 ms", 0, 2, 3.2, 1.7e9 + 5),
    14: Health(HealthState.OFFLINE, 1.7e9, "timeout after 2 s", 3),
}


def test_what_is_written_is_read_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "var" / "snapshot.json"
    snapshot_file.write(path, snapshot_file.Saved(42, 1.7e9, RICH, HEALTH))
    saved = snapshot_file.read(path)
    assert saved is not None
    assert (saved.generation, saved.written_at) == (42, 1.7e9)
    assert saved.config == RICH
    assert saved.health == HEALTH
    assert [p.name for p in tmp_path.joinpath("var").iterdir()] == ["snapshot.json"]


def test_quarantined_entries_are_not_saved(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    broken = {5: Quarantined(5, "tm.example.", "x", "bad")}
    config = Config(zones=RICH.zones, broken=broken)
    snapshot_file.write(path, snapshot_file.Saved(1, 0.0, config, {}))
    saved = snapshot_file.read(path)
    assert saved is not None and saved.config.broken == {}


def _rewrite(path: Path, change: object) -> None:
    document = json.loads(path.read_text())
    change(document)  # type: ignore[operator]
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda p: p.write_text("{not json"), "unreadable"),
        (lambda p: p.write_bytes(b"\xff\xfe"), "unreadable"),
        (lambda p: p.write_text('{"format": "other"}'), "not a tmdns snapshot"),
        (lambda p: p.write_text("[1, 2]"), "not a tmdns snapshot"),
        (
            lambda p: _rewrite(p, lambda d: d.update(version=99)),
            "version 99",
        ),
        (
            lambda p: _rewrite(p, lambda d: d["payload"].update(generation=43)),
            "checksum mismatch",
        ),
    ],
)
def test_a_damaged_or_foreign_file_is_ignored_with_one_clear_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: object, said: str
) -> None:
    path = tmp_path / "s.json"
    snapshot_file.write(path, snapshot_file.Saved(42, 0.0, RICH, HEALTH))
    damage(path)  # type: ignore[operator]
    with caplog.at_level(logging.WARNING, logger="app.snapshot_file"):
        assert snapshot_file.read(path) is None
    [record] = caplog.records
    assert said in record.getMessage() and str(path) in record.getMessage()


def test_content_that_does_not_fit_the_model_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    snapshot_file.write(path, snapshot_file.Saved(1, 0.0, RICH, {}))
    document = json.loads(path.read_text())
    document["payload"]["config"]["zones"][0]["profiles"][0]["method"] = "random"
    text = json.dumps(document["payload"], sort_keys=True, separators=(",", ":"))
    document["checksum"] = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    path.write_text(json.dumps(document))
    assert snapshot_file.read(path) is None


def test_a_missing_file_is_no_error(tmp_path: Path) -> None:
    assert snapshot_file.read(tmp_path / "none.json") is None
