"""The MATH family (MATH, MATH-500, DAPO-Math, AIME, NuminaMath): a final answer checked by math-verify.

Phases (see :mod:`rewardkit.verifiers.base`):

* ``extract``: the final answer, found by :mod:`rewardkit.verifiers._answer` (the last
  non-blank box of the final part, else ``<answer>`` tags, else an answer line, else,
  in the default mode, math-verify's own extraction on the end of the final part).
  Offering several *different* final answers is hedging: no answer, ``hedged: True``,
  score 0. (verl and the incumbents credit a hedger when any box matches; we do not.)
* ``quick_check``: no answer -> 0; one box offering alternatives (``3 \\vee 4``,
  ``3 (or 4)``) or opening with a relation (``\\neq 12``, ``< 12``) -> 0, where
  math-verify would read the last value; equal after normalisation -> 1; plain numbers
  compared exactly as fractions (so ``0.333`` is not ``1/3``); multiple-choice labels
  (two labels offered, or another label than the gold's, is wrong whatever the value);
  a multi-select gold's letters (``\\text{A,B,D}``) against listed letters, as sets;
  then :mod:`~rewardkit.verifiers._numeric`'s exact reading of expressions, sets,
  tuples and named values. It decides only what both sides read completely; anything
  else goes to ``check`` (never "unequal because unreadable"). Pathological answers
  (exponent towers, deep nesting, > 1000 chars) are decided by string equality alone
  and marked ``guard``. ``fast_paths=False`` keeps only the guards.
* ``check``: math-verify ``parse`` + ``verify`` with its own signal timeouts disabled:
  the worker running it is killed at ``reward.timeout_s`` and the row says ``timeout``,
  where math-verify's internal timeout would quietly answer "wrong". A pair that
  :mod:`~rewardkit.verifiers._differ` shows different skips ``verify`` (and its
  ``simplify``) with the same verdict.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Literal

from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers import (
    _answer,
    _differ,
    _digit_numbers,
    _latex,
    _numeric,
    _repetition,
    _two_stage,
    _warm_corpus,
)
from rewardkit.verifiers._answer import ExtractionMode
from rewardkit.verifiers._common import gold_strings, verdict
from rewardkit.verifiers._final import values_side_by_side
from rewardkit.verifiers.base import (
    ALSO_OFFERED,
    CALLED_WRONG,
    NO_CONTEXT,
    Context,
    Extracted,
    Verdict,
)

__all__ = ["MathVerifier", "warm_up"]


Decimals = Literal["exact", "rounded"]


@dataclass(frozen=True, slots=True)
class MathVerifier:
    """Score 1.0 when the final answer is mathematically equal to the ground truth, else 0.0.

    The ground truth is the reference answer (``\\frac{1}{2}``, ``(1,2]``, ``\\text{(C)}``),
    a full solution ending in a ``\\boxed{}``, a number, or a list of acceptable answers.
    A missing (None) or empty ground truth raises InvalidSampleError: the row is
    ``invalid``, not wrong. ``extraction="strict"`` reads boxes and ``<answer>`` tags
    only (``reward.verifiers.math.extraction``), for users who reward format separately.

    ``fast_paths=False`` (``reward.verifiers.fast_paths``) sends every answer that passes
    the structural guards to math-verify: ``quick_check`` then decides only rows with no
    answer (or a hedged one), and ``check`` never runs the inline comparisons.
    """

    reads_context: ClassVar[bool] = True  # extract(response, context): see base.Context

    extraction: ExtractionMode = "default"
    fast_paths: bool = True
    decimals: Decimals = "exact"
    """``exact``: a decimal answer is right only when its value is exactly a gold's
    (``0.666667`` is no ``\\frac{2}{3}``, ``1.414214`` no ``\\sqrt{2}``; ``0.5`` is
    ``\\frac12``); ``rounded``: math-verify's 6-place rounding decides a decimal near a
    gold (``reward.verifiers.math.decimals``)."""

    def __post_init__(self) -> None:
        if self.decimals not in ("exact", "rounded"):
            raise ValueError(
                f"MathVerifier decimals must be 'exact' or 'rounded', got {self.decimals!r}"
            )
        if self.extraction not in ("default", "strict"):
            raise ValueError(
                f"MathVerifier extraction must be 'default' or 'strict', got {self.extraction!r}"
            )

    @property
    def key(self) -> str:
        key = "math" if self.extraction == "default" else f"math:{self.extraction}"
        key = key if self.decimals == "exact" else f"{key}:decimals=rounded"
        return key if self.fast_paths else f"{key}:fast_paths=false"

    def extract(self, response: str, context: Context = NO_CONTEXT) -> Extracted:
        """The final answer; bounded: boxes are scanned from the end, lines only in the tail.

        A degenerate response (it ends in a loop: :mod:`~rewardkit.verifiers._repetition`)
        has none, before any search or parse: ``degenerate: 1``, the wrong-answer score."""
        response = _repetition.unpadded(response)
        if _repetition.degenerate(response):
            return Extracted(None, {"source": None, "degenerate": 1})
        found = _answer.find_answer(response, self.extraction, context)
        answer = found.answer
        if answer is not None and found.extra.get("source") != "expression":
            answer = _latex.unicode_math(answer)  # "¾", "3√2", "2³": their LaTeX, as read
        return Extracted(answer, found.extra)  # (a passage is math-verify's to read as written)

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        """Decide without sympy, or None when math-verify is needed."""
        quick = self._quick_answer(extracted, ground_truth)
        if quick is not None and quick.score and extracted.extra.get(CALLED_WRONG):
            return None  # right, unless it is the value its last sentence called wrong
        also = extracted.extra.get(ALSO_OFFERED)
        if not also or quick is None or not quick.score:
            return quick
        # the answer is right: so must be every other final answer offered beside it,
        # plainly ("\\boxed{7} ... Answer: 7?" asks, "at least 7" bounds: no answer)
        if any(_latex.value_qualifier(value) for value in also):
            return verdict(False, extracted.answer, hedged=True)
        golds = _gold_answers(ground_truth)
        others = [_quick_verdict(value, golds, _decide) for value in also]
        if any(other is not None and not other.score for other in others):
            return verdict(False, extracted.answer, hedged=True)
        return quick if all(others) and self.fast_paths else None

    def _quick_answer(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        golds = _gold_answers(ground_truth)
        if _is_passage(extracted):
            return None  # a passage for math-verify's extraction, not an answer yet
        answer = extracted.answer
        if extracted.extra.get("hedged"):
            return verdict(False, extracted.extra.get("pred"), hedged=True)
        if answer is None:
            return verdict(False, None)
        if (exact := _answer.glossed(answer)) is not None and not any(
            map(_DECIMAL_POINT.search, golds)
        ):
            return self._quick_answer(Extracted(exact, extracted.extra), ground_truth)
        if _offers_alternatives(answer) and not any(map(_offers_alternatives, golds)):
            return verdict(False, answer, hedged=True)  # "3 \vee 4": math-verify reads the 4
        if _spaced_integers(answer) and not any(map(_spaced_integers, golds)):
            return verdict(False, answer)  # "2\,3": two numbers shown; math-verify read 5
        if _side_by_side(answer) and not any("," in gold or _side_by_side(gold) for gold in golds):
            return verdict(False, answer, hedged=True)  # "\frac32 \hspace{1em} \frac12": two
        if _RELATION_FIRST.match(answer) and not any(map(_RELATION.search, golds)):
            return verdict(False, answer)  # "\neq 12", "< 12": math-verify reads the 12
        if _NOT_EQUAL.match(answer) and not any(
            _NOT_EQUAL.match(g) or _RELATION.search(g) for g in golds
        ):
            return verdict(False, answer)  # "\approx 18", "n \not= 18", "x \to 18": not 18
        if _marked_unlike_golds(answer, golds):
            return verdict(False, answer)  # "x \ll 18", "≲ 18", "18_8": not 18
        if answer.endswith(_answer.QUESTIONED) and not any(map(_questioned, golds)):
            return verdict(False, answer, hedged=True)  # "... is 9 min?": asked (units or not)
        if _latex.value_qualifier(answer) and not any(map(_latex.value_qualifier, golds)):
            return verdict(False, answer)  # "5\text{ or more}": math-verify drops the words
        if "=" in answer and _answer.false_chain(answer):
            return verdict(False, answer)  # "19 = 18": a false statement answers nothing
        if self.fast_paths and "=" in answer and not any("=" in gold for gold in golds):
            value = _answer.chain_value(answer)  # "52 \cdot 51 = 2652": every side equal
            if value is not None:
                return self._quick_answer(Extracted(value, extracted.extra), ground_truth)
        if self.decimals == "exact" and not _exact_decimal(answer, golds):
            shown = _quick_verdict(answer, golds, _decide)  # a wrong value is wrong, not inexact
            inexact = shown is None or shown.score > 0  # "0.666667" for "\frac{2}{3}"
            return verdict(False, answer, inexact=True) if inexact else shown
        if not self.fast_paths:
            return None
        return _quick_verdict(answer, golds, _decide)

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """The full check: quick paths first (when on), then math-verify on what is left.

        With ``fast_paths`` off only the structural guards run before math-verify: they
        keep exponent towers and bracket bombs away from sympy whatever the setting.
        A fallback passage goes to math-verify's extraction before any of these, but
        for the same guards (:func:`~rewardkit.verifiers._latex.passage_guard_reason`).
        """
        if _is_passage(extracted):  # before any comparison: a passage is not an answer
            golds = _gold_answers(ground_truth)
            if reason := _latex.passage_guard_reason(extracted.answer or ""):
                return verdict(False, None, source="expression", guard=reason)
            if _answer.false_chain(_TAGS_AND_DELIMITERS.sub("", extracted.answer or "").strip()):
                return verdict(False, None, source="expression")  # "<answer>x = 19 = 18</answer>"
            read = _expression_verdict(extracted.answer or "", golds, self.decimals)
            if read.score and _called_right(extracted, golds):  # "... Hmm, 7 is wrong."
                return verdict(False, read.extra.get("pred"), source="expression", hedged=True)
            also = extracted.extra.get(ALSO_OFFERED) or ()
            if read.score and not all(_offered_right(value, golds) for value in also):
                return verdict(False, read.extra.get("pred"), source="expression", hedged=True)
            return read
        quick = self.quick_check(extracted, ground_truth)
        also = extracted.extra.get(ALSO_OFFERED)
        if quick is None and not self.fast_paths and extracted.answer is not None and not also:
            quick = _quick_verdict(extracted.answer, _gold_answers(ground_truth), _guarded)
        if quick is not None:
            return quick
        answer = extracted.answer or ""
        golds = _gold_answers(ground_truth)
        if reason := _parse_guard(answer):
            return verdict(False, answer, guard=reason)
        if not _right(answer, golds):
            return verdict(False, answer)
        if _called_right(extracted, golds):  # "... Hmm, $\\frac{1}{4}$ is wrong."
            return verdict(False, answer, hedged=True)
        also = extracted.extra.get(ALSO_OFFERED) or ()
        if not all(_offered_right(value, golds) for value in also):
            return verdict(False, answer, hedged=True)  # two final answers, one of them wrong
        return verdict(True, answer)


_BLANK_RUN = re.compile(r"\s{2,}")


def _one_blank(text: str) -> str:
    """A run of blanks as one, as TeX sets it: a blank line where the run held two line
    breaks or more (a paragraph's end, which math-verify's "answer is" pattern does not
    cross: "is: \\n\\n800 + 720 = 1520" reads 1520, "is:\\n800 + ..." reads 800), a line
    break where it held one (a passage's lines stay lines), else a space.
    math-verify's normalisation (a units pattern over ``\\s*``) is quadratic in a run's
    length: seconds over a few thousand newlines, carriage returns or spaces."""
    return _BLANK_RUN.sub(_blank_as, text)


def _blank_as(run: re.Match[str]) -> str:
    breaks = _LINE_BREAK.findall(run.group())
    return "\n\n" if len(breaks) > 1 else "\n" if breaks else " "


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


_TAGS_AND_DELIMITERS = re.compile(r"</?answer>|\$|\\[()\[\]]")


def _questioned(gold: str) -> bool:
    return gold.rstrip().endswith(("?", _answer.QUESTIONED))


def _offered_right(value: str, golds: tuple[str, ...]) -> bool:
    """An answer offered beside the final one: right, and plainly stated (not "7?", not
    "at least 7": math-verify drops such words as a unit)."""
    return (
        _latex.value_qualifier(value) is None
        and not _marked_unlike_golds(value, golds)
        and _right(value, golds)
    )


def _marked_unlike_golds(answer: str, golds: tuple[str, ...]) -> bool:
    """Whether ``answer`` opens with a mark that is no value notation (``x \\ll 18``, ``≲
    18``: :func:`~rewardkit.verifiers._latex.unknown_first`) or is a number with a
    subscript (``18_8``, ``18₂``), where no gold does the same: it says something other
    than the value, which math-verify reads alone."""
    if _latex.unknown_first(answer) and not any(map(_latex.unknown_first, golds)):
        return True
    return _latex.subscripted_number(answer) and not any("_" in gold for gold in golds)


def _right(answer: str, golds: tuple[str, ...]) -> bool:
    if _parse_guard(answer):
        return False  # (check says why first, for the final answer)
    return any(
        not _labels_conflict(answer, gold) and _math_verify_equal(gold, answer) for gold in golds
    )


# --- quick decisions ----------------------------------------------------------------


Decision = tuple[bool | None, str | None]
"""(True/False, or None for "math-verify decides"; the guard that decided, or None)."""


def _quick_verdict(
    answer: str, golds: tuple[str, ...], decide: Callable[[str, str], Decision]
) -> Verdict | None:
    """Equal to any gold: 1; shown different from every gold: 0; else None."""
    decisions = [decide(answer, gold) for gold in golds]
    guards = [reason for _, reason in decisions if reason]
    extra = {"guard": guards[0]} if guards else {}
    if any(decided is True for decided, _ in decisions):
        return verdict(True, answer, **extra)
    if all(decided is False for decided, _ in decisions):
        return verdict(False, answer, **extra)
    return None


def _guarded(answer: str, gold: str) -> Decision:
    """Only the structural guards: a guarded pair is decided by string equality alone."""
    pred, ref = _latex.normalise(answer), _latex.normalise(gold)
    reason = _latex.guard_reason(pred) or _latex.guard_reason(ref) or _parse_guard(pred, ref)
    return (_same_text(answer, gold, pred, ref), reason) if reason else (None, None)


def _parse_guard(*texts: str) -> str | None:
    """:func:`~rewardkit.verifiers._latex.parse_guard_reason` of the first text that has one."""
    return next(filter(None, map(_latex.parse_guard_reason, texts)), None)


def _same_text(answer: str, gold: str, pred: str, ref: str) -> bool:
    """A guarded pair's verdict: the same normalised text, and as many percent signs
    (normalising drops them: ``9^{9^{9}}\\%`` is no ``9^{9^{9}}``)."""
    return pred == ref and _percents(answer) == _percents(gold)


@functools.lru_cache(maxsize=1024)
def _decide(answer: str, gold: str) -> Decision:
    """Decide one raw (answer, gold) pair inline, or (None, None) for math-verify.

    Sound by construction: True only when both sides read completely into equal values.
    Cached: a group's rollouts share the gold and often the answer.
    """
    if (letters := _same_letters(answer, gold)) is not None:
        return letters, None
    pred, ref = _prepare(answer), _prepare(gold)
    if pred is None or ref is None:
        return _guarded(answer, gold)
    reason = _latex.guard_reason(pred) or _latex.guard_reason(ref)
    if reason:  # by the same text as with fast paths off ("y = 9^{9^9}" is 9^{9^9})
        return _same_text(answer, gold, _latex.normalise(answer), _latex.normalise(gold)), reason
    label, rest = _latex.choice_label(pred)
    if label and not rest and _letters(answer) > 1:
        return None, None  # "(A)\text{ B}", "A\text{ or B}": a second letter dropped as a unit
    if _dropped_a_word(answer, pred, ref):
        return None, None  # "\text{yes}\text{ no}" against "yes": a word dropped as a unit
    decided = _decide_prepared(pred, ref)
    if decided is None and (reason := _parse_guard(pred, ref)):  # not for math-verify either
        return _same_text(answer, gold, _latex.normalise(answer), _latex.normalise(gold)), reason
    if decided and _radians_in_degrees(answer, gold, pred + ref):
        return False, None  # "\frac{\pi}{4}^\circ" is a quarter of pi degrees, no pi/4 radians
    if _percents_elsewhere(answer, gold, pred + ref):
        return None, None  # "1.5\%, 12" against "1.5, 12\%": the signs on other items
    if decided is not None and _percents(answer) != _percents(gold):
        # Normalising dropped a percent sign that only one side has. Percents on both sides
        # ("45%" against "55%") compare as their numbers. "5%" against "0.05": math-verify
        # decides. "150%" against "150": see _whole_percent; any other, math-verify decides.
        if decided is False or not _whole_percent(answer, gold):
            return None, None
    return decided, None


def _dropped_a_word(answer: str, pred: str, ref: str) -> bool:
    """Normalising dropped a trailing "unit" that may be another answer: an option letter
    against a gold of letters (``\\text{A,C}\\text{ plus D}``), or any word against a gold
    that is a word (``\\text{Monday}\\text{ Tuesday}``, ``\\text{yes}\\text{ no}``)."""
    if _letters(ref) and _letters(answer) > _letters(pred):
        return True
    return ref.isalpha() and _word_letters(answer) > _word_letters(pred)


def _word_letters(text: str) -> int:
    """How many letters ``text`` holds outside command names."""
    return len(_LETTER.findall(_COMMAND.sub("", text)))


_LETTER = re.compile(r"[A-Za-z]")


def _radians_in_degrees(answer: str, gold: str, prepared: str) -> bool:
    """A value in pi with a degree sign (or the word) on one side only: another angle.
    Normalising drops the sign, and math-verify drops it as a unit (so it credits
    ``\\frac{\\pi}{4}^\\circ`` against pi/4); ``30^\\circ`` against 30 stays equal."""
    return "\\pi" in prepared and _latex.degree_signs(answer) != _latex.degree_signs(gold)


def _same_letters(answer: str, gold: str) -> bool | None:
    """A multi-select gold (``\\text{A,B,C,D}``: MATH's "enter the letters, separated by
    commas") against an answer listing letters: the same set of letters, in any order, is
    right; a subset, a superset, other letters or letters offered as alternatives (``A or
    C``: a hedge, which math-verify credited) are wrong. None (the other rules decide)
    unless the gold lists at least two distinct letters and the answer is a list of
    distinct letters and nothing else (``A B C D``, ``ABCD`` or added words are not)."""
    ref = _letter_list(gold)
    if ref is None or len(ref) < 2 or len(set(ref)) != len(ref):
        return None
    if _letter_list(answer, _LETTER_ALTERNATIVES) is not None and " or " in answer:
        return False
    pred = _letter_list(answer)
    if pred is None or len(set(pred)) != len(pred):
        return None
    return set(pred) == set(ref)


def _letter_list(text: str, separator: re.Pattern[str] | None = None) -> list[str] | None:
    """``A, B, C, D``, ``$A$; $B$``, ``\\text{A,B}``, ``(A), (C)``, ``\\{A, C\\}``, ``A, B
    and C``: the letters; None for anything else. ``separator``: another list separator."""
    if len(text) > 200:
        return None
    plain = _LETTER_NOISE.sub(" ", _LETTER_WRAPPER.sub(r"\1", text.replace("$", "")))
    plain = plain.strip().rstrip(".").strip()
    if plain.startswith("\\{") and plain.endswith("\\}"):
        plain = plain[2:-2]  # a set of letters
    items = (separator or _LETTER_SEPARATOR).split(plain.strip())
    matches = [_LETTER_ITEM.fullmatch(item) for item in items]
    letters = [match.group(1) or match.group(2) for match in matches if match]
    return letters if len(letters) == len(items) else None


_LETTER_WRAPPER = re.compile(r"\\(?:text(?:bf|rm|normal)?|mbox|mathrm)\s?\{([^{}]*)\}")
_LETTER_NOISE = re.compile(r"\\[,;: ]|~|\\q?quad(?![A-Za-z])")
_LETTER_SEPARATOR = re.compile(r"\s*[,;]\s*(?:and\s+)?|\s+and\s+")
_LETTER_ALTERNATIVES = re.compile(r"\s*[,;]\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+")
_LETTER_ITEM = re.compile(r"\(([A-Z])\)|([A-Z])\)?")  # "(A)", "A)", "A"


def _letters(answer: str) -> int:
    """How many option letters (A-E) the raw answer holds outside command names."""
    return len(_OPTION_LETTER.findall(_COMMAND.sub("", answer)))


def _whole_percent(answer: str, gold: str) -> bool:
    """``150\\%`` against ``150``: the side with more percent signs is a plain whole number
    above 1 and one sign, the other side that number alone. The only "N%" against N that
    math-verify credits (both sympy Integers: ``1.5\\%``, ``-12\\%``, ``150.0\\%`` and
    ``155\\text{rad}\\%`` against the bare number are 0 to it), and no probability
    misread (``1\\%`` against 1: math-verify decides)."""
    marked, bare = (answer, gold) if _percents(answer) > _percents(gold) else (gold, answer)
    number = _WHOLE_PERCENT.fullmatch(marked)
    return number is not None and bare.strip() == number.group(1)


_WHOLE_PERCENT = re.compile(r"\s*([2-9]|[1-9]\d+)\s*\\?%\s*")


def _percents_elsewhere(answer: str, gold: str, prepared: str) -> bool:
    """As many percent signs on both sides, in a list, tuple or set, but not after the same
    items (normalising drops them: ``1.5\\%, 12`` read as ``1.5, 12\\%``, and ``50\\%, 0.01``
    as no ``0.5, 1\\%``). Single values compare as their numbers, as before."""
    count = _percents(answer)
    if not count or count != _percents(gold) or not _LISTED.search(prepared):
        return False
    return _with_marks(answer) != _with_marks(gold)


def _with_marks(text: str) -> str:
    """``text`` normalised with its percent signs kept (as ``†``, which it leaves alone)."""
    return _latex.normalise(_PERCENT_SIGN.sub("†", _latex.PERCENT_WORD.sub("†", text)))


_PERCENT_SIGN = re.compile(r"\\?%")


_LISTED = re.compile(r"[,;]")


def _percents(text: str) -> int:
    """Percent signs, with the words math-verify turns into one (``0.5\\text{percent}`` is
    0.5% to it, ``0.5\\text{ percent}`` a unit dropped: 0.5)."""
    return text.count("%") + len(_latex.PERCENT_WORD.findall(text))


@functools.lru_cache(maxsize=1024)
def _prepare(answer: str) -> str | None:
    return _numeric.prepare(answer)


def _decide_prepared(pred: str, gold: str) -> bool | None:
    if pred == gold:
        return True
    gold_letter, gold_rest = _latex.choice_label(gold)
    pred_letter, pred_rest = _latex.choice_label(pred)
    if pred_letter and _OTHER_LABEL.search(pred_rest):
        return False  # "(A) or (B)", "(A)(B)": two options offered, a hedge
    if pred_letter and pred_rest[:1] in (";", ","):
        return None  # "(A), B": a list, math-verify decides
    if pred_letter and _OPTION_LETTER.search(_COMMAND.sub("", pred_rest)):
        return None  # "(A) B", "(A)E": another option's letter after the label
    if gold_letter and pred_letter and gold_letter != pred_letter:
        return False  # "(D) 12" against "(C) 12": another option, whatever its value
    if gold_letter and not gold_rest:  # a letter answer: only the letter counts
        if pred_letter is None and _LOOSE_LABEL.fullmatch(pred):
            return None  # "b", "(c)", "\\{C\\}" against "B": math-verify reads these letters
        return pred_letter == gold_letter
    if gold_letter and pred_letter == gold_letter and not pred_rest:
        return True  # "(C)" against "(C) 12": the option named, without its value
    if pred_letter and pred_rest:  # "(C) 12" against "12": the value counts
        return _decide_prepared(pred_rest, gold)
    pred_number = _latex.exact_number(pred)
    gold_number = _latex.exact_number(gold)
    if pred_number is not None and gold_number is not None:
        return _same_number(pred_number, gold_number, inexact="." in pred + gold)
    return _numeric.compare(pred, gold)


_ALTERNATIVE = re.compile(
    r"\\(?:vee|lor)(?![A-Za-z])"
    r"|\((?:\s|\\text\s?\{|\\mathrm\s?\{|\\ )*(?:or|maybe|possibly|perhaps|alternatively)\b",
    re.IGNORECASE,
)


_RELATION = re.compile(
    r"\\(?:neq?|neg|lnot|not|[lg]eq?|[lg]eqslant|[lg]t|nless|ngtr)(?![A-Za-z])|[>!]|<(?![^>]*>)"
)
_RELATION_FIRST = re.compile(r"\s*(?:" + _RELATION.pattern + ")")
"""An answer opening with a relation or a negation, no left side: ``\\neq 12``, ``< 12``
and ``\\neg 12`` say "not 12" or "less than 12"; math-verify reads them as 12. Refused
only against a gold holding no relation (``\\geq 2`` against ``x \\ge 2`` is math-verify's)."""


_NOT_EQUAL = re.compile(
    r"\s*(?:[A-Za-z](?:_\{?[A-Za-z0-9]{1,3}\}?)?\s*)?"
    r"(?:\\(?:approx|sim|simeq|cong|propto|to|rightarrow|longrightarrow|mapsto|ne|neq|nleq|ngeq"
    r"|nleqslant|ngeqslant|nless|ngtr|nsim|ncong)(?![A-Za-z])|\\not\s{0,3}=|[≈≠∼≃≅→↦])"
    r"|.*(?:\\(?:ldots|cdots|dots)|\.\.\.|…)\s*$",
    re.DOTALL,
)
"""An answer that opens with a relation other than "=" (a name may come first) or ends
in "...": ``\\approx 18``, ``x \\to 18``, ``n \\not= 18``, ``18\\ldots``. Each says the
value is not (exactly) what follows; math-verify reads the number. Refused against a gold
holding no relation (``3.14 \\approx 3.1``, the value first, is the 3.14)."""


def _side_by_side(answer: str) -> bool:
    """Values set side by side with no comma (``\\frac{3}{2} \\hspace{1em} \\frac{1}{2}``,
    :func:`~rewardkit.verifiers._final.values_side_by_side`): math-verify drops the
    spacing and reads the last one, or their product."""
    return "," not in answer and values_side_by_side(answer) is not None


def _offers_alternatives(answer: str) -> bool:
    """``3 \\vee 4``, ``3 (or 4)``: one box offering two values. math-verify reads the
    last one (so the alternative would be credited), our list reading does not apply."""
    return _ALTERNATIVE.search(answer) is not None


# Integers apart by a TeX space ("2\,3", "2~3", "2\quad 3") that are no thousands
# groups nor a mixed number ("2\,3/4", "2\,\frac34"): two numbers shown, which
# math-verify summed (2\,3 was 5) or multiplied (1\>000 was 0). Plain spaces are not
# TeX spaces in math mode.
_SPACED_INTEGERS = re.compile(
    r"(?<![\d.,])\d+\s*(?:(?:\\[,;:> ]|~|\\q?quad(?![A-Za-z]))\s*)+\d+(?![\d.,/]|\s*\\[dt]?frac)"
)


def _spaced_integers(answer: str) -> bool:
    """Whether ``answer`` shows two integers apart by a TeX space (see _SPACED_INTEGERS),
    or two numbers apart by plain spaces (see _PLAIN_SPACED_NUMBERS)."""
    if len(answer) > _latex.MAX_BOX_CHARS:
        return False
    braced = _FRAC_DIGITS.sub(r"\\frac{\1}{\2}", answer)  # "\frac 1 2" is TeX's 1/2
    ungrouped = _SPACE_THOUSANDS.sub(_ungrouped, _THIN_THOUSANDS.sub(_ungrouped, braced))
    return bool(_SPACED_INTEGERS.search(ungrouped) or _PLAIN_SPACED_NUMBERS.search(ungrouped))


# A fraction whose arguments are single digits, unbraced: TeX takes one token each. Not
# when a number follows ("\frac 1 2 3" shows 1/2 and 3, two numbers; so does "\frac 12 3")
_FRAC_DIGITS = re.compile(r"\\[dtc]?frac\s*(\d)\s*(\d)(?!\s*[\d.])")


# Numbers apart by plain spaces that are no thousands groups ("200 000") nor a mixed number
# ("4 4/9", "2 \frac12"): "2 3" shows 23 in math mode and two numbers in text, never the
# 5 that math-verify read (it summed them; "12 0" was 0, a product)
_PLAIN_SPACED_NUMBERS = re.compile(
    r"(?<![\d.,])\d+(?:\.\d+)? +\d+(?:\.\d+)?(?![\d.,/]| *(?:/|\\[dt]?frac))"
)


_LOOSE_LABEL = re.compile(
    r"\(?[a-e]\)?|[A-E]|\\?\{[A-Ea-e]\\?\}|\[[A-Ea-e]\]|\{\([A-Ea-e]\)\}"
    r"|\\(?:boxed|fbox)\{\(?[A-Ea-e]\)?\}|[a-zA-Z]=\(?[A-Ea-e]\)?"
)
"""A letter written another way than ``(C)``: lower case, in braces or brackets, boxed
again, or named (``x=C``): math-verify reads the letter in these."""

_OTHER_LABEL = re.compile(r"\([A-Ea-e]\)")
_OPTION_LETTER = re.compile(r"[A-E]")
_COMMAND = re.compile(r"\\[A-Za-z]+")
"""A second option label after the first: ``(A)or(B)``."""


def _labels_conflict(answer: str, gold: str) -> bool:
    """Both name an option and not the same one (math-verify compares the values only)."""
    pred_letter, _ = _latex.choice_label(_latex.normalise(answer))
    gold_letter, _ = _latex.choice_label(_latex.normalise(gold))
    return bool(pred_letter and gold_letter and pred_letter != gold_letter)


def _same_number(pred: Fraction, gold: Fraction, *, inexact: bool) -> bool | None:
    """Exact; a decimal near a different value is math-verify's (it rounds: 0.3333333 = 1/3)."""
    if pred == gold:
        return True
    if inexact and _numeric.near_enough_to_defer(pred, gold):
        return None
    return False


def _gold_answers(ground_truth: Any) -> tuple[str, ...]:
    """Reference answers; a full solution is reduced to its boxes (several: one multi-part answer).

    A reference that normalises to nothing (``\\text{}``, ``$``, ``\\,``) is an unusable row,
    as an empty one is: compared, it would equal junk answers such as ``\\boxed{.}``.
    """
    golds = tuple(_answer.gold_answer(gold) for gold in gold_strings(ground_truth, "math"))
    for gold in golds:
        if not _latex.normalise(gold):
            raise InvalidSampleError(f"math: ground_truth {gold[:60]!r} is blank once normalised")
    return golds


# --- math-verify ----------------------------------------------------------------------


def warm_up() -> None:
    """Load math-verify, sympy, the LaTeX grammar and the extraction regexes, and parse
    :data:`~rewardkit.verifiers._warm_corpus.LATEX` both ways a row is parsed (an answer,
    a fallback passage). Called in the worker fork server: every worker forks with the
    parser's predictions made once, instead of each learning them on its own rows (see
    :mod:`~rewardkit.verifiers._warm_corpus`; about a second, once per process)."""
    _math_verify_equal("\\frac{1}{2}", "0.5")
    # sympy's simplify imports its units tables on first use (0.1-0.2 s): a comparison
    # only simplify decides, so that no worker pays it on its first wrong answer.
    _verify(_parse_gold("1"), _parse("\\sin^2 x + \\cos^2 x"))
    for text in _warm_corpus.LATEX:
        try:
            _parse(text.strip("$"))
            _parse_passage(text)
        except Exception:  # a warm-up that fails costs speed, never the pool
            continue


_MV_TIMEOUT_NOTICE = "Timeout is disabled"


def _quiet_timeout_notice(record: logging.LogRecord) -> bool:
    """math-verify warns once per process that we disabled its timeouts; we mean to."""
    return _MV_TIMEOUT_NOTICE not in record.getMessage()


@functools.cache
def _math_verify() -> Any:
    """Import math-verify (and sympy) on first use: only workers pay for it."""
    import math_verify
    from latex2sympy2_extended import NormalizationConfig

    for name in ("math_verify.parser", "math_verify.grader"):
        logging.getLogger(name).addFilter(_quiet_timeout_notice)
    _two_stage.install()  # SLL prediction first: the same parses, faster (see the module)
    _digit_numbers.install()  # "16" read as Integer(16), not by sympy's expression parser
    latex = math_verify.LatexExtractionConfig(
        boxed_match_priority=0,
        normalization_config=NormalizationConfig(
            basic_latex=True,  # \left, \mathrm, \dfrac, \!, quotes, "and"/"or" lists
            units=True,  # "5 cm", "\text{ dollars}", "30^\circ"
            malformed_operators=True,  # \frac12, \sqrt3, 1/2
            nits=True,
            boxed="all",
            equations=False,  # relations are handled by the parser ("x = 3" vs "3")
        ),
    )
    return math_verify, [latex, math_verify.ExprExtractionConfig()]


@functools.lru_cache(maxsize=4096)
def _parse_gold(gold: str) -> tuple[Any, ...]:
    """The parsed reference: a prompt's rollouts (and repeated epochs) share it."""
    return tuple(_parse(gold))


def _parse(answer: str) -> list[Any]:
    math_verify, config = _math_verify()
    return math_verify.parse(
        "\\boxed{" + _for_math_verify(answer) + "}",
        extraction_config=config,
        parsing_timeout=None,  # the worker is killed at the hard limit instead
    )


def _for_math_verify(answer: str) -> str:
    """Undo what math-verify's own normalisation does not: AMC labels, ``{,}``, U+2212,
    and the typesetting the inline path reads as TeX renders it (math-verify fails to
    parse it, and so scored ``-~5`` and ``30°`` wrong): ``~``, ``\\>`` and other spaces,
    ``\\big`` sizes, ``\\textstyle``, empty ``\\mbox{}``, a trailing ``\\right``, ``°`` and
    ``\\degree`` after a value; spacing before a decimal point, which math-verify read
    as a product (``3\\,.5`` was 1.5); a degree or percent sign after a whole group, put
    on each item (it read ``(99, 60)\\%`` as 60); ``\\textendash`` as the dash it shows.
    A run of blanks is one space, as TeX sets it (math-verify's own normalisation took
    seconds over a run of thousands)."""
    answer = _one_blank(answer)
    label, rest = _latex.choice_label(_latex.normalise(answer))
    if label and rest:
        return rest
    text = _THIN_THOUSANDS.sub(_ungrouped, _EDGE_PHANTOM.sub("", answer))
    text = _SPACE_THOUSANDS.sub(_ungrouped, text)
    text = _TYPESETTING.sub(_typeset_as, text.replace("{,}", ",").replace("\u2212", "-"))
    text = _DEGREE_BEFORE_POINT.sub(r"\\text{deg}", _BEFORE_POINT.sub("", text))
    text = _TEXT_DASH_COMMAND.sub(r"\\text{--}", _DEGREE_SIGN.sub("^{\\\\circ}", text))
    text = _one_blank(text)  # the spaces typesetting became ("~~~", "\\quad\\quad")
    return _latex.distribute_marks(_labels_in_order(text))


def _labels_in_order(answer: str) -> str:
    """Labelled values put in their labels' order: math-verify reads ``y = 3, x = -1``
    (and ``(y, x) = (3, -1)``) as the tuple ``(3, -1)``, in written order, though it
    says ``(x, y) = (-1, 3)``. Only for labels whose order is conventional (:data:`_ORDERS`:
    ``x, y, z``; ``a, b, c, d``; ``p, q``; ``h, k``; ``m, n``; ``r, s``; ``u, v, w``; one
    letter with subscripts 1, 2, ...): ``r, \\theta`` or ``m, b`` are left as written."""
    pairs = _labelled(answer)
    if pairs is None:
        return answer
    labels = [label for label, _ in pairs]
    order = _label_order(labels)
    if order is None or order == labels:
        return answer
    values = dict(pairs)
    return ", ".join(f"{label} = {values[label]}" for label in order)


def _labelled(answer: str) -> list[tuple[str, str]] | None:
    """``[(label, value), ...]`` for ``L1 = V1, L2 = V2, ...`` (commas, semicolons or
    "and" between) or ``(L1, L2, ...) = (V1, V2, ...)``; None for anything else."""
    text = _AND_BETWEEN.sub(",", answer.replace("$", "")).strip()
    tuple_form = _LABEL_TUPLE.fullmatch(text)
    if tuple_form:
        labels = [item.strip() for item in tuple_form.group(1).split(",")]
        group = _OUTER_PARENS.fullmatch(tuple_form.group(2).strip())
        values = _top_level_items(group.group(1)) if group else []
        if len(labels) != len(values) or not all(_LABEL.fullmatch(x) for x in labels):
            return None
        return list(zip(labels, (value.strip() for value in values), strict=True))
    pairs = []
    for item in _top_level_items(text.replace(";", ",")):
        label, equals, value = item.partition("=")
        label, value = label.strip(), value.strip()
        if not equals or not value or "=" in value or not _LABEL.fullmatch(label):
            return None
        pairs.append((label, value))
    return pairs if len(pairs) >= 2 else None


def _top_level_items(text: str) -> list[str]:
    """``text`` split at its commas outside brackets (not at ``\\,``, a thin space)."""
    items, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0 and text[at - 1 : at] != "\\":
            items.append(text[start:at])
            start = at + 1
    return [*items, text[start:]]


def _label_order(labels: list[str]) -> list[str] | None:
    """``labels`` in their conventional order, or None when they have none known."""
    if len(set(labels)) != len(labels):
        return None
    subscripted = [_SUBSCRIPTED.fullmatch(label) for label in labels]
    if all(subscripted) and len({m.group(1) for m in subscripted if m}) == 1:
        return sorted(labels, key=lambda label: int(_SUBSCRIPTED.fullmatch(label).group(2)))  # type: ignore[union-attr]
    for order in _ORDERS:
        if set(labels) <= set(order):
            return sorted(labels, key=order.index)
    return None


_ORDERS = ("xyz", "abcd", "pq", "hk", "mn", "rs", "uvw", "ABCD")
_LABEL = re.compile(r"[A-Za-z](?:_\{?\d{1,2}\}?)?")
_SUBSCRIPTED = re.compile(r"([A-Za-z])_\{?(\d{1,2})\}?")
_LABEL_TUPLE = re.compile(  # possessive blanks: "(" and 500 spaces took a second
    r"\\?(?:left)?\(\s*+([A-Za-z_{}\d\s,]+?)\s*+\\?(?:right)?\)\s*=\s*(.+)"
)
_OUTER_PARENS = re.compile(r"(?:\\left)?\((.*?)(?:\\right)?\)", re.S)
# starts where a blank run starts (or at no blank): searched from inside a long run of
# blanks, the leading \s* rescanned the rest of the run from every position (quadratic)
_AND_BETWEEN = re.compile(r"(?<!\s)\s*+(?:\\text\s?\{\s*and\s*\}|\\quad|\band\b)\s*")


# "\textendash 3" shows "–3": math-verify dropped the command and read 3 (as it reads
# "\text{--}3", the same dash, as no number)
_TEXT_DASH_COMMAND = re.compile(r"\\text(?:en|em)dash(?![A-Za-z])")
# Spacing between a digit and a decimal part: math-verify reads "3 .5" as 3 times 0.5 (it
# writes " ." as " 0."), so "3\,.5" equalled 1.5; TeX shows 3 .5. A degree sign there
# ("3^\circ.5") becomes a symbol, so that the value is no number at all.
_BEFORE_POINT = re.compile(r"(?<=\d)(?:\s|\$|~|\\[,;:!> ]|\\q?quad(?![A-Za-z]))+(?=\.\d)")
_DEGREE_BEFORE_POINT = re.compile(
    r"(?<=\d)\s?(?:\^\s?\{?\s?\\circ\s?\}?|°|\\degree(?![A-Za-z]))\s?(?=\.\d)"
)


# "1\,000", "12\,345\,678": SI thin-space thousands groups (math-verify read 1*0); a
# group needs three digits and a leading group no 0, so "3\,4" and "0\,001" stay its call
_THIN_THOUSANDS = re.compile(r"(?<![\d.,\\])[1-9]\d{0,2}(?:\\,\d{3})+(?![\d,]|\\,)")
# "200 000": the same groups apart by plain spaces, as a real output wrote 200000 (mv read
# 0); math mode shows them joined, a text reader as a number. Only ASCII spaces: "1\>000"
# stays two numbers, and so does a group after a space ("12 1 000")
_SPACE_THOUSANDS = re.compile(r"(?<![\d.,\\])(?<![\d.] )[1-9]\d{0,2}(?: \d{3})+(?!\d|,\d| \d)")
# A \phantom first or last in an answer is blank padding (math-verify read \phantom{3}4
# as 7); one between values is left alone: TeX shows a gap there, not nothing
_EDGE_PHANTOM = re.compile(
    r"^\s*\\[hv]?phantom\s?\{[^{}]{0,64}\}|\\[hv]?phantom\s?\{[^{}]{0,64}\}\s*$"
)


def _ungrouped(match: re.Match[str]) -> str:
    return match.group().replace("\\,", "").replace(" ", "")


_TYPESETTING = re.compile(
    # a tie (not "~=", math-verify's approx), \>, Unicode spaces; not before a "." that
    # math-verify would read as "0." ("3 .5" is 3 times 0.5 to it)
    r"(?:~(?!=)|\\>|[^\S\n\t ])(?![\s~]{0,16}\.)"
    r"|\\textstyle(?![A-Za-z])|\\(?:big|Big|bigg|Bigg)(?=\s*(?:[()\[\]|]|\\[{}|]))"  # \big(
    r"|\\(?:text(?:bf|it|rm|normal)?|mbox|math(?:rm|bf|it))\s?\{\s*\}"
    r"|\\right\s*$"  # "20 \right": a box cut inside \left( ... \right)
)
# A degree sign after a value (at the end, or ending an item): "x°2" is no x degrees times 2
_DEGREE_SIGN = re.compile(
    r"(?:\^\s?)?(?:°|\\degree(?![A-Za-z]))(?=\s*(?:$|[,;)\]}]|\\text|\\right))"
)


def _typeset_as(match: re.Match[str]) -> str:
    """A space for spacing, nothing for a size or an empty wrapper (as math-verify drops
    ``\\text{ }``), but a space between letters (``\\t\\mbox{}ext`` is no ``\\text``)."""
    token, text = match.group(), match.string
    if token in ("~", "\\>") or token.isspace():
        return " "
    between_letters = (
        text[match.start() - 1 : match.start()].isalpha()
        and text[match.end() : match.end() + 1].isalpha()
    )
    return " " if between_letters else ""


def _called_right(extracted: Extracted, golds: tuple[str, ...]) -> bool:
    """Whether the value the response's last sentence called wrong
    (:data:`~rewardkit.verifiers.base.CALLED_WRONG`) is a gold: asked of an answer shown
    right, it says whether the response called its own answer wrong (math-verify's
    reading of a passage, ``(5 × 4) / (2 × 1) = 10``, has no text to compare)."""
    wrong = extracted.extra.get(CALLED_WRONG)
    return isinstance(wrong, str) and _right(wrong.strip("$"), golds)


def _math_verify_equal(gold: str, answer: str) -> bool:
    return _verify(_parse_gold(gold), _parsed(answer))


@functools.lru_cache(maxsize=64)
def _parsed(answer: str) -> tuple[Any, ...]:
    """An answer parsed once for all the golds of its row (a list of references parsed
    it once per reference)."""
    return tuple(_parse(answer))


def _verify(golds: Sequence[Any], found: Sequence[Any]) -> bool:
    """math-verify's ``verify(golds, found)``: any (gold, prediction) pair equal. A pair
    shown different by :mod:`~rewardkit.verifiers._differ` skips the call, whose
    ``simplify`` is most of what a wrong answer costs; the verdict is the same."""
    math_verify, _ = _math_verify()
    return any(
        not _differ.surely_different(gold, pred)
        and math_verify.verify(
            [gold],
            [pred],
            timeout_seconds=None,  # see _parse
            raise_on_error=False,  # a comparison sympy cannot make is "not shown equal"
        )
        for gold in golds
        for pred in found
    )


def _is_passage(extracted: Extracted) -> bool:
    """The fallback's text, from which math-verify's own extraction picks the answer."""
    return extracted.answer is not None and extracted.extra.get("source") == "expression"


def _expression_verdict(
    passage: str, golds: tuple[str, ...], decimals: Decimals = "exact"
) -> Verdict:
    """The fallback: math-verify extracts the answer from the end of the response as
    verl's ``math_verify`` scorer does (its default LaTeX and expression configs); a
    decimal it reads is held to the gold exactly, as a boxed one is. A run of blanks
    is one space, as TeX sets it (:func:`_for_math_verify`), and a sentence's full stop
    set inside display math is the sentence's (``$$\\frac{3}{4}.$$``: math-verify reads
    no value from ``\\frac{3}{4}.``)."""
    passage = _DISPLAY.sub(_without_stop, _one_blank(passage))
    found = _parse_passage(passage)
    pred = next((item for item in reversed(found) if isinstance(item, str)), None)
    if pred is not None and (reason := _parse_guard(pred)):
        return verdict(False, pred, source="expression", guard=reason)  # what it read: deep
    if pred is not None and _changed(passage, pred):
        return verdict(False, pred, source="expression", multiplied=True)
    if decimals == "exact" and pred is not None and not _exact_decimal(pred, golds):
        return verdict(False, pred, source="expression", inexact=True)
    if pred is not None and _labels_in_order(pred) != pred:
        found = _parse(pred)  # "$y = 3, x = -1$": read as (x, y), not in written order
    correct = any(_verify(_parse_gold(gold), found) for gold in golds)
    return verdict(correct, pred, source="expression")


def _without_stop(display: re.Match[str]) -> str:
    """A display formula holding one value (no relation: math-verify reads a relation's
    right side, stop or not) less the punctuation that ends the sentence in it."""
    body = display.group("body")
    if _RELATION_SIGN.search(body):
        return display.group()
    return display.group("open") + _DISPLAY_STOP.sub("", body) + display.group("close")


_DISPLAY = re.compile(r"(?s)(?P<open>\$\$|\\\[)(?P<body>.{1,400}?)(?P<close>\$\$|\\\])")
# Punctuation that ends display math: "\\frac{3}{4}.$$", "\\sqrt{2}.\n\\]", "\\frac{3}{4}\\,.\\]"
# (not a decimal's point: "0.5$$" has a digit after it)
_DISPLAY_STOP = re.compile(r"(?:\s|\\[,;:!])*[.,;](?:\s|\\[,;:!])*\Z")
_RELATION_SIGN = re.compile(r"[=<>]|\\(?:[a-z]{0,3}eq|approx|sim|to|in|[lg]t)(?![A-Za-z])")


def _changed(passage: str, pred: str) -> bool:
    """Whether the value math-verify read, where it last stands in the passage, is
    followed by a factor (:func:`~rewardkit.verifiers._latex.factor_first`), or by words
    that change or qualify it (:func:`~rewardkit.verifiers._latex.qualifying_words`), or
    preceded by words that do (:func:`~rewardkit.verifiers._latex.changes_before`): its
    expression extraction reads 27 from "The area is 27π.", 2 from "x = 2y", 27 from
    "27 to the power 2", "27 plus or minus 1" and "the square of 27"."""
    at = passage.rfind(pred)
    if at < 0:
        return False
    before = passage[max(0, at - 30) : at].rstrip(" \t$")
    after = passage[at + len(pred) : at + len(pred) + 40]
    return (
        _latex.factor_first(after[:8])
        or bool(_FACTOR_BEFORE.search(before[-8:]))
        or _latex.changes_before(before)  # "the square of 27", "negative 27"
        or _latex.qualifying_words(after.split(".")[0].split("\n")[0])
        or _latex.qualifying_words(after[:4])  # "18... apples": trailing off
    )


# what makes the value read after it part of a product: "2√2" read as its 2, "x^2" as 2
_FACTOR_BEFORE = re.compile(r"[√∛∜^_]\{?$")


_DECIMAL_POINT = re.compile(r"(?<![\d.])\d*\.\d")  # "0.666667", ".5": a decimal written


def _exact_decimal(answer: str, golds: tuple[str, ...]) -> bool:
    """False when ``answer`` writes a decimal and is shown exactly equal to no gold that
    writes none (a gold decimal is compared as math-verify compares it): the decimal is
    then an approximation. Exact readings only, never a tolerance: two plain numbers as
    fractions, anything else by :mod:`~rewardkit.verifiers._numeric`'s exact values."""
    if not _DECIMAL_POINT.search(answer):
        return True
    pred = _prepare(answer)
    for gold in golds:
        if _DECIMAL_POINT.search(gold):
            return True
        ref = _prepare(gold)
        if pred is None or ref is None:
            continue
        pred_number, gold_number = _latex.exact_number(pred), _latex.exact_number(ref)
        if pred_number is not None and gold_number is not None:
            if pred_number == gold_number:
                return True
            continue
        if _numeric.compare(pred, ref) is True:
            return True
    return False


def _parse_passage(passage: str) -> list[Any]:
    """math-verify's extraction on a passage, with verl's ``math_verify`` scorer's configs."""
    math_verify, _ = _math_verify()
    return math_verify.parse(
        passage,
        extraction_config=[math_verify.ExprExtractionConfig(), math_verify.LatexExtractionConfig()],
        parsing_timeout=None,  # the worker is killed at the hard limit instead
    )
