"""`rewardkit` run as a user runs it (a subprocess), and the JSONL files it reads and writes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "CLI",
    "ROOT",
    "read_jsonl",
    "run_cli",
    "score_file",
    "slow_function",
    "strict_json",
    "write_jsonl",
]

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "rewardkit.cli"]


def run_cli(
    *args: str, cwd: Path | str | None = ROOT, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``rewardkit ARGS`` in a subprocess (the repository root is its working folder unless
    ``cwd`` says otherwise), its output captured as text."""
    return subprocess.run(
        [*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )  # fmt: skip


def score_file(
    source: Path | str, out: Path | str, *args: str, **run: Any
) -> subprocess.CompletedProcess[str]:
    """``rewardkit score SOURCE -o OUT --no-progress ARGS`` (``run``: run_cli's keywords)."""
    return run_cli("score", str(source), "-o", str(out), "--no-progress", *args, **run)


def write_jsonl(path: Path, rows: Iterable[Any]) -> Path:
    """One JSON row a line; returns ``path``."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def read_jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def strict_json(line: str) -> Any:
    """json.loads that refuses NaN and Infinity, as jq, JavaScript and Go do."""

    def refuse(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")

    return json.loads(line, parse_constant=refuse)


SLOW_FN = """
import os
import time

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if not os.path.exists(GO):  # rows nap until the test says go
        time.sleep(0.05)
    return 1.0
"""


def slow_function(tmp_path: Path) -> tuple[Path, Path]:
    """A reward function whose rows nap 0.05 s each until the file ``go`` exists (the
    function, ``go``): a run stays in flight for as long as the test needs it to."""
    fn, go = tmp_path / "slow.py", tmp_path / "go"
    fn.write_text(f"GO = {str(go)!r}\n" + SLOW_FN)
    return fn, go
