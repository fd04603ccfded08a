"""Digit strings read without sympy's expression parser give sympy's own numbers.

The shortcut must be invisible: for every string latex2sympy or math-verify hands to
``sympy.Number``, the same object (type and value, by ``srepr``); for real model outputs,
the same parses as a process that never installs it.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

from rewardkit.verifiers import _digit_numbers
from rewardkit.verifiers.math import MathVerifier

REAL_OUTPUTS = Path(__file__).resolve().parents[1] / "data" / "real_outputs"

# What the two callers pass: digits (leading zeros, huge, zero), and what must still go
# to sympy (decimals, signs, exponents, Unicode digits that str.isdigit() accepts).
TEXTS = ["0", "7", "0007", "16", "1000000", "9" * 80, "3.5", ".5", "-16", "+3", "1e3",
         "12.000", "0.0001", "\u00b2", "\u0663", "\uff11\uff12"]  # fmt: skip


@pytest.mark.parametrize("text", TEXTS)
def test_a_number_is_what_sympy_reads(text: str) -> None:
    try:
        expected = sympy.srepr(sympy.Number(text))
    except (ValueError, TypeError, SyntaxError, sympy.SympifyError) as exc:
        with pytest.raises(type(exc)):
            _digit_numbers.number(text)
        return
    assert sympy.srepr(_digit_numbers.number(text)) == expected


def test_latex_numbers_with_commas_and_zeros_read_as_before() -> None:
    from latex2sympy2_extended import latex2sympy2

    assert _digit_numbers.install()
    converter = latex2sympy2._Latex2Sympy()
    for text in ("1,000", "0,012", "007", "12", "3.25", "1,234.5"):
        plain = text.replace(",", "")
        stripped = (plain.lstrip("0") or "0") if plain.isdigit() else plain
        assert sympy.srepr(converter.parse_number(text)) == sympy.srepr(sympy.Number(stripped))


_PARSE_ALL = """
import json, sys
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse
from sympy import srepr
if sys.argv[1] == "shortcut":
    from rewardkit.verifiers import _digit_numbers
    assert _digit_numbers.install()
config = [ExprExtractionConfig(), LatexExtractionConfig()]
out = []
for text in json.load(sys.stdin):
    found = parse(text, config, parsing_timeout=None)
    out.append([x if isinstance(x, str) else srepr(x) for x in found])
json.dump(out, sys.stdout)
"""


def test_real_outputs_parse_as_without_the_shortcut() -> None:
    texts = ["\\boxed{0016}", "\\boxed{1,000}", "The answer is 0042.", "\\boxed{12\\%}"]
    for path in sorted(REAL_OUTPUTS.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        texts += [row["response"][-1500:] for row in rows[::15]]
    runs = {}
    for mode in ("sympy", "shortcut"):
        done = subprocess.run(
            [sys.executable, "-c", _PARSE_ALL, mode],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            timeout=240,
            check=True,
        )
        runs[mode] = json.loads(done.stdout)
    assert [
        t for t, a, b in zip(texts, runs["sympy"], runs["shortcut"], strict=True) if a != b
    ] == []


def test_the_math_verifier_installs_it() -> None:
    verdict = MathVerifier(fast_paths=False).check(MathVerifier().extract("\\boxed{0016}"), "16")
    assert verdict.score == 1.0
    assert _digit_numbers.installed()
