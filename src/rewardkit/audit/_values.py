"""Values built from a row's gold, and where a response states its answer.

Everything here is pure and deterministic: the same row gives the same strings.

* :func:`gold_text`: the gold as one string (the first target of a QA row), or None.
* :func:`wrong_value`: a value that is *not* the gold (gold + 1, the next option letter,
  the first number in a LaTeX gold moved up by one), so that a response asserting it, or
  hedging between it and the gold, is wrong by construction.
* :func:`exact_value`: the numeric value of a gold such as ``\\frac{2}{3}``, ``4\\sqrt{11}``
  or ``\\frac{\\pi}{2}``, and whether it is rational, for decimal approximations and
  equivalent forms.
* :func:`answer_span`: the last explicit answer form of a response (``\\boxed{...}``,
  ``<answer>...</answer>``, ``#### ...``, an ``Answer: ...`` line) and where its content is.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

__all__ = [
    "AnswerSpan",
    "answer_span",
    "choice_letter",
    "equivalent_forms",
    "exact_value",
    "gold_text",
    "render",
    "wrong_value",
]

Kind = Literal["boxed", "tag", "hashes", "line"]

_NUMBER = re.compile(r"^([+-]?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?$")
_LETTER = re.compile(r"^\(?([A-J])\)?\.?$")
_FIRST_INT = re.compile(r"\d+")


def gold_text(ground_truth: Any) -> str | None:
    """The gold as one string: a plain string, a number, or a QA row's first target."""
    if isinstance(ground_truth, bool):
        return None
    if isinstance(ground_truth, (int, float)):
        return str(ground_truth)
    if isinstance(ground_truth, str):
        text = ground_truth.strip()
        if text.startswith("{"):
            try:
                return gold_text(json.loads(text))
            except ValueError:
                return text or None
        return text or None
    if isinstance(ground_truth, dict):
        target = ground_truth.get("target")
        if isinstance(target, str):
            return target.strip() or None
        if isinstance(target, list) and target and isinstance(target[0], str):
            return target[0].strip() or None
    return None


def choice_letter(gold: str) -> str | None:
    """The option letter of a multiple-choice gold (``C``, ``(C)``), else None."""
    found = _LETTER.match(gold.strip())
    return found.group(1) if found else None


def _shift_number(text: str, by: int) -> str | None:
    found = _NUMBER.match(text.strip())
    if not found:
        return None
    sign, whole, decimals = found.groups()
    value = Fraction(whole.replace(",", "") + (decimals or ""))
    if sign == "-":
        value = -value
    value += by
    places = len(decimals) - 1 if decimals else 0
    if places:
        return f"{float(value):.{places}f}"
    return str(int(value))


def wrong_value(gold: str, step: int = 1) -> str:
    """A value that differs from ``gold``: ``step`` added to its (first) number, the letter
    ``step`` after it for an option letter, ``+step`` appended when it has no digits."""
    letter = choice_letter(gold)
    if letter is not None:
        span = 4 if letter <= "D" else 10
        return chr(ord("A") + (ord(letter) - ord("A") + step) % span)
    shifted = _shift_number(gold, step)
    if shifted is not None:
        return shifted
    found = _FIRST_INT.search(gold)
    if found is not None:
        moved = str(int(found.group()) + step)
        return gold[: found.start()] + moved + gold[found.end() :]
    if re.search(r"[A-Za-z]{2,}", gold) and "\\" not in gold:  # a word answer (QA)
        return "none of these" if step == 1 else f"none of these ({step})"
    return f"{gold}+{step}"


# ----------------------------------------------------------------- exact values

_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_FRAC_SHORT = re.compile(r"\\[dt]?frac\s*(\d)\s*(\d)")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SAFE = re.compile(r"^[0-9+\-*/(). ]*$")


@dataclass(frozen=True)
class ExactValue:
    value: float
    rational: Fraction | None  # the exact value when it is rational


def exact_value(gold: str) -> ExactValue | None:
    """The value of a closed-form gold (fractions, square roots, pi, products of them), or
    None for anything else (intervals, tuples, expressions in a variable, units)."""
    text = gold.strip().replace("\\left", "").replace("\\right", "").replace(" ", "")
    text = text.strip("$")
    if not text or len(text) > 60:
        return None
    for _ in range(4):  # nested fractions, inside out
        text = _FRAC_SHORT.sub(r"((\1)/(\2))", text)
        text = _FRAC.sub(r"((\1)/(\2))", text)
        text = _SQRT.sub(r"S(\1)", text)
    text = text.replace("\\pi", "P").replace("\\cdot", "*").replace("\\times", "*")
    text = re.sub(r"(?<=[0-9)P])(?=[(SP])", "*", text)  # 4S(11), 2P, )( : products
    text = re.sub(r"(?<=[)P])(?=[0-9])", "*", text)
    if "{" in text or "\\" in text or not re.search(r"\d|P", text):
        return None
    rational = "S" not in text and "P" not in text
    plain = text.replace("S", "").replace("P", "")
    if not _SAFE.match(plain):
        return None
    try:
        value = float(eval(text, {"__builtins__": {}}, {"S": math.sqrt, "P": math.pi}))
        exact = None
        if rational:
            exact = Fraction(eval(re.sub(r"(\d+(?:\.\d+)?)", r"F('\1')", text),
                                  {"__builtins__": {}}, {"F": Fraction}))  # fmt: skip
    except (ArithmeticError, SyntaxError, TypeError, ValueError):
        return None
    if not math.isfinite(value):
        return None
    if not rational:  # an irrational gold: S(16) is rational after all
        if re.fullmatch(r"[0-9*]*S\(\d+\)", text):
            inside = int(re.search(r"S\((\d+)\)", text).group(1))  # type: ignore[union-attr]
            if math.isqrt(inside) ** 2 == inside:
                return None
    return ExactValue(value, exact)


def _terminating(value: Fraction, places: int = 6) -> bool:
    return (value * 10**places).denominator == 1


def decimal_approximation(gold: str) -> str | None:
    """``gold`` rounded to six decimals when that is *not* its exact value (``\\frac{2}{3}``
    -> ``0.666667``, ``\\sqrt{2}`` -> ``1.414214``), else None."""
    exact = exact_value(gold)
    if exact is None or _NUMBER.match(gold.strip()):
        return None
    if exact.rational is not None and _terminating(exact.rational):
        return None  # 0.5 for \frac12 is the same number: an equivalent form
    if exact.rational is not None and exact.rational.denominator == 1:
        return None
    return f"{exact.value:.6f}"


def equivalent_forms(gold: str) -> list[str]:
    """Other ways to write exactly the gold's value: a decimal for a terminating fraction,
    a fraction for a decimal, ``a/b`` for ``\\frac{a}{b}``, ``n.0`` for an integer."""
    text = gold.strip()
    out: list[str] = []
    number = _NUMBER.match(text)
    if number:
        sign, whole, decimals = number.groups()
        if decimals:
            value = Fraction(whole.replace(",", "") + decimals)
            if value.denominator != 1:
                frac = f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
                out.append(("-" if sign == "-" else "") + frac)
        else:
            out.append(f"{sign}{whole.replace(',', '')}.0")
        return out
    exact = exact_value(text)
    if exact is not None and exact.rational is not None:
        value = exact.rational
        if _terminating(value) and value.denominator != 1:
            out.append(f"{float(value):g}")
        parts = _FRAC.fullmatch(text.lstrip("-"))
        if parts and parts.group(1).strip().isdigit() and parts.group(2).strip().isdigit():
            out.append(("-" if text.startswith("-") else "") + f"{parts.group(1)}/{parts.group(2)}")
    return out


# ----------------------------------------------------------------- answer forms


@dataclass(frozen=True)
class AnswerSpan:
    """The last explicit answer form: ``form_start:form_end`` is the whole form
    (``\\boxed{42}``), ``start:end`` its content (``42``)."""

    kind: Kind
    form_start: int
    form_end: int
    start: int
    end: int

    def content(self, text: str) -> str:
        return text[self.start : self.end]

    def replace(self, text: str, content: str) -> str:
        return text[: self.start] + content + text[self.end :]


def _last_boxed(text: str) -> AnswerSpan | None:
    at = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    while at >= 0:
        brace = text.find("{", at)
        if brace >= 0 and text[at + 1 : brace].rstrip() in ("boxed", "fbox"):
            depth = 0
            for i in range(brace, len(text)):
                if text[i] == "{":
                    depth += 1
                elif text[i] == "}":
                    depth -= 1
                    if depth == 0:
                        return AnswerSpan("boxed", at, i + 1, brace + 1, i)
        at = max(text.rfind("\\boxed", 0, at), text.rfind("\\fbox", 0, at))
    return None


def _last_tag(text: str) -> AnswerSpan | None:
    start = text.rfind("<answer>")
    if start < 0:
        return None
    end = text.find("</answer>", start)
    if end < 0:
        return None
    return AnswerSpan("tag", start, end + len("</answer>"), start + len("<answer>"), end)


_HASHES = re.compile(r"####[ \t]*([^\n]*)")
# the line's rest, its trailing blanks and full stops trimmed after the match (a lazy
# group before "[ \t.]*$" rescanned a run of blanks from each of its characters)
_LINE = re.compile(r"(?im)^[ \t]*\**(?:final )?answer\**[ \t]*:\**[ \t]*([^\n]*)")


def _last_match(
    pattern: re.Pattern[str], text: str, kind: Kind, trim: str = ""
) -> AnswerSpan | None:
    found: re.Match[str] | None = None
    for found in pattern.finditer(text):  # noqa: B007 (the last one)
        pass
    content = "" if found is None else found.group(1).rstrip(trim)
    if found is None or not content.strip():
        return None
    return AnswerSpan(
        kind, found.start(), found.end(), found.start(1), found.start(1) + len(content)
    )


def answer_span(text: str) -> AnswerSpan | None:
    """The explicit answer form that starts last in ``text``, or None.

    Inside ``<answer>\\boxed{5}</answer>`` that is the box, so replacing its content
    keeps both forms.
    """
    found = [
        span
        for span in (
            _last_boxed(text),
            _last_tag(text),
            _last_match(_HASHES, text, "hashes"),
            _last_match(_LINE, text, "line", trim=" \t."),
        )
        if span is not None
    ]
    return max(found, key=lambda span: span.start) if found else None


def render(kind: Kind, value: str) -> str:
    """``value`` written in an answer form of this kind."""
    if kind == "tag":
        return f"<answer>{value}</answer>"
    if kind == "hashes":
        return f"#### {value}"
    if kind == "line":
        return f"Answer: {value}"
    return f"\\boxed{{{value}}}"
