"""DAPO's soft overlong penalty (verl's ``overlong_buffer``).

Responses up to ``max_resp_len - buffer_len`` tokens are free; inside the last
``buffer_len`` tokens the penalty grows linearly to ``-penalty_factor`` at
``max_resp_len``. It discourages truncation without punishing long answers outright.
"""

from __future__ import annotations

import math

__all__ = ["MAX_RESPONSE_LENGTH", "overlong_penalty"]

MAX_RESPONSE_LENGTH = 2**53
"""Longer claimed lengths are refused: no model writes that many tokens, and past
2**53 a float cannot hold the length (10**400 raised OverflowError)."""


def overlong_penalty(
    response_length: int, max_resp_len: int, buffer_len: int, penalty_factor: float
) -> float:
    """``min(-(response_length - (max_resp_len - buffer_len)) / buffer_len * penalty_factor, 0)``.

    Always <= 0, and not clamped past ``max_resp_len`` (verl's DAPO manager does not
    clamp either). ValueError, naming the argument, for a negative or absurd
    (> ``MAX_RESPONSE_LENGTH``) length, a
    non-positive ``max_resp_len`` or ``buffer_len``, a buffer longer than
    ``max_resp_len``, or a negative or non-finite ``penalty_factor``.
    """
    _check_int("response_length", response_length, minimum=0)
    if response_length > MAX_RESPONSE_LENGTH:
        bits = response_length.bit_length()
        raise ValueError(f"response_length must be <= 2**53, got a {bits}-bit number")
    _check_int("max_resp_len", max_resp_len, minimum=1)
    _check_int("buffer_len", buffer_len, minimum=1)
    if buffer_len > max_resp_len:
        raise ValueError(f"buffer_len ({buffer_len}) must not exceed max_resp_len ({max_resp_len})")
    if isinstance(penalty_factor, bool) or not isinstance(penalty_factor, int | float):
        raise ValueError(f"penalty_factor must be a number, got {penalty_factor!r}")
    if not math.isfinite(penalty_factor) or penalty_factor < 0:
        raise ValueError(f"penalty_factor must be finite and >= 0, got {penalty_factor!r}")
    exceed = response_length - (max_resp_len - buffer_len)
    return min(-exceed / buffer_len * penalty_factor, 0.0)


def _check_int(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
