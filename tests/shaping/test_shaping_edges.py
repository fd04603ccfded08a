"""guards: format.py's format_score and overlong.py's overlong_penalty at their edges.

Hostile and boundary inputs of the two shaping components; verl's DAPO overlong formula
is the reference. Their ordinary cases are in test_format.py and test_overlong.py.
"""

from __future__ import annotations

import pytest

from rewardkit.shaping.format import format_score
from rewardkit.shaping.overlong import overlong_penalty

# (response, expected, why)
FORMAT_ROWS = [
    # str.strip() keeps zero-width and other format characters (category Cf): an
    # "answer" of nothing visible is no answer
    ("<think></think>\u200b", 0.0, "zero-width space"),
    ("<think>x</think>\ufeff", 0.0, "byte-order mark"),
    ("<think>x</think>\u2060\u200d\u200c", 0.0, "word joiner, zero-width (non-)joiner"),
    ("<think>x</think> \u200b\n\u00a0", 0.0, "invisible and blank mixed"),
    ("<think>x</think>\u200b4", 1.0, "a visible character after an invisible one"),
    # nesting, unclosed and doubled blocks
    ("<think><think>x</think></think>4", 0.0, "nested blocks"),
    ("<think>x</think>4<think>", 0.0, "a second, unclosed block"),
    ("<think>x<think>4", 0.0, "never closed"),
    ("<THINK>x</THINK>4", 0.0, "other case is another tag"),
]


@pytest.mark.parametrize(("response", "expected", "why"), FORMAT_ROWS)
def test_format_attacks(response: str, expected: float, why: str) -> None:
    assert format_score(response) == expected, why


# (length, max_resp_len, buffer_len, factor, expected, why)
OVERLONG_ROWS = [
    # the buffer's edges
    (100, 100, 100, 1.0, -1.0, "buffer as long as the limit: at the limit"),
    (0, 100, 100, 1.0, 0.0, "buffer as long as the limit: empty response"),
    (1, 1, 1, 1.0, -1.0, "smallest limit and buffer"),
    (90, 100, 10, 1.0, 0.0, "the last free token"),
    (100, 100, 10, 0.0, 0.0, "factor 0: no penalty"),
    # As verl's DAPO manager: past the limit the penalty keeps growing (no clamp;
    # tests/test_tokens.py pins the same for the tensor API).
    (110, 100, 10, 1.0, -2.0, "one buffer past the limit"),
    (2**53, 100, 10, 1.0, -(2**53 - 90) / 10, "the longest length accepted"),
]


@pytest.mark.parametrize(("length", "limit", "buffer", "factor", "expected", "why"), OVERLONG_ROWS)
def test_overlong_edges(
    length: int, limit: int, buffer: int, factor: float, expected: float, why: str
) -> None:
    assert overlong_penalty(length, limit, buffer, factor) == pytest.approx(expected), why


def test_an_absurd_length_is_refused_by_name() -> None:
    """A float cannot hold the penalty of 10**400 tokens: a ValueError naming the
    argument (an invalid row in the engine), never an OverflowError (an internal error)."""
    with pytest.raises(ValueError, match="response_length must be <= 2"):
        overlong_penalty(10**400, 100, 10, 1.0)
    with pytest.raises(ValueError, match="response_length"):
        overlong_penalty(2**53 + 1, 100, 10, 1.0)
