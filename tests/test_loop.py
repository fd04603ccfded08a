"""guards: RewardLoop (rewardkit.loop) end to end: a mixed batch, a started loop, results
streamed as they finish, a stream stopped midway, code rows in the embedded sandbox."""

from __future__ import annotations

import asyncio
import time

import pytest

from _support.engines import fields
from _support.parse_child import real_rows
from _support.user_functions import custom_config, custom_row
from rewardkit import RewardLoop, Sample, Status
from rewardkit.execution.pool import WorkerPool


def test_builtin_verifiers_and_invalid_rows_in_one_batch() -> None:
    rows = [
        {
            "data_source": "openai/gsm8k",
            "response": "so the answer is\n#### 72",
            "ground_truth": "72",
        },
        {
            "data_source": "lighteval/MATH",
            "response": r"thus $\boxed{\frac{1}{2}}$",
            "ground_truth": r"\frac12",
        },
        {"data_source": "lighteval/MATH", "response": r"\boxed{3}", "ground_truth": "4"},
        {"data_source": "no/such/source", "response": "x", "ground_truth": "1"},
        {"data_source": "openai/gsm8k", "ground_truth": "1"},
        "not a row",
        Sample(data_source="openai/gsm8k", response="#### 5", ground_truth="5"),
    ]
    with RewardLoop({"reward": {"num_workers": 2}}) as loop:
        results = loop.score(rows)
    assert [r.status for r in results] == [
        Status.OK,
        Status.OK,
        Status.OK,
        Status.INVALID,
        Status.INVALID,
        Status.INVALID,
        Status.OK,
    ]
    assert [r.score for r in results[:3]] == [1.0, 1.0, 0.0]
    assert results[0].extra["acc"] is True
    assert "no/such/source" in results[3].error
    assert "response" in results[4].error
    assert results[6].row["data_source"] == "openai/gsm8k"


def test_stream_yields_each_result_as_it_completes(misbehaving: str) -> None:
    config = custom_config(misbehaving, num_workers=2, timeout_s=1.0)
    rows = [custom_row("hang")] + [custom_row(str(i)) for i in range(40, 45)]

    async def consume(loop: RewardLoop) -> list[int]:
        return [result.index async for result in loop.stream(rows)]

    with RewardLoop(config) as loop:
        order = asyncio.run(consume(loop))
        single = asyncio.run(loop.ascore(custom_row("42"), index=9))
    assert sorted(order) == list(range(6))
    assert order[-1] == 0  # the row that hangs does not hold back the others
    assert single.index == 9 and single.score == 1.0


def test_loop_must_be_started() -> None:
    loop = RewardLoop()
    with pytest.raises(Exception, match="not started"):
        loop.score([custom_row("1")])
    loop.close()  # closing an unstarted loop is harmless


def test_code_rows_run_in_the_embedded_sandbox() -> None:
    tests = {"inputs": ["1 2\n", "5 7\n", "10 -3\n"], "outputs": ["3\n", "12\n", "7\n"]}
    right = "Here you go:\n```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    wrong = "```python\na, b = map(int, input().split())\nprint(a * b)\n```"
    rows = [
        {"data_source": "codecontests", "response": text, "ground_truth": tests}
        for text in (right, wrong, "I cannot solve this.", right)
    ]
    with RewardLoop(
        {"reward": {"num_workers": 1, "sandbox_fusion": {"max_concurrent": 2}}}
    ) as loop:
        ok, partial, none, again = loop.score(rows)
        assert loop.engine.stats["deduplicated"] + loop.engine.stats["cache_hits"] == 1
    assert again.score == 1.0 and again.extra == ok.extra  # the repeated answer ran once
    assert ok.status is Status.OK and ok.score == 1.0
    assert partial.score == pytest.approx(0.0)  # 1*2, 5*7, 10*-3: every case wrong
    assert none.score == 0.0 and "no code block" in str(none.extra)


def test_a_consumer_that_stops_iter_score_midway_leaves_no_busy_worker() -> None:
    """Stopping mid-batch (spread tasks in flight) leaves every worker free, no
    waiter queued, nothing in flight; the rows taken and a later full run are exact."""
    rows = (real_rows(400) * 13)[:5000]
    with RewardLoop({"reward": {"num_workers": 2}}) as loop:
        full = loop.score(rows)
        pool = loop.engine.pool
        assert isinstance(pool, WorkerPool)
        for stop_after in (100, 1500):
            taken = []
            results = loop.iter_score(rows, window=512)
            for result in results:
                taken.append(result)
                if len(taken) >= stop_after:
                    break
            results.close()  # type: ignore[attr-defined]
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and (len(pool._idle) < pool.size or pool._waiting):
                time.sleep(0.05)
            assert len(pool._idle) == pool.size and not pool._waiting and not pool._running
            assert [fields(r) for r in taken] == [fields(r) for r in full[:stop_after]]
        again = loop.score(rows)
    assert [fields(r) for r in again] == [fields(r) for r in full]


def test_group_aggregation_runs_on_whole_inputs_and_is_refused_per_row() -> None:
    """normalize_then_sum needs a row's whole group: score/iter_score aggregate the whole
    input (groups interleaved, a failed row left out), ascore and stream refuse by name."""
    from rewardkit.errors import ConfigError

    rows = [
        {"data_source": "openai/gsm8k", "response": resp, "ground_truth": "72", "prompt": p}
        for p, resp in [("a", "#### 72"), ("b", "#### 72"), ("a", "#### 7"), ("b", "#### 72")]
    ]
    rows.append({"data_source": "openai/gsm8k", "response": "#### 72", "prompt": "a"})
    config = {"reward": {"num_workers": 1, "aggregation": "normalize_then_sum"}}
    with RewardLoop(config) as loop:
        results = loop.score(rows)
        streamed = list(loop.iter_score(rows, window=2))  # smaller than a group's span
        with pytest.raises(ConfigError, match=r"reward\.aggregation=normalize_then_sum.*ascore"):
            asyncio.run(loop.ascore(rows[0]))

        async def first() -> None:
            async for _ in loop.stream(rows):
                break

        with pytest.raises(ConfigError, match=r"RewardLoop\.stream"):
            asyncio.run(first())
    z = 0.5 / (2**-0.5 + 1e-4)  # group a: rule [1, 0], sample std sqrt(1/2)
    assert [r.score for r in results] == pytest.approx([z, 0.0, -z, 0.0, None])
    assert results[4].status is Status.INVALID  # no ground truth: kept out, status kept
    assert [r.score for r in streamed] == [r.score for r in results]
    assert [r.extra["raw_score"] for r in results[:4]] == [1.0, 1.0, 0.0, 1.0]
