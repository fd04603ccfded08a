"""Audit of checks inside spread tasks (scoring.spread, tasks.spread_rows) from outside.

A large batch's spread task now checks the rows its fast paths leave, unless the cache
holds that check. Real engine, real worker pool, real published model outputs, real
verifiers or small ones registered as a plugin would be. Each test names what it guards;
the ones marked "Found:" failed before the fix beside them.
"""

from __future__ import annotations

import asyncio
import pickle
import time
from dataclasses import dataclass
from typing import Any

import pytest

from _support.parse_child import real_rows
from rewardkit.config import RewardConfig
from rewardkit.execution.pool import WorkerPool
from rewardkit.scoring import spread as spread_module
from rewardkit.scoring import tasks
from rewardkit.scoring.engine import RewardEngine
from rewardkit.scoring.outcomes import CheckKey
from rewardkit.types import Result, Status
from rewardkit.verifiers.base import Entry, Extracted, Verdict
from rewardkit.verifiers.registry import VerifierTable, entries
from test_audit9 import HOSTILE


def _fields(result: Result) -> tuple[Any, ...]:
    return (result.index, result.status, result.score, result.error, result.components,
            result.extra)  # fmt: skip


async def _engine(**reward: Any) -> RewardEngine:
    config = RewardConfig.model_validate({"reward": {"num_workers": 2, **reward}})
    return await RewardEngine.create(config)


def _index_of(engine: RewardEngine) -> dict[tuple[str, str], set[tuple[Any, Any]]]:
    """What the spread tasks' index of cached answers must be: rebuilt from the cache."""
    index: dict[tuple[str, str], set[tuple[Any, Any]]] = {}
    for key in engine.outcomes.cache:
        if isinstance(key, CheckKey):
            index.setdefault((key.verifier, key.gold), set()).add((key.answer, key.source))
    return index


# Answers whose check (math-verify) may differ from their fast path, or whose source
# differs for one text: hedged boxes, tags, answer lines, sets, intervals, huge numbers.
CRAFTED = [
    ("\\boxed{1} or \\boxed{2}", "1"),
    ("<answer>\\frac{1}{2}</answer>", "0.5"),
    ("The answer is $\\frac{1}{2}$.", "\\frac12"),
    ("\\boxed{\\{1, 2\\}}", "\\{2, 1\\}"),
    ("\\boxed{(1, 2]}", "(1,2]"),
    ("\\boxed{10^{30}}", "1000000000000000000000000000000"),
    ("\\boxed{0.3333333}", "\\frac{1}{3}"),
    ("\\boxed{\\sin^2 x + \\cos^2 x}", "1"),
    ("\\boxed{x=1, y=2}", "y=2, x=1"),
    ("\\boxed{}", "0"),
]


def _rows_with_repeats() -> list[Any]:
    """Real outputs, each third one's answer removed (None answers), hostile and crafted
    rows inside spread tasks, list ground truths, and repeats of rows in other tasks."""
    rows: list[Any] = []
    for i, row in enumerate(real_rows(200)):
        if i % 3 == 0:
            row = {**row, "response": "no answer here"}
        if i % 11 == 0:
            row = {**row, "ground_truth": [row["ground_truth"]]}
        rows.append(row)
        if i % 9 == 0:
            rows.append(HOSTILE[(i // 9) % len(HOSTILE)])
        if i % 5 == 0:
            response, truth = CRAFTED[(i // 5) % len(CRAFTED)]
            rows.append({"data_source": "math", "response": response, "ground_truth": truth})
    return rows + rows[::4]


async def _two_batches(rows: list[Any], reward: dict[str, Any]) -> list[list[Result]]:
    """Score ``rows`` twice on one engine (the second batch meets what the first cached),
    checking after each that the index of cached answers is the cache's, and bounded."""
    engine = await _engine(**reward)
    out = []
    try:
        for batch in (rows, rows[::-1]):
            out.append(await engine.score_many(batch))
            assert engine.outcomes.answers == _index_of(engine)
            assert len(engine.outcomes.cache) <= engine.section.cache_size
    finally:
        await engine.close()
    return out


@pytest.mark.parametrize(
    "reward",
    [
        {"cache_size": 1},
        {"cache_size": 5, "verifiers": {"fast_paths": False}},
        {"cache_size": 40, "verifiers": {"math": {"extraction": "strict"}}},
    ],
    ids=["cache-1", "cache-5-no-fast-paths", "cache-40-strict"],
)
async def test_small_caches_evicting_mid_batch_agree_with_rows_scored_alone(
    reward: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held: an LRU much smaller than a batch evicts while spread tasks are in flight (the
    answers a task was told are known may be gone when it returns); every Result still
    equals the one-row-at-a-time path's, and the index stays the cache's exactly."""
    rows = _rows_with_repeats()
    spread = await _two_batches(rows, reward)
    monkeypatch.setattr(spread_module, "SPREAD_MIN_ROWS", 10**9)
    alone = await _two_batches(rows, reward)
    for got, want in zip(spread, alone, strict=True):
        assert [_fields(r) for r in got] == [_fields(r) for r in want]


async def test_the_index_of_cached_answers_stays_bounded_over_many_batches() -> None:
    """Held: a long run (many batches of new answers) leaves as many indexed answers as
    the cache holds checks, never more; gone ground truths leave no empty entry."""
    engine = await _engine(cache_size=30, verifiers={"fast_paths": False})
    try:
        for step in range(6):
            rows = [{"data_source": "math", "response": f"\\boxed{{{step * 100 + i}}}",
                     "ground_truth": str(i % 7 + step)} for i in range(70)]  # fmt: skip
            results = await engine.score_many(rows)
            assert [r.status for r in results] == [Status.OK] * 70
            assert [r.score == 1.0 for r in results] == [
                step * 100 + i == i % 7 + step for i in range(70)
            ]
            assert engine.outcomes.answers == _index_of(engine)
            assert (
                sum(map(len, engine.outcomes.answers.values())) == len(engine.outcomes.cache) == 30
            )
            assert all(engine.outcomes.answers.values())
    finally:
        await engine.close()
    assert engine.stats["spread"] == 6 * 70


# --- verifiers registered as a plugin would be: every row needs its check ---------------


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
            import os

            os._exit(9)
        if extracted.answer == "slow":
            time.sleep(self.slow_s)
        elif str(extracted.answer).startswith("fast"):
            time.sleep(0.1)
        return Verdict(float(extracted.answer == ground_truth), {"pred": extracted.answer})


async def _timed_engine(slow_s: float = 3.0, **reward: Any) -> RewardEngine:
    engine = await _engine(**reward)
    verifier = _Timed(slow_s=slow_s)
    entry = Entry("timed-check", lambda name: name == "timed-check", lambda section: verifier)
    engine._verifiers = VerifierTable(engine.section, (entry, *entries()))
    return engine


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


async def test_found_a_check_that_passes_alone_does_not_time_out_its_spread_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found: a spread task had reward.timeout_s for all of it, so a check it started late
    in its check time and that ends within reward.timeout_s of its own (as it does alone)
    ran the task out of time: its worker was killed and all 32 rows scored again one by
    one, each in a task of its own. Fix: the task's deadline adds the time it starts
    checks in (SPREAD_CHECK_S), the most a check that passes alone can add to it."""
    monkeypatch.setattr(spread_module, "SPREAD_CHECK_S", 2.0)  # margins for a loaded machine
    answers = [f"fast{i}" for i in range(15)] + ["slow"] + [f"q{i}" for i in range(48)]
    spread, stats, pool = await _score_timed(_timed_rows(answers), True, timeout_s=4)
    assert pool["timeouts"] == 0 and pool["restarts"] == 0
    assert stats["spread"] == 64 and pool["tasks"] == 2  # 15 + 1 checks in the first task
    assert spread[15].status is Status.OK and spread[3].score == 1.0
    alone, _, alone_pool = await _score_timed(_timed_rows(answers), False, timeout_s=4)
    assert alone_pool["timeouts"] == 0
    assert [_fields(r) for r in spread] == [_fields(r) for r in alone]


async def test_a_check_that_hangs_still_ends_its_task_and_costs_only_its_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Held, with the fix above: a check past reward.timeout_s ends its task; that row is
    a typed timeout, its batch-mates' verdicts equal the one-by-one path's."""
    monkeypatch.setattr(spread_module, "SPREAD_CHECK_S", 0.5)
    answers = ["fast1", "slow"] + [f"fast{i}" for i in range(2, 10)] + [f"q{i}" for i in range(54)]
    started = time.perf_counter()
    spread, _, pool = await _score_timed(_timed_rows(answers), True, slow_s=30, timeout_s=1.5)
    assert time.perf_counter() - started < 15  # a task's 2 s, the row's own 1.5 s, restarts
    assert pool["timeouts"] == 2  # the task, then the row alone
    assert spread[1].status is Status.TIMEOUT and "timed out after 1.5s" in (spread[1].error or "")
    alone, _, _ = await _score_timed(_timed_rows(answers), False, slow_s=30, timeout_s=1.5)
    assert [_fields(r) for r in spread] == [_fields(r) for r in alone]


async def test_found_pool_counts_checks_not_the_extractions_of_a_redone_task() -> None:
    """Found: when a spread task's worker died, each of its rows was extracted again in a
    task of its own and that task was counted as a check (`pool`, README: "`pool` counts
    checks, in a spread task or alone"): /metrics read 96 checks for 64. Fix: the
    re-extraction is not counted (the pool's own `tasks` counter has it)."""
    answers = [f"a{i}" for i in range(64)]
    answers[5] = "die"
    spread, stats, _ = await _score_timed(_timed_rows(answers), True)
    alone, alone_stats, _ = await _score_timed(_timed_rows(answers), False)
    assert spread[5].status is Status.ERROR and "died" in (spread[5].error or "")
    assert [_fields(r) for r in spread] == [_fields(r) for r in alone]
    assert stats["pool"] == alone_stats["pool"] == 64
    assert stats["rows"] == alone_stats["rows"] == 64


class _Sizes:
    """The pickled size of each spread task the engine's (real) pool is given."""

    def __init__(self, engine: RewardEngine) -> None:
        self.sizes: list[int] = []
        pool = engine.pool
        assert pool is not None
        run = pool.run

        async def recorded(fn: Any, *args: Any, **kwargs: Any) -> Any:
            if fn is tasks.spread_rows:
                self.sizes.append(len(pickle.dumps(args)))
            return await run(fn, *args, **kwargs)

        pool.run = recorded  # type: ignore[method-assign]


async def test_found_a_spread_task_does_not_grow_with_the_cache() -> None:
    """Found: each spread task carried every answer the cache held a check of for each of
    its rows' ground truths, built and pickled on the event loop: a common reference
    ("2") with thousands of cached answers made every task megabytes and the loop slower
    than checking inline (100,000 cached answers: 2.4 MB, 60 ms a task). Fix: a task
    carries at most SPREAD_KNOWN_MAX known answers; rows of a reference with more leave
    their checks to the pool alone (where the cache answers them), as before spreading."""
    engine = await _timed_engine()
    sizes = _Sizes(engine)
    try:
        first = await engine.score_many(_timed_rows([f"new{i}" for i in range(64)]))
        before = max(sizes.sizes)
        await engine.score_many(_timed_rows([f"answer-number-{i}" for i in range(3000)]))
        sizes.sizes.clear()
        rows = _timed_rows([f"answer-number-{i}" for i in range(32)] + [f"x{i}" for i in range(32)])
        hits = engine.stats["cache_hits"]
        again = await engine.score_many(rows)
    finally:
        await engine.close()
    assert max(sizes.sizes) < 2 * before, (sizes.sizes, before)
    assert engine.stats["cache_hits"] - hits == 32  # the cached answers: from the cache
    assert all(r.status is Status.OK and r.score == 0.0 for r in first + again)


async def test_cancelled_mid_batch_leaves_no_worker_held_and_scores_again_exactly() -> None:
    """Held: a batch cancelled while its spread tasks check (Ctrl-C, a client gone) and
    then cancel_pending() leave every worker free and the next batch exact."""
    rows = real_rows(400) * 3
    engine = await _engine(verifiers={"fast_paths": False}, cache_size=0)
    try:
        batch = asyncio.create_task(engine.score_many(rows))
        await asyncio.sleep(0.3)
        batch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await batch
        await engine.cancel_pending()
        pool = engine.pool
        assert isinstance(pool, WorkerPool)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(pool._idle) < pool.size:
            await asyncio.sleep(0.05)
        assert len(pool._idle) == pool.size and not pool._waiting and not pool._running
        assert engine.outcomes.answers == _index_of(engine)
        after = await engine.score_many(rows)
    finally:
        await engine.close()
    fresh = await _engine(verifiers={"fast_paths": False}, cache_size=0)
    try:
        want = await fresh.score_many(rows)
    finally:
        await fresh.close()
    assert [_fields(r) for r in after] == [_fields(r) for r in want]
