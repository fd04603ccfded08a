"""`rewardkit score` as a user runs it: a real subprocess on real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rewardkit.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewardkit.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def test_score_the_bundled_example_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "scored.jsonl"
    proc = _run(
        "score", "examples/grpo_math.jsonl", "-o", str(out), "reward.num_workers=2", "--no-progress"
    )
    assert proc.returncode == 0, proc.stderr
    inputs = [
        json.loads(line)
        for line in (ROOT / "examples/grpo_math.jsonl").read_text().splitlines()
        if line.strip()
    ]
    outputs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(outputs) == len(inputs)
    assert [o["response"] for o in outputs] == [i["response"] for i in inputs]  # input order kept
    assert all(o["status"] == "ok" for o in outputs)
    assert (
        "rows/s" in proc.stderr
        and "lighteval/MATH" in proc.stderr
        and "openai/gsm8k" in proc.stderr
    )


def test_hostile_rows_get_results_and_exit_zero(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    rows = [
        {
            "data_source": "lighteval/MATH",
            "response": r"\boxed{9^{9^{9^{9^{9}}}}}",
            "ground_truth": "3",
        },
        {
            "data_source": "lighteval/MATH",
            "response": "\\boxed{" + "(" * 5000 + ")" * 5000 + "}",
            "ground_truth": "1",
        },
        {
            "data_source": "openai/gsm8k",
            "response": "pad " * 250_000 + "#### 4",
            "ground_truth": "4",
        },
        {"data_source": "openai/gsm8k", "response": "nul\x00 and \ud800 #### 4", "ground_truth": 4},
        {"data_source": "openai/gsm8k", "response": None, "ground_truth": "4"},
        {"data_source": "unknown/source", "response": "x", "ground_truth": "4"},
        {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken json\n")
    out = tmp_path / "out.jsonl"
    proc = _run(
        "score",
        str(path),
        "-o",
        str(out),
        "reward.num_workers=2",
        "reward.timeout_s=3",
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(results) == len(rows) + 1
    statuses = [r["status"] for r in results]
    assert statuses[2:] == ["ok", "ok", "invalid", "invalid", "ok", "invalid"]
    assert statuses[0] in ("ok", "timeout") and statuses[1] in ("ok", "timeout")
    assert results[0]["score"] in (0.0, None)
    assert "unknown/source" in results[5]["error"]
    assert "line 8" in results[7]["error"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "missing.jsonl"], "no such file"),
        (["score", "examples/grpo_math.jsonl", "reward.timeout_s=never"], "reward.timeout_s"),
        (["score", "examples/grpo_math.jsonl", "reward.nope=1"], "reward.nope: unknown key"),
        (["score", "examples/grpo_math.jsonl", "not-an-override"], "key=value"),
    ],
)
def test_bad_input_or_config_exits_2_with_one_message(
    args: list[str], message: str, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("rewardkit: error:") and message in err
