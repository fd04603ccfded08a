"""GSM8K: the final number of a grade-school word problem, compared exactly.

``strict`` (verl's default) rewards only answers written as ``#### <number>``, the
format of the dataset's own solutions, so it also trains the format. ``flexible``
takes the last number anywhere in the response. Both compare numerically after
dropping ``,`` and ``$``: ``#### 72.00``, ``#### $72`` and ``#### 72`` are the same.
Everything is decided in the main process; there is no slow path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers._common import gold_strings, last_match, plain_number, verdict
from rewardkit.verifiers.base import Extracted, Verdict

__all__ = ["GSM8KVerifier"]

# The number after "####": an optional sign and "$" in either order, digits with
# thousands separators, an optional decimal part. Bounded gaps keep it linear.
_NUMBER = r"-?[ \t]{0,3}\$?[ \t]{0,3}-?(?:[0-9][0-9,]*(?:\.[0-9]+)?|\.[0-9]+)"
_STRICT = re.compile(r"####[ \t]{0,8}\$?[ \t]{0,3}(" + _NUMBER + ")")
_FLEXIBLE = re.compile(r"-?\$?[0-9][0-9,]*(?:\.[0-9]+)?")


@dataclass(frozen=True, slots=True)
class GSM8KVerifier:
    """Score 1.0 when the response's final number equals the ground truth, else 0.0.

    The ground truth is the number after ``####`` (verl's parquet layout), an int or
    float, a full GSM8K solution ending in ``#### n``, or a list of acceptable answers.
    """

    method: Literal["strict", "flexible"] = "strict"

    def __post_init__(self) -> None:
        if self.method not in ("strict", "flexible"):
            raise ValueError(
                f"GSM8KVerifier method must be 'strict' or 'flexible', got {self.method!r}"
            )

    @property
    def key(self) -> str:
        return f"gsm8k:{self.method}"

    def extract(self, response: str) -> Extracted:
        """The last ``#### n`` (strict) or the last number (flexible), as written."""
        pattern = _STRICT if self.method == "strict" else _FLEXIBLE
        found = last_match(pattern, response)
        if found is None:
            return Extracted(None, {"method": self.method})
        answer = found.group(found.lastindex or 0).replace(" ", "").replace("\t", "")
        return Extracted(answer, {"method": self.method})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Always decides: numbers are compared exactly, as fractions."""
        golds = _gold_numbers(ground_truth)
        answer = extracted.answer
        value = None if answer is None else plain_number(answer)
        return verdict(value is not None and value in golds, answer)

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Same as :meth:`quick_check`; GSM8K never needs a worker."""
        return self.quick_check(extracted, ground_truth)


def _gold_numbers(ground_truth: Any) -> tuple[Fraction, ...]:
    return tuple(_gold_number(text) for text in gold_strings(ground_truth, "gsm8k"))


def _gold_number(text: str) -> Fraction:
    value = plain_number(text)
    if value is None and "####" in text:  # a full dataset solution: its own final answer
        found = last_match(_STRICT, text)
        value = None if found is None else plain_number(found.group(1).replace(" ", ""))
    if value is None:
        shown = text if len(text) <= 60 else text[:60] + "…"
        raise InvalidSampleError(f"gsm8k: ground_truth {shown!r} is not a number")
    return value
