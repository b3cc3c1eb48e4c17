"""Schemathesis against the OpenAPI document tmdns serves, with every check on:
generated requests for every operation find no 5xx, no response that
contradicts the document, no schema-invalid request accepted and no
schema-valid one refused for a reason the document does not give.

`schemathesis.toml` beside this file lists the statuses a schema-valid body
may still get: rules across objects and stored state (409, 422, 404) are
the validators', which JSON Schema cannot express.
"""

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import require
from tests.support.process import ServedDemo, serve_demo

pytestmark = pytest.mark.e2e
CONFIG = Path(__file__).with_name("schemathesis.toml")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedDemo]:
    # Generated webhook URLs must not make the server send anything off this
    # machine (nor look a name up): only loopback addresses are taken.
    loopback = {"TMDNS_API__WEBHOOK_NETWORKS": "127.0.0.0/8,::1/128"}
    with serve_demo(tmp_path_factory.mktemp("schemathesis"), loopback) as demo:
        yield demo


def test_generated_requests_find_no_5xx_and_no_contradiction(
    served: ServedDemo, tmp_path: Path
) -> None:
    st = Path(sys.executable).parent / "st"
    if not st.exists() and shutil.which("st") is None:
        require("schemathesis is not installed")
    token = re.search(r"Bearer ([^']+)'", served.banner())
    assert token is not None
    result = subprocess.run(
        [
            str(st),
            "--config-file",
            str(CONFIG),
            "run",
            f"http://127.0.0.1:{served.api_port}/api/v1/openapi.json",
            "-H",
            f"Authorization: Bearer {token.group(1)}",
            "--checks",
            "all",
            "-n",
            "25",
            "--seed",
            "1",
            "--request-timeout",
            "10",  # failed logins from one address are slowed, up to 5 s
            "--generation-database",
            "none",
            "--phases",
            "examples,fuzzing",
            # The event stream never ends, so no response would come back
            # whole; tests/integration/api/test_events.py reads it instead.
            "--exclude-path",
            "/api/v1/events",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-6000:]
    assert re.search(r"\d+ generated, \d+ passed", result.stdout)
