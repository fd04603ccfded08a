"""guards: extraction is bounded on hostile input, and what a bounded scan leaves unread hedges.

Extraction runs in the scoring loop's process, so every scan is budgeted: ``find_boxes``
reads a bounded number of boxes and braces (``_latex.MAX_SCAN_CHARS`` in all), and the
verifiers read a bounded part of the final paragraph. A box command, an "answer" or
``####`` in the part of the final paragraph not read makes the answer no answer
(``hedged``, ``scan_cut``): a hedge cannot hide behind junk. The time bounds have margin
for a loaded CI machine; the targets on an idle core are tens of milliseconds.
"""

from __future__ import annotations

import time

import pytest

from _support.verifier_rows import (
    CHOICE,
    GSM8K,
    V,
    check_choice_row,
    check_math_and_gsm8k_row,
    table_params,
)
from rewardkit.verifiers import _latex
from rewardkit.verifiers.math import MathVerifier

MATH = MathVerifier()

_JUNK_BOX = "\\boxed{" + "{" * 4100  # an unclosed box: a brace scan of MAX_BOX_CHARS
_PAD = "and so on. " * 500  # 5.5 KB of prose, no blank line
# a hedge hidden behind junk; checked on math and on GSM8K ``auto``
JUNK: list[tuple[str, str, float, str]] = [
    ("4", "\\boxed{3} " + _JUNK_BOX * 17 + " \\boxed{4}", 0.0, "past the brace budget"),
    ("4", "\\boxed{3} " + "\\boxed\\x " * 4100 + "\\boxed{4}", 0.0, "past MAX_BOX_COMMANDS"),
    ("4", "\\boxed{3} " + "\\boxed{4} " * 70, 0.0, "past MAX_BOXES"),
    (
        "4",
        "\\boxed{3} " + ("\\boxed{" + "4" * 4000 + "}") * 17 + "\\boxed{4}",
        0.0,
        "long boxes spend the budget",
    ),
    ("4", "The answer is 3. " + _PAD + " \\boxed{4}", 0.0, "past the 4 KB look-back"),
    ("4", "The answer is 3. " + _PAD * 4 + " \\boxed{4}", 0.0, "past 16 KB: scan_cut"),
    # not hedging
    (
        "4",
        "\\boxed{3}\n\n" + _JUNK_BOX * 17 + "\n\nSo \\boxed{4}",
        1.0,
        "junk in earlier paragraphs",
    ),
    ("4", "\\boxed{4}" * 400, 1.0, "a model repeating its answer: copies are one value"),
    ("4", "\\boxed{" * 400 + "4" + "}" * 400, 1.0, "a deep nest holds one value"),
    ("4", "\\boxedx\\fboxy" * 70_000 + "\\boxed{4}", 1.0, "no box commands before it"),
    ("4", "x " * 20_000 + "So \\boxed{4}.", 1.0, "a long final paragraph with no other answer"),
    (
        "4",
        "To find the answer, we count.\n" + "and so on.\n" * 2000 + "So \\boxed{4}.",
        1.0,
        "20 KB of steps, one a line, naming 'the answer' in prose: no answer unread",
    ),
    ("4", "The answer is 3.\n" + "and so on.\n" * 2000 + "So \\boxed{4}.", 0.0, "an answer unread"),
]

CHOICE_JUNK: list[tuple[str, str, float, str]] = [
    ("B", "Answer: A. " + _PAD + " Answer: B", 0.0, "past the 4 KB look-back"),
    ("B", "Answer: A. " + _PAD * 4 + " Answer: B", 0.0, "past the 16 KB tail"),
    ("B", "\\boxed{A} " + _JUNK_BOX * 17 + " \\boxed{B}", 0.0, "a box behind junk"),
    ("B", "x " * 20_000 + "Answer: B", 1.0, "a long final paragraph with no other answer"),
    ("B", "To find the answer:\n" + "and so on.\n" * 2000 + "Answer: B", 1.0, "prose 'answer'"),
    ("B", "Answer: A.\n\n" + _PAD * 4 + "\n\nAnswer: B", 1.0, "an earlier paragraph is a step"),
]


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), table_params({"junk": JUNK}))
def test_a_hedge_behind_junk(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_and_gsm8k_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"choice-junk": CHOICE_JUNK})
)
def test_a_choice_hedge_behind_junk(gold: str, response: str, expected: float, reason: str) -> None:
    check_choice_row(gold, response, expected, reason)


def test_an_answer_whose_section_was_not_read_says_so() -> None:
    extracted = MATH.extract("\\boxed{3} " + _JUNK_BOX * 17 + " \\boxed{4}")
    assert extracted.answer is None
    assert extracted.extra["scan_cut"] is True and extracted.extra["hedged"] is True


_MB = 1_000_000
_BRACES = "{" * 4000
BOMBS = {
    "brace-bomb": ("\\boxed{" + _BRACES) * 200 + "\\boxed{4}",
    "brace-bomb-unclosed": ("\\boxed{" + _BRACES) * 250,
    "fbox-bomb": ("\\fbox{" + _BRACES) * 200 + "\\boxed{4}",
    "mixed-bomb": ("\\boxed{" + _BRACES + "\\fbox{" + _BRACES) * 125,
    "escaped-braces": ("\\boxed{" + "\\{" * 2000) * 250,
    "closing-late": ("\\boxed{" + "{" * 3000 + "}" * 999) * 250,
    "near-enclosing": ("\\boxed{" + "{" * 250) * 16 + "\\boxed{4}" + "a" * (_MB - 4200),
    "no-number": "{" * _MB,
}


@pytest.mark.parametrize("response", BOMBS.values(), ids=BOMBS.keys())
def test_a_megabyte_of_braces_extracts_fast(response: str) -> None:
    """Brace scanning is budgeted: the first bomb takes about 12 ms in ``find_boxes`` on
    an idle core (30 ms is the target)."""
    for extract in (_latex.find_boxes, MATH.extract, GSM8K.extract, CHOICE.extract):
        extract(response)  # warm caches and regex compilation
        started = time.process_time()
        extract(response)
        assert time.process_time() - started < 0.25, extract


def test_the_box_after_a_bomb_is_still_the_answer() -> None:
    """A bomb in an earlier paragraph is a step; in the final paragraph it hides boxes the
    bounded scan cannot read, which may offer other values: no answer there."""
    earlier = BOMBS["brace-bomb"].replace("\\boxed{4}", "\n\nSo \\boxed{4}")
    assert MATH.check(MATH.extract(earlier), "4").score == 1.0
    assert GSM8K.check(GSM8K.extract(earlier), "4").score == 1.0
    same = BOMBS["brace-bomb"]
    assert MATH.extract(same).extra["scan_cut"] is True
    assert GSM8K.check(GSM8K.extract(same), "4").extra["hedged"] is True


def test_a_hedge_before_a_short_bomb_is_still_seen() -> None:
    """The budget covers 16 boxes of MAX_BOX_CHARS: a box a few junk boxes back, in the
    same paragraph, is still read as a second value offered."""
    response = "\\boxed{3} " + ("\\boxed{" + "{" * 500) * 8 + " or \\boxed{4}"
    assert MATH.check(MATH.extract(response), "4").score == 0.0


# a megabyte of each trigger of the readers: answer words, boxes, tags, offers, hidden
# text, ranges, glued values
HOSTILE = {
    "answer-words": "The answer is " * (_MB // 14),
    "answer-paren": "The answer is \\(" * (_MB // 16),
    "answer-colons": "Answer: " * (_MB // 8),
    "headings": "**Final Answer**\n" * (_MB // 17),
    "hashes": "#### " * (_MB // 5),
    "boxes": "\\boxed{3}" * 100_000,
    "nested-boxes": "\\boxed{" * (_MB // 7) + "4" + "}" * (_MB // 7),
    "open-tags": "<answer>" * (_MB // 8),
    "letters": "The answer is A, " * (_MB // 17),
    "prose-then-box": "a " * (_MB // 2 - 20) + "\\boxed{4}",
    "junk-boxes": "\\boxed{3} " + _JUNK_BOX * (_MB // len(_JUNK_BOX)) + "\\boxed{4}",
    "one-paragraph-answers": "Answer: 3. " * (_MB // 11) + "\\boxed{4}",
    "offers": "The answer is 18, or maybe 20 " * (_MB // 30),
    "predicates": "$\\boxed{18}$ 20 would also work " * (_MB // 32),
    "box-copies": "\\boxed{4} " * (_MB // 10),
    "dollars": "$" * _MB,
    "comments": "<!--" * (_MB // 4),
    "closed-comments": "<!-- 2 -->" * (_MB // 10) + " \\boxed{4}",
    "strikes": "~~2~~ " * (_MB // 6),
    "bold-lines": "**18**\n\n" * (_MB // 8),
    "bare-boxes": "$\\boxed{18}$\n\n" * (_MB // 14),
    "hash-lines": "#### 18\n" * (_MB // 8),
    "or-words": "18 oder 20 vs " * (_MB // 14),
    "zero-width": "1\u200b" * (_MB // 2),
    "ranges": "It is between 1 and 2 to 3~" * (_MB // 27),
    "derivation": "<answer>\n" + "$N = 2$\n" * (_MB // 8) + "</answer>",
    "glued": "Answer: " + "15$\\pi$ " * (_MB // 9),
}


@pytest.mark.parametrize("response", HOSTILE.values(), ids=HOSTILE.keys())
def test_extraction_of_a_megabyte_is_bounded(response: str) -> None:
    """Well under 100 ms each on an idle core."""
    for verifier in (MATH, GSM8K, CHOICE):
        verifier.extract(response)  # warm
        started = time.process_time()
        verifier.extract(response)
        assert time.process_time() - started < 1.0, type(verifier).__name__


@pytest.mark.parametrize(
    "response",
    [
        "The answer is 18 or " * 50_000,
        "not " * 250_000 + "18",
        "<answer>" + "5 or 6 " * 100_000 + "</answer>",
        "Answer: 5 " + "or " * 100_000,
        "\\boxed{5\\text{" + " or" * 100_000 + "}}",
        "Answer: $5$ " + "/ $6$ " * 50_000,
        "**Final Answer**\n" + "5\n" * 100_000,
    ],
    ids=["or-chain", "nots", "tag", "line-ors", "box-text", "spans", "heading-lines"],
)
def test_qualifier_reading_is_bounded(response: str) -> None:
    """The new readings scan short windows only: megabytes of their triggers stay fast."""
    started = time.process_time()
    V.quick_check(V.extract(response), "5")
    GSM8K.check(GSM8K.extract(response), "18")
    assert time.process_time() - started < 2.0  # milliseconds of CPU here


def test_the_passage_math_verify_reads_is_short_and_its_check_fast() -> None:
    """A collapsing policy that counts: 28,000 characters of numbers, then "so 27". The
    passage math-verify's extraction reads is the last EXPRESSION_CHARS (its extraction
    grows faster than the text: 270 ms at 16,000 characters on an idle core)."""
    from rewardkit.verifiers._answer import EXPRESSION_CHARS

    MATH.check(MATH.extract("So it is $\\frac{1}{2}$."), "\\frac12")  # math-verify loaded
    response = " ".join(str(i) for i in range(6000)) + " so 27"
    started = time.process_time()
    extracted = MATH.extract(response)
    verdict = MATH.check(extracted, "27")
    assert time.process_time() - started < 1.0
    assert extracted.extra["source"] == "expression"
    assert extracted.answer is not None and len(extracted.answer) <= EXPRESSION_CHARS
    assert extracted.answer.endswith("so 27") and verdict.score == 1.0


def _numbers(separator: str, chars: int = 64_000, grouped: bool = False) -> str:
    """A list of numbers written the way a counting policy writes them, ``chars`` long."""
    items = (f"{i % 1000:03d}" if grouped else str(i) for i in range(1, chars))
    text, length = [], 0
    for item in items:
        if length > chars:
            break
        text.append(item)
        length += len(item) + len(separator)
    return separator.join(text)


# Every number of such a list is where a number pattern may start; one that ran each to
# the list's end (``\d[\d,]*`` then backtracking) cost the square of the list: 1.7 s at
# 16 KB, 53 s at 64 KB of a GSM8K row, inline on the event loop, outside timeout_s
# (_common.NUMBER_START)
NUMBER_LISTS = {
    "commas": _numbers(","),
    "thousands": "N = " + _numbers(",", grouped=True),
    "comma-spaces": _numbers(", "),
    "dots": _numbers("."),
    "spaces": _numbers(" "),
    "slashes": _numbers("/"),
    "percents": _numbers("%, "),
}
ENDINGS = ["", " apples", ".", " is the answer.", " would also work.", " ×"]


@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("numbers", NUMBER_LISTS.values(), ids=NUMBER_LISTS.keys())
def test_a_long_list_of_numbers_is_read_in_linear_time(numbers: str, ending: str) -> None:
    """64 KB of numbers (under the inline size limit): tens of milliseconds each."""
    response = "Let me count them all. " + numbers + ending
    for verifier, gold in ((V, "18"), (GSM8K, "18"), (CHOICE, "B")):
        started = time.process_time()
        verifier.quick_check(verifier.extract(response), gold)
        assert time.process_time() - started < 1.0, type(verifier).__name__
