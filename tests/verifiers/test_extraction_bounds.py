"""guards: extraction is bounded on hostile input, and what a bounded scan leaves unread hedges.

Extraction runs in the scoring loop's process, so every scan is budgeted: ``find_boxes``
reads a bounded number of boxes and braces (``_latex.MAX_SCAN_CHARS`` in all), and the
verifiers read a bounded part of the final paragraph. A box command, an "answer" or
``####`` in the part of the final paragraph not read makes the answer no answer
(``hedged``, ``scan_cut``): a hedge cannot hide behind junk. The time bounds have margin
for a loaded CI machine; the targets on an idle core are tens of milliseconds.
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable
from typing import Any

import pytest

from _support.verifier_rows import (
    CHOICE,
    GSM8K,
    V,
    check_choice_row,
    check_math_and_gsm8k_row,
    table_params,
)
from rewardkit.config import load_config
from rewardkit.verifiers import _latex
from rewardkit.verifiers.base import Context, extract_with
from rewardkit.verifiers.math import MathVerifier
from rewardkit.verifiers.registry import VerifierTable

MATH = MathVerifier()
TABLE = VerifierTable(load_config({}).reward)

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
    # (under 1,024 characters: a longer run of copies to the end is a loop, test_repetition)
    ("4", "\\boxed{4}" * 100, 1.0, "a model repeating its answer: copies are one value"),
    ("4", "\\boxed{" * 100 + "4" + "}" * 100, 1.0, "a deep nest holds one value"),
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
    # the readings of the invented turn, the printed result, the gloss, Unicode math
    "user-turns": "So 3.\nUser: q\n" * (_MB // 15),
    "user-dialogue": "x\nUser: q\nAssistant: a" * (_MB // 24),
    "end-tokens": "<|im_end|>" * (_MB // 10),
    "printouts": "```output\n12\n```\n" * (_MB // 18) + "So it is $12$.",
    "output-lines": "```output\n" + "1\n" * (_MB // 2),
    "glosses": "\\boxed{" + "\\approx 1.5 " * 300 + "}",
    "roots": "Answer: " + "√" * (_MB // 3),
    "displays": "So:\n\\[\n" * (_MB // 8),
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


# --- a unit repeated: no pattern backtracks once per way to split it ----------------------
#
# A regex with two ways to read a piece (``\\text`` read whole, or as ``\\tex`` then a
# letter; a space taken by either of two blank runs) backtracks through 2^n or 3^n
# splits of n pieces when what follows them fails. Such rows hung the event loop, which
# runs the inline phases: each was found by repeating a short unit (the seeded fuzz below
# does the same) and took minutes to hours before the patterns read each piece one way.
REPEATED_UNITS = {
    "text commands before =5": "Let me compute. " + "\\text{a}" * 100 + "=5",
    "right parens": "Let me compute. " + "\\right)" * 400 + " = 5.",
    "quads": "Let me compute. " + ":\\quada b" * 120 + " is 5.",
    "angles": "x = " + "|)\\angle B" * 400 + "=5",
    "fractions": "Let me compute. " + "\\frac{1}{2}" * 40 + " is 5.",
    "units in a span": "$" + "\\text{ cm}" * 400 + "=5",
    "interjections": "\\boxed{" + "Wait, so " * 40,
    "interjections before no": "So it is 7. " + "Hmm, so " * 200 + "no.",
    "interjections before a disavowal": "So \\boxed{7}.\n\n"
    + "Wait " * 40
    + "x. That's not right.",
    # each unclosed opener once scanned 2,000 characters for its closer (55 ms here)
    "unclosed styles": "<style>" * 2857 + " The answer is 5.",
    "unclosed CDATA": "<![CDATA[" * 2222 + " The answer is 5.",
    "unclosed iffalse": "\\iffalse" * 2500 + " The answer is 5.",
}
_BOUND_S = 1.0  # each took minutes; milliseconds now on an idle core


class _TooSlow(Exception):
    pass


def _within_bound(call: Callable[[], object]) -> float:
    """``call()``'s CPU seconds, cut by an alarm (re checks signals) past the bound."""

    def alarm(*_: object) -> None:
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, 10 * _BOUND_S)
    started = time.process_time()
    try:
        call()
    except _TooSlow:
        pass
    except Exception:  # a verifier refusing the row is a bounded answer too
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return time.process_time() - started


_INLINE = {
    source: TABLE.pick(source)
    for source in ("lighteval/MATH", "openai/gsm8k", "mmlu", "searchR1_nq", "json_schema")
}


def _inline_phases(verifier: Any, response: str) -> None:
    verifier.quick_check(verifier.extract(response), "5")


@pytest.mark.parametrize("response", REPEATED_UNITS.values(), ids=REPEATED_UNITS.keys())
def test_a_repeated_unit_is_read_in_bounded_time(response: str) -> None:
    for source, verifier in _INLINE.items():
        spent = _within_bound(lambda v=verifier: _inline_phases(v, response))
        assert spent < _BOUND_S, (source, spent)


# An answer restated in other orders (an outside red team's find): each restatement is
# compared with the final answer by exact reading, whose square roots of 12-digit primes
# were factored by trial division to 10^4 (a millisecond each): 60 restatements of 15 such
# roots took 2.2 s inline, under no timeout.
_BIG_PRIMES = (
    999999999989, 999999999961, 999999999959, 999999999937, 999999999899, 999999999877,
    999999999863, 999999999857, 999999999847, 999999999767, 999999999763, 999999999739,
    999999999707, 999999999673, 999999999611,
)  # fmt: skip


def _restated_roots(times: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    parts = []
    for _ in range(times):
        order = list(_BIG_PRIMES)
        rng.shuffle(order)
        roots = "+".join(f"\\sqrt{{{p}}}" for p in order)
        words = " ".join(rng.choice(_WORDS) for _ in range(12))  # prose, no loop
        parts.append(f"{words.capitalize()}, so the sum is $\\boxed{{{roots}}}$.")
    return "We add the roots. " + " ".join(parts)


_WORDS = (
    "the", "terms", "regroup", "we", "commute", "order", "each", "root", "again", "prime",
    "radicand", "since", "addition", "is", "associative", "value", "unchanged", "check",
    "written", "another", "way", "listing", "numbers", "swapped", "both", "sides",
)  # fmt: skip


@pytest.mark.parametrize("lines", [False, True], ids=["boxes", "answer lines"])
def test_an_answer_restated_in_other_orders_is_read_in_bounded_time(lines: bool) -> None:
    response = _restated_roots(60)
    if lines:  # the same, as answer lines before one box
        response = _restated_roots(32).replace(" so the sum is $\\boxed{", "\nAnswer: ${")
        response = response.replace("}$.", "$")
        response += (
            "\nSo the final answer is $\\boxed{"
            + "+".join(f"\\sqrt{{{p}}}" for p in _BIG_PRIMES)
            + "}$."
        )
    for source in ("lighteval/MATH", "openai/gsm8k"):
        verifier = TABLE.pick(source)
        spent = _within_bound(lambda v=verifier: _inline_phases(v, response))
        assert spent < 0.5, (source, spent)
    extracted = MATH.extract(response)
    assert extracted.extra.get("source") == "boxed"
    assert MATH.quick_check(extracted, "5").score == 0.0  # the sum is no 5: decided inline


_UNITS = (
    "\\text{a}", "\\mathrm{x}", "\\frac{1}{2}", "\\sqrt{2}", "\\boxed{1}", "$1$", "$x$",
    "\\(x\\)", "1 = ", "= 1 ", "is 5 ", "x", "1", " ", ". ", ", ", "(", ")", "{", "}", "\\",
    "$", "=", "the answer is ", "Answer: ", "<answer>", "</answer>", "**", "\n", "\\\\",
    "&", "^{2}", "_1", "1,000", "\\cdot ", "\\left(", "\\right)", "\\%", "-", "#### ",
    "Wait, ", "Hmm, ", "no. ", "not ", "that's ", "wrong ", "\\quad", "\\angle B",
    "\\text{ cm}", "(B) ", "Option C", "I think ", "so ", "or ", "maybe ", "dozen ",
    "</think>", "等等，", "答案", "\\[", "\\]",
)  # fmt: skip
_COMMANDS = (
    "\\text{a}",
    "\\quad",
    "\\angle B",
    "\\right)",
    "\\frac{1}{2}",
    "\\cdot",
    "\\mathrm{m}",
)
# half the ends state a value: what the inline readings try hardest to match
_ENDS = ("=5", " = 5.", " is 5.", " no.", "", ". The answer is 5.", "$", "}", "</answer>")
_STARTS = ("", "Let me compute. ", "The answer is ", "\\boxed{", "<answer>", "$", "x = ")


def _repeated_units(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        unit = "".join(rng.choice(_UNITS) for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.5:  # commands: read as a command or as letters
            unit = rng.choice(_COMMANDS) + unit
        repeats = rng.choice((25, 40, 80, 200))
        end = rng.choice(_ENDS[:4] if rng.random() < 0.5 else _ENDS)
        texts.append(rng.choice(_STARTS) + unit * repeats + end)
    return texts


@pytest.mark.parametrize("seed", range(6))
def test_repeated_units_are_read_in_bounded_time(seed: int) -> None:
    """The attacker that found the rows above, seeded (seeds 2 to 4 hit both patterns as
    they were): 6 x 40 texts through 5 families."""
    for response in _repeated_units(seed, 40):
        for source, verifier in _INLINE.items():
            spent = _within_bound(lambda v=verifier, r=response: _inline_phases(v, r))
            assert spent < _BOUND_S, (source, spent, response[:80])


# A passage (no marked answer) goes to math-verify's extraction, which may parse any of
# its formulas: the answers' structural guards hold for it too (each ran to the worker's
# time limit there: minutes of sympy or of the parser's predictions)
PASSAGE_BOMBS = {
    "nested parentheses": "Let me compute. $" + "(" * 1500 + "1" + ")" * 1500 + "$, that is all.",
    "exponent tower": "Let me compute. $2^{2^{2^{2^{2^{2}}}}}$",
    "huge power": "Let me compute. $\\frac{10^{1000000}}{3}$",
    "nested factorials": "Let me compute. $(5!)!!$",
    # an outside red team's (each 2-10 s in a worker: the parser's cost grows about as the
    # square of a formula's length, so the fallback's 4,000-character cap did not bound it)
    "a chain of <": "Thus $" + " < ".join(str(7 * k) for k in range(1, 560)) + " < x$",
    "a chain of =": "So $" + " = ".join(str(k) for k in range(1, 301)) + "$",
    "a chain of \\geq": "So $" + " \\geq ".join(str(k) for k in range(300, 100, -1)) + "$",
    "a long polynomial": "So $" + "+".join(f"{k + 2}x^{{{k}}}" for k in range(300)) + "$",
    "a long list of pairs": "So $" + ", ".join(f"({k}, {k + 3})" for k in range(350)) + "$",
}


@pytest.mark.parametrize("response", PASSAGE_BOMBS.values(), ids=PASSAGE_BOMBS.keys())
def test_a_passage_with_a_parser_bomb_is_decided_without_the_parser(response: str) -> None:
    extracted = MATH.extract(response)
    # a passage, or its value given last after a sentence ("Let me compute. $(5!)!!$")
    assert extracted.extra.get("source") in ("expression", "bare")
    found: list[Any] = []
    spent = _within_bound(lambda: found.append(MATH.check(extracted, "5")))
    assert spent < _BOUND_S and found, spent
    assert found[0].score == 0.0 and found[0].extra.get("guard"), found[0]


def test_a_passage_of_ordinary_formulas_still_reaches_math_verify() -> None:
    extracted = MATH.extract("First, $(2+3)$ and $((1))$ give $5$")
    assert extracted.extra.get("source") == "expression"
    verdict = MATH.check(extracted, "5")
    assert verdict.score == 1.0 and "guard" not in verdict.extra


# A long run of one blank: where two or three optional blank runs meet, or a search
# starts anywhere inside the run, a pattern is quadratic or cubic in it (the pattern
# alone: 4,000 spaces took 80-120 s in two of them, 2,000 took 67 s in a third; found by
# regexploit's ReDoS finder run over every compiled pattern; a worker also handed math-verify the run, whose normalisation took
# seconds). Inline and worker phases both bounded.
_RUN = " " * 3_500  # under the loop rule's window: a longer run is a loop, decided at once
BLANK_RUNS = {
    "a listed value": "So $a = 376, 375" + _RUN + "x$.",
    "a mark after a group": "\\boxed{(1,2)^\\circ" + _RUN + "x}",
    "a labelled tuple": "\\boxed{(" + _RUN + "x) = (1, 2)}",
    "and between labels": "So a = 376, 375" + _RUN + "x.",
    "a tab run": "The answer is $(1, 2)" + "\t" * 3_500 + "x$",
    # where a thinking markup's "<" may be followed by blanks (an outside red team's find)
    "blanks after <": "<" + " " * 12_000 + " I was thinking. The answer is 5.",
    # runs of other blanks, handed to math-verify (its normalisation's units pattern is
    # quadratic over any run of \s: 4,000 newlines in a box took 7.4 s there)
    "a newline run in a box": "\\boxed{\\sin^2 y + \\cos^2 y +" + "\n" * 3_500 + "1}",
    "spaces and newlines in a box": "\\boxed{\\sin^2 y +" + " \n" * 1_750 + "\\cos^2 y}",
    "carriage returns in a passage": "So the result is $x^2 + 2x +" + "\r" * 3_500 + "1$ in all.",
}


def test_a_run_of_newlines_in_a_box_is_one_blank_to_math_verify(warm_math: None) -> None:
    """The box's value is read as written, once for all the golds of the row."""
    response = "\\boxed{\\sin^2 y + \\cos^2 y +" + "\n" * 3_500 + "1}"
    extracted = MATH.extract(response)
    assert MATH.quick_check(extracted, "2") is None  # math-verify decides it
    spent = _within_bound(lambda: MATH.check(extracted, ["3", "4", "2"]))
    assert spent < _BOUND_S
    assert MATH.check(extracted, ["3", "4", "2"]).score == 1.0
    assert MATH.check(extracted, "3").score == 0.0


@pytest.fixture(scope="module")
def warm_math() -> None:
    from rewardkit.verifiers import _warm

    _warm.warm_up_all()  # math-verify imported: its first use is not what is bounded


@pytest.mark.parametrize("response", BLANK_RUNS.values(), ids=BLANK_RUNS.keys())
def test_a_long_run_of_blanks_is_read_in_bounded_time(response: str, warm_math: None) -> None:
    for source, verifier in _INLINE.items():
        spent = _within_bound(lambda v=verifier: _inline_phases(v, response))
        assert spent < _BOUND_S, (source, spent)
    extracted = MATH.extract(response)
    if MATH.quick_check(extracted, "5") is None:
        spent = _within_bound(lambda: MATH.check(extracted, "5"))
        assert spent < 2 * _BOUND_S, spent


def test_a_long_chain_of_equalities_is_decided_by_its_text(warm_math: None) -> None:
    """latex2sympy flattens a chain's nested ``And`` again at each link: 200 links took
    2.5 s in a worker. Past MAX_RELATIONS the answer is decided by its text."""
    chain = "=".join(f"{j + 1}y" for j in range(200))
    extracted = MATH.extract("\\boxed{" + chain + "}")
    found: list[Any] = []
    spent = _within_bound(lambda: found.append(MATH.check(extracted, "5")))
    assert spent < _BOUND_S and found[0].score == 0.0
    assert found[0].extra.get("guard") == "long chain"
    assert MATH.check(MATH.extract("\\boxed{x = 2 + 3 = 5}"), "5").score == 1.0


@pytest.mark.parametrize("sign", ["<", ">", "\\geq", "\\le", "\\neq"])
def test_a_long_chain_of_any_relation_is_decided_by_its_text(sign: str, warm_math: None) -> None:
    """Any relation costs the parser as ``=`` does: a boxed chain of 120 ``<`` took 0.3-0.5 s."""
    chain = f" {sign} ".join(str(7 * k) for k in range(1, 120))
    found = MATH.check(MATH.extract("So $\\boxed{" + chain + "}$"), "5")
    assert found.score == 0.0 and found.extra.get("guard") == "long chain"
    assert MATH.check(MATH.extract(f"\\boxed{{x {sign} 5}}"), "5").extra.get("guard") is None


_PROSE = " ".join(f"Step {k}: we compute term {k} as {k * k} and record it." for k in range(220))


@pytest.mark.parametrize(
    "tail",
    [
        "\u55ef" * 1985 + "\uff0c\u6362\u4e2a\u65b9\u6cd5\u8bd5\u8bd5\uff0c\u9519\u8bef",
        "oh!" * 651 + " wrong.",
    ],
    ids=["cjk", "ascii"],
)
def test_a_run_of_interjections_before_the_end_is_read_in_bounded_time(tail: str) -> None:
    """Each interjection a disavowal may open with was tried from every start, the run
    given back one at a time: quadratic in a run of two thousand (0.8 s on the event
    loop, an outside red team's find). At most 32 open one now."""
    response = _PROSE + "\n\n" + tail
    for source, verifier in _INLINE.items():
        spent = _within_bound(lambda v=verifier: _inline_phases(v, response))
        assert spent < _BOUND_S / 4, (source, spent)


# A prompt and a last sentence made of doubt words the prompt writes: each doubt word is
# looked up in the prompt's words (Context.question), a bounded number of times
_DOUBT_RUN = "possible or not possible between " * 600


@pytest.mark.parametrize(
    "response",
    [
        f"Steps.\n\nThe count of {_DOUBT_RUN}is 12.",
        f"Steps.\n\nSo the count of {_DOUBT_RUN}is:\n\n12",
        f"Steps.\n\n{_DOUBT_RUN}\n\n12",
    ],
    ids=["stated", "last line", "given last"],
)
def test_doubt_words_the_prompt_writes_are_read_in_bounded_time(response: str) -> None:
    context = Context.of(f"Is it {_DOUBT_RUN}or not?", {})
    found: list[Any] = []
    spent = _within_bound(lambda: found.append(extract_with(MATH, response, context)))
    assert spent < _BOUND_S and found, spent
    assert found[0].extra.get("source") not in ("bare", "stated")  # too long to read inline


def _continued_fraction(depth: int, term: str = "1+") -> str:
    return "\\frac{1}{" + term + ("\\frac{1}{" + term) * (depth - 1) + "1" + "}" * depth


# math-verify's cost doubles with each level of a continued fraction: 0.05 s at depth 8,
# 0.9 s at 13, past a worker's time limit at 20 (an outside red team's finds: two such
# rows held both workers of a pool for their whole timeout). Past MAX_FRACTION_DEPTH an
# answer the inline phases cannot evaluate never reaches it.
DEEP_FRACTIONS = {
    "rational, boxed, depth 25": "Simplifying, we get $\\boxed{" + _continued_fraction(25) + "}$",
    "rational, a passage, depth 20": "Simplifying, we get $" + _continued_fraction(20) + "$",
    "radicals, boxed, depth 16": "So $\\boxed{" + _continued_fraction(16, "\\sqrt{2}+") + "}$",
    "radicals, a passage, depth 12": "So it is $" + _continued_fraction(12, "\\sqrt{2}+") + "$",
    "symbols, boxed, depth 14": "So $\\boxed{" + _continued_fraction(14, "x+") + "}$",
}


@pytest.mark.parametrize("response", DEEP_FRACTIONS.values(), ids=DEEP_FRACTIONS.keys())
@pytest.mark.parametrize("fast_paths", [True, False])
def test_deep_fractions_never_reach_math_verify(response: str, fast_paths: bool) -> None:
    verifier = MathVerifier(fast_paths=fast_paths)
    extracted = verifier.extract(response)
    found: list[Any] = []
    spent = _within_bound(
        lambda: found.append(
            verifier.quick_check(extracted, "\\frac{1}{2}")
            or verifier.check(extracted, "\\frac{1}{2}")
        )
    )
    assert spent < _BOUND_S and found[0].score == 0.0, spent


# What math-verify reads is what the bound applies to: a deep fraction on the way, then a
# plain value it reads (milliseconds), and nested roots (9 deep: 5 ms), are compared as
# before (an outside red team's probes on the first version, which refused them)
_SHALLOW_READS = [
    (
        "We compute $x = " + _continued_fraction(10) + "$. Working from the inside out,"
        " $x = \\frac{89}{144}$.",
        "\\frac{89}{144}",
    ),
    (
        "We compute $$y = " + _continued_fraction(9) + " + \\frac{1}{2}$$ and after"
        " simplification the total number of steps is 42.",
        "42",
    ),
    ("So $\\boxed{" + "\\sqrt{" * 9 + "2" + "}" * 9 + "}$.", "2^{1/512}"),
]


@pytest.mark.parametrize(("response", "gold"), _SHALLOW_READS)
def test_a_deep_fraction_math_verify_does_not_read_costs_no_credit(
    response: str, gold: str
) -> None:
    extracted = MATH.extract(response)
    found: list[Any] = []
    spent = _within_bound(
        lambda: found.append(MATH.quick_check(extracted, gold) or MATH.check(extracted, gold))
    )
    assert spent < _BOUND_S and found[0].score == 1.0, (spent, found)


def test_a_deep_rational_fraction_is_still_evaluated_inline() -> None:
    """A continued fraction of numbers is exact arithmetic: the inline phases decide it
    (depth 20 is 10946/17711, Fibonacci numbers), whatever the depth bound."""
    extracted = MATH.extract("So $\\boxed{" + _continued_fraction(20) + "}$")
    assert MATH.quick_check(extracted, "\\frac{10946}{17711}").score == 1.0
    assert MATH.quick_check(extracted, "\\frac{10946}{17712}").score == 0.0


def test_fraction_depth() -> None:
    from rewardkit.verifiers._latex import fraction_depth

    assert fraction_depth("\\frac{1}{2} + \\frac{3}{4}") == 1
    assert fraction_depth("\\frac{1}{1+\\frac{1}{2}}") == 2
    assert fraction_depth("\\sqrt[3]{\\frac{1}{\\sqrt{2}}}") == 1  # roots cost little
    assert fraction_depth(_continued_fraction(9)) == 9
    assert fraction_depth("}" * 10 + "{" * 10) == 0  # unbalanced braces are no fractions
