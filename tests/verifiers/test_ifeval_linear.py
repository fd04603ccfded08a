"""guards: _ifeval_linear.py reads placeholders, bullets, a postscript and a title as the
official IFEval patterns do, in time linear in the response.

The official patterns (if-verifiable's copy of google-research's checkers, quoted here
as the specification) are run on random texts built from the characters they react to;
each linear reading must give what the official code derives from them. The checkers
that use the readings are compared with the official classes in ``test_ifeval.py``.
"""

from __future__ import annotations

import random
import re

import pytest

from rewardkit.verifiers import _ifeval_linear

_PIECES = (
    "[", "]", "[x]", "\n", "\n\n", " ", "\t", "\u2003", "\x0b", "\r", "*", "**", "* ",
    "-", " - ", "<<", ">>", "<", ">", "<<a>>", "p.", "p. s.", "P.S.", "p.p.s", "s.", "x",
    "Note:", "note", "ab",
)  # fmt: skip


def _texts(seed: int, count: int = 3000) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 24))) for _ in range(count)]


def _official_title(text: str) -> bool:
    titles = re.findall(r"<<[^\n]+>>", text)
    return any(title.lstrip("<").rstrip(">").strip() for title in titles)


def _official_postscript(marker: str, text: str) -> bool:
    text = text.lower()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + marker.lower() + r".*$"
    return bool(re.findall(pattern, text, flags=re.MULTILINE))


@pytest.mark.parametrize("seed", range(3))
def test_counts_and_title_are_the_official_patterns(seed: int) -> None:
    for text in _texts(seed):
        assert _ifeval_linear.placeholder_count(text) == len(re.findall(r"\[.*?\]", text)), text
        bullets = len(re.findall(r"^\s*\*[^\*].*$", text, flags=re.MULTILINE))
        dashes = len(re.findall(r"^\s*-.*$", text, flags=re.MULTILINE))
        assert _ifeval_linear.bullet_count(text) == bullets + dashes, text
        assert _ifeval_linear.has_title(text) == _official_title(text), text


# markers: the two official ones, words, and patterns (the official code reads it as one)
MARKERS = ("P.S.", "P.P.S", "Note:", "note", "p.s", "^x", "a|b", "(?<=\\s)ab", "x$")


@pytest.mark.parametrize("marker", MARKERS)
def test_postscript_is_the_official_pattern(marker: str) -> None:
    pattern = _ifeval_linear.postscript_pattern(marker)
    assert pattern is not None
    for text in _texts(7, 1500):
        found = re.search(pattern, text.lower(), flags=re.MULTILINE) is not None
        assert found == _official_postscript(marker, text), text


@pytest.mark.parametrize("marker", ["?x", "+x", "*x", "{2}x"])
def test_a_marker_that_opens_with_a_repeat_is_left_to_the_official_pattern(marker: str) -> None:
    """``\\s*?x`` is a lazy blank run, ``?x`` no pattern: dropping ``\\s*`` would change
    what such a marker means."""
    assert _ifeval_linear.postscript_pattern(marker) is None
