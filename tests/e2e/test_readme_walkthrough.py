"""The README's walkthrough and quick start, run as a reader runs them, and the
documentation's links and settings table checked against what exists.

The walkthrough is every fenced block between `<!-- walkthrough -->` and
`<!-- /walkthrough -->` in README.md. Its `sh` blocks run in order, as
written, in one bash with `set -euo pipefail` (so a failing command, a curl
answered with an error status included, fails the test); each `text` block is
exactly the last lines that the `sh` block before it prints.

tmdns runs as `make run` starts it — `tmdns migrate`, then `tmdns serve --demo`
with the `TMDNS_BOOTSTRAP_TOKEN` the README starts it with — but on a fresh
SQLite file and on free ports (running `make run` itself would also install
the virtualenv). The one substitution made in the commands: the README's
ports, DNS 8053, API 8080 and the health listeners' 9001, are replaced as
whole numbers by those free ports, so the test runs beside the rest of the
suite.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pydantic import BaseModel

from app.settings import Settings
from tests.conftest import require
from tests.support.ports import free_port
from tests.support.process import TMDNS

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
SETTINGS_PAGE = ROOT / "docs" / "settings.md"
ACME_HOOK = ROOT / "deploy" / "acme" / "tmdns-acme-hook"

WALKTHROUGH = re.compile(r"<!-- walkthrough -->\n(.*?)<!-- /walkthrough -->", re.S)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
START = re.compile(r"^TMDNS_BOOTSTRAP_TOKEN=(\S+) make run$", re.M)
README_PORTS = {"dns": 8053, "api": 8080, "probe": 9001}
MARK = "@@walkthrough block@@"
SETTING_NAME = re.compile(r"\bTMDNS_[A-Z0-9_]*[A-Z0-9]")


@dataclass
class Step:
    script: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    ports: dict[str, int]
    log: Path


def readme() -> str:
    return README.read_text(encoding="utf-8")


def walkthrough_steps(text: str) -> list[Step]:
    """The walkthrough's sh blocks, each with the text block after it, if any."""
    found = WALKTHROUGH.search(text)
    assert found, "README.md has no <!-- walkthrough --> … <!-- /walkthrough -->"
    steps: list[Step] = []
    for lang, body in FENCE.findall(found[1]):
        if lang == "sh":
            steps.append(Step(body))
        elif lang == "text":
            assert steps and not steps[-1].expected, "a text block follows no sh block"
            steps[-1].expected = body.rstrip("\n").splitlines()
        else:
            pytest.fail(f"a ```{lang} block in the walkthrough: sh or text only")
    assert steps, "the walkthrough has no sh block"
    return steps


def with_ports(script: str, ports: dict[str, int]) -> str:
    for role, port in README_PORTS.items():
        script = re.sub(rf"\b{port}\b", str(ports[role]), script)
    return script


def probe_port() -> int:
    """A port free on TCP at both 127.0.0.1 and 127.0.0.2 (the two listeners)."""
    while True:
        port = free_port()
        with socket.socket() as other:
            try:
                other.bind(("127.0.0.2", port))
            except OSError:
                continue
        return port


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    for tool in ("dig", "curl"):
        if shutil.which(tool) is None:
            require(f"{tool} is not installed (Debian dnsutils, curl)")
    start = START.search(readme())
    assert start, "README.md must start tmdns with TMDNS_BOOTSTRAP_TOKEN=… make run"
    workdir = tmp_path_factory.mktemp("walkthrough")
    env = {
        **os.environ,
        "TMDNS_DB__URL": f"sqlite:///{workdir}/tmdns.db",
        "TMDNS_BOOTSTRAP_TOKEN": start[1],
    }
    subprocess.run([*TMDNS, "migrate"], env=env, check=True, capture_output=True)
    ports = {"dns": free_port(), "api": free_port(), "probe": probe_port()}
    log = workdir / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                *TMDNS,
                *("serve", "--demo"),
                *("--dns", f"127.0.0.1:{ports['dns']}"),
                *("--api", f"127.0.0.1:{ports['api']}"),
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 20
        while "Stop with Ctrl-C" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield Served(process, ports, log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)


def run_walkthrough(steps: list[Step], ports: dict[str, int], workdir: Path) -> str:
    """Every block in one bash, a marker line after each; returns stdout."""
    script = "set -euo pipefail\n" + "".join(
        f"{with_ports(step.script, ports)}\nprintf '\\n{MARK}\\n'\n" for step in steps
    )
    path, out, err = (workdir / n for n in ("walkthrough.sh", "stdout", "stderr"))
    path.write_text(script)
    with out.open("wb") as stdout, err.open("wb") as stderr:
        shell = subprocess.Popen(
            ["bash", str(path)],
            cwd=workdir,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # its background listeners go with it
        )
        try:
            code = shell.wait(timeout=60)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(shell.pid, signal.SIGTERM)
    printed = out.read_text()
    assert code == 0, (
        f"exit {code}\n--- stdout\n{printed}\n--- stderr\n{err.read_text()}"
    )
    return printed


def test_the_walkthrough_works_as_written(served: Served, tmp_path: Path) -> None:
    steps = walkthrough_steps(readme())
    for role, port in README_PORTS.items():
        assert any(re.search(rf"\b{port}\b", s.script) for s in steps), role
    printed = run_walkthrough(steps, served.ports, tmp_path)
    outputs = printed.split(f"\n{MARK}\n")
    assert len(outputs) == len(steps) + 1, printed
    for number, (step, output) in enumerate(zip(steps, outputs, strict=False), 1):
        if not step.expected:
            continue
        lines = output.rstrip("\n").splitlines()
        tail = lines[len(lines) - len(step.expected) :]
        assert tail == step.expected, (
            f"sh block {number} of the walkthrough:\n{step.script}\n"
            f"printed:\n{output}\nthe README shows:\n" + "\n".join(step.expected)
        )


def quick_start_digs(text: str) -> list[tuple[str, str]]:
    """(command, its comment) for each dig line of the quick start."""
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    found = []
    for _, body in FENCE.findall(section):
        for line in body.splitlines():
            if line.startswith("dig "):
                command, _, comment = line.partition("#")
                found.append((command.strip(), comment.strip()))
    return found


def test_the_quick_start_digs_answer_as_their_comments_say(served: Served) -> None:
    digs = quick_start_digs(readme())
    assert len(digs) >= 4, digs
    for command, comment in digs:
        result = subprocess.run(
            [*with_ports(command, served.ports).split(), "+time=2", "+tries=1"],
            capture_output=True,
            text=True,
            check=True,
        )
        status = "NXDOMAIN" if "NXDOMAIN" in comment else "NOERROR"
        assert f"status: {status}" in result.stdout, (command, result.stdout)
        assert "flags: qr aa" in result.stdout, (command, result.stdout)
        promised = set(re.findall(r"\b\d+\.\d+\.\d+\.\d+\b", comment))
        if promised:
            answer = result.stdout.split("ANSWER SECTION:", 1)[1].split("\n\n")[0]
            given = set(re.findall(r"\sA\s+(\S+)", answer))
            assert given and given <= promised, (command, comment, answer)


# ---- the pages themselves --------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)


def prose(text: str) -> str:
    """The page without code blocks and code spans, where links are not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces → -."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_every_relative_link_points_at_something_that_exists(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no {linked}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    assert not broken, broken


def setting_names(model: type[BaseModel], prefix: str = "TMDNS_") -> set[str]:
    names: set[str] = set()
    for name, info in model.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            names |= setting_names(kind, f"{prefix}{name.upper()}__")
        else:
            names.add(prefix + name.upper())
    return names


def test_the_settings_page_names_every_setting_and_no_other() -> None:
    known = setting_names(Settings)
    documented = set(SETTING_NAME.findall(SETTINGS_PAGE.read_text(encoding="utf-8")))
    assert known - documented == set(), "settings missing from docs/settings.md"
    assert documented - known == set(), "docs/settings.md names unknown settings"


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_the_pages_name_only_settings_that_exist(page: Path) -> None:
    """A TMDNS_ name is a setting, or one the ACME hook reads (docs/acme.md)."""
    hook = set(SETTING_NAME.findall(ACME_HOOK.read_text(encoding="utf-8")))
    named = set(SETTING_NAME.findall(page.read_text(encoding="utf-8")))
    assert named - setting_names(Settings) - hook == set()
