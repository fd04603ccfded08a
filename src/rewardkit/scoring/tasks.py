"""The functions a worker process runs. Module-level, so they pickle by reference.

The rule verifier's phases here are the engine's (:mod:`rewardkit.scoring.rows`):
:func:`~rewardkit.scoring.rows.first_phases` and
:func:`~rewardkit.scoring.rows.quick_decides`, as on the event loop.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from rewardkit.custom import load_function
from rewardkit.errors import InvalidSampleError
from rewardkit.execution._worker import cut_asked, report
from rewardkit.scoring.outcomes import Answer, CheckKey
from rewardkit.scoring.rows import first_phases, quick_decides
from rewardkit.verifiers.base import NO_CONTEXT, Context, Extracted, Verdict, Verifier, extract_with

__all__ = ["call_custom", "check", "spread_rows", "verify_whole"]


def check(verifier: Verifier, extracted: Extracted, ground_truth: Any) -> Verdict:
    """The slow path of a rule verifier."""
    return verifier.check(extracted, ground_truth)


def call_custom(path: str, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """A user's compute_score, loaded once per worker."""
    return load_function(path, name)(*args, **kwargs)


def verify_whole(
    verifier: Verifier,
    response: str,
    ground_truth: Any,
    fast_paths: bool,
    context: Context = NO_CONTEXT,
) -> tuple[Verdict, dict[str, Any]] | str:
    """Every phase of a rule verifier, for a row too big to check on the event loop.

    Returns the verdict and what extraction saw, or a string: why the ground truth is
    unusable (the row is then ``invalid``, as it is when checked inline).
    """
    extracted = extract_with(verifier, response, context)
    try:
        quick = verifier.quick_check(extracted, ground_truth)
    except InvalidSampleError as exc:  # anything else is a bug: the row's status is error
        return str(exc)
    if quick is not None and quick_decides(verifier, quick, fast_paths):
        return quick, dict(extracted.extra)
    return verifier.check(extracted, ground_truth), dict(extracted.extra)


SpreadRow = tuple[Verifier, str, Any, str, frozenset[Answer] | None, Context]
"""A spread row: verifier, response, ground truth, the ground truth's key, the (answer,
source) pairs the engine already holds an outcome for against it (None: too many to
send, the engine checks this row's answer itself), and the row's context."""

SpreadOutcome = tuple[str, Any]
"""``("ok", (extracted, quick verdict or None, checked verdict or None, shared))``,
``("invalid", why)`` for a ground truth the verifier refuses, or ``("bug", "Type:
message")``."""


SpreadProgress = tuple[int, list[SpreadOutcome], tuple[Extracted, Verdict | None]]
"""What a spread task reports before each check (``reports=True``): the index of the row
it checks now, the outcomes of the rows before it not reported yet, and that row's first
phases (``extracted``, ``quick``)."""


def spread_rows(
    rows: list[SpreadRow], fast_paths: bool, check_for_s: float, reports: bool = False
) -> list[SpreadOutcome]:
    """A large batch's rows, every phase the engine can leave to one task
    (:mod:`rewardkit.scoring.spread`): ``extract`` and ``quick_check`` of each row, then
    ``check`` of each row those leave to the slow path (``quick_decides``), unless the
    engine knows its outcome already (its cache answers it) or sent None for what it
    knows (then it checks the row itself).

    Checks start only in the task's first ``check_for_s`` seconds: a row checked here
    costs no task of its own, a row left unchecked is checked as any other, alone. A
    check that raises is left too, so that it fails exactly as it would alone. Rows of
    one prompt with the same answer are checked once (``shared``). One row's failure
    never costs the others.

    ``reports``: before each check, the task sends its progress (:data:`SpreadProgress`,
    through :func:`rewardkit.execution._worker.report`), so that its caller can finish
    the rows already done and hand the rest to other workers when that check runs long;
    having done so it cuts the task (:func:`~rewardkit.execution._worker.cut_asked`),
    which then returns the outcomes it has: fewer than its rows. A task that reports
    returns only the outcomes it has not reported (each outcome crosses the pipe once).
    """
    began = time.perf_counter()
    sent = 0
    firsts = [
        _first_phases(verifier, response, truth, context)
        for verifier, response, truth, _, _, context in rows
    ]
    checked: dict[CheckKey, Verdict] = {}
    out: list[SpreadOutcome] = []
    for (verifier, _, truth, truth_key, known, _), first in zip(rows, firsts, strict=True):
        if first[0] != "ok":
            out.append(first)
            continue
        extracted, quick = first[1]
        key = CheckKey.of(verifier, truth_key, extracted)
        answer = key.answer_of
        verdict, shared = checked.get(key), key in checked
        wanted = not quick_decides(verifier, quick, fast_paths)
        wanted = wanted and known is not None and answer not in known
        if verdict is None and wanted and time.perf_counter() - began < check_for_s:
            if reports:
                if cut_asked():  # the caller has the rest of the rows done elsewhere
                    return out[sent:]  # (and the outcomes reported: each is sent once)
                if report((len(out), out[sent:], (extracted, quick))):
                    sent = len(out)
            verdict = _checked(verifier, extracted, truth)
            if verdict is not None:
                checked[key] = verdict
        out.append(("ok", (extracted, quick, verdict if wanted else None, shared and wanted)))
    return out[sent:]  # the outcomes not reported yet: the caller has the others


def _first_phases(
    verifier: Verifier, response: str, ground_truth: Any, context: Context
) -> SpreadOutcome:
    try:
        return "ok", first_phases(verifier, response, ground_truth, context)
    except InvalidSampleError as exc:
        return "invalid", str(exc)
    except Exception as exc:
        return "bug", f"{type(exc).__name__}: {exc}"


def _checked(verifier: Verifier, extracted: Extracted, ground_truth: Any) -> Verdict | None:
    try:
        return verifier.check(extracted, ground_truth)
    except Exception:  # the engine checks it alone, where it fails with its usual status
        return None
