"""guards: an answer form read with the statement around it or inside it: a box that is an
operand of a larger expression, a chain of "=" whose ends differ, a relation other than
"=" before the value (any mark that is no value notation: an allow-list), a subscript
after a number. Each gives no credit, where math-verify reads the value alone.

Found by an attack from outside the verifiers (a probe of several thousand written
shapes): math-verify credits ``$-\\boxed{18}$``, ``$\\boxed{18}^2$``, ``\\boxed{19 = 18}``
and ``\\boxed{\\approx 18}`` against 18; so did rewardkit. Rows are ``(gold, response,
expected, reason)`` as in ``test_hedging.py``; a row expected 0 also scores 0 with fast
paths off.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import check_gsm8k_row, check_math_row, table_params
from rewardkit.verifiers import _answer, _latex

OPERAND = [
    ("18", "The answer is $-\\boxed{18}$.", 0.0, "a minus before the box"),
    ("18", "The answer is -$\\boxed{18}$.", 0.0, "a minus before the math span"),
    ("-4", "The answer is $-\\boxed{-4}$.", 0.0, "a minus before a negative box"),
    ("18", "$\\boxed{18}^2$", 0.0, "a power after the box"),
    ("18", "$\\frac{1}{\\boxed{18}}$", 0.0, "the box as a denominator"),
    ("18", "$\\sqrt{\\boxed{18}}$", 0.0, "the box under a root"),
    ("18", "$2\\boxed{18}$", 0.0, "a factor glued before"),
    ("18", "$1\\boxed{18}$", 0.0, "a digit glued before: 118 shown"),
    ("18", "$\\boxed{18}0$", 0.0, "a digit glued after: 180 shown"),
    ("18", "$\\boxed{18} + 1$", 0.0, "a sum in the same math span"),
    ("18", "$2 \\cdot \\boxed{18}$", 0.0, "a product"),
    ("18", "The answer is $\\boxed{18}!$.", 0.0, "a factorial in the math span"),
    ("18", "The answer is $(\\boxed{18})^2$.", 0.0, "in brackets, then a power"),
    ("18", "The answer is $\\boxed{18}\\pi$.", 0.0, "a factor glued after"),
    ("-4", "The answer is $\\boxed{-4}π$.", 0.0, "a Greek letter glued after"),
    ("18", "The answer is $\\log \\boxed{18}$.", 0.0, "a function applied to it"),
    ("30", "So $\\sin(\\boxed{30})$.", 0.0, "a function, with brackets"),
    ("18", "So the answer is \\boxed{18}! Great.", 1.0, "an exclamation in prose"),
    ("18", "So the answer is (\\boxed{18}).", 1.0, "brackets in prose"),
    ("18", "$\\therefore \\boxed{18}$", 1.0, "a 'therefore' sign"),
    ("\\frac{2}{3}", "So $x = -\\boxed{\\frac{2}{3}}$.", 0.0, "a minus after the equals sign"),
    # what stays an answer
    ("18", "The answer is $\\boxed{18}$.", 1.0, "a plain box"),
    ("18", "- $\\boxed{18}$", 1.0, "a markdown bullet, not a minus"),
    ("18", "* The answer: \\boxed{18}", 1.0, "a markdown bullet"),
    ("18", "**Final answer:** $\\boxed{18}$", 1.0, "bold markers before"),
    ("18", "So $x = \\boxed{18}$.", 1.0, "a name set to the box"),
    ("45^\\circ", "$\\boxed{45}^\\circ$", 1.0, "degrees after the box"),
    ("18", "\\[\\boxed{18}\\]", 1.0, "display math"),
    ("18", "The answer is\\boxed{18}", 1.0, "a word glued before: text, not a product"),
    ("18", "$\\mathbf{\\boxed{18}}$", 1.0, "a bold box"),
    ("18", "\\boxed{18} - that is the answer", 1.0, "a dash in text after the box"),
]

STATEMENT = [
    ("18", "So $\\boxed{19 = 18}$.", 0.0, "a false equation ending in the gold"),
    ("18", "So $\\boxed{20 - 1 = 18}$.", 0.0, "a false computation ending in the gold"),
    ("18", "So $\\boxed{x = 19 = 18}$.", 0.0, "a name, then a false equation"),
    ("18", "<answer>19 = 18</answer>", 0.0, "in an answer tag"),
    ("18", "So $\\boxed{9 + 9 = 18}$.", 1.0, "a true computation"),
    (
        "\\frac{1}{4}",
        "So the answer is $\\boxed{\\frac{2^2 \\cdot 2^{-3}}{2^3 \\cdot 2^{-2}} = \\frac{1}{22}"
        " = \\frac{1}{4}}$.",
        1.0,
        "a slip on the way between two true ends (a real output's)",
    ),
    ("18", "The answer is $\\boxed{\\approx 18}$.", 0.0, "an approximation"),
    ("18", "$\\boxed{x \\approx 18}$", 0.0, "a name, then an approximation"),
    ("18", "$\\boxed{n \\not= 18}$", 0.0, "a negated equals sign"),
    ("18", "$\\boxed{x \\to 18}$", 0.0, "a limit point, not a value"),
    ("18", "$\\boxed{\\sim 18}$", 0.0, "of the order of"),
    ("18", "$\\boxed{18\\ldots}$", 0.0, "a value trailing off"),
    ("3.14", "$\\boxed{3.14 \\approx 3.1}$", 1.0, "the value first, then its rounding"),
    ("x \\approx 18", "$\\boxed{x \\approx 18}$", 1.0, "a gold that is itself approximate"),
]

# Relations no rule lists: what opens the answer must be value notation or a relation a
# rule reads (an allow-list), so the next relation symbol is refused too. math-verify
# credits each of the refused rows below against 18.
UNKNOWN_MARK = [
    ("18", "The answer is $\\boxed{x \\ll 18}$.", 0.0, "much less than"),
    ("18", "The answer is $\\boxed{\\gg 18}$.", 0.0, "much greater than"),
    ("18", "The answer is $\\boxed{\\doteq 18}$.", 0.0, "approaches the limit"),
    ("18", "Final Answer: $\\lesssim 18$", 0.0, "at most about"),
    ("18", "Final Answer: $n \\succ 18$", 0.0, "succeeds"),
    ("18", "<answer>$\\preceq 18$</answer>", 0.0, "precedes or equals"),
    ("18", "The answer is $\\boxed{x \\searrow 18}$.", 0.0, "decreases to"),
    ("18", "The answer is $\\boxed{\\uparrow 18}$.", 0.0, "an arrow"),
    ("18", "The answer is $\\boxed{\\lessapprox 18}$.", 0.0, "one no list named"),
    ("18", "The answer is $\\boxed{≪ 18}$.", 0.0, "much less than, as a symbol"),
    ("18", "Final Answer: $≲ 18$", 0.0, "at most about, as a symbol"),
    ("18", "The answer is $\\boxed{⪅ 18}$.", 0.0, "a symbol no list named"),
    # value notation first stays a value
    ("18", "The answer is $\\boxed{\\mathbf{18}}$.", 1.0, "a font"),
    ("18", "The answer is $\\boxed{\\displaystyle 18}$.", 1.0, "a size"),
    ("18", "The answer is $\\boxed{\\text{18}}$.", 1.0, "text"),
    ("\\frac{1}{2}", "The answer is $\\boxed{\\dfrac{1}{2}}$.", 1.0, "a function"),
    ("\\infty", "The answer is $\\boxed{\\infty}$.", 1.0, "a constant"),
    ("x \\ll 18", "The answer is $\\boxed{x \\ll 18}$.", 1.0, "a gold that says the same"),
]

# A number with a subscript: a base or an index, never the number
SUBSCRIPT = [
    ("18", "The answer is $\\boxed{18_8}$.", 0.0, "18 in base 8 is 16"),
    ("18", "Final Answer: $18_{(9)}$", 0.0, "a base in brackets"),
    ("18", "<answer>$18₂$</answer>", 0.0, "a subscript digit"),
    ("-4", "The answer is $\\boxed{-4_8}$.", 0.0, "a negative one"),
    ("22_8", "The answer is $\\boxed{22_8}$.", 1.0, "a gold in that base"),
]

GSM8K = [
    ("18", "The answer is $-\\boxed{18}$.", 0.0, "a minus before the box"),
    ("18", "So the total is $\\boxed{18}^2$.", 0.0, "a power after the box"),
    ("18", "So the total is $\\boxed{18}$.", 1.0, "a plain box"),
]


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"),
    table_params(
        {
            "operand": OPERAND,
            "statement": STATEMENT,
            "unknown mark": UNKNOWN_MARK,
            "subscript": SUBSCRIPT,
        }
    ),
)
def test_math_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_row(gold, response, expected, reason)


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), table_params({"gsm8k": GSM8K}))
def test_gsm8k_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_gsm8k_row(gold, response, expected, reason)


def test_a_box_in_an_expression_says_why() -> None:
    text = "The answer is $-\\boxed{18}$."
    assert _latex.box_operand(text, _latex.find_boxes(text)[0])
    assert _answer.find_answer(text).extra == {"source": "boxed", "hedged": True, "operand": True}


@pytest.mark.parametrize(
    ("chain", "false"),
    [("19 = 18", True), ("20 - 1 = 18", True), ("9 + 9 = 18", False), ("x^2 = 4", False)],
)
def test_a_chain_is_false_when_its_ends_are_shown_unequal(chain: str, false: bool) -> None:
    assert _answer.false_chain(chain) is false


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("The length is \\boxed{6} digits.\n\nAnswer: 7 = 6", 0.0),  # a false line after it
        ("The length is \\boxed{6} digits.\n\nAnswer: \\approx 6", 0.0),
        ("The length is \\boxed{6} digits.\n\nAnswer: 6", 1.0),
        ("The length is \\boxed{6} digits.\n\nAnswer: 2 \\cdot 3 = 6", 1.0),
        # an answer tag after the box, holding a named false chain (a passage, not a value)
        ("So $=\\boxed{6}$ <answer>x = 7 = 6</answer>", 0.0),
        ("So $=\\boxed{6}$ <answer>x = 10 - 4 = 6</answer>", 1.0),
        ("So $=\\boxed{6}$ <answer>x = 6</answer>", 1.0),
    ],
)
def test_a_later_answer_in_a_statement_does_not_support_the_box(
    response: str, expected: float
) -> None:
    check_math_row("6", response, expected, "a later answer line after the box")
