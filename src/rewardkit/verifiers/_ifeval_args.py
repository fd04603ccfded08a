"""The arguments of IFEval's 25 instructions, checked on the scoring loop before any worker.

A ground truth the official checker cannot use as written is bad data, and the row is
``invalid`` here, naming the instruction and the argument: the worker pool reports
anything a check raises as an ``error``, so every refusal is made before the check. The
official code (google-research ``instruction_following_eval/instructions.py``) draws
an argument at random where it is missing or out of range (a missing ``num_words``, a
negative count, no ``relation``, an ``nth_paragraph`` past ``num_paragraphs``): those are
refused too, so that verdicts never depend on a draw. Keywords are read as regular
expressions by the checkers (``re.search(keyword, ...)``), so one that does not compile
is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from rewardkit.errors import InvalidSampleError

__all__ = ["ARGUMENTS", "RELATIONS", "check_arguments"]

RELATIONS = ("less than", "at least")

ARGUMENTS: Mapping[str, tuple[str, ...]] = {
    "keywords:existence": ("keywords",),
    "keywords:frequency": ("keyword", "frequency", "relation"),
    "keywords:forbidden_words": ("forbidden_words",),
    "keywords:letter_frequency": ("letter", "let_frequency", "let_relation"),
    "language:response_language": ("language",),
    "length_constraints:number_sentences": ("num_sentences", "relation"),
    "length_constraints:number_paragraphs": ("num_paragraphs",),
    "length_constraints:number_words": ("num_words", "relation"),
    "length_constraints:nth_paragraph_first_word": (
        "num_paragraphs",
        "nth_paragraph",
        "first_word",
    ),
    "detectable_content:number_placeholders": ("num_placeholders",),
    "detectable_content:postscript": ("postscript_marker",),
    "detectable_format:number_bullet_lists": ("num_bullets",),
    "detectable_format:constrained_response": (),
    "detectable_format:number_highlighted_sections": ("num_highlights",),
    "detectable_format:multiple_sections": ("section_spliter", "num_sections"),
    "detectable_format:json_format": (),
    "detectable_format:title": (),
    "combination:two_responses": (),
    "combination:repeat_prompt": ("prompt_to_repeat",),
    "startend:end_checker": ("end_phrase",),
    "startend:quotation": (),
    "change_case:capital_word_frequency": ("capital_frequency", "capital_relation"),
    "change_case:english_capital": (),
    "change_case:english_lowercase": (),
    "punctuation:no_comma": (),
}
"""Every IFEval instruction id and the arguments it takes (all required)."""


def _count(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "must be a number"
    return (
        "must not be negative (the official checker would draw one at random)"
        if value < 0
        else None
    )


def _number(value: Any) -> str | None:
    return (
        "must be a number"
        if isinstance(value, bool) or not isinstance(value, int | float)
        else None
    )


def _relation(value: Any) -> str | None:
    return None if value in RELATIONS else f"must be one of {list(RELATIONS)}"


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) else "must be a string"


def _nonempty_text(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "must be a non-empty string"


def _letter(value: Any) -> str | None:
    if isinstance(value, str) and len(value) == 1:
        return None
    return "must be one character (the official checker would draw a letter at random)"


def _pattern(value: Any, wrap: str = "{}") -> str | None:
    if not isinstance(value, str) or not value:
        return "must be a non-empty string"
    try:
        re.compile(wrap.format(value), re.IGNORECASE)
    except re.error as exc:
        return f"is no regular expression, as the checker reads it ({exc})"
    return None


def _patterns(wrap: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if not isinstance(value, list) or not value:
            return "must be a non-empty list of strings"
        return next((why for item in value if (why := _pattern(item, wrap))), None)

    return check


_RULES: Mapping[str, Callable[[Any], str | None]] = {
    "keywords": _patterns("{}"),
    "forbidden_words": _patterns(r"\b{}\b"),
    "keyword": lambda value: _pattern(value.strip() if isinstance(value, str) and value else value),
    "frequency": _count,
    "relation": _relation,
    "letter": _letter,
    "let_frequency": _count,
    "let_relation": _relation,
    "language": _nonempty_text,
    "num_sentences": _count,
    "num_paragraphs": _count,
    "num_words": _count,
    "nth_paragraph": _count,
    "first_word": _text,
    "num_placeholders": _count,
    # the official checkers put these two into regular expressions as written ("(" raised
    # there), and an empty one matches every response; an empty end phrase ends every one
    "postscript_marker": lambda value: _pattern(
        value.lower() if isinstance(value, str) else value, r"\s*{}.*$"
    ),
    "num_bullets": _count,
    "num_highlights": _count,
    "section_spliter": lambda value: _pattern(value, r"\s?{}\s?\d+\s?"),
    "num_sections": _count,
    "prompt_to_repeat": _nonempty_text,
    "end_phrase": _nonempty_text,
    "capital_frequency": _number,
    "capital_relation": _relation,
}


def check_arguments(position: int, instruction_id: str, arguments: Mapping[str, Any]) -> None:
    """Raise InvalidSampleError, naming the instruction and the argument, for arguments
    the official checker cannot use as given (see the module docstring)."""
    where = f"ifeval: instruction {position} ({instruction_id!r})"
    expected = ARGUMENTS.get(instruction_id)
    if expected is None:
        raise InvalidSampleError(f"{where} is no IFEval instruction id")
    for name in arguments:
        if name not in expected:
            raise InvalidSampleError(
                f"{where}: unknown argument {name!r} (it takes {list(expected) or 'none'})"
            )
    for name in expected:
        if name not in arguments:
            raise InvalidSampleError(
                f"{where}: argument {name!r} is missing (it takes {list(expected)}; the "
                "official checker would draw it at random)"
            )
        why = _RULES[name](arguments[name])
        if why:
            raise InvalidSampleError(f"{where}: argument {name!r} {why}, got {arguments[name]!r}")
    nth, paragraphs = arguments.get("nth_paragraph"), arguments.get("num_paragraphs")
    if nth is not None and not 0 < nth <= paragraphs:
        raise InvalidSampleError(
            f"{where}: argument 'nth_paragraph' must be 1 to num_paragraphs ({paragraphs}), "
            f"got {nth!r} (the official checker would draw one at random)"
        )
