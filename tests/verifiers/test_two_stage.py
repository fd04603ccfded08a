"""Two-stage parsing (SLL first, LL on a syntax error) changes no parse, only its cost.

ANTLR documents that SLL prediction returns LL's parse tree or a syntax error. These tests
hold the installed latex2sympy to that: math-verify's results in this process (two-stage)
against a child process that never installs it (ANTLR's default LL), on inputs only LL
can parse, syntax errors, and real model outputs.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from rewardkit.verifiers import _two_stage
from rewardkit.verifiers.math import MathVerifier

REAL_OUTPUTS = Path(__file__).resolve().parents[1] / "data" / "real_outputs"

# Inputs found on the real outputs where SLL prediction reports a syntax error and LL
# parses: the retry must give LL's result, not "unparsable".
LL_ONLY = ["x_1", "t^2", "6x^2", "\\frac{s^2}{5}", "\\frac{10a^3}{55a^2}=\\frac{2\\cdot3}{11}"]
# Real syntax errors: both stages fail, math-verify falls back the same way.
BROKEN = ["\\frac{1}{", "3 +* 4", "\\sqrt{", "x = = 2", "(1, 2"]
# Shapes whose reading depends on the grammar's ambiguities (sets, relations, products).
AMBIGUOUS = ["1, 2, 3", "3,333", "x = 1, y = 2", "a=b=c=20", "2\\pi r", "\\{1, 2\\} \\cup (3, 4]"]

_PARSE_ALL = """
import json, sys
import math_verify
from math_verify import ExprExtractionConfig, LatexExtractionConfig
from sympy import srepr
config = [ExprExtractionConfig(), LatexExtractionConfig()]
texts = json.load(sys.stdin)
if sys.argv[1] == "two-stage":
    from rewardkit.verifiers import _two_stage
    assert _two_stage.install()
out = []
for text in texts:
    found = math_verify.parse(text, config, parsing_timeout=None)
    out.append([item if isinstance(item, str) else srepr(item) for item in found])
json.dump(out, sys.stdout)
"""


def _parse_in_child(texts: list[str], mode: str) -> list[list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PARSE_ALL, mode],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    return json.loads(done.stdout)


def _real_responses(step: int) -> list[str]:
    responses = []
    for path in sorted(REAL_OUTPUTS.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        responses += [row["response"][-1500:] for row in rows[::step]]
    return responses


def test_two_stage_parses_as_ll_does() -> None:
    boxed = [f"\\boxed{{{text}}}" for text in LL_ONLY + BROKEN + AMBIGUOUS]
    texts = boxed + _real_responses(step=15)  # about 300 real responses, every source
    ll = _parse_in_child(texts, "ll")
    two_stage = _parse_in_child(texts, "two-stage")
    differing = [text for text, a, b in zip(texts, ll, two_stage, strict=True) if a != b]
    assert differing == []
    parsed = dict(zip(boxed, ll, strict=False))
    assert all(len(parsed[f"\\boxed{{{t}}}"]) == 2 for t in LL_ONLY)  # a value and its text


def test_the_math_verifier_installs_it() -> None:
    verdict = MathVerifier(fast_paths=False).check(
        MathVerifier().extract("so \\boxed{6x^2}"), "6x^{2}"
    )
    assert verdict.score == 1.0
    assert _two_stage.installed()
    assert _two_stage.install() is True  # idempotent: not wrapped twice
