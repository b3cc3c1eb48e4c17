"""Coverage-guided fuzzing of the query decoder and handler with atheris.

    python -m tests.fuzz.fuzz_decoder -max_total_time=60 CORPUS_DIR tests/fuzz/seeds

A crash input is written by libFuzzer as crash-*; copy it into
tests/fuzz/regressions/, where tests/fuzz/test_regressions.py replays it forever.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import app.dns.codec
    import app.dns.handler
    import app.dns.wire  # noqa: F401

from tests.fuzz.target import make_checker


def main() -> None:
    check = make_checker()
    atheris.Setup(sys.argv, check)  # type: ignore[arg-type]
    atheris.Fuzz()


if __name__ == "__main__":
    main()
