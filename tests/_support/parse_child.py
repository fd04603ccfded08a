"""Shared by the parser speed-up and spread tests: math-verify's parses in a fresh
process (with or without rewardkit's speed-ups installed), and rows of the real outputs."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REAL_OUTPUTS = Path(__file__).resolve().parents[1] / "data" / "real_outputs"

_PARSE_ALL = """
import importlib, json, sys
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse
from sympy import srepr
for name in sys.argv[1:]:  # rewardkit.verifiers modules whose install() to run first
    assert importlib.import_module("rewardkit.verifiers." + name).install()
config = [ExprExtractionConfig(), LatexExtractionConfig()]
out = []
for text in json.load(sys.stdin):
    found = parse(text, config, parsing_timeout=None)
    out.append([x if isinstance(x, str) else srepr(x) for x in found])
json.dump(out, sys.stdout)
"""


def parse_in_child(texts: list[str], speedups: Sequence[str] = ()) -> list[list[str]]:
    """math-verify's ``parse`` of each text (as ``srepr``) in a fresh process, after
    installing ``speedups`` (``"_two_stage"``, ``"_digit_numbers"``)."""
    done = subprocess.run(
        [sys.executable, "-c", _PARSE_ALL, *speedups],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    return json.loads(done.stdout)


def differing(texts: list[str], speedups: Sequence[str]) -> list[str]:
    """The texts math-verify parses differently with ``speedups`` than without."""
    plain, fast = parse_in_child(texts), parse_in_child(texts, speedups)
    return [text for text, a, b in zip(texts, plain, fast, strict=True) if a != b]


def _corpus_rows() -> list[list[dict[str, Any]]]:
    files = []
    for path in sorted(REAL_OUTPUTS.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            files.append([json.loads(line) for line in fh if line.strip()])
    return files


def real_responses(step: int, tail: int = 1500) -> list[str]:
    """Every ``step``-th response of every corpus file, its last ``tail`` characters."""
    return [row["response"][-tail:] for rows in _corpus_rows() for row in rows[::step]]


def real_rows(count: int) -> list[dict[str, Any]]:
    """About ``count`` corpus rows spread over its files, as Sample-shaped dicts."""
    keys = ("data_source", "response", "ground_truth")
    return [
        {k: row[k] for k in keys}
        for rows in _corpus_rows()
        for row in rows[:: max(1, len(rows) // (count // 4))]
    ]
