"""engine.forked: ``-j N`` on Linux, the main process checking beside N-1 forked helpers (issue 27). The
outcomes come in the tasks' order whoever ran them; a helper that dies or fails loses nothing; leaving early
stops the helpers."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

if not sys.platform.startswith("linux"):  # pragma: no cover
    pytest.skip("the forked helpers are used on Linux only", allow_module_level=True)

from torchpatch.engine import forked  # noqa: E402


def pid_and_square(number: int) -> tuple[int, int]:
    return os.getpid(), number * number


def test_outcomes_come_in_order_and_both_processes_work():
    tasks = list(range(400))
    # Each task takes a millisecond, so that the helper gets chunks before the main process has taken them all.
    seen = list(forked.outcomes(tasks, lambda n: (time.sleep(0.001), pid_and_square(n))[1], helpers=1, chunksize=4))
    assert [square for _, square in seen] == [n * n for n in tasks]
    assert len({pid for pid, _ in seen}) == 2  # the main process and its helper
    assert os.getpid() in {pid for pid, _ in seen}


def slow(number: int) -> None:
    sum(range(2000))


def test_a_helper_that_dies_loses_no_task(helpers_forked):
    main_pid = os.getpid()

    def die_in_the_helper(number: int) -> tuple[int, int]:
        if os.getpid() != main_pid and number >= 40:
            os.kill(os.getpid(), signal.SIGKILL)  # the kernel's OOM killer, say, in the middle of a chunk
        slow(number)
        return pid_and_square(number)

    seen = list(forked.outcomes(list(range(200)), die_in_the_helper, helpers=2, chunksize=5))
    assert [square for _, square in seen] == [n * n for n in range(200)]
    assert all(pid == main_pid for pid, square in seen[40:])
    assert len(helpers_forked) == 2
    assert_reaped(helpers_forked)


def test_a_chunk_a_helper_fails_on_is_run_again_here_and_raises_as_in_one_process(helpers_forked):
    main_pid = os.getpid()

    def fail_in_the_helper(number: int) -> int:
        slow(number)
        if os.getpid() != main_pid:
            raise RuntimeError("helper")
        return number

    assert list(forked.outcomes(list(range(60)), fail_in_the_helper, helpers=1, chunksize=3)) == list(range(60))

    def fail_on_seven(number: int) -> int:
        slow(number)
        if number == 7:
            raise ValueError("seven")
        return number

    with pytest.raises(ValueError, match="seven"):
        list(forked.outcomes(list(range(60)), fail_on_seven, helpers=1, chunksize=3))
    assert len(helpers_forked) == 2
    assert_reaped(helpers_forked)


def test_leaving_early_stops_and_reaps_the_helpers(helpers_forked):
    stream = forked.outcomes(list(range(10_000)), lambda n: (slow(n), n)[1], helpers=2, chunksize=2)
    assert next(stream) == 0
    stream.close()
    assert len(helpers_forked) == 2
    assert_reaped(helpers_forked)


def test_more_chunks_than_the_dispenser_holds_is_refused_before_any_fork(helpers_forked):
    capacity = forked.dispenser_capacity()
    assert capacity >= 1024  # a page of four-byte numbers at least
    with pytest.raises(ValueError, match="do not fit"):
        next(forked.outcomes(list(range(capacity + 1)), lambda n: n, helpers=1, chunksize=1))
    assert helpers_forked == []


@pytest.fixture
def helpers_forked(monkeypatch) -> list[int]:
    """The pids of the helpers forked during the test."""
    pids: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return pids


def assert_reaped(pids: list[int]) -> None:
    for pid in pids:
        with pytest.raises(ChildProcessError):  # waited for already: no zombie left
            os.waitpid(pid, os.WNOHANG)
