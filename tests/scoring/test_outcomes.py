"""guards: scoring.outcomes: dedup and the cache under typed keys (in-flight sharing, an LRU
that evicts mid-batch, its index of answers).

Real engine, real worker pool, real published model outputs: whatever the cache holds or
drops while spread tasks are in flight, every Result equals the one-row-at-a-time path's,
and the spread tasks' index of cached answers is exactly the cache's.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from _support.engines import EDGE_ROWS, fields, index_of, make_engine, spreading_off
from _support.parse_child import real_rows
from rewardkit import RewardLoop
from rewardkit.config import RewardConfig
from rewardkit.scoring.engine import RewardEngine
from rewardkit.scoring.outcomes import AsyncKey, CheckKey, CustomKey, Outcome, Outcomes
from rewardkit.types import Result, Sample, Status
from rewardkit.verifiers.base import ALSO_OFFERED, CALLED_WRONG, Extracted, Verdict
from rewardkit.verifiers.math import MathVerifier

RIGHT: Outcome = (Status.OK, Verdict(1.0, {"acc": True}))


def _stats() -> dict[str, int]:
    return {"cache_hits": 0, "deduplicated": 0}


def _check(answer: str, gold: str = '"12"', source: str | None = "boxed") -> CheckKey:
    return CheckKey("math", gold, answer, source)


# --- the keys ----------------------------------------------------------------------


def test_keys_of_different_kinds_are_never_equal_even_with_the_same_values() -> None:
    """A tuple key told kinds apart by position 0; typed keys by their class."""
    values = ("a", "b", "c", "d")
    keys = [CheckKey(*values), CustomKey(*values), AsyncKey(*values[:3], "", values[3])]
    assert len(set(keys)) == 3
    assert all(a != b for i, a in enumerate(keys) for b in keys[i + 1 :])
    assert CheckKey(*values) == CheckKey(*values)
    assert values not in set(keys)  # nor equal to the plain tuple of their fields


def test_keys_are_frozen_and_read_by_field_name() -> None:
    key = CheckKey.of(MathVerifier(), '"12"', Extracted("12", {"source": "boxed"}))
    assert (key.verifier, key.gold, key.answer, key.source) == ("math", '"12"', "12", "boxed")
    assert key.reference == ("math", '"12"') and key.answer_of == ("12", "boxed", ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        key.answer = "13"  # type: ignore[misc]
    # the source is part of a check's key: a fallback passage is read otherwise than a box
    passage = CheckKey.of(MathVerifier(), '"12"', Extracted("12", {"source": "fallback"}))
    assert passage != key
    # so are the other final answers a response offers: the check reads them too
    also = CheckKey.of(
        MathVerifier(), '"12"', Extracted("12", {"source": "boxed", ALSO_OFFERED: ["13"]})
    )
    assert also != key and also.answer_of == ("12", "boxed", ("13",))
    # and the value a passage's last sentence called wrong: the check reads it too
    passage = Extracted("It is 12.", {"source": "expression"})
    called = Extracted("It is 12.", {"source": "expression", CALLED_WRONG: "12"})
    assert CheckKey.of(MathVerifier(), '"12"', called) != CheckKey.of(
        MathVerifier(), '"12"', passage
    )
    # a verifier's options are part of its key
    strict = CheckKey.of(MathVerifier(extraction="strict"), '"12"', Extracted("12", {}))
    assert strict.verifier == "math:strict" and strict.source is None


# --- the cache and its index of answers --------------------------------------------


def test_the_index_of_answers_follows_the_cache_through_evictions() -> None:
    outcomes = Outcomes(cache_size=2, stats=_stats())
    outcomes.put(_check("1"), RIGHT)
    outcomes.put(CustomKey("f.py", "score", "[]", "{}"), RIGHT)  # not a check: not indexed
    assert outcomes.answers == {("math", '"12"'): {("1", "boxed", ())}}
    outcomes.put(_check("2"), RIGHT)  # evicts the check of "1", the oldest
    assert list(outcomes.cache) == [CustomKey("f.py", "score", "[]", "{}"), _check("2")]
    assert set(outcomes.known(("math", '"12"'))) == {("2", "boxed", ())}
    outcomes.put(_check("3", gold='"7"'), RIGHT)  # evicts the custom call
    outcomes.put(_check("4", gold='"7"'), RIGHT)  # evicts "2": its reference leaves the index
    assert outcomes.answers == {("math", '"7"'): {("3", "boxed", ()), ("4", "boxed", ())}}
    assert list(outcomes.known(("math", '"12"'))) == []


def test_timeouts_are_cached_errors_are_not_and_size_zero_caches_nothing() -> None:
    outcomes = Outcomes(cache_size=8, stats=_stats())
    outcomes.put(_check("tower"), (Status.TIMEOUT, "timed out after 5s"))
    outcomes.put(_check("crash"), (Status.ERROR, "worker died"))
    assert list(outcomes.cache) == [_check("tower")]  # the same answer would time out again
    nothing = Outcomes(cache_size=0, stats=_stats())
    nothing.put(_check("1"), RIGHT)
    assert not nothing.cache and not nothing.answers


async def test_identical_keys_share_one_computation_then_the_cache() -> None:
    stats = _stats()
    outcomes = Outcomes(cache_size=8, stats=stats)
    calls = []
    release = asyncio.Event()

    async def compute() -> Outcome:
        calls.append(1)
        await release.wait()
        return RIGHT

    waiting = [asyncio.ensure_future(outcomes.shared(_check("1"), compute)) for _ in range(3)]
    await asyncio.sleep(0)
    assert len(outcomes.pending()) == 1
    release.set()
    assert await asyncio.gather(*waiting) == [RIGHT] * 3
    assert await outcomes.shared(_check("1"), compute) == RIGHT
    assert len(calls) == 1
    assert stats == {"cache_hits": 1, "deduplicated": 2}
    assert not outcomes.pending()


async def test_a_cancelled_caller_does_not_cancel_the_computation_for_the_others() -> None:
    outcomes = Outcomes(cache_size=8, stats=_stats())
    release = asyncio.Event()

    async def compute() -> Outcome:
        await release.wait()
        return RIGHT

    gone = asyncio.ensure_future(outcomes.shared(_check("1"), compute))
    stays = asyncio.ensure_future(outcomes.shared(_check("1"), compute))
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.sleep(0)
    release.set()
    assert await stays == RIGHT
    assert gone.cancelled()
    assert outcomes.cache[_check("1")] == RIGHT


# --- in the engine -----------------------------------------------------------------


async def test_the_engine_keys_a_pooled_check_by_its_fields() -> None:
    """A row math-verify decides (in a worker) leaves a CheckKey naming its parts; the
    same answer again is served from the cache, not checked twice."""
    config = RewardConfig.model_validate({"reward": {"num_workers": 1}})
    engine = await RewardEngine.create(config)
    response = "\\boxed{\\sin^2 x + \\cos^2 x}"
    row = {"data_source": "lighteval/MATH", "response": response, "ground_truth": "1"}
    try:
        first = await engine.score_row(0, row)
        again = await engine.score_row(1, row)
    finally:
        await engine.close()
    assert first.score == again.score == 1.0
    (key,) = engine.outcomes.cache
    assert isinstance(key, CheckKey)
    assert (key.verifier, key.gold, key.answer) == ("math", '"1"', "\\sin^2 x + \\cos^2 x")
    assert key.source == "boxed"
    assert engine.outcomes.answers == {("math", '"1"'): {("\\sin^2 x + \\cos^2 x", "boxed", ())}}
    assert engine.stats["pool"] == 1 and engine.stats["cache_hits"] == 1


async def test_a_cached_check_decides_its_row_without_a_coroutine() -> None:
    """A row whose check the cache holds is decided where it is read: its pieces come
    back as a list, not an awaitable (no coroutine, no task per row on the loop), with
    the cached verdict and the hit counted; a cached failure keeps its status."""
    config = RewardConfig.model_validate({"reward": {"num_workers": 1}})
    engine = await RewardEngine.create(config)
    row = {"data_source": "lighteval/MATH", "response": "\\boxed{\\sin^2 x}", "ground_truth": "1"}
    try:
        first = await engine.score_row(0, row)
        sample = Sample.from_row(row)
        pieces = engine._start_pieces(sample)
        assert isinstance(pieces, list)
        (key,) = engine.outcomes.cache
        engine.outcomes.put(key, (Status.TIMEOUT, "timed out after 5s"))
        timed_out = engine._start_pieces(sample)
    finally:
        await engine.close()
    assert first.score == pieces[0].score == 0.0 and pieces[0].status is Status.OK
    assert isinstance(timed_out, list) and timed_out[0].status is Status.TIMEOUT
    assert engine.stats["pool"] == 1 and engine.stats["cache_hits"] == 2


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
            assert engine.outcomes.answers == index_of(engine)
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
            assert engine.outcomes.answers == index_of(engine)
            assert (
                sum(map(len, engine.outcomes.answers.values())) == len(engine.outcomes.cache) == 30
            )
            assert all(engine.outcomes.answers.values())
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


def test_a_passage_whose_value_was_called_wrong_never_takes_the_plain_passages_verdict() -> None:
    """The passage goes to the check without the sentence "Hmm, 57500 is wrong.", so it is
    the original's passage: the cache must not hand the variant the original's credit
    (the audit's disavowal family found it so, 47 rows credited)."""
    passage = "Her salary is $35,000 + $22,500 = $57,500. </answer>"
    rows = [
        {"data_source": "lighteval/MATH", "ground_truth": "57500", "response": response}
        for response in (passage, f"{passage}\n\nHmm, 57500 is wrong.", passage)
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        together = [r.score for r in loop.score(rows)]
        one_by_one = [loop.score([row])[0].score for row in rows]
    assert together == one_by_one == [1.0, 0.0, 1.0]
