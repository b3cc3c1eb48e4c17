"""`tmdns export` and `tmdns import` as an operator runs them, on a real
database: round trip, dry run, prune, line-numbered errors, Azure import."""

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
DATA = Path(__file__).parent.parent / "data" / "azure"

CONFIG = """\
version: 1
zones:
- name: tm.example.
  ns: [ns1.tm.example.]
  glue: {ns1.tm.example.: [127.0.0.1]}
  profiles:
  - name: app
    method: priority
    monitor: {protocol: none}
    srv: [{service: _sip._udp, port: 5060}]
    endpoints:
    - {name: primary, address: 127.0.0.1}
    - {name: secondary, address: 127.0.0.2}
  - name: web
    method: weighted
    monitor: {protocol: none}
    endpoints:
    - {name: blue, address: 127.0.0.11, weight: 3}
    - {name: green, address: 127.0.0.12, weight: 1}
"""


@pytest.fixture
def tmdns(tmp_path: Path) -> Iterator[object]:
    env = {**os.environ, "TMDNS_DB__URL": f"sqlite:///{tmp_path}/tmdns.db"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
        )

    assert run("migrate").returncode == 0
    yield run


def test_import_then_export_then_import_changes_nothing(tmdns, tmp_path: Path) -> None:
    source = tmp_path / "tmdns.yaml"
    source.write_text(CONFIG)
    first = tmdns("import", str(source))
    assert first.returncode == 0, first.stderr
    assert (
        "+ zone tm.example." in first.stdout
        and "+ profile app.tm.example." in first.stdout
    )
    exported = tmdns("export", str(tmp_path / "out.yaml"))
    assert exported.returncode == 0, exported.stderr
    again = tmdns("import", str(tmp_path / "out.yaml"))
    assert again.returncode == 0 and "no changes" in again.stdout
    assert tmdns("export").stdout == (tmp_path / "out.yaml").read_text()
    as_json = tmdns("export", "--format", "json")
    assert as_json.stdout.lstrip().startswith("{")


def test_dry_run_and_prune(tmdns, tmp_path: Path) -> None:
    source = tmp_path / "tmdns.yaml"
    source.write_text(CONFIG)
    assert tmdns("import", str(source)).returncode == 0
    smaller = tmp_path / "smaller.yaml"
    smaller.write_text(
        CONFIG.split("  - name: web", maxsplit=1)[0].replace("5060", "5070")
    )
    dry = tmdns("import", "--dry-run", "--prune", str(smaller))
    assert dry.returncode == 0 and "dry run: nothing written" in dry.stdout
    assert "- profile web.tm.example." in dry.stdout and "~ profile app" in dry.stdout
    assert "name: web" in tmdns("export").stdout  # untouched
    kept = tmdns("import", str(smaller))  # without --prune nothing is deleted
    assert kept.returncode == 0 and "name: web" in tmdns("export").stdout
    pruned = tmdns("import", "--prune", str(smaller))
    assert pruned.returncode == 0 and "name: web" not in tmdns("export").stdout


def test_an_invalid_file_names_line_and_field_and_changes_nothing(
    tmdns, tmp_path: Path
) -> None:
    source = tmp_path / "tmdns.yaml"
    source.write_text(CONFIG)
    assert tmdns("import", str(source)).returncode == 0
    before = tmdns("export").stdout
    broken = tmp_path / "broken.yaml"
    broken.write_text(CONFIG.replace("weight: 3", "weight: -1"))
    result = tmdns("import", str(broken))
    assert result.returncode == 1
    assert "broken.yaml:18:" in result.stderr
    assert "zones.0.profiles.1.endpoints.0.weight" in result.stderr
    clash = tmp_path / "clash.yaml"
    clash.write_text(
        CONFIG.replace(
            "{name: primary, address: 127.0.0.1}",
            "{name: primary, address: 127.0.0.1, priority: 1}",
        ).replace(
            "{name: secondary, address: 127.0.0.2}",
            "{name: secondary, address: 127.0.0.2, priority: 1}",
        )
    )
    result = tmdns("import", str(clash))
    assert result.returncode == 1 and "priority" in result.stderr
    assert tmdns("export").stdout == before


def test_an_azure_traffic_manager_profile_is_imported(tmdns, tmp_path: Path) -> None:
    source = tmp_path / "tmdns.yaml"
    source.write_text(CONFIG)
    assert tmdns("import", str(source)).returncode == 0
    sample = sorted(DATA.glob("priority*.json"))[0]
    result = tmdns("import", "--from", "azure-tm", "--zone", "tm.example", str(sample))
    assert result.returncode == 0, result.stderr
    assert "+ profile" in result.stdout
    assert "applied" in result.stdout
    exported = tmdns("export").stdout
    assert "method: priority" in exported
    refused = tmdns(
        "import", "--from", "azure-tm", "--zone", "tm.example", "--prune", str(sample)
    )
    assert refused.returncode == 2


def test_explain_on_the_command_line_matches_the_configuration(
    tmdns, tmp_path: Path
) -> None:
    source = tmp_path / "tmdns.yaml"
    source.write_text(CONFIG)
    assert tmdns("import", str(source)).returncode == 0
    text = tmdns("explain", "APP.tm.example", "A", "--client", "192.0.2.7")
    assert text.returncode == 0, text.stderr
    assert "app.tm.example. A for 192.0.2.7: NOERROR" in text.stdout
    assert "profile app.tm.example. method priority" in text.stdout
    assert "answer: app.tm.example. 60 A 127.0.0.1" in text.stdout
    as_json = tmdns("explain", "_sip._udp.app.tm.example", "SRV", "--json")
    assert (
        '"type": "SRV"' in as_json.stdout
        and "primary.app.tm.example." in as_json.stdout
    )
    bad = tmdns("explain", "app.tm.example", "BOGUS")
    assert bad.returncode == 2 and "unknown record type" in bad.stderr
