"""Multiple choice (MMLU, GPQA, ARC, CommonsenseQA, ...): the chosen letter, A to J.

The letter is taken from the end of the response, strongest evidence first:

1. the last ``answer is (C)`` / ``Answer: C`` / ``**Answer:** C`` / ``\\boxed{C}``;
2. else a last line that is only a letter (``C``, ``(C)``, ``C.``);
3. else the last ``**C**`` or ``(C)`` anywhere.

Everything is decided in the main process; there is no slow path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers._common import gold_strings, last_match, verdict
from rewardkit.verifiers.base import Extracted, Verdict

__all__ = ["ChoiceVerifier"]

_LETTER = r"[\(\[]?(?P<letter>[A-J])[\)\]]?(?![A-Za-z0-9])"
_STATED = re.compile(
    r"(?i:answer|option|choice)(?:[ \t]{0,2}\*\*)?[ \t]{0,3}(?i:is)?[ \t]{0,3}:?[ \t]{0,3}"
    r"(?:\*\*)?[ \t]{0,3}\$?(?:\\boxed\{|\\text\{|\\textbf\{)?[ \t]{0,2}" + _LETTER
)
_BOXED = re.compile(r"\\boxed\{[ \t]{0,2}(?:\\text(?:bf)?\{)?[ \t]{0,2}" + _LETTER)
_BOLD = re.compile(r"\*\*[\(\[]?(?P<letter>[A-J])[\)\]]?[.:]?\*\*")
_PARENTHESISED = re.compile(r"\((?P<letter>[A-J])\)")
_LONE_LINE = re.compile(r"[\(\[]?(?P<letter>[A-J])[\)\]]?\.?")
_GOLD = re.compile(r"[\(\[]?(?P<letter>[A-Ja-j])(?:[\)\].:\s]|$)")


@dataclass(frozen=True, slots=True)
class ChoiceVerifier:
    """Score 1.0 when the chosen letter is the ground truth's, else 0.0.

    The ground truth is a letter (``C``, ``(C)``, ``c``), an option text that starts
    with its letter (``C) 42``), or a list of acceptable letters.
    """

    @property
    def key(self) -> str:
        return "choice"

    def extract(self, response: str) -> Extracted:
        """The chosen letter; bounded: every search starts from the end."""
        stated = _last_of(response, (_STATED, _BOXED))
        if stated is not None:
            return Extracted(stated.group("letter"), {"pattern": "stated"})
        last_line = response.rstrip()[-16:].rpartition("\n")[2].strip(" \t*")
        if lone := _LONE_LINE.fullmatch(last_line):
            return Extracted(lone.group("letter"), {"pattern": "line"})
        marked = _last_of(response, (_BOLD, _PARENTHESISED))
        if marked is not None:
            return Extracted(marked.group("letter"), {"pattern": "marked"})
        return Extracted(None, {"pattern": None})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Always decides: the letters are compared."""
        golds = {_gold_letter(text) for text in gold_strings(ground_truth, "choice")}
        return verdict(extracted.answer in golds, extracted.answer)

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Same as :meth:`quick_check`; multiple choice never needs a worker."""
        return self.quick_check(extracted, ground_truth)


def _last_of(text: str, patterns: tuple[re.Pattern[str], ...]) -> re.Match[str] | None:
    found = [m for m in (last_match(p, text) for p in patterns) if m is not None]
    return max(found, key=lambda m: m.end(), default=None)


def _gold_letter(text: str) -> str:
    match = _GOLD.match(text)
    if match is None:
        shown = text if len(text) <= 60 else text[:60] + "…"
        raise InvalidSampleError(f"choice: ground_truth {shown!r} is not a letter A-J")
    return match.group("letter").upper()
