"""guards: what `rewardkit score` writes: JSONL rows alone on stdout (what user code prints
goes to stderr), strict JSON (never a bare NaN), a summary and errors of bounded size.

Each runs the CLI in a subprocess, as a user does, and reads its output as a strict
reader (jq, JavaScript, Go) would.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from _support.cli import read_jsonl, run_cli, score_file, strict_json, write_jsonl
from _support.user_functions import custom_row


def test_a_scorer_that_prints_never_corrupts_jsonl_on_stdout(tmp_path: Path, misbehaving: str):
    """A user function's print (and its forked child's) goes to stderr, never between the
    JSONL rows of ``-o -``: workers send their stdout to stderr."""
    rows = [custom_row(r) for r in ("42", "print", "fork_print", "41", "42")]
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    function = f"reward.custom_reward_function.path={misbehaving}"
    proc = score_file(path, "-", "reward.num_workers=1", function)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == len(rows), lines[:3]
    results = [strict_json(line) for line in lines]
    assert [r["score"] for r in results] == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert all(r["status"] == "ok" for r in results)
    assert "PPPP" in proc.stderr  # the print is not lost: it is on stderr


PRINTING = """
def sync_print(data_source, solution_str, ground_truth, extra_info, **kw):
    print("debug: scoring", solution_str)
    return 1.0

async def async_print(data_source, solution_str, ground_truth, extra_info, **kw):
    print("debug: scoring", solution_str)
    return 1.0
"""


@pytest.mark.parametrize("name", ["sync_print", "async_print"])
def test_a_printing_function_does_not_break_the_jsonl_on_stdout(tmp_path: Path, name: str) -> None:
    """`rewardkit score rows.jsonl -o - | trainer` gets no "debug: scoring a" lines
    between the rows when an async function prints: it runs on the loop, in the CLI's
    own process, where the rows own stdout while they are written (sync functions run
    in workers, whose stdout is stderr)."""
    (tmp_path / "printing.py").write_text(PRINTING)
    rows = [{"data_source": "x", "response": r, "ground_truth": "1"} for r in "ab"]
    write_jsonl(tmp_path / "rows.jsonl", rows)
    proc = run_cli(
        "score", "rows.jsonl", "-o", "-", "--no-progress",
        "reward.custom_reward_function.path=printing.py",
        f"reward.custom_reward_function.name={name}", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]  # every line is a row
    assert [(r["response"], r["score"]) for r in results] == [("a", 1.0), ("b", 1.0)]
    assert "debug: scoring a" in proc.stderr and "debug: scoring b" in proc.stderr


def test_jsonl_output_never_holds_bare_nan(tmp_path: Path, misbehaving: str) -> None:
    """A NaN read from the input (Python's reader takes ``NaN``) or returned in a user
    function's extra dict is written as null, as the server sends it: a bare ``NaN``
    makes strict readers refuse the whole file."""
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"data_source": "custom", "response": "42", "ground_truth": "42", "weight": NaN}\n'
        '{"data_source": "custom", "response": "extra_nan", "ground_truth": "42"}\n'
        '{"data_source": "custom", "response": "41", "ground_truth": "42", "w": -Infinity}\n'
    )
    out = tmp_path / "out.jsonl"
    function = f"reward.custom_reward_function.path={misbehaving}"
    proc = score_file(path, out, "reward.num_workers=1", function)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [strict_json(line) for line in out.read_text().splitlines()]
    assert [r["score"] for r in results] == [1.0, 0.5, 0.0]
    assert results[0]["weight"] is None and results[2]["w"] is None
    assert results[1]["extra"] == {"ratio": None, "big": None}


def test_nan_is_not_a_number_a_float_check_can_miss() -> None:
    """The strict reader used above refuses NaN, so the tests' checks are real."""
    with pytest.raises(ValueError, match="not JSON"):
        strict_json('{"a": NaN}')
    assert math.isnan(json.loads('{"a": NaN}')["a"])  # what Python alone would accept


def test_a_huge_made_up_data_source_keeps_the_summary_and_error_small(tmp_path: Path) -> None:
    """A data_source of 100,000 characters must not widen every line of the summary table
    to that (1.3 MB of stderr for ten rows), nor make a 100 KB 'one-line' error."""
    name = "z" * 100_000
    rows = [{"data_source": name, "response": "#### 4", "ground_truth": "4"}]
    rows += [{"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"}] * 9
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "out.jsonl"
    proc = run_cli("score", str(path), "-o", str(out), "reward.num_workers=1", "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(proc.stderr) < 10_000
    results = read_jsonl(out)
    assert results[0]["status"] == "invalid" and len(results[0]["error"]) <= 2000
    assert results[0]["error"].startswith("unknown data_source 'zzz")
    assert results[0]["data_source"] == name  # the row itself is echoed whole
    assert [r["score"] for r in results[1:]] == [1.0] * 9
