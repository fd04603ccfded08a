"""guards: _warm_corpus.py: the math verifier's warm-up corpus.

The math verifier's warm-up corpus: parsed once in the worker fork server so that every
worker inherits latex2sympy's predictions (``benchmarks/worker_warmth.py`` measures it).

It must exercise the parser (math-verify reads something in every passage), never stop a
pool from starting, and not be drawn from the real outputs it is measured on.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rewardkit.verifiers import _warm_corpus
from rewardkit.verifiers import math as math_verifier

REAL_OUTPUTS = Path(__file__).resolve().parents[1] / "data" / "real_outputs"


@pytest.mark.parametrize("text", _warm_corpus.LATEX)
def test_math_verify_reads_every_passage(text: str) -> None:
    found = math_verifier._parse_passage(text)
    assert any(not isinstance(item, str) for item in found), f"nothing parsed in {text!r}"


def test_a_failing_passage_costs_the_warm_up_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []

    def parse(text: str) -> list[object]:
        if "boom" in text:
            raise RecursionError("a passage the parser cannot take")
        read.append(text)
        return []

    monkeypatch.setattr(_warm_corpus, "LATEX", ("$1$", "boom", "$2$"))
    monkeypatch.setattr(math_verifier, "_parse_passage", parse)
    math_verifier.warm_up()
    assert read == ["$1$", "$2$"]  # the passage after the failing one was still parsed


def test_no_passage_is_taken_from_the_real_outputs() -> None:
    responses = []
    for path in sorted(REAL_OUTPUTS.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            responses += [json.loads(line)["response"] for line in fh if line.strip()]
    # Short answers ("$\\pi$", "The answer is 18.") occur anywhere; a passage does not.
    passages = [text for text in _warm_corpus.LATEX if len(text) >= 20]
    taken = [text for text in passages if any(text in r for r in responses)]
    assert len(passages) > 40
    assert taken == [], "the warm-up would be tuned to the rows it is measured on"
