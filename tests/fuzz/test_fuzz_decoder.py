"""Every input the fuzzer ever crashed on, replayed; then a bounded fuzzing run."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fuzz.target import make_checker

HERE = Path(__file__).parent
CASES = sorted(
    p
    for folder in ("seeds", "regressions")
    for p in (HERE / folder).iterdir()
    if p.name != ".keep"
)
FUZZ_SECONDS = int(os.environ.get("TMDNS_FUZZ_SECONDS", "8"))


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_kept_inputs_are_handled(case: Path) -> None:
    make_checker()(case.read_bytes())  # type: ignore[operator]


def test_coverage_guided_fuzzing_finds_no_crash(tmp_path: Path) -> None:
    """libFuzzer (atheris) mutates the seeds for a bounded time; a crash leaves its
    input in tmp_path for copying into tests/fuzz/regressions/."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.fuzz.fuzz_decoder",
            f"-max_total_time={FUZZ_SECONDS}",
            "-seed=1",
            f"-artifact_prefix={tmp_path}/",
            str(corpus),
            str(HERE / "seeds"),
        ],
        capture_output=True,
        text=True,
        timeout=FUZZ_SECONDS + 60,
        check=False,
        cwd=HERE.parent.parent,
    )
    crashes = [p.name for p in tmp_path.glob("crash-*")]
    assert result.returncode == 0 and not crashes, result.stderr[-3000:]
    assert "Done" in result.stderr  # it really ran
