"""Hostile rows and hostile user functions through the real CLI, loop and server.

Each test is a problem found by attacking rewardkit end to end (red-team brief red7c):
the input, and what must hold: every other row keeps its score, the bad row gets a
typed status and a one-line error, nothing hangs, the output stays readable JSON.

    .venv/bin/python -m pytest tests/test_hostile7.py
"""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from _support.verifier_rows import gone
from rewardkit import RewardLoop, Status
from rewardkit.types import Result
from _support.serving import running_server

HOSTILE = """
import os, sys, time

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    s = solution_str
    if s == "print":  # a debug print of 1 MB, then raw writes to descriptor 1
        print("P" * 1_000_000)
        os.write(1, b'{"fake": "row"}\\n' * 100)
    if s == "fork_print":  # a child that prints after its parent has answered
        if os.fork() == 0:
            time.sleep(0.5)
            print('{"from": "grandchild"}', flush=True)
            os._exit(0)
    if s == "raise_lines":
        raise ValueError("first line\\nsecond line\\r\\nthird line")
    if s == "array":
        import numpy as np
        return np.array([1.0, 2.0])
    if s == "huge_int":
        return 10**400
    if s == "numpy_float":
        import numpy as np
        return np.float64(0.75)
    if s == "numpy_bool":
        import numpy as np
        return np.bool_(True)
    if s == "bool":
        return True
    if s == "extra_nan":
        return {"score": 0.5, "ratio": float("nan"), "big": float("inf")}
    return float(s.strip() == str(ground_truth))
"""


def _strict_json(line: str) -> Any:
    """json.loads that refuses NaN and Infinity, as jq, JavaScript and Go do."""

    def refuse(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")

    return json.loads(line, parse_constant=refuse)


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewardkit.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _row(response: str, truth: Any = "42", **extra: Any) -> dict[str, Any]:
    return {"data_source": "custom", "response": response, "ground_truth": truth, **extra}


@pytest.fixture
def hostile(write_module) -> str:
    return write_module("hostile7_reward", HOSTILE)


def test_a_scorer_that_prints_never_corrupts_jsonl_on_stdout(tmp_path: Path, hostile: str):
    """Found: a user function's print (and its forked child's) went to the CLI's stdout,
    between the JSONL rows of ``-o -``. Workers now send their stdout to stderr."""
    rows = [_row("42"), _row("print"), _row("fork_print"), _row("41"), _row("42")]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = _cli(
        "score",
        str(path),
        "-o",
        "-",
        "reward.num_workers=1",
        f"reward.custom_reward_function.path={hostile}",
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == len(rows), lines[:3]
    results = [_strict_json(line) for line in lines]
    assert [r["score"] for r in results] == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert all(r["status"] == "ok" for r in results)
    assert "PPPP" in proc.stderr  # the print is not lost: it is on stderr


def test_user_function_failures_are_typed_one_line_and_not_internal(hostile: str):
    """Found: an exception message with line breaks was the row's error as it was (the
    contract is one line); a numpy array or an int past 1e308 read as 'internal error'."""
    config = {
        "reward": {"num_workers": 1, "timeout_s": 10, "custom_reward_function": {"path": hostile}}
    }
    responses = ["42", "raise_lines", "array", "huge_int", "numpy_float", "numpy_bool", "bool"]
    with RewardLoop(config) as loop:
        results = dict(zip(responses, loop.score([_row(r) for r in responses]), strict=True))
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


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ("a\nb", "a b"),
        ("a\r\n  b\u2028c\x85d", "a b c d"),
        ("x" * 5000, "x" * 1999 + "\u2026"),
        ("plain  spaces kept", "plain  spaces kept"),  # no break: untouched
    ],
)
def test_a_result_error_is_always_one_bounded_line(error: str, expected: str) -> None:
    assert Result(0, Status.ERROR, error=error).error == expected


def test_json_the_reader_cannot_parse_costs_one_row_not_the_run(tmp_path: Path) -> None:
    """Found: a JSONL line holding an integer of 5,000 digits (valid JSON, over Python's
    4,300-digit limit) or nesting 100,000 deep crashed ``rewardkit score`` with a
    traceback (exit 1), losing every row. Each is now one ``invalid`` row."""
    good = json.dumps({"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"})
    lines = [
        good,
        '{"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": ' + "9" * 5000 + "}",
        good,
        '{"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": '
        + "[" * 100_000
        + "]" * 100_000
        + "}",
        good,
        '{"data_source": "openai/gsm8k", "resp',  # a truncated last line
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines))
    out = tmp_path / "out.jsonl"
    proc = _cli("score", str(path), "-o", str(out), "reward.num_workers=1", "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [_strict_json(line) for line in out.read_text().splitlines()]
    assert [r["status"] for r in results] == ["ok", "invalid", "ok", "invalid", "ok", "invalid"]
    assert [results[i]["score"] for i in (0, 2, 4)] == [1.0, 1.0, 1.0]
    assert "line 2: not valid JSON" in results[1]["error"] and "4300 digits" in results[1]["error"]
    assert "line 4: not valid JSON (RecursionError" in results[3]["error"]
    assert "line 6: not valid JSON" in results[5]["error"]


def test_a_json_input_with_a_huge_integer_is_a_one_line_input_error(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text(
        '[{"data_source": "gsm8k", "response": "1", "ground_truth": ' + "7" * 5000 + "}]"
    )
    proc = _cli("score", str(path), "-o", str(tmp_path / "out.jsonl"), "--no-progress")
    assert proc.returncode == 2
    assert "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_jsonl_output_never_holds_bare_nan(tmp_path: Path, hostile: str) -> None:
    """Found: a NaN read from the input (Python's reader takes ``NaN``) or returned in a
    user function's extra dict was written as a bare ``NaN``, which strict readers refuse
    for the whole file. It is now null, as the server sends it."""
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"data_source": "custom", "response": "42", "ground_truth": "42", "weight": NaN}\n'
        '{"data_source": "custom", "response": "extra_nan", "ground_truth": "42"}\n'
        '{"data_source": "custom", "response": "41", "ground_truth": "42", "w": -Infinity}\n'
    )
    out = tmp_path / "out.jsonl"
    proc = _cli(
        "score",
        str(path),
        "-o",
        str(out),
        "reward.num_workers=1",
        f"reward.custom_reward_function.path={hostile}",
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [_strict_json(line) for line in out.read_text().splitlines()]
    assert [r["score"] for r in results] == [1.0, 0.5, 0.0]
    assert results[0]["weight"] is None and results[2]["w"] is None
    assert results[1]["extra"] == {"ratio": None, "big": None}


@pytest.mark.parametrize("depth", [400, 900])  # past pydantic's encoder; past json's too
def test_a_row_too_deep_to_encode_costs_only_itself_on_the_server(depth: int) -> None:
    """Found: a row whose ground truth (or any echoed field) nests a few hundred levels
    deep was parsed and scored, but the answer could not be encoded: 500 for the whole
    request. Now the field that cannot be encoded is replaced by a note, and the rest of
    the answer is sent."""
    deep: Any = 4
    for _ in range(depth):
        deep = [deep]
    rows = [
        {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"},
        {"data_source": "lighteval/MATH", "response": "\\boxed{4}", "ground_truth": deep},
        {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4", "meta": deep},
        {"data_source": "openai/gsm8k", "response": "#### 5", "ground_truth": "4"},
    ]
    body = json.dumps({"samples": rows}).encode()
    config = {"reward": {"num_workers": 1, "timeout_s": 10}}
    with running_server(config) as base, httpx.Client(base_url=base, timeout=60) as client:
        answer = client.post(
            "/v1/score", content=body, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 200, answer.text[:300]
        results = answer.json()["results"]
        assert [r["score"] for r in results] == [1.0, None, 1.0, 0.0]
        assert results[1]["status"] in ("invalid", "error") and results[1]["error"]
        note = "<not encodable as JSON: RecursionError>"
        assert results[1]["ground_truth"] in (deep, note)  # as sent, where it can be
        assert results[2]["status"] == "ok" and results[2]["meta"] in (deep, note)
        again = client.post("/v1/score", json={"samples": rows[:1]})
        assert again.status_code == 200 and again.json()["results"][0]["score"] == 1.0


def test_a_body_python_cannot_read_is_a_422_with_the_reason() -> None:
    """Found: a body holding an integer of 5,000 digits (valid JSON, over Python's
    4,300-digit limit) got FastAPI's 400 "There was an error parsing the body". A malformed
    body gets 422 with the reason, like any other; the server answers the next request."""
    huge = '{"samples": [{"data_source": "gsm8k", "response": "1", "ground_truth": '
    body = (huge + "7" * 5000 + "}]}").encode()
    config = {"reward": {"num_workers": 1, "timeout_s": 10}}
    with running_server(config) as base, httpx.Client(base_url=base, timeout=60) as client:
        answer = client.post(
            "/v1/score", content=body, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 422, answer.text[:300]
        assert "not readable JSON" in answer.json()["detail"][0]
        assert "4300 digits" in answer.json()["detail"][0]
        assert client.get("/no/such/route").status_code == 404  # other HTTP errors unchanged
        row = {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"}
        again = client.post("/v1/score", json={"samples": [row]})
        assert again.status_code == 200 and again.json()["results"][0]["score"] == 1.0


def test_nan_is_not_a_number_a_float_check_can_miss() -> None:
    """The strict reader used above refuses NaN, so the tests' checks are real."""
    with pytest.raises(ValueError, match="not JSON"):
        _strict_json('{"a": NaN}')
    assert math.isnan(json.loads('{"a": NaN}')["a"])  # what Python alone would accept


CHILDREN = """
import os, subprocess, sys, time

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    if solution_str == "fork_then_die":  # the child keeps the worker's pipe open
        if os.fork() == 0:
            time.sleep(25)  # outlives the check below, then goes
            os._exit(0)
        os._exit(3)
    if solution_str.startswith("spawn_then_hang:"):  # a child process, then a hang
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        with open(solution_str.split(":", 1)[1], "w") as handle:
            handle.write(str(child.pid))
        while True:
            time.sleep(0.05)
    return float(solution_str == str(ground_truth))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_that_dies_while_its_child_holds_the_pipe_is_a_crash_not_a_timeout(
    write_module,
) -> None:
    """Found: a worker that forked and then died was noticed only by EOF on its pipe,
    which the child still held: the row waited the whole timeout and read ``timeout``.
    The pool now watches the process itself."""
    path = write_module("children7", CHILDREN)
    config = {
        "reward": {"num_workers": 1, "timeout_s": 30, "custom_reward_function": {"path": path}}
    }
    with RewardLoop(config) as loop:
        started = time.perf_counter()
        results = loop.score([_row("42"), _row("fork_then_die"), _row("42")])
        elapsed = time.perf_counter() - started
    assert [r.score for r in results] == [1.0, None, 1.0]
    assert results[1].status is Status.ERROR
    assert "worker process died (exit code 3)" in results[1].error
    assert elapsed < 15  # not the 30 s timeout, nor the 25 s the child holds the pipe


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_timed_out_function_takes_its_child_processes_with_it(write_module, tmp_path) -> None:
    """Found: killing a timed-out worker left the processes it had started running,
    orphaned, for ever. They are killed with it now."""
    path = write_module("children7", CHILDREN)
    pid_file = tmp_path / "child.pid"
    config = {
        "reward": {"num_workers": 1, "timeout_s": 2, "custom_reward_function": {"path": path}}
    }
    with RewardLoop(config) as loop:
        results = loop.score([_row(f"spawn_then_hang:{pid_file}"), _row("42")])
        assert [r.status for r in results] == [Status.TIMEOUT, Status.OK]
        child = int(pid_file.read_text())
        deadline = time.monotonic() + 10
        while not gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gone(child), f"process {child} outlived its timed-out worker"


ASYNC_HOSTILE = """
import asyncio

async def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    s = solution_str
    if s == "system_exit":
        raise SystemExit(3)
    if s == "keyboard_interrupt":
        raise KeyboardInterrupt()
    if s == "cancelled":
        raise asyncio.CancelledError()
    if s == "own_timeout":  # its own client's timeout, at once: not our limit
        raise TimeoutError("judge server did not answer")
    if s == "stubborn":  # swallows every cancellation
        while True:
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                pass
    await asyncio.sleep(0.01)
    return float(s == str(ground_truth))
"""


def test_async_functions_that_escape_or_ignore_cancellation_cost_only_their_row(
    write_module,
) -> None:
    """Found: an async function raising SystemExit or KeyboardInterrupt killed the event
    loop's thread (the CLI hung for ever); one raising CancelledError ended the batch
    (rows lost, exit 1); one swallowing cancellation hung its row under wait_for, then
    the loop's close; an instant TimeoutError of its own read 'timed out after 1s'."""
    path = write_module("async_hostile7", ASYNC_HOSTILE)
    config = {
        "reward": {
            "num_workers": 1,
            "async_timeout_s": 1.0,
            "custom_reward_function": {"path": path},
        }
    }
    responses = ["42", "system_exit", "keyboard_interrupt", "cancelled", "own_timeout"]
    responses += ["stubborn", "41", "42"]
    started = time.perf_counter()
    with RewardLoop(config) as loop:
        results = loop.score([_row(r) for r in responses])
        again = loop.score([_row("42")])  # the loop still scores after all that
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


@pytest.mark.slow
def test_the_server_answers_and_exits_on_sigterm_despite_a_stubborn_coroutine(
    write_module,
) -> None:
    """``asyncio.run`` waits for every task when the server stops: a scorer task that
    swallows cancellation kept ``rewardkit serve`` from exiting on SIGTERM."""
    import signal
    import socket

    path = write_module("async_hostile7", ASYNC_HOSTILE)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "rewardkit.cli", "serve", "--port", str(port)),
            *("reward.num_workers=1", "reward.async_timeout_s=1"),
            f"reward.custom_reward_function.path={path}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/ready", timeout=2, trust_env=False).json()["ready"]:
                    break
            time.sleep(0.1)
        rows = [_row("42"), _row("stubborn"), _row("41")]
        answer = httpx.post(f"{base}/v1/score", json={"samples": rows}, timeout=60)
        results = answer.json()["results"]
        assert [r["status"] for r in results] == ["ok", "timeout", "ok"]
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_hand_built_samples_with_wrong_types_are_invalid_rows_not_a_failed_batch() -> None:
    """Found: a Sample built in Python with a list as extra_info failed the whole
    ``loop.score`` call (an ExceptionGroup, every row lost); one with bytes or an int as
    response reached the verifier. A Sample is now checked as a dict row is."""
    from rewardkit import Sample

    good = Sample(data_source="openai/gsm8k", response="#### 4", ground_truth="4")
    rows = [
        good,
        Sample(data_source="openai/gsm8k", response="#### 4", ground_truth="4", extra_info=[1]),  # type: ignore[arg-type]
        Sample(data_source="openai/gsm8k", response=b"#### 4", ground_truth="4"),  # type: ignore[arg-type]
        Sample(data_source="lighteval/MATH", response=4, ground_truth="4"),  # type: ignore[arg-type]
        Sample(data_source=None, response="#### 4", ground_truth="4"),  # type: ignore[arg-type]
        {"data_source": "openai/gsm8k", "response": b"#### 4", "ground_truth": "4"},
        good,
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        results = loop.score(rows)
    assert [r.score for r in results] == [1.0, None, None, None, None, None, 1.0]
    assert all(r.status is Status.INVALID for r in results[1:-1])
    assert results[1].error == "field 'extra_info' must be an object"
    assert results[2].error == "field 'response' must be a string (got bytes)"
    assert results[3].error == "field 'response' must be a string (got int)"
    assert Sample.from_row(good) is good  # a well-typed Sample is taken as it is


def test_report_reads_a_scored_file_with_foreign_field_types(tmp_path: Path) -> None:
    """Found: ``rewardkit report`` on a scored file edited elsewhere crashed with a
    traceback when a row's ``error`` was not text (exit 1, no report)."""
    path = tmp_path / "scored.jsonl"
    ok = {"data_source": "gsm8k", "response": "#### 4", "score": 1.0, "status": "ok"}
    odd = {"data_source": 5, "response": 3, "score": "x", "status": "error", "error": {"a": 1}}
    odd |= {"components": [1], "extra": "s", "elapsed_s": "slow"}
    path.write_text(
        json.dumps(ok) + "\n" + json.dumps(odd) + "\n"
        '{"data_source": "gsm8k", "response": "x", "score": NaN, "status": "ok"}\n'
    )
    out = tmp_path / "report.html"
    proc = _cli("report", str(path), "-o", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "report on 3 rows" in proc.stdout + proc.stderr
    assert out.stat().st_size > 0


def test_a_huge_made_up_data_source_keeps_the_summary_and_error_small(tmp_path: Path) -> None:
    """Found: a data_source of 100,000 characters widened every line of the summary
    table to that (1.3 MB of stderr for ten rows) and made a 100 KB 'one-line' error."""
    name = "z" * 100_000
    rows = [{"data_source": name, "response": "#### 4", "ground_truth": "4"}]
    rows += [{"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"}] * 9
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    proc = _cli("score", str(path), "-o", str(out), "reward.num_workers=1", "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(proc.stderr) < 10_000
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert results[0]["status"] == "invalid" and len(results[0]["error"]) <= 2000
    assert results[0]["error"].startswith("unknown data_source 'zzz")
    assert results[0]["data_source"] == name  # the row itself is echoed whole
    assert [r["score"] for r in results[1:]] == [1.0] * 9


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
    """Found: ``extra_info.response_length`` given as ``"12"`` or ``12.0`` read as
    'the row has no extra_info.response_length', a misleading reason; 12.0 is 12."""
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


OWN_CLASSES = """
class Score(float):
    pass


class Info:
    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Info({self.value})"


def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    if solution_str == "subclass":
        return Score(0.5)
    if solution_str == "object_in_extra":
        return {"score": 1.0, "info": Info(3)}
    return float(solution_str == ground_truth)
"""


def test_a_function_may_return_instances_of_its_own_classes(write_module) -> None:
    """Found: the module a ``.py`` function is loaded as was named after ``hash(path)``,
    which differs between processes: a value of a class from that file (a float
    subclass, an object in the extra dict), pickled by the worker, could not be rebuilt
    by the parent: 'unreadable reply from a worker', status error, worker replaced."""
    path = write_module("own_classes7", OWN_CLASSES)
    config = {"reward": {"num_workers": 1, "custom_reward_function": {"path": path}}}
    with RewardLoop(config) as loop:
        results = loop.score([_row("42"), _row("subclass"), _row("object_in_extra")])
    assert [r.status for r in results] == [Status.OK] * 3, [r.error for r in results]
    assert [r.score for r in results] == [1.0, 0.5, 1.0]
    assert repr(results[2].extra["info"]) == "Info(3)"
