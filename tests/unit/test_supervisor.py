"""The supervisor: a loop that fails is logged, restarted with backoff and
counted; one that keeps failing is reported; none dies unnoticed."""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest

from app.supervisor import Supervisor


async def _until(check: object, limit: float = 2.0) -> None:
    async with asyncio.timeout(limit):
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.005)


async def test_a_failing_loop_is_logged_with_its_traceback_and_started_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stop = asyncio.Event()
    supervisor = Supervisor(stop, first_delay=0.01)
    runs: list[int] = []

    async def loop() -> None:
        runs.append(1)
        if len(runs) == 1:
            raise RuntimeError("injected")
        await stop.wait()

    with caplog.at_level(logging.ERROR, logger="app.supervisor"):
        supervisor.start("refresh", loop)
        await _until(lambda: len(runs) == 2)
    status = supervisor.loops["refresh"]
    assert status.restarts == 1
    assert status.last_error == "RuntimeError: injected"
    [record] = [r for r in caplog.records if "loop refresh failed" in r.message]
    assert record.exc_info is not None and "injected" in str(record.exc_info[1])
    assert supervisor.failing() == []  # one failure is recovered, not "failing"
    stop.set()
    await supervisor.wait()


async def test_a_loop_that_returns_before_stop_counts_as_a_failure() -> None:
    stop = asyncio.Event()
    supervisor = Supervisor(stop, first_delay=0.01)
    runs: list[int] = []

    async def loop() -> None:
        runs.append(1)
        if len(runs) > 1:
            await stop.wait()

    supervisor.start("heartbeat", loop)
    await _until(lambda: len(runs) == 2)
    assert supervisor.loops["heartbeat"].restarts == 1
    assert "returned before" in (supervisor.loops["heartbeat"].last_error or "")
    stop.set()
    await supervisor.wait()


async def test_a_loop_that_keeps_failing_is_reported_until_it_runs_steadily() -> None:
    stop = asyncio.Event()
    supervisor = Supervisor(stop, first_delay=0.01, max_delay=0.04, settle=0.3)
    broken = True

    async def loop() -> None:
        if broken:
            raise OSError("disk full")
        await stop.wait()

    supervisor.start("snapshot-file", loop)
    await _until(lambda: supervisor.failing() == ["snapshot-file"])
    assert supervisor.loops["snapshot-file"].restarts >= 3
    broken = False
    await _until(lambda: supervisor.failing() == [], limit=3.0)
    stop.set()
    await supervisor.wait()


async def test_backoff_doubles_up_to_its_cap() -> None:
    stop = asyncio.Event()
    supervisor = Supervisor(stop, first_delay=0.02, max_delay=0.08)
    starts: list[float] = []
    loop_clock = asyncio.get_running_loop().time

    async def loop() -> None:
        starts.append(loop_clock())
        raise ValueError("again")

    supervisor.start("retention", loop)
    await _until(lambda: len(starts) >= 6)
    stop.set()
    await supervisor.wait()
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps[0] == pytest.approx(0.02, abs=0.015)
    assert gaps[1] == pytest.approx(0.04, abs=0.015)
    assert all(g == pytest.approx(0.08, abs=0.03) for g in gaps[3:5])


async def test_stop_ends_every_loop_and_a_second_loop_of_one_name_is_refused() -> None:
    stop = asyncio.Event()
    supervisor = Supervisor(stop)
    supervisor.start("refresh", stop.wait)
    with pytest.raises(ValueError, match="already runs"):
        supervisor.start("refresh", stop.wait)
    stop.set()
    await asyncio.wait_for(supervisor.wait(), 1)
    assert all(t.done() for t in supervisor.tasks)
