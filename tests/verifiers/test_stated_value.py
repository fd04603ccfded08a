"""guards: a last sentence stating its one value ("Miss Maria has $30$ students.") is that answer, and a chain of equal values is its last side.

A passage for math-verify whose last sentence states one value plainly, or an answer
tag holding such a sentence, is read inline: the value math-verify's extraction would
read there too (the rightmost; no "answer" anchor in the text). Doubt, bounds,
negations, conditions, a second stated value, percent signs, value-changing words and
unreadable or unequal chains keep the passage for math-verify. The rows of
``_support/equivalence_rows.py`` (written elsewhere), stated in a sentence, get the
verdict their boxed form gets.
"""

from __future__ import annotations

import pytest

from _support.equivalence_rows import MATH_VERIFY_MISSES, ROWS
from rewardkit.verifiers._answer import chain_value, stated_value
from rewardkit.verifiers.base import Context, Extracted, extract_with
from rewardkit.verifiers.math import MathVerifier

V = MathVerifier()


@pytest.mark.parametrize(("gold", "prediction", "expected", "reason"), ROWS)
def test_a_stated_value_gets_its_boxed_verdict(gold, prediction, expected, reason):
    extracted = V.extract(f"We worked it out.\nSo the result is ${prediction}$.")
    if extracted.extra.get("source") != "stated":
        return  # a passage for math-verify, as before
    quick = V.quick_check(extracted, gold)
    if (gold, prediction) not in MATH_VERIFY_MISSES:
        assert quick is None or quick.score == float(expected), reason
    if "=" not in prediction:  # a chain is read as its last side
        boxed = V.check(Extracted(prediction, {"source": "boxed"}), gold).score
        assert V.check(extracted, gold).score == boxed, reason


@pytest.mark.parametrize(
    ("response", "gold", "source", "score"),
    [
        # a printed result restated (test_printed_result.py), else the sentence's value
        ("```output\n30\n```\nMiss Maria has $30$ students.", "30", "printed", 1.0),
        ("```output\n30\n```\nMiss Maria has $31$ students.", "30", "stated", 0.0),
        ("The product of \\(100\\) and \\(120\\) is \\(12000\\).", "12000", "stated", 1.0),
        ("Therefore, the value of \\(r\\) is \\(3\\).", "3", "stated", 1.0),
        ("So the area is $16\\pi - \\pi = 15\\pi$ square units.", "15\\pi", "stated", 1.0),
        ("18 children / 8 families = 2.25 children per family.", "2.5", "stated", 0.0),
        ("The measure of $\\angle RPS$ is $66^\\circ$.", "27^\\circ", "stated", 0.0),
        ("The probability is 5/11.", "\\dfrac{5}{11}", "stated", 1.0),
        ("It is 1.000 apples.", "1000", "stated", 0.0),  # a decimal point, not a comma
        ("Therefore, the range of the set is 7 - 1 = 6.", "6", "stated", 1.0),
        ("So the total number of handshakes was 190 + 300 = 490.", "490", "stated", 1.0),
        ("There are 7 sides, so the perimeter is $28$ units.", "28", "stated", 1.0),
        ("The first is 5, so the second is 6.", "6", "stated", 1.0),  # premise, conclusion
        # the exact value glossed with its decimal: the exact value
        ("So the side is $\\sqrt{2} \\approx 1.414$.", "\\sqrt{2}", "stated", 1.0),
        ("So the side is $\\sqrt{3} \\approx 1.732$.", "\\sqrt{2}", "stated", 0.0),
        ("So the side is $\\sqrt{2} \\approx 1.7$.", "\\sqrt{2}", "expression", None),
        ("So the side is approximately $1.414$.", "\\sqrt{2}", "expression", None),
        # kept for math-verify's extraction
        ("It is about $30$.", "30", "expression", None),
        ("It is at least 5.", "5", "expression", None),
        ("It is more than 5.", "5", "expression", None),
        ("x is not 5.", "5", "expression", None),
        ("If x is odd, the count is 5.", "5", "expression", None),
        ("The count is 5 or 6.", "5", "expression", None),
        ("The first is 5 and the second is 6.", "6", "expression", None),
        ("The share is 25%.", "25", "expression", None),
        ("So we get 1,234 apples.", "1234", "expression", None),
        ("The count is 5 million.", "5", "expression", None),
        ("The side is $5$ squared.", "5", "expression", None),
        ("The temperature is 5 degrees below zero.", "5", "expression", None),
        ("The number is 101 in binary.", "101", "expression", None),
        ("The number is 12 in base three.", "12", "expression", None),
        ("The value is 5!", "5", "expression", None),  # a factorial, not an exclamation
        ("The value is 5^2.", "5", "expression", None),
        ("x is 5 and y is 6.", "6", "expression", None),
        ("The area is 50 square units, but the perimeter is 30.", "30", "expression", None),
        ("The value is 6, not 5.", "5", "expression", None),
        ("The sum is $2 + 2 = 5$.", "5", "expression", None),  # which side is meant?
        ("The sum is 2 + 2 = 5.", "5", "expression", None),
        ("Number = (85 - 27) + 27 + (73 - 27) = 68 + 27 + 46 = 141", "141", "expression", None),
        ("It was 3 and the total is 1.5 + 2 = 3.5.", "3.5", "expression", None),
        ("The sum: (10 × 86) = 860.", "860", "expression", None),  # a side not read
        ("The value is $x = y$.", "5", "expression", None),
        ("I checked the answer twice. The count is 7.", "7", "expression", None),
        ("So the result is $$7$$.", "7", "expression", None),  # display math
    ],
)
def test_stated_values_and_near_misses(response, gold, source, score):
    extracted = V.extract(response)
    assert extracted.extra.get("source") == source
    if score is not None:
        assert V.quick_check(extracted, gold).score == score


@pytest.mark.parametrize(
    ("content", "gold", "answer", "score"),
    [
        ("The area of the rectangle is $50$.", "50", "50", 1.0),
        ("The length is $2 \\times 5 = 10$. The area is $10 \\times 5 = 50.$", "50", "50", 1.0),
        ("The value of $6 \\div 3 - 2 - 8 + 2 \\cdot 8$ is $10$.", "8", "10", 0.0),
        ("The solution is $r = -9/11$.", "-\\frac{9}{11}", "-9/11", 1.0),
        ("The average number of cookies in a package is 15.", "14", "15", 0.0),
    ],
)
def test_an_answer_tag_stating_its_value(content, gold, answer, score):
    extracted = V.extract(f"Let me think.</think> <answer> {content} </answer>")
    assert extracted.answer == answer and extracted.extra["source"] == "answer_tag"
    assert V.check(extracted, gold).score == score


@pytest.mark.parametrize(
    ("chain", "value"),
    [
        ("1 + 7 + 49 = 57", "57"),
        ("17 \\times 3 = 51", "51"),
        ("4 \\cdot 9 \\cdot 11 = 396", "396"),
        ("\\frac{72}{84}=\\frac{6}{7}", "\\frac{6}{7}"),
        ("r = -9/11", "-9/11"),
        ("x = 2 + 3 = 5", "5"),
        ("2^{10} = 1024", "1024"),
        ("2^{10} = 1025", None),  # same digits, another value: not shown equal
        ("2 + 2 = 5", None),
        ("0.333 = \\frac13", None),  # a rounded decimal is not exactly a third
        ("x = y", None),
        ("s^2 = 100", None),
        ("a = 1, b = 2", None),
        ("x = 1 = 2", None),
        ("1 < 2 = 2", None),
        ("6 : 3 = 2", None),
        ("3 \\approx 3", None),
        ("x = 2x", None),  # x=2 is no 2x
        ("1,000 = 1.000", None),
        ("-5 = \u22125", "\u22125"),  # a Unicode minus is a minus
        ("5 = 5\\text{ cm}", None),
    ],
)
def test_chain_values(chain, value):
    assert chain_value(chain) == value


@pytest.mark.parametrize(
    ("response", "gold", "quick"),
    [
        ("</think> <answer> 52 \\cdot 51 = 2652 </answer>", "2652", 1.0),
        ("</think> <answer> 52 \\cdot 51 = 2652 </answer>", "2651", 0.0),
        ("The answer is 2 * 10^5 = 200,000.", "200000", 1.0),
        ("So \\boxed{r = -9/11}.", "-\\frac{9}{11}", 1.0),
        ("So \\boxed{2 + 2 = 5}.", "5", 0.0),  # shown unequal: a false statement, no answer
        ("So \\boxed{2^{10} = 1025}.", "1025", 0.0),  # (math-verify reads the last side)
        ("So \\boxed{x^2 = 25}.", "25", None),  # a side not read: math-verify decides
        ("So \\boxed{x = 5}.", "x=5", 1.0),  # a named gold: compared as named values
    ],
)
def test_an_answer_that_is_a_chain_is_its_last_side_when_every_side_is_equal(response, gold, quick):
    extracted = V.extract(response)
    decided = V.quick_check(extracted, gold)
    assert (decided.score if decided is not None else None) == quick


# A generator of hostile variants: every head, value form and tail below, combined. A
# sentence with a hostile head or tail is never read as stating its value; one with only
# plain parts always is, as the value written.
_PLAIN_HEADS = ["The area is", "So the total number of apples is", "Thus $x$ is", "It ="]
_HOSTILE_HEADS = [
    "The area is not",
    "If n is odd, the area is",
    "The area is at least",
    "The area is about",
    "Perhaps the area is",
    "The area is more than",
    "The first is 4 and the second is",
    "The area could be",
    "The answer is probably",
    "Either way the area is",
]
_VALUES = ["12", "$12$", "\\(12\\)", "$-\\frac{3}{4}$", "2.5"]
_PLAIN_TAILS = [".", " square units.", " apples in the basket."]
_HOSTILE_TAILS = [
    ", or 13.",
    " or more.",
    " million.",
    "!",
    "^2.",
    "%.",
    " if n is odd.",
    " minus 1.",
    " and 13.",
    " squared.",
    " (or 13).",
    " in base 8.",
    " degrees below zero.",
    ", not 13.",
]


def _sentences(heads, tails):
    for head in heads:
        for value in _VALUES:
            for tail in tails:
                yield f"We computed it step by step.\n{head} {value}{tail}", value


@pytest.mark.parametrize(
    "hostile",
    [
        *_sentences(_HOSTILE_HEADS, _PLAIN_TAILS + _HOSTILE_TAILS),
        *_sentences(_PLAIN_HEADS, _HOSTILE_TAILS),
    ],
    ids=lambda row: row[0].split("\n")[1][:50],
)
def test_a_hostile_head_or_tail_is_never_a_stated_value(hostile):
    sentence, _ = hostile
    assert stated_value(sentence) is None


@pytest.mark.parametrize(
    "plain", list(_sentences(_PLAIN_HEADS, _PLAIN_TAILS)), ids=lambda row: row[0][-40:]
)
def test_a_plain_statement_is_its_value(plain):
    sentence, value = plain
    assert stated_value(sentence) == value.strip("$").removeprefix("\\(").removesuffix("\\)")


# The answer first, then quantities the question wrote (an outside red team's probe; the
# prose slice's ei iter_1:17): math-verify reads the last number, the question's 30
QUESTION_ROWS = [
    # (question, response, gold, expected)
    ("How many prime numbers are between 20 and 30?",
     "There are 2 prime numbers between 20 and 30.", "2", 1.0),
    ("How many prime numbers are between 20 and 30?",
     "There are 2 prime numbers between 20 and 30.", "30", 0.0),
    ("How many prime numbers are between 20 and 30?",
     "There are 3 prime numbers between 20 and 30.", "2", 0.0),
    ("Mary saves 4 dollars each week. How much after 3 weeks?",
     "She will have $12$ after 3 weeks.", "12", 1.0),
    ("How many are between 20 and 30?",
     "There are 2 numbers between 20 and 30, or maybe 3.", "2", 0.0),  # a doubt: as before
    ("Find $r$ if $3(r-7) = 4(2-2r) + 4$.",
     "So, the value of $r$ is $3$.", "3", 1.0),  # a value the question writes stays one
    ("", "There are 2 prime numbers between 20 and 30.", "2", 0.0),  # no question: as before
]  # fmt: skip


@pytest.mark.parametrize(("question", "response", "gold", "expected"), QUESTION_ROWS)
def test_numbers_the_question_wrote_after_the_stated_value(
    question: str, response: str, gold: str, expected: float
) -> None:
    extracted = extract_with(V, response, Context.of(question, {}))
    verdict = V.quick_check(extracted, gold) or V.check(extracted, gold)
    assert verdict.score == expected


# A word of doubt that restates the question ("How many integers greater than 10 and less
# than 30 ...?" answered "the number of integers greater than 10 and less than 30 ... is
# 9"): the question's words, no hedge. Prompts and sentences from the public MATH-500
# dumps (benchmarks/data/math500_dumps: Qwen2.5-Math's and Llama 3.1's outputs); each
# sentence was left to math-verify before, which reads the same last value
PHRASE_ROWS = [
    # (question, response, gold, source, expected)
    ("How many of the following numbers are factors of 34 or multiples of 7?\n\n1, 2, 3, 4, 8, 14, 17, 29, 56, 91",
     "Therefore, the number of given numbers that are factors of 34 or multiples of 7 is \\(6\\).",
     "6", "stated", 1.0),
    ("How many of the following numbers are factors of 34 or multiples of 7?",
     "Therefore, the number of given numbers that are factors of 34 or multiples of 7 is \\(5\\).",
     "6", "stated", 0.0),
    ("How many integers greater than 10 and less than 30 are relatively prime with 28?",
     "Therefore, the number of integers greater than 10 and less than 30 that are relatively "
     "prime with 28 is \\(9\\).", "9", "stated", 1.0),
    ("For how many possible rolls would both girls win?",
     "Thus, the number of possible rolls in which both girls win is \\(20\\).", "20", "stated", 1.0),
    ("What's the largest possible radius for her circle, in meters?",
     "Since 62.83 meters is greater than 60 meters, a radius of 10 meters is not possible. "
     "Therefore, the largest possible integer radius for Daphne's circle is:\n\n\\[ 9 \\]",
     "9", "expression", 1.0),  # a doubt the question does not write: math-verify reads it
    ("What's the largest possible radius for her circle, in meters?",
     "A radius of 10 meters is too long. "
     "Therefore, the largest possible integer radius for Daphne's circle is:\n\n\\[ 9 \\]",
     "9", "bare", 1.0),
    # a second value the prompt writes after the stated one, with no preposition before it;
    # a lone letter after the value (a product): no value stated (an outside red team's)
    ("Two girls each roll a die 21 times. For how many possible rolls out of 36 would both girls win?",
     "Thus, the number of possible rolls in which both girls win is 20 till 21.",
     "20", "expression", 0.0),
    ("Two girls each roll a die 21 times. For how many possible rolls out of 36 would both girls win?",
     "Thus, the number of possible rolls in which both girls win is 20 after 21 rolls.",
     "20", "stated", 1.0),
    ("In how many possible ways can a committee of 3 be chosen from a club of 20 people?",
     "Choose 3 of 20.\n\nThus, the number of possible ways is 1140 k.", "1140", "expression", None),
    # near misses: a doubt the question does not write beside the same word, or after the verb
    ("For how many possible rolls would both girls win?",
     "Thus, the number of rolls is possibly \\(20\\).", "20", "expression", 1.0),
    ("For how many possible rolls would both girls win?",
     "Maybe the number of rolls in which both girls win is \\(20\\).", "20", "expression", 1.0),
    ("How many of the following numbers are factors of 34 or multiples of 7?",
     "So the count is 6 or 7.", "6", "expression", 0.0),  # two values offered: no answer
    ("What's the largest possible radius for her circle, in meters?",
     "Perhaps the largest radius is:\n\n\\[ 9 \\]", "9", "expression", 1.0),
    ("", "Thus, the number of possible rolls in which both girls win is \\(20\\).",
     "20", "expression", 1.0),  # no question: math-verify reads it, as before
]  # fmt: skip


@pytest.mark.parametrize(("question", "response", "gold", "source", "expected"), PHRASE_ROWS)
def test_a_doubt_word_the_question_writes_is_no_hedge(
    question: str, response: str, gold: str, source: str, expected: float | None
) -> None:
    extracted = extract_with(V, response, Context.of(question, {}))
    assert extracted.extra.get("source") == source
    if expected is None:
        return  # left to math-verify's extraction, whatever it reads
    verdict = V.quick_check(extracted, gold) or V.check(extracted, gold)
    assert verdict.score == expected
