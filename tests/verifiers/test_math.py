"""guards: math.py's MathVerifier: a regression table of model outputs, extraction order, guards.

Hostile input too; hedging is in test_hedging.py.

Each table row is (gold, response, expected score, path, reason): ``quick`` rows must be
decided in the main process without sympy, ``slow`` rows must be sent to math-verify.
"""

from __future__ import annotations

import pickle
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from _support.verifier_rows import table_params
from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers.base import Extracted, Verifier
from rewardkit.verifiers.math import MathVerifier, _parse_gold, warm_up

V = MathVerifier()

ROWS = [
    # plain boxed answers, the common case
    (
        "18",
        "Janet sells 16 - 3 - 4 = 9 eggs, so she makes 9 * 2 = \\boxed{18} dollars.",
        1.0,
        "quick",
        "a box after a worked calculation",
    ),
    ("18", "So the total is $\\boxed{20}$.", 0.0, "quick", "another number"),
    ("-3", "Solving, $x = \\boxed{-3}$.", 1.0, "quick", "a negative value named x"),
    # fractions and decimals, exactly
    (
        "\\frac12",
        "Simplifying, the probability is $\\boxed{\\frac{2}{4}}$.",
        1.0,
        "quick",
        "an unreduced fraction",
    ),
    (
        "\\frac{1}{2}",
        "The ratio is $\\boxed{0.5}$.",
        1.0,
        "quick",
        "a decimal equal to the fraction",
    ),
    ("\\frac{1}{3}", "The ratio is $\\boxed{0.333}$.", 0.0, "quick", "a short decimal is not 1/3"),
    ("\\frac{3}{4}", "so the answer is $\\boxed{3/4}$", 1.0, "quick", "a slash fraction"),
    ("-\\frac{7}{2}", "Hence $k = \\boxed{-\\dfrac{7}{2}}$.", 1.0, "quick", "a negative \\dfrac"),
    (
        "\\frac{\\sqrt3}{2}",
        "Thus $\\sin 60^\\circ = \\boxed{\\dfrac{\\sqrt{3}}{2}}$.",
        1.0,
        "quick",
        "a radical fraction",
    ),
    # thousands separators, percent, degrees, units, dollars
    ("1000", "There are $\\boxed{1,000}$ ways.", 1.0, "quick", "a thousands comma"),
    ("1000", "There are $\\boxed{1{,}000}$ ways.", 1.0, "quick", "MATH's {,} thousands separator"),
    (
        "10",
        "The discount is $\\boxed{10\\%}$.",
        1.0,
        "quick",
        "a percent sign dropped against a bare gold",
    ),
    ("30", "The angle measures $\\boxed{30^\\circ}$.", 1.0, "quick", "a degree sign"),
    ("30", "The angle measures $\\boxed{30^{\\circ}}$.", 1.0, "quick", "a degree sign in braces"),
    ("5", "The side is $\\boxed{5\\text{ cm}}$.", 1.0, "quick", "a unit in \\text"),
    ("12", "It costs $\\boxed{\\$12}$.", 1.0, "quick", "a dollar sign"),
    ("12", "It costs $\\boxed{\\$13}$.", 0.0, "quick", "another amount in dollars"),
    # x = 3 vs 3, text wrappers, number words
    ("3", "Therefore $\\boxed{x = 3}$.", 1.0, "quick", "a named value is its value"),
    (
        "\\text{Evelyn}",
        "The fastest runner is $\\boxed{\\text{Evelyn}}$.",
        1.0,
        "quick",
        "a word in \\text",
    ),
    ("12", "She has $\\boxed{\\text{twelve}}$ apples.", 1.0, "quick", "a number word"),
    ("21", "The answer is \\boxed{\\text{twenty-one}}.", 1.0, "quick", "a hyphenated number word"),
    # multiple-choice-ish MATH answers (AMC style)
    ("\\text{(C)}", "The answer is $\\boxed{C}$.", 1.0, "quick", "a letter against a gold label"),
    ("C", "The answer is $\\boxed{\\text{(C)}}$.", 1.0, "quick", "a label against a gold letter"),
    ("C", "$\\boxed{\\textbf{(C)}\\ 12}$", 1.0, "quick", "AMC's bold label with its value"),
    ("C", "$\\boxed{\\textbf{(D)}\\ 15}$", 0.0, "quick", "another option"),
    ("12", "$\\boxed{\\textbf{(C)}\\ 12}$", 1.0, "quick", "AMC's label with the gold's value"),
    # intervals, sets, tuples, matrices, expressions: math-verify
    (
        "(1,2]",
        "The solution set is $\\boxed{(1, 2]}$.",
        1.0,
        "quick",
        "the same half-open interval",
    ),
    (
        "[-2,5)",
        "so $x \\in \\boxed{\\left[ -2, 5 \\right)}$",
        1.0,
        "quick",
        "\\left[ ... \\right) sizing",
    ),
    ("(1,2]", "The solution set is $\\boxed{[1, 2]}$.", 0.0, "quick", "another interval"),
    ("\\{1,2\\}", "The roots are $\\boxed{\\{2,1\\}}$.", 1.0, "quick", "a set in another order"),
    ("\\{1,2\\}", "The roots are $\\boxed{\\{1,3\\}}$.", 0.0, "quick", "another set"),
    ("(3,-1)", "The intersection point is $\\boxed{(3,-1)}$.", 1.0, "quick", "the same point"),
    (
        "(3,-1)",
        "The intersection point is $\\boxed{(-1,3)}$.",
        0.0,
        "quick",
        "the point's coordinates swapped",
    ),
    ("x^2+2x+1", "Expanding, $\\boxed{(x+1)^2}$.", 1.0, "quick", "an expanded square"),
    ("2\\sqrt{2}", "so the length is $\\boxed{\\sqrt{8}}$.", 1.0, "quick", "a simplified radical"),
    ("\\pi/3", "The angle is $\\boxed{\\frac{\\pi}{3}}$.", 1.0, "quick", "a slash fraction of pi"),
    (
        "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
        "The vector is $\\boxed{\\begin{pmatrix}1\\\\2\\end{pmatrix}}$.",
        1.0,
        "slow",
        "a column vector: math-verify decides",
    ),
    ("5, 3", "The roots are $\\boxed{3, 5}$.", 1.0, "quick", "a list in another order"),
    (
        "\\frac{\\sqrt{2}}{2}",
        "so $\\cos 45^\\circ = \\boxed{\\sqrt{2}/2}$",
        1.0,
        "quick",
        "a radical over a slash",
    ),
    (
        "3.14159",
        "The area is $\\boxed{\\pi}$.",
        0.0,
        "slow",
        "pi is not its rounding: math-verify decides",
    ),
    (
        "1",
        "Dividing, $\\boxed{\\frac{3}{0}}$.",
        0.0,
        "slow",
        "division by zero: math-verify decides",
    ),
    (
        "9",
        "Hence $\\boxed{9}$.\n\nThe answer is 10.",
        0.0,
        "quick",
        "a later other value: hedged",
    ),  # a later other value: hedged
    (
        "9",
        "Hence $\\boxed{9}$.\n\nThe answer is 9.",
        1.0,
        "quick",
        "the same value restated",
    ),  # the same value restated
    # Minerva, "Answer:", "**Final Answer**" (no box)
    (
        "5",
        "Final Answer: The final answer is $5$. I hope it is correct.",
        1.0,
        "quick",
        "Minerva's answer line",
    ),
    (
        "\\frac{1}{4}",
        "Final Answer: The final answer is $\\frac14$. I hope it is correct.",
        1.0,
        "quick",
        "Minerva's line with \\frac14",
    ),
    ("34", "Adding up, we get 34.\n\nAnswer: 34", 1.0, "quick", "an answer line after the work"),
    ("34", "**Final Answer**\n\n$34$", 1.0, "quick", "a Final Answer heading"),
    ("34", "**Answer:** 35", 0.0, "quick", "another number on a bold answer line"),
    # an answer marker restated on its line: the later one reads the value
    (
        "720",
        "6! ways. </think> <answer>The answer is Answer: 720</answer>",
        1.0,
        "quick",
        "'The answer is Answer: 720'",
    ),
    (
        "720",
        "6! ways. </think> <answer>The answer is Answer: 721</answer>",
        0.0,
        "quick",
        "'The answer is Answer: 721'",
    ),
    (
        "720",
        "6! ways.\n\nAnswer: The final answer is 720.",
        1.0,
        "quick",
        "'Answer: The final answer is'",
    ),
    # no answer at all, a truncated box
    (
        "34",
        "Let me think about this problem step by step. First",
        0.0,
        "quick",
        "no answer: cut off",
    ),
    ("34", "so the answer is \\boxed{3", 0.0, "quick", "a truncated box"),
    # hedging: different boxes earn nothing; the same answer twice is fine
    (
        "5",
        "It is either $\\boxed{5}$ or, if I misread, $\\boxed{7}$.",
        0.0,
        "quick",
        "two boxes offered: hedged",
    ),
    (
        "5",
        "Maybe $\\boxed{7}$? No: recomputing, $\\boxed{5}$.",
        0.0,
        "quick",
        "a box taken back: hedged",
    ),
    (
        "5",
        "So $x=\\boxed{5}$.\n\n**Final Answer**\n\\[\\boxed{5}\\]",
        1.0,
        "quick",
        "the same box restated under a heading",
    ),
    (
        "\\frac12",
        "First $\\boxed{0.5}$, i.e. $\\boxed{\\frac{1}{2}}$.",
        1.0,
        "quick",
        "a decimal and its fraction boxed",
    ),
    # one multi-part answer written as adjacent boxes
    (
        "2, 3",
        "The solutions are $\\boxed{2}$ and $\\boxed{3}$.",
        1.0,
        "quick",
        "adjacent boxes joined by 'and': one answer",
    ),
    (
        "\\{2,3\\}",
        "The solutions are $\\boxed{2}, \\boxed{3}$.",
        1.0,
        "quick",
        "adjacent boxes joined by a comma: a set",
    ),
    (
        "2",
        "The solutions are $\\boxed{2}$ or $\\boxed{3}$.",
        0.0,
        "quick",
        "boxes joined by 'or': never one of them",
    ),
]


@pytest.mark.parametrize(
    ("gold", "response", "expected", "path", "reason"), table_params({"math": ROWS})
)
def test_regression_table(
    gold: str, response: str, expected: float, path: str, reason: str
) -> None:
    extracted = V.extract(response)
    quick = V.quick_check(extracted, gold)
    if path == "quick":
        assert quick is not None, f"expected a main-process decision: {reason}"
        assert quick.score == expected, reason
    else:
        assert quick is None, f"expected the slow path, quick_check gave {quick}: {reason}"
    verdict = V.check(extracted, gold)
    assert verdict.score == expected, reason
    assert verdict.extra["acc"] is (expected == 1.0)


def test_regression_table_is_large_enough() -> None:
    assert len(ROWS) >= 25
    assert {row[3] for row in ROWS} == {"quick", "slow"}


def test_is_a_verifier_and_travels_to_workers() -> None:
    assert isinstance(V, Verifier)
    assert V.key == "math"
    assert pickle.loads(pickle.dumps(V)) == V
    assert hash(V) == hash(MathVerifier())


@pytest.mark.parametrize(
    ("response", "answer", "source"),
    [
        ("so \\boxed{42}.", "42", "boxed"),
        ("so \\fbox{42}.", "42", "boxed"),
        ("so $\\boxed 42$.", "42", "boxed"),
        ("so \\boxed{\\frac{1}{\\sqrt{2}}} done", "\\frac{1}{\\sqrt{2}}", "boxed"),
        ("nested \\boxed{\\boxed{7}}", "7", "boxed"),
        ("set \\boxed{\\{1, 2\\}}", "\\{1, 2\\}", "boxed"),
        (
            "The final answer is $\\frac{1}{2}$. I hope it is correct.",
            "\\frac{1}{2}",
            "answer_line",
        ),
        ("The answer is: 17.", "17", "answer_line"),
        ("**Final Answer:** \\(x = 2\\)", "x = 2", "answer_line"),
        ("I checked my answer carefully", None, None),
        ("", None, None),
    ],
)
def test_extract(response: str, answer: str | None, source: str | None) -> None:
    extracted = V.extract(response)
    assert extracted.answer == answer
    assert extracted.extra["source"] == source


def test_list_ground_truth_accepts_any() -> None:
    extracted = V.extract("\\boxed{\\frac{1}{2}}")
    assert V.check(extracted, ["0.25", "0.5"]).score == 1.0
    assert V.check(extracted, ["0.25", "0.75"]).score == 0.0


@pytest.mark.parametrize(("gold", "expected"), [(72, 1.0), (72.0, 1.0), (0.5, 0.0), ("72", 1.0)])
def test_numeric_ground_truths(gold: object, expected: float) -> None:
    assert V.check(V.extract("\\boxed{72}"), gold).score == expected


def test_full_solution_as_ground_truth_uses_its_last_box() -> None:
    gold = "We have $2 + 3 = 5$, so the answer is $\\boxed{5}$."
    assert V.check(V.extract("\\boxed{5}"), gold).score == 1.0


@pytest.mark.parametrize("gold", [None, "", "   ", [], [None], {"answer": 5}, True, float("nan")])
def test_unusable_ground_truth_is_an_invalid_row(gold: object) -> None:
    """A missing or malformed ground truth raises InvalidSampleError (status ``invalid``)."""
    extracted = V.extract("\\boxed{5}")
    with pytest.raises(InvalidSampleError, match="ground_truth"):
        V.quick_check(extracted, gold)
    with pytest.raises(InvalidSampleError, match="ground_truth"):
        V.check(extracted, gold)


def test_ground_truth_is_parsed_once_per_prompt() -> None:
    gold = "3 \\pm \\sqrt{2}"  # \\pm is outside the evaluation fast path
    before = _parse_gold.cache_info()
    for rollout in (
        "\\boxed{3 \\pm 2\\sqrt{2}}",
        "\\boxed{3 \\pm \\sqrt{3}}",
        "\\boxed{1 \\pm \\sqrt{2}}",
    ):
        V.check(V.extract(rollout), gold)
    after = _parse_gold.cache_info()
    assert after.misses - before.misses <= 1
    assert after.hits - before.hits >= 2


def test_warm_up_loads_math_verify() -> None:
    warm_up()
    assert "math_verify" in sys.modules and "sympy" in sys.modules


def test_check_runs_off_the_main_thread() -> None:
    """math-verify's signal timeouts are off: they would raise ValueError in a thread."""
    extracted = V.extract("$\\boxed{\\{3, 1\\}}$")
    with ThreadPoolExecutor(1) as pool:
        verdict = pool.submit(V.check, extracted, "\\{1,3\\}").result(timeout=30)
    assert verdict.score == 1.0


# --- guards and hostile input -------------------------------------------------------

TOWER = "9^{9^{9^{9}}}"


@pytest.mark.parametrize(
    ("answer", "gold", "expected", "reason"),
    [
        (TOWER, "1", 0.0, "exponent tower"),
        (TOWER, TOWER, 1.0, "exponent tower"),
        ("9^9^9^9", "1", 0.0, "exponent tower"),
        ("10^{10^{10}}", "1", 0.0, "exponent tower"),
        ("2^{99999999}", "1", 0.0, "huge number"),
        ("123456789!", "1", 0.0, "huge number"),
        ("27!!", "27", 0.0, "huge number"),  # sympy reads (27!)!: it never returned
        ("(5!)!", "120", 0.0, "huge number"),
        ("(" * 60 + "1" + ")" * 60, "1", 0.0, "deep nesting"),
        ("(" * 5000 + "1" + ")" * 5000, "1", 0.0, "too long"),
        ("1+" * 600 + "1", "601", 0.0, "too long"),
        ("1", TOWER, 0.0, "exponent tower"),
    ],
    ids=[
        "tower",
        "tower-equal",
        "bare-tower",
        "numeric-tower",
        "exponent",
        "factorial",
        "nested-factorial",
        "nested-factorial-brackets",
        "nesting",
        "nesting-5000",
        "long",
        "gold-tower",
    ],
)
def test_guards_decide_by_string_only(answer: str, gold: str, expected: float, reason: str) -> None:
    extracted = Extracted(answer, {"source": "boxed"})
    started = time.process_time()
    quick = V.quick_check(extracted, gold)
    verdict = V.check(extracted, gold)
    assert time.process_time() - started < 1.0
    assert quick is not None and quick == verdict
    assert verdict.score == expected
    assert verdict.extra["guard"] == reason


@pytest.mark.parametrize("answer", ["e^{x^2}", "x^{2}+y^{2}", "2^{10}", "(((1)))"])
def test_guards_leave_ordinary_answers_alone(answer: str) -> None:
    verdict = V.check(Extracted(answer, {}), answer)
    assert verdict.score == 1.0
    assert "guard" not in verdict.extra


MEGABYTE = 1_000_000

HOSTILE_RESPONSES = {
    "prose": "a" * MEGABYTE,
    "open-boxes": "\\boxed{" * (MEGABYTE // 7),
    "nested-boxes": "\\boxed{" * 70_000 + "5" + "}" * 70_000,
    "closed-boxes": "\\boxed{1}, then more words. " * (MEGABYTE // 30) + "\\boxed{2}",
    "braces": "{" * MEGABYTE,
    "backslashes": "\\" * MEGABYTE,
    "answer-words": "answer: " * (MEGABYTE // 8),
    "brackets-5000": "\\boxed{" + "(" * 5000 + "1" + ")" * 5000 + "}",
    "box-junk": "\\boxedx\\fboxy" * (MEGABYTE // 13) + "\\boxed{5}",
}


@pytest.mark.parametrize("name", list(HOSTILE_RESPONSES))
def test_hostile_responses_are_bounded(name: str) -> None:
    response = HOSTILE_RESPONSES[name]
    started = time.process_time()
    extracted = V.extract(response)
    quick = V.quick_check(extracted, "5")
    elapsed = time.process_time() - started
    assert elapsed < 1.0, f"{name}: {elapsed:.2f}s"
    verdict = quick or V.check(extracted, "5")  # "answer" (a word) is left to math-verify
    assert verdict.score == (1.0 if name == "box-junk" else 0.0)
    if name in ("nested-boxes", "braces", "backslashes", "answer-words", "open-boxes"):
        assert extracted.extra.get("degenerate") == 1  # each ends in a loop


def test_many_identical_boxes_are_one_answer_but_a_late_change_is_hedging() -> None:
    assert V.extract(HOSTILE_RESPONSES["closed-boxes"]).extra.get("hedged") is True
    assert V.extract("\\boxed{1}" * 100).answer == "1"  # 900 characters: no loop yet
    assert V.extract("\\boxed{1}" * 1000).extra.get("degenerate") == 1  # a loop to the end
    assert V.extract("\\boxed{1}" * 1000 + "\\boxed{2}").answer == "1, 2"  # one run: a tuple


@pytest.mark.parametrize(
    "response",
    [
        "\x00\\boxed{5}\x00",
        "\\boxed{5\x00}",
        "\ud800 so \\boxed{5}",
        "\\boxed{\ud800}",
        "\ud800",
        "\x00",
    ],
)
def test_nul_bytes_and_lone_surrogates(response: str) -> None:
    extracted = V.extract(response)
    verdict = V.check(extracted, "5")
    assert verdict.score in (0.0, 1.0)
    if response.endswith("\\boxed{5}") or response.startswith("\x00\\boxed{5}"):
        assert verdict.score == 1.0


def test_surrogate_in_ground_truth_is_just_a_wrong_answer() -> None:
    assert V.check(V.extract("\\boxed{5}"), "\ud800").score == 0.0


# --- extraction order, the final part --------------------------------------------------

STRICT = MathVerifier(extraction="strict")

# (response, answer in the default mode, source, answer in strict mode, why)
EXTRACTION_ROWS = [
    ("so \\boxed{5}.\n\nThe answer is 5.", "5", "boxed", "5", "a box beats a later line"),
    ("so \\boxed{5}.\n\nThe answer is 6.", None, "boxed", None, "a later other value: hedging"),
    ("<answer>5</answer>", "5", "answer_tag", "5", "R1-zero tags"),
    ("<think>maybe 4</think>\n<answer> $x = 5$ </answer>", "x = 5", "answer_tag", "x = 5", "$"),
    ("<answer>\\boxed{7}</answer>", "7", "boxed", "7", "a box inside tags is a box"),
    ("Answer: 1.</think>", "1", "answer_line", None, "a leaked </think> and a period"),
    ("The answer is $\\frac{1}{2}$ cups.", "\\frac{1}{2}", "answer_line", None, "prose after $"),
    ("The answer is 12 apples.", "12", "answer_line", None, "a unit word after a number"),
    ("The final answer is 7<|im_end|>", "7", "answer_line", None, "a chat-template token"),
    ("Answer: $3$, $4$ and $5$", "3, 4, 5", "answer_line", None, "several $ groups: one list"),
    (
        "The answer is 4.\n\nLet me verify the answer: we have 2 + 2 = 4 as required.",
        "4",
        "answer_line",
        None,
        "a later 'answer:' followed by a sentence is not an answer",
    ),
    ("Answer: Evelyn", "Evelyn", "answer_line", None, "a one-word answer is not prose"),
    (
        "Final Answer: The final answer is $\\$ 35.15$. I hope it is correct.",
        "\\$ 35.15",
        "answer_line",
        None,
        "an escaped dollar inside $...$ does not close it",
    ),
    ("Hence the area is $12$.", "12", "stated", None, "a last sentence stating its value"),
    (
        "Hence the area is about $12$.",
        "Hence the area is about $12$.",
        "expression",
        None,
        "fallback",
    ),
    (
        "<think>So \\boxed{3}</think>\nDone thinking.",
        None,
        None,
        None,
        "only the conclusion answers",
    ),
    ("<think>\\boxed{3}</think>\n\\boxed{4}", "4", "boxed", "4", "the summary's box wins"),
    ("\\boxed{}", None, None, None, "an empty box is no answer"),
    ("\\boxed{ }\\boxed{\\phantom{2}}\\boxed{\\quad}", None, None, None, "blank boxes"),
    ("Put it in \\boxed{}. So \\boxed{9}", "9", "boxed", "9", "the prompt's empty box echoed"),
    ("No math at all here.", None, None, None, "prose only: nothing for math-verify to find"),
]


@pytest.mark.parametrize(
    ("response", "answer", "source", "strict", "why"),
    EXTRACTION_ROWS,
    ids=[f"{i}-{row[-1]}"[:40] for i, row in enumerate(EXTRACTION_ROWS)],
)
def test_extraction_order(
    response: str, answer: str | None, source: str | None, strict: str | None, why: str
) -> None:
    extracted = V.extract(response)
    assert (extracted.answer, extracted.extra["source"]) == (answer, source), why
    assert STRICT.extract(response).answer == strict, why


@pytest.mark.parametrize(
    ("gold", "response", "expected"),
    [
        ("The roots are $\\boxed{2}$ and $\\boxed{3}$.", "\\boxed{2, 3}", 1.0),
        ("The roots are $\\boxed{2}$ and $\\boxed{3}$.", "\\boxed{3}", 0.0),
        ("The roots are $\\boxed{2}$ and $\\boxed{3}$.", "\\boxed{3}, \\boxed{2}", 1.0),
        ("So $\\boxed{5}$, that is $\\boxed{5}$.", "\\boxed{5}", 1.0),
        ("\\boxed{}\\boxed{7}", "\\boxed{7}", 1.0),
    ],
)
def test_a_ground_truth_with_several_boxes_is_one_multi_part_answer(
    gold: str, response: str, expected: float
) -> None:
    assert V.check(V.extract(response), gold).score == expected


def test_the_fallback_defers_to_math_verify_in_a_worker() -> None:
    extracted = V.extract("After simplification, 40 + 2 gives 42 apples in total.")
    assert extracted.extra["source"] == "expression"
    assert V.quick_check(extracted, "42") is None  # no main-process decision on a passage
    verdict = V.check(extracted, "42")
    assert (verdict.score, verdict.extra["pred"]) == (1.0, "42")
    assert V.check(extracted, "40").score == 0.0


def test_strict_mode_key_and_validation() -> None:
    assert STRICT.key == "math:strict"
    assert V.key == "math"
    assert pickle.loads(pickle.dumps(STRICT)) == STRICT
    with pytest.raises(ValueError, match="'default' or 'strict'"):
        MathVerifier(extraction="loose")  # type: ignore[arg-type]


def test_a_4mb_response_is_bounded() -> None:
    response = "Answer: the value is unclear. " * 140_000 + "$" * 100_000
    started = time.process_time()
    for verifier in (V, STRICT):
        verifier.extract(response)
    assert time.process_time() - started < 1.0


def test_a_long_fallback_passage_is_read_by_math_verify_not_guarded() -> None:
    """A passage is longer than an answer may be: no length guard may decide it."""
    response = "We keep adding the terms one by one and checking. " * 60 + "In total, 42 it is."
    extracted = V.extract(response)
    assert extracted.extra["source"] == "expression" and len(extracted.answer or "") > 1000
    verdict = V.check(extracted, "42")
    assert (verdict.score, verdict.extra["pred"]) == (1.0, "42")
    assert "guard" not in verdict.extra


# A final passage that is a number and a math span, nothing else: an answer tag's value
# with its tag gone (the real-output corpus's prose slice: ei_G8 iter_5:194, :304, :310)
GLUED = [
    ("Thus the side is longer.</think>  8 $\\sqrt{2}$ ", "8\\sqrt{2}", 1.0),
    ("It is 37/6 feet.</think>  6$\\frac{1}{6}$ ", "6\\frac{1}{6}\\text{ feet}", 1.0),
    ("It is 37/6 feet.</think>  6 $\\frac {1} {6} $ ", "6\\frac{1}{6}\\text{ feet}", 1.0),
    ("</think> 2 $\\frac{1}{2}$ ", "\\frac{5}{2}", 1.0),  # a mixed number, as the gold's
    ("</think> 2 $\\frac{1}{2}$ ", "1", 0.0),  # never the product 2 x 1/2
    ("</think> 8 $\\sqrt{2}$ ", "\\sqrt{2}", 0.0),  # never the span alone
]


@pytest.mark.parametrize(("response", "gold", "expected"), GLUED)
def test_a_number_and_a_span_alone_are_one_value(response: str, gold: str, expected: float) -> None:
    extracted = V.extract(response)
    quick = V.quick_check(extracted, gold)
    assert (quick if quick is not None else V.check(extracted, gold)).score == expected
