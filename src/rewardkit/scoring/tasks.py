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

__all__ = ["OUTCOMES_EVERY_S", "call_custom", "check", "spread_rows", "verify_whole"]


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


SpreadProgress = int | tuple[int, list[SpreadOutcome], tuple[Extracted, Verdict | None] | None]
"""What a spread task reports (``reports=True``) before each row: the row's index alone,
or, every :data:`OUTCOMES_EVERY_S` at most, the index with the outcomes of the rows
before it not reported yet (``(index, outcomes, None)``); and before each check, the
index, those outcomes and the row's first phases (``extracted``, ``quick``)."""

OUTCOMES_EVERY_S = 0.01
"""How often a spread task's row reports carry its outcomes so far. A row's index alone
costs the task about a microsecond; an outcome, pickled on its own, several: a task of
32 rows (about 5 ms) sends them all with its reply. The rows done since the last such
report are done again elsewhere when a later row stalls (less than this much work)."""
_CUT_POLL_S = 0.002  # how often a task reads its pipe for a cut (a system call each time)


def spread_rows(
    rows: list[SpreadRow], fast_paths: bool, check_for_s: float, reports: bool = False
) -> list[SpreadOutcome]:
    """A large batch's rows, every phase the engine can leave to one task
    (:mod:`rewardkit.scoring.spread`), row after row: ``extract`` and ``quick_check``,
    then ``check`` when those leave the row to the slow path (``quick_decides``), unless
    the engine knows its outcome already (its cache answers it) or sent None for what it
    knows (then it checks the row itself).

    Checks start only in the task's first ``check_for_s`` seconds: a row checked here
    costs no task of its own, a row left unchecked is checked as any other, alone. A
    check that raises is left too, so that it fails exactly as it would alone. Rows of
    one prompt with the same answer are checked once (``shared``). One row's failure
    never costs the others.

    ``reports``: before each row and before each check, the task reports its progress
    (:data:`SpreadProgress`, through :func:`rewardkit.execution._worker.report`), so that
    its caller can finish the rows already done and hand the rest to other workers when
    one row's extraction or check runs long; having done so it cuts the task
    (:func:`~rewardkit.execution._worker.cut_asked`), which ends the row it works on and
    returns the outcomes it has: fewer than its rows. A task that reports returns only
    the outcomes it has not reported (each outcome crosses the pipe once).
    """
    began = time.perf_counter()
    sent = 0  # out[:sent] are reported
    told = polled = began  # when outcomes were last reported, when the pipe was last read
    checked: dict[CheckKey, Verdict] = {}
    out: list[SpreadOutcome] = []
    for verifier, response, truth, truth_key, known, context in rows:
        if reports:
            now = time.perf_counter()
            if now - polled >= _CUT_POLL_S:  # (a row that stalled its task ran far longer)
                polled = now
                if cut_asked():  # the caller has the rest of the rows done elsewhere
                    return out[sent:]  # (and the outcomes reported: each is sent once)
            if now - told < OUTCOMES_EVERY_S or sent == len(out):
                report(len(out))
            elif report((len(out), out[sent:], None)):
                sent, told = len(out), now
        first = _first_phases(verifier, response, truth, context)
        if first[0] != "ok":
            out.append(first)
            continue
        extracted, quick = first[1]
        key = CheckKey.of(verifier, truth_key, extracted)
        verdict, shared = checked.get(key), key in checked
        wanted = not quick_decides(verifier, quick, fast_paths)
        wanted = wanted and known is not None and key.answer_of not in known
        if verdict is None and wanted and time.perf_counter() - began < check_for_s:
            if reports and report((len(out), out[sent:], (extracted, quick))):
                sent, told = len(out), time.perf_counter()
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
