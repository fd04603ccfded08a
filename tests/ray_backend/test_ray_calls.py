"""guards: how the Ray pool carries tasks to its actors (rewardkit.execution.ray_pool).

Tasks waiting together go in one remote call per actor, each keeping its own timeout,
failure and answer; a task with a progress link (a spread task) reports across the
network, every part once and in order, with its answer or, once it stalls, early; what
waits behind a stalled task on its actor is given back, and a check that hangs holds no
other row.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from _support.engines import plug
from rewardkit.config import RayOptions, RewardConfig
from rewardkit.errors import ScorerError, ScorerTimeout
from rewardkit.execution.pool import TaskLink
from rewardkit.execution.ray_pool import RayWorkerPool, _ScoringActor
from rewardkit.scoring.engine import RewardEngine
from rewardkit.types import Status

pytestmark = pytest.mark.usefixtures("ray_cluster")

OPTIONS = RayOptions(num_cpus_per_worker=0.5, max_tasks_per_call=8, max_outstanding_per_worker=16)

# A task for the actors' scoring processes: reports each step through its link, stops
# early when cut, and answers how many steps it took.
STEPPER = """
import time

from rewardkit.execution._worker import cut_asked, report


def steps(count, pause):
    for step in range(count):
        report(("step", step))
        time.sleep(pause)
        if cut_asked():
            return ("cut", step)
    return ("done", count)
"""

PAUSER = """
import time

from rewardkit.execution._worker import cut_asked, report


def pauses(plan, size=0):
    # one report before each pause (a check), as a spread task reports before each check
    for step, pause in enumerate(plan):
        report(("step", step, "x" * size))
        time.sleep(pause)
        if cut_asked():
            return ("cut", step)
    return ("done", len(plan))


def sized(sizes):
    for step, size in enumerate(sizes):
        report(("step", step, "x" * size))
    return ("done", len(sizes))
"""

# A verifier whose check hangs on "hang" and takes 3 ms otherwise (the engine's
# spread-task path, as tests/scoring/test_spread.py's _Hanging).
HANGING = """
import time
from dataclasses import dataclass

from rewardkit.verifiers.base import Extracted, Verdict


@dataclass(frozen=True)
class Hanging:
    key: str = "hanging-check"

    def extract(self, response):
        return Extracted(response.strip(), {"source": "plain"})

    def quick_check(self, extracted, ground_truth):
        return None

    def check(self, extracted, ground_truth):
        time.sleep(60 if extracted.answer == "hang" else 0.003)
        return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})
"""


def _importable(write_module: Any, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> Any:
    """``source`` as module ``name``, importable here and in the actors' processes."""
    folder = str(Path(write_module(name, source)).parent)
    monkeypatch.syspath_prepend(folder)
    __import__(name)
    return sys.modules[name], folder


def _reaching(folder: str) -> RayOptions:
    path = os.pathsep.join(p for p in (folder, os.environ.get("PYTHONPATH", "")) if p)
    return OPTIONS.model_copy(update={"runtime_env": {"env_vars": {"PYTHONPATH": path}}})


async def _until(predicate: Any, limit: float = 10.0) -> None:
    """Wait (at most ``limit`` seconds) until ``predicate()`` holds."""
    started = time.perf_counter()
    while not predicate() and time.perf_counter() - started < limit:
        await asyncio.sleep(0.01)


async def test_tasks_waiting_together_share_calls_and_each_keeps_its_own_outcome() -> None:
    pool = RayWorkerPool(2, options=OPTIONS)
    await pool.start()
    try:
        odd: dict[int, tuple[Any, ...]] = {
            5: (int, "not a number"),  # raises in the actor's process
            17: (time.sleep, 30),  # past its limit: its process is killed
            30: (id, threading.Lock()),  # cannot be pickled: never sent
        }
        jobs = [
            pool.run(*odd.get(i, (divmod, i, 7)), timeout=0.5 if i == 17 else 5) for i in range(48)
        ]
        outcomes = await asyncio.gather(*jobs, return_exceptions=True)
        alone = await pool.run(divmod, 9, 2, timeout=5)  # a lone task goes at once
        stats = dict(pool.stats)
    finally:
        await pool.close()
    assert [o for i, o in enumerate(outcomes) if i not in odd] == [
        divmod(i, 7) for i in range(48) if i not in odd
    ]
    assert isinstance(outcomes[5], ScorerError) and "ValueError" in str(outcomes[5])
    assert isinstance(outcomes[17], ScorerTimeout)
    assert isinstance(outcomes[30], ScorerError) and "cannot send the task" in str(outcomes[30])
    assert alone == (4, 1)
    # 47 tasks went out (the unpicklable one failed here), in calls of up to 8
    assert stats["tasks"] == 49 and stats["timeouts"] == 1 and stats["retried"] == 0
    assert 7 <= stats["calls"] <= 16, stats
    assert stats["peak_outstanding"] <= 16


async def test_a_linked_task_reports_with_its_answer_or_early_when_it_stalls(
    write_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A linked task's parts cross the network with its answer, every one, in order; a
    task quiet for its link's ``stall_s`` after a report answers early with its parts so
    far (no polling), its later parts follow as they come, and a cut reaches it."""
    module, folder = _importable(write_module, monkeypatch, "ray_stepper", STEPPER)
    pool = RayWorkerPool(2, options=_reaching(folder))
    await pool.start()
    try:
        whole: list[Any] = []
        steady = TaskLink(whole.append, stall_s=5.0)
        answer = await pool.run(module.steps, 5, 0.01, timeout=10, link=steady)
        assert answer == ("done", 5)
        assert whole == [("step", i) for i in range(5)]  # every part, once, in order

        parts: list[Any] = []
        link = TaskLink(parts.append, stall_s=0.1)
        running = asyncio.ensure_future(pool.run(module.steps, 400, 0.3, timeout=60, link=link))
        await _until(lambda: len(parts) >= 2)  # the early answer, then what the follow-up brings
        assert len(parts) >= 2 and not running.done()
        assert link.last_part_at is not None
        link.cut()
        kind, step = await asyncio.wait_for(running, 10)
        stats = dict(pool.stats)
    finally:
        await pool.close()
    assert kind == "cut" and step < 399
    assert parts == [("step", i) for i in range(step + 1)]
    assert stats["calls"] == 2  # one call each: the stalled task's parts came without polls


async def test_a_linked_task_waiting_behind_a_stalled_one_is_recalled_and_runs_after(
    write_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One actor, two linked tasks: the second waits there behind the first. When the
    first stalls (its check runs long), the second is given back untouched (or at once, if
    its call lands after the stall), and runs once the actor is free again: every part of
    it once, its answer whole."""
    module, folder = _importable(write_module, monkeypatch, "ray_stepper_two", STEPPER)
    pool = RayWorkerPool(1, options=_reaching(folder))
    await pool.start()
    try:
        first_parts: list[Any] = []
        second_parts: list[Any] = []
        first_link = TaskLink(first_parts.append, stall_s=0.1)
        first = asyncio.ensure_future(pool.run(module.steps, 20, 0.5, timeout=30, link=first_link))
        await _until(lambda: pool.stats["calls"] >= 1)  # the first goes out first
        second = asyncio.ensure_future(
            pool.run(
                module.steps, 3, 0.01, timeout=30, link=TaskLink(second_parts.append, stall_s=0.1)
            )
        )
        await _until(lambda: bool(first_parts))
        first_link.cut()
        assert (await asyncio.wait_for(first, 10))[0] == "cut"
        assert await asyncio.wait_for(second, 10) == ("done", 3)
        stats = dict(pool.stats)
    finally:
        await pool.close()
    assert stats["recalled"] == 1 and stats["calls"] == 3  # the second went out twice
    assert second_parts == [("step", i) for i in range(3)]


async def test_a_task_reaching_an_actor_held_by_a_stalled_check_is_given_back_at_once(
    write_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call sent before the driver heard of a stall reaches the actor after it: the
    actor's one process is held by the long check, so the call's tasks are given back
    ("recalled") at once, linked or not, instead of waiting behind it; once the check
    ends, the actor runs tasks again. (The actor is driven here directly: from the
    driver, when the call lands first or second is up to Ray's timing.)"""
    module, folder = _importable(write_module, monkeypatch, "ray_stepper_held", STEPPER)
    monkeypatch.setenv("PYTHONPATH", _reaching(folder).runtime_env["env_vars"]["PYTHONPATH"])
    actor = _ScoringActor(None)
    await actor.start()

    def wire(fn: Any, *args: Any, key: int | None = None) -> Any:
        return (pickle.dumps((fn, args)), 30.0, None, None if key is None else (key, 0.1))

    try:
        [(kind, _, parts)] = await asyncio.wait_for(
            actor.run_many([wire(module.steps, 20, 0.5, key=1)]), 10
        )
        assert kind == "stalled" and parts  # it reported, then its check ran long
        started = time.perf_counter()
        late = await asyncio.wait_for(
            actor.run_many([wire(divmod, 7, 2), wire(module.steps, 3, 0.01, key=2)]), 5
        )
        assert [answer[0] for answer in late] == ["recalled", "recalled"]
        assert time.perf_counter() - started < 3  # not behind the check (until its cut)
        await actor.cut(1)
        seen = len(parts)
        while True:  # follow the stalled task to its end, as the driver does
            kind, value, more = await asyncio.wait_for(actor.follow(1, seen), 10)
            seen += len(more)
            if kind != "more":
                break
        assert kind == "ok" and value[0] == "cut"
        assert await asyncio.wait_for(actor.run_many([wire(divmod, 7, 2)]), 10) == [
            ("ok", (3, 1), None)
        ]
    finally:
        await actor.close()


async def test_a_stalled_task_whose_caller_left_frees_its_actor(
    write_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stalled linked task's caller is cancelled (its batch was): the actor stops the
    task at once and takes work again, as a local pool replaces a worker whose task was
    cancelled, instead of running the slow check out."""
    module, folder = _importable(write_module, monkeypatch, "ray_stepper_left", STEPPER)
    pool = RayWorkerPool(1, options=_reaching(folder))
    await pool.start()
    try:
        parts: list[Any] = []
        link = TaskLink(parts.append, stall_s=0.1)
        running = asyncio.ensure_future(pool.run(module.steps, 10, 30.0, timeout=120, link=link))
        await _until(lambda: bool(parts))
        assert parts  # it stalled: its first report came early
        running.cancel()
        started = time.perf_counter()
        assert await asyncio.wait_for(pool.run(divmod, 7, 2, timeout=30), 30) == (3, 1)
        waited = time.perf_counter() - started
    finally:
        await pool.close()
    assert waited < 15  # not the 30 s the stalled step had left, nor the 300 s of the task


def _steps(parts: list[Any]) -> list[int]:
    return [step for _, step, _ in parts]


async def test_stalls_that_end_by_themselves_and_a_board_overflow_lose_no_part(
    write_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One pool, three linked tasks:

    * two long checks in one task, neither cut: it answers "stalled" once, the follow-up
      brings the rest; every part once, in order, and its own answer;
    * reports past the actor's board (1 MiB): the pipe's parts cross Ray too, in order;
    * a stalled task past its time limit: ScorerTimeout, its parts all handed on, and
      the actor takes work again."""
    module, folder = _importable(write_module, monkeypatch, "ray_pauser", PAUSER)
    pool = RayWorkerPool(1, options=_reaching(folder))
    await pool.start()
    try:
        stalled: list[Any] = []
        plan = [0.01, 0.6, 0.01, 0.01, 0.6, 0.01, 0.01]
        link = TaskLink(stalled.append, stall_s=0.1)
        running = asyncio.ensure_future(pool.run(module.pauses, plan, timeout=20, link=link))
        await _until(lambda: len(stalled) >= 2)
        assert _steps(stalled) == [0, 1] and not running.done()  # the first stall's early answer
        assert await asyncio.wait_for(running, 15) == ("done", len(plan))
        assert _steps(stalled) == list(range(len(plan)))

        big: list[Any] = []
        sizes = [100_000] * 10 + [80_000, 10, 10, 10, 100_000]
        answer = await pool.run(
            module.sized, sizes, timeout=20, link=TaskLink(big.append, stall_s=5.0)
        )
        assert answer == ("done", len(sizes))
        assert _steps(big) == list(range(len(sizes)))
        assert [len(text) for _, _, text in big] == sizes

        late: list[Any] = []
        with pytest.raises(ScorerTimeout):
            await pool.run(
                module.pauses,
                [0.01, 0.01, 60],
                timeout=1.5,
                link=TaskLink(late.append, stall_s=0.1),
            )
        assert _steps(late) == [0, 1, 2]
        assert await asyncio.wait_for(pool.run(divmod, 7, 2, timeout=10), 10) == (3, 1)
    finally:
        await pool.close()


async def test_plain_tasks_queued_behind_a_stalled_linked_task_are_not_held(
    write_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two actors. A linked task stalls on a 30 s check; sixteen plain tasks sent right
    after it are spread over both actors, half of them queued on the stalled one's actor
    behind it. The stalled actor gives back the linked tasks waiting there, but what of
    the plain ones? A row waits for its own work, never for a neighbour's slow check."""
    module, folder = _importable(write_module, monkeypatch, "ray_pauser_plain", PAUSER)
    pool = RayWorkerPool(2, options=_reaching(folder))
    await pool.start()
    try:
        parts: list[Any] = []
        link = TaskLink(parts.append, stall_s=0.1)
        slow = asyncio.ensure_future(pool.run(module.pauses, [0.01, 30.0], timeout=60, link=link))
        await asyncio.sleep(0)  # the linked task goes first
        started = time.perf_counter()
        plain = await asyncio.wait_for(
            asyncio.gather(*(pool.run(divmod, i, 7, timeout=10) for i in range(16))), 40
        )
        waited = time.perf_counter() - started
        assert plain == [divmod(i, 7) for i in range(16)]
        assert not slow.done()  # still in its check
        slow.cancel()  # its caller leaves: the actor drops it (the test above)
    finally:
        await pool.close()
    # a wide gap: held behind the check they would wait 30 s (a 6 s check and a 3 s bound
    # were too close for a loaded machine)
    assert waited < 12, f"plain tasks waited {waited:.1f}s behind the stalled check"


@pytest.mark.slow  # ~19 s, the hanging row's 10 s and starting the actors; cheap twin above
async def test_ordinary_rows_on_ray_do_not_wait_for_a_hanging_neighbour(
    write_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch big enough to be spread over the actors, one row's check hanging past
    reward.timeout_s: that row ends `timeout`, the others are handed on and come back
    long before it."""
    module, folder = _importable(write_module, monkeypatch, "ray_hanging", HANGING)
    ray_options = _reaching(folder).model_dump()
    config = RewardConfig.model_validate(
        {"reward": {"backend": "ray", "num_workers": 2, "timeout_s": 10, "ray": ray_options}}
    )
    engine = plug(await RewardEngine.create(config), module.Hanging())
    answers = [f"a{i}" for i in range(96)]
    answers[3] = "hang"
    rows = [{"data_source": "hanging-check", "response": a, "ground_truth": "a8"} for a in answers]
    try:
        started = time.perf_counter()
        results = await engine.score_many(rows)
        spent = time.perf_counter() - started
        stats, pool_stats = dict(engine.stats), dict(engine.pool.stats)
    finally:
        await engine.close()
    assert stats["spread"] >= 96  # the rows went to the actors in spread tasks
    assert pool_stats["calls"] < 20
    assert results[3].status is Status.TIMEOUT and "timed out after 10s" in (results[3].error or "")
    ordinary = [r for i, r in enumerate(results) if i != 3]
    assert all(r.status is Status.OK for r in ordinary)
    assert sum(r.score or 0 for r in ordinary) == 1.0
    # not the neighbour's 10 s: a wide gap (a 2 s limit and a 1.5 s bound met at 2.3 s
    # under load, the batch's own time there)
    assert max(r.elapsed_s or 0 for r in ordinary) < 5
    assert spent < 30
