"""guards: scoring.outcomes, work done once under typed keys (in-flight sharing, the LRU, its index of answers)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from rewardkit.config import RewardConfig
from rewardkit.scoring.engine import RewardEngine
from rewardkit.scoring.outcomes import AsyncKey, CheckKey, CustomKey, Outcome, Outcomes
from rewardkit.types import Status
from rewardkit.verifiers.base import Extracted, Verdict
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
    keys = [CheckKey(*values), CustomKey(*values), AsyncKey(*values)]
    assert len(set(keys)) == 3
    assert all(a != b for i, a in enumerate(keys) for b in keys[i + 1 :])
    assert CheckKey(*values) == CheckKey(*values)
    assert values not in set(keys)  # nor equal to the plain tuple of their fields


def test_keys_are_frozen_and_read_by_field_name() -> None:
    key = CheckKey.of(MathVerifier(), '"12"', Extracted("12", {"source": "boxed"}))
    assert (key.verifier, key.gold, key.answer, key.source) == ("math", '"12"', "12", "boxed")
    assert key.reference == ("math", '"12"') and key.answer_of == ("12", "boxed")
    with pytest.raises(dataclasses.FrozenInstanceError):
        key.answer = "13"  # type: ignore[misc]
    # the source is part of a check's key: a fallback passage is read otherwise than a box
    passage = CheckKey.of(MathVerifier(), '"12"', Extracted("12", {"source": "fallback"}))
    assert passage != key
    # a verifier's options are part of its key
    strict = CheckKey.of(MathVerifier(extraction="strict"), '"12"', Extracted("12", {}))
    assert strict.verifier == "math:strict" and strict.source is None


# --- the cache and its index of answers --------------------------------------------


def test_the_index_of_answers_follows_the_cache_through_evictions() -> None:
    outcomes = Outcomes(cache_size=2, stats=_stats())
    outcomes.put(_check("1"), RIGHT)
    outcomes.put(CustomKey("f.py", "score", "[]", "{}"), RIGHT)  # not a check: not indexed
    assert outcomes.answers == {("math", '"12"'): {("1", "boxed")}}
    outcomes.put(_check("2"), RIGHT)  # evicts the check of "1", the oldest
    assert list(outcomes.cache) == [CustomKey("f.py", "score", "[]", "{}"), _check("2")]
    assert set(outcomes.known(("math", '"12"'))) == {("2", "boxed")}
    outcomes.put(_check("3", gold='"7"'), RIGHT)  # evicts the custom call
    outcomes.put(_check("4", gold='"7"'), RIGHT)  # evicts "2": its reference leaves the index
    assert outcomes.answers == {("math", '"7"'): {("3", "boxed"), ("4", "boxed")}}
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
    assert engine.outcomes.answers == {("math", '"1"'): {("\\sin^2 x + \\cos^2 x", "boxed")}}
    assert engine.stats["pool"] == 1 and engine.stats["cache_hits"] == 1
