"""Finding the final answer of a MATH-style response, in the scoring loop's own process.

The *final part* of a response is its conclusion, as every verifier family reads it
(:func:`rewardkit.verifiers._final.answering_texts`: the text after the last
``</think>``, quoted answer forms blanked; an answer only in the thinking is no answer).
Each rule below is tried on it, first found wins; a truncated response
(:func:`~rewardkit.verifiers._final.cut_off`, or the row's context) has no fallback (4.):

1. ``boxed``: the last non-blank ``\\boxed{}``/``\\fbox{}`` and the boxes joined to it by
   ``,``, ``;``, "and", "or", ``x =`` or spacing (one multi-part answer). Blank boxes
   (``\\boxed{}``, ``\\boxed{ }``, ``\\boxed{\\phantom{2}}``) are not answers: skipped.
   A last box written inside another box is that outer box, the inner commands dropped
   (``\\boxed{3 \\text{ or } \\boxed{4}}`` answers ``3 \\text{ or } 4``, never the 4
   alone). A box right after a negation ("is not $\\boxed{3}$") is no answer (``negated``).
2. ``answer_tag``: the last closed ``<answer>...</answer>`` (the R1-zero prompt) holding
   a value; when it holds more (a sentence, several lines, a chain of ``=``: "she earns
   $2 \\times 9 = \\$18$"), math-verify's extraction reads the tag's text in a worker
   (``expression``), in both modes. Numbers one a line are the list of them; a
   derivation one math span a line ending in ``$N = 6009$`` is the 6009 (unless another
   line sets a name to another plain number).
3. ``answer_line`` (default mode): "The final answer is X", "Answer: X", "The answer is
   X", a ``**Final Answer**`` heading then X; trailing tags (``</think>``), ``$``,
   periods and prose after the value are trimmed; a line that is prose is skipped, and
   the last line holding math beats a later bare word ("The answer is before.").
   A number glued to a span, then unit words, is their product ("15$\\pi$ square
   units" answers ``15\\pi``); a span holding a number then unit words ("$96
   combinations$", "$80살$") is the number, as the same text outside a span is; a
   ``\\text{}`` unit of several words (``428\\text{ square centimeters}``) is a value,
   not prose, in a tag too. A marker restated on its line ("The answer is Answer: 720")
   leaves the value to the later one.
   Words that change or qualify the value are kept, as ``\\text{...}``, where a unit
   word would be dropped ("5 squared", "$5$ or more", "at least 5": the check refuses
   them, see :func:`rewardkit.verifiers._latex.value_qualifier`); math spans joined
   by ``\\text{ or }``, ``&``, ``/``, spacing or ``\\mid`` are a list, as two numbers
   one a line after a heading are: never the first alone.
4. ``expression`` (default mode): the end of the final part (up to 16,000 characters;
   the whole response when the final part holds no digit or LaTeX), from which
   math-verify's own extraction (the rightmost LaTeX or number, after its "answer"
   anchored patterns, as verl's ``math_verify`` scorer reads it) picks the answer in a
   worker. A final part that is only a number in a text wrapper (``\\text{4}``) is that
   answer (``wrapped``): math-verify finds nothing outside math mode there. Read inline
   instead, as a tag holding the same value is, where math-verify's extraction has
   only that value to read: a final part that is one value and nothing else
   (``</think> 666``, ``$\\frac{7}{10}$``, ``108 degrees``: ``bare``), a passage whose
   last line is one value after a finished sentence (``bare``), and a last sentence
   stating its one value plainly ("Miss Maria has $30$ students.", "so the range is 7 -
   1 = 6": ``stated``, see :func:`stated_value`; an answer tag holding such a sentence
   too). A chain of ``=`` there is its last side only when every side is read exactly
   and shown equal to the next (:func:`chain_value`).

The response is read as a reader sees it rendered (:func:`~rewardkit.verifiers._common.visible`):
HTML comments and struck-out text (``~~20~~``, ``<del>20</del>``) removed, zero-width and
direction marks dropped. A value alone on its line in bold (``**18**``) or after ``####``
is an answer line when no math follows it (else a step highlighted on the way).

*Hedging* is offering several different final answers: no answer, ``hedged: True``,
score 0. The *concluding section* of the answer found is the text from the start of the
paragraph (after the last blank line) holding it (the first box of the final run, the
``<answer>`` tag, the answer line) to the end of the text it was found in (the final
part, else the whole response); when that paragraph is only answers, the bare answers
one a paragraph right before it belong to it (``**18**``, a blank line, ``**20**``; a box
in a code block after "The answer is $\\boxed{18}$."). "Or" in other words (``vs``,
``versus``, "oder", "ou", "или", "或", Dutch "of": ``_common.OR_WORD``) joins two values
as "or" does. In both modes, the answer is hedged when:

* another non-blank box in the concluding section, not joined to the final run, is not
  shown to be the same value (a box is a deliberate answer: only a value shown equal,
  ``\\boxed{0.5}`` then ``\\boxed{\\frac12}``, is a restatement);
* an ``<answer>`` tag, or an answer line holding math or an option label, in the
  concluding section (its last ``SECTION_CHARS``) is *surely* a different value
  (:func:`same_value` is False):
  ``\\boxed{9}`` then "Answer: 10", ``<answer>3</answer> The answer is 4``, "The answer
  is 3." then "The answer is 4." in one paragraph. When that cannot be told inline
  (``2 + 3 = 5`` against ``5``, a percent, ``1.41`` against ``\\sqrt{2}``) it is not
  hedging and the final answer goes to the check. A line whose value is a box is that
  box;
* the answer, or a tag or answer line of its section, opens with two different numbers
  offered as alternatives (:func:`_offers_two`): ``3, maybe 4`` (or "perhaps",
  "possibly", "probably", "or maybe"), ``3 \\vee 4``, ``3 \\lor 4``, ``3 | 4`` (a bar
  only when it is the value's only bar: ``|x|`` and ``\\{x | x > 0\\}`` are not), and,
  in one answer only (not in a tag's derivation), ``3 \\\\ 4``, ``3 \\vert 4``, ``3 \\to 4``,
  ``3 -> 4``, ``3 \\text{, } 4``, ``3 \\hspace{1cm} 4``;
* an ``<answer>`` tag offers two different numbers as alternatives anywhere in it, with
  a hedge word (``5 (or possibly 6)``, ``5, perhaps 6``), or with a plain "or" and no
  math after it when the tag is read as a passage (``either 5 or 6``, ``It is 5. Or
  6.``): math-verify's extraction, anchored by "answer", would read the first alone;
* the fallback passage's last line ends with two different numbers offered as
  alternatives, plain "or" included (``I think 3, maybe 4``, ``3 or 4``, ``x = -5 or x =
  4``, ``3 and/or 4``, ``3 apples or 4 apples``, ``$3 \\vee 4$``): math-verify would
  read the last alone, as verl's scorer does.
  Math spans joined by "or" (``$-5$ or $4$``) stay math-verify's: it reads them as a set.
* another value, surely different, is offered or taken back in words after the answer
  (a box's end, a tag's content, an answer line), in its paragraph or the next (unless
  the next one ends on the answer again), or at the end of a passage for math-verify
  after a different value: a word of possibility, alternative or correction right
  before a value (``or maybe 4``, ``(or possibly 4)``, "Alternatively, $4$", "another
  possible answer is 4", "unless it is 4", "Wait, no: 4", "Actually, it's 4"), or words
  offering a value as another answer right after it ("4 would also work", "4 is also a
  valid answer", "4 works too"; not "$x = 4$ is valid", a check). See
  :data:`~rewardkit.verifiers._common.OFFER_CUE`;
* the concluding section is longer than is read and may hold another answer where it is
  not (``scan_cut``): a box command before the boxes the bounded scan read (junk past
  its brace budget, more than ``MAX_BOXES`` boxes; copies of the final boxes and a deep
  nest of boxes around the last are no other value), or an "answer" before the last
  ``SECTION_CHARS``.

A passage for math-verify whose last line ends on a range ("It is 18 to 20", "between 18
and 20", ``18~20``: the line's first value), on a value qualified by the words right
after it ("about 18 or so", "18 (or slightly more)") or bounded or ruled out right
before it ("at least 18", "18, not 20": the 20, when the line names no "answer") is no
answer (``qualified``): math-verify would read the bare value.

Nor is there an answer when a later ``<answer>`` is left open holding math
(``<answer>3</answer> <answer>4``: ``unclosed``, as an open last box is), when the last
tag follows an open one holding another number alone (``<answer>3<answer>4</answer>``:
hedged; a chain of steps in open tags is not), when a tag
opens with a negation (``<answer>not $3$ but $4$</answer>``), or when the fallback
passage's last "answer" sentence rules its first value out or bounds it ("The answer
is not $3$ but $4$", "isn't $3$", "is less than $3$": ``negated``), where math-verify's
extraction, anchored by "answer", would read the value alone.

Not hedging: boxes, tags and answer lines in earlier paragraphs (sub-results on the way)
or in the thinking when the final part answers; blank boxes; the same value restated in
any form (``\\boxed{\\frac12}`` then "Answer: 0.5"; a decimal that rounds or truncates
the other value, ``0.333`` for ``\\frac13``; ``x+1`` for ``1+x``). Values are compared
inline and without sympy (:func:`same_value`: normalised strings, exact numbers, option
labels, then :mod:`~rewardkit.verifiers._numeric`'s exact reading). Boxes joined by "or"
(``\\boxed{3} or \\boxed{4}``) are read as math-verify reads them, one multi-part answer
(``alternatives: True``): it equals a ground truth with exactly those parts (the roots
``-5, 4`` written "x = -5 or x = 4") and never a single value, so offering two values
still earns 0 against one; so are numbers side by side on an answer line (``$3$ $4$``
is ``3, 4``, as ``\\boxed{3} \\boxed{4}`` is).

Everything is bounded: ``rfind``, slices of at most a few KB near the end, and regexes
without nested quantifiers (a 4 MB response extracts in milliseconds).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from rewardkit.verifiers import _latex, _numeric
from rewardkit.verifiers._commitment import GLUED, discussed, rejected, undercut
from rewardkit.verifiers._common import (
    CORRECTION_CUE,
    CORRECTION_CUE_AHEAD,
    CORRECTION_GAP,
    MAX_ANSWER_CHARS,
    NUMBER_START,
    OFFER_CUE,
    OFFER_CUE_AHEAD,
    OFFER_PREDICATE,
    OR_WORD,
    PARAGRAPH_BREAK,
    SEARCH_TAIL_CHARS,
    SECTION_CHARS,
    VALUE_AHEAD,
    called_wrong,
    denies_answer,
    disowns_answer,
    last_match,
    later_paragraphs,
    may_correct,
    may_offer_predicate,
    rest_of_paragraph,
    section_start,
    unread_answer,
)
from rewardkit.verifiers._final import (
    TEX_DELIMITER,
    answering_texts,
    blank_answer,
    closing_correction,
    ends_on_list,
    last_line_values,
    last_printed,
    no_fallback,
    offered_alternative,
    printed_and_restated,
    printed_error,
    values_side_by_side,
    without_code,
    wordless,
)
from rewardkit.verifiers.base import (
    ALSO_OFFERED,
    CALLED_WRONG,
    NO_CONTEXT,
    Context,
    number_key,
    words_key,
)

__all__ = ["ExtractionMode", "Found", "find_answer", "gold_answer"]

ExtractionMode = Literal["default", "strict"]

QUESTIONED = "\\text{ ?}"
"""Appended to a value that a line asks, denies or judges rather than gives ("Answer:
27?", "I don't think the answer is 27"): a value still (another answer offered, for the
hedging rules), but never the answer (``MathVerifier`` scores it 0 whatever its units)."""

LINE_TAIL_CHARS = 4000
"""Answer lines are looked for in this many characters at the end of the final part."""
EXPRESSION_CHARS = 4_000
"""The fallback hands math-verify at most this many characters (the end of the final part):
a whole response, as verl's scorer gives it, for all but the longest. Its extraction costs
more than linear time in the text (a list of 3,000 numbers: 25 ms at 4,000 characters,
270 ms at 16,000), and on the real-output corpus and its prose slice no verdict differs
between the two bounds."""

# "Answer: X", "answer is X", "**Answer:** X", "**Final Answer**" (then X on a later line)
_ANSWER_MARKER = re.compile(
    r"(?i:\banswer\b)(?P<bold>\*\*)?[ \t]{0,3}(?P<sep>[:：]|(?i:is\b))?"
    r"[ \t]{0,3}[:：]?(?:\*\*)?[ \t]{0,3}[:：]?"
)
_ANSWER_WORD = re.compile(r"answer", re.IGNORECASE)
_HOPE = re.compile(r"(?i)\.?\s{0,3}I hope it is correct\.?\s{0,3}$")
_TAG = re.compile(r"<\|?/?[A-Za-z_][A-Za-z0-9_|]{0,30}>")
_OUTER_NOISE = " \t*.:,"
_SPANS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
# "or" joins spans too: "$3$ or $4$", "$3$ (or $4$)" are two values, never the first alone
_SPAN_JOIN = re.compile(
    r"\s{0,3}\(?(?:,|;|\band\b|\bor\b|,\s{0,3}(?:and|or)\b"
    # "$3$ \text{ or } $4$", "$3$ \& $4$", "$3$ / $4$", "$3$ \quad $4$": two values, not the first
    r"|\\text\{\s{0,3}(?:and|or)\s{0,3}\}|\\?&|/|\||\\mid\b|\\\||~|\\q?quad\b|\\[ ,;]|\\\\)\s{0,3}"
)
_SPACES = re.compile(r"[ \t]{1,8}")
_BOLD = re.compile(r"\*\*([^*\n]{1,200}?)\*\*")  # markdown bold, not "2**3" (a power)
# not "!" (5! is a factorial), nor the period of "vs." ("18 vs. 20" offers two)
_SENTENCE_END = re.compile(  # nor a ";" before another number: "18; 20" lists two
    r"(?<!\bvs)\.(?:\s|$)|;(?![ \t]{0,3}\$?-?\d)(?:\s|$)|\?(?:\s|$)"
)
_TAG_PASSAGE = "<answer> {} </answer>"  # the word "answer" anchors math-verify's patterns
_INLINE_DELIMITER = re.compile(r"\\[()\[\]]")  # "4\(\sqrt{30}\)", a stray "108\)"
_NUMBER_THEN_WORDS = re.compile(  # "12 apples", "80살": the number; letters in any script
    r"(-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:/\d+)?)\s*(?:[^\W\d_](?:[^\W\d_]|[ .])*)?"
    r"(?:\^\{?[23]\}?|[²³])?"  # a unit of area or volume: "12 units^2", "5 cm³"
)
_NUMBER_COMMA_WORD = re.compile(  # "2/16, which can be simplified", "2009, but the image"
    r"(-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:/\d+)?),\s+(?!and\b|or\b)(?=[^\W\d_]{3})"
)
_NUMBER_SPAN_WORDS = re.compile(  # "15$\pi$ square units": a number and a span glued, words
    r"(-?\d[\d,]*(?:\.\d+)?)\$([^$\n]{1,40})\$((?:\s+[^\W\d_]{1,20}){0,4})"
)
_NUMBER_REMARK = re.compile(  # "2 (upper bound)": a number, then a remark in brackets
    r"(-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:/\d+)?)[ \t]*(\([^()\n]{1,60}\))"
)
_NUMBER_LEAD = re.compile(r"(-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:/\d+)?)\s+(?=[^\W\d_])")
_JOINED = re.compile(r"(?:or|and|nor)\b", re.IGNORECASE)  # "5 or 6": a list, read as one


_WORDS_THEN_NUMBER = re.compile(  # "at least 5", "between 5 and 6": words, then the value
    r"([^\W\d_]{1,20}(?: [^\W\d_]{1,20}){0,3}) (-?\d[\d,]*(?:\.\d+)?(?: and -?\d+)?)"
)
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")  # plain words, not \commands
_MATHY = re.compile(r"[0-9$\\\[]")


@dataclass(frozen=True, slots=True)
class Found:
    """What :func:`find_answer` found: the answer (None: none) and how it was found."""

    answer: str | None
    extra: dict[str, Any] = field(default_factory=dict)
    start: int = field(default=-1, compare=False)
    """Where the answer begins in the text it was found in (-1: not an answer to check
    against the rest of its concluding section: none, or a passage for math-verify)."""
    end: int = field(default=-1, compare=False)
    """Where the text read for values offered after the answer begins (a box's end, a
    tag's content; -1: ``start``)."""


def find_answer(
    response: str, mode: ExtractionMode = "default", context: Context = NO_CONTEXT
) -> Found:
    """The final answer of ``response`` by the rules of this module's docstring, read
    from its conclusion only (:func:`rewardkit.verifiers._final.conclusion`)."""
    texts = answering_texts(response, context)
    if texts.disowned:  # "\\boxed{7}\n\nWait, that's not right.": taken back
        return Found(None, {"source": None, "hedged": True, "disowned": True})
    if offered_alternative(texts[0]):  # "\\boxed{11}\n\nOr \\boxed{10}": two answers
        return Found(None, {"source": None, "hedged": True})
    boxed = functools.partial(_boxed, quoted=_quoted_boxes(context.prompt))
    rules = (boxed, _final_tag) if mode == "strict" else (boxed, _final_tag, _lined)
    fallback = mode == "default" and not no_fallback(texts[0], context)
    for at, text in enumerate(texts):
        for rule in rules:
            found = rule(text)
            if found is not None:
                return _unless_offered(_unless_hedged(_unless_rejected(found, text), text))
        if at == 0 and fallback and (concluded := _concluding_value(text)) is not None:
            # before a template-opened thinking is read: "The answer is 150\n</think>\n151"
            # concludes 151, whatever the thinking said
            return concluded
    if fallback and (printed := last_printed(texts[0])) is not None and printed_error(printed):
        return Found(None, {"source": None, "pred": printed.strip()[-200:]})  # a crash, no answer
    if fallback and (restated := _printed(texts, context)) is not None:
        return restated
    if fallback:
        passage = _unless_alternatives(_without_called_wrong(_expression(texts)))
        found = _unless_offered(_unless_corrected(passage))
        return _stated(_unless_qualified(_unless_negated(found)), context, passage.answer)
    return Found(None, {"source": None})


def _concluding_value(conclusion: str) -> Found | None:
    """A conclusion that is its own answer without a form: a list of candidates ("So $a
    = 17, 16, 18$."), or one value ("</think> 666"), as a tag's content is."""
    listed = ends_on_list(conclusion)
    if listed is not None:
        return Found(listed, {"source": "listed"})
    bare = bare_value(conclusion)
    return None if bare is None else Found(bare, {"source": "bare"})


# --- 1. boxes -------------------------------------------------------------------------


def _quoted_boxes(prompt: str) -> tuple[str, ...]:
    """The boxed values the prompt writes (at most :data:`_MAX_QUOTED`): a multi-part
    problem gives the answers of its earlier parts so ("Subproblem 1: ... the answer is
    $\\boxed{-2+2 \\sqrt{3} i}$"), and a response that boxes them again beside the asked
    part's answer offers no other answer to the question asked."""
    if "\\box" not in prompt:
        return ()
    found = _latex.find_boxes(prompt)[:_MAX_QUOTED]
    return tuple(box.content for box in found if box.content and not is_blank(box))


_MAX_QUOTED = 8


def _boxed(text: str, quoted: tuple[str, ...] = ()) -> Found | None:
    boxes, read_from = final_boxes_read(text)
    if not boxes:
        return None
    if boxes[0].content is None:
        return Found(None, {"source": "boxed", "unclosed": True})
    if negated_box(text, boxes[0].start):
        return Found(None, {"source": "boxed", "negated": True})  # "is not $\boxed{3}$"
    run, with_or = _final_run(boxes, text)
    if any(_latex.box_operand(text, box) for box in boxes[:run]):
        return Found(None, {"source": "boxed", "hedged": True, "operand": True})  # "$-\boxed{3}$"
    parts = {canonical(box.content or ""): box.content or "" for box in reversed(boxes[:run])}
    final = ", ".join(parts.values())
    start = boxes[run - 1].start
    section = section_start(text, start)
    written = {text[box.start : box.end] for box in boxes[:run]}
    if unread_box(text, section, read_from, boxes[0].end, written):  # boxes not read
        return Found(None, {"source": "boxed", "hedged": True, "scan_cut": True, "pred": final})
    others = {
        canonical(box.content or ""): box.content or ""
        for box in boxes[run:]
        if box.start >= section and not _quoted(box.content or "", quoted)
    }
    others.pop(canonical(final), None)
    if _offers_two(final) or any(same_value(other, final) is not True for other in others.values()):
        return Found(None, {"source": "boxed", "hedged": True, "pred": final, "boxes": len(boxes)})
    if with_or and len(parts) > 1:  # "x = \boxed{-5} or x = \boxed{4}": a set, never a scalar
        return Found(final, {"source": "boxed", "alternatives": True}, start, boxes[0].end)
    return Found(final, {"source": "boxed"}, start, boxes[0].end)


def _quoted(value: str, quoted: tuple[str, ...]) -> bool:
    """Whether ``value`` is one of the prompt's ``quoted`` box values (shown the same)."""
    return any(same_value(value, one) is True for one in quoted)


def final_boxes(text: str) -> list[_latex.Box]:
    """The non-blank boxes of ``text``, last first, where a last box written inside
    another box (``\\boxed{3 \\text{ or } \\boxed{4}}``) is replaced by that outer box,
    the inner commands dropped: the outer box is what the response answers, never the
    inner value alone (the boxes inside it are not listed)."""
    return final_boxes_read(text)[0]


def final_boxes_read(text: str) -> tuple[list[_latex.Box], int]:
    """:func:`final_boxes`, and where reading stopped: every box command from there on
    was read. ``find_boxes`` is bounded (MAX_BOXES, MAX_BOX_COMMANDS, MAX_SCAN_CHARS), so
    junk can hide an earlier box; a command before that point, in the concluding
    section, is a box not read (see :func:`unread_box`)."""
    found = _latex.find_boxes(text)
    read_from = found[-1].start if found else len(text)
    boxes = [box for box in found if box.content is None or not is_blank(box)]
    outer = _enclosing(text, boxes[0]) if boxes and boxes[0].content is not None else None
    if outer is None:
        return boxes, read_from
    boxes = [outer, *(box for box in boxes[1:] if box.start < outer.start)]
    return boxes, min(read_from, outer.start)


_BOX_WORD = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")  # not "\boxedx": no box
_OPENERS = re.compile(
    r"(?:[a-z]{0,5}\{)?(?:\\(?:boxed|fbox)\s{0,8}\{|\s)*"
)  # may start mid-command
_CLOSERS_ONLY = re.compile(r"[\s}$.]*")
_MAX_KNOWN = 4  # distinct final boxes removed from an unread part: each is one pass over it


def unread_box(
    text: str, start: int, read_from: int, box_end: int = -1, known: Collection[str] = ()
) -> bool:
    """Whether ``text[start:read_from]`` holds a box command that was not read (past the
    scan's budget, or junk such as an unclosed ``\\boxed{``). A section whose boxes
    were not all read may offer another value: its answer is no answer, never the last
    box alone (a hedge hidden behind 64 KB of ``{`` is still a hedge). Only box openers
    there, and only closers after the final box (ending at ``box_end``), is a deep nest
    of boxes around it: the nest holds nothing else (``\\boxed{\\boxed{...5...}}``).
    Copies of the ``known`` boxes (the final run, written out) are no other value: a
    model looping on ``\\boxed{1}`` a thousand times answers 1."""
    if start >= read_from or _BOX_WORD.search(text, start, read_from) is None:
        return False
    if known:
        unread = text[start:read_from]
        for box in list(known)[:_MAX_KNOWN]:
            unread = unread.replace(box, " ")
        if _BOX_WORD.search(unread) is None:
            return False
    nest = box_end >= 0 and _OPENERS.fullmatch(text, start, read_from) is not None
    return not (nest and _CLOSERS_ONLY.fullmatch(text, box_end) is not None)


_BOX_COMMAND = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s{0,8}")
_BRACE = re.compile(r"\\.|[{}]", re.DOTALL)
_MAX_ENCLOSING = 16  # box commands looked at before a box: bounds the work on junk


def _enclosing(text: str, box: _latex.Box) -> _latex.Box | None:
    """The outermost box whose braces enclose ``box`` (it starts at most MAX_BOX_CHARS
    before it), with the box commands inside it dropped; None when none does."""
    outer, pos = None, box.start
    floor = max(0, box.start - _latex.MAX_BOX_CHARS)
    for _ in range(_MAX_ENCLOSING):
        pos = max(text.rfind("\\boxed", floor, pos), text.rfind("\\fbox", floor, pos))
        if pos < 0:
            break
        command = _BOX_COMMAND.match(text, pos)
        brace = command.end() if command else -1
        if brace < len(text) and text[brace] == "{" and (end := _closing(text, brace)) >= box.end:
            inner = _BOX_COMMAND.sub("", text[brace + 1 : end - 1]).strip()
            while inner.startswith("{") and _closing(inner, 0) == len(inner):
                inner = inner[1:-1].strip()  # "\boxed{\boxed{7}}": the 7
            outer = _latex.Box(pos, end, inner)
    return outer


def _closing(text: str, brace: int) -> int:
    """Where the group opened at ``brace`` ends (past its ``}``), or -1 (unclosed)."""
    depth = 0
    for token in _BRACE.finditer(text, brace, brace + _latex.MAX_BOX_CHARS):
        depth += {"{": 1, "}": -1}.get(token.group(), 0)
        if depth == 0:
            return token.end()
    return -1


def _final_run(boxes: Sequence[_latex.Box], text: str) -> tuple[int, bool]:
    """How many boxes, from the last, form the final answer; and whether "or" joins them."""
    run, with_or = 1, False
    while run < len(boxes):
        kind = _latex.box_join(boxes[run], boxes[run - 1], text)
        if kind is None:
            break
        with_or = with_or or kind == "or"
        run += 1
    return run, with_or


def is_blank(box: _latex.Box) -> bool:
    """A box with nothing in it: ``\\boxed{}``, ``\\boxed{ }``, ``\\boxed{\\phantom{2}}``."""
    return box.content is not None and _latex.is_blank(box.content)


def canonical(answer: str) -> object:
    """What two boxes must share to count as the same answer (``\\frac12`` and ``0.5`` do)."""
    norm = _latex.normalise(answer)
    number = _latex.exact_number(norm)
    return norm if number is None else number


# --- 2. <answer> tags -------------------------------------------------------------------


def _final_tag(text: str) -> Found | None:
    """The last ``<answer>`` tag's answer; none when a later ``<answer>`` is left open
    holding math (``<answer>3</answer> <answer>4``: a second answer, cut off, as an
    unclosed last box is), or when an open one before it holds another number alone
    (``<answer>3<answer>4</answer>``: two answers)."""
    opened, close = text.rfind("<answer>"), text.rfind("</answer>")
    if 0 <= close < opened and _MATHY.search(text, opened):
        return Found(None, {"source": "answer_tag", "unclosed": True})
    found = _tagged(text)
    if found is not None and found.answer and found.extra["source"] == "answer_tag":
        if (other := _open_tag_value(text, close, found.answer)) is not None:
            return Found(None, {"source": "answer_tag", "hedged": True, "pred": other})
    return found


def _open_tag_value(text: str, close: int, answer: str) -> str | None:
    """A number, surely not ``answer``, that an ``<answer>`` left open before the last
    tag holds alone (``<answer> $28$ <answer> $27$ <answer> 18 </answer>``); a chain of
    steps (``=<answer> $10-3$ =<answer> 7</answer>``) or prose in it is no answer."""
    inner = text.rfind("<answer>", 0, close)
    floor = max(0, inner - _latex.MAX_BOX_CHARS, text.rfind("</answer>", 0, inner) + 1)
    segments = text[floor:inner].split("<answer>")[1:]  # what each open tag holds
    for segment in segments[-_MAX_OFFERED:]:
        value = segment.strip(_OUTER_NOISE + "$\\=\n")
        if _is_number(value) and same_value(value, answer) is False:
            return value
    return None


def _tagged(text: str) -> Found | None:
    close = text.rfind("</answer>")
    if close < 0:
        return None
    open_ = text.rfind("<answer>", max(0, close - _latex.MAX_BOX_CHARS), close)
    if open_ < 0:
        return None
    content = text[open_ + len("<answer>") : close].strip()
    if _NEGATED.match(content):  # "<answer>not $3$ but $4$</answer>": no value stated
        return Found(None, {"source": "answer_tag", "negated": True, "pred": content[:200]})
    answer = _line_answer(content) if _ANSWER_MARKER.search(content) else _tag_value(content)
    if answer is None and _VALUE_LIST.fullmatch(content):  # "108\\text{ deg}, 109\\text{ deg}"
        answer = content  # a list of values is the answer, compared whole (not a passage)
    passage = answer is None and _MATHY.search(content) is not None
    if alternatives := _tag_alternatives(content, plain=passage):
        return Found(None, {"source": "answer_tag", "hedged": True, "pred": alternatives}, open_)
    if _qualified_value(content):  # "<answer>5 isn't right</answer>", "$5 \) or 6$"
        return Found(None, {"source": "answer_tag", "qualified": True, "pred": content[:200]})
    if passage and (stated := stated_value(content)) is not None:
        # "The area of the rectangle is $50$.": the tag's one value, stated
        return Found(stated, {"source": "answer_tag", "stated": True}, open_, inside_tag(open_))
    if passage:
        # a sentence or a derivation: math-verify reads it, anchored by the word "answer"
        # (its place is kept: final answers offered after the tag must agree with it)
        read = _TAG_PASSAGE.format(content)
        return Found(read, {"source": "expression", "tag": True}, open_, close)
    if not answer and content.strip(_OUTER_NOISE + "$") and not _PLACEHOLDER.fullmatch(content):
        # words and no value ("no solution", "cannot be determined"): the tag answers that
        # there is none, and no number elsewhere answers for it
        return Found(None, {"source": "answer_tag", "no_value": True, "pred": content[:200]})
    inside = inside_tag(open_)  # words after the value, in the tag or after it, offer
    return Found(answer, {"source": "answer_tag"}, open_, inside) if answer else None


def inside_tag(open_: int) -> int:
    """Where the content of the ``<answer>`` tag opening at ``open_`` begins."""
    return open_ + len("<answer>")


# Several values with units or LaTeX, comma-separated: "108\\text{ degrees}, 109\\text{
# degrees}". (Read as a passage, math-verify's extraction would take the first alone.)
_LIST_ITEM = r"\$?[ \t]*-?\d[\d.]*[ \t]*(?:\\text\{[^{}\n]{0,20}\}|\\%|%|\^\\circ|\\pi)?[ \t]*\$?"
_VALUE_LIST = re.compile(_LIST_ITEM + r"(?:,[ \t]+" + _LIST_ITEM + r"){1,15}")


# the format's own words, not an answer: "<answer> answer here </answer>" echoes the prompt
_PLACEHOLDER = re.compile(
    r"(?i)[\s.…]*(?:(?:your|the|final|my)[ \t]+)*answer(?:[ \t]+(?:goes[ \t]+)?here)?[\s.…]*"
    r"|[\s.…]*|[\s.…]*\.\.\.[\s.…]*"
)


def _tag_alternatives(content: str, *, plain: bool) -> str | None:
    """Two different values a tag offers as alternatives, anywhere in it: with a hedge word
    (``5 (or possibly 6)``, ``5, perhaps 6``), or, in a tag read as a passage (``either 5
    or 6``, ``It is 5. Or 6.``), with a plain "or" and no math after it. math-verify's
    extraction, anchored by "answer", would read the first alone. (A tag holding just
    ``5 or 6`` is the list of both, as a box is.)"""
    content = content[: MAX_ANSWER_CHARS + 100]
    hedge = next((m for m in _TWO_VALUES.finditer(content) if _two_different(m, content)), None)
    last = last_match(_TWO_PLAIN_VALUES, content) if plain and hedge is None else None
    if last is not None and not _MATHY.search(_CLOSERS.sub("", content[last.end() :])):
        hedge = last if _two_different(last, content) else None
    return None if hedge is None else hedge.group()


def _tag_value(content: str) -> str | None:
    """A tag that holds just a value (``<answer> 3 </answer>``, ``<answer>$x=5$</answer>``),
    numbers one a line (a list, ``5, 6``, never the first alone), or None when it holds
    more: several lines or sentences, a chain of ``=``, prose."""
    lines = [line.strip(_OUTER_NOISE + "$") for line in content.splitlines() if line.strip()]
    if len(lines) > 1 and all(map(_is_number, lines)):
        return ", ".join(lines)
    if len(lines) > 1:
        return _derived(content)
    if content.count("=") > 1:
        return None
    sentence = _SENTENCE_END.search(content)
    if sentence and content[sentence.end() :].strip(_OUTER_NOISE):
        return None
    return clean_answer(content)


def _derived(content: str) -> str | None:
    """The result of a tag that is a derivation, one math span a line, ending in ``$N =
    6009$``: the 6009, when no other line sets a name to a plain number (``$x = 3$``
    then ``$x = 4$`` offers two: None, the tag is a passage)."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    if len(lines) > _MAX_DERIVED or not all(map(_SPAN_LINE.fullmatch, lines)):
        return None
    results = [_SET_NUMBER.fullmatch(line.strip("$ .")) for line in lines]
    last = results[-1]
    if last is None or any(found and found.group(1) != last.group(1) for found in results):
        return None
    return last.group(1)


_MAX_DERIVED = 32
_SPAN_LINE = re.compile(r"\$[^$\n]{1,200}\$\.?")
_SET_NUMBER = re.compile(r"[A-Za-z]\w{0,3}\s{0,2}=\s{0,2}(-?\d[\d,]*(?:\.\d+)?)")


# --- 3. answer lines --------------------------------------------------------------------


def _lined(text: str) -> Found | None:
    offset = max(0, len(text) - LINE_TAIL_CHARS)
    line = _last_line(_line_answers(text[offset:], last=True))
    return None if line is None else Found(line[1], {"source": "answer_line"}, offset + line[0])


def _line_answer(tail: str) -> str | None:
    """The value of the last usable answer line of ``tail`` (see :func:`_last_line`)."""
    line = _last_line(_line_answers(tail))
    return None if line is None else line[1]


_Line = tuple[int, str, str]
"""An answer line: (where its marker starts, its value, the raw text the value was read from)."""


def _last_line(lines: Sequence[_Line]) -> _Line | None:
    """The last answer line; one holding math beats a later bare word
    ("the answer is 2/16 ... The answer is before.")."""
    math = [line for line in lines if _MATHY.search(line[1])]
    candidates = math or list(lines)
    return candidates[-1] if candidates else None


def _line_answers(tail: str, *, unboxed: bool = False, last: bool = False) -> list[_Line]:
    """The usable answer lines of ``tail`` (the tail is short) among its last
    _MAX_MARKERS markers, first first; with ``unboxed``, not those whose value opens with
    a box (that box is an answer already); with ``last``, a value alone on its line in
    bold or after ``####`` only when no math follows it (else a step highlighted)."""
    lines = []
    for marker in list(_markers(tail))[-_MAX_MARKERS:]:
        if unboxed and _BOX_FIRST.match(tail, marker.end()):
            continue  # "the answer is $\boxed{4}$": skipped before any cleaning, for speed
        found = _after_marker(tail, marker)
        if found and (undercut(tail, marker.start()) or _judged(*found)):
            # "I don't think the answer is 7", "Some claim the answer is 7": a value
            # named in a clause that denies, doubts or reports it answers nothing plainly;
            # nor does one that the words after it judge ("The answer is\n\n7 is the
            # classic distractor here.": the line after the marker is a sentence of its own)
            found = (f"{found[0]}{QUESTIONED}", found[1])
        if found:
            lines.append((marker.start(), *found))
    if "**" in tail or "####" in tail:
        lines = sorted([*lines, *_marked_lines(tail, last=last)])
    return lines


# A value alone on its line, marked as an answer is: "**18**", "**$x = 5$**", "#### 18"
# (not a bold heading, "**Step 2**", nor a markdown heading, "#### 4. Verification")
_MARKED_LINE = re.compile(
    r"(?m:^)[ \t>-]{0,4}(?:\*\*(?P<bold>[ \t$\\(\[-]{0,3}(?:[\d.\\]|[A-Za-z][ \t]{0,2}=|[A-J]\)?\*)"
    r"[^*\n]{0,80})\*\*|####[ \t]{0,8}(?P<hashed>\$?-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)\$?))"
    r"[ \t.]{0,3}(?m:$)"
)


def _marked_lines(tail: str, *, last: bool = False) -> list[_Line]:
    """The values alone on their lines in bold or after ``####`` (the last _MAX_MARKERS):
    a final answer as plainly as a box or an answer line is; with ``last``, only one
    that no math follows."""
    lines = []
    for found in list(_MARKED_LINE.finditer(tail))[-_MAX_MARKERS:]:
        if last and _MATHY.search(tail, found.end()):
            continue
        raw = found.group("bold") or found.group("hashed")
        value = clean_answer(raw.rstrip("*"))
        if value and (_MATHY.search(value) or _label(value)):
            lines.append((found.start(), value, raw))
    return lines


_MAX_MARKERS = 64
"""Answer markers read in a tail: more than the _MAX_OFFERED compared for hedging, and
few enough that a tail of "Answer: Answer: ..." is read in about a millisecond."""


def _markers(tail: str) -> Iterator[re.Match[str]]:
    """``_ANSWER_MARKER.finditer(tail)``, three times faster: the word is found first."""
    for word in _ANSWER_WORD.finditer(tail):
        marker = _ANSWER_MARKER.match(tail, word.start())
        if marker is not None:
            yield marker


def _after_marker(tail: str, marker: re.Match[str]) -> tuple[str, str] | None:
    line, _, after = tail[marker.end() :].partition("\n")
    closing = _CLOSING_TAG.search(line)
    if closing and _restates(line[: closing.start()], line[closing.end() :]):
        line = line[: closing.start()]  # "the answer is 150</think>  150": the line ends
    if _RESTATED_MARKER.match(line):
        return None  # "The answer is Answer: 720": the later marker reads the value
    if value := clean_answer(line):
        usable = marker.group("sep") or marker.group("bold")
        return (value, line) if usable else None
    if not marker.group("sep") and not marker.group("bold"):
        return None  # a bare "answer" at a line end is prose, not a heading
    if line.rstrip(" \t*").endswith((".", "!", "?")) and _WORD.search(line):
        return None  # "Answer: Let's write the code.": a finished sentence, no heading
    lines = after.split("\n", _HEADING_LINES)[:_HEADING_LINES]
    at = next((i for i, ln in enumerate(lines) if _FENCE.match(ln) or clean_answer(ln)), None)
    if at is None or _FENCE.match(lines[at]):
        return None  # "the exact answer:\n```python": a program follows, no value
    value = clean_answer(lines[at]) or ""
    more = clean_answer(lines[at + 1]) if at + 1 < len(lines) else None
    if more and _is_number(value) and _is_number(more):
        value = f"{value}, {more}"  # "**Final Answer**" then "5", "6": a list, never the 5
    return value, lines[at]


def _judged(value: str, raw: str) -> bool:
    """Whether the words around ``value``, in the ``raw`` text it was read from, weigh
    or judge it (:func:`rewardkit.verifiers._commitment.discussed`)."""
    at = raw.find(value)
    return at >= 0 and discussed(raw, at, at + len(value))


_CLOSING_TAG = re.compile(r"</[A-Za-z_]{1,20}>")
_FENCE = re.compile(r"[ \t]*```")  # a fenced code block opens (or closes) on this line


def _restates(before: str, after: str) -> bool:
    """Whether what follows a closing tag on an answer line is nothing or the value before
    it again (``150</think>  150``): then the value before the tag is the line's. Another
    value after it (``150</think> 151``) keeps the line whole: two values, no answer."""
    value, rest = before.strip(_OUTER_NOISE + "$"), after.strip(_OUTER_NOISE + "$")
    if not value:
        return False
    return not rest or rest == value or rest == value.rpartition("=")[2].strip()


_RESTATED_MARKER = re.compile(
    r"[ \t*]{0,4}(?i:(?:the[ \t]+)?(?:final[ \t]+)?answer)[ \t*]{0,3}(?:[:：]|(?i:is\b))"
)
_HEADING_LINES = 8
"""The lines after a heading (``**Final Answer**``) searched for its value: bounded, so a
tail of 4000 headings costs 4000 short reads, not 4000 reads of the tail."""


@functools.lru_cache(maxsize=4096)  # pure; a row's hedge checks read the same lines again
def clean_answer(line: str) -> str | None:
    """The value on an answer line: tags, ``$``, periods and trailing prose trimmed.

    None when nothing is left or the line reads as a sentence rather than a value.
    """
    line = _BOLD.sub(r"\1", _strip_tags(_HOPE.sub("", line[: MAX_ANSWER_CHARS + 100])))
    if adverb := _ADVERB_FIRST.match(line):  # "the answer is indeed $50$": 50
        line = line[adverb.end() :]
    trailing = _TRAILING_OFF.search(line)
    if trailing:  # "Answer: 27...": trailing off, not stated (kept for the check to refuse)
        value = _value_on(line[: trailing.start()].strip(_OUTER_NOISE))
        return f"{value}\\ldots" if value else None
    line = line.strip(_OUTER_NOISE)  # "**18** or **20**": both values
    asked = _SENTENCE_END.search(line)
    if asked and asked.group().startswith("?"):  # "Answer: 27?": a question, not an answer
        value = _value_on(line[: asked.start()])
        return f"{value}{QUESTIONED}" if value else None
    return _value_on(line)


# An adverb between the marker and the value: "The answer is indeed 50.", "... is
# actually $6$.", "... is therefore 5" (no part of the value)
_ADVERB_FIRST = re.compile(
    r"[ \t]*(?i:indeed|actually|exactly|precisely|simply|just|clearly|still|now|then|therefore"
    r"|thus|hence|also|really|certainly|definitely|obviously|correctly)\b[ \t]*,?[ \t]*(?=\S)"
)
_TRAILING_OFF = re.compile(r"(?<=[\d$}])[ \t]{0,2}(?:\.{3,}|\u2026)[ \t.*]*$")


def _value_on(line: str) -> str | None:
    spans, end = _leading_spans(line)
    if spans:
        return _qualified(_span_value(spans), _first_sentence(line[end:]))[:MAX_ANSWER_CHARS]
    line = _INLINE_DELIMITER.sub("", line).strip(_OUTER_NOISE + "$")
    value = _first_sentence(line)
    if number := _NUMBER_THEN_WORDS.fullmatch(value):
        if not _latex.factor_first(value[number.end(1) :]):  # "27π" is 27π, "2x" is 2x
            value = _qualified(number.group(1).rstrip(","), value[number.end(1) :])
    elif glued := _NUMBER_SPAN_WORDS.fullmatch(value):  # "15$\pi$ square units": 15\pi
        value = _qualified(glued.group(1) + glued.group(2).strip(), glued.group(3))
    elif number := _NUMBER_COMMA_WORD.match(value):
        value = number.group(1).rstrip(",")
    elif (lead := _NUMBER_LEAD.match(value)) and _changes(value[lead.end() :]):
        # "7 to the power 2", "7 plus or minus 1", "7 percent of 8": another value, not a
        # sentence to skip past (an earlier box would be read instead)
        value = _qualified(lead.group(1).rstrip(","), value[lead.end() :])
    elif (remark := _NUMBER_REMARK.fullmatch(value)) and _changes(remark.group(2)):
        value = _qualified(remark.group(1), remark.group(2))  # "2 (upper bound)": a hedge
    elif bound := _WORDS_THEN_NUMBER.fullmatch(value):
        words = bound.group(1)
        if (
            _latex.qualifying_words(words)
            or _latex.changes_before(words)  # "half of 27", "negative 27"
            or words.lower().endswith("between")  # "at least 5"
        ):
            value = f"\\text{{{words} }}{bound.group(2)}"
        elif _is_prose(value):
            return None
    elif not value or _is_prose(value):
        return None
    return value[:MAX_ANSWER_CHARS]


def _changes(words: str) -> bool:
    """Words after a value that make it another value or qualify it ("to the power 2",
    "plus or minus 1"), not a list going on ("or 6", "and 7")."""
    return not _JOINED.match(words) and _latex.qualifying_words(words)


def _span_value(value: str) -> str:
    """The value of a math span as it reads outside one: a number then words ("$96
    combinations$", "$16pairings$", "$80살$": a unit, as "96 combinations" is) is the
    number, qualified as there ("$5 or more$"); a stray delimiter ("$28\\)$") is
    dropped. Words are a run of 4 letters or more, or letters beyond ASCII: "$2xy$" and
    "$5 cm$" stay as written."""
    if _INLINE_DELIMITER.search(value) and _is_number(bare := _INLINE_DELIMITER.sub("", value)):
        return bare.strip()
    number = _NUMBER_THEN_WORDS.fullmatch(value)
    if number is None or not _UNIT_WORDS.search(value, number.end(1)):
        return value
    if _latex.factor_first(value[number.end(1) :]):  # "$27π$": 27π
        return value
    return _qualified(number.group(1).rstrip(","), value[number.end(1) :])


_UNIT_WORDS = re.compile(r"[A-Za-z]{4}|[^\W\d_A-Za-z]")


def _first_sentence(text: str) -> str:
    sentence = _SENTENCE_END.search(text)
    return (text[: sentence.start()] if sentence else text).strip(_OUTER_NOISE)


def _qualified(value: str, words: str) -> str:
    """``value``, or ``value\\text{ words}`` when the words after it change or qualify it
    ("5 squared", "5 or more", "$5$ is wrong"): the check refuses those, where dropping
    the words as a unit ("12 apples") would credit the bare number."""
    words = words.strip(_OUTER_NOISE + "$")
    if _latex.factor_first(words) and len(words.split()) == 1:
        return value + words  # "$27$π": 27π
    if not words or "{" in words or "}" in words:
        return value
    if not (_latex.qualifying_words(words) or _latex.factor_first(words)):
        return value
    return f"{value}\\text{{ {words}}}"


def _is_prose(value: str) -> bool:
    """A sentence, not a value: two plain words or more ("He scored $5$ points",
    "enclosed within"); ``\\text{...}`` answers (``428\\text{ square centimeters}``, its
    words a unit) and single words are values."""
    return len(_WORD.findall(_TEXT_GROUP.sub(" ", value) if "\\text" in value else value)) >= 2


_TEXT_GROUP = re.compile(r"\\text\{[^{}]{0,40}\}")


def _strip_tags(line: str) -> str:
    """Drop tags such as ``</think>``, ``<|im_end|>`` and ``</s>`` (models leak them)."""
    return _TAG.sub(" ", line) if "<" in line else line


def _leading_spans(line: str) -> tuple[str | None, int]:
    """``$a$, $b$ and $c$ ...``: the math spans a line starts with, joined by ``, ``, and
    where they end."""
    values: list[str] = []
    pos = end = 0
    while True:
        span = _span_at(line, pos)
        if span is None:
            break
        value, pos = span
        values.append(value.strip())
        end = pos
        joiner = _SPAN_JOIN.match(line, pos) or _spaced_number(line, pos, value)
        if joiner is None:
            break
        pos = joiner.end()
    # a full stop ends a value ("$4.$"); a leading point is its decimal point ("$.4$")
    values = [value.strip().rstrip(" .") for value in values if value.strip(" .")]
    return (", ".join(values), end) if values else (None, end)


def _spaced_number(line: str, pos: int, value: str) -> re.Match[str] | None:
    """The spacing between two numbers written side by side (``$3$ $4$``): two values
    listed, as two boxes side by side are; never the first alone."""
    gap = _SPACES.match(line, pos)
    following = _span_at(line, gap.end()) if gap else None
    if following is None or not (_is_number(value) and _is_number(following[0])):
        return None
    return gap


def _is_number(value: str) -> bool:
    return _latex.exact_number(_latex.normalise(value)) is not None


def _span_at(line: str, pos: int) -> tuple[str, int] | None:
    for left, right in _SPANS:
        if line.startswith(left, pos):
            end = _closer(line, right, pos + len(left))
            if end < 0:
                return None
            return line[pos + len(left) : end], end + len(right)
    return None


def _closer(line: str, right: str, start: int) -> int:
    """Where ``right`` closes a span, skipping an escaped ``\\$`` (a dollar sign)."""
    end = line.find(right, start)
    while right.startswith("$") and end > 0 and line[end - 1] == "\\":
        end = line.find(right, end + 1)
    return end


# --- hedging: several different final answers -----------------------------------------


def _unless_rejected(found: Found, text: str) -> Found:
    """No answer (``hedged``) when the last value named after ``found``'s answer form is
    taken back (:func:`rewardkit.verifiers._commitment.rejected`: "\\boxed{18} ... We can
    rule out 18.", "18 is the classic distractor here.") and cannot be told from the
    answer; a value told apart is another one ruled out ("so we can rule out 20")."""
    if found.answer is None or found.start < 0:
        return found
    after = found.end if found.end >= 0 else text.find("\n", found.start)  # (a line's end)
    value = last_match(_NAMED_VALUE, text[after:]) if after >= 0 else None
    if value is None or not rejected(value.string, value.start(), value.end()):
        return found
    named = _named(value)
    same = same_value(named, found.answer)
    if same is None:  # "... \\frac{1}{4} is a trap." after 2^{-2}: the check compares them
        return Found(found.answer, {**found.extra, CALLED_WRONG: named}, found.start, found.end)
    if not same:
        return found
    return Found(None, {**found.extra, "hedged": True, "rejected": True, "pred": found.answer})


def _named(value: re.Match[str]) -> str:
    """What ``value`` (a :data:`_NAMED_VALUE` match) names: a span's content, or a number
    with the LaTeX written around it outside math mode (``\\frac{1}{4}`` for its 4)."""
    found, text = value.group(), value.string
    if found.startswith(("$", "\\(")):
        return found.strip("$").removeprefix("\\(").removesuffix("\\)").strip()
    start = max(text.rfind(" ", 0, value.start()), text.rfind("\n", 0, value.start())) + 1
    glued = GLUED.match(text, value.end())
    return text[start : glued.end() if glued else value.end()].strip("()[]")


# A value named after an answer: a math span, or a number (with what LaTeX is glued to it)
_NAMED_VALUE = re.compile(
    r"\$[^$\n]{1,80}\$|\\\([^\n]{1,80}?\\\)|(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?"
)


def _unless_hedged(found: Found, text: str) -> Found:
    """``found``, or no answer (``hedged``) when its concluding section offers another
    final answer that is surely a different value, or one value offers two. A last
    sentence calling another value wrong ("Hmm, 17 is wrong." after a box of 18, its
    lead no correction to 17), or a value that cannot be told from the answer inline
    ("Hmm, $\\frac{1}{4}$ is wrong." after a box of ``2^{-2}``), is no offer: the rest
    is read without it, and the check compares a value of the second kind
    (``CALLED_WRONG``)."""
    if found.answer is None or found.start < 0:
        return found
    named = called_wrong(text, found.end if found.end >= 0 else found.start)
    same = None if named is None else same_value(named.group("value").strip("$"), found.answer)
    if named is None or same is True:
        return _hedged_in(found, text)  # (the answer called wrong: disowns_answer below)
    kept = _hedged_in(found, text[: named.start()].rstrip())
    if kept.answer is None or same is False:  # another value ruled out: nothing offered
        return kept  # ("\boxed{18} ... Hmm, 17 is wrong.": no correction to 17)
    return Found(
        kept.answer, {**kept.extra, CALLED_WRONG: named.group("value")}, kept.start, kept.end
    )


def _hedged_in(found: Found, text: str) -> Found:
    """:func:`_unless_hedged`'s reading of ``text``."""
    assert found.answer is not None
    section = section_start(text, found.start)
    read_from = max(section, len(text) - SECTION_CHARS)
    if unread_answer(text, section, read_from, boxes=False):
        return Found(None, {**found.extra, "hedged": True, "scan_cut": True, "pred": found.answer})
    undecided: list[str] = []
    for value, raw in _offered(text[read_from:]):
        if _offers_two(raw) or not _same_or_noted(value, found.answer, undecided):
            return Found(None, {**found.extra, "hedged": True, "pred": found.answer})
        if "=" in value and false_chain(value):  # "\boxed{7} ... <answer>x = 8 = 7</answer>":
            return Found(None, {**found.extra, "hedged": True, "pred": found.answer})
    end = found.end if found.end >= 0 else found.start
    if blank_answer(text[end:]):  # a later last form is blank or says there is none
        return Found(None, {**found.extra, "blank": True, "pred": found.answer})
    answer = found.answer
    same = lambda value: same_value(value.strip("$"), answer)  # noqa: E731
    if denies_answer(text, end, same) or disowns_answer(text, end, same):
        return Found(None, {**found.extra, "hedged": True, "pred": found.answer})
    offers = _offered_in_words(rest_of_paragraph(text, end))
    later = later_paragraphs(text, end)  # the next paragraph offers or takes back too
    values = [m.group() for m in _PREVIOUS_VALUE.finditer(later)]
    if not values or same_value(_prose_value(values[-1]), found.answer) is not True:
        offers += _offered_in_words(later)  # unless its last value is the answer again
        offers += [(m, _prose_value(m.group("value"))) for m in _CORRECTED.finditer(later)]
    closing = closing_correction(text, end)  # "Actually, on reflection, $4$." at the end
    values = [value for _, value in offers] + ([_prose_value(closing)] if closing else [])
    listed = ends_on_list(text[end:])  # "So $a = 7, 6, 8$." after the answer: candidates
    values += [listed] if listed else []
    offered = last_line_values(text[end:])  # "</answer>\n\n$3$, $2$": offered last
    values += [", ".join(offered)] if offered else []
    for value in values:
        if not _same_or_noted(value, found.answer, undecided):
            return Found(None, {**found.extra, "hedged": True, "pred": found.answer})
    if len(undecided) > _MAX_ALSO:  # more final answers than are checked: no answer
        return Found(None, {**found.extra, "hedged": True, "pred": found.answer})
    if undecided:
        extra = {**found.extra, ALSO_OFFERED: undecided}
        return Found(found.answer, extra, found.start, found.end)
    return found


_MAX_ALSO = 4  # other answers the check compares with the gold: each may cost math-verify


_RELATION_LEAD = re.compile(
    r"\s*(?:[A-Za-z]\s*)?(?:\\(?:approx|sim|simeq|to|ne|neq|not\s*=)(?![A-Za-z])|[≈≠∼→])"
)


def _same_or_noted(value: str, answer: str, undecided: list[str]) -> bool:
    """False when ``value`` is surely another value than ``answer``; True otherwise,
    noting it in ``undecided`` when that cannot be told inline."""
    if value != answer and _latex.value_qualifier(value) is not None:
        return False  # "7\text{ below zero}", "7\text{ ?}" after a box of 7: not its support
    if ("=" in value and false_chain(value)) or _RELATION_LEAD.match(value):
        return False  # "Answer: 7 = 6", "Answer: \approx 6" after a box of 6: no support
    if value != answer and (_latex.unknown_first(value) or _latex.subscripted_number(value)):
        return False  # "Answer: x \ll 6", "Answer: 6_8" after a box of 6: no support either
    same = same_value(value, answer)
    if same is None and value.strip() and value not in undecided:
        undecided.append(value)
    return same is not False


# A math span, in which an escaped dollar (``$\\$86.39$``) is a dollar sign, not its end
_MATH_SPAN = r"\$(?:[^$\\\n]|\\[^\n]){1,80}\$"
# A value in prose: a math span, or a number that does not start a calculation
_PROSE_VALUE = (
    r"(?P<value>" + _MATH_SPAN + r"|\\\([^\n]{1,80}?\\\)"
    r"|" + NUMBER_START + r"-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:/\d+)?(?![\d.]*\d))"
    r"(?![ \t]{0,2}(?:[-+*/×÷=^]|\\(?:times|cdot|div)(?![A-Za-z])))"
)
# each opens with a lookahead on where a match can begin (_common.OFFER_CUE_AHEAD): the
# same matches, found several times faster in a long paragraph
_CUED = re.compile(OFFER_CUE_AHEAD + OFFER_CUE + r"[ \t,:]{1,3}" + _PROSE_VALUE)  # "Or 20"
_CORRECTED = re.compile(  # "Wait, it's 20"
    CORRECTION_CUE_AHEAD + CORRECTION_CUE + CORRECTION_GAP + r"(?:\*\*)?" + _PROSE_VALUE
)
_PREDICATED = re.compile(  # "20 would also work", "$x = 20$ is also a solution"
    VALUE_AHEAD + r"(?<![\w.=+*/^\\-])(?<![=+*/^-][ \t])" + _PROSE_VALUE + OFFER_PREDICATE
)


def _offered_in_words(window: str) -> list[tuple[re.Match[str], str]]:
    """The values ``window`` (a short paragraph tail) offers in words, as (match, value):
    a word of possibility or alternative then a value ("or maybe 20", "Alternatively,
    $20$", "another possible answer is 20"), or a value then words offering it too ("20
    would also work"). See :data:`~rewardkit.verifiers._common.OFFER_CUE`."""
    if not window:  # half the calls: a box or an answer that ends its paragraph
        return []
    found = list(_CUED.finditer(window))
    if may_offer_predicate(window):  # most windows hold no word of one: skip the regex
        found += _PREDICATED.finditer(window)
    return [(match, _prose_value(match.group("value"))) for match in found]


def _unless_offered(found: Found) -> Found:
    """A passage for math-verify (a tag's text too) whose last paragraph ends by offering
    a value in words after a different one ("I think $18$. Alternatively, $20$.", "18,
    though 20 could also be right"): math-verify would read one of them alone."""
    if found.answer is None or found.extra.get("source") != "expression":
        return found
    tail = found.answer[-LINE_TAIL_CHARS:]
    brk = last_match(PARAGRAPH_BREAK, tail)
    paragraph = tail if brk is None else tail[brk.end() :]
    offers = _offered_in_words(paragraph)
    if not offers:
        return found
    match, offered = max(offers, key=lambda offer: offer[0].end())
    if _MATHY.search(_CLOSERS.sub("", paragraph[match.end() :])):
        return found  # a value comes after the offer: it is no last word
    before = [m.group() for m in _PREVIOUS_VALUE.finditer(paragraph, 0, match.start())]
    if not before or same_value(_prose_value(before[-1]), offered) is not False:
        return found
    return Found(None, {**found.extra, "hedged": True, "pred": match.group().strip()[:200]})


def _without_called_wrong(found: Found) -> Found:
    """A passage for math-verify that ends on a sentence naming a value and calling it
    wrong ("... $57,500. Hmm, 57500 is wrong."): math-verify reads the passage without
    that sentence, and a right reading is no answer if the value called wrong is a gold
    too (``extra.called_wrong``, compared by the check)."""
    if found.answer is None or found.extra.get("source") != "expression":
        return found
    named = called_wrong(found.answer)
    if named is None:
        return found
    passage = found.answer[: named.start()].rstrip()
    return Found(passage, {**found.extra, CALLED_WRONG: named.group("value")})


def _unless_corrected(found: Found) -> Found:
    """A passage for math-verify whose end takes its answer back and gives another
    ("... is $50$.\n\nActually, on reflection, $51$."): the last answer given is the
    one asserted, so the value after the correction is the passage math-verify reads."""
    if found.answer is None or found.extra.get("source") != "expression":
        return found
    tail = found.answer[-LINE_TAIL_CHARS:]
    closing = closing_correction(tail, any_lead=False)
    if closing is not None:
        if "\\" in closing and "$" not in closing and "\\(" not in closing:
            closing = f"${closing}$"  # "137\\frac{1}{2}": math-verify reads LaTeX in math mode
        return Found(closing, {**found.extra, "corrected": True})
    correction = last_match(_CORRECTED, tail) if may_correct(tail) else None
    if correction is None or _MATHY.search(_CLOSERS.sub("", tail[correction.end() :])):
        return found  # none, or a value comes after it: the passage goes on
    return Found(correction.group("value"), {**found.extra, "corrected": True})


_PREVIOUS_VALUE = re.compile(_MATH_SPAN + r"|(?<![\w.])-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?![\d.]*\d)")


def _prose_value(text: str) -> str:
    if text.startswith("\\("):
        return text[2:-2].strip()
    return text.strip("$").strip().rstrip(",")  # "18, 20 works too": the 18


def _offered(window: str) -> list[tuple[str, str]]:
    """The final answers ``window`` offers besides its boxes, as (value, raw text): the
    last ``<answer>`` tag and every answer line holding math or an option label (a line
    whose value is a box is that box)."""
    lines = _line_answers(window, unboxed=True)
    offered = [(value, raw) for _, value, raw in lines if _MATHY.search(value) or _label(value)]
    offered += [(tag, tag) for tag in _tag_values(window)]
    return [(value, raw) for value, raw in offered[-_MAX_OFFERED:] if not _has_box(value)]


def _tag_values(window: str) -> list[str]:
    """The values of the last ``<answer>`` tags of ``window`` (at most _MAX_OFFERED)."""
    values, end = [], len(window)
    for _ in range(_MAX_OFFERED):
        tag = _tagged(window[:end])
        if tag is None:
            break
        if tag.answer is not None and tag.extra["source"] == "answer_tag":
            values.append(tag.answer)
        elif tag.extra.get("qualified") or tag.extra.get("negated"):
            # "<answer>7?</answer>", "<answer>at least 7</answer>": a last form that
            # answers nothing plainly, never an earlier box's support
            values.append(f"{tag.extra.get('pred', '')}{QUESTIONED}")
        elif tag.answer is not None and tag.extra.get("tag") and "=" in tag.answer:
            # a tag left to math-verify as a passage, holding a false statement ("x = 8 =
            # 7"): no support for an earlier box (it answers nothing; the box did)
            inner = tag.answer.replace("<answer>", "").replace("</answer>", "").strip()
            if false_chain(inner):
                values.append(inner)
        end = window.rfind("</answer>", 0, end)
    return values


def _label(value: str) -> bool:
    """An option label (``C``, ``(C)``): an answer though it holds no math."""
    return _latex.choice_label(_latex.normalise(value))[0] is not None


def _has_box(text: str) -> bool:
    return "\\boxed" in text or "\\fbox" in text


_MAX_OFFERED = 32  # the window is short; this bounds the comparisons made inline


def same_value(first: str, second: str) -> bool | None:
    """Whether two answers are the same value: True, False, or None when that cannot be
    told inline (then no hedging is called: the final answer goes to the check).

    Equal normalised strings and exact numbers (``\\frac12``, ``0.5``) are the same; a
    decimal is the same as a value it rounds or truncates (``0.333``, ``\\frac13``);
    option labels compare by their letters (``C``, ``(C)``); a percent or degree sign,
    which normalising drops, makes it None; other shapes are compared by
    :mod:`~rewardkit.verifiers._numeric`'s exact reading (``x+1`` and ``1+x`` are the
    same; ``x = 5`` and ``5`` too, the name being dropped; ``a=1, b=2`` against ``1, 2``,
    named against unnamed, cannot be told).
    """
    if canonical(first) == canonical(second):
        return True
    norm = _latex.normalise(first), _latex.normalise(second)
    labels = [_latex.choice_label(text)[0] for text in norm]
    if any(labels):
        return None if not all(labels) else labels[0] == labels[1]
    units = _WITH_UNIT.fullmatch(first), _WITH_UNIT.fullmatch(second)
    if units[0] and units[1] and units[0].group(1) == units[1].group(1):
        words = f"{units[0].group('unit') or ''} {units[1].group('unit') or ''}"
        if not _latex.qualifying_words(words) and not _NO_UNIT.search(words):
            return True  # "120 degrees", "120^\circ", "120"; "4 meters", "4": one number
    if _DROPPED_SIGN.search(first + second):
        return None  # "5\%" and "0.05", "30^\circ" and "\frac{\pi}{6}"
    one, two = (_latex.exact_number(text) for text in norm)
    if one is not None and two is not None:
        return _rounding(norm[0], one, two) or _rounding(norm[1], two, one)
    if "." in norm[0] + norm[1]:
        return None  # a decimal against an expression: math-verify rounds, it decides
    left, right = _numeric.prepare(first), _numeric.prepare(second)
    if left is None or right is None:
        return None
    return _numeric.compare(left, right)


_DROPPED_SIGN = re.compile(r"%|\\circ|°|\\degree")
# A number and a unit at most: a degree sign, a word or two of letters ("meters", not "x"
# nor "pi": a product), plain or in \text{}
_UNIT_NAME = r"(?!pi\b)[A-Za-z]{2,12}"
_WITH_UNIT = re.compile(
    r"[ \t]*(-?\d+(?:\.\d+)?)[ \t]*(?:\^[ \t]*\{?[ \t]*\\circ[ \t]*\}?|°|\\degree|(?P<unit>"
    + _UNIT_NAME
    + r"|\\(?:text|mbox|mathrm)\{[ \t]*"
    + _UNIT_NAME
    + r"(?:[ \t]"
    + _UNIT_NAME
    + r")?[ \t]*\}))?[ \t]*"
)
# words that say something of the number, never a unit ("18 is wrong", "18 or more")
_NO_UNIT = re.compile(
    r"(?i)\b(?:is|are|was|were|be|or|and|not|no|but|if|only|so|too|it|maybe|wrong|right"
    r"|correct|incorrect)\b"
)


def _rounding(norm: str, value: Fraction, other: Fraction) -> bool:
    """Whether ``value``, written ``norm``, is ``other`` rounded or truncated (or equal)."""
    places = len(norm.partition(".")[2]) if "." in norm else 0
    return value == other or ("." in norm and abs(value - other) < Fraction(1, 10**places))


_NUMBER = r"-?(?:\d+(?:\.\d+)?|\.\d+)(?:/\d+)?"
_HEDGE_JOIN = (
    r"(?:or\s{1,3})?(?:maybe|perhaps|possibly|probably)\b|\\(?:vee|lor)(?![A-Za-z])|\|"
    # "5 \& 6", "5 \mid 6", "5 \cup 6", "5 \sim 6", "5 或 6", "5 and/or 6": mv reads the 6
    r"|\\(?:mid|cup|sim)(?![A-Za-z])|或者?|\|\||[—–-]\s{0,3}or\b|\\\||\\?&|and/or\b|\\text\{\s{0,3}(?:resp\.?|and/or|/)\s{0,3}\}"
)
# in one answer only (a box, an answer line), not in a derivation: "3 \\ 4" (a line break),
# "3 \vert 4", "3 \to 4", "3 -> 4", "3 \text{, } 4", "3 \hspace{1cm} 4": math-verify reads the 4
# ("3 \approx 4": the 3; a rounding, "3.14 \approx 3.1", is one value)
_ANSWER_JOIN = (
    _HEDGE_JOIN
    # "or" in another language, "vs": math-verify reads no set there ("3 oder 4", "3 vs. 4")
    + r"|(?!(?i:or)\b)"
    + OR_WORD
    + r"|\\\\(?:\[[^\]]{0,8}\])?|\\(?:vert|to|rightarrow|Rightarrow|implies|longrightarrow|approx)(?![A-Za-z])"
    r"|\\text\{\s{0,3}[,;]?\s{0,3}\}|\\hspace\*?\{[^{}]{0,12}\}|[→⇒⟶≈]|->|=>"
)
_SEPARATOR = r"\s{0,3}[,.;]?\s{0,3}\(?\s{0,3}"
_UNIT_WORD = r"(?:\s{1,3}[^\W\d_]{2,20})?"  # "3 apples, maybe 4"
_TWO_VALUES = re.compile(  # "3, maybe 4", "$3$; perhaps $4$", "3 \vee 4", "3 | 4"
    rf"(?=[-.\d])(?<![\w.])(?P<a>{_NUMBER}){_UNIT_WORD}\$?{_SEPARATOR}(?P<join>{_HEDGE_JOIN})"
    rf"\s{{0,3}}\$?\s{{0,3}}(?P<b>{_NUMBER})(?![\d.]*\d)",
    re.IGNORECASE,
)
_TWO_IN_ONE = re.compile(  # _TWO_VALUES, and the joins only one answer offers two with
    rf"(?=[-.\d])(?<![\w.])(?P<a>{_NUMBER}){_UNIT_WORD}\$?{_SEPARATOR}(?P<join>{_ANSWER_JOIN})"
    rf"\s{{0,3}}\$?\s{{0,3}}(?P<b>{_NUMBER})(?![\d.]*\d)",
    re.IGNORECASE,
)
_TWO_PLAIN_VALUES = re.compile(  # in a passage: "3 or 4", "x = -5 or x = 4", "3 and/or 4"
    # "or" in any language: "3 vs 4", "3 oder 4", "3 或 4", "3 of 4" (Dutch); math spans
    # joined by an English "or" ("$-5$ or $4$") are math-verify's set, by another word not
    rf"(?=[-.\d])(?<![\w.])(?P<a>{_NUMBER}){_UNIT_WORD}(?P<span>\$)?{_SEPARATOR}"
    rf"(?P<join>(?(span)(?!(?i:and/)?(?i:or)\b))(?:and/)?{OR_WORD}(?:\s{{1,3}}else)?)\s{{0,3}}"
    rf"(?(span)\$)(?:[A-Za-z]\s{{0,2}}=\s{{0,2}})?(?P<b>{_NUMBER})(?![\d.]*\d)",
    re.IGNORECASE,
)
# a line's first value given as a range, after "is" or ":": "It is 3 to 4", "is between 3
# and 4" (not "rose by 2 to 18", "from 12 to 18": where a change ends)
_RANGE = re.compile(
    rf"^(?:[^\d\n]{{0,200}}?(?:\b(?i:is|are|was|were|be|get|answer)\s{{1,3}}|[:=]\s{{0,3}})|\s{{0,3}})"
    rf"(?:(?i:between)\s{{1,3}}\$?(?P<a>{_NUMBER})\$?\s{{1,3}}(?P<join>and)"
    rf"|\$?(?P<a2>{_NUMBER})\$?\s{{0,3}}(?P<join2>(?i:to|through)\s|[~–—]))"
    rf"\s{{0,3}}\$?(?P<b>{_NUMBER})(?![\d.]*\d)"
)
_LEAD = re.compile(r"[\s*:$]*(?:\\[(\[])?\s*")
_BOX_FIRST = re.compile(_LEAD.pattern + r"\\(?:boxed|fbox)(?![A-Za-z])")


def _offers_two(raw: str) -> bool:
    """Whether an answer (a box, a tag, the text of an answer line) opens with two different
    numbers offered as alternatives: ``3, maybe 4``, ``3 \\vee 4``, ``3 | 4``. A bar is one
    only when it is the value's only bar (``|x|``, ``\\{x | x > 0\\}`` are not)."""
    raw = raw[: MAX_ANSWER_CHARS + 100]
    lead = _LEAD.match(raw)
    found = _TWO_IN_ONE.match(raw, lead.end() if lead else 0)
    return found is not None and _two_different(found, raw)


def _two_different(found: re.Match[str], text: str) -> bool:
    groups = found.groupdict()
    if groups.get("join") == "|" and text.count("|") != 1:
        return False
    first = groups.get("a") or groups.get("a2") or ""
    return same_value(first, found.group("b")) is False


def _unless_alternatives(found: Found) -> Found:
    """A fallback passage whose last value is offered as an alternative to another
    (``I think 3, maybe 4``, ``3 or 4``, ``$3 \\vee 4$``): math-verify would read the last
    value alone, as verl's scorer does; two values offered is hedging."""
    if found.answer is None or found.extra.get("tag"):
        return found
    tail = found.answer[-LINE_TAIL_CHARS:].rstrip()
    line = tail.rpartition("\n")[2]
    if _OPEN_OR.search(tail, 0, len(tail) - len(line)):  # "18 or\n20" is one line
        line = tail[: len(tail) - len(line)].rstrip().rpartition("\n")[2] + " " + line
    matches = [last_match(pattern, line) for pattern in (_TWO_VALUES, _TWO_PLAIN_VALUES)]
    last = max(filter(None, matches), key=lambda match: match.end(), default=None)
    if last is None:
        last = _RANGE.match(line)  # "So it is 18 to 20.": mv would read the 20
    if last is None or _MATHY.search(_CLOSERS.sub("", line[last.end() :])):
        return found  # no alternatives, or another value comes after them
    if not _two_different(last, line):
        return found
    return Found(None, {"source": "expression", "hedged": True, "pred": last.group()})


_CLOSERS = re.compile(r"\$|\\[)\]]")
_OPEN_OR = re.compile(r"(?i)\b(?:or|maybe|perhaps|possibly)[ \t]*\n\s*$")

# a value ruled out or bounded, not stated: "not $3$", "isn't 3", "less than $3$", "not \boxed{3}"
_NEGATION = (
    r"(?i:\b(?:not|never|cannot\s{1,3}be|anything\s{1,3}but|other\s{1,3}than"
    r"|(?:less|more|greater|fewer|smaller|larger)\s{1,3}than|at\s{1,3}(?:least|most))\b"
    r"|n't(?:\s{1,3}be)?)\s{0,3}(?i:(?:equal|equals|equivalent)\s{1,3}to\s{0,3})?"
)
_NEGATED = re.compile(_NEGATION + r"(?=\$|\\[(\[]|\\(?:boxed|fbox)(?![A-Za-z])|-?\d)")


def _qualified_value(content: str) -> bool:
    """Whether a tag's content is a value followed by words that take it back or offer
    another ("5 isn't right", "5 or 6", "$5 \\) or 6$"), read as a reader sees it, math
    delimiters dropped: whatever a parser would make of it, the tag states no one value."""
    plain = _MATH_DELIMITERS.sub(" ", content[:MAX_ANSWER_CHARS])
    lead = _LEADING_NUMBER.match(plain)
    if lead is None:
        return False
    rest = plain[lead.end() :]
    if _OR_VALUE.fullmatch(rest) and plain == content:
        return False  # "-5 or 4": two values, which a list gold may ask for (read later)
    return _latex.qualifying_words(rest)


_MATH_DELIMITERS = re.compile(r"\\[()\[\]]|\$")
_OR_VALUE = re.compile(r"\s{1,3}or\s{1,3}-?\d[\d,]{0,30}(?:\.\d{1,30})?\s{0,3}")
_LEADING_NUMBER = re.compile(r"\s{0,8}-?\d[\d,]{0,30}(?:\.\d{1,30})?(?![\d.,/^_]|\s{0,3}[-+*/^=])")
# before a box, a negation only: "at least $\boxed{9}$ points" answers "the minimum number"
_NEGATED_BOX = re.compile(
    r"(?i:\b(?:not|never|cannot\s{1,3}be|anything\s{1,3}but|other\s{1,3}than)\b|n't(?:\s{1,3}be)?)"
    r"\s{0,3}(?i:(?:equal|equals|equivalent)\s{1,3}to\s{0,3})?[$\s]{0,3}(?:\\[(\[]\s{0,3})?$"
)


_ANSWER_WORD_ALONE = re.compile(r"(?i)\banswer\b")  # not "answered"


def negated_box(text: str, start: int) -> bool:
    """Whether the box opening ``text`` at ``start`` comes right after a negation ("is
    not $\\boxed{3}$", "$\\neg\\boxed{3}$"): it is no answer, it rules 3 out."""
    return _NEGATED_BOX.search(text, max(0, start - 40), start) is not None


def _unless_negated(found: Found) -> Found:
    """A fallback passage whose last answer sentence rules its first value out or bounds
    it ("The answer is not $3$ but $4$", "isn't $3$", "is less than $3$"): math-verify's
    extraction, anchored by "answer", would read the value alone."""
    if found.answer is None or found.extra.get("tag"):
        return found
    tail = found.answer[-LINE_TAIL_CHARS:]
    word = last_match(_ANSWER_WORD_ALONE, tail)
    line = "" if word is None else tail[word.end() :].partition("\n")[0]
    negated, math = _NEGATED.search(line), _MATHY.search(line)
    if negated is None or math is None or math.start() < negated.start():
        return found
    return Found(None, {"source": "expression", "negated": True, "pred": line.strip()[:200]})


def _unless_qualified(found: Found) -> Found:
    """A passage for math-verify (a tag's text too) whose last line ends on a value that
    words right after it qualify ("about 18 or so", "18 (or slightly more)", "18 or
    more") or that is bounded or ruled out ("at least 18", "18, not 20": the 20), where
    the line names no "answer" (:func:`_unless_negated` reads those): math-verify would
    read the bare value."""
    if found.answer is None or found.extra.get("source") != "expression":
        return found
    text = found.answer.removesuffix(" </answer>") if found.extra.get("tag") else found.answer
    line = text[-LINE_TAIL_CHARS:].rstrip().rpartition("\n")[2]
    value = last_match(_PREVIOUS_VALUE, line)
    if value is None:
        return found
    glued = GLUED.match(line, value.end())  # "105^\circ", "\frac{2}{3}", "2s": one value
    if glued is None or _MATHY.search(_CLOSERS.sub("", line[glued.end() :])):
        return found
    if discussed(line, value.start(), value.end()):  # "We can rule out 220.": weighed
        pred = _named(value)  # "\frac{2}{3}", not its 3
        return Found(None, {**found.extra, "hedged": True, "discussed": True, "pred": pred})
    words = _CLAUSE_END.split(line[value.end() :], maxsplit=1)[0]
    bounded = _BOUNDED.search(line, 0, value.start()) and not _ANSWER_WORD_ALONE.search(line)
    if not bounded and not _latex.qualifying_words(words):
        return found
    return Found(None, {**found.extra, "qualified": True, "pred": line.strip()[-200:]})


_CLAUSE_END = re.compile(r"[.,;:!?](?:\s|$)")
_BOUNDED = re.compile(_NEGATION + r"\s{0,3}(?:\\[(\[])?\s{0,3}\$?\s{0,3}$")


# --- 4. the fallback --------------------------------------------------------------------


def bare_value(text: str) -> str | None:
    """The conclusion's value when the conclusion is that value and nothing else: one
    plain number (``666``, ``-2.5``, ``1/256``), maybe with unit words (``108
    degrees``: no word of doubt or bound, none that changes the value), one math span
    (``$\\frac{7}{10}$``, ``\\(2s\\)``), or a formula with no word in it (``1:2``,
    ``A, B, C, D``, ``sqrt(119)``: :func:`~rewardkit.verifiers._final.wordless`), a final
    period at most; values side by side are a list
    (:func:`~rewardkit.verifiers._final.values_side_by_side`). It states
    what ``<answer> 666 </answer>`` states, so it is read as a tag holding it is
    (:func:`clean_answer`), and compared inline as one; math-verify's extraction reads
    the same value there (the rightmost), but for the formulas it misreads (``1:2``) and
    for values side by side, whose last it reads alone.

    A number with a second comma group that is no thousands group (``1,2``), a second
    span, a second value, other words: a passage, as before; so is a span holding a
    relation (``$\\text{Perimeter} = 80\\text{ cm}$``), which math-verify's extraction
    reads differently from a tag's value (its right side)."""
    body = text.strip()
    return None if "\n" in body else _one_value(body)


def _last_line_value(passage: str, question: str = "") -> str | None:
    """The value of a passage's last line when that line is one value (see
    :func:`bare_value`), the line before it is none (``3\\n4``: a list), offers no
    alternative nor doubt (``So 18 or\\n20``: in its last sentence, a restated phrase of the
    prompt's, ``question``, is no doubt) and ends a sentence or a formula, and the passage
    holds no "answer". A display formula on lines of its own ends the passage as
    one line (":\n\\[\n11\n\\]" is the line "\\[ 11 \\]")."""
    body = passage.strip()
    display = _TRAILING_DISPLAY.search(body, max(0, len(body) - _LAST_DISPLAY_CHARS))
    if display is not None:
        body = f"{body[: display.start()]}\n\\[ {display.group('value')} \\]"
    head, _, last = body.rpartition("\n")
    previous = head.rstrip().rpartition("\n")[2]
    if head and (listed := last_line_values(body)) is not None:
        return ", ".join(listed)  # several values offered last: that list, whatever before
    if not head or len(passage) > EXPRESSION_CHARS or _ANSWER_WORD.search(body):
        return None
    if _one_value(previous) is not None:
        return None
    if not previous.rstrip().endswith((".", "!", "?", ":", "$", "\\)", "\\]", "```")):
        return None  # a sentence going on into the last line ("the total is\n12")
    value = _one_value(last)
    return value if value is not None and _supported(previous, value, question) else None


def _supported(line: str, value: str, question: str) -> bool:
    """Whether ``line``, the line before a value given on its own, leads to it: no word of
    doubt (one that restates the question's phrase is none: "the largest possible radius
    is:" where the prompt asks for "the largest possible radius"), and no value stated in
    its last sentence other than this one ("... the number of subsets is 1023.\n\n2^{10}",
    "It could be 1:4 or 1:2. So:\n1:2", "Best guess: $0.\\overline{3}$": no answer read
    inline; math-verify reads the passage, as before)."""
    words = _without_recalled_doubt(line, len(line), question) if question else line
    if _DOUBT.search(words):
        return False
    stated = stated_value(line, question=question)
    if stated is None and (last := last_match(_LAST_VALUE, line)) is not None:
        # "... is 17,576,001.": a sentence ending on its value, however written
        stated = _prose_value(last.group()) if _ENDS_SENTENCE.fullmatch(line, last.end()) else None
    if stated is not None and _BARE_RELATION.search(stated):
        stated = chain_value(stated) or stated  # "$\\frac{2}{8} = \\frac{1}{4}$.": its last side
    return stated is None or same_value(stated, value) is True


_LAST_VALUE = re.compile(  # a value in prose, a fraction whole ("1/8", never its 8)
    _MATH_SPAN + r"|(?<![\w./])-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:/\d+)?(?![\d.]*\d)"
)
_ENDS_SENTENCE = re.compile(r"(?:[ \t]+[A-Za-z]{1,20}){0,3}[ \t]*[.!]?[ \t]*")


_TRAILING_DISPLAY = re.compile(
    r"\n[ \t]*(?:\\\[|\$\$)[ \t]*\n[ \t]*(?P<value>[^\n$]{1,200}?)[ \t]*(?:\\[,;!])?[ \t]*[.,]?[ \t]*\n"
    r"[ \t]*(?:\\\]|\$\$)[ \t]*\.?\Z"
)  # (the sentence's full stop set inside the formula is no part of the value: "25.")
_LAST_DISPLAY_CHARS = 300  # a last display formula is looked for this far back at most


def _one_value(line: str) -> str | None:
    """``line``'s value when it is one value and nothing else (see :func:`bare_value`)."""
    content = line.strip().rstrip(".").strip()
    if not content or len(content) > MAX_ANSWER_CHARS or _BARE_RELATION.search(content):
        return None
    if _BARE_NUMBER.fullmatch(content):
        return content
    if words := _BARE_NUMBER_WORDS.fullmatch(content):
        unit = words.group("words")
        if _DOUBT.search(unit) or _VALUE_WORD.search(unit) or _latex.qualifying_words(unit):
            return None
        return clean_answer(content)
    if (listed := values_side_by_side(content)) is not None:
        return ", ".join(listed)
    if wordless(content):  # its delimiters typeset it, and are no part of the value
        return TEX_DELIMITER.sub("", content).strip() or None
    span = _span_at(content, 0)
    if span is None or span[1] != len(content) or "$" in span[0].replace("\\$", ""):
        return None
    return clean_answer(content)


_BARE_RELATION = re.compile(r"[=<>]|\\(?:[lg]eq?|neq?|approx|sim|equiv|to)(?![A-Za-z])")
_BARE_NUMBER = re.compile(r"-?\d{1,100}(?:,\d{3}){0,30}(?:\.\d{1,100})?(?:/\d{1,100})?")
# Words after a number that change its value: no unit ("3 times", "5 million", "20 percent")
_VALUE_WORD = re.compile(
    r"(?i)\b(?:times|squared|cubed|plus|minus|over|divided|percent\w*|pct|half|halves|thirds?"
    r"|quarters?|fifths?|tenths?|dozens?|hundreds?|thousands?|lakhs?|crores?|[mbrtz]illions?"
    r"|point|and|factorial|below|above|negative|ago|less|more|fewer|off|short|base|binary"
    r"|octal|hex\w*|mod|modulo|remainder|to|by|from|cents?|pi|e|i|root|power)\b"
)
_BARE_NUMBER_WORDS = re.compile(_BARE_NUMBER.pattern + r"(?P<words>(?:\s{1,3}[A-Za-z]{1,20}){1,3})")


def _expression(texts: Sequence[str]) -> Found:
    """Hand the end of the final part (else of the response) to math-verify's extraction,
    which reads it in a worker as verl's ``math_verify`` scorer reads a whole response.
    A program's fenced block is blanked first (:func:`~rewardkit.verifiers._final.without_code`:
    "... is \\(27\\).\n```python\nc = 3\nprint(c**c)\n```" answers 27, not a number of
    the code), as the GSM8K reading does; its printed output stays."""
    for text in map(without_code, texts):
        if _last_mathy_end(_without_blank_boxes(text)) is not None:
            end = _last_mathy_end(text)
            passage = _passage(text, len(text) if end is None else end)
            if _WRAPPED_NUMBER.fullmatch(passage):  # "\text{4}" and nothing else: 4
                return Found(passage.strip("$").rstrip("."), {"source": "wrapped"})
            if glued := _GLUED_PASSAGE.fullmatch(passage):  # "6 $\frac{1}{6}$" and nothing else
                passage = f"${glued.group(1)}{glued.group(2).strip()}$"  # one value: 6\frac{1}{6}
            return Found(passage, {"source": "expression"})
    return Found(None, {"source": None})  # no digit and no LaTeX: math-verify finds nothing


def _printed(texts: Sequence[str], context: Context) -> Found | None:
    """A program's printed result restated as math in the text's last words
    (:func:`~rewardkit.verifiers._final.printed_and_restated`), in the last sentence, with
    no word of doubt, bound, condition or correction after the program and no words right
    after the value that qualify it:
    that value, compared inline ("```output 0```\nThe remainder when \\(8 \\cdot
    10^{18}\\) is divided by 9 is \\(0\\)." answers 0, where math-verify's extraction
    reads the 9)."""
    for text in texts:
        found = printed_and_restated(text, context.quantities)
        if found is None:
            continue
        after, number = found
        rest = after[number.end() :]
        words = _CLAUSE_END.split(rest.lstrip(" \t$)\\"), maxsplit=1)[0]
        if _DOUBT.search(_REMAINDER_WHEN.sub(" ", after)) or _latex.qualifying_words(words):
            return None  # "must score at least $9$ points", "$9$ or more", "but it's wrong"
        if _MORE_SAID.search(rest):
            return None  # "$12$.\n\nWait, I was off by 3.", "$12$ is a bound; ...": more said
        if discussed(after, number.start(), number.end()):
            return None  # "We can rule out $12$.": the passage reading refuses it
        return Found(number.group(1).lstrip("$"), {"source": "printed"})
    return None


# "The remainder when A is divided by B is": the question's own words, no condition
_REMAINDER_WHEN = re.compile(r"(?i)\bremainder\s+when\b")
# another sentence or clause after the restated value ("... $12$. Wait, ...", "$12$; the")
_MORE_SAID = re.compile(r"[.;:!?](?!\d)\s*\S")


def _stated(found: Found, context: Context = NO_CONTEXT, uncorrected: str | None = None) -> Found:
    """A passage for math-verify whose last line is one value (:func:`_last_line_value`,
    ``bare``) or whose last sentence states its one value (:func:`stated_value`,
    ``stated``): that value, compared inline. Runs after the passage's hedging checks:
    a passage they refuse stays refused."""
    if found.answer is None or found.extra.get("source") != "expression":
        return found
    if found.extra.get("corrected") and uncorrected:
        # a value given last after a sentence ("... is 126 inches.\n\n126", "... is
        # $\\frac{1}{4}$.   $\\frac{1}{4}$"): the passage math-verify reads is that value
        value = _given_last(uncorrected, found.answer, context.question)
        if value is None:
            return found
    else:
        value = _last_line_value(found.answer, context.question)
    source = "bare" if value is not None else "stated"
    if value is None:
        value = stated_value(found.answer, quantities=context.quantities, question=context.question)
    if value is None:
        return found
    wrong = found.extra.get(CALLED_WRONG)  # "The total is 7.\n\nHmm, 7 is wrong."
    same = same_value(wrong.strip("$"), value) if wrong else False
    if same is None:
        return found  # not told inline: the check compares what math-verify reads
    if same:
        return Found(None, {"source": source, "hedged": True, "pred": value})
    return Found(value, {"source": source})


def _given_last(passage: str, value: str, question: str = "") -> str | None:
    """``value`` (a passage's correction, the value given last) as one value, when the
    passage ends on it after words that lead to it (:func:`_supported`): not when it is
    all the passage says ("12!" cut to "12") nor when a value stands before it on its own
    line ("12\n13": a list)."""
    body, value = passage.rstrip(), value.strip()
    head = body[: len(body) - len(value)].rstrip()
    line = head.rpartition("\n")[2]
    if not body.endswith(value) or not head or _one_value(line) is not None:
        return None
    found = bare_value(value)
    return found if found is not None and _supported(line, found, question) else None


def stated_value(
    text: str,
    *,
    whole: bool = False,
    quantities: frozenset[str] = frozenset(),
    question: str = "",
) -> str | None:
    """The value that the last sentence of ``text`` states, when it is the text's last
    math, the sentence's only value, and stated plainly: words (and names in math mode,
    ``$x$``, ``\\(\\angle B\\)``: no digit in them), a stating verb or ``=``
    (``is``, ``are``, ``equals``, ``has``, ``needs``, ``of``...), then the value (one
    number, or one math span holding no relation), then at most eight plain words
    (units, "in the pond now") and a full stop: "Miss Maria has $30$ students.", "The
    area is 50.".
    ``whole``: the whole text is that sentence (a tag's content), no math before it.

    None (math-verify's extraction reads the passage, as before) for anything else: a
    word of doubt, bound, negation or condition anywhere in the sentence ("about",
    "at least", "not", "if", "or"...), words after the value that qualify it, a percent
    sign, a second value, a chain (``7^4 = 2401``), the word "answer" anywhere in the
    text (math-verify's extraction anchors on it, and may read another value). Where
    this reads a value in a passage, math-verify's extraction reads the same one: the
    rightmost, no anchored pattern applying; the verdict is then the inline
    comparison's. In an answer tag (``_TAG_PASSAGE``), math-verify's extraction, anchored
    by the tag's "answer", may read an earlier value of the sentence ("There are 5 white
    balls ... is 5/11" read as 5): the value the sentence states is the tag's answer."""
    if len(text) > EXPRESSION_CHARS or _ANSWER_WORD.search(text):
        return None
    body = text.rstrip()
    sentence = _last_sentence(body)
    start = len(body) - len(sentence) - 1
    if whole and start >= 0 and _MATHY.search(body, 0, start + 1):
        return None
    sentence = sentence.strip()
    value = _stated_in(sentence, whole=whole, question=question)
    if value is not None or not quantities:
        return value  # read as written first: a value the prompt writes too stays one
    # "There are 2 primes between 20 and 30.": the question's 20 and 30 recalled
    recalled = _QUESTION_NUMBER.sub(lambda m: _recalled(m, quantities), sentence)
    recalled = _RECALLED_RANGE.sub("within range", recalled)
    value = _stated_in(recalled, whole=whole, question=question)
    return value if value is not None and _DIGIT.search(value) and "qty" not in value else None


def _last_sentence(text: str) -> str:
    """The last sentence of ``text`` (its last line's, after its last ". ", "! ", "? ")."""
    start = max(text.rfind("\n"), *(text.rfind(end) for end in (". ", "! ", "? ", ".\n")))
    return text[start + 1 :]


def _stated_in(sentence: str, *, whole: bool, question: str = "") -> str | None:
    """:func:`stated_value`'s reading of the text's last sentence."""
    found = _STATED_TAIL.search(sentence)
    if found is None:
        return None
    doubts = _without_recalled_doubt(sentence, found.start(), question) if question else sentence
    if _DOUBT.search(_TEX_APPROX.sub(" ", doubts)):
        return None  # (a value's "\\approx" is read below: a gloss, or a relation refused)
    lead = sentence[: found.start()]
    group = next(g for g in ("span", "span2", "number") if found.group(g) is not None)
    if _latex.changes_before(sentence[: found.start(group)].rstrip(" \t$")):
        return None  # "has in excess of 18", "has a multiple of 18": not 18
    value = found.group(group)
    value = value.strip().rstrip(".").rstrip()  # "$50.$": a full stop in the span
    chain = None
    if found.group().startswith("="):  # a chain ends the lead: looked for in its end only
        chain = _PLAIN_CHAIN.search(lead + "=", max(0, len(lead) - _CHAIN_CHARS))
    if chain is not None:  # "the range is 7 - 1 = 6": a chain in plain text, checked
        if chain_value(chain.group() + value) is None:
            return None
        lead = lead[: chain.start()]
    concluding = last_match(_CONCLUDING, lead)
    stating = lead[concluding.end() :] if concluding else lead
    if not (_PLAIN_LEAD if whole else _STATED_LEAD).fullmatch(lead) or _LEAD_STATES.search(stating):
        return None  # "The first is $5$ and the second is $6$": two values stated
    words = found.group("words")
    if _latex.qualifying_words(words) or _VALUE_WORD.search(words) or not value:
        return None  # "is $5$ squared", "is 5 million"
    if _latex.factor_first(words) or "qty" in _QUANTITY_AFTER.sub(" ", words):
        return None  # "is 1140 k", "is 16 x"; "is 20 till 21" where the prompt writes 21
    value = glossed(value) or value  # "$x = \\sqrt{2} \\approx 1.414$": the exact value
    return chain_value(value) if _BARE_RELATION.search(value) else value


def _without_recalled_doubt(sentence: str, end: int, question: str) -> str:
    """``sentence`` with each word of doubt before ``end`` (the stating verb) blanked where
    it restates the question: the word and the word next to it, before or after (before
    ``end``), are a phrase of the prompt (``question``,
    :func:`~rewardkit.verifiers.base.words_key`). "Thus, the number of possible rolls in
    which both girls win is \\(20\\)." asked "For how many possible rolls would both
    girls win?": it states 20. A word of doubt after the verb, or one the prompt does not
    write beside the same word ("is about", "or maybe"), still is one."""
    out = sentence
    padded = f" {question} "
    for doubt in _DOUBT.finditer(sentence, 0, end):
        before = _WORD_BEFORE.search(sentence, max(0, doubt.start() - _WORD_CHARS), doubt.start())
        after = _WORD_AFTER.match(sentence, doubt.end(), end)
        phrases = [sentence[m.start() : doubt.end()] for m in (before,) if m is not None]
        phrases += [sentence[doubt.start() : m.end()] for m in (after,) if m is not None]
        if any(f" {words_key(phrase)} " in padded for phrase in phrases):
            out = out[: doubt.start()] + " " * len(doubt.group()) + out[doubt.end() :]
    return out


_WORD_CHARS = 40  # a neighbouring word is looked for this far at most
_WORD_BEFORE = re.compile(r"[^\s$]{1,40}\s+\Z")
_WORD_AFTER = re.compile(r"\s+[^\s$]{1,40}")


def glossed(answer: str) -> str | None:
    """The exact value of an answer that glosses it with its decimal (``\\sqrt{2} \\approx
    1.414``, ``2\\pi \\approx 6.28``): the value first, the decimal its rounding or cut
    (:func:`~rewardkit.verifiers._numeric.approximates`), so the answer is the value, as
    math-verify reads it. None for anything else, a gloss that is no rounding of the value
    (``2 \\approx 3.5``) too: the relation rules read those."""
    at = max(answer.rfind("\\approx"), answer.rfind("≈"))
    gloss = _GLOSS.fullmatch(answer, at) if at > 0 else None
    exact = answer[:at].strip()
    if gloss is None or not 0 < len(exact) <= MAX_ANSWER_CHARS or _NOT_EXACT.search(exact):
        return None
    prepared = _numeric.prepare(exact)
    if prepared is None or not _numeric.approximates(gloss.group("decimal"), prepared):
        return None
    return exact


_GLOSS = re.compile(r"(?:\\approx(?![A-Za-z])|≈)\s*(?P<decimal>-?\d{1,20}\.\d{1,20})\s*\.?\s*")
_NOT_EXACT = re.compile(r"[=<>≈~]|\\approx")  # a relation before it: no value glossed


_TEX_APPROX = re.compile(r"\\approx(?![A-Za-z])")
# A plain number, or one alone in a math span, in a sentence: one the prompt writes too is
# a quantity of the question recalled ("between 20 and 30", "in $3$ weeks"), no value the
# sentence states; the words "qty" stand for it, which no stated value is
_QUESTION_NUMBER = re.compile(
    r"(?:(?<=[\s(])|^)\$?(\d[\d,]{0,20}(?:\.\d{1,20})?)\$?(?=[\s.,;:!?)]|$)(?!\.\d)"
)  # (in prose: blanks or a clause's marks around it, never inside a formula: "5/11", "{7}")


_DIGIT = re.compile(r"\d")
# a question quantity after the stated value, as a place or time ("in 3 weeks", "of 20")
_QUANTITY_AFTER = re.compile(
    r"(?i:\b(?:in|after|for|on|with|within|during|per|from|at|by|of)[ \t]+qty\b)"
)
_RECALLED_RANGE = re.compile(r"(?i:\bbetween)[ \t]+qty[ \t]+(?:and|&)[ \t]+qty\b")


def _recalled(number: re.Match[str], quantities: frozenset[str]) -> str:
    """``number`` as the sentence reads it: "qty" when the prompt writes it, alone or
    alone in a span; as written when not, or when one "$" beside it may open or close a
    longer span ("$20 + 3$")."""
    if number.group().count("$") == 1 or number_key(number.group(1)) not in quantities:
        return number.group()
    return "qty"


def chain_value(value: str) -> str | None:
    """The value a chain of ``=`` states: its last side, when every side is read exactly
    and shown equal to the next (:func:`rewardkit.verifiers._numeric.compare`): ``1 + 7 +
    49 = 57`` is 57, ``r = 2 + 3 = 5`` is 5 (a name first: the value it is set to), ``r
    = -9/11`` is ``-9/11``. None for any other relation, a side not read, or two sides
    not shown equal (``2 + 2 = 5``: which one is meant?)."""
    read = _chain_sides(value)
    if read is None:
        return None
    sides, prepared = read
    if not all(_numeric.compare(a, b) is True for a, b in itertools.pairwise(prepared)):
        return None
    return sides[-1]


def false_chain(value: str) -> bool:
    """Whether ``value`` is a chain of ``=`` whose first side is read exactly and shown
    unequal to its last (``19 = 18``, ``20 - 1 = 18``, ``x = 19 = 18``): a false statement
    answers nothing, whatever its last side (math-verify reads that side alone). A slip
    between two true ends (``\\frac{4}{16} = \\frac{1}{22} = \\frac{1}{4}``, a typo on
    the way, in a real output) is left to math-verify."""
    read = _chain_sides(value) if "=" in value else None
    if read is None or not read[1]:
        return False
    return _numeric.compare(read[1][0], read[1][-1]) is False


def _chain_sides(value: str) -> tuple[list[str], list[str]] | None:
    """The sides of a chain of ``=`` (a name first dropped) and each read by
    :func:`rewardkit.verifiers._numeric.prepare`; None when not every side is read."""
    if len(value) > _numeric.MAX_CHARS or _OTHER_RELATION.search(value):
        return None
    sides = [side.strip() for side in value.split("=")]
    if len(sides) > 8 or not all(sides):
        return None
    if _NAME.fullmatch(sides[0]):
        sides = sides[1:]  # "x = 5": the value x is set to, which must not name x again
        if any(_LETTER.search(_COMMAND.sub("", side)) for side in sides):
            return None
    prepared = [_numeric.prepare(side) for side in sides]
    if any(side is None or _NAME.fullmatch(side) for side in prepared):
        return None
    return sides, [side or "" for side in prepared]


_OTHER_RELATION = re.compile(
    r"[<>:]|\\(?![A-Za-z])|\\(?:[lg]eq?|neq?|approx|sim|equiv|to|Rightarrow|implies|iff|quad|qquad|text)(?![A-Za-z])"
)
_NAME = re.compile(r"[A-Za-z](?:_\{?[A-Za-z0-9]{1,3}\}?)?")
_LETTER = re.compile(r"[A-Za-z]")
_COMMAND = re.compile(r"\\[A-Za-z]+")


# A name in math mode, before the value: "the value of $x$ is", "\\(\\angle B\\) is"
_NAME_SPAN = r"\$[A-Za-z\\ {}_']{1,30}\$|\\\([A-Za-z\\ {}_']{1,30}\\\)"
_STATED_TAIL = re.compile(
    r"(?:\b(?:is|are|was|were|equals?|be|has|have|had|needs?|gets?|makes?|costs?|of)\s+|=\s*)"
    r"(?:\$(?P<span>[^$\n]{1,200})\$|\\\((?P<span2>(?:[^\\\n]|\\[^()\n]){1,200})\\\)"
    r"|(?P<number>-?\d{1,30}(?:\.\d{1,30})?(?:/\d{1,30})?)(?![\d,.]\d))"
    r"(?P<words>(?:\s{1,3}[A-Za-z]{1,20}){0,8})\s*\.?$"
)
# What a sentence may say before its value. A tag's: words and names in math mode, no
# value (math-verify's extraction, anchored by the tag's "answer", reads its first
# value). A passage's last sentence: also numbers and math spans ("The product of
# \(100\) and \(120\) is \(12000\)"), but no relation, percent or display math.
# A chain of = in plain text before the value: "7 - 1 = ", "(5 + 4) / 3 = 2 + 1 = "
_CHAIN_CHARS = 400
"""How far back a chain before the stated value is looked for: a failed search is
quadratic in what it scans (a 4,000-character lead of terms took 80 ms on the event
loop). A longer chain leaves an ``=`` in the lead, which then states nothing: the
passage goes to math-verify as before."""
_PLAIN_CHAIN = re.compile(  # possessive runs: a failed search is linear from each start
    r"(?<![\w.])(?:[-+*/^().\d]++(?:[ \t]++[-+*/^().\d]++)*+[ \t]*+=[ \t]*+)+$"
)
# What comes after "so", "thus", "therefore", "hence" concludes: values stated before
# them are premises ("There are $7$ sides, so the perimeter is $28$")
_CONCLUDING = re.compile(r"(?i)\b(?:so|thus|therefore|hence)\b")
_LEAD_STATES = re.compile(
    r"\b(?:is|are|was|were|equals?|be|has|have|had|needs?|gets?|makes?|costs?)\s+(?:\$|\\\(|-?\d)"
)
_PLAIN_LEAD = re.compile(r"(?:[^\d$\\\[\]{}=<>%\n]|" + _NAME_SPAN + r"){0,300}")
# Each piece atomic (``(?>...)``): a command is read whole or not at all. Without it,
# ``\\text{a}`` also read as ``\\tex`` then ``t{a}``, three ways per command, and a
# lead of 60 commands past the bound backtracked through 3^60 of them (one row hung
# the event loop: tests/verifiers/test_extraction_bounds.py).
_STATED_LEAD = re.compile(
    r"(?>[^$\\=<>%\n]|\$[^$\n=<>%]{1,200}\$|\\\((?:[^\\\n=<>%]|\\[^()\n]){1,200}\\\)"
    r"|\\[A-Za-z]{1,20}+(?![({\[]))"
    r"{0,300}"
)
_DOUBT = re.compile(
    r"(?i)n't\b|\bat\s+(?:least|most)\b|\b(?:more|less|fewer|greater|smaller)\s+than\b"
    r"|\b(?:not|no|never|cannot|neither|nor|unless|if|when|whether"
    r"|about|approx\w*|around|roughly|nearly|almost|over|under|between|or|either"
    r"|maybe|perhaps|possibl\w*|probabl\w*|might|could|would|should|may|assum\w*|suppos\w*"
    r"|guess\w*|estimat\w*|wrong|incorrect|instead|rather|than|except|but|however|wait"
    r"|check\w*|verif\w*|tr(?:y|ied|ying)|let|say|example|only|also|another|other)\b"
)


def _last_mathy_end(text: str) -> int | None:
    """Where the last :data:`_MATHY` character of ``text``'s last SEARCH_TAIL_CHARS ends
    (None: none there): ``last_match(_MATHY, text)``, by one ``rfind`` a character
    rather than a match object for every digit of a long passage."""
    floor = max(0, len(text) - SEARCH_TAIL_CHARS)
    at = max(text.rfind(char, floor) for char in _MATHY_CHARS)
    return None if at < 0 else at + 1


_MATHY_CHARS = "0123456789$\\["  # _MATHY's class, one by one


# A whole final part that is one plain number in a text wrapper, outside math mode:
# math-verify's extraction finds nothing there (it reads "$\text{4}$" as 4)
# A passage that is a number and a math span, nothing else ("6 $\frac{1}{6}$", "8$\sqrt{2}$",
# an answer tag's value without its tag): one value, as in the tag, not the span alone
_GLUED_PASSAGE = re.compile(r"\s*(-?\d[\d,]*(?:\.\d+)?)[ \t]?\$([^$\n]{1,40})\$[ \t]*\.?\s*")
_WRAPPED_NUMBER = re.compile(
    r"\$?\\(?:text(?:bf|rm)?|mbox|mathrm|mathbf)\s?\{\s{0,8}-?\d{1,100}(?:\.\d{1,100})?\s{0,8}\}\$?\.?"
)


def _passage(text: str, last_math: int) -> str:
    """At most EXPRESSION_CHARS of ``text`` ending at its end, or past its last math when
    the end is long prose; it starts at a line, not inside a formula."""
    end = len(text) if len(text) - last_math < EXPRESSION_CHARS // 2 else last_math + 200
    start = max(0, end - EXPRESSION_CHARS)
    if start > 0 and (line := text.find("\n", start, end)) >= 0:
        start = line + 1
    return text[start:end].strip()


def _without_blank_boxes(text: str) -> str:
    """``text`` less its last blank boxes: an echoed ``\\boxed{}`` is not math to find."""
    pieces, end = [], len(text)
    for box in _latex.find_boxes(text):  # last first
        if is_blank(box):
            pieces.append(text[box.end : end])
            end = box.start
    pieces.append(text[:end])
    return "".join(reversed(pieces))


# --- ground truths ----------------------------------------------------------------------


def gold_answer(gold: str) -> str:
    """A reference answer: a full solution is reduced to its boxes, all of them in order
    (a solution boxing ``2`` and ``3`` means the multi-part answer ``2, 3``)."""
    if "\\boxed" not in gold and "\\fbox" not in gold:
        return gold
    boxes = [box for box in _latex.find_boxes(gold) if box.content and not is_blank(box)]
    parts = {canonical(box.content or ""): box.content or "" for box in reversed(boxes)}
    return ", ".join(parts.values()) if parts else gold
