"""Audit of three speed features from outside: spread inline phases (engine), soft worker
affinity (pool), two-stage parsing (latex2sympy). Speed must never cost a correct Result.

Real engine, real worker pool, real published model outputs, real latex2sympy. Each test
names the problem it guards; the ones marked "found" failed before the fix beside them.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _support.parse_child import differing, real_rows
from rewardkit.config import RewardConfig
from rewardkit.errors import ScorerTimeout
from rewardkit.execution.pool import WorkerPool
from rewardkit.loop import RewardLoop
from rewardkit.scoring import spread as spread_module
from rewardkit.scoring.engine import RewardEngine
from rewardkit.types import BadRow, Result, Status
from rewardkit.verifiers import _two_stage
from rewardkit.verifiers.base import Entry, Extracted, Verdict
from rewardkit.verifiers.registry import VerifierTable, entries

# Rows each spread task could get wrong: one of every source family, every shape of bad
# row, and the edges of the spread rules (the 100,000-char inline limit, None and blank
# ground truths, unhashable ground truths, a bad extra_info.response_length).
HOSTILE: list[Any] = [
    {"data_source": "gsm8k", "response": "so #### 72", "ground_truth": "72"},
    {"data_source": "gsm8k", "response": "so #### 7,2", "ground_truth": "72"},
    {"data_source": "gsm8k", "response": "The answer is 72.", "ground_truth": "72"},
    {"data_source": "mcq", "response": "Answer: B", "ground_truth": "B"},
    {"data_source": "mmlu", "response": "I think (C)", "ground_truth": "B"},
    {
        "data_source": "hiyouga/geometry3k",
        "response": "<think>x</think>\\boxed{3}",
        "ground_truth": "3",
    },
    {
        "data_source": "searchR1_nq",
        "response": "<answer>Paris</answer>",
        "ground_truth": {"target": ["Paris"]},
    },
    {
        "data_source": "codecontests",
        "response": "```python\nprint(1)\n```",
        "ground_truth": json.dumps({"inputs": [""], "outputs": ["1\n"]}),
    },
    {"data_source": "nope", "response": "1", "ground_truth": "1"},
    BadRow("bad json"),
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": None},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": ""},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": "  "},
    {"data_source": "math", "response": "x" * 150_000 + "\\boxed{1}", "ground_truth": "1"},
    {"data_source": "math", "response": "x" * 99_990 + "\\boxed{1}", "ground_truth": "1"},
    {"data_source": "math", "response": 12, "ground_truth": "1"},
    {"data_source": "math", "response": None, "ground_truth": "1"},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": ["1", "2"]},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": {"a": 1}},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": 1},
    {
        "data_source": "math",
        "response": "\\boxed{1}",
        "ground_truth": "1",
        "extra_info": {"response_length": "abc"},
    },
    {
        "data_source": "math",
        "response": "\\boxed{1}",
        "ground_truth": "1",
        "extra_info": {"response_length": -5},
    },
    {"data_source": "math", "response": "<think>a</think>\\boxed{\\frac12}", "ground_truth": "0.5"},
    {"data_source": "math", "response": "\\boxed{\\frac{1}{", "ground_truth": "1"},
    {"data_source": "math", "response": "\x00\ud800", "ground_truth": "1"},
    "just a string row",
    5,
    None,
]


def _mixed_rows() -> list[Any]:
    rows: list[Any] = []
    for i, row in enumerate(real_rows(200)):
        rows.append({**row, "extra_info": {"response_length": i % 30}} if i % 3 else row)
        if i % 7 == 0:
            rows.append(HOSTILE[(i // 7) % len(HOSTILE)])  # inside spread tasks
    return rows + HOSTILE + rows[:50]  # and duplicates of rows already in other tasks


def _fields(result: Result) -> tuple[Any, ...]:
    assert result.elapsed_s is not None and result.elapsed_s >= 0
    return (result.index, result.status, result.score, result.error, result.components,
            result.extra)  # fmt: skip


async def _score(rows: list[Any], reward: dict[str, Any]) -> tuple[list[Result], dict[str, int]]:
    config = RewardConfig.model_validate({"reward": {"num_workers": 2, **reward}})
    engine = await RewardEngine.create(config)
    try:
        results = await engine.score_many(rows)
    finally:
        await engine.close()
    return results, engine.stats


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
async def test_spread_and_inline_agree_on_mixed_hostile_rows(
    reward: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held: every field of every Result, in order, equal with spreading on and off."""
    rows = _mixed_rows()
    spread, spread_stats = await _score(rows, reward)
    monkeypatch.setattr(spread_module, "SPREAD_MIN_ROWS", 10**9)  # spreading off
    inline, inline_stats = await _score(rows, reward)
    assert spread_stats["spread"] > 250 and inline_stats["spread"] == 0
    assert [_fields(r) for r in spread] == [_fields(r) for r in inline]
    assert [r.index for r in spread] == list(range(len(rows)))
    for counter in ("rows", "quick"):  # /metrics reads the same either way
        assert spread_stats[counter] == inline_stats[counter], counter


@dataclass(frozen=True)
class _Odd:
    """Test verifier (importable by the workers): ``slow`` sleeps in extract, ``raise``
    raises there, ``bad`` gets a verdict whose score is no number (verifier bugs); else
    string equality."""

    key: str = "odd"

    def extract(self, response: str) -> Extracted:
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
        return Verdict(float(extracted.answer == ground_truth), {})


async def _score_odd(rows: list[Any], reward: dict[str, Any]) -> list[Result]:
    config = RewardConfig.model_validate({"reward": {"num_workers": 2, **reward}})
    engine = await RewardEngine.create(config)
    odd = Entry("odd", lambda name: name == "odd", lambda section: _Odd())
    engine._verifiers = VerifierTable(config.reward, (odd, *entries()))
    try:
        return await engine.score_many(rows)
    finally:
        await engine.close()


def _odd_rows(special: str) -> list[Any]:
    rows: list[Any] = [{"data_source": "odd", "response": str(i % 3), "ground_truth": "1"}
                       for i in range(100)]  # fmt: skip
    rows[10] = {"data_source": "odd", "response": special, "ground_truth": "1"}
    return rows


async def test_found_a_spread_task_timeout_costs_only_its_slow_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found: ScorerTimeout is a BaseException, and the spread task caught only
    RewardkitError: one spread task past reward.timeout_s failed the whole batch
    (an ExceptionGroup out of score_many: HTTP 500, `rewardkit score` stopped)."""
    rows = _odd_rows("slow")
    # In the slow row's task: a bug in extract, and a verdict that is no number. Found
    # too: rows of a failed task were re-run whole (tasks.verify_whole), where a bug in
    # extract read "rule: ValueError: ..." instead of the loop's "internal error: ...".
    rows[11] = {"data_source": "odd", "response": "raise", "ground_truth": "1"}
    rows[12] = {"data_source": "odd", "response": "bad", "ground_truth": "1"}
    spread = await _score_odd(rows, {"timeout_s": 0.5})
    assert spread[10].status is Status.TIMEOUT and "timed out" in (spread[10].error or "")
    monkeypatch.setattr(spread_module, "SPREAD_MIN_ROWS", 10**9)  # spreading off
    inline = await _score_odd(rows, {"timeout_s": 0.5})
    # On the loop, the inline phases have no hard limit: the slow row is scored there.
    # In a worker they run under reward.timeout_s: a typed timeout, never a wrong score.
    assert inline[10].status is Status.OK
    assert spread[11].error == "internal error: ValueError: a bug in extract"
    others = [_fields(r) for i, r in enumerate(spread) if i != 10]
    assert others == [_fields(r) for i, r in enumerate(inline) if i != 10]


async def test_found_a_verifier_bug_after_a_spread_task_costs_only_its_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found: a verdict that breaks the engine's combining (a verifier bug) raised out of
    the spread task and failed every row of the batch; inline it costs only its row."""
    rows = _odd_rows("bad")
    spread = await _score_odd(rows, {})
    monkeypatch.setattr(spread_module, "SPREAD_MIN_ROWS", 10**9)  # spreading off
    inline = await _score_odd(rows, {})
    assert spread[10].status is Status.ERROR
    assert (spread[10].error or "").startswith("internal error: ValueError")
    assert [_fields(r) for r in spread] == [_fields(r) for r in inline]


def test_a_consumer_that_stops_iter_score_midway_leaves_no_busy_worker() -> None:
    """Held: stopping mid-batch (spread tasks in flight) leaves every worker free, no
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
            assert [_fields(r) for r in taken] == [_fields(r) for r in full[:stop_after]]
        again = loop.score(rows)
    assert [_fields(r) for r in again] == [_fields(r) for r in full]


def _needs_the_pool(count: int, tag: str) -> list[dict[str, Any]]:
    """Distinct rows no fast path decides: each is a math-verify check in a worker."""
    return [{"data_source": "math", "response": f"\\boxed{{\\sin^2 {tag} + \\cos^2 {tag} + {i}}}",
             "ground_truth": str(i + 1)} for i in range(count)]  # fmt: skip


async def test_a_one_row_request_does_not_wait_behind_a_big_spread_one() -> None:
    """Held: two requests at once (as two HTTP requests: one fair-share owner each), one
    of 3,000 rows (spread tasks and checks queued) and one of 1 row needing a worker: the
    small one waits for about one task, not for the big one's queue."""
    config = RewardConfig.model_validate({"reward": {"num_workers": 2}})
    engine = await RewardEngine.create(config)
    try:
        big = (real_rows(400) * 8)[:2400] + _needs_the_pool(600, "x")
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
    """Held: with custom_reward_function set, rows go to the user's function, never to the
    spread tasks (which would run the built-in verifiers instead)."""
    path = write_module(
        "audit9_reward",
        """
        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            return 0.25 if solution_str == ground_truth else -0.25
        """,
    )
    rows = [{"data_source": "math", "response": str(i % 2), "ground_truth": "1"}
            for i in range(100)]  # fmt: skip
    results, stats = await _score(rows, {"custom_reward_function": {"path": path}})
    assert stats["spread"] == 0
    assert [r.score for r in results] == [0.25 if i % 2 else -0.25 for i in range(100)]


async def test_a_reward_model_batch_is_not_spread_and_its_rule_part_agrees(
    tmp_path: Path,
) -> None:
    """Held: with a (tiny, real) reward model on, a batch stays unspread, and each row's
    rule component is what the spread rule-only run gives it."""
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
    rm = {"reward_model": {"enable": True, "model_path": path, "device": "cpu"}}
    with_rm, rm_stats = await _score(rows, rm)
    rule_only, rule_stats = await _score(rows, {})
    assert rm_stats["spread"] == 0 and rule_stats["spread"] == len(rows)
    assert all(r.status is Status.OK and len(r.components) == 2 for r in with_rm)
    assert [r.components["rule"] for r in with_rm] == [r.components["rule"] for r in rule_only]


async def test_list_and_dict_ground_truths_reach_the_pool_with_a_hashable_key() -> None:
    """Held: a list ground truth (unhashable) needing math-verify goes to a worker with
    the engine's JSON-string affinity key and is scored; a dict one is refused by name."""
    rows = [{"data_source": "math", "response": f"\\boxed{{\\sin^2 x + \\cos^2 x + {i}}}",
             "ground_truth": [str(i + 1), "zz"]} for i in range(40)]  # fmt: skip
    rows += [{**row, "ground_truth": {"answer": row["ground_truth"][0]}} for row in rows]
    results, stats = await _score(rows, {})
    assert stats["spread"] == 80 and stats["pool"] == 40
    assert all(r.status is Status.OK and r.score == 1.0 for r in results[:40])
    assert all(r.status is Status.INVALID and "ground_truth" in (r.error or "")
               for r in results[40:])  # fmt: skip


# ------------------------------------------------------------------ affinity


def _pid_and_sleep(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _keys_by_slot(size: int) -> list[str]:
    keys: dict[int, str] = {}
    for i in range(1000):
        keys.setdefault(hash(f"gold-{i}") % size, f"gold-{i}")
    return [keys[slot] for slot in range(size)]


async def test_affinity_on_a_one_worker_pool_and_mixed_tasks() -> None:
    """Held: size=1, tasks with keys (several), with None and without: all run, in order."""
    pool = WorkerPool(1)
    await pool.start()
    try:
        keys: list[Any] = ["a", None, "b", ("t", 1), None, 7]
        pids = await asyncio.gather(
            *(pool.run(_pid_and_sleep, 0.01, timeout=10, affinity=key) for key in keys * 3)
        )
    finally:
        await pool.close()
    assert len(set(pids)) == 1


async def test_a_replaced_worker_keeps_its_slot_for_its_keys() -> None:
    """Held: after a timeout kills the worker a key prefers, its replacement takes that
    slot: the key's tasks reach one (new) worker again, and the other key is untouched."""
    pool = WorkerPool(2)
    await pool.start()
    try:
        first, second = _keys_by_slot(2)
        before = {await pool.run(os.getpid, timeout=5, affinity=first) for _ in range(4)}
        with pytest.raises(ScorerTimeout):
            await pool.run(_pid_and_sleep, 5, timeout=0.2, affinity=first)
        after = {await pool.run(os.getpid, timeout=5, affinity=first) for _ in range(4)}
        other = {await pool.run(os.getpid, timeout=5, affinity=second) for _ in range(4)}
    finally:
        await pool.close()
    assert len(before) == len(after) == len(other) == 1
    assert before != after and after != other


async def test_an_unhashable_affinity_is_refused_and_costs_nothing() -> None:
    """Held: a list key raises TypeError before any worker is taken; the pool still works."""
    pool = WorkerPool(2)
    await pool.start()
    try:
        with pytest.raises(TypeError):
            await pool.run(os.getpid, timeout=5, affinity=["1", "2"])  # type: ignore[arg-type]
        assert len(pool._idle) == 2 and not pool._running
        assert await pool.run(os.getpid, timeout=5, affinity="x") > 0
    finally:
        await pool.close()


async def test_a_task_whose_worker_is_stuck_waits_at_most_for_the_others_queue() -> None:
    """Held: the worker a key prefers is stuck (3 s); tasks of that key queued before 8
    short tasks of the other key still finish once the free worker has no other task in
    its window, long before the stuck one frees (no starvation, no idle worker)."""
    pool = WorkerPool(2)
    await pool.start()
    try:
        stuck_key, free_key = _keys_by_slot(2)
        stuck = asyncio.create_task(pool.run(_pid_and_sleep, 3.0, timeout=10, affinity=stuck_key))
        while len(pool._idle) != 1:
            await asyncio.sleep(0.01)
        started = time.perf_counter()
        waiting = [pool.run(_pid_and_sleep, 0.05, timeout=10, affinity=stuck_key) for _ in range(2)]
        others = [pool.run(_pid_and_sleep, 0.05, timeout=10, affinity=free_key) for _ in range(8)]
        await asyncio.gather(*waiting, *others)
        elapsed = time.perf_counter() - started
        await stuck
    finally:
        await pool.close()
    assert elapsed < 2.5, f"tasks waited {elapsed:.2f}s for a stuck worker"


# ------------------------------------------------------------------ two-stage parsing

# Inputs where the grammar is ambiguous or only full-context (LL) prediction parses:
# sets against numbers with commas, intervals, relations, \left/\right, implicit products,
# subscripts, primes, \frac without braces, matrices, mixed numbers. Each compared as
# math-verify reads it with ANTLR's default LL and with two-stage parsing.
AMBIGUOUS = [
    "1,2,3", "3,333", "3,333,333", "1,000.5", "12,345.67", "0,5", "1\\,000", "1{,}000",
    "\\{1, 2, 3\\}", "(1,2)", "[1,2]", "(1,2]", "(-\\infty,3]\\cup[5,\\infty)", "(1, 2), (3, 4)",
    "x = 1, y = 2", "x=1 \\text{ or } x=2", "a \\le b \\le c", "1<x<3", "x \\in (0,1)",
    "a=b=c=20", "x \\neq 3", "\\left(1,2\\right)", "\\left[ 0, 1 \\right)", "\\left| x \\right|",
    "|x-1|+|x+1|", "\\left(\\frac{1}{2}\\right)^2", "2xy", "2\\pi r", "x y z", "(2)(3)",
    "x(x+1)", "f(x)=x^2", "x_1 + x_2", "a_{n+1}", "x_1^2", "f'(x)", "f''(x)", "a'_1",
    "\\frac12", "\\frac 1 2", "\\frac{1}2", "\\frac1{2}", "\\sqrt3", "\\sqrt[3]{2}",
    "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ -2 \\end{pmatrix}",
    "\\sin 2x", "\\sin^2 x + \\cos^2 x", "\\log_2 8", "\\cos^{-1} x", "2^3^2", "3/4/5",
    "1, 2, \\ldots, n", "\\{x \\mid x>0\\}", "A \\setminus B", "x = \\pm 2", "2\\frac{1}{2}",
    "3 \\frac{1}{4}", "\\frac{1}{2}x", "x\\frac{1}{2}", "10\\%", "30^{\\circ}", "1+i",
    "\\frac{10a^3}{55a^2}=\\frac{2\\cdot3}{11}", "y'", "x_1,x_2", "|x|<2", "\\pi r^2",
]  # fmt: skip


def test_two_stage_reads_grammar_ambiguities_as_ll_does() -> None:
    """Held (also on 1,387 generated inputs, see the report): the same parses."""
    texts = [f"${t}$" for t in AMBIGUOUS] + [f"\\boxed{{{t}}}" for t in AMBIGUOUS]
    assert differing(texts, ["_two_stage"]) == []


class _Alarm(Exception):
    """What a caller's own time limit raises (math-verify's TimeoutException is one)."""


def test_found_two_stage_lets_a_callers_time_limit_through() -> None:
    """Found: the SLL stage retried in LL mode on *any* Exception, so a caller's time
    limit firing mid-parse (math-verify's parsing_timeout: a SIGALRM handler raising an
    Exception) was swallowed and the LL parse ran on with no limit (seconds more).
    Now only latex2sympy's syntax errors (plain Exception) and RecursionError retry."""
    from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy

    assert _two_stage.install()
    # Long enough that SLL takes a while before the syntax error at the end, and that
    # the LL re-parse would take seconds (LL costs 10-50x SLL here).
    text = "+".join(f"x_{{{i}}}^{{2}}" for i in range(400)) + "+"

    def ring(signum: int, frame: Any) -> None:
        raise _Alarm("time is up")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 0.02)
    started = time.perf_counter()
    try:
        with pytest.raises(_Alarm):
            _Latex2Sympy().parse(text)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.perf_counter() - started < 2.0
