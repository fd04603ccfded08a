"""A large batch runs its rows' inline phases in the workers: same Results, any failure
costs only its row.

Real engine, real worker pool, real published model outputs: the same rows scored with
the inline phases spread over the workers and kept on the event loop give the same
Results, field for field, and a row that kills its worker mid-batch fails alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pytest

from _support.parse_child import real_rows
from rewardkit.config import RewardConfig
from rewardkit.scoring import spread as spread_module
from rewardkit.scoring.engine import RewardEngine
from rewardkit.types import BadRow, Result, Status
from rewardkit.verifiers.base import Entry, Extracted, Verdict
from rewardkit.verifiers.registry import VerifierTable, entries

HOSTILE: list[Any] = [
    BadRow("not json"),
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": None},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": "\\text{}"},  # blank
    {"data_source": "no-such-source", "response": "1", "ground_truth": "1"},
    {"data_source": "math", "response": "x" * 200_000 + "\\boxed{1}", "ground_truth": "1"},
    {"data_source": "math", "response": 12, "ground_truth": "1"},
]


def _fields(result: Result) -> tuple[Any, ...]:
    return (result.index, result.status, result.score, result.error, result.components,
            result.extra)  # fmt: skip


async def _score(rows: list[Any], **reward: Any) -> tuple[list[Result], dict[str, int]]:
    config = RewardConfig.model_validate({"reward": {"num_workers": 2, **reward}})
    engine = await RewardEngine.create(config)
    try:
        results = await engine.score_many(rows)
    finally:
        await engine.close()
    return results, engine.stats


async def test_spread_rows_get_the_results_they_get_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = real_rows(400)
    rows[5:5] = HOSTILE  # among the first spread task's rows
    rows += HOSTILE
    spread, spread_stats = await _score(rows)
    monkeypatch.setattr(spread_module, "SPREAD_MIN_ROWS", 10**9)
    inline, inline_stats = await _score(rows)
    assert spread_stats["spread"] > 300 and inline_stats["spread"] == 0
    assert [_fields(r) for r in spread] == [_fields(r) for r in inline]
    assert spread_stats["quick"] == inline_stats["quick"]
    assert spread_stats["pool"] == inline_stats["pool"] > 0  # the checks still go to workers
    statuses = {r.status for r in spread[5 : 5 + len(HOSTILE)]}
    assert statuses == {Status.INVALID, Status.OK}  # the 200,000-char row is checked whole


async def test_small_batches_and_a_single_worker_stay_inline() -> None:
    rows = real_rows(40)[:40]
    _, stats = await _score(rows)
    assert stats["spread"] == 0  # below SPREAD_MIN_ROWS: no worker round trip
    _, stats = await _score(real_rows(200), num_workers=1)
    assert stats["spread"] == 0  # one worker: the loop's core would idle


@dataclass(frozen=True)
class _Fragile:
    """Kills its worker on one response; else a plain string comparison."""

    key: str = "fragile"

    def extract(self, response: str) -> Extracted:
        if response == "die":
            os._exit(7)
        if response == "raise":
            raise ValueError("a bug in extract")
        return Extracted(response.strip(), {})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        verdict = self.quick_check(extracted, ground_truth)
        return verdict if verdict is not None else Verdict(0.0)


async def test_a_row_that_kills_its_worker_fails_alone() -> None:
    config = RewardConfig.model_validate({"reward": {"num_workers": 2}})
    engine = await RewardEngine.create(config)
    fragile = Entry("fragile", lambda name: name == "fragile", lambda section: _Fragile())
    engine._verifiers = VerifierTable(config.reward, (fragile, *entries()))
    rows: list[Any] = [{"data_source": "fragile", "response": str(i % 3), "ground_truth": "1"}
                       for i in range(100)]  # fmt: skip
    rows[10] = {"data_source": "fragile", "response": "die", "ground_truth": "1"}
    rows[50] = {"data_source": "fragile", "response": "raise", "ground_truth": "1"}
    try:
        results = await engine.score_many(rows)
    finally:
        await engine.close()
    assert engine.stats["spread"] == 100
    assert results[10].status is Status.ERROR and "died" in (results[10].error or "")
    assert results[50].status is Status.ERROR
    assert results[50].error == "internal error: ValueError: a bug in extract"
    others = [r for i, r in enumerate(results) if i not in (10, 50)]
    assert all(r.status is Status.OK for r in others)
    assert [r.score for r in others] == [float(i % 3 == 1) for i in range(100) if i not in (10, 50)]


# --- the checks a spread task leaves run in the same task --------------------------------


class _Calls:
    """Records the functions the engine's pool runs (the real pool runs them)."""

    def __init__(self, engine: RewardEngine) -> None:
        self.names: list[str] = []
        pool = engine.pool
        assert pool is not None
        run = pool.run

        async def recorded(fn: Any, *args: Any, **kwargs: Any) -> Any:
            self.names.append(fn.__name__)
            return await run(fn, *args, **kwargs)

        pool.run = recorded  # type: ignore[method-assign]

    def count(self, name: str) -> int:
        return self.names.count(name)


async def _engine(**reward: Any) -> RewardEngine:
    config = RewardConfig.model_validate({"reward": {"num_workers": 2, **reward}})
    return await RewardEngine.create(config)


async def test_a_spread_task_checks_the_rows_it_leaves_and_the_cache_answers_them_later() -> None:
    """A row no fast path decides is checked in its spread task, not in a task of its
    own (a round trip each for the loop and a worker); the check is cached as a pooled
    one is, and a later batch's spread task leaves it to that cache."""
    rows = real_rows(400)
    engine = await _engine()
    calls = _Calls(engine)
    try:
        first = await engine.score_many(rows)
        checked, alone = engine.stats["pool"], calls.count("check")
        assert checked >= 20  # real outputs that math-verify decides
        # A task starts checks for SPREAD_CHECK_S only (one real row takes 0.25 s here)
        assert alone < checked / 2 and calls.count("spread_rows") < len(rows) / 16
        again = await engine.score_many(rows)
    finally:
        await engine.close()
    assert engine.stats["pool"] == checked  # nothing checked twice
    assert engine.stats["cache_hits"] == checked
    assert calls.count("check") == alone
    assert [_fields(r) for r in again] == [_fields(r) for r in first]


async def test_past_its_check_time_a_spread_task_leaves_its_checks_to_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = real_rows(400)
    engine = await _engine()
    checked_in_task = await engine.score_many(rows)
    await engine.close()
    monkeypatch.setattr(spread_module, "SPREAD_CHECK_S", 0.0)
    engine = await _engine()
    calls = _Calls(engine)
    try:
        checked_alone = await engine.score_many(rows)
    finally:
        await engine.close()
    assert calls.count("check") == engine.stats["pool"] >= 20
    assert [_fields(r) for r in checked_alone] == [_fields(r) for r in checked_in_task]


@dataclass(frozen=True)
class _SlowCheck(_Fragile):
    """Leaves every row to its check; the check raises on "boom" and sleeps on "slow"."""

    key: str = "slow-check"

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        return None

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        if extracted.answer == "boom":
            raise ValueError("a bug in check")
        if extracted.answer == "slow":
            import time

            time.sleep(30)
        return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})


async def _score_slow_checks(rows: list[Any], spread: bool) -> list[Result]:
    engine = await _engine(timeout_s=1)
    slow = Entry("slow-check", lambda name: name == "slow-check", lambda section: _SlowCheck())
    engine._verifiers = VerifierTable(engine.section, (slow, *entries()))
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
    assert [_fields(r) for r in spread] == [_fields(r) for r in alone]
