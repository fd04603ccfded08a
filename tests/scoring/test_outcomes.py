"""guards: dedup and the cache of checks: an LRU that evicts mid-batch, its index of answers.

Real engine, real worker pool, real published model outputs: whatever the cache holds or
drops while spread tasks are in flight, every Result equals the one-row-at-a-time path's,
and the spread tasks' index of cached answers is exactly the cache's.
"""

from __future__ import annotations

from typing import Any

import pytest

from _support.engines import EDGE_ROWS, fields, index_of, make_engine, spreading_off
from _support.parse_child import real_rows
from rewardkit import RewardLoop
from rewardkit.types import Result, Status

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
    """Real outputs, each third one's answer removed (None answers), edge and crafted
    rows inside spread tasks, list ground truths, and repeats of rows in other tasks."""
    rows: list[Any] = []
    for i, row in enumerate(real_rows(200)):
        if i % 3 == 0:
            row = {**row, "response": "no answer here"}
        if i % 11 == 0:
            row = {**row, "ground_truth": [row["ground_truth"]]}
        rows.append(row)
        if i % 9 == 0:
            rows.append(EDGE_ROWS[(i // 9) % len(EDGE_ROWS)])
        if i % 5 == 0:
            response, truth = CRAFTED[(i // 5) % len(CRAFTED)]
            rows.append({"data_source": "math", "response": response, "ground_truth": truth})
    return rows + rows[::4]


async def _two_batches(rows: list[Any], reward: dict[str, Any]) -> list[list[Result]]:
    """Score ``rows`` twice on one engine (the second batch meets what the first cached),
    checking after each that the index of cached answers is the cache's, and bounded."""
    engine = await make_engine(**reward)
    out = []
    try:
        for batch in (rows, rows[::-1]):
            out.append(await engine.score_many(batch))
            assert engine._cached_answers == index_of(engine)
            assert len(engine._cache) <= engine.section.cache_size
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
    """An LRU much smaller than a batch evicts while spread tasks are in flight (the
    answers a task was told are known may be gone when it returns); every Result still
    equals the one-row-at-a-time path's, and the index stays the cache's exactly."""
    rows = _rows_with_repeats()
    spread = await _two_batches(rows, reward)
    spreading_off(monkeypatch)
    alone = await _two_batches(rows, reward)
    for got, want in zip(spread, alone, strict=True):
        assert [fields(r) for r in got] == [fields(r) for r in want]


async def test_the_index_of_cached_answers_stays_bounded_over_many_batches() -> None:
    """A long run (many batches of new answers) leaves as many indexed answers as
    the cache holds checks, never more; gone ground truths leave no empty entry."""
    engine = await make_engine(cache_size=30, verifiers={"fast_paths": False})
    try:
        for step in range(6):
            rows = [{"data_source": "math", "response": f"\\boxed{{{step * 100 + i}}}",
                     "ground_truth": str(i % 7 + step)} for i in range(70)]  # fmt: skip
            results = await engine.score_many(rows)
            assert [r.status for r in results] == [Status.OK] * 70
            assert [r.score == 1.0 for r in results] == [
                step * 100 + i == i % 7 + step for i in range(70)
            ]
            assert engine._cached_answers == index_of(engine)
            assert sum(map(len, engine._cached_answers.values())) == len(engine._cache) == 30
            assert all(engine._cached_answers.values())
    finally:
        await engine.close()
    assert engine.stats["spread"] == 6 * 70


def test_repeated_answers_are_checked_once() -> None:
    group = [
        {
            "data_source": "lighteval/MATH",
            "ground_truth": r"\frac{\sqrt{3}}{2}",
            "response": rf"so \boxed{{{answer}}}",
        }
        for answer in [
            r"\frac{\sqrt3}{2}",
            r"\dfrac{\sqrt{3}}{2}",
            r"\frac{\sqrt3}{2}",
            r"\frac{\sqrt3}{2}",
        ]
        * 4
    ]
    with RewardLoop({"reward": {"num_workers": 2}}) as loop:
        first = loop.score(group)
        pool_calls = loop.engine.stats["pool"]
        again = loop.score(group)
        assert loop.engine.stats["pool"] == pool_calls  # the second batch is served by the cache
    assert all(r.score == 1.0 for r in first + again)
    assert pool_calls <= 2  # two distinct written forms at most reach a worker
