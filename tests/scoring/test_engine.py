"""guards: the engine's orchestration (rewardkit.scoring.engine): inline decisions, fast paths, combining.

The engine decides rows inline where it can: a Result at once, no task, no await. Real
engine, real worker pool: the rows that need math-verify go to a worker, the others
never leave the event loop's thread, and one call mixes both without losing order.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
from pathlib import Path
from typing import Any

import pytest

from _support.model_fakes import build_tokenizer
from rewardkit import RewardLoop
from rewardkit.config import RewardConfig
from rewardkit.scoring.engine import RewardEngine
from rewardkit.types import BadRow, Result, Status

INLINE_RIGHT = {"data_source": "math", "response": "So \\boxed{12}.", "ground_truth": "12"}
INLINE_WRONG = {"data_source": "math", "response": "So \\boxed{13}.", "ground_truth": "12"}
# \sin^2 x + \cos^2 x against 1: no inline rule reads it; math-verify's simplify does.
POOLED = {
    "data_source": "math",
    "response": "So \\boxed{\\sin^2 x + \\cos^2 x}.",
    "ground_truth": "1",
}
NO_TRUTH = {"data_source": "math", "response": "\\boxed{1}", "ground_truth": None}
UNKNOWN = {"data_source": "no-such-source", "response": "1", "ground_truth": "1"}


async def _engine(**reward: object) -> RewardEngine:
    config = RewardConfig.model_validate({"reward": {"num_workers": 1, **reward}})
    return await RewardEngine.create(config)


async def test_start_row_decides_inline_rows_at_once_and_defers_the_rest() -> None:
    engine = await _engine()
    try:
        right = engine.start_row(0, INLINE_RIGHT)
        invalid = engine.start_row(1, NO_TRUTH)
        pooled = engine.start_row(2, POOLED)
        assert isinstance(right, Result) and right.score == 1.0
        assert right.elapsed_s is not None
        assert isinstance(invalid, Result) and invalid.status is Status.INVALID
        assert "needs a ground_truth" in (invalid.error or "")
        assert inspect.iscoroutine(pooled)  # left to a worker: the caller awaits it
        finished = await pooled
        assert finished.status is Status.OK and finished.score == 1.0
        assert engine.stats["quick"] == 1 and engine.stats["pool"] == 1
    finally:
        await engine.close()


async def test_score_many_keeps_order_across_inline_pooled_and_failed_rows() -> None:
    engine = await _engine()
    rows = [INLINE_RIGHT, POOLED, NO_TRUTH, BadRow("not json"), UNKNOWN, INLINE_WRONG]
    try:
        results = await engine.score_many(rows, start=10)
    finally:
        await engine.close()
    assert [r.index for r in results] == list(range(10, 16))
    assert [r.status.value for r in results] == ["ok", "ok", *["invalid"] * 3, "ok"]
    assert [r.score for r in results if r.status is Status.OK] == [1.0, 1.0, -1.0]  # verl's scale
    assert "unknown data_source" in (results[4].error or "")
    assert all(r.elapsed_s is not None for r in results)


async def test_with_fast_paths_off_no_row_is_decided_inline() -> None:
    engine = await _engine(verifiers={"fast_paths": False})
    try:
        started = engine.start_row(0, INLINE_RIGHT)
        assert inspect.iscoroutine(started)
        assert (await started).score == 1.0
    finally:
        await engine.close()


async def test_an_interrupted_call_leaves_no_row_running() -> None:
    engine = await _engine()
    try:
        call = asyncio.ensure_future(engine.score_many([POOLED, INLINE_RIGHT] * 3))
        await asyncio.sleep(0)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        await engine.cancel_pending()
        running = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert not [t for t in running if "_store" in repr(t.get_coro())]
    finally:
        await engine.close()


async def test_workers_keep_what_the_fork_server_loaded_out_of_the_collector() -> None:
    engine = await _engine()
    try:
        assert engine.pool is not None
        frozen = await engine.pool.run(gc.get_freeze_count, timeout=30)
    finally:
        await engine.close()
    assert frozen > 10_000  # math-verify, sympy and the parser's warm-up: all frozen


async def test_rows_that_once_backtracked_for_hours_are_scored_with_their_batch() -> None:
    """Their inline phases run on the event loop: a pattern that backtracked through 3^n
    readings of them held every row of every batch (the patterns' own guard:
    tests/verifiers/test_extraction_bounds.py)."""
    engine = await _engine()
    hostile = [
        {"data_source": "math", "response": "Let me compute. " + "\\text{a}" * 100 + "=5",
         "ground_truth": "5"},
        {"data_source": "math", "response": "\\boxed{" + "Wait, so " * 40, "ground_truth": "5"},
        {"data_source": "math", "response": "Let me compute. $" + "(" * 1500 + "1" + ")" * 1500
         + "$, that is all.", "ground_truth": "5"},  # (ending in ")" x 1500: a loop)
    ]  # fmt: skip
    try:
        results = await asyncio.wait_for(engine.score_many([*hostile, INLINE_RIGHT]), 60)
    finally:
        await engine.close()
    assert [r.status for r in results] == [Status.OK] * 4
    assert results[-1].score == 1.0
    assert results[2].score == -1.0  # verl's scale for a wrong answer: decided, no timeout
    assert results[2].extra.get("guard") == "deep nesting"


async def test_a_long_batch_of_inline_rows_hands_the_loop_back_as_it_goes() -> None:
    engine = await _engine()
    done: dict[int, object] = {}
    seen_midway: list[int] = []

    async def neighbour() -> None:  # another request on the same loop (a server's)
        await asyncio.sleep(0)
        seen_midway.append(len(done))

    try:
        rows = [INLINE_RIGHT] * 2_000
        await asyncio.gather(engine.score_into(rows, 0, done), neighbour())  # type: ignore[arg-type]
    finally:
        await engine.close()
    assert len(done) == 2_000
    assert seen_midway and 0 < seen_midway[0] < 2_000  # it ran while the batch was read


# --- what the config changes in a verdict: fast paths, weights, overlong lengths ----------


def test_fast_paths_false_changes_a_verdict_and_sends_every_answer_to_math_verify() -> None:
    """math-verify calls sqrt(2) + 1e-20 equal to sqrt(2) (its numeric comparison); the
    exact fast path does not. README "How it avoids..." names this pair."""
    rows = [
        {"data_source": "lighteval/MATH", "response": r"$\boxed{\sqrt{2}+10^{-20}}$",
         "ground_truth": r"\sqrt{2}"},
        {"data_source": "lighteval/MATH", "response": r"$\boxed{\frac{1}{2}}$", "ground_truth": "0.5"},
        {"data_source": "lighteval/MATH", "response": r"$\boxed{3}$", "ground_truth": "4"},
    ]  # fmt: skip
    outcome = {}
    for fast_paths in (True, False):
        config = {"reward": {"num_workers": 1, "verifiers": {"fast_paths": fast_paths}}}
        with RewardLoop(config) as loop:
            scores = [r.score for r in loop.score(rows)]
            outcome[fast_paths] = (scores, dict(loop.engine.stats), loop.engine.pool.stats["tasks"])
    assert outcome[True][0] == [0.0, 1.0, 0.0]
    assert outcome[False][0] == [1.0, 1.0, 0.0]  # the verdict that changes
    assert outcome[True][1]["quick"] == 3
    assert outcome[False][1]["quick"] == 0 and outcome[False][1]["pool"] == 3
    assert outcome[False][2] == 3  # one math-verify task per row in the worker pool


def test_zero_and_negative_weights_are_honoured() -> None:
    """0 and negative weights are a user's choice, and each is applied as given."""
    config = {
        "reward": {
            "num_workers": 1,
            "rule_weight": -2.0,
            "format_reward": {"enable": True, "weight": 0.0},
        }
    }
    row = {
        "data_source": "openai/gsm8k",
        "response": "<think>a</think> #### 4",
        "ground_truth": "4",
    }
    with RewardLoop(config) as loop:
        (result,) = loop.score([row])
    assert result.ok and result.components == {"rule": 1.0, "format": 1.0}
    assert result.score == -2.0


def test_a_combined_score_that_overflows_fails_only_its_row() -> None:
    """Finite weights whose sum overflows (1e308 + 1e308): Result refuses an infinite
    score, so that row is an ``error`` and the rest of the batch is scored."""
    config = {
        "reward": {
            "num_workers": 1,
            "rule_weight": 1e308,
            "format_reward": {"enable": True, "weight": 1e308},
        }
    }
    gsm8k = {"data_source": "openai/gsm8k", "ground_truth": "4"}
    rows = [
        {**gsm8k, "response": "<think>a</think> #### 4"},  # rule 1, format 1: overflows
        {**gsm8k, "response": "#### 4"},  # rule 1, format 0: 1e308, finite
    ]
    with RewardLoop(config) as loop:
        overflowed, fine = loop.score(rows)
    assert overflowed.status is Status.ERROR and "not finite" in overflowed.error
    assert overflowed.components == {"rule": 1.0, "format": 1.0}
    assert fine.ok and fine.score == 1e308


@pytest.mark.parametrize("length", [-1, 12.5, "12", 2**53 + 1, 1e300])
def test_a_bad_response_length_is_invalid_even_with_a_tokenizer(
    tmp_path: Path, length: Any
) -> None:
    """With ``overlong_buffer.tokenizer`` set, a bad ``extra_info.response_length``
    (negative, fractional, text, 1e300) is not replaced by a token count of the response:
    a data bug must show. A row with no length is counted."""
    build_tokenizer().save_pretrained(tmp_path)
    config = {
        "reward": {
            "num_workers": 1,
            "overlong_buffer": {
                "enable": True,
                "len": 4,
                "max_resp_len": 14,
                "tokenizer": str(tmp_path),
            },
        }
    }
    row = {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"}
    with RewardLoop(config) as loop:
        bad, counted = loop.score([{**row, "extra_info": {"response_length": length}}, row])
    assert bad.status is Status.INVALID and "response_length" in bad.error
    assert counted.ok and counted.components["overlong"] == 0.0  # no length: counted


@pytest.mark.parametrize(
    ("length", "expected"),
    [
        (12, -0.5),  # 12 tokens: 2 into the 4-token buffer that ends at 14, -2/4
        (12.0, -0.5),  # a whole float, as some JSON writers give ints
        ("12", "must be a whole number of tokens >= 0, got str 12"),
        (12.5, "got float 12.5"),
        (-1, "got int -1"),
        (True, "got bool True"),
        (None, "has no extra_info.response_length"),
    ],
)
def test_a_response_length_of_the_wrong_type_says_so(length: Any, expected: Any) -> None:
    """A length of the wrong type is named as such, not as a missing one; 12.0 is 12."""
    config = {
        "reward": {
            "num_workers": 1,
            "overlong_buffer": {"enable": True, "len": 4, "max_resp_len": 14},
        }
    }
    extra_info = {} if length is None else {"response_length": length}
    row = {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"}
    with RewardLoop(config) as loop:
        result = loop.score([{**row, "extra_info": extra_info}])[0]
    if isinstance(expected, float):
        assert result.ok and result.components["overlong"] == expected
    else:
        assert result.status is Status.INVALID and expected in result.error


def test_with_fast_paths_off_every_answer_is_checked_in_a_worker_with_the_same_verdicts() -> None:
    rows = [
        {"data_source": "openai/gsm8k", "response": "#### 1,000", "ground_truth": "1000"},
        {"data_source": "openai/gsm8k", "response": "#### 7", "ground_truth": "72"},
        {"data_source": "lighteval/MATH", "response": r"\boxed{0.5}", "ground_truth": r"\frac12"},
        {"data_source": "lighteval/MATH", "response": r"\boxed{3}", "ground_truth": "4"},
        {"data_source": "lighteval/MATH", "response": r"\boxed{(1, 2]}", "ground_truth": "(1,2]"},
    ]
    scores = {}
    for fast in (True, False):
        config = {"reward": {"num_workers": 2, "verifiers": {"fast_paths": fast}}}
        with RewardLoop(config) as loop:
            results = loop.score(rows)
            stats = dict(loop.engine.stats)
        assert all(r.status is Status.OK for r in results)
        scores[fast] = [r.score for r in results]
        if not fast:
            assert stats["quick"] == 0 and stats["pool"] == len(rows)
    assert scores[True] == scores[False] == [1.0, 0.0, 1.0, 0.0, 1.0]


def test_format_and_overlong_components_combine_with_weights() -> None:
    config = {
        "reward": {
            "num_workers": 1,
            "format_reward": {"enable": True, "weight": 0.5},
            "overlong_buffer": {
                "enable": True,
                "len": 100,
                "max_resp_len": 1000,
                "penalty_factor": 1.0,
            },
        }
    }
    good = {
        "data_source": "openai/gsm8k",
        "ground_truth": "3",
        "response": "<think>1+2</think> #### 3",
        "extra_info": {"response_length": 950},
    }
    no_length = {"data_source": "openai/gsm8k", "ground_truth": "3", "response": "#### 3"}
    with RewardLoop(config) as loop:
        result, missing = loop.score([good, no_length])
    assert result.components == {"rule": 1.0, "format": 1.0, "overlong": -0.5}
    assert result.score == pytest.approx(1.0 + 0.5 * 1.0 - 0.5)
    assert missing.status is Status.INVALID and "response_length" in missing.error


def test_oversized_response_is_invalid_and_neighbours_are_scored() -> None:
    rows = [
        {"data_source": "openai/gsm8k", "ground_truth": "1", "response": "x" * 5000 + "#### 1"},
        {"data_source": "openai/gsm8k", "ground_truth": "1", "response": "#### 1"},
    ]
    with RewardLoop({"reward": {"num_workers": 1, "max_response_chars": 1000}}) as loop:
        big, small = loop.score(rows)
    assert big.status is Status.INVALID and "max_response_chars" in big.error
    assert small.score == 1.0


def test_a_trajectory_takes_its_length_from_the_trainer_never_from_a_tokenizer(
    tmp_path: Path,
) -> None:
    """The overlong penalty of a trajectory needs the trainer's token count: the tokenizer
    would count a text, not the policy's tokens of turns and calls (tool results are no
    policy tokens). The format reward reads the final assistant text."""
    build_tokenizer().save_pretrained(tmp_path)
    config = {
        "reward": {
            "num_workers": 1,
            "format_reward": {"enable": True, "weight": 0.5},
            "overlong_buffer": {
                "enable": True,
                "len": 4,
                "max_resp_len": 14,
                "tokenizer": str(tmp_path),
            },
        }
    }
    trajectory = [
        {
            "role": "assistant",
            "content": "<think>x</think>calling",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "content": "4"},
        {"role": "assistant", "content": "<think>so</think>#### 4"},
    ]
    row = {"data_source": "openai/gsm8k", "response": trajectory, "ground_truth": "4"}
    with RewardLoop(config) as loop:
        counted, given = loop.score([row, {**row, "extra_info": {"response_length": 12}}])
    assert counted.status is Status.INVALID
    assert "needs extra_info.response_length for a trajectory" in (counted.error or "")
    assert given.ok and given.components == {"rule": 1.0, "format": 1.0, "overlong": -0.5}
