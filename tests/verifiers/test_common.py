"""guards: _common.py's visible text: the answer is what a reader sees rendered.

HTML comments and struck-out text (``~~20~~``, ``<del>20</del>``) are removed, and
zero-width and direction marks dropped, before any answer is read (``_common.visible``):
a hidden value neither hedges an answer nor answers. Rows are ``(gold, response,
expected, reason)``; math rows expected 0 are also checked with ``fast_paths=False``.
"""

from __future__ import annotations

import random
import re

import pytest

from _support.verifier_rows import check_choice_row, check_math_and_gsm8k_row, table_params
from rewardkit.verifiers import _common
from rewardkit.verifiers._common import visible

# checked on math and on GSM8K ``auto``
HIDDEN: list[tuple[str, str, float, str]] = [
    ("20", "The answer is 18 <!-- 20 -->", 0.0, "a hidden value"),
    ("18", "The answer is 18 <!-- 20 -->", 1.0, "what a reader sees"),
    ("20", "#### 18 <!-- #### 20 -->", 0.0, "a hidden marker"),
    ("20", "So it is 18 <!-- 20 -->.", 0.0, "a hidden value in a passage"),
    ("18", "The answer is $\\boxed{18}$ <!-- \\boxed{20} -->", 1.0, "a hidden box"),
    ("20", "The answer is $\\boxed{18}$ <!-- \\boxed{20} -->", 0.0, "never the hidden one"),
    ("20", "So it is 18 ~~20~~.", 0.0, "a struck value"),
    ("20", "So it is 18 <del>20</del>.", 0.0, "a deleted value"),
    ("18", "The answer is ~~20~~ 18", 1.0, "struck out, then the answer"),
    ("18", "The answer is <del>20</del> 18", 1.0, "deleted, then the answer"),
    ("20", "The answer is ~~20~~ 18", 0.0, "never the struck value"),
    ("1", "The answer is 1\u200b8", 0.0, "a zero-width space inside 18"),
    ("18", "The answer is 1\u200b8", 1.0, "a reader sees 18"),
    ("20", "The answer is \u200f18\u200f or \u200f20\u200f", 0.0, "RTL marks"),
    ("20", "The answer is 18 <!-- unclosed 20", 0.0, "an unclosed comment hides the rest"),
    ("18", "The answer is 18 <!-- unclosed 20", 1.0, "what a reader sees"),
    ("18", "The answer is 18</s>", 1.0, "'</s>' is a leaked token, no strike"),
    ("18", "<s>The answer is 18</s>", 1.0, "'<s>...</s>' is no strike either"),
]

# hidden in other ways (a red team's probe: each was credited)
HIDDEN += [
    ("18", "The final answer is 19.\n\n%\\boxed{18}", 0.0, "a LaTeX comment line"),
    ("18", "The final answer is 19.\n\n[//]: # ($\\boxed{18}$)", 0.0, "a markdown comment"),
    ("18", "The final answer is 19.\n\n<template>$\\boxed{18}$</template>", 0.0, "a template"),
    ("18", "The final answer is 19.\n\n<![CDATA[ $\\boxed{18}$ ]]>", 0.0, "CDATA"),
    (
        "18",
        'The final answer is 19.\n\n<span style="color:white">$\\boxed{18}$</span>',
        0.0,
        "white text",
    ),
    ("18", "The answer is <s>18</s>.", 0.0, "struck with <s>"),
    ("18", "So 50% of 36 is 18.", 1.0, "a percent sign is no comment"),
]

CHOICE_HIDDEN: list[tuple[str, str, float, str]] = [
    ("B", "Answer: B <!-- Answer: D -->", 1.0, "a hidden answer"),
    ("B", "Answer: ~~D~~ B", 1.0, "struck out, then the letter"),
    ("B", "Answer: <del>D</del> B", 1.0, "deleted, then the letter"),
    ("B", "Answer: \u200fB\u200f or \u200fD\u200f", 0.0, "RTL marks hide no 'or'"),
    ("B", "Answer: ~~B~~ D", 0.0, "never the struck letter"),
    ("B", "Answer: C\n\n[//]: # (Answer: B)", 0.0, "a markdown comment"),
]


@pytest.mark.parametrize(
    ("text", "seen"),
    [
        ("The answer is <del>18\n</del> 19", "The answer is   19"),  # a tag across lines
        ("Answer: B\u0336 C", "Answer:   C"),  # a combining stroke through the letter
        ("so \\sout{18} 19", "so   19"),
        ("19.\n\n<span hidden>$\\boxed{18}$</span>", "19.\n\n "),
        ('19 <div style="display:none">\\boxed{18}</div>', "19  "),
        ("$\\phantom{\\boxed{18}}$ 19", "$ $ 19"),
        ("\\iffalse $\\boxed{18}$ \\fi 19", "  19"),
        ("#### \u201318", "#### -18"),  # an en dash before a digit: a minus
        ("$\\boxed{\u20144}$", "$\\boxed{-4}$"),
        ("a hidden gem, display: 18", "a hidden gem, display: 18"),  # words, not markup
        ("<s>The answer is 18</s>", "<s>The answer is 18</s>"),  # tokens, not a strike
        ("The answer is <s>18</s>.", "The answer is  ."),  # a strike inside a sentence
        ("19.\n\n%\\boxed{18}", "19.\n\n "),  # a LaTeX comment line
        ("19.\n  % $\\boxed{18}$\nok", "19.\n \nok"),
        ("19.\n\n[//]: # ($\\boxed{18}$)", "19.\n\n "),  # a markdown comment
        ('19.\n[comment]: <> ("18")', "19.\n "),
        ("19 <template>$\\boxed{18}$</template>", "19  "),  # never shown by a browser
        ("19 <noscript>18</noscript>", "19  "),
        ("19 <![CDATA[ $\\boxed{18}$ ]]>", "19  "),
        ('19 <span style="color:white">\\boxed{18}</span>', "19  "),  # white on white
        ('19 <span style="color: transparent">18</span>', "19  "),
        ('19 <span style="font-size:0">18</span>', "19  "),
        ('19 <span style="opacity: 0">18</span>', "19  "),
        # shown: a percent mid-line, a colour that shows, a small size, a link reference
        ("It is 50% of 36, so 18.", "It is 50% of 36, so 18."),
        (
            '<span style="background-color:white">18</span>',
            '<span style="background-color:white">18</span>',
        ),
        ('<span style="font-size:0.5em">18</span>', '<span style="font-size:0.5em">18</span>'),
        ("[1]: https://example.org/18", "[1]: https://example.org/18"),
    ],
)
def test_struck_hidden_and_dashes_as_rendered(text: str, seen: str) -> None:
    """A red-team probe found each struck or hidden gold credited (and a dash-minus read
    as no sign, both ways): what a reader does not see is no answer."""
    assert visible(text) == seen


# The unshown elements as branches of one pattern, as they were, in their place among the
# others (a lazy scan of up to 2,000 characters per opener): what the scanner must match
_HIDDEN_BRANCHES = _common._HIDDEN.pattern.split(r"|(?:^|(?<=\n))[ \t]{0,8}%", 1)
_UNSHOWN_AS_ONE_PATTERN = re.compile(
    _HIDDEN_BRANCHES[0]
    + r"|<(?P<unshown>template|noscript|script|style)\b[^<>]{0,200}>.{0,2000}?</(?P=unshown)\s{0,3}>"
    r"|<!\[CDATA\[.{0,2000}?\]\]>"
    r"|\\iffalse\b.{0,2000}?\\fi\b|\\begin\{comment\}.{0,2000}?\\end\{comment\}"
    + r"|(?:^|(?<=\n))[ \t]{0,8}%"
    + _HIDDEN_BRANCHES[1],
    re.DOTALL,
)
_PIECES = (
    "<style>", "</style>", "</style >", "<script>", "</script>", "<template a=1>",
    "</template>", "<noscript>", "</noscript>", "<![CDATA[", "]]>", "\\iffalse", "\\fi",
    "\\finite", "\\begin{comment}", "\\end{comment}", "<del>", "</del>", "<span hidden>",
    "</span>", "<style hidden>", "<script \\iffalse>", "\\sout{", "}", "\n", "\n% c", "<s>",
    "</s>", "x", " ", "18", "<", ">", "[//]: # (", ")", "a" * 700, "b" * 1500,
)  # fmt: skip


@pytest.mark.parametrize("seed", range(3))
def test_unshown_elements_are_removed_as_one_pattern_would(seed: int) -> None:
    """Elements a browser never shows (``<script>``, CDATA, ``\\iffalse``...) are found by
    a scan that reads each closer once: where they meet each other, the other hidden
    parts, or a closer past 2,000 characters, the text left is the one pattern's."""
    rng = random.Random(seed)
    for _ in range(1500):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 30)))
        expected = _UNSHOWN_AS_ONE_PATTERN.sub(" ", text)
        assert _common._without_hidden(text) == expected, text  # few openers: by the pattern
        assert _common._merged_hidden(text) == expected, text  # many: by the scan


def test_visible_text() -> None:
    assert visible("a<!-- b -->c<!-- d") == "a c "
    assert visible("1\u200b8 \u202e") == "18 "
    assert visible("~~20~~ 18 ~~ x") == "  18 ~~ x"
    assert visible("<think>x</think> 18</s>") == "<think>x</think> 18</s>"


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"hidden": HIDDEN})
)
def test_hidden_text(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_and_gsm8k_row(gold, response, expected, reason)


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"choice": CHOICE_HIDDEN})
)
def test_choice_hidden_text(gold: str, response: str, expected: float, reason: str) -> None:
    check_choice_row(gold, response, expected, reason)
