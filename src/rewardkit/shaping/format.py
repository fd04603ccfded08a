"""The format reward: did the response think first, then answer?

Shape rewarded (DeepSeek-R1 style): optional leading whitespace, exactly one
``<think>...</think>`` block, then a non-empty answer (one with a visible character:
zero-width spaces and other format characters alone do not count). Counting and ``find`` only,
so it is linear and safe on any input.
"""

from __future__ import annotations

import re
import unicodedata

from rewardkit.config import THINK_TAG_PATTERN

__all__ = ["format_score"]

_TAG_NAME = re.compile(THINK_TAG_PATTERN)


def format_score(response: str, think_tag: str = "think") -> float:
    """1.0 if ``response`` is ``<think>...</think>`` followed by a non-empty answer, else 0.0.

    ``think_tag`` names the tag (``think``, ``reasoning``, ...); ValueError for a name
    that is not a plain tag name. The block's own content may be empty.
    """
    if not isinstance(think_tag, str) or not _TAG_NAME.fullmatch(think_tag):
        raise ValueError(f"think_tag must be a plain tag name like 'think', got {think_tag!r}")
    opening, closing = f"<{think_tag}>", f"</{think_tag}>"
    body = response.lstrip()
    if not body.startswith(opening):
        return 0.0
    if body.count(opening) != 1 or body.count(closing) != 1:
        return 0.0
    answer = body[body.index(closing) + len(closing) :]
    return 1.0 if _visible(answer) else 0.0


def _visible(text: str) -> bool:
    """Has a character that prints: a zero-width space or BOM alone is not an answer."""
    return any(not char.isspace() and unicodedata.category(char) != "Cf" for char in text)
