"""GSM8K: the final number of a grade-school word problem, compared exactly.

Three ways to find the final number (``reward.verifiers.gsm8k_method``):

* ``auto`` (default): the last of ``#### n``, a boxed number (``\\boxed{18}``), "The
  answer is n" / "Answer: n" / "The final answer is n" (``答案：n``, ``答案是 n``), ``A: n``
  at a line start, and
  ``<answer> n </answer>`` (a number, perhaps with a unit word): the shapes real model
  outputs end with (few models write ``####`` unless trained to). With none of these,
  the last number of the conclusion (:mod:`~rewardkit.verifiers._final`: after the last
  ``</think>``; none when the response was truncated), as math-verify and verl's
  ``flexible`` rule read it. A tag of words ("no solution") or of a list ("3, 6, 12")
  is no number, and nothing elsewhere answers for it. A number is read with the words
  around it that qualify it ("18 or 19", "18, 19", "18 to 19", "at least 18", "not 18",
  "18 squared", "1/2"): then it is no number, never the bare 18 (or 2).
* ``strict``: verl's rule, the last ``#### n`` (exactly ``#### `` then ``-?[0-9.,]+``);
  it rewards the dataset's own format, so it also trains the format.
* ``flexible``: verl's rule, the last run of ``-?[0-9.,]+`` that is not ``.``.

In ``auto``, offering several different final numbers is *hedging*: no number
(``hedged: True``, score 0). That is another marked or boxed number, not the same value,
in the paragraph of the final one (from its last blank line or ``</think>`` on: ``####
18`` then ``#### 20``; "The answer is 18. Wait, the answer is 20."), or a box offering
several (``\\boxed{18 \\text{ or } 20}``, ``\\boxed{18 \\\\ 20}``, a box inside a box), or
words after the final number, in its paragraph or the next, offering another value or
taking the number back ("18 but it could be 20", "18.\\nOr 20.", "perhaps 20", "20 would
also work", "Alternatively, 20", "Wait, no: 20"; see ``_common.OFFER_CUE``), unless
the next paragraph ends on the number again; or a conclusion ending on a list of values
after it ("So $a = 19, 18, 20$.": ``_final.ends_on_list``); or, for a last ``<answer>``
tag no marker reads (``6\\text{ apples}``), an earlier tag of its section read the same
way holding another number; or a paragraph longer than is read with a box or marker in
the part not read. A number stated in an earlier paragraph or in the
thinking is a step on the way, unless its paragraph and the final one are only answers
(``#### 18``, a blank line, ``#### 20``; ``**18**`` then ``**20**``: a bold number alone
on its line is marked when no number follows it). "Or" in other words ("18 vs 20", "18 oder 20", "18 或 20",
Dutch "18 of 20": ``_common.OR_WORD``), and a word then another number that ends the
clause ("18 sau 20", "18 hours 30 minutes"; not "18 in 2 weeks"), qualify a number as
"or" does. The response is read as rendered (``_common.visible``: comments, struck-out
text and zero-width marks removed) in ``auto``; ``strict`` and ``flexible`` stay verl's. Markers are looked for in the
last ``MARKER_TAIL_CHARS`` of the response; ``#### 4. Verification`` is a markdown
heading, not a marker.

All compare numerically after dropping ``,`` and ``$``: ``72.00``, ``$72`` and ``72`` are
the same (verl compares the strings, so ``#### 72.00`` or ``18.`` earns it nothing). A
comma must group thousands: ``1,8`` and ``18,19`` are no number.
Everything is decided in the main process; there is no slow path.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Literal

from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers import _answer, _latex, _repetition
from rewardkit.verifiers._commitment import discussed, rejected, undercut
from rewardkit.verifiers._common import (
    ALTERNATIVE_WORD,
    ANSWER_ZH,
    CONTEXT_WORD,
    CORRECTION_CUE,
    CORRECTION_CUE_AHEAD,
    CORRECTION_GAP,
    MAX_ANSWER_CHARS,
    NUMBER_START,
    OFFER_CUE,
    OFFER_CUE_STARTS,
    OFFER_PREDICATE,
    OR_WORD,
    SECTION_CHARS,
    called_wrong,
    calls_wrong,
    denies_answer,
    disowns_answer,
    gold_strings,
    last_match,
    later_paragraphs,
    plain_number,
    rest_of_paragraph,
    section_start,
    unread_answer,
    verdict,
    visible,
)
from rewardkit.verifiers._final import (
    PLAIN_NUMBER,
    answering_texts,
    ascii_number_text,
    blank_answer,
    closing_correction,
    ends_on_list,
    last_line_values,
    last_printed,
    no_fallback,
    offered_alternative,
    printed_and_restated,
    printed_no_one_value,
    without_code,
)
from rewardkit.verifiers.base import NO_CONTEXT, Context, Extracted, Verdict, number_key

__all__ = ["GSM8KVerifier"]

Method = Literal["auto", "strict", "flexible"]
_METHODS = ("auto", "strict", "flexible")

# verl's strict rule, character for character
_VERL_STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")
# verl's flexible rule: the runs of "-?[0-9.,]+", less a "." alone (verl skips those)
_VERL_FLEXIBLE = re.compile(r"(\-[0-9.,]+|[0-9,][0-9.,]*|\.[0-9.,]+)")
# auto: a number after a marker, with an optional "$", "\$", "\(", "**" and sign before it.
# The number is atomic and must not start a calculation ("answer is 5 * 2 = 10").
_NUMBER = (
    r"((?>-?[ \t]{0,3}(?:\\\$|\$)?[ \t]{0,3}-?(?:[0-9][0-9,]*(?:\.[0-9]+)?|\.[0-9]+)(?:/[1-9][0-9]*(?![0-9.]))?))"
    r"(?![ \t]{0,2}(?:[-+/×÷·⋅∙=^]|\*(?!\*(?![ \t]{0,2}[0-9]))))"  # "**18**": bold, "2**3": a power
)
_LAST_NUMBER = PLAIN_NUMBER  # a number in prose, "$" before it allowed
_LEAD = r"[ \t]{0,3}(?:\*\*)?[ \t]{0,3}(?:\\\(|\$)?[ \t]{0,3}"
_AUTO = re.compile(
    r"####[ \t]{0,8}"
    + _NUMBER
    + r"(?![.:)]?[ \t]{1,3}[A-Z][a-z])"  # "#### 4. Verification": a markdown heading
    # "Answer: 18", "The answer is **18**", and a JSON key: '{"answer": "18", "steps": 19}'
    + r"|(?i:\banswer\b(?:[ \t]{1,3}is\b)?)[\"']?[ \t]{0,3}(?:\*\*)?[ \t]{0,3}[:：]?"
    + r"(?:[ \t]{0,3}[\"'](?=-?\d))?"
    + _LEAD
    + _NUMBER
    + r"|(?m:^[ \t]{0,8}(?:\*\*)?A:)(?:\*\*)?"
    + _LEAD
    + _NUMBER
    # "答案：18", "答案是 18": "answer" in Chinese (not the wrong one: "错误答案是 18")
    + r"|"
    + ANSWER_ZH
    + r"(?:[是为為])?[ \t]{0,3}[:：]?"
    + _LEAD
    + _NUMBER
    + r"|<answer>\s{0,8}"
    + _LEAD
    + _NUMBER
    + r"\$?(?:[ \t.]{1,4}[A-Za-z]{1,20}){0,3}[ \t.]{0,4}\s{0,4}</answer>"
)


def _may_mark(text: str) -> bool:
    """False only when :data:`_AUTO` matches nowhere in ``text``: each of its branches
    reads "####", "A:" or the word "answer" (any case; "<answer>" too) in what it
    matches. Two thirds of real responses hold none: they skip the regex, which tries
    four branches at every character. Beyond ASCII, case folding is re's ("anſwer"
    matches), so re decides."""
    if "####" in text or "A:" in text or not text.isascii():
        return True
    return "answer" in text.lower()


# a bold number alone on its line ("**18**"): an answer as plainly as a box when no number
# follows it, else a step highlighted on the way; offered in its section either way
_BOLD_NUMBER = re.compile(
    r"(?m:^)[ \t>#-]{0,8}\*\*"
    + _LEAD
    + _NUMBER
    + r"\$?(?:[ \t]{1,3}[A-Za-z]{1,20}){0,2}[ \t]{0,3}\*\*[ \t.]{0,3}(?m:$)"
)


VERL_CLIP_CHARS = 300
"""verl's gsm8k rules read only this many characters at the end of a response."""
MARKER_TAIL_CHARS = 16_000
"""``auto`` looks for marked answers in this many characters at the end of a response
(verl's own rules read only the last 300): bounded work on a 1 MB response of markers."""
# a box's words, kept as words: "18 \text{ or } 20" reads "18  or  20"
_BOX_WORDS = re.compile(r"\\(?:text(?:bf|rm|it)?|mbox|mathrm)\s?\{([^{}]{0,200})\}")


@dataclass(frozen=True, slots=True)
class GSM8KVerifier:
    """Score 1.0 when the response's final number equals the ground truth, else 0.0.

    The ground truth is the number after ``####`` (verl's parquet layout), an int or
    float, a full GSM8K solution ending in ``#### n``, or a list of acceptable answers.
    """

    reads_context: ClassVar[bool] = True  # extract(response, context): see base.Context

    method: Method = "auto"

    def __post_init__(self) -> None:
        if self.method not in _METHODS:
            raise ValueError(
                f"GSM8KVerifier method must be one of {', '.join(_METHODS)}, got {self.method!r}"
            )

    @property
    def key(self) -> str:
        return f"gsm8k:{self.method}"

    def extract(self, response: str, context: Context = NO_CONTEXT) -> Extracted:
        """The final number as written, found by :attr:`method` (bounded: the tail only).
        A degenerate response (it ends in a loop) has none, whatever the loop repeats."""
        response = _repetition.unpadded(response)
        if _repetition.degenerate(response):
            return Extracted(None, {"method": self.method, "degenerate": 1})
        if self.method == "strict":  # verl reads the last 300 characters only
            answer = _group(last_match(_VERL_STRICT, response[-VERL_CLIP_CHARS:]))
        elif self.method == "flexible":
            answer = _last_flexible(response)
        else:
            answer, hedged = _auto(response, context)
            if hedged:
                return Extracted(None, {"method": self.method, "hedged": True, "pred": answer})
        return Extracted(answer, {"method": self.method})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Always decides: numbers are compared exactly, as fractions. A comma that is
        no thousands separator (``1,8``: 1.8 in much of the world; ``18,19``: a list)
        makes no number."""
        golds = _gold_numbers(ground_truth)
        answer = extracted.answer
        value = None
        if answer is not None and ("," not in answer.rstrip(",") or _GROUPED.search(answer)):
            value = _number(answer.replace("\\", ""))
        if extracted.extra.get("hedged"):
            return verdict(False, extracted.extra.get("pred"), hedged=True)
        return verdict(value is not None and value in golds, answer)

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Same as :meth:`quick_check`; GSM8K never needs a worker."""
        return self.quick_check(extracted, ground_truth)


def _number_end(found: re.Match[str]) -> int:
    """Where the number that :func:`_group` reads ends in ``found``."""
    index = next((i for i, group in enumerate(found.groups(), 1) if group is not None), 0)
    return found.end(index)


def _group(found: re.Match[str] | None) -> str | None:
    if found is None:
        return None
    text = next((group for group in found.groups() if group is not None), found.group())
    return text.replace(" ", "").replace("\t", "")


def _last_flexible(response: str) -> str | None:
    """verl's flexible rule: the last ``-?[0-9.,]+`` that is not ``.`` alone, in the last
    300 characters."""
    found = last_match(_VERL_FLEXIBLE, response[-VERL_CLIP_CHARS:])
    return None if found is None else found.group(1)


def _auto(response: str, context: Context = NO_CONTEXT) -> tuple[str | None, bool]:
    """:func:`_auto_in` on the texts that may answer (:func:`_final.answering_texts`):
    the conclusion, then (a thinking the template opened) the whole response. A
    truncated response has only its marked and boxed numbers, never the last number."""
    found = answering_texts(response, context)
    if found.disowned or offered_alternative(found[0]):  # "Wait, that's not right.",
        return None, True  # "#### 668\n\nOr #### 667": taken back, two answers
    texts, (answer, hedged) = _without_another_called_wrong(found, context)
    if answer is not None and not hedged and _taken_back(texts[0], answer):
        return answer, True  # "#### 18 ... Actually, on reflection, $19$."
    same = lambda value: _same_number(value, answer)  # noqa: E731
    if answer is not None and not hedged and calls_wrong(texts[0], 0, same):
        return answer, True  # "... so she earns $57,500.\n\nHmm, 57500 is wrong."
    if answer is not None and not hedged and _listed_after(texts[0], answer):
        return answer, True  # "The answer is 50.\n\nSo $a = 51, 50, 52$.": candidates
    if answer is not None and not hedged and _rejected_last(texts[0], answer):
        return answer, True  # "#### 18\n\nWe can rule out 18.": taken back
    return answer, hedged


def _rejected_last(conclusion: str, answer: str) -> bool:
    """Whether the conclusion's last number is ``answer`` (or may be) and is taken back
    (:func:`rewardkit.verifiers._commitment.rejected`: ruled out, judged, doubted,
    reported; not checked nor asked: "Let's check: 2 * 9 = 18." keeps 18)."""
    value = last_match(_LAST_NUMBER, conclusion)
    return (
        value is not None
        and _AT_A_FORM.search(value.string, max(0, value.start() - 24), value.start()) is None
        and rejected(value.string, value.start(), value.end())
        and _same_number(value.group(), answer) is not False
    )


def _listed_after(conclusion: str, answer: str) -> bool:
    """Whether the conclusion ends on a list of values (:func:`_final.ends_on_list`), or
    on a last line of values side by side (:func:`_final.last_line_values`: "$221$,
    $220$"), that is not the answer alone: its last words offer several candidates,
    whatever it answered before."""
    listed = ends_on_list(conclusion)
    items = listed.split(",") if listed is not None else last_line_values(conclusion)
    if items is None:
        return False
    value = plain_number(answer)
    return value is None or any(plain_number(item.strip("$")) != value for item in items)


def _without_another_called_wrong(
    texts: Sequence[str], context: Context
) -> tuple[Sequence[str], tuple[str | None, bool]]:
    """The texts to read and what they answer (:func:`_auto_read`): without the
    conclusion's last sentence when it calls a value wrong that is surely not the answer
    read without it ("#### 18 ... Scratch that, 17 is wrong." rules 17 out and takes
    nothing back, as the math family reads it), else as they are. A value that may be
    the answer keeps the sentence: :func:`~rewardkit.verifiers._common.calls_wrong`
    reads it then."""
    named = called_wrong(texts[0])
    if named is not None:
        kept = [texts[0][: named.start()].rstrip(), *texts[1:]]
        answer, hedged = _auto_read(kept, context)
        if answer is not None and _same_number(named.group("value"), answer) is False:
            return kept, (answer, hedged)
    return texts, _auto_read(texts, context)


def _taken_back(conclusion: str, answer: str) -> bool:
    """Whether the conclusion ends by taking ``answer`` back for another value
    (:func:`_final.closing_correction`); a value with no number in it is another (fail
    closed: it cannot be shown to be the same)."""
    value = closing_correction(conclusion)
    if value is None:
        return False
    number = _FIRST_NUMBER.search(value.replace(",", ""))
    given = plain_number(number.group()) if number else None
    return given is None or given != plain_number(answer)


_FIRST_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# the last number is the answer form's own ("#### 18", "The answer is 18", "\boxed{18"):
# nothing after the answer takes it back (and most rows end so: no sentence to read)
_AT_A_FORM = re.compile(r"(?:####|(?i:answer)(?:[ \t]+is)?[ \t]*[:：]?|\\boxed\{)[ \t]*\$?[ \t]*\Z")


# A "####" line of numbers that no marked number matched ("#### -17, -18", "#### 3 4"):
# its answer is what it lists, which is no one number (never the last number instead)
_MARKED_VALUES = re.compile(r"(?m:^)[ \t]{0,8}####[ \t]{0,8}([-$\\\d][-$\\\d.,/ \t]{0,80})$")


def _auto_read(texts: Sequence[str], context: Context) -> tuple[str | None, bool]:
    cut = no_fallback(texts[0], context)
    if cut and blank_answer(texts[0]):  # "#### 18 ...\n\nAnswer: ": its last answer is blank
        return None, False  # (a blank last form is one of no_fallback's reasons)
    for at, text in enumerate(texts):
        answer, hedged = _auto_in(text, fallback=False)
        if answer is not None or hedged:
            return answer, hedged
        if at == 0 and not cut and (bare := _answer.bare_value(text)) is not None:
            # before a template-opened thinking is read: "The answer is 150\n</think>\n151"
            # concludes 151, whatever the thinking said
            return _last_number(bare), False
    if cut:
        return None, False
    listed = last_match(_MARKED_VALUES, texts[0])
    if listed is not None:  # "#### -17, -18": the marked answer is several numbers, not one
        return listed.group(1).strip(), False
    for text in texts:
        printed = last_printed(text)
        if printed is not None and printed_no_one_value(printed):
            return printed.strip()[:MAX_ANSWER_CHARS], False  # "[12, 13]", a traceback: no number
        code_free = without_code(text)
        answer = (
            _printed_and_restated(text, context)
            or _before_the_question_quantities(code_free, context.quantities)
            or _last_number(code_free)
        )
        if answer is not None:  # (a program's numbers are no answer)
            return answer, False
    return None, False


def _printed_and_restated(text: str, context: Context = NO_CONTEXT) -> str | None:
    """The number a program printed last, restated as math in the text's last words
    (:func:`~rewardkit.verifiers._final.printed_and_restated`): "```output 120.0```\n
    Martha's turtle can crawl $120.0$ feet in 40 seconds." answers 120, not 40; the words
    around the restatement may still qualify it ("at least $9$")."""
    found = printed_and_restated(text, context.quantities)
    if found is None:
        return None
    after, number = found
    if discussed(after, number.start(), number.end()):
        return f"{number.group(1)} (weighed)"  # "We can rule out $594$.": no number given
    return _qualified(after, number.start(), number.end(), number.group(1))


def _auto_in(response: str, *, fallback: bool = True) -> tuple[str | None, bool]:
    """The later of the last marked number and the last box, else the last number
    after the last ``</think>`` (or of the whole response, when none is there); and
    whether it is hedged (see the module docstring).

    A number is kept with what qualifies it (``18 or 19``, ``18, 19``, ``18 squared``,
    ``at least 18``, ``not 18``), which is then no number: never the bare 18."""
    response = visible(response).rstrip()  # a megabyte of blanks hides nothing
    tail = max(0, len(response) - MARKER_TAIL_CHARS)
    end = response[tail:]
    marked = last_match(_AUTO, end) if _may_mark(end) else None
    bold = last_match(_BOLD_NUMBER, end) if "**" in end else None
    if bold is not None and (marked is None or bold.start() > marked.start()):
        if _LAST_NUMBER.search(response, tail + bold.end()) is None:  # the last number
            marked = bold
    marked_at = -1 if marked is None else tail + marked.start()
    boxes, read_from = _answer.final_boxes_read(response)
    if boxes and boxes[0].content is not None and boxes[0].start > marked_at:
        if _answer.negated_box(response, boxes[0].start):
            return None, True  # "The answer is not $\boxed{18}$.": 18 ruled out, none given
        answer = _box_number(boxes[0].content)
        hedged = _offered_other(response, boxes[0].start, answer, (boxes, read_from))
        hedged = hedged or _qualified_later(response, boxes[0].end, answer)
        hedged = hedged or _latex.box_operand(response, boxes[0])  # "$-\boxed{18}$"
        return answer, hedged or _offered_after(response, boxes[0].end, answer)
    tag = _last_tag(response, max(marked_at, boxes[0].start if boxes else -1))
    if tag is not None:  # a tag holding no one number ("3, 6, 12", "no solution"): no number
        return tag, _other_tag(response, tag)
    if marked is not None and undercut(response, tail + marked.start()):
        return None, True  # "I don't think the answer is 18", "Some claim the answer is 18"
    if marked is not None:
        # read what follows the number itself: in "<answer>5 is wrong</answer>" the tag's
        # words are part of the match, and they take the 5 back
        number_end = _number_end(marked)
        answer = _qualified(marked.string, marked.start(), number_end, _group(marked) or "")
        hedged = _offered_other(response, marked_at, answer, (boxes, read_from))
        hedged = hedged or _qualified_later(response, tail + marked.end(), answer)
        return answer, hedged or _offered_after(response, tail + marked.end(), answer)
    if _qualified_later(response, tail):  # "Answer: the square of 3": no later number reads
        return None, True
    return (_last_number(response) if fallback else None), False


_PLACEHOLDER_TAG = re.compile(
    r"(?i)[\s.…]*(?:(?:your|the|final|my)\s+)*(?:answer(?:\s+(?:goes\s+)?here)?)?[\s.…]*"
)


def _last_tag(response: str, after: int) -> str | None:
    """The content of the last closed ``<answer>`` tag, when it comes after ``after`` (the
    last marked number or box) and holds no number :data:`_AUTO` reads (a list, words);
    None when there is none, it is blank or the format's placeholder, or it is marked.
    A tag holding a sentence or a derivation answers its last number, read with what
    qualifies it; one holding only words or a list of numbers answers no number."""
    close = response.rfind("</answer>")
    open_ = response.rfind("<answer>", max(0, close - 4000), close) if close >= 0 else -1
    if open_ < 0 or open_ <= after:
        return None
    return _tag_reading(response[open_ + len("<answer>") : close])


def _tag_reading(content: str) -> str | None:
    """What a tag holding ``content`` answers, read as :func:`_last_tag` reads it."""
    if _PLACEHOLDER_TAG.fullmatch(content):
        return None
    content = content[:MAX_ANSWER_CHARS]
    glued = _GLUED_UNIT.fullmatch(content)  # "20m", "80Fourth GradeStudents"
    if glued and not _latex.factor_first(content[glued.end(1) :]):  # not "20x", "20π"
        return glued.group(1)
    if _LAST_NUMBER.search(content) is None or _NUMBER_LIST.fullmatch(content):
        return content.strip()  # words ("no solution") or a list ("3, 6, 12"): no number
    if _answer.false_chain(content.replace("$", "").strip()):
        return content.strip()  # "19 = 18": a false statement, no number
    return _last_number(content) or content.strip()  # a sentence, a derivation: its result


_CLOSED_TAG = re.compile(r"<answer>([^<]{0,400})</answer>")
_MAX_TAGS = 32  # earlier tags compared with the last: bounded work on a section of them


def _other_tag(response: str, answer: str) -> bool:
    """Whether a closed ``<answer>`` tag before the last one, in its section (after the
    last ``</think>`` before it), answers another number, read as the last one is
    (``<answer>5\\text{ apples}</answer> <answer>6\\text{ apples}</answer>``: two answers)."""
    value = _number(answer)
    open_ = response.rfind("<answer>", 0, response.rfind("</answer>"))
    if value is None or open_ < 0:
        return False
    start = section_start(response, open_)
    start = max(start, response.rfind("</think>", start, open_))
    tags = itertools.islice(_CLOSED_TAG.finditer(response, start, open_), _MAX_TAGS)
    for found in tags:
        other = _tag_reading(found.group(1))
        number = _number(other) if other is not None else None
        if number is not None and number != value:
            return True
    return False


_GLUED_UNIT = re.compile(
    r"\s*\$?(-?[0-9][0-9,]*(?:\.[0-9]+)?)[^\W\d_][^\W\d]{0,30}(?:[ \t]+[^\W\d_]{1,30}){0,4}[\s.]*"
)
_LISTED_NUMBER = r"\$?-?[0-9][0-9.,]*\$?"
_NUMBER_LIST = re.compile(  # numbers and separators only: "3, 6, 12", "3 and 6", "3; 6"
    r"\s*"
    + _LISTED_NUMBER
    + r"(?:\s*(?:[,;/|]|\s(?:and|or)\s|\s)\s*"
    + _LISTED_NUMBER
    + r")+[\s.]*"
)


_NOT_EQUAL_IN_BOX = re.compile(
    r"[≈≠∼→↦]|\\(?:approx|sim|simeq|to|rightarrow|mapsto|neq?|not\s{0,3}=)(?![A-Za-z])"
)


def _box_number(content: str) -> str:
    """The number a box holds (``\\$18``, ``18 \\text{ dollars}``, ``x = 18``), or the
    box as written when it holds another shape or several numbers (``18 \\text{ or }
    20``, ``18 \\\\ 20``): no number then."""
    norm = _latex.normalise(content)
    if plain_number(norm) is not None:
        return norm
    if (
        _answer.false_chain(content)
        or _NOT_EQUAL_IN_BOX.search(content)
        or _latex.unknown_first(content)
    ):
        return content  # "19 = 18", "n \not= 18", "x \to 18", "x \ll 18": no number
    words = _BOX_WORDS.sub(r" \1 ", content).rpartition("=")[2]
    numbers = list(_LAST_NUMBER.finditer(words))
    if len(numbers) != 1:
        return content
    found = numbers[0]
    return _qualified(words, found.start(), found.end(), found.group(1))


def _offered_other(
    response: str, at: int, answer: str | None, read: tuple[list[_latex.Box], int]
) -> bool:
    """Whether the paragraph of the final number (at ``at``; after the last
    ``</think>`` before it) offers another final number that is not the same value: a
    marked one or a box, or a box the bounded scan did not read (``read``: the boxes
    and where reading stopped, from :func:`_answer.final_boxes_read`)."""
    boxes, read_from = read
    start = section_start(response, at)
    think_end = response.rfind("</think>", start, at)
    start = start if think_end < 0 else think_end  # the thinking offers no final answer
    marks_from = max(start, at - SECTION_CHARS)  # markers are read this far back
    if unread_answer(response, start, marks_from, boxes=False):
        return True  # a paragraph longer than is read, with answers in what is not
    final = boxes[0] if boxes and boxes[0].start == at else None
    box_end, written = (final.end, [response[at : final.end]]) if final else (-1, [])
    if _answer.unread_box(response, start, min(read_from, at), box_end, written):
        return True  # a box the bounded scan did not read may offer another number
    # the final number is the last one: the others start before it
    marks = _AUTO.finditer(response, marks_from, at) if _may_mark(response[marks_from:at]) else ()
    offered = [_group(found) or "" for found in marks]
    offered += [_group(found) or "" for found in _BOLD_NUMBER.finditer(response, marks_from, at)]
    offered += [box.content or "" for box in boxes if start <= box.start < at]
    numbers = {plain_number(_latex.normalise(text)) for text in offered}
    numbers.discard(None)
    return bool(numbers - {plain_number(answer or "")})


# After the final number, in its paragraph: another value offered in words ("but it
# could be 20", "It might also be 20", a sentence opening "Or 20", "perhaps 20", "20 would
# also work", "another possible answer is 20"). A restatement of the same value is no
# other; a number that starts a calculation ("Alternatively, 3 x 6 = 18") is no value.
_OFFERED_NUMBER = r"(-?\d[\d,]*(?:\.\d+)?)(?!\d)(?![ \t]{0,2}[-+*/×÷=^x])"
_OFFERED_AFTER = re.compile(  # the lookahead first: where a cue or a number can begin
    r"(?=[-$\d]|"
    + OFFER_CUE_STARTS
    + ")(?:"
    + OFFER_CUE
    + r"[ \t,:]{1,3}(?:\\?\$)?[ \t]{0,2}"
    + _OFFERED_NUMBER
    + r"|(?<![\w.=+*/×÷^-])(?<![=+*/×÷^-][ \t])\$?(-?\d[\d,]*(?:\.\d+)?)\$?"
    + OFFER_PREDICATE
    + ")"
)
_CORRECTED = re.compile(
    CORRECTION_CUE_AHEAD
    + CORRECTION_CUE
    + CORRECTION_GAP
    + r"(?:\*\*)?(?:\\?\$)?[ \t]{0,2}"
    + _OFFERED_NUMBER
)


# "The answer is the square of 18", "Answer: negative 18": words, then the number
_ANSWER_IN_WORDS = re.compile(
    r"(?i:\banswer\b(?:[ \t]{1,3}is\b)?)[ \t]{0,3}[:：]?[ \t]{0,3}"
    r"(?P<words>(?:[A-Za-z]{1,20}[ \t]{1,3}){1,4})" + _LEAD + _NUMBER
)


def _qualified_later(response: str, end: int, answer: str | None = None) -> bool:
    """Whether an answer line after the box or marked number (ending at ``end``) gives a
    number with words before it that change or bound it ("The answer is the square of
    18", "... about 18"), or denies ``answer`` ("The answer is not 18 but 19"): the
    response's last word on its answer is then not that one."""
    later = response[end : end + MARKER_TAIL_CHARS]
    same = lambda value: _same_number(value, answer)  # noqa: E731
    if denies_answer(later, 0, same):  # "... not 18 but 19"
        return True
    if disowns_answer(later, 0, same):  # "... 18.\n\nWait, that's not right."
        return True
    found = last_match(_ANSWER_IN_WORDS, later)
    if found is not None and (
        _QUALIFIED_BEFORE.search(found.group("words"))
        or _latex.changes_before(found.group("words"))
    ):
        return True
    plain = last_match(_ANSWER_THEN_NUMBER, later)  # "The answer is 50-odd.": hedged after
    return plain is not None and _latex.qualifying_words(later[plain.end() :].split("\n")[0])


def _same_number(value: str, answer: str | None) -> bool | None:
    """Whether ``value`` (a number or math span) is the number ``answer`` (None: unknown)."""
    mine, theirs = plain_number(value.strip("$")), plain_number(answer or "")
    return None if mine is None or theirs is None else mine == theirs


# an answer line giving a number at once ("The answer is 50-odd.", "Answer: 50 (estimate)")
_ANSWER_THEN_NUMBER = re.compile(
    r"(?i:\banswer\b(?:[ \t]{1,3}is\b)?)[ \t]{0,3}[:：]?[ \t]{0,3}" + r"\$?-?\d[\d,]*(?:\.\d+)?"
)


def _offered_after(response: str, end: int, answer: str | None) -> bool:
    """Whether the paragraph after the final number (ending at ``end``) offers another
    value in words: "The answer is 18 but it could be 20" is a hedge, not 18."""
    value = plain_number(answer or "")
    if value is None:
        return False  # "18 or 19" is already no number, reported with its words
    offers = [*_OFFERED_AFTER.finditer(rest_of_paragraph(response, end))]
    later = later_paragraphs(response, end)  # "\n\nOr maybe 20.", "\n\nWait, it's 20."
    last = last_match(_LAST_NUMBER, later)
    if last is None or plain_number(last.group(1)) != value:  # "Or 20? No: it is 18." decides
        offers += [*_OFFERED_AFTER.finditer(later), *_CORRECTED.finditer(later)]
    for found in offers:
        other = plain_number(found.group(1) or found.group(2))
        if other is not None and other != value:
            return True
    return False


def _before_the_question_quantities(text: str, asked: frozenset[str]) -> str | None:
    """The last number of ``text``'s last sentence before the question's quantities that
    end it ("She will have $12 after 3 weeks." answers 12 where the prompt asks about 3
    weeks): each one the prompt writes, in prose after a preposition. None (the last
    number, as before) when no such quantity ends the sentence, or when the number before
    them is one the prompt writes too (which is stated, which recalled, cannot be told)."""
    if not asked:
        return None
    body = text.rstrip()
    start = max(body.rfind("\n"), *(body.rfind(end) for end in (". ", "! ", "? ")))
    sentence = body[start + 1 :]
    numbers = list(_LAST_NUMBER.finditer(sentence))
    at = len(numbers)
    while at > 0 and _recalled_quantity(sentence, numbers[at - 1], asked):
        at -= 1
    if at in (0, len(numbers)) or number_key(numbers[at - 1].group(1)) in asked:
        return None
    value = numbers[at - 1]
    return _qualified(sentence, value.start(), value.end(), value.group(1))


def _recalled_quantity(sentence: str, number: re.Match[str], asked: frozenset[str]) -> bool:
    """A number the prompt writes, in prose after a preposition ("after 3 weeks")."""
    return (
        number_key(number.group(1)) in asked
        and _PREPOSITION_BEFORE.search(sentence, max(0, number.start() - 24), number.start())
        is not None
    )


# (with "of", which the printed-result rule's list leaves out: here the number must also
# be one the prompt writes, "2 of the 4 people")
_PREPOSITION_BEFORE = re.compile(
    r"(?i:\b(?:in|after|for|over|on|with|within|during|per|from|at|by|of)[ \t]+)$"
)


def _last_number(text: str) -> str | None:
    """The last number of ``text`` (a conclusion: :func:`_auto` hands it), read with what
    qualifies it."""
    final = last_match(_LAST_NUMBER, text)
    if final is None:
        return None
    factored = last_match(_FACTORED, text)
    if factored is not None and factored.end() >= final.start():  # after it, or "2√2"
        return factored.group().strip()  # "so 20 * 11 = 220. The result is 220x.": no number
    if discussed(final.string, final.start(), final.end()):
        return f"{final.group().strip()} (weighed)"  # "We can rule out 220.": no number given
    return _qualified(final.string, final.start(), final.end(), _group(final) or "")


# a number times a factor (:func:`rewardkit.verifiers._latex.factor_first`), which
# _LAST_NUMBER skips: "220x", "27π", "3²", "5 i."
_FACTORED = re.compile(
    r"(?<![0-9A-Za-z_.])" + NUMBER_START + r"-?[0-9][0-9,]*(?:\.[0-9]+)?[ \t]{0,3}"
    r"(?:[²³¹⁰⁴-⁹√∞]|(?!μ)[\u0370-\u03ff]|[A-Za-z](?![^\W\d_]))"
)
# after the number: another one listed or offered, a range, a power
_LIST_AFTER = re.compile(
    r"[ \t]{0,3}(?:[,;/]|[\(\[]?[ \t]{0,3}(?:and/)?"
    + OR_WORD
    + r"|and\b|to\b|through\b|[-–—~]|&(?:amp;)?)"
    r"[ \t]{0,3}(?:(?:maybe|perhaps|possibly|else)[ \t]{1,3})?(?:\\?\$|\\\()?-?\d"  # any script's digits
    r"|[ \t]{0,2}(?:[²³+‰‱]|[xX·⋅∙][ \t]{0,2}[0-9])"
    r"|[ \t]{0,3}\([ \t]{0,3}(?:or[ \t]{1,3})?-?\d[\d.,]*[ \t]{0,3}\?"  # "18 (20?)": a doubt
    # "18 (20)", "18 [20]": another number offered beside it; "18?": a question, no answer
    r"|[ \t]{0,3}[(\[][ \t]{0,2}(?:\\?\$)?-?\d[\d.,]*(?:\\?\$)?[ \t]{0,2}[)\]]|[ \t]{0,3}\?"
    # "18 \, 20", "18~20": another number behind TeX's spacing
    r"|[ \t]{0,3}(?:\\[,;:!> ]|\\q?quad(?![A-Za-z]))(?:[ \t]|\\[,;:!> ]|\\q?quad(?![A-Za-z])){0,5}"
    r"(?:\\?\$)?-?[0-9][0-9.,/]*(?![0-9.,/]|[-‑]?[A-Za-z])"
    # "18 | 20", "18 \lor 20", "18 \pm 2", "18 ± 2": two values offered, or a range
    r"|[ \t]{0,2}(?:[|±∓]|\\(?:lor|vee|mid|vert|pm|mp)(?![A-Za-z]))"
    # "18 (alt. 20)", "18 (sic: 20)": a word and another number in parentheses after it
    r"|[ \t]{0,3}\([ \t]{0,2}[^\W\d_]{1,12}\.?:?[ \t]{1,3}(?:\\?\$)?-?\d[\d,.]*\$?[ \t]{0,2}\)"
    # "18 20", "18 1/2", "18 \frac12": another number right after it, a mixed number
    # (not "18 2-liter bottles", "18 3rd graders": a number in the unit)
    r"|[ \t]{1,3}(?:[0-9][0-9.,/]*(?![0-9.,/]|[-‑]?[A-Za-z])|\\[dt]?frac(?![A-Za-z]))"
    # a word then another number that ends the clause: "18 hours 30 minutes", "18 (English),
    # 20 (Deutsch)", "18 sau 20" (an "or" in any language); not a context ("18 in 2 weeks")
    # nor a reason going on ("18 because 3 x 6 = 18")
    r"|[ \t]{1,3}(?!" + CONTEXT_WORD + r")(?:[^\W\d_]{1,12}|\([^\W\d_]{1,12}\)[,;:]?)"
    r"[ \t]{1,3}(?:\\?\$)?-?\d[\d,]*(?:\.\d+)?\$?(?:[ \t]{1,3}\(?[^\W\d_]{1,15}\)?)?"
    r"[ \t]{0,3}(?:[.!?;,)]|$)"
)
# before the number: a bound, a negation, or another value offered as an alternative
_QUALIFIED_BEFORE = re.compile(
    r"(?:\b(?:not|never)|n[’']t(?:[ \t]+be)?|\b(?:at[ \t]+(?:least|most)|(?:more|less|fewer|greater)[ \t]+than|"
    + _latex.UP_TO
    + r"|between|maybe|perhaps|possibly|about|approximately|approx\.?|roughly|around|nearly|almost"
    r"|circa|close[ \t]+to|near|(?:in[ \t]+the[ \t]+)?(?:ballpark|range|region|vicinity)[ \t]+of"
    r"|negative|minus|twice|double|triple|thrice|half[ \t]+of|under|over|below|above|"
    + _latex.FUNCTION_OF  # "the square of 27"
    + r"))"
    r"[ \t]{1,3}(?:\\?\$)?[ \t]{0,2}$"
    r"|(?:[≈≠∼→↦]|(?:^|(?<=[ \t(*]))~|\\(?:approx|sim|simeq|to|rightarrow|mapsto|neq?|not[ \t]{0,3}=)(?![A-Za-z]))"
    r"[ \t]{0,3}(?:\\?\$)?[ \t]{0,2}$"  # "≈27", "x \to 27", "n \not= 27"
    # "18 and 19", "18, to 19"
    r"|(?P<offered>-?\d[\d.,]*(?:/\d+)?)[ \t]{0,3},?[ \t]{0,3}(?:and|to|&(?:amp;)?)[ \t]{1,3}(?:\\?\$)?$"
    # "18/19", "18-19", "18~20", "18 ± 2": in an expression or a range
    r"|[0-9]+[ \t]{0,2}(?:[-–—/^*×÷+~±∓]|\|\|?|\\(?:pm|mp)(?![A-Za-z]))[ \t]{0,2}(?:\\?\$)?$"
    # "2 times 2", "3 to the power 2", "5 percent of 40": an operand, in words
    r"|[0-9][ \t]{1,3}(?:times|plus|(?:divided|multiplied)[ \t]+by|percent[ \t]+of|%[ \t]*of"
    r"|(?:to|raised[ \t]+to)[ \t]+the[ \t]+(?:[a-z]+[ \t]+)?power(?:[ \t]+of)?|raised[ \t]+to)"
    r"[ \t]{1,3}(?:\\?\$)?[ \t]{0,2}$",
    re.IGNORECASE,
)
# The sides of a chain of "=" that is the whole answer before the number ("#### 20 - 1 = ",
# "<answer>x = 19 = ", "The answer is 19 = "), each side plain arithmetic: with the number,
# a statement that may be false (_answer.false_chain). A chain in a sentence is left
# alone: where it starts is not read ("C(5, 2) = 5!/(2!3!) = 10")
_ARITHMETIC = r"(?:[-\d.,$()+*/×÷^ \t]|\\(?:times|cdot|div)(?![A-Za-z]))+"
_CHAIN_BEFORE = re.compile(
    r"(?:####|<answer>|(?i:answer)(?:[ \t]+is)?[ \t]*:?)[ \t]*"
    r"(?P<chain>(?:[A-Za-z][ \t]*=[ \t]*)?" + _ARITHMETIC + r"(?:=" + _ARITHMETIC + r"){0,3}=)"
    r"[ \t]*\$?[ \t]*$"
)
# "or" in any language before the number: "or 20", "18 oder 20", "18 或 20", "18 of 20" (not
# "2/5 of 60": a fraction of it). Read in the last _ALTERNATIVE_CHARS before it only: an
# end-anchored search tries every start, and these words are short
_ALTERNATIVE_BEFORE = re.compile(
    r"(?:(?<![^\W\d_])"
    + ALTERNATIVE_WORD
    + r"(?:[ \t]+(?i:maybe|perhaps|possibly|else))?"
    + r"|(?P<offered>-?\d[\d.,]*(?:/\d+)?)\$?[ \t]{0,3},?[ \t]{0,3}"
    + ALTERNATIVE_WORD
    + r"|(?<![\d/.,])-?\d[\d.,]*\$?[ \t]{1,3}(?i:of))[ \t]{0,3}(?:\\?\$)?[ \t]{0,2}$"
)
_ALTERNATIVE_CHARS = 24  # "1,234.5 oder $", "or possibly " fit


# A separator after the number that the number goes on past: a thousands or decimal mark
# in braces or in another script ("18{,}000", "18'000", "18\u00a0000", "18\u066b5"), or a
# repeating decimal ("18.(3)", "18.\overline{3}"). The number read is never its first part.
_CONTINUED = re.compile(
    r"(?:\{[,.]\}|['\u2018\u2019\u00a0\u2009\u202f\u066b\u066c\u02d9])\d"
    r"|\.?(?:\(\d|\\(?:overline|dot)(?![A-Za-z]))"
)


_TRAILING_OFF = re.compile(r"[ \t]{0,2}(?:\.{3}|\u2026)")

# A mark right before the number that makes it no plain value: a bound ("#### <18", "≤18",
# "≥ 18"), two values ("±18"), a root, an integral, an angle ("√18", "∫18", "∠18"). A
# gsm8k answer is a plain number, so every mathematical symbol but the minus sign (U+2212)
# changes it; math-verify reads none of these as 18. "<answer>18", "=> 18" and "-> 18" are
# a tag and arrows, not bounds.
_MARK_BEFORE = re.compile(
    r"(?:(?<![A-Za-z0-9/\"'=-])[<>]=?|[±\u2190-\u21ff\u2200-\u2211\u2213-\u22ff"
    r"\u2300-\u23ff\u27c0-\u27ff\u2900-\u2aff])[ \t]{0,3}(?:\\?\$)?[ \t]{0,2}$"
)
# After it, a relation to another value: "#### 18 != 19", "18 ≠ 19", "18 < 20" (not a
# closing tag: "18</answer>")
_RELATION_AFTER = re.compile(
    r"[ \t]{0,3}(?:!=|[≠≤≥≈≲≳≪≫]|\\(?:neq?|[lg]eq?|[lg]eqslant|approx)(?![A-Za-z])"
    r"|[<>]=?(?=[ \t]{0,3}[-\d$\\]))"
)


def _qualified(text: str, start: int, end: int, number: str) -> str:
    """``number`` (matched at ``start:end`` of ``text``), or the number with the words
    around it that qualify it (see :func:`_auto`): then it reads as no number."""
    end -= text[start:end].endswith(",")  # "18, 19": the comma is the number's separator
    digit = re.search(r"[0-9.]", text[start:end])
    first_digit = start + (digit.start() if digit else 0)
    if _in_expression(text, first_digit, end):
        return f"{text[max(0, first_digit - 20) : end + 20].strip()}"
    if _CONTINUED.match(text, end):  # "18{,}5", "18'000", "18.(3)": a part of the number
        return f"{number}{text[end : end + 12].strip()}"
    after = text[end : end + 60].split("\n", 1)[0].replace("**", "")  # "**18** or **20**"
    after = _INLINE_MATH.sub("", after)  # "\(18\) oder \(20\)", "$18$ oder $20$": "18 oder 20"
    after = _TEXT_WORDS.sub(r" \1 ", after)  # "18 \text{ and } 20": "18 and 20"
    words = re.split(r"[.!?;]", after, maxsplit=1)[0]
    if (
        _LIST_AFTER.match(after)
        or _latex.qualifying_words(words)
        or _latex.factor_first(after)
        or _TRAILING_OFF.match(after)  # "18...": trailing off, not stated
        or _RELATION_AFTER.match(after)  # "18 != 19": a statement about 18
    ):
        return f"{number} {words.strip() or after.strip()}"  # "18; 20", "18π", "18 != 19"
    before = text[max(0, end - 60) : first_digit]
    before = _MARKUP.sub(
        "", _LINE_JOIN.sub(r"\1 ", before).split("\n")[-1]
    )  # "18 or\n20": one line
    chain = _CHAIN_BEFORE.search(before)
    if chain is not None and _answer.false_chain(chain.group("chain").replace("$", "") + number):
        return f"{chain.group('chain').strip()} {number}"  # "19 = 18": a false statement
    if _latex.unknown_mark_before(before) or _MARK_BEFORE.search(before):
        return f"{before[-12:].strip()} {number}"  # "#### x \ll 18", "#### ≤18": not 18
    if _latex.changes_before(before):  # "#### about 18", "a multiple of 18": not 18
        return f"{before[-24:].strip()} {number}"
    qualifier = _QUALIFIED_BEFORE.search(before)
    qualifier = qualifier or _ALTERNATIVE_BEFORE.search(before[-_ALTERNATIVE_CHARS:])
    if qualifier is None or _restated(qualifier.group("offered"), number):
        return number
    return f"{qualifier.group().strip()} {number}"


# A number that is part of a LaTeX expression: an argument of \frac, \sqrt or \binom (not
# of a text wrapper: \textbf{18} is 18), an exponent or index, an operand of \times,
# \div or \cdot. "\frac{1}{2}" holds no 2 and "5 \times 4" no 4 (verl's flexible rule
# reads neither a 5 nor a 4 there either).
_EXPRESSION_BEFORE = re.compile(
    r"(?:\\(?:[dt]?frac|sqrt|[dt]?binom|times|div|cdot|pm|mp)(?![A-Za-z])[ \t]{0,3}"
    r"(?:\[[^\]\n]{0,20}\])?\{?|\}[ \t]{0,3}\{|[\^_][ \t]{0,3}\{?)"  # "}{": a second argument
    r"[ \t]{0,3}-?[ \t]{0,3}$"
)
_EXPRESSION_AFTER = re.compile(
    r"[ \t]{0,3}(?:\}[ \t]{0,3}\{|[\^_]|\\(?:times|div|cdot|pm|mp|over|bmod|pmod|mod)(?![A-Za-z]))"
)


def _in_expression(text: str, start: int, end: int) -> bool:
    """Whether the number at ``start:end`` of ``text`` is inside a LaTeX expression."""
    return bool(
        _EXPRESSION_BEFORE.search(text, max(0, start - 40), start)
        or _EXPRESSION_AFTER.match(text, end)
    )


def _restated(offered: str | None, number: str) -> bool:
    """``5/10 or 0.5``: the value before "or" is the same number, restated."""
    if offered is None:
        return False
    numerator, _, denominator = offered.replace(",", "").partition("/")
    value = plain_number(number)
    try:
        first = Fraction(numerator) / Fraction(denominator or "1")
    except (ValueError, ZeroDivisionError):
        return False
    return value is not None and first == value


_INLINE_MATH = re.compile(r"^[ \t]{0,3}(?:\\\)|\$)")  # the span the number ends
_TEXT_WORDS = re.compile(r"\\(?:text|mathrm|textrm|mbox)\{([^{}]{0,30})\}")
# Markup around a number hides nothing: "<b>18</b> or <b>20</b>", "\textbf{18} or
# \textbf{20}", "*18* or `20`" offer two numbers as plainly as "18 or 20" does
_MARKUP = re.compile(
    r"</?(?i:b|i|u|em|strong|code|span|mark|tt)>|\\(?:text|math)[a-z]{0,4}\{|[_`{}]|\*\*|(?<![^\s(\[])\*$"
)  # inline markup only: "</think> <answer>" separates, and "5 * 14" is a product
# a line ending in "or" (or "maybe"...) goes on to the next: "18 or\n20"
_LINE_JOIN = re.compile(r"(?i)\b(or|maybe|perhaps|possibly)[ \t]*(?:\n[ \t]*){1,2}(?=(?:\\?\$)?$)")
_GROUPED = re.compile(r"^[^0-9]*[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?[.,]?$")
"""A number whose commas group thousands (``1,000``, ``$12,345.50``)."""


def _gold_numbers(ground_truth: Any) -> tuple[Fraction, ...]:
    return tuple(_gold_number(text) for text in gold_strings(ground_truth, "gsm8k"))


_FRACTION = re.compile(r"[ \t]*(-?[0-9]{1,18})[ \t]*/[ \t]*([1-9][0-9]{0,17})[ \t]*")


def _number(text: str) -> Fraction | None:
    """A plain number (:func:`plain_number`, ``+7`` too), or a fraction ``a/b``: exact."""
    text = ascii_number_text(text).replace("$", "")
    found = _FRACTION.fullmatch(text)
    if found is not None:
        return Fraction(int(found.group(1)), int(found.group(2)))
    return plain_number(text.strip().removeprefix("+"))  # "+7" is 7


def _gold_number(text: str) -> Fraction:
    value = _number(text)
    if value is None and "####" in text:  # a full dataset solution: its own final answer
        value = plain_number(_group(last_match(_AUTO, text)) or "")
    if value is None:
        shown = text if len(text) <= 60 else text[:60] + "…"
        raise InvalidSampleError(f"gsm8k: ground_truth {shown!r} is not a number")
    return value
