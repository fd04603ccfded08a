"""Shared by the verifier tables: how a (gold, response, expected, reason) row is checked,
and the tables' test ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from rewardkit.verifiers.base import NO_CONTEXT, Context, Extracted, Verifier, extract_with
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier

V = MathVerifier()
OFF = MathVerifier(fast_paths=False)
GSM8K = GSM8KVerifier()
CHOICE = ChoiceVerifier()


def score(verifier: Verifier, response: str, gold: Any, context: Context = NO_CONTEXT) -> float:
    """A response's score, through the phases the engine runs: ``extract`` (given the
    row's ``context`` where the verifier reads it), then ``quick_check``, then ``check``
    where that leaves it."""
    extracted = extract_with(verifier, response, context)
    quick = verifier.quick_check(extracted, gold)
    return (quick if quick is not None else verifier.check(extracted, gold)).score


def box(answer: str) -> str:
    return f"So the final answer is $\\boxed{{{answer}}}$."


def row_ids(rows: list[object]) -> list[str]:
    """Short test ids: the row's index and the start of its reason."""
    out = []
    for i, row in enumerate(rows):
        values = row.values if hasattr(row, "values") else row  # pytest.param or a tuple
        out.append(f"{i}-{values[3]}"[:50])
    return out


def table_params(tables: Mapping[str, Sequence[Sequence[Any]]]) -> list[Any]:
    """Every row of every named table as a ``pytest.param``, its id the table's name, the
    row's index and the start of its reason (the row's last item)."""
    return [
        pytest.param(*row, id=f"{name}-{i}-{row[-1]}"[:60])
        for name, rows in tables.items()
        for i, row in enumerate(rows)
    ]


def check_math_row(gold: str, response: str, expected: float, reason: str) -> None:
    """The inline decision (when it decides) and the full check score ``expected``; a row
    expected 0 also scores 0 with fast paths off: no reading may credit a wrong answer."""
    check_both_phases(gold, response, expected, reason)
    if expected == 0.0:
        assert OFF.check(OFF.extract(response), gold).score == 0.0, f"fast_paths=False: {reason}"


def check_gsm8k_row(gold: str, response: str, expected: float, reason: str) -> None:
    """GSM8K ``auto`` scores ``expected``."""
    assert GSM8K.check(GSM8K.extract(response), gold).score == expected, f"gsm8k: {reason}"


def check_choice_row(gold: str, response: str, expected: float, reason: str) -> None:
    """Multiple choice scores ``expected``."""
    assert CHOICE.check(CHOICE.extract(response), gold).score == expected, f"choice: {reason}"


def check_math_and_gsm8k_row(gold: str, response: str, expected: float, reason: str) -> None:
    """A row both the math verifier (as ``check_math_row``) and GSM8K ``auto`` score alike."""
    check_math_row(gold, response, expected, reason)
    check_gsm8k_row(gold, response, expected, reason)


def check_both_phases(gold: str, response: str, expected: float, reason: str) -> None:
    extracted = V.extract(response)
    quick = V.quick_check(extracted, gold)
    if quick is not None:
        assert quick.score == expected, f"quick_check: {reason}"
    assert V.check(extracted, gold).score == expected, reason


def check_against_math_verify(extracted: Extracted, gold: str, expected: float, why: str) -> None:
    """The inline decision, when there is one, is math-verify's; both are ``expected``."""
    quick = V.quick_check(extracted, gold)
    math_verify = OFF.check(extracted, gold).score
    if quick is not None:
        assert quick.score == math_verify, f"inline {quick.score}, math-verify {math_verify}: {why}"
    assert V.check(extracted, gold).score == expected, why
    assert math_verify == expected, f"fast_paths=False: {why}"


def check_stricter(answer: str, gold: str, expected: float, why: str) -> None:
    """A boxed ``answer`` that the inline path decides itself, stricter than math-verify."""
    extracted = Extracted(answer, {"source": "boxed"})
    quick = V.quick_check(extracted, gold)
    assert quick is not None and quick.score == expected, why
    assert V.check(extracted, gold).score == expected, why


def table_mismatches(
    loop: Any, data_source: str, rows: Sequence[tuple[Any, ...]], *, worker_error_ok: bool = False
) -> list[tuple[Any, ...]]:
    """Score a table's rows ``(response, truth, status, score, failed, why)`` in one batch
    and list those whose (status, score, ``extra.failed``) differ from the table's.
    ``worker_error_ok``: an ``invalid`` row may end ``error`` when a worker met the fault
    (a remote ``$ref`` met while validating): a reason, never a score."""
    batch = [{"data_source": data_source, "response": r, "ground_truth": t} for r, t, *_ in rows]
    wrong = []
    for (_, _, status, score, failed, why), result in zip(rows, loop.score(batch), strict=True):
        got = (result.status.value, result.score, result.extra.get("failed"))
        if worker_error_ok and status == "invalid" and got[0] == "error":
            status = "error"
        if got != (status, score, failed):
            wrong.append((why, got, result.error))
    return wrong
