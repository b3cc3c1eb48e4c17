"""`tmdns migrate` and `tmdns serve --demo` as a user runs them, queried with dig."""

import shutil
import signal
import subprocess
from collections.abc import Iterator

import pytest

from tests.conftest import require
from tests.support.process import serve_demo

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    if shutil.which("dig") is None:
        require("dig (Debian dnsutils) is not installed")
    with serve_demo(tmp_path_factory.mktemp("demo")) as served:
        yield served.dns_port, served.banner()
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=10) == 0  # a clean stop on SIGTERM


def dig(port: int, *args: str) -> str:
    result = subprocess.run(
        ["dig", "@127.0.0.1", "-p", str(port), "+time=2", "+tries=1", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def test_the_banner_prints_dig_commands_that_work(demo: tuple[int, str]) -> None:
    port, banner = demo
    assert f"dig @127.0.0.1 -p {port} app.tm.example. A" in banner
    assert dig(port, "+short", "app.tm.example.", "A").split() == ["127.0.0.1"]
    assert dig(port, "+short", "+tcp", "app.tm.example.", "A").split() == ["127.0.0.1"]


def test_the_weighted_demo_name_answers_both_addresses(demo: tuple[int, str]) -> None:
    port, _ = demo
    seen = {dig(port, "+short", "web.tm.example.").strip() for _ in range(40)}
    assert seen == {"127.0.0.11", "127.0.0.12"}


def test_apex_and_negative_answers(demo: tuple[int, str]) -> None:
    port, _ = demo
    assert dig(port, "+short", "tm.example.", "NS").split() == ["ns1.tm.example."]
    assert "flags: qr aa" in dig(port, "tm.example.", "SOA")
    nx = dig(port, "nothing.tm.example.", "A")
    assert "status: NXDOMAIN" in nx and "SOA" in nx.split("AUTHORITY SECTION")[1]
    assert "status: REFUSED" in dig(port, "example.com.", "A")


def test_the_api_answers_with_the_printed_token(demo: tuple[int, str]) -> None:
    _, banner = demo
    line = next(x for x in banner.splitlines() if x.startswith("API: curl"))
    command = line.removeprefix("API: ").replace("curl", "curl -s -f", 1)
    output = subprocess.run(
        command, shell=True, capture_output=True, text=True, check=True
    )
    assert '"name": "tm.example."' in output.stdout.replace('":"', '": "')
