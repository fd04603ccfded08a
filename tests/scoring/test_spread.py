"""guards: the spread pipeline: a large batch's inline phases and checks run in the workers.

Real engine, real worker pool, real published model outputs: the same rows scored with
the inline phases spread over the workers and kept on the event loop give the same
Results, field for field; any failure (a dead worker, a bug in a verifier, a check past
reward.timeout_s) costs only its row; speed never costs a correct Result.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _support.engines import (
    EDGE_ROWS,
    PoolCalls,
    fields,
    index_of,
    make_engine,
    plug,
    score_rows,
    spreading_off,
)
from _support.parse_child import real_rows
from rewardkit.execution.pool import WorkerPool
from rewardkit.scoring import spread as spread_module
from rewardkit.scoring import tasks as tasks_module
from rewardkit.scoring.engine import RewardEngine
from rewardkit.types import BadRow, Result, Status
from rewardkit.verifiers.base import Extracted, Verdict

BAD_ROWS: list[Any] = [
    BadRow("not json"),
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": None},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": "\\text{}"},  # blank
    {"data_source": "no-such-source", "response": "1", "ground_truth": "1"},
    {"data_source": "math", "response": "x" * 200_000 + "\\boxed{1}", "ground_truth": "1"},
    {"data_source": "math", "response": 12, "ground_truth": "1"},
]


async def test_spread_rows_get_the_results_they_get_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = real_rows(400)
    rows[5:5] = BAD_ROWS  # among the first spread task's rows
    rows += BAD_ROWS
    spread, spread_stats = await score_rows(rows)
    spreading_off(monkeypatch)
    inline, inline_stats = await score_rows(rows)
    assert spread_stats["spread"] > 300 and inline_stats["spread"] == 0
    assert [fields(r) for r in spread] == [fields(r) for r in inline]
    assert spread_stats["quick"] == inline_stats["quick"]
    assert spread_stats["pool"] == inline_stats["pool"] > 0  # the checks still go to workers
    statuses = {r.status for r in spread[5 : 5 + len(BAD_ROWS)]}
    assert statuses == {Status.INVALID, Status.OK}  # the 200,000-char row is checked whole


def _mixed_rows() -> list[Any]:
    rows: list[Any] = []
    for i, row in enumerate(real_rows(200)):
        rows.append({**row, "extra_info": {"response_length": i % 30}} if i % 3 else row)
        if i % 7 == 0:
            rows.append(EDGE_ROWS[(i // 7) % len(EDGE_ROWS)])  # inside spread tasks
    return rows + EDGE_ROWS + rows[:50]  # and duplicates of rows already in other tasks


@pytest.mark.parametrize(
    "reward",
    [
        {},
        {"verifiers": {"fast_paths": False}},
        {
            "format_reward": {"enable": True},
            "overlong_buffer": {"enable": True, "len": 4, "max_resp_len": 16},
        },
        {"cache_size": 0},
    ],
    ids=["defaults", "no-fast-paths", "format-overlong", "no-cache"],
)
async def test_spread_and_inline_agree_on_mixed_edge_rows(
    reward: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every field of every Result, in order, equal with spreading on and off."""
    rows = _mixed_rows()
    spread, spread_stats = await score_rows(rows, **reward)
    spreading_off(monkeypatch)
    inline, inline_stats = await score_rows(rows, **reward)
    assert spread_stats["spread"] > 250 and inline_stats["spread"] == 0
    assert [fields(r) for r in spread] == [fields(r) for r in inline]
    assert [r.index for r in spread] == list(range(len(rows)))
    for counter in ("rows", "quick"):  # /metrics reads the same either way
        assert spread_stats[counter] == inline_stats[counter], counter


async def test_small_batches_and_a_single_worker_stay_inline() -> None:
    rows = real_rows(40)[:40]
    _, stats = await score_rows(rows)
    assert stats["spread"] == 0  # below SPREAD_MIN_ROWS: no worker round trip
    _, stats = await score_rows(real_rows(200), num_workers=1)
    assert stats["spread"] == 0  # one worker: the loop's core would idle


# --- verifiers with bugs, registered as a plugin would be ---------------------------------


@dataclass(frozen=True)
class _Fragile:
    """Verifier bugs on request: ``die`` kills its worker in extract, ``slow`` sleeps there
    1 s, ``raise`` raises there, ``bad`` gets a verdict whose score is no number; else a
    plain string comparison."""

    key: str = "fragile"

    def extract(self, response: str) -> Extracted:
        if response == "die":
            os._exit(7)
        if response == "slow":
            time.sleep(1.0)
        if response == "raise":
            raise ValueError("a bug in extract")
        return Extracted(response.strip(), {"seen": response[:8]})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        if extracted.answer == "bad":
            return Verdict("not a number", {})  # type: ignore[arg-type]
        return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        verdict = self.quick_check(extracted, ground_truth)
        return verdict if verdict is not None else Verdict(0.0)


def _fragile_rows(special: dict[int, str]) -> list[Any]:
    """100 rows of the fragile verifier, with ``special`` responses at the indexes named."""
    rows: list[Any] = [{"data_source": "fragile", "response": str(i % 3), "ground_truth": "1"}
                       for i in range(100)]  # fmt: skip
    for index, response in special.items():
        rows[index] = {**rows[0], "response": response}
    return rows


async def _score_fragile(rows: list[Any], **reward: Any) -> tuple[list[Result], dict[str, int]]:
    engine = plug(await make_engine(**reward), _Fragile())
    try:
        return await engine.score_many(rows), engine.stats
    finally:
        await engine.close()


async def test_a_row_that_kills_its_worker_fails_alone() -> None:
    results, stats = await _score_fragile(_fragile_rows({10: "die", 50: "raise"}))
    assert stats["spread"] == 100
    assert results[10].status is Status.ERROR and "died" in (results[10].error or "")
    assert results[50].status is Status.ERROR
    assert results[50].error == "internal error: ValueError: a bug in extract"
    others = [r for i, r in enumerate(results) if i not in (10, 50)]
    assert all(r.status is Status.OK for r in others)
    assert [r.score for r in others] == [float(i % 3 == 1) for i in range(100) if i not in (10, 50)]


async def test_a_row_whose_extraction_kills_its_worker_is_not_run_again() -> None:
    """The task reports the row it works on: the one whose extraction killed the worker
    ends `error` at once (one crash, not a second one alone); its neighbours are redone."""
    engine = plug(await make_engine(), _Fragile())
    try:
        results = await engine.score_many(_fragile_rows({10: "die"}))
        crashes = engine.pool.stats["crashes"]
    finally:
        await engine.close()
    assert results[10].status is Status.ERROR and "died" in (results[10].error or "")
    assert crashes == 1
    assert all(r.status is Status.OK for i, r in enumerate(results) if i != 10)


async def test_a_spread_task_timeout_costs_only_its_slow_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ScorerTimeout is a BaseException: one spread task past reward.timeout_s must not fail
    the whole batch (an ExceptionGroup out of score_many: HTTP 500, `rewardkit score`
    stopped). In the slow row's task too: a bug in extract (read as the loop reads it,
    "internal error: ...", also when the task's rows are scored again alone) and a
    verdict that is no number."""
    rows = _fragile_rows({10: "slow", 11: "raise", 12: "bad"})
    spread, _ = await _score_fragile(rows, timeout_s=0.5)
    assert spread[10].status is Status.TIMEOUT and "timed out" in (spread[10].error or "")
    spreading_off(monkeypatch)
    inline, _ = await _score_fragile(rows, timeout_s=0.5)
    # On the loop, the inline phases have no hard limit: the slow row is scored there.
    # In a worker they run under reward.timeout_s: a typed timeout, never a wrong score.
    assert inline[10].status is Status.OK
    assert spread[11].error == "internal error: ValueError: a bug in extract"
    others = [fields(r) for i, r in enumerate(spread) if i != 10]
    assert others == [fields(r) for i, r in enumerate(inline) if i != 10]


async def test_a_verifier_bug_after_a_spread_task_costs_only_its_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A verdict that breaks the engine's combining (a verifier bug) must not raise out of
    the spread task and fail every row of the batch: as inline, it costs only its row."""
    rows = _fragile_rows({10: "bad"})
    spread, _ = await _score_fragile(rows)
    spreading_off(monkeypatch)
    inline, _ = await _score_fragile(rows)
    assert spread[10].status is Status.ERROR
    assert (spread[10].error or "").startswith("internal error: ValueError")
    assert [fields(r) for r in spread] == [fields(r) for r in inline]


# --- the checks a spread task leaves run in the same task --------------------------------


async def test_a_spread_task_checks_the_rows_it_leaves_and_the_cache_answers_them_later() -> None:
    """A row no fast path decides is checked in its spread task, not in a task of its
    own (a round trip each for the loop and a worker); the check is cached as a pooled
    one is, and a later batch's spread task leaves it to that cache."""
    rows = real_rows(400)
    engine = await make_engine()
    calls = PoolCalls(engine)
    try:
        first = await engine.score_many(rows)
        checked, alone = engine.stats["pool"], calls.count("check")
        assert checked >= 15  # real outputs that math-verify decides (19 of these 400)
        # A task starts checks for SPREAD_CHECK_S only (one real row takes 0.25 s here)
        assert alone < checked / 2 and calls.count("spread_rows") < len(rows) / 16
        again = await engine.score_many(rows)
    finally:
        await engine.close()
    assert engine.stats["pool"] == checked  # nothing checked twice
    assert engine.stats["cache_hits"] == checked
    assert calls.count("check") == alone
    assert [fields(r) for r in again] == [fields(r) for r in first]


async def test_past_its_check_time_a_spread_task_leaves_its_checks_to_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = real_rows(400)
    checked_in_task, _ = await score_rows(rows)
    monkeypatch.setattr(spread_module, "SPREAD_CHECK_S", 0.0)
    engine = await make_engine()
    calls = PoolCalls(engine)
    try:
        checked_alone = await engine.score_many(rows)
    finally:
        await engine.close()
    assert calls.count("check") == engine.stats["pool"] >= 15
    assert [fields(r) for r in checked_alone] == [fields(r) for r in checked_in_task]


@dataclass(frozen=True)
class _SlowCheck(_Fragile):
    """Leaves every row to its check; the check raises on "boom" and sleeps on "slow"."""

    key: str = "slow-check"

    def extract(self, response: str) -> Extracted:
        # Not _Fragile's: its 1 s sleep on "slow" would race the 1 s timeout, so the
        # row would time out in extract or in check, with or without what was seen.
        return Extracted(response.strip(), {"seen": response[:8]})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        return None

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        if extracted.answer == "boom":
            raise ValueError("a bug in check")
        if extracted.answer == "slow":
            time.sleep(30)
        return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})


async def _score_slow_checks(rows: list[Any], spread: bool) -> list[Result]:
    engine = plug(await make_engine(timeout_s=1), _SlowCheck())
    try:
        if spread:
            return await engine.score_many(rows)
        return [await engine.score_row(i, row) for i, row in enumerate(rows)]  # one by one
    finally:
        await engine.close()


async def test_a_check_that_raises_or_hangs_in_a_spread_task_costs_only_its_row() -> None:
    """A check that raises is left to the pool, where it fails as it fails alone; one
    that outlasts reward.timeout_s ends its task, and its rows are then scored alone: a
    typed timeout for that row, the others' verdicts intact."""
    rows: list[Any] = [{"data_source": "slow-check", "response": str(i % 3), "ground_truth": "1"}
                       for i in range(100)]  # fmt: skip
    rows[20] = {"data_source": "slow-check", "response": "boom", "ground_truth": "1"}
    rows[70] = {"data_source": "slow-check", "response": "slow", "ground_truth": "1"}
    spread = await _score_slow_checks(rows, spread=True)
    alone = await _score_slow_checks(rows, spread=False)
    assert spread[20].status is Status.ERROR and "ValueError: a bug in check" in (
        spread[20].error or ""
    )
    assert spread[70].status is Status.TIMEOUT
    assert [fields(r) for r in spread] == [fields(r) for r in alone]


@dataclass(frozen=True)
class _Timed:
    """Leaves every row to its check (fast-* or slow answers) but "q*" ones; the check
    sleeps 0.1 s for fast-* answers, SLOW_S for "slow", and kills its worker on "die"."""

    key: str = "timed-check"
    slow_s: float = 3.0

    def extract(self, response: str) -> Extracted:
        return Extracted(response.strip(), {"source": "plain"})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        if str(extracted.answer).startswith("q"):
            return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})
        return None

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        if extracted.answer == "die":
            os._exit(9)
        if extracted.answer == "deaf":  # runs long, and its task no longer hears a cut
            tasks_module.cut_asked = lambda: False
            time.sleep(0.3)
        if extracted.answer == "slow":
            time.sleep(self.slow_s)
        elif str(extracted.answer).startswith("fast"):
            time.sleep(0.1)
        return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})


async def _timed_engine(slow_s: float = 3.0, **reward: Any) -> RewardEngine:
    return plug(await make_engine(**reward), _Timed(slow_s=slow_s))


def _timed_rows(answers: list[str]) -> list[dict[str, Any]]:
    # one ground truth: every row goes to one worker slot, so rows 0-31 are one task
    return [{"data_source": "timed-check", "response": a, "ground_truth": "fast3"} for a in answers]


async def _score_timed(
    rows: list[Any], spread: bool, **reward: Any
) -> tuple[list[Result], dict[str, int], dict[str, int]]:
    engine = await _timed_engine(**reward)  # slow_s may be in reward
    try:
        if spread:
            results = await engine.score_many(rows)
        else:
            results = await asyncio.gather(*(engine.score_row(i, r) for i, r in enumerate(rows)))
    finally:
        await engine.close()
    assert isinstance(engine.pool, WorkerPool)
    return list(results), engine.stats, engine.pool.stats


async def test_a_check_that_passes_alone_does_not_time_out_its_spread_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A check a spread task starts late in its check time, and that ends within
    reward.timeout_s of its own (as it does alone), must not run the task out of time
    (its worker killed, all 32 rows scored again one by one): the task's deadline adds
    the time it starts checks in (SPREAD_CHECK_S), the most such a check can add."""
    # The slow check starts at 3 s of the task's 4 s of check time (1 s of slack for a
    # loaded machine) and ends at 9 s: past reward.timeout_s (8) from the task's start,
    # within it from its own
    monkeypatch.setattr(spread_module, "SPREAD_CHECK_S", 4.0)
    monkeypatch.setattr(spread_module, "SPREAD_STALL_S", 30.0)  # no hand-off: the task's deadline
    answers = [f"fast{i}" for i in range(30)] + ["slow"] + [f"q{i}" for i in range(33)]
    timed = {"timeout_s": 8, "slow_s": 6}
    spread, stats, pool = await _score_timed(_timed_rows(answers), True, **timed)
    assert pool["timeouts"] == 0 and pool["restarts"] == 0
    assert stats["spread"] == 64 and pool["tasks"] == 2  # 30 + 1 checks in the first task
    assert spread[30].status is Status.OK and spread[3].score == 1.0
    alone, _, alone_pool = await _score_timed(_timed_rows(answers), False, **timed)
    assert alone_pool["timeouts"] == 0
    assert [fields(r) for r in spread] == [fields(r) for r in alone]


async def test_a_check_that_hangs_still_ends_its_task_and_costs_only_its_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With that margin, a check past reward.timeout_s still ends its task; that row is
    a typed timeout, its batch-mates' verdicts equal the one-by-one path's (they were
    handed to other tasks while the check ran)."""
    monkeypatch.setattr(spread_module, "SPREAD_CHECK_S", 0.5)
    answers = ["fast1", "slow"] + [f"fast{i}" for i in range(2, 10)] + [f"q{i}" for i in range(54)]
    started = time.perf_counter()
    spread, _, pool = await _score_timed(_timed_rows(answers), True, slow_s=30, timeout_s=1.5)
    assert time.perf_counter() - started < 15  # a task's 2 s, restarts
    # the task only: it reported the row whose check it ran, and that check's timeout is
    # the row's (never run again alone)
    assert pool["timeouts"] == 1
    assert spread[1].status is Status.TIMEOUT and "timed out after 1.5s" in (spread[1].error or "")
    alone, _, _ = await _score_timed(_timed_rows(answers), False, slow_s=30, timeout_s=1.5)
    assert [fields(r) for r in spread] == [fields(r) for r in alone]


async def test_a_cut_task_that_starts_a_handed_row_is_stopped_not_awaited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A check that ends just as its task is cut lets the task, not yet told, start the
    next row's check, which another task now has: the first task is stopped at once (its
    worker replaced), so that row's check runs once, in the task that owns it, and the
    batch does not wait for the other. Here the task never hears the cut ("deaf")."""
    monkeypatch.setattr(spread_module, "SPREAD_CHECK_S", 0.5)  # it starts checks past 0.3 s
    answers = ["deaf", "slow"] + [f"fast{i}" for i in range(2, 6)] + [f"q{i}" for i in range(58)]
    spread, stats, pool = await _score_timed(_timed_rows(answers), True, slow_s=30, timeout_s=1.5)
    assert stats["spread"] == 64
    assert pool["timeouts"] == 1  # the slow check, in the task that owns it; not twice
    assert spread[1].status is Status.TIMEOUT and spread[0].ok and spread[2].ok
    assert [r.score for r in spread[2:6]] == [0.0, 1.0, 0.0, 0.0]  # fast3 is the gold


async def test_a_check_that_ends_in_time_is_no_timeout_when_the_loop_was_busy() -> None:
    """The engine times a handed-on row out itself, once it has had reward.timeout_s: a
    check that ended in time (0.8 s of 1 s) while the event loop was busy elsewhere
    (0.75 to 1.05 s) is read, not thrown away as a timeout, nor cached as one (an outside
    red team's finding)."""
    engine = await _timed_engine(slow_s=0.8, timeout_s=1)
    try:
        await engine.score_many(_timed_rows([f"q{i}" for i in range(64)]))  # warm
        answers = [f"q{i}" for i in range(64)]
        answers[2] = "slow"

        async def busy() -> None:  # another request's work on the loop, across the limit
            await asyncio.sleep(0.75)
            time.sleep(0.3)

        results, _ = await asyncio.gather(engine.score_many(_timed_rows(answers)), busy())
        again = await engine.score_many(_timed_rows(["slow"]))
    finally:
        await engine.close()
    assert results[2].status is Status.OK and again[0].status is Status.OK


async def test_cancelling_a_request_fails_no_other_waiting_on_its_check() -> None:
    """A long check of a spread task is the one other requests' rows with its answer wait
    for; when its request is cancelled, the check runs again in the pool for them, never
    an error of someone else's cancellation (an outside red team's finding)."""
    engine = await _timed_engine(slow_s=0.6, timeout_s=2)
    try:
        answers = [f"q{i}" for i in range(64)]
        answers[2] = "slow"
        first = asyncio.ensure_future(engine.score_many(_timed_rows(answers)))
        await asyncio.sleep(0.3)  # its check of "slow" has run past SPREAD_STALL_S
        second = asyncio.ensure_future(engine.score_many(_timed_rows(["slow"])))
        await asyncio.sleep(0.05)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        (result,) = await second
    finally:
        await engine.close()
    assert result.status is Status.OK and result.score == 0.0, result


@dataclass(frozen=True)
class _Hanging:
    """Leaves every row to its check, a few milliseconds, except "hang": a minute."""

    key: str = "hanging-check"

    def extract(self, response: str) -> Extracted:
        return Extracted(response.strip(), {"source": "plain"})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        return None

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        time.sleep(60 if extracted.answer == "hang" else 0.003)
        return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})


def _hanging_rows(answers: list[str], gold: str) -> list[dict[str, Any]]:
    # one ground truth: every row prefers one worker, rows 0-31 are one task
    return [{"data_source": "hanging-check", "response": a, "ground_truth": gold} for a in answers]


@pytest.mark.parametrize("hanging", [(3,), (3, 40)], ids=["one", "as many as workers"])
async def test_ordinary_rows_do_not_wait_for_a_hanging_neighbour(hanging: tuple[int, ...]) -> None:
    """A batch of ordinary rows (each a check in a worker) with one row whose check hangs
    past reward.timeout_s, early in the first spread task: the rows after it are handed
    to another task when that check has run SPREAD_STALL_S, the rows before it are
    finished then; their latency stays far from the neighbour's 8 s timeout (and within
    a few times that of the same batch without the hanging row); the hanging row ends
    `timeout`. With two hanging rows, one in each of the two workers, a spare worker
    serves the others (the pool's STUCK_TASK_S)."""
    answers = [f"a{i}" for i in range(96)]
    engine = plug(await make_engine(timeout_s=8), _Hanging())
    try:  # another ground truth for each batch: no check of the first is cached for the second
        quiet = await engine.score_many(_hanging_rows(answers, "a7"))
        for at in hanging:
            answers[at] = "hang"
        started = time.perf_counter()
        loud = await engine.score_many(_hanging_rows(answers, "a8"))
        spent = time.perf_counter() - started
    finally:
        await engine.close()
    for at in hanging:
        assert loud[at].status is Status.TIMEOUT and "timed out after 8s" in (loud[at].error or "")
    ordinary = [r for i, r in enumerate(loud) if i not in hanging]
    assert all(r.status is Status.OK for r in ordinary + quiet)
    assert sum(r.score or 0 for r in ordinary) == sum(r.score or 0 for r in quiet) == 1.0
    slowest = max(r.elapsed_s or 0 for r in ordinary)
    baseline = max(r.elapsed_s or 0 for r in quiet)
    # Held behind the neighbour they would wait its 8 s. Bounds with a wide gap to that:
    # two batches timed seconds apart (a 2.5 s limit and 2x the other batch's time were
    # too close for a loaded machine)
    assert slowest < 4.0 and slowest < 3 * baseline + 2, (slowest, baseline)
    assert spent < 20  # the hanging row's 8 s and the task's restart


async def test_without_spares_as_many_hanging_rows_as_workers_hold_every_other_row() -> None:
    """What the spares are for, with reward.spare_workers=0: two rows that hang, one in
    each worker of a pool of two, and the ordinary rows wait for their time limit."""
    answers = [f"a{i}" for i in range(96)]
    answers[3] = answers[40] = "hang"
    engine = plug(await make_engine(timeout_s=3, spare_workers=0), _Hanging())
    try:
        loud = await engine.score_many(_hanging_rows(answers, "a8"))
        spares = engine.pool.stats["spares"]
    finally:
        await engine.close()
    ordinary = [r for i, r in enumerate(loud) if i not in (3, 40)]
    assert all(r.status is Status.OK for r in ordinary) and spares == 0
    assert max(r.elapsed_s or 0 for r in ordinary) > 2.5  # the hanging rows' 3 s


@dataclass(frozen=True)
class _SlowThenHanging:
    """Decides every row inline; extracting "slow" takes 90 ms, "hang" a minute."""

    key: str = "slow-then-hanging"

    def extract(self, response: str) -> Extracted:
        time.sleep({"slow": 0.09, "hang": 60.0}.get(response, 0.0))
        return Extracted(response, {"source": "plain"})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        verdict = self.quick_check(extracted, ground_truth)
        assert verdict is not None
        return verdict


async def test_ordinary_rows_do_not_wait_for_a_neighbours_hanging_extraction() -> None:
    """A spread task reports before each row's extraction too: one that hangs (a
    pathological pattern, say) holds no other row of its task (the rows after it are
    handed on after SPREAD_STALL_S), and ends `timeout` once it has had reward.timeout_s,
    without being extracted a second time alone (which cost it twice its limit)."""
    rows = [
        {"data_source": "slow-then-hanging", "response": f"a{i}", "ground_truth": "a7"}
        for i in range(96)
    ]
    engine = plug(await make_engine(timeout_s=2), _SlowThenHanging())
    try:
        quiet = await engine.score_many(rows)
        rows[3] = {**rows[3], "response": "hang"}
        loud = await engine.score_many(rows)
    finally:
        await engine.close()
    assert loud[3].status is Status.TIMEOUT and "timed out after 2s" in (loud[3].error or "")
    assert (loud[3].elapsed_s or 0) < 3.5  # its 2 s and the task's check time, once
    ordinary = [r for i, r in enumerate(loud) if i != 3]
    assert [r.score for r in ordinary] == [r.score for i, r in enumerate(quiet) if i != 3]
    assert all(r.status is Status.OK for r in ordinary)
    slowest = max(r.elapsed_s or 0 for r in ordinary)
    baseline = max(r.elapsed_s or 0 for r in quiet)
    assert slowest < 1.2 and slowest < 3 * baseline + 0.6, (slowest, baseline)  # not 2 s


@pytest.mark.parametrize("cache_size", [0, 100_000])
async def test_a_hanging_check_shared_by_rows_of_a_task_runs_once(cache_size: int) -> None:
    """Rows of one prompt with the same hanging answer: once its check has run
    SPREAD_STALL_S, the rows handed on wait for that check (the engine's in-flight
    promise) instead of checking the answer again, each to its own timeout; with the
    cache off too, and the row whose check it is is never checked a second time alone."""
    answers = [f"a{i}" for i in range(64)]
    for index in (3, 10, 20):  # one task (one ground truth: rows 0-31)
        answers[index] = "hang"
    engine = plug(await make_engine(timeout_s=1, cache_size=cache_size), _Hanging())
    try:
        await engine.score_many(_hanging_rows([f"a{i}" for i in range(64)], "a8"))  # warm
        results = await engine.score_many(_hanging_rows(answers, "a7"))
        pool_stats = dict(engine.pool.stats)
    finally:
        await engine.close()
    assert pool_stats["timeouts"] == 1  # one check ran out of time, once
    for index in (3, 10, 20):
        assert results[index].status is Status.TIMEOUT
        assert (results[index].elapsed_s or 0) < 1.8, results[index].elapsed_s
    ordinary = [r for i, r in enumerate(results) if i not in (3, 10, 20)]
    assert all(r.status is Status.OK for r in ordinary)
    assert max(r.elapsed_s or 0 for r in ordinary) < 0.8  # not the 1 s timeout, nor 2


async def test_a_row_late_in_its_task_gets_its_whole_timeout_once() -> None:
    """A row's limit is its own reward.timeout_s, however late in its task it starts:
    rows that each take a while (none long enough to be handed on) delay it, then it
    hangs; it ends `timeout` once (never extracted again alone), and a task of slow rows
    that all end in time is no timeout at all."""
    source = "slow-then-hanging"
    engine = plug(await make_engine(timeout_s=1), _SlowThenHanging())
    try:
        rows = [{"data_source": source, "response": r, "ground_truth": "x"}
                for r in ["slow"] * 4 + ["hang"] + ["x"] * 59]  # fmt: skip
        late = await engine.score_many(rows)
        after_late = dict(engine.pool.stats)
        slow = await engine.score_many([{**row, "response": "slow"} for row in rows])
        after_slow = dict(engine.pool.stats)
    finally:
        await engine.close()
    assert late[4].status is Status.TIMEOUT and after_late["timeouts"] == 1
    assert 1.0 <= (late[4].elapsed_s or 0) < 2.0, late[4].elapsed_s  # 0.36 s of rows, then 1 s
    assert all(r.status is Status.OK for i, r in enumerate(late) if i != 4)
    # 32 rows of 90 ms: 2.9 s in one task, past its 1 s limit, each row in time
    assert all(r.status is Status.OK for r in slow) and after_slow["timeouts"] == 1


async def test_pool_counts_checks_not_the_extractions_of_a_redone_task() -> None:
    """When a spread task's worker dies, each of its rows is extracted again in a task of
    its own; that task is no check (README: "`pool` counts checks, in a spread task or
    alone"), so /metrics reads 64 checks for 64 rows, not 96. The pool's own `tasks`
    counter has the re-extractions."""
    answers = [f"a{i}" for i in range(64)]
    answers[5] = "die"
    spread, stats, _ = await _score_timed(_timed_rows(answers), True)
    alone, alone_stats, _ = await _score_timed(_timed_rows(answers), False)
    assert spread[5].status is Status.ERROR and "died" in (spread[5].error or "")
    assert [fields(r) for r in spread] == [fields(r) for r in alone]
    assert stats["pool"] == alone_stats["pool"] == 64
    assert stats["rows"] == alone_stats["rows"] == 64


async def test_a_spread_task_does_not_grow_with_the_cache() -> None:
    """A spread task carries at most SPREAD_KNOWN_MAX known answers (the cache holds their
    checks); rows of a reference with more leave their checks to the pool alone, where
    the cache answers them. Carrying them all made every task megabytes for a common
    reference ("2") with thousands of cached answers, built and pickled on the event
    loop: slower than checking inline (100,000 cached answers: 2.4 MB, 60 ms a task)."""
    engine = await _timed_engine()
    calls = PoolCalls(engine)
    try:
        first = await engine.score_many(_timed_rows([f"new{i}" for i in range(64)]))
        before = max(calls.spread_sizes)
        await engine.score_many(_timed_rows([f"answer-number-{i}" for i in range(3000)]))
        calls.spread_sizes.clear()
        rows = _timed_rows([f"answer-number-{i}" for i in range(32)] + [f"x{i}" for i in range(32)])
        hits = engine.stats["cache_hits"]
        again = await engine.score_many(rows)
    finally:
        await engine.close()
    assert max(calls.spread_sizes) < 2 * before, (calls.spread_sizes, before)
    assert engine.stats["cache_hits"] - hits == 32  # the cached answers: from the cache
    assert all(r.status is Status.OK and r.score == 0.0 for r in first + again)


# --- batches that must not be spread, and keys the pool can hash ------------------------


def _needs_the_pool(count: int, tag: str) -> list[dict[str, Any]]:
    """Distinct rows no fast path decides: each is a math-verify check in a worker."""
    return [{"data_source": "math", "response": f"\\boxed{{\\sin^2 {tag} + \\cos^2 {tag} + {i}}}",
             "ground_truth": str(i + 1)} for i in range(count)]  # fmt: skip


async def test_a_one_row_request_does_not_wait_behind_a_big_spread_one() -> None:
    """Two requests at once (as two HTTP requests: one fair-share owner each), one of
    1,500 rows (spread tasks and checks queued) and one of 1 row needing a worker: the
    small one waits for about one task, not for the big one's queue."""
    engine = await make_engine()
    try:
        big = (real_rows(400) * 4)[:1200] + _needs_the_pool(300, "x")
        started = time.perf_counter()
        big_task = asyncio.create_task(engine.score_many(big))
        await asyncio.sleep(0.3)
        waits = []
        for i in range(5):
            asked = time.perf_counter()
            [small] = await engine.score_many(_needs_the_pool(1, f"y_{i}"))
            waits.append(time.perf_counter() - asked)
            assert small.status is Status.OK and small.score == 1.0
        done = await big_task
        big_s = time.perf_counter() - started
    finally:
        await engine.close()
    assert all(r.status is Status.OK for r in done)
    assert big_task.done() and sum(waits) < big_s  # all five answered inside the big one
    assert max(waits) < max(1.0, big_s / 4), f"small waits {waits} against {big_s:.1f}s"


async def test_a_custom_function_batch_is_not_spread(write_module: Any) -> None:
    """With custom_reward_function set, rows go to the user's function, never to the
    spread tasks (which would run the built-in verifiers instead)."""
    path = write_module(
        "spread_custom_reward",
        """
        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            return 0.25 if solution_str == ground_truth else -0.25
        """,
    )
    rows = [{"data_source": "math", "response": str(i % 2), "ground_truth": "1"}
            for i in range(100)]  # fmt: skip
    results, stats = await score_rows(rows, custom_reward_function={"path": path})
    assert stats["spread"] == 0
    assert [r.score for r in results] == [0.25 if i % 2 else -0.25 for i in range(100)]


async def test_a_reward_model_batch_is_not_spread_and_its_rule_part_agrees(
    tmp_path: Path,
) -> None:
    """With a (tiny, real) reward model on, a batch stays unspread, and each row's rule
    component is what the spread rule-only run gives it."""
    import torch
    import transformers

    from _support.model_fakes import build_tokenizer, llama_config, save_model

    tok = build_tokenizer("llama")
    torch.manual_seed(0)
    model = transformers.LlamaForSequenceClassification(
        llama_config(len(tok), num_labels=1, pad_token_id=tok.pad_token_id)
    )
    path = save_model(tmp_path / "rm", model, tok)
    rows = real_rows(100)[:80]
    rm = {"enable": True, "model_path": path, "device": "cpu"}
    with_rm, rm_stats = await score_rows(rows, reward_model=rm)
    rule_only, rule_stats = await score_rows(rows)
    assert rm_stats["spread"] == 0 and rule_stats["spread"] == len(rows)
    assert all(r.status is Status.OK and len(r.components) == 2 for r in with_rm)
    assert [r.components["rule"] for r in with_rm] == [r.components["rule"] for r in rule_only]


async def test_list_and_dict_ground_truths_reach_the_pool_with_a_hashable_key() -> None:
    """A list ground truth (unhashable) needing math-verify goes to a worker with the
    engine's JSON-string affinity key and is scored; a dict one is refused by name."""
    rows = [{"data_source": "math", "response": f"\\boxed{{\\sin^2 x + \\cos^2 x + {i}}}",
             "ground_truth": [str(i + 1), "zz"]} for i in range(40)]  # fmt: skip
    rows += [{**row, "ground_truth": {"answer": row["ground_truth"][0]}} for row in rows]
    results, stats = await score_rows(rows)
    assert stats["spread"] == 80 and stats["pool"] == 40
    assert all(r.status is Status.OK and r.score == 1.0 for r in results[:40])
    assert all(r.status is Status.INVALID and "ground_truth" in (r.error or "")
               for r in results[40:])  # fmt: skip


async def test_cancelled_mid_batch_leaves_no_worker_held_and_scores_again_exactly() -> None:
    """A batch cancelled while its spread tasks check (Ctrl-C, a client gone) and then
    cancel_pending() leave every worker free and the next batch exact."""
    rows = real_rows(400) * 12  # about a second of checks on 2 warm workers
    engine = await make_engine(verifiers={"fast_paths": False}, cache_size=0)
    try:
        batch = asyncio.create_task(engine.score_many(rows))
        pool = engine.pool
        assert isinstance(pool, WorkerPool)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not pool._running:
            await asyncio.sleep(0.005)  # until spread tasks are in the workers
        assert not batch.done()
        batch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await batch
        await engine.cancel_pending()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(pool._idle) < pool.size:
            await asyncio.sleep(0.05)
        assert len(pool._idle) == pool.size and not pool._waiting and not pool._running
        assert engine.outcomes.answers == index_of(engine)
        after = await engine.score_many(rows)
    finally:
        await engine.close()
    want, _ = await score_rows(rows, verifiers={"fast_paths": False}, cache_size=0)
    assert [fields(r) for r in after] == [fields(r) for r in want]
