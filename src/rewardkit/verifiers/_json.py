"""JSON helpers shared by the structured verifiers (``tool_call``, ``json_schema``).

* :func:`json_equal`: two JSON values are equal as JSON values: key order ignored,
  ``5`` equals ``5.0``, ``true`` never equals ``1``, ``"5"`` never equals ``5``.
* :func:`loads`: ``json.loads`` that never raises (a bad, too deep or too big text is None).
* :func:`conclusion`: the text after the last ``</think>``, as the other families read it.
* :func:`pointer`: a value at an RFC 6901 JSON pointer.

Everything is iterative or bounded: a hostile document (deep nesting, megabytes of
digits) costs a bounded, linear amount of work and never a RecursionError.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from rewardkit.verifiers._final import THINK_OPEN, own_turn, thinking_split

__all__ = ["MISSING", "conclusion", "json_equal", "loads", "pointer"]

MISSING = object()
"""What :func:`pointer` returns for a path the document does not have."""


def conclusion(text: str) -> str:
    """The text that answers: after the last ``</think>``, or the whole text when it has
    none; a thinking opened and never closed (a response cut in its reasoning) has
    answered nothing after its ``<think>``, which opens the text or a line (one inside a
    string, ``{"q": "what is <think>?"}``, opens nothing). An empty ``<think></think>``
    closes too (no format mention here: written after a call in the thinking, it made
    the call the answer). A turn written for someone else after an end of message
    (``<|im_end|>``, ``<|im_start|>user``: :func:`~rewardkit.verifiers._final.own_turn`;
    not a "User:" line, which a document may quote) is cut first. A turn that is one
    JSON value as a whole is its own answer: a ``</think>`` there sits inside one of its
    strings (``{"close_tag": "</think>"}``, ``"<reasoning>...</reasoning>"``, a document
    about chat templates) and closes nothing."""
    turn = own_turn(text, labels=False, earlier_turns=True)  # a call, then its made-up result
    if turn.lstrip()[:1] in ("{", "[") and loads(turn.strip())[0]:
        return turn
    thinking, after = thinking_split(turn, rendered=False, mentions=False)
    opened = None if thinking else _THINK_OPENS.search(after)
    return after if opened is None else after[: opened.start()]


_THINK_OPENS = re.compile(r"(?m)^[ \t]*" + re.escape(THINK_OPEN))


def loads(text: str) -> tuple[bool, Any]:
    """``(True, value)`` for a JSON text, ``(False, None)`` for anything else: invalid
    JSON, a number over Python's digit limit, nesting too deep for the parser. ``NaN`` and
    ``Infinity`` (not JSON) are refused too, and so are a number past the float range
    (``1e400`` would read as infinity, equal to any other such number) and an object
    with a key twice (``{"city": "Rome", "city": "Paris"}``: which one a reader takes is
    undefined, and the last one winning let a call name two functions)."""
    try:
        return True, _DECODER.decode(text)
    except (ValueError, RecursionError):
        return False, None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is past the float range")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("an object holds a key twice")
    return value


_DECODER = json.JSONDecoder(  # one, not one per call
    parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=_unique_keys
)


def json_equal(left: Any, right: Any) -> bool:
    """Whether two parsed JSON values are the same value (iterative: any depth)."""
    stack = [(left, right)]
    while stack:
        a, b = stack.pop()
        if isinstance(a, bool) or isinstance(b, bool):
            if not (isinstance(a, bool) and isinstance(b, bool) and a is b):
                return False
        elif isinstance(a, int | float) or isinstance(b, int | float):
            if not (_number(a) and _number(b) and _same_number(a, b)):
                return False
        elif isinstance(a, str) or isinstance(b, str):
            if not (isinstance(a, str) and isinstance(b, str) and a == b):
                return False
        elif a is None or b is None:
            if a is not b:
                return False
        elif isinstance(a, Mapping) and isinstance(b, Mapping):
            if len(a) != len(b) or a.keys() != b.keys():
                return False
            stack.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        else:
            return False
    return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same_number(a: int | float, b: int | float) -> bool:
    if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return False
    return a == b  # int against float compares exactly in Python (no rounding of big ints)


def pointer(document: Any, path: str) -> Any:
    """The value at the JSON pointer ``path`` (``""`` is the whole document), or MISSING."""
    if path == "":
        return document
    if not path.startswith("/"):
        return MISSING
    value = document
    for raw in path[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, Mapping):
            if token not in value:
                return MISSING
            value = value[token]
        elif isinstance(value, list):
            if not (token.isascii() and token.isdigit()) or (token != "0" and token[0] == "0"):
                return MISSING
            index = int(token)
            if index >= len(value):
                return MISSING
            value = value[index]
        else:
            return MISSING
    return value
