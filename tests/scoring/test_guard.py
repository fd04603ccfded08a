"""guards: user code run by the engine: a failing, hanging, dying or escaping function costs
only its row, with a typed status and a one-line error, never a wrong score or a lost batch.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from _support.user_functions import ASYNC_HOSTILE, custom_config, custom_row, run_named
from rewardkit import RewardLoop, Status


def test_custom_function_failures_are_typed_and_isolated(misbehaving: str) -> None:
    config = custom_config(misbehaving, num_workers=2, timeout_s=1.0, reward_kwargs={"bonus": 0.25})
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


def test_async_custom_function_is_awaited_with_a_guard(misbehaving: str) -> None:
    config = custom_config(misbehaving, "acompute_score", async_timeout_s=0.5)
    with RewardLoop(config) as loop:
        results = loop.score([custom_row("42"), custom_row("slow"), custom_row("1")])
    assert [r.status for r in results] == [Status.OK, Status.TIMEOUT, Status.OK]
    assert [r.score for r in results] == [1.0, None, 0.0]


@pytest.mark.parametrize(
    ("name", "status", "reason"),
    [
        ("boom", "error", "ValueError: boom"),
        ("hang", "timeout", "timed out"),
        ("ahang", "timeout", "timed out"),
        ("die", "error", "worker process died"),
    ],
)
def test_a_failing_function_gives_a_typed_status_not_zero(
    named_functions: Path, name: str, status: str, reason: str
) -> None:
    # A hang waits out its timeout three times (3 rows on 2 workers, then 1): 0.5 s, not 2.
    results = run_named(named_functions, name, timeout_s=0.5 if "hang" in name else 2)
    assert [r.status.value for r in results] == [status] * 4
    assert all(r.score is None and reason in (r.error or "") for r in results)


def test_user_function_failures_are_typed_one_line_and_not_internal(misbehaving: str) -> None:
    """An exception message with line breaks becomes one line (the contract); a numpy array
    or an int past 1e308 is named as a value that is no number, not an internal error."""
    config = custom_config(misbehaving, timeout_s=10)
    responses = ["42", "raise_lines", "array", "huge_int", "numpy_float", "numpy_bool", "bool"]
    with RewardLoop(config) as loop:
        results = dict(zip(responses, loop.score([custom_row(r) for r in responses]), strict=True))
    assert results["42"].score == 1.0
    raised = results["raise_lines"]
    assert raised.status is Status.ERROR and raised.score is None
    assert raised.error == "custom function: ValueError: first line second line third line"
    for name, kind in (("array", "ndarray"), ("huge_int", "int")):
        assert results[name].status is Status.ERROR and results[name].score is None
        assert f"custom function returned {kind}, not usable as a number" in results[name].error
        assert "internal error" not in results[name].error
    # numpy scalars and bools are numbers (verl's functions return them): clean passes.
    assert results["numpy_float"].score == 0.75 and results["numpy_float"].ok
    assert results["numpy_bool"].score == 1.0 and results["bool"].score == 1.0


def test_async_functions_that_escape_or_ignore_cancellation_cost_only_their_row(
    write_module,
) -> None:
    """An async function raising SystemExit or KeyboardInterrupt must not kill the event
    loop's thread (the CLI would hang for ever); one raising CancelledError must not end
    the batch (rows lost, exit 1); one swallowing cancellation must not hang its row under
    wait_for, nor the loop's close; an instant TimeoutError of its own is its error, not
    'timed out after 1s'."""
    path = write_module("async_hostile", ASYNC_HOSTILE)
    config = custom_config(path, async_timeout_s=1.0)
    responses = ["42", "system_exit", "keyboard_interrupt", "cancelled", "own_timeout"]
    responses += ["stubborn", "41", "42"]
    started = time.perf_counter()
    with RewardLoop(config) as loop:
        results = loop.score([custom_row(r) for r in responses])
        again = loop.score([custom_row("42")])  # the loop still scores after all that
    elapsed = time.perf_counter() - started
    by = dict(zip(responses, results, strict=False))
    assert [r.score for r in results] == [1.0, None, None, None, None, None, 0.0, 1.0]
    assert again[0].score == 1.0
    assert by["system_exit"].status is Status.ERROR and "SystemExit" in by["system_exit"].error
    assert by["keyboard_interrupt"].status is Status.ERROR
    assert "KeyboardInterrupt" in by["keyboard_interrupt"].error
    assert by["cancelled"].status is Status.ERROR and "CancelledError" in by["cancelled"].error
    assert by["own_timeout"].status is Status.ERROR
    assert by["own_timeout"].error == "custom function: TimeoutError: judge server did not answer"
    assert by["stubborn"].status is Status.TIMEOUT
    assert "timed out after 1s" in by["stubborn"].error
    assert elapsed < 30  # one 1 s deadline, a bounded wait for the stubborn task at close
