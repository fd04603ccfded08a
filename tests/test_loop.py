"""guards: RewardLoop (rewardkit.loop) end to end: real worker processes, real user
functions, typed failures, streaming that may stop midway."""

from __future__ import annotations

import asyncio
import time

import pytest

from _support.engines import fields
from _support.parse_child import real_rows
from _support.user_functions import MISBEHAVING, custom_row
from rewardkit import ConfigError, RewardLoop, Sample, Status
from rewardkit.execution.pool import WorkerPool


@pytest.fixture
def functions(write_module) -> str:
    return write_module("user_reward", MISBEHAVING)


def test_custom_function_failures_are_typed_and_isolated(functions: str) -> None:
    config = {
        "reward": {
            "num_workers": 2,
            "timeout_s": 1.0,
            "custom_reward_function": {"path": functions},
            "reward_kwargs": {"bonus": 0.25},
        }
    }
    responses = ["42", "hang", "7", "segfault", "exit", "raise", "nan", "text", "dict", "42"]
    started = time.perf_counter()
    with RewardLoop(config) as loop:
        results = loop.score([custom_row(r) for r in responses])
    elapsed = time.perf_counter() - started
    by_response = dict(zip(responses, results, strict=True))
    assert [r.index for r in results] == list(range(len(responses)))
    assert by_response["42"].score == 1.25 and by_response["42"].components == {"rule": 1.25}
    assert by_response["7"].score == 0.25
    assert by_response["hang"].status is Status.TIMEOUT and by_response["hang"].score is None
    assert "timed out" in by_response["hang"].error
    for crash in ("segfault", "exit"):
        assert by_response[crash].status is Status.ERROR
        assert "worker process died" in by_response[crash].error
    assert (
        by_response["raise"].status is Status.ERROR
        and "RuntimeError: scorer bug" in by_response["raise"].error
    )
    assert by_response["nan"].status is Status.ERROR and "non-finite" in by_response["nan"].error
    assert (
        by_response["text"].status is Status.ERROR
        and "expected a number" in by_response["text"].error
    )
    assert by_response["dict"].score == 0.5 and by_response["dict"].extra == {
        "acc": True,
        "pred": "x",
    }
    assert elapsed < 15  # one hard timeout of 1 s, two crashes, workers replaced


def test_async_custom_function_is_awaited_with_a_guard(functions: str) -> None:
    config = {
        "reward": {
            "num_workers": 1,
            "async_timeout_s": 0.5,
            "custom_reward_function": {"path": functions, "name": "acompute_score"},
        }
    }
    with RewardLoop(config) as loop:
        results = loop.score([custom_row("42"), custom_row("slow"), custom_row("1")])
    assert [r.status for r in results] == [Status.OK, Status.TIMEOUT, Status.OK]
    assert [r.score for r in results] == [1.0, None, 0.0]


def test_missing_custom_function_is_a_config_error_naming_the_key(write_module) -> None:
    path = write_module("empty", "x = 1\n")
    with pytest.raises(ConfigError, match=r"custom_reward_function\.name"):
        RewardLoop({"reward": {"custom_reward_function": {"path": path}}}).start()
    with pytest.raises(ConfigError, match=r"custom_reward_function\.path"):
        RewardLoop(
            {"reward": {"custom_reward_function": {"path": "/nonexistent/reward.py"}}}
        ).start()


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


def test_stream_yields_each_result_as_it_completes(functions: str) -> None:
    config = {
        "reward": {
            "num_workers": 2,
            "timeout_s": 1.0,
            "custom_reward_function": {"path": functions},
        }
    }
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


def test_custom_function_from_a_module_name(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "my_rewards"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "scoring.py").write_text(
        "def length_score(data_source, solution_str, ground_truth, extra_info, **kw):\n"
        "    return min(len(solution_str) / 10, 1.0)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))  # worker processes inherit the path
    config = {
        "reward": {
            "num_workers": 1,
            "custom_reward_function": {"path": "my_rewards.scoring", "name": "length_score"},
        }
    }
    with RewardLoop(config) as loop:
        short, long = loop.score([custom_row("abcde"), custom_row("x" * 40)])
    assert (short.score, long.score) == (0.5, 1.0)
    with pytest.raises(ConfigError, match="cannot import module"):
        RewardLoop({"reward": {"custom_reward_function": {"path": "no_such_module_xyz"}}}).start()


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
