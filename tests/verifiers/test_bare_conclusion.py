"""guards: a conclusion that is one value and nothing else is that answer, read and compared inline as a tag's value is.

``</think> 666`` states what ``<answer> 666 </answer>`` states. The rows of
``_support/equivalence_rows.py`` (public equivalence tests and fast-path traps, written
elsewhere) are rewritten into such conclusions: each gets the verdict its boxed form
gets, and the inline phases never decide one wrongly. Near-misses (a second value, a
relation, words, another line, a decimal point for a thousands comma) stay passages for
math-verify's extraction, or get the verdict their value deserves. A value's leading
decimal point (``$.4$``) is kept in every answer form read this way.
"""

from __future__ import annotations

import pytest

from _support.equivalence_rows import MATH_VERIFY_MISSES, ROWS
from rewardkit.verifiers.base import Extracted
from rewardkit.verifiers.math import MathVerifier

V = MathVerifier()


def _conclusions(prediction: str) -> list[str]:
    """The prediction as a whole conclusion: in a math span, and bare with a full stop."""
    return [f"Working it out.\n</think> ${prediction}$", f"So:\n</think>\n{prediction}.\n"]


@pytest.mark.parametrize(("gold", "prediction", "expected", "reason"), ROWS)
def test_a_bare_conclusion_gets_its_boxed_verdict(gold, prediction, expected, reason):
    boxed = V.check(Extracted(prediction, {"source": "boxed"}), gold).score
    for response in _conclusions(prediction):
        extracted = V.extract(response)
        if extracted.extra.get("source") != "bare":
            continue  # a passage for math-verify's extraction, as before
        quick = V.quick_check(extracted, gold)
        if (gold, prediction) not in MATH_VERIFY_MISSES:
            assert quick is None or quick.score == float(expected), reason
        assert V.check(extracted, gold).score == boxed, reason


def test_most_table_rows_read_as_a_bare_value():
    read = sum(
        V.extract(response).extra.get("source") == "bare"
        for _, prediction, _, _ in ROWS
        for response in _conclusions(prediction)
    )
    assert read >= len(ROWS)  # the span form of nearly every row, the plain form of numbers


@pytest.mark.parametrize(
    ("conclusion", "gold", "source", "score"),
    [
        ("1,000", "1000", "bare", 1.0),  # a thousands comma
        ("1.000", "1000", "bare", 0.0),  # a decimal point: one, not a thousand
        ("1,2", "12", "expression", 0.0),  # no thousands group: math-verify's
        ("$1,2$", "12", "bare", 0.0),  # a list of two values, never 12
        ("\u22125", "-5", "bare", 1.0),  # a Unicode minus is a minus
        ("-5", "5", "bare", 0.0),
        ("$x=2$", "2", "expression", 1.0),  # a relation: a passage, as before
        ("$$\\text{Perimeter} =80 \\text{ cm}.$$", "80", "expression", 1.0),
        ("$2x$", "2", "bare", 0.0),
        ("$(1,2)$", "[1,2]", "bare", 0.0),  # open against closed
        ("$(1,2]$", "(1,2]", "bare", 1.0),
        ("$[1,2)$", "[1,2]", "bare", 0.0),
        ("3 or 4", "3", "expression", 0.0),  # two values offered
        ("$3$ $4$", "3", "bare", 0.0),  # two spans: a list, as an answer line reads it
        ("$3$ $4$", "4", "bare", 0.0),  # (math-verify's extraction reads the last alone)
        ("3 \\quad 4", "3, 4", "bare", 1.0),
        ("3\n4", "3", "expression", 0.0),  # two lines
        ("12 apples", "12", "bare", 1.0),  # a unit word
        ("12 or 13 apples", "12", "expression", 0.0),  # two values offered
        ("5 million", "5", "expression", None),  # a word that changes the value
        ("3 times", "3", "expression", None),  # (math-verify's extraction reads 5 and 3)
        ("0.333", "\\frac13", "bare", 0.0),  # a rounded decimal is no third
        ("1/3", "\\frac{1}{3}", "bare", 1.0),
        ("12.", "12", "bare", 1.0),
        ("$\\frac{1}{2}$.", "0.5", "bare", 1.0),
        ("\\(2s\\)", "2s", "bare", 1.0),
        ("$$7$$", "7", "bare", 1.0),
        ("$\\frac{11}{968}$", "\\dfrac{1}{88}", "bare", 1.0),  # the same value, unreduced
        ("$\\frac{11}{969}$", "\\dfrac{1}{88}", "bare", 0.0),
        ("$A,B,C,D$", "\\text{A,B,C,D}", "bare", 1.0),
        ("$A,B,D$", "\\text{A,B,C,D}", "bare", 0.0),
    ],
)
def test_near_misses(conclusion, gold, source, score):
    extracted = V.extract("Some steps, 3 + 4 = 7.\n</think> " + conclusion)
    assert extracted.extra.get("source") == source
    if score is None:
        return  # left to math-verify's extraction, whatever it reads
    quick = V.quick_check(extracted, gold)
    assert quick is None or quick.score == score
    assert V.check(extracted, gold).score == score


@pytest.mark.parametrize(
    "response",
    [
        "</think> $.4$",
        "</think> <answer>$.4$</answer>",
        "The answer is $.4$.",
        "Final Answer: $.4$",
    ],
)
def test_a_leading_decimal_point_is_kept_in_every_answer_form(response):
    """``$.4$`` is 0.4 wherever it answers: never 4 (a full stop is trimmed, a decimal
    point is not)."""
    extracted = V.extract(response)
    assert extracted.answer == ".4"
    assert V.check(extracted, "4").score == 0.0
    assert V.check(extracted, "0.4").score == 1.0


def test_a_response_that_is_only_a_value_is_that_answer():
    extracted = V.extract("  42  ")
    assert (extracted.answer, extracted.extra["source"]) == ("42", "bare")
    assert V.quick_check(extracted, "42").score == 1.0


_VALUES = ["12", "$12$", "\\(12\\)", "-2.5", "$\\frac{3}{4}$"]
_HOSTILE_TAILS = [
    " or 13",
    ", 13",
    " 13",
    " or more",
    " million",
    "!",
    "^2",
    "%",
    " if n is odd",
    " minus 1",
    " and 13",
    " squared",
    " (or 13)",
    " in base 8",
    " degrees below zero",
    " = 13",
    "\n13",
]


@pytest.mark.parametrize("value", _VALUES)
@pytest.mark.parametrize("tail", _HOSTILE_TAILS)
def test_a_value_with_a_hostile_tail_is_no_bare_conclusion(value, tail):
    extracted = V.extract(f"Steps.\n</think> {value}{tail}")
    if tail in ("^2", ", 13", " 13") and extracted.extra.get("source") == "bare":
        # a formula, or values side by side (a list), read whole: never the value alone
        assert extracted.answer != value and V.check(extracted, value.strip("$")).score == 0.0
        return
    assert extracted.extra.get("source") != "bare"


# A conclusion with no word in it is a formula, a ratio or a list of labels, read whole as
# a tag's content is (the prose slice of benchmarks/real_slices.py: real conclusions after
# "</think>" that math-verify's extraction misread, each scored 0 before)
WORDLESS = [
    ("1:2", "1 : 2", 1.0),  # math-verify's extraction misreads a ratio
    ("1 :2", "1 : 2", 1.0),
    ("2:3", "1 : 2", 0.0),
    ("A, B, C, D", "\\text{A,B,C,D}", 1.0),  # a multi-select answer: letters as a set
    ("A, B", "\\text{A,B,C,D}", 0.0),
    ("A, B, C, D", "B", 0.0),  # every option listed is no answer of one
    ("sqrt(480)", "4\\sqrt{30}", 1.0),
    ("sqrt(119)", "\\sqrt{119}", 1.0),
    ("sqrt(118)", "\\sqrt{119}", 0.0),
    ("4\\(\\sqrt{30}\\)", "4\\sqrt{30}", 1.0),  # a number glued to a span
    ("4\\(\\sqrt{31}\\)", "4\\sqrt{30}", 0.0),
    ("2^{10}", "1024", 1.0),
]


@pytest.mark.parametrize(("conclusion", "gold", "score"), WORDLESS)
def test_a_conclusion_with_no_word_is_read_whole(conclusion, gold, score):
    extracted = V.extract(f"Steps.</think>  {conclusion}  ")
    assert extracted.extra.get("source") == "bare"
    verdict = V.quick_check(extracted, gold) or V.check(extracted, gold)
    assert verdict.score == score


@pytest.mark.parametrize("conclusion", ["1,2", "A and B", "x = 5", "12!", "3 \\cup 4"])
def test_words_relations_and_other_commands_are_no_formula(conclusion):
    assert V.extract(f"Steps.</think>  {conclusion}  ").extra.get("source") != "bare"


@pytest.mark.parametrize(
    "conclusion", ["12 13", "12, 13", "$12$ $13$", "12 \\quad 13", "12~13", "12 \\, 13"]
)
def test_values_side_by_side_are_a_list_never_the_last_one(conclusion):
    """Two values offered side by side as the conclusion (an outside reader's hedge):
    math-verify's extraction reads the last alone and credits it for 13."""
    extracted = V.extract(f"Steps.</think>  {conclusion}  ")
    assert (extracted.answer, extracted.extra.get("source")) == ("12, 13", "bare")
    assert V.quick_check(extracted, "13").score == 0.0
    assert V.quick_check(extracted, "12, 13").score == 1.0


@pytest.mark.parametrize(
    ("conclusion", "gold"),
    [("200 000", "200000"), ("1,200", "1200"), ("1,000.99", "1000.99")],
)
def test_digits_grouped_by_thousands_stay_one_number(conclusion, gold):
    extracted = V.extract(f"Steps.</think>  {conclusion}  ")
    verdict = V.quick_check(extracted, gold) or V.check(extracted, gold)
    assert verdict.score == 1.0


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("The probability is\n$$\\frac{3}{4}.$$", "\\frac{3}{4}", 1.0),
        ("So\n\\[\n\\sqrt{2}.\n\\]", "\\sqrt{2}", 1.0),
        ("Thus we obtain\n\\[\n\\frac{3}{4}\\,.\n\\]", "\\frac{3}{4}", 1.0),
        ("So\n\\[\n12.\n\\]", "12", 1.0),
        ("The probability is\n$$\\frac{3}{4}.$$", "\\frac{1}{4}", 0.0),
        ("So\n\\[\n0.5.\n\\]", "\\frac{1}{2}", 1.0),  # the decimal's point stays
        ("So\n\\[\n0.5.\n\\]", "5", 0.0),
        ("$$\\text{Perimeter} =80 \\text{ cm}.$$", "80", 1.0),  # a relation: as before
    ],
)
def test_a_full_stop_inside_display_math_ends_the_sentence(response, gold, expected):
    """A sentence's full stop set inside a display formula is no part of the value
    (an outside red team's finding: math-verify reads no value from ``\\frac{3}{4}.``)."""
    extracted = V.extract(response)
    verdict = V.quick_check(extracted, gold) or V.check(extracted, gold)
    assert verdict.score == expected


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        (
            "The smallest integer greater than 10 is 11.\n\nSo the minimum is:\n\\[\n11\n\\]",
            "11",
            1.0,
        ),
        ("So the minimum is:\n\\[\n11\n\\]", "10", 0.0),
        ("So the shaded area is:\n$$\n27\\pi\n$$", "27\\pi", 1.0),
        ("So the shaded area is:\n$$\n27\\pi\n$$", "27", 0.0),  # a product, never its 27
        ("So we get:\n\\[\n3, 4\n\\]", "4", 0.0),  # values side by side: a list
        ("Thus, the area is:\n\\[\n25.\n\\]", "25", 1.0),  # the sentence's stop inside it
    ],
)
def test_a_display_formula_on_its_own_lines_is_the_last_line(response, gold, expected):
    """``:\\n\\[\\n11\\n\\]`` ends the passage on the one value 11 (the prose slice's ei
    iter_1:310 shape), read inline as a last line ``\\[ 11 \\]`` would be."""
    extracted = V.extract(response)
    assert extracted.extra.get("source") == "bare"
    verdict = V.quick_check(extracted, gold) or V.check(extracted, gold)
    assert verdict.score == expected
    slow = MathVerifier(fast_paths=False)  # math-verify reads the value read, "25" not "25."
    assert slow.check(slow.extract(response), gold).score == expected


def test_a_latex_value_given_last_is_read_in_math_mode() -> None:
    """A passage whose last line restates its value in bare LaTeX (the MATH-500 dump's
    llama31_math500-472-0 and -318-0): math-verify reads that value in a math span."""
    response = (
        "So, the car would travel 137$\\frac{1}{2}$ miles in $2\\frac{3}{4}$ hours."
        "\n\n137\\frac{1}{2}"
    )
    extracted = V.extract(response)
    assert V.check(extracted, "137\\frac{1}{2}").score == 1.0
    assert V.check(extracted, "137").score == 0.0


# A value given last on a line of its own, or after a finished sentence on its line: the
# passage math-verify reads is that value alone (the closing value), read inline the same
# (the public MATH-500 dumps' prose rewrites: Llama 3.1's "...\n\n\\boxed{126}" as "126")
GIVEN_LAST = [
    # (response, gold, source, score)
    ("Step 7:  The perimeter of the regular hexagon is 6 * 21 = 126 inches.\n\n126",
     "42", "bare", 0.0),
    ("Step 7:  The perimeter of the regular hexagon is 6 * 42 = 252 / 6 = 42 inches.\n\n42",
     "42", "bare", 1.0),
    ("So, the GCF increased by 11 is:\n23", "23", "bare", 1.0),
    # the line before leads elsewhere: a doubt, or another value stated (an outside red
    # team's probes): math-verify reads the passage, as before
    ("Not sure, maybe 0.3 or 0.4.\n\nBest guess: $0.\\overline{3}$", "\\frac{1}{3}", "expression", 0.0),
    ("So the number of license plates is 17,576,001.\n\n$17\\,576\\,000$", "17576000",
     "expression", 0.0),
    ("Excluding the empty set, the number of subsets is 1023.\n\n2^{10}", "1024", "expression", 0.0),
    ("It could be 1:4 or 1:2, I am not certain. So the ratio is:\n1:2", "1:2", "expression", 0.0),
    ("We solve.\n\n-12", "12", "bare", 0.0),  # a minus sign is no markdown bullet
    ("So it is $7$.\n\nWait, that's wrong.\n\n-7", "7", "expression", 0.0),
    ("So it is $7$.\n\nWait, that's wrong.\n\n-7", "-7", "expression", 1.0),
    ("Steps.\n\n- 12", "12", "expression", 1.0),  # a bullet's dash
    ("Now $\\frac{2^{-1}}{2^1} = \\frac{1}{4}$.   $\\frac{1}{4}$  ", "\\frac14", "bare", 1.0),
    ("Steps.\n</think> 12\n13", "13", "expression", 1.0),  # a list of lines: as before
    ("Steps.\n</think> 12!", "13", "expression", 0.0),  # all it says: math-verify reads it
]  # fmt: skip


@pytest.mark.parametrize(("response", "gold", "source", "score"), GIVEN_LAST)
def test_a_value_given_last_is_read_inline(response, gold, source, score):
    extracted = V.extract(response)
    assert extracted.extra.get("source") == source
    quick = V.quick_check(extracted, gold)
    assert (quick or V.check(extracted, gold)).score == score


# A number with a subscript is a base or an index, never the number; base ten is the
# number as written (math-verify reads "18_{10}" as 18): an outside red team's probes
@pytest.mark.parametrize(
    ("response", "gold", "score"),
    [
        ("So the sum in base ten is $18_{10}$.", "18", 1.0),
        ("So the sum in base ten is $18_{10}$.", "17", 0.0),
        ("\\boxed{18_{10}}", "18", 1.0),
        ("\\boxed{18_8}", "18", 0.0),  # base eight: 16
        ("So the sum is $18_{8}$.", "18", 0.0),
        ("So the sum is $18_{100}$.", "18", 0.0),
        # spelled out: math-verify reads "_{\text{ten}}" as a symbol and gives 0; the
        # comparison drops a base-ten subscript first, decided inline either way
        ("Thus, the largest number is $15_{\\text{ten}}$.", "15", 1.0),
        ("Thus, the largest number is $15_{\\text{ten}}$.", "16", 0.0),
        ("\\boxed{15_{\\mathrm{ten}}}", "15", 1.0),
        ("\\boxed{10_{10}}", "10", 1.0),
    ],
)
def test_a_base_ten_subscript_is_the_number(response, gold, score):
    extracted = V.extract(response)
    assert (V.quick_check(extracted, gold) or V.check(extracted, gold)).score == score


@pytest.mark.parametrize(
    ("response", "gold"),
    [("Thus, the largest number is $15_{\\text{ten}}$.", "15"), ("\\boxed{18_{10}}", "18")],
)
def test_a_base_ten_subscript_is_decided_inline(response, gold):
    assert V.quick_check(V.extract(response), gold) is not None
