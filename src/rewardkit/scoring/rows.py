"""One row's way to its Result, shared by every path a row can take.

A rule verifier's row runs ``extract`` and ``quick_check`` (:func:`first_phases`): on
the event loop, in a spread task or whole in a worker, each given the row's
:class:`~rewardkit.verifiers.base.Context` (:func:`context_of`) when its verifier reads it. Whichever ran them, the same
:func:`quick_decides` says whether the quick verdict is the row's, and the same
:func:`verdict_piece` and :func:`combine` turn verdicts into its Result.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Awaitable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rewardkit.errors import InvalidSampleError
from rewardkit.types import BadRow, Result, Sample, Status
from rewardkit.verifiers.base import NO_CONTEXT, Context, Extracted, Verdict, Verifier, extract_with

__all__ = [
    "INLINE_MAX_GROUND_TRUTH",
    "INLINE_MAX_RESPONSE_CHARS",
    "Piece",
    "combine",
    "context_of",
    "failed",
    "first_phases",
    "freeze",
    "quick_decides",
    "row_of",
    "store",
    "timed",
    "too_big_inline",
    "verdict_piece",
]


@dataclass(slots=True)
class Piece:
    """One source's contribution to a row: a score, or a failure with its status."""

    component: str
    weight: float
    score: float | None = None
    status: Status = Status.OK
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def context_of(verifier: Verifier, sample: Sample, max_response_length: int | None) -> Context:
    """What the verifier reads of the row besides its response (its prompt's answer
    forms, whether it was truncated): :class:`~rewardkit.verifiers.base.Context`, built
    on the loop for every path the row takes (it pickles with a spread task's rows).
    verl's response length against ``max_response_length``
    (``reward.overlong_buffer.max_resp_len``) tells truncation too, where both are given.
    """
    reads_prompt = getattr(verifier, "reads_context", False)
    context = (
        Context.of(sample.prompt, sample.extra_info, max_response_length=max_response_length)
        if reads_prompt
        else NO_CONTEXT
    )
    if isinstance(sample.response, list) and getattr(verifier, "reads_trajectory", False):
        return replace(context, trajectory=tuple(sample.response))
    return context


def first_phases(
    verifier: Verifier, response: str, ground_truth: Any, context: Context = NO_CONTEXT
) -> tuple[Extracted, Verdict | None]:
    """A rule verifier's cheap phases: the answer (read with the row's context, for a
    verifier that reads one), and the quick verdict or None.

    A bad ground truth raises InvalidSampleError (the row is invalid); anything else
    it raises is a bug of the verifier (the row's status is error, not bad data)."""
    extracted = extract_with(verifier, response, context)
    return extracted, verifier.quick_check(extracted, ground_truth)


def quick_decides(verifier: Verifier, quick: Verdict | None, fast_paths: bool) -> bool:
    """Whether a quick verdict is the row's verdict (else the row goes to ``check``).

    This is the one place ``reward.verifiers.fast_paths`` is decided, for every path a
    row takes (on the loop, in a spread task, whole in a worker). With fast paths on,
    every quick verdict stands. With them off, a verifier that applies the setting itself
    (a ``fast_paths`` attribute that is False, as MathVerifier built from the config has)
    returns from ``quick_check`` only its guards, decided before any equivalence check
    (no answer, a hedge, alternatives offered): those stand too, as ``check`` would give
    them again. Any other verifier's quick verdict is a fast equivalence: dropped, so
    that ``check`` decides every row in a worker.
    """
    if quick is None:
        return False
    return fast_paths or getattr(verifier, "fast_paths", True) is False


def verdict_piece(
    component: str, weight: float, verdict: Verdict, seen: Mapping[str, Any]
) -> Piece:
    return Piece(component, weight, score=float(verdict.score), extra={**seen, **verdict.extra})


def combine(index: int, pieces: list[Piece], row: Mapping[str, Any]) -> Result:
    """Weighted sum of the components; the first failed component fails the row."""
    components = {p.component: p.score for p in pieces if p.score is not None}
    extra: dict[str, Any] = {}
    for piece in pieces:
        extra.update(piece.extra)
    failure = next((p for p in pieces if p.status is not Status.OK), None)
    if failure is not None:
        return Result(
            index, failure.status, error=failure.error, components=components, extra=extra, row=row
        )
    score = sum(p.weight * p.score for p in pieces if p.score is not None)
    if not math.isfinite(score):  # finite parts, huge weights: overflow fails this row only
        error = f"combined score is not finite ({score}): components {components} x weights"
        return Result(index, Status.ERROR, error=error, components=components, extra=extra, row=row)
    return Result(index, Status.OK, score=score, components=components, extra=extra, row=row)


def failed(index: int, exc: Exception, row: Mapping[str, Any]) -> Result:
    """A row's failure: invalid data, or a bug of ours that must still cost only this row."""
    if isinstance(exc, InvalidSampleError):
        return Result(index, Status.INVALID, error=str(exc), row=row)
    error = f"internal error: {type(exc).__name__}: {exc}"
    return Result(index, Status.ERROR, error=error, row=row)


def timed(result: Result, started: float) -> Result:
    # Set on the frozen Result in place, as its own __post_init__ could: replace()
    # would copy every field of every row (measurable at thousands of rows/s).
    object.__setattr__(result, "elapsed_s", time.perf_counter() - started)
    return result


async def store(result: Awaitable[Result], index: int, done: dict[int, Result]) -> None:
    """Await a row's Result into ``done`` (a dict store: another thread may read it)."""
    done[index] = await result


def row_of(raw: Any) -> Mapping[str, Any]:
    """The row as a Result carries it."""
    if isinstance(raw, Sample):
        return raw.to_row()
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, BadRow):
        return {}
    return {"row": repr(raw)[:200]}


def freeze(value: Any) -> str:
    """A hashable, order-independent key for JSON-like values."""
    if type(value) is str:  # the usual ground truth: json.dumps's own encoding, without
        return _json_string(value)  # building an encoder for sort_keys (a microsecond a row)
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(value)


_json_string = json.encoder.encode_basestring_ascii

# Past these sizes a rule verifier's inline phases (extraction, fast paths) could hold the
# event loop for milliseconds to seconds (a ground truth of 300,000 items: 4 s): such rows
# run all their phases in a worker instead, under reward.timeout_s.
INLINE_MAX_RESPONSE_CHARS = 100_000
INLINE_MAX_GROUND_TRUTH = 4_096  # characters, plus 16 per list or dict item


def too_big_inline(response: str | int, ground_truth: Any) -> bool:
    """Whether a row with this response (or this many response characters:
    :attr:`~rewardkit.types.Sample.response_chars`, a trajectory counted whole) and
    ground truth runs every phase in a worker."""
    chars = response if isinstance(response, int) else len(response)
    if chars > INLINE_MAX_RESPONSE_CHARS:
        return True
    budget = INLINE_MAX_GROUND_TRUTH
    stack = [ground_truth]
    while stack:  # stops as soon as the budget is spent: bounded work on any input
        value = stack.pop()
        if isinstance(value, str | bytes):
            budget -= len(value)
        elif isinstance(value, Collection):  # lists, dicts, numpy arrays from parquet
            try:
                budget -= 16 * len(value)
            except TypeError:  # a 0-d array
                budget -= 16
                continue
            if budget >= 0:
                stack.extend(value.items() if isinstance(value, Mapping) else value)
        else:
            budget -= 16
        if budget < 0:
            return True
    return False
