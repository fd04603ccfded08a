"""guards: the degenerate rule on outputs nobody here wrote: a public MATH-500 dump.

``benchmarks/data/math500_dumps`` holds 1,299 published outputs of the Qwen2.5-Math
evaluation harness (README there): 800 sampled Qwen2.5-Math-Instruct responses, clean,
and 499 greedy Llama-3.1-8B-Instruct ones, of which some run into a loop until the token
limit. Read by hand: the 66 rows flagged are each a loop cut at the limit (or a counted
enumeration, "Let's try k = 91: ...", cut mid-line with no answer); no Qwen row and no
row that ends on its answer is flagged. The harness credited 4 of the 66, each for a
number its extraction took out of the loop (no final answer is given). 12 of the 66 are
shorter than 4,096 characters; 12 are found only in the last 1,024 characters (a loop of
a short unit after the derivation it began from) and 12 only by the rule's fourth way
(near copies of a longer unit at the end; 13 before counters other than digits were
read as no new word: row 1-0 loops "\\frac{k^{n + 1}}{n + 1}" and the single letters it
writes anew, j, k and n, are such counters).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rewardkit.verifiers import _repetition
from rewardkit.verifiers.math import MathVerifier

DUMPS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "math500_dumps"
ROWS = [json.loads(line) for line in gzip.open(DUMPS / "rows.jsonl.gz", "rt", encoding="utf-8")]
CREDITED_LOOPS = {
    "llama31_math500-9-0",  # "Let's consider the left subtree, which is $2\cdot 3\cdot 4\cdot"
    "llama31_math500-76-0",  # "$b = 1$ is not correct, but $b = 0$ is not correct, but"
    "llama31_math500-88-0",  # "In this case, the function is $f(x) = ax + 2a$. Since $x"
    "llama31_math500-479-0",  # "The only prime number that is a multiple of"
}


def test_the_loops_of_a_greedy_model_are_flagged_and_nothing_else() -> None:
    flagged = [row for row in ROWS if _repetition.degenerate(row["response"])]
    assert len(ROWS) == 1299 and len(flagged) == 66
    assert sum(_repetition.content_end(row["response"]) < 4096 for row in flagged) == 12
    assert all(row["id"].startswith("llama31_math500-") for row in flagged)
    credited = {row["id"] for row in flagged if row["extra_info"]["source_label"]}
    assert credited == CREDITED_LOOPS


def test_twelve_of_the_loops_are_found_by_near_copies_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Loops of a long unit that began less than a window before the cut (README,
    "Degenerate responses"): the three other ways alone flag 54 of the 66."""
    monkeypatch.setattr(_repetition, "_near_copies", lambda text: False)
    assert sum(_repetition.degenerate(row["response"]) for row in ROWS) == 66 - 12


def test_twelve_of_the_loops_are_found_in_the_short_window_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Loops of a short unit ("$P(4) = (4 - r)$", "f(1480,2) = f(1475,3) = ...") after a
    derivation: the last 4,096 characters still hold the derivation, the last 1,024 do
    not."""
    long_only = lambda end: (min(_repetition.WINDOW_CHARS, end),)  # noqa: E731
    monkeypatch.setattr(_repetition, "_window_sizes", long_only)
    assert sum(_repetition.degenerate(row["response"]) for row in ROWS) == 66 - 12


def test_a_loop_that_held_the_right_answer_is_not_credited() -> None:
    """Row 277 loops "We can rewrite $\\sqrt{53}$ as $\\sqrt{1 \\cdot 53}$" (the gold is
    $\\sqrt{53}$) in counted steps until cut mid-formula: math-verify reads the last
    formula and credits it."""
    row = next(row for row in ROWS if row["id"] == "llama31_math500-277-0")
    verifier = MathVerifier()
    extracted = verifier.extract(row["response"])
    assert extracted.extra.get("degenerate") == 1
    quick = verifier.quick_check(extracted, row["ground_truth"])
    assert quick is not None and quick.score == 0.0
