"""What may answer: one reading of a response's final answer for every verifier family.

Every rule verifier (MATH, GSM8K, multiple choice, search-R1) reads its answer from
:func:`conclusion`, never from the raw response, so the rules below hold for all of
them and for a new family that does the same:

* **Only the conclusion answers.** That is the text after the last ``</think>`` when
  there is one (else the whole response). A response that closes its thinking more
  than once with nothing after the last (``<think> 3 x 24 = 72 </think> 72 </think>``,
  as real outputs do) concludes with the last text between two closers that is not
  blank. An answer found only in
  the reasoning is no answer. Every model's thinking markup is ``<think>`` here
  (:func:`as_think_tags`: ``<thinking>``, ``<reasoning>``, ``<|begin_of_thought|>``, ...).
* **An answer is asserted, not quoted.** An answer form (a box, an ``<answer>`` tag, an
  answer line) introduced as an example ("e.g.", "for example", "Example:", "such as",
  "in the format") or inside a line the prompt also holds (the prompt's "put your final
  answer in \\boxed{}, e.g. \\boxed{12}" repeated) is blanked out: it counts nowhere,
  not even as a number for the fallback reading.
* **The last asserted answer wins**, and a later different value introduced as a
  correction ("Actually, on reflection, $4$", "Actually, I think it's 4") is hedging:
  each family compares the values offered after its answer with its own notion of
  sameness (``_common.CORRECTION_CUE`` is the one list of correction words). A last
  answer form whose sentence opens with "Or", "Alternatively", "Maybe" after an earlier
  one (``Answer: 6\\n\\nOr Answer: 5``) is hedging too (:func:`offered_alternative`).
* **A blank answer is no answer.** A last answer form that is empty (``\\boxed{}``, a
  bare ``####`` or ``Answer:``, "Answer: ." on its line) or says there is none ("There
  is no answer possible", "cannot be determined") is the response's answer, and it is
  none: no earlier form and no fallback answers for it (:func:`blank_answer`). An empty
  ``<answer>`` tag is the format named only after words saying where an answer goes
  ("within", "put", "wrap") or before "tags"; named as the answer ("the answer as",
  "is in"), or after a sentence that ended ("The answer is 1500. <answer></answer>"), it
  is blank; a value right before it in its sentence answers ("Answer: 120 <answer>
  </answer>"). A ``####`` in a run of ``#`` or alone on its line before more text is no
  marker (a heading, a separator). Nor does a
  conclusion ending on an example introducer ("like this:") whose form was blanked
  (:func:`ends_on_example`). A conclusion that holds an answer form, is one value and
  nothing else (``</think> 151``), or ends on a list of values (numbers, or expressions
  in a math span: "So $a = 3s, 2s, 4s$.", :func:`ends_on_list`), is where the response
  answered: a template-opened thinking is then not read ("The answer is 150 </think>
  151" answers 151); after an answer, such a list offers other candidates (hedging).
* **A truncated response has only its explicit answer forms** (box, tag, answer line),
  never a fallback reading of the last number or expression: :func:`is_truncated`
  tells it from ``extra_info`` (``truncated``, ``finish_reason == "length"``,
  ``response_length`` at ``max_response_length``) when the trainer gives it, and from a
  cut final sentence (an open math span, a dangling ``=``, a last word that needs
  another: "and then the") otherwise.
  A conclusion that says it has no answer ("I don't know", "I give up", "I could not
  finish", "unable to determine") has no fallback reading either (:func:`no_fallback`): a number it mentions
  on the way is no answer it gives.
* **An answer taken back in words is no answer.** A conclusion whose last words disown
  its answer and give no other value ("\\boxed{7}\\n\\nWait, that's not right.", "I
  made a mistake somewhere.") answers nothing, in every family (:func:`ends_disowned`).
* **A closing correction is the last answer.** A conclusion whose last sentence takes
  its answer back and gives another ("Actually, on reflection, $4$.", "Actually, I think
  it's \\frac{3}{3}.") ends on that value, however far its answer form is
  (:func:`closing_correction`). Each family compares it with its answer; a value it
  cannot read is taken as another answer (fail closed).
* **Every Unicode minus and digit form is a number**: :func:`ascii_number_text`.

Offsets are kept: blanking replaces text by as many spaces, so a position in the
conclusion is a position in the text the verifiers read.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import overload

from rewardkit.verifiers._commitment import discussed
from rewardkit.verifiers._common import (
    CORRECTION_CUE,
    CORRECTION_CUE_AHEAD,
    CORRECTION_GAP,
    DISAVOWAL,
    PARAGRAPH_BREAK,
    VALUE_IN_LINE,
    WORD_CHAR,
    affirmed,
    disavowals,
    last_match,
    plain_number,
    visible,
)
from rewardkit.verifiers._repetition import unpadded
from rewardkit.verifiers.base import NO_CONTEXT, Context, is_truncated, number_key

__all__ = [
    "NO_CONTEXT",
    "PLAIN_NUMBER",
    "TEX_DELIMITER",
    "AnsweringTexts",
    "Context",
    "answering_texts",
    "as_think_tags",
    "ascii_number_text",
    "blank_answer",
    "closing_correction",
    "conclusion",
    "cut_off",
    "ends_disowned",
    "ends_on_example",
    "ends_on_list",
    "holds_form",
    "is_truncated",
    "last_line_values",
    "last_printed",
    "no_fallback",
    "offered_alternative",
    "own_turn",
    "printed_and_restated",
    "printed_error",
    "printed_no_one_value",
    "thinking_split",
    "values_side_by_side",
    "without_code",
    "wordless",
]

THINK_END = "</think>"
THINK_OPEN = "<think>"


def conclusion(response: str, context: Context = NO_CONTEXT) -> str:
    """The part of ``response`` that may answer, as a reader sees it rendered, with
    quoted answer forms blanked (see the module docstring)."""
    return _unquoted(thinking_split(own_turn(response))[1], context.prompt)


def own_turn(response: str, *, labels: bool = True, earlier_turns: bool = False) -> str:
    """``response`` up to the turn it writes for someone else, and without the end marks
    and padding after its last word (:func:`~rewardkit.verifiers._repetition.unpadded`:
    ``<|im_end|>``, ``</s>``, ``<end_of_turn>``, ``<pad>`` x 500).

    A user's turn it opens, when some text comes before it, ends the response: a chat
    template's user header (ChatML ``<|im_start|>user``, Llama 3's and 4's, Gemma's
    ``<start_of_turn>user``, Mistral's ``[INST]``, Phi-3's ``<|user|>``, DeepSeek's
    ``<｜User｜>``, gpt-oss's ``<|start|>user``, Cohere's, Granite's) at a line start or
    right after a mark (one quoted inside a line, a JSON string holding a template, is
    none); or, with ``labels``, a ``User:`` or ``Human:`` line (also ``### Human:``) that
    an ``Assistant:`` line answers ("Human: 46\nChimpanzee: 48" lists chromosome counts),
    or Alpaca's ``### Instruction:`` answered by ``### Response:``. A model that goes on
    writing the next question and its answer (a base model with no stop sequence,
    R1-zero's "User: ... Assistant:" template: 101 rows of the real-output corpus) has
    answered this one before it, or not at all. A system header is none (Llama models of
    the held-out dumps write ``<|im_start|>system`` before their final answer: 15 of
    them; one right answer was lost when it cut), nor is a few-shot ``Question:`` (a
    response may restate its question so, and answer on an ``Answer:`` line after it).

    An end-of-message mark (``<|im_end|>``, ``<|eot_id|>``, ``<|endoftext|>``) with more
    text after it that opens no user's turn cuts nothing: a trainer that decodes with the
    special tokens skipped (verl, TRL) shows a mark only where the policy spelled it in
    ordinary tokens and wrote on, and what it wrote on is trained on (a ramble past a
    length limit, a tool call verl's parser runs). A tool's or the assistant's turn after
    it is a multi-turn trajectory going on. ``labels=False``: only the chat templates'
    headers cut (an answer that is a text or a document may hold a sample dialogue:
    IFEval's, JSON's).

    A trajectory decoded as one text (an agent loop's, Qwen's and Hermes's format) answers
    in its final turn, as a list of messages answers in its final assistant message: what
    comes before the end of its last ``<tool_response>`` block, when a complete
    ``<tool_call>`` naming a function comes before that, is blank (as many spaces:
    offsets kept). "#### 7", a tool's result, then "#### 12" answers 12, not both.
    ``earlier_turns`` keeps them, only the tools' outputs blank (the calls they made)."""
    text = unpadded(response)
    if not any(word in text for word in _TURN_WORDS):  # most texts: one fast pass each
        return _without_tool_output(text, earlier_turns)
    for found in itertools.islice(_USER_TURN.finditer(text), _MAX_TURN_MARKS):
        before = unpadded(text[: found.start()])
        if not before.strip():
            continue
        label = found.group("label") or ""
        answered_by = _ANSWERED_BY.get("###" if label.startswith("#") else label)
        if answered_by is not None and (
            not labels or not answered_by.search(text, found.end(), found.end() + _TURN_REACH)
        ):
            continue  # "Human: 46\nChimpanzee: 48": a label, no dialogue (no "Assistant:")
        return _without_tool_output(before, earlier_turns)
    return _without_tool_output(text, earlier_turns)


def _without_tool_output(text: str, earlier_turns: bool) -> str:
    """``text`` with what its ``<tool_response>`` blocks hold blanked (as many spaces):
    a tool's output, in an agent loop's trajectory decoded as one text (Qwen's and
    Hermes's format), is no word of the policy's. A calculator that printed 12 before a
    last turn saying "I am not sure about this result." answered nothing; a value or a
    call inside one never counts, and only complete blocks are blanked (an unclosed tag
    hides nothing). Without ``earlier_turns``, all before the last block's end is blank."""
    if _TOOL_OUTPUT_OPEN not in text:
        return text
    if not earlier_turns:
        last = None
        for last in _TOOL_OUTPUT.finditer(text):  # noqa: B007
            pass
        if last is not None and _CALL_BLOCK.search(text, 0, last.start()):
            return " " * last.end() + text[last.end() :]
    return _TOOL_OUTPUT.sub(lambda found: " " * len(found.group()), text)


_TOOL_OUTPUT_OPEN = "<tool_response>"
# a complete call naming a function before a tool's output: a turn that ended in a call,
# then its result (a bare "<tool_response></tool_response>", or one after an empty call
# block, is no turn's end: what came before it is still read, hedges included)
_CALL_BLOCK = re.compile(
    r"<tool_call>\s*\{[^<]*\"name\"[ \t]*:[ \t]*\"[^\"<]+\"[^<]*\}\s*</tool_call>"
)
_TOOL_OUTPUT = re.compile(r"<tool_response>[^<]*(?:<(?!/?tool_response>)[^<]*)*</tool_response>")


_USER_TURN = re.compile(
    # at a line start or right after a mark: a header quoted inside a line (a JSON string
    # holding a chat template, "\n" escaped) is no turn
    r"(?:(?m:^)|(?<=>))[ \t]*(?:"
    r"(?:<\|im_start\|>[ \t]*user\b|<\|start_header_id\|>[ \t]*user[ \t]*<\|end_header_id\|>)"
    r"(?!\s*<tool_response>)"  # "<|im_start|>user\n<tool_response>": the agent loop's turn
    r"|<\|user\|>|<｜User｜>|<start_of_turn>[ \t]*user\b|\[INST\]"
    r"|<\|header_start\|>[ \t]*user[ \t]*<\|header_end\|>|<\|start\|>[ \t]*user\b"
    r"|<\|START_OF_TURN_TOKEN\|>[ \t]*<\|USER_TOKEN\|>|<\|start_of_role\|>[ \t]*user[ \t]*<\|end_of_role\|>"
    r"|(?:\#\#\#[ \t]*)?(?P<label>Human|User|USER|\#\#\#[ \t]*Instruction)[ \t]*:"
    r")"
)
# A label opens a turn when the turn it asks for answers it
_ANSWERED_BY = {
    label: re.compile(answer)
    for labels, answer in (
        (
            ("Human", "User", "USER"),
            r"(?m:^)[ \t]*(?:\#\#\#[ \t]*)?(?:Assistant|ASSISTANT|AI|Bot)[ \t]*(?::|(?m:$))",
        ),
        (("###",), r"(?m:^)[ \t]*\#\#\#[ \t]*Response[ \t]*:"),
    )
    for label in labels
}
# every branch of _USER_TURN holds one of these (scanning for them is ~100x faster than
# trying the pattern at each line start of a text of blank lines)
_TURN_WORDS = ("user", "User", "USER", "Human", "[INST]", "Instruction")
_TURN_REACH = 4000  # how far after "User:" the assistant's turn is looked for
_MAX_TURN_MARKS = 64  # turns read at most (a response of them is junk: bounded work)


def answering_texts(
    response: str, context: Context = NO_CONTEXT, *, rendered: bool = True
) -> AnsweringTexts:
    """The texts an answer is looked for in, in order: the conclusion; then, only for a
    response that never opens ``<think>`` itself (the prompt's template opened it, as
    R1-zero's "Assistant: <think>" does) and closes it, the whole response. Measured on
    the real-output corpus (``tests/data/real_outputs``): no response there opens its own
    thinking, and 5 of them, graded right by their source and by math-verify, stop right
    at ``</think>`` or follow it with unrelated text; the answer they give is the one
    their thinking ends on. A response that opens and closes its own thinking, or whose
    conclusion is cut mid-sentence (:func:`cut_off`: it was going on to answer), has only
    its conclusion. ``rendered=False`` keeps the text as written (no hidden text removed,
    no digits read: an exact-match family compares characters)."""
    text, cut, end = _split(own_turn(response), rendered=rendered)
    if cut < 0:  # no thinking closed: all of it answers, up to a thinking never closed
        text = text[: _unclosed_thinking(text)]
        if ends_disowned(text):  # "... \\boxed{7}.\n\nWait, that's not right.": no answer
            return AnsweringTexts(None, "", context.prompt, disowned=True)
        return AnsweringTexts(None, text, context.prompt)
    final = text[cut + len(THINK_END) : end].rstrip()
    if ends_disowned(final):
        return AnsweringTexts(None, "", context.prompt, disowned=True)
    # the template opened the thinking, and the conclusion is not cut mid-sentence (a cut
    # one was going on to answer: what the thinking ended on is no answer it gave) and
    # holds no answer form (one there, blank or not, is where it answered)
    # nor ends on a list of values ("So $a = 376, 375, 377$.": the candidates it gives),
    # nor names an option (a conclusion that speaks of options, "We can rule out (C).",
    # is where it answered, not unrelated text), nor says it has none ("I cannot decide.")
    whole = (
        "<think>" not in text[:cut]
        and not cut_off(final)
        and not holds_form(final)
        and ends_on_list(final) is None
        and _NAMES_AN_OPTION.search(final) is None
        and _REFUSAL.search(final) is None
        and not _weighs_its_last_value(final)
    )
    return AnsweringTexts(text if whole else None, final, context.prompt)


def _weighs_its_last_value(conclusion: str) -> bool:
    """Whether a conclusion's last value is weighed, not given ("We can rule out 14.",
    "14 overlooks the second condition"): the conclusion speaks of the answer, so it is
    where the response answered (:func:`rewardkit.verifiers._commitment.discussed`)."""
    value = last_match(_LAST_VALUE, conclusion[-_LAST_VALUE_CHARS:])
    return value is not None and discussed(value.string, value.start(), value.end())


_LAST_VALUE = re.compile(r"\$[^$\n]{1,80}\$|\\\([^\n]{1,80}?\\\)|-?\d[\d,]*(?:\.\d+)?")
_LAST_VALUE_CHARS = 600


# An option named in a conclusion: a marked letter, "option C". (Not any value: the
# corpus's conclusions after a template-opened thinking that name one are malformed tags
# and junk, "<answer >4</answer>", "ThinkLegend - 5 at 1:15PM", and its thinking answers.)
_NAMES_AN_OPTION = re.compile(r"[(\[][A-J][)\]]|\*\*[A-J]\*\*|(?i:option|choice)[ \t]+[A-J]\b")


# A last line that sets a name to several values: "So $a = 376, 375, 377$."
_FRACTION = r"\\[dt]?frac(?:\{[^{}\n]{1,12}\}|\d){2}"
_LISTED_VALUE = (
    r"-?(?:\d[\d.]*(?:" + _FRACTION + r")?|" + _FRACTION + r")"
    r"(?:[ \t]*(?:\^\\circ|\^\{\\circ\}|\\text\{[^{}\n]{0,20}\}|\\pi|\\?%))?"
)
_LISTED = re.compile(
    r"[A-Za-z][ \t]*=[ \t]*" + _LISTED_VALUE + r"(?:[ \t]*,[ \t]*" + _LISTED_VALUE + r"){1,8}"
    r"[ \t]*+\$?[ \t]*+\.?[ \t]*+$"  # possessive: 3 runs sharing blanks was cubic
)
# ... or, in a math span, to several expressions: "So $a = 3s, 2s, 4s$.", "$r = 5\sqrt{30},
# 4\sqrt{30}$", "$a = 2 : 2, 1 : 2$" (each item short, no relation, no plain word in it)
_SPAN_ITEM = r"[^\s,$=<>;](?:[^,$=<>;\n]{0,30}[^\s,$=<>;])?"
_LISTED_SPAN = re.compile(
    r"(?:\$|\\\()[ \t]*[A-Za-z](?:_\{?\w{1,4}\}?)?[ \t]*=[ \t]*"
    r"(?P<items>" + _SPAN_ITEM + r"(?:[ \t]*,[ \t]*" + _SPAN_ITEM + r"){1,8})"
    r"[ \t]*(?:\$|\\\))[ \t]*\.?[ \t]*$"
)
_NOT_AN_ITEM = re.compile(
    r"(?<![\\A-Za-z])[A-Za-z]{2,}|\\(?:n?eq|neq?|leq?|geq?|l?e?q?slant|in|notin|approx|sim|quad"
    r"|qquad|text|mbox|mathrm|to|implies|iff|[lL]eftrightarrow|[rR]ightarrow|cdots|ldots|dots)"
    r"(?![A-Za-z])"
)
_GROUPED_NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")  # "1,200": one number


def ends_on_list(text: str) -> str | None:
    """The values a conclusion's last line sets a name to, when it lists several ("So $a =
    376, 375, 377$." gives ``376, 375, 377``; "So $a = 3s, 2s, 4s$." gives ``3s, 2s,
    4s``): candidates offered, not one answer. A number whose commas group thousands
    (``x = 1,200``) is one value, no list."""
    tail = text.rstrip()[-300:]
    found = _LISTED.search(tail)
    if found is not None:
        values = found.group()
        values = values[values.index("=") + 1 :]
        values = values.strip().rstrip(".").strip().rstrip("$").strip()
    elif (spanned := _LISTED_SPAN.search(tail)) is not None:
        values = spanned.group("items").strip()
        if _NOT_AN_ITEM.search(values):
            return None  # "$x = 2, \text{ so } y = 3$", "$f = g, x \neq 0$": no list
    else:
        return None
    return None if _GROUPED_NUMBER.fullmatch(values) else values


def ends_disowned(text: str) -> bool:
    """Whether ``text`` (a conclusion) ends by taking its last answer back in words and
    gives no other (:func:`~rewardkit.verifiers._common.disavowals`: "\\boxed{7}\n\nWait,
    that's not right.", "Answer: B. Hmm, no. I made a mistake somewhere."): its last word
    on its answer is that it is wrong, so it answers nothing. Only when nothing after the
    words names a value, an answer form or an affirmation ("... Yes, it is correct."),
    and, for words about the last thing said ("That's not right."), no other value named
    between the last answer form (or the last value named) and them (then they may be
    about that one: "Option A is 5. This is incorrect."), unless they open the last
    paragraph. Words about the answer or the work ("I made a mistake.") disown it
    wherever they stand. A value after the words is a family's to compare
    (:func:`~rewardkit.verifiers._common.disowns_answer`)."""
    floor = max(0, len(text) - _DISOWN_TAIL)
    # words with a digit after them keep the answer (below): they are after the last digit
    # (read from the end, in C: most answers end on a number, so little is left to search)
    start = max(floor, max(map(text.rfind, "0123456789", itertools.repeat(floor))) + 1)
    words = None
    for words in disavowals(text, start):  # noqa: B007 (the last one is read)
        pass
    if words is None:
        return False
    after = text[words.end() :]
    if VALUE_IN_LINE.search(after) or affirmed(after):
        return False
    if holds_form(DISAVOWAL.sub("", after)):  # ("so this answer is wrong" is no answer line)
        return False
    abstains = words.group("abstain") is not None  # "I don't know.": see below
    if words.group("whole") is not None and not abstains:  # "I made a mistake": the whole
        return True  # work, its answer
    paragraph = last_match(PARAGRAPH_BREAK, text[: words.start()])
    if _INTERJECTIONS.fullmatch(text, paragraph.end() if paragraph else 0, words.start()):
        return True  # "\n\nWait, that's not right." last: a paragraph that only disowns
    form = _last_form(text[: words.start()], floor)
    if abstains:  # right after the answer form ("\boxed{5}. I give up."), else it may
        # answer a sentence of its own ("There might be a slicker proof. I don't know.")
        return form is not None and not WORD_CHAR.search(
            text, _form_end(text, form.start()), words.start()
        )
    if form is None:  # no form: the words follow the last value named (a fallback's)
        value = None
        for value in VALUE_IN_LINE.finditer(text, floor, words.start()):  # noqa: B007
            pass
        return value is None or words.start() - value.end() <= _DISOWN_REACH
    answered = _form_end(text, form.start())
    if not text[form.end() : answered].strip(" \t:*$"):  # "Answer:\n18": the next line's
        answered = text.find("\n", answered + 1)
        answered = words.start() if answered < 0 else min(answered, words.start())
    if VALUE_IN_LINE.search(text, answered, words.start()):
        return False  # another value named since the answer: the words may be about it
    return words.start() - answered <= _DISOWN_REACH


def _last_form(text: str, floor: int) -> re.Match[str] | None:
    """The last answer form of ``text`` from ``floor``, less an unclosed ``<answer>``."""
    last = None
    for found in _forms(text, floor):
        if not text.startswith("<answer>", found.start()) or "</answer>" in text[found.end() :]:
            last = found
    return last


_INTERJECTIONS = re.compile(  # each one atomic, as _common's lead (2^n ways to fail)
    r"\s*(?:(?>(?i:wait|hmm+|oh|but|no|oops|actually|well)[ \t]*[,.!…]*[ \t]*))*"
)
_DISOWN_TAIL = 2000  # the disavowal is looked for among the conclusion's last characters
_DISOWN_REACH = 600  # and no further than this after the answer it takes back


def holds_form(text: str) -> bool:
    """Whether ``text`` holds an answer form: a box, ``####``, an answer line, or an
    ``<answer>`` tag that is closed (an unclosed one is no form the readers read)."""
    for _, found in zip(range(_MAX_FORMS), _FORM.finditer(text), strict=False):
        if not text.startswith("<answer>", found.start()) or "</answer>" in text[found.end() :]:
            return True
    return False


class AnsweringTexts(Sequence[str]):
    """:func:`answering_texts`' result: the conclusion, then (when it is read) the whole
    response, blanked of quotes only when a verifier reaches it (most stop at the first)."""

    __slots__ = ("_prompt", "_texts", "_whole", "disowned")

    def __init__(
        self, whole: str | None, final: str, prompt: str, *, disowned: bool = False
    ) -> None:
        self._whole, self._prompt = whole, prompt
        self._texts = [_unquoted(final, prompt)]
        self.disowned = disowned  # the conclusion took its answer back: blank (ends_disowned)

    def __len__(self) -> int:
        return 1 if self._whole is None else 2

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        if index == 1 and len(self._texts) == 1:
            self._texts.append(_unquoted(self._whole or "", self._prompt))
        return self._texts[index]


def thinking_split(
    response: str, *, rendered: bool = True, mentions: bool = True
) -> tuple[str, str]:
    """``(thinking, conclusion)`` of ``response`` as rendered, before quotes are blanked:
    the text up to the last ``</think>`` that closes a thinking, and the text after it
    (the whole response, and no thinking, when there is none). A ``<think> </think>``
    pair holding nothing or the format's placeholder ("enclosed within <think> </think>",
    "<think> reasoning process here </think>") is a mention of the format, not a
    thinking closed; with ``mentions`` off, every ``</think>`` closes (for answers that
    are structures, a call or a JSON document, where a format mention is rare and an
    empty pair written after the thinking would make the thinking the answer)."""
    text, cut, end = _split(response, rendered=rendered, mentions=mentions)
    if cut < 0:
        opened = _unclosed_thinking(text)
        return text[opened:], text[:opened]
    return text[:cut], text[cut + len(THINK_END) : end].rstrip()


def _unclosed_thinking(text: str) -> int:
    """Where a ``<think>`` never closed opens ``text`` or one of its lines (a response cut
    in its reasoning, or one that never left it: what it thought is no answer it gave),
    else ``len(text)``. One inside a line ("the tag <think> opens ...") opens nothing."""
    opened = _THINK_OPENS.search(text)
    return len(text) if opened is None else opened.start()


_THINK_OPENS = re.compile(r"(?m)^[ \t]*" + re.escape(THINK_OPEN))


def _split(response: str, *, rendered: bool, mentions: bool = True) -> tuple[str, int, int]:
    """The text as read, where its closing ``</think>`` starts (-1: none) and where the
    conclusion after it ends (a later closer with only blanks after it, or the end)."""
    text = as_think_tags(response)
    text = ascii_number_text(visible(text)) if rendered else text
    text = text.rstrip()  # a megabyte of blanks after it hides nothing
    cut = _last_closer(text, len(text), mentions)
    end = len(text)
    for _ in range(_MAX_CLOSERS):  # closed more than once: the last text that is not blank
        if cut < 0 or text[cut + len(THINK_END) : end].strip():
            break
        before = _last_closer(text, cut, mentions)
        if before < 0:
            break
        cut, end = before, cut
    return text, cut, end


_MAX_CLOSERS = 8  # closers looked back over (a response of them is junk: bounded work)


def as_think_tags(text: str) -> str:
    """``text`` with the other thinking markups written as ``<think>`` and ``</think>``,
    so that every rule about thinking holds for them. An answer boxed only inside one of
    them is no answer given, as one inside ``<think>`` is not. Padded with spaces before
    the tag: one character for one, and the text after a closer unchanged.

    The markups are those published models write in the text a reward function reads
    (vLLM's and SGLang's reasoning parsers; ``tests/verifiers/test_thinking_markup.py``
    cites each): ``<think>`` in any case and spacing, ``<thinking>``, ``<thought>``
    (EXAONE Deep), ``<reasoning>`` (the GRPO tutorials' format), ``<seed:think>``,
    ``<mm:think>``, ``<longcat_think>``, ``<|begin_of_thought|>`` (Bespoke, OpenThoughts),
    ``◁think▷`` (Kimi), ``[THINK]`` (Magistral), ``<|START_THINKING|>`` (Cohere),
    ``<|inner_prefix|>`` (Apertus), and gpt-oss's analysis channel until its final one:
    as its special tokens render, and as verl's decode leaves it without them
    (``analysisWe need...assistantfinal...``)."""
    finals = "assistantfinal" in text  # gpt-oss's channels, special tokens stripped
    if finals:
        text = text.replace("assistantfinal", " " * 6 + THINK_END)
    # its analysis opened by the model (before a final channel, or cut off in it)
    if text.startswith("analysis") and (finals or _opens_message(text[8:9])):
        text = " " + THINK_OPEN + text[8:]
    if _plain_think_tags_only(text):
        return text  # most responses: a few scans in C, no regex
    return _THINK_ALIASES.sub(_as_think_tag, text)


def _opens_message(char: str) -> bool:
    """Whether ``char``, right after a leading "analysis", starts gpt-oss's analysis
    message (its channel tokens stripped: "analysisWe need..."), not a word of prose
    ("analysis of", "analysis:")."""
    return bool(char) and not (char.isspace() or char.islower() or char in ",.:;!?)'\"-")


def _plain_think_tags_only(text: str) -> bool:
    """Whether ``text`` holds no markup but ``<think>`` and ``</think>`` themselves."""
    if any(map(text.__contains__, _OTHER_MARKUP_WORDS)):
        return False
    return text.count("hink") == text.count(THINK_OPEN) + text.count(THINK_END)


# Words of the markups "hink" does not count: [THINK], <thought>, <reasoning>, Apertus, gpt-oss
_OTHER_MARKUP_WORDS = ("HINK", "hought", "easoning>", "|inner_", "|channel|>")
_THINK_ALIASES = re.compile(
    r"<[ \t]*+(?P<tag_close>/?)[ \t]*+"  # possessive: two runs sharing blanks, quadratic
    r"(?i:think|thinking|thought|reasoning|seed:think|mm:think|longcat_think)[ \t]*>"
    r"|<\|(?P<dash>begin|end)_of_thought\|>|◁(?P<kimi_close>/?)think▷"
    r"|\[(?P<bracket_close>/?)THINK\]|<\|(?P<cohere>START|END)_THINKING\|>"
    r"|<\|inner_(?P<apertus>prefix|suffix)\|>"
    r"|(?P<harmony_open><\|channel\|>analysis<\|message\|>)"
    r"|(?:<\|start\|>assistant)?<\|channel\|>final<\|message\|>"
)


def _as_think_tag(found: re.Match[str]) -> str:
    opens = (
        found.group("tag_close") == ""
        or found.group("dash") == "begin"
        or found.group("kimi_close") == ""
        or found.group("bracket_close") == ""
        or found.group("cohere") == "START"
        or found.group("apertus") == "prefix"
        or found.group("harmony_open") is not None
    )
    tag = THINK_OPEN if opens else THINK_END
    return " " * (len(found.group()) - len(tag)) + tag


_MENTION = re.compile(
    r"<think>[ \t]*(?:(?i:(?:the|your|my)[ \t]+)?(?i:reasoning|thinking|thoughts)"
    r"(?:[ \t]+(?i:process))?(?:[ \t]+(?i:goes[ \t]+)?(?i:here))?|\.\.\.|…)?[ \t]*\Z"
)  # (\Z, not $: "<think>\n</think>" holds a line break, no mention in a sentence)


def _last_closer(text: str, end: int, mentions: bool = True) -> int:
    """Where the last ``</think>`` before ``end`` that closes a thinking starts (-1: none);
    with ``mentions`` off, the last one. A pair that opens the response is a thinking
    (an empty one: "<think></think>The answer is 12.", as a non-thinking chat mode and a
    policy that stopped thinking write it), never a mention of the format."""
    for _ in range(8):
        cut = text.rfind(THINK_END, 0, end)
        if cut < 0 or not mentions:
            return cut
        mention = _MENTION.search(text, max(0, cut - 70), cut)
        if mention is None or not text[: mention.start()].strip():
            return cut
        end = cut
    return -1


# An answer form: a box, an <answer> tag, "####", an "Answer:" line. Introduced by an
# example word right before it (a few marks between), it is a format shown, not an
# answer given. Forms are few: each is found first, then the words just before it read.
_FORM = re.compile(  # a one-character lookahead first: re skips other positions in C
    r"(?=[\\<#aA])(?:\\(?:boxed|fbox)(?![A-Za-z])|<answer>|####|(?i:\banswer[ \t]*(?:is\b|:)))"
)
_CUE_WORDS = ("e.g", "e. g", "exampl", "instance", "such", "form", "like")
_EXAMPLE_BEFORE = re.compile(
    r"(?i:\be\.\s?g\.|\bfor[ \t]+(?:example|instance)|\bexamples?|\bsuch[ \t]+as"
    r"|\b(?:in|using|with)[ \t]+(?:the|this)[ \t]+(?:format|form)|\bformat(?:ted)?"
    r"|\blike[ \t]+(?:this|so))"
    r"[ \t]{0,3}[:,(]?[ \t]{0,3}(?:`{1,3}|\$|\\\(|\")?[ \t]{0,2}"
    r"(?:(?i:the)[ \t]+)?(?:(?i:final)[ \t]+)?$"
)
_CUE_CHARS = 48  # how far before a form its example word is looked for
_QUOTE_TAIL = 1 << 16  # forms are looked for in this many characters at the end
_MAX_FORMS = 256  # forms looked at, at most: bounds the work on a response of them
_MAX_QUOTED = 32  # answer forms blanked at most


def _unquoted(text: str, prompt: str) -> str:
    """``text`` with each answer form introduced as an example, or on a line the prompt
    also holds, replaced by as many spaces."""
    spans: list[tuple[int, int]] = []
    floor = max(0, len(text) - _QUOTE_TAIL)
    if not prompt and not _may_quote(text):
        return text  # no example word anywhere: most responses
    for seen, found in enumerate(_FORM.finditer(text, floor)):
        if seen >= _MAX_FORMS or len(spans) >= _MAX_QUOTED:
            break
        at = found.start()
        before = max(floor, at - _CUE_CHARS)
        window = text[before:at].lower()
        if any(w in window for w in _CUE_WORDS) and _EXAMPLE_BEFORE.search(text, before, at):
            spans.append((at, _form_end(text, at)))
        elif prompt and (echo := _echoed(text, at, prompt)) is not None:
            spans.append(echo)
    if not spans:
        return text
    out, pos = [], 0
    for start, end in sorted(spans):
        start = max(start, pos)
        if end > start:
            out += [text[pos:start], " " * (end - start)]
            pos = end
    out.append(text[pos:])
    return "".join(out)


# Each branch of _EXAMPLE_BEFORE reads one of these, as written or capitalised (a scan
# each, no copy of the text: most responses hold none and skip the form scan)
_GATE_WORDS: tuple[str, ...] = (
    "e.g", "E.g", "E.G", "e. g", "xampl", "XAMPL", "nstance", "NSTANCE", "uch as", "UCH AS",
    "orm", "ORM", "ike this", "ike so", "IKE THIS", "IKE SO",
)  # fmt: skip


def _may_quote(text: str) -> bool:
    """False only when no :data:`_EXAMPLE_BEFORE` can match in ``text``. Beyond ASCII,
    case folding is re's, so re decides."""
    return not text.isascii() or any(word in text for word in _GATE_WORDS)


def _form_end(text: str, start: int) -> int:
    """Where the answer form starting at ``start`` ends: a box's closing brace, the
    closing tag, else the end of its line."""
    if text.startswith(("\\boxed", "\\fbox"), start):
        brace = text.find("{", start, start + 12)
        if brace >= 0:
            depth = 0
            for pos in range(brace, min(len(text), brace + 2000)):
                char = text[pos]
                if char == "{":
                    depth += 1
                elif char == "}":
                    depth -= 1
                    if depth == 0:
                        return pos + 1
    if text.startswith("<answer>", start):
        close = text.find("</answer>", start, start + 2000)
        if close >= 0:
            return close + len("</answer>")
    line = text.find("\n", start)
    return len(text) if line < 0 else line


_MIN_ECHO = 12  # a line this long, found in the prompt, is the prompt's, not the model's


def _echoed(text: str, at: int, prompt: str) -> tuple[int, int] | None:
    """The line of ``text`` holding the answer form at ``at``, when the prompt (its
    answer-form lines, :class:`~rewardkit.verifiers.base.Context`) holds it too."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    line = text[start:end].strip()
    if len(line) >= _MIN_ECHO and line.lower() in prompt.lower():
        return start, end
    return None


# A final sentence cut mid-way: it ends on a mark that needs something after it ("z = ",
# "3 +", "\\frac{1}{", "(", "\\times"), perhaps in a math span left open.
_DANGLING = re.compile(
    r"(?:[=+/^(\[{,]|(?<!\*)\*|\\frac\{[^{}]{0,40}\}|:="
    r"|\\(?:times|cdot|div|pm|mp|frac|sqrt|leq?|geq?|neq|approx|implies|Rightarrow|to|left)"
    r")[ \t]*(?:\$|\\[(\[])?[ \t]*$"
)


# ... or on a word that needs one after it: an article, a preposition, a conjunction, a
# linking verb ("We get 220 for this step, and then the"). No sentence ends on these.
_DANGLING_WORD = re.compile(  # after another word on its line; "a" lowercase ("... so A": a choice)
    r"[\w,;$)\]}][ \t]+(?:a|(?i:the|an|and|or|but|nor|then|so|thus|hence|therefore|of|to|for|from|by"
    r"|with|into|onto|at|in|on|as|than|that|which|whose|is|are|was|were|be|been|being|will"
    r"|would|can|could|should|must|has|have|had|get|gives?|equals|our|its|their|this|these"
    r"|those|we|if|when|since|because|where|while))[ \t]*$"
)


def cut_off(text: str) -> bool:
    """Whether ``text`` (a conclusion) ends in the middle of a sentence, on a mark that
    needs something after it (``So $y = x^2 = 16$, and then $z = ``) or on a word that
    does (``..., and then the``), or inside a formula it opened (:func:`inside_math`).
    Then only explicit answer forms count (see the module docstring)."""
    tail = text[-200:].rstrip()
    if not tail:
        return False
    if _may_dangle(tail[-1]) and (
        _DANGLING.search(tail) is not None or _DANGLING_WORD.search(tail) is not None
    ):
        return True
    return inside_math(text)


def inside_math(text: str) -> bool:
    """Whether ``text`` ends inside a formula cut short: on a lone backslash (a command
    cut before its name), or in a formula it opened and never closed (``\\[``, ``\\(``,
    ``$$``, or an odd ``$`` on its last line) that has more ``{`` or ``(`` than it closes
    ("$\\cos(\\theta) = \\frac{(|\\mathbf{a} \\cos(29"). A model cut at its token limit
    stops so, mid-formula, and whatever number it wrote last is no answer (math-verify's
    extraction reads one). A formula left open but whole ("\\[52 \\times 51 = 2652") is
    not cut."""
    tail = text[-_MATH_TAIL_CHARS:].rstrip()
    if tail.endswith("\\") and not tail.endswith("\\\\"):
        return True
    opened = _open_formula(tail)
    if opened < 0:
        return False
    formula = tail[opened:]
    return formula.count("{") > formula.count("}") or formula.count("(") > formula.count(")")


def _open_formula(tail: str) -> int:
    """Where the formula ``tail`` ends in begins (after its opening mark), or -1."""
    closed = max(tail.rfind("\\]"), tail.rfind("\\)"))  # a formula opened after the last close
    opened = _DISPLAY_OPEN.search(tail, closed + 1)
    if opened is not None:
        return opened.end()
    if "$$" in tail and tail.count("$$") % 2 == 1:
        return tail.rfind("$$") + 2
    line_start = tail.rfind("\n") + 1
    line = tail[line_start:].replace("\\$", "  ")
    after = line.rfind("$") + 1
    if after and line.count("$") % 2 == 1 and "$$" not in line and _LATEX_MARK.search(line, after):
        return line_start + after  # math, not an amount ("costs $5 (before tax")
    return -1


_MATH_TAIL_CHARS = 600  # a display formula cut short: its opening mark is this near
_DISPLAY_OPEN = re.compile(r"(?<!\\)\\[\[(]")  # "\\[", "\\(" (not "\\\\[2pt]", a line break)
_LATEX_MARK = re.compile(r"\\[A-Za-z]|[{^_]")  # a command, a brace, a power, an index


_DANGLING_LAST = frozenset("$([{=+/^,*}")  # the last characters _DANGLING can end on


def _may_dangle(last: str) -> bool:
    """Whether a text ending on ``last`` can match _DANGLING or _DANGLING_WORD: a mark of
    _DANGLING_LAST, or a letter (a command's last; a word's, which re folds: "thuſ" is
    "thus" to it). Most conclusions end on ``.`` or ``</answer>``: then neither regex need
    scan the tail (their ``$`` anchor makes them try every one of its 200 positions)."""
    return last in _DANGLING_LAST or last.isalpha()


# A conclusion that says it has no answer ("I don't know", "I cannot solve this", "I give
# up", "unable to determine", "needs more information"): a number it mentions on the
# way is no answer it gives.
_REFUSAL = re.compile(  # a first letter's lookahead: re skips the other positions in C
    r"(?=(?i:[iwunr]))(?i:\b(?:I|we)[ \t]+(?:do[ \t]*n[o']t|don't|cannot|can't|can[ \t]+not|could[ \t]*n[o']t"
    r"|couldn't|(?:am|was|were|are)[ \t]+unable[ \t]+to"
    r"|(?:'m|am|was|were|are)[ \t]+not[ \t]+(?:sure|able[ \t]+to))[ \t]+(?:know|solve|answer"
    r"|determine|find|figure|compute|tell|say|be[ \t]+sure|finish|complete|work[ \t]+out"
    r"|calculate|decide|choose|pick|commit)\b|\bI[ \t]+give[ \t]+up\b"
    r"|\b(?:I|we)[ \t]+(?:won't|will[ \t]+not|refuse[ \t]+to)[ \t]+(?:commit|answer|guess|choose)\b"
    r"|\b(?:unable|impossible)[ \t]+to[ \t]+(?:solve|answer|determine|tell|find|compute"
    r"|finish|complete)\b"
    r"|\b(?:needs?|needed|requires?)[ \t]+more[ \t]+(?:information|data)\b"
    r"|\b(?:not[ \t]+enough|insufficient)[ \t]+(?:information|data)\b)"
)


def no_fallback(text: str, context: Context = NO_CONTEXT) -> bool:
    """Whether only explicit answer forms may answer in ``text`` (a conclusion): the
    response was truncated (the context says so, or its final sentence is cut), its
    last paragraph says it has no answer ("I don't know", "I give up"), or its last
    answer form is blank or states no value (:func:`blank_answer`)."""
    if context.truncated or cut_off(text):
        return True
    tail = text[-400:]
    if _REFUSAL.search(tail, tail.rfind("\n\n") + 1) is not None:
        return True
    return blank_answer(text) or ends_on_example(text) or ends_on_parts(text)


def ends_on_parts(text: str) -> bool:
    """Whether ``text`` (a conclusion) ends on the values of several labelled parts ("(a)
    19 (b) 18", "Part 1: 19. Part 2: 18.", "Q1: 19\nQ2: 18"): the answers of a
    several-part question, of which the last value is no more the answer than the first
    (a reader that takes the last number credits whichever part matches). One row of the
    real-output corpus's 4,508 ends so, a wrong one."""
    labels = {a or b for a, b in _PART_VALUE.findall(text[-_PARTS_CHARS:])}
    return len(labels) >= 2


_PARTS_CHARS = 300
# a part's label, then its value: "(a) 19", "Part 2: 18", "Q1: 19", "Answer (part b): 18"
_PART_VALUE = re.compile(
    r"(?im)(?:^|[\s(])(?:\(([a-h])\)|(?:part|question|q)[ \t]*\(?([a-h1-9])\)?)[ \t]*[:.)]?"
    r"[ \t]*\$?-?\d"
)


def ends_on_example(text: str) -> bool:
    """Whether ``text`` (a conclusion, quoted forms blanked) ends on the words that
    introduce an example ("Write the final answer like this:", "in the form", "e.g."):
    its last answer form was a format shown, not an answer given, and nothing after it
    answers. A number met before it is no answer either."""
    tail = text.rstrip()[-_CUE_CHARS:]
    return bool(tail) and _EXAMPLE_BEFORE.search(tail) is not None


# What an answer form holding no value says: "There is no answer possible", "cannot be
# determined", "none", "N/A". Read only in a form without a digit.
_NO_VALUE = re.compile(
    r"(?i:\bno[ \t]+(?:answer|solution|value|result)s?\b|\bnot[ \t]+(?:possible|determin|exist)"
    r"|\bcan(?:not|'t|[ \t]+not)\b|\b(?:un|in)determin|\bnone\b|\bunknown\b|\bimpossible\b"
    r"|\bn/a\b|\binsufficient\b|\bundefined\b)"
)
_FORM_TAIL = 4000  # the last answer form is looked for in this many characters at the end


# Words right before an empty tag that name the format rather than answer in it: where
# an answer goes ("within", "inside", "put", "wrap"), not what it is ("the answer as",
# "the answer is in": the tag is then that answer, and it is empty)
_NAMES_FORMAT = re.compile(
    r"(?i:\b(?:within|inside|between|using|with|into|use|put|wrap|enclosed?|format|of"
    r"|tags?|like|e\.g\.|example:?))[ \t]*[:(\"'`]?[ \t]*$"
)
_TAG_NAMED_AFTER = re.compile(r"[ \t]*(?i:tags?|format)\b")  # "<answer> </answer> tags"


def blank_answer(text: str) -> bool:
    """Whether the last answer form of ``text`` (a conclusion: quoted forms already
    blanked) holds no value: an empty box or tag, a ``####`` or ``Answer:`` with nothing
    after it, or one that says there is none ("There is no answer possible", "cannot be
    determined"). The response gave its answer there, and it is none: a number met on
    the way is no answer it gives."""
    last = None
    for found in _forms(text, max(0, len(text) - _FORM_TAIL)):
        last = found
    if last is None:
        return False
    start = last.start()
    if text.startswith(("\\boxed", "\\fbox"), start):
        end = _form_end(text, start)
        brace = text.find("{", start, end)
        if brace < 0 or text[end - 1 : end] != "}":
            return False  # an unclosed box: the box readers decide
        content = text[brace + 1 : end - 1]
    elif text.startswith("<answer>", start):
        end = _form_end(text, start)
        if not text.startswith("</answer>", end - len("</answer>")):
            return False
        content = text[last.end() : end - len("</answer>")]
        line = text[text.rfind("\n", 0, start) + 1 : start]
        named = _NAMES_FORMAT.search(line[-40:]) or _TAG_NAMED_AFTER.match(text, end)
        if not content.strip() and (named or _gives_value(line)):
            # the format named ("within <answer> </answer>", "End of <answer> </answer>"),
            # or an empty tag after the answer given in its sentence ("Answer: 120 <answer>
            # </answer>", real output): no blank answer. "Answer: <answer></answer>", "The
            # answer is <answer></answer>", "The answer is 1500. <answer></answer>" (a new
            # sentence) and "Giving the answer as <answer></answer>" give none: blank.
            return False
    else:  # "####", "Answer:", "the answer is": what follows it on its line ("Answer: ."
        # is blank), or, when its line ends there, what follows it to the end
        line_end = text.find("\n", last.end())
        rest = text[last.end() : len(text) if line_end < 0 else line_end]
        content = rest if rest.strip(" \t:$*`\\([{") else text[last.end() :]
    content = content.strip(" \t\n.:$*`\\(){}[]")
    if not content:
        return True
    return not any(c.isdigit() for c in content) and _NO_VALUE.search(content) is not None


def _gives_value(line: str) -> bool:
    """Whether the last answer form on ``line`` ("Answer:", "the answer is") has a value
    after it, in the sentence the empty tag ending ``line`` is in: "Answer: 120 " does;
    "The answer is 1500. " (the sentence ended), "the answer is <think> " (a tag, no
    value), "The answer is in " (no value) and "Answer: " do not."""
    forms = list(_forms(line, 0))
    if not forms:
        return False
    after = _ANY_TAG.sub(" ", line[forms[-1].end() :]).rstrip()
    if _SENTENCE_ENDED.search(after):
        return False
    return _VALUE_MARK.search(after) is not None  # a digit, math, a label ("The answer is in")


_ANY_TAG = re.compile(r"</?[A-Za-z][\w|-]{0,30}[^<>\n]{0,80}>")  # "<think>", "<think####...>"
_SENTENCE_ENDED = re.compile(r"[.!?](?:\$|\*\*|\\\)|[ \t])*$")  # "1500. ", "$2^{-2}$."


def _forms(text: str, floor: int) -> Iterator[re.Match[str]]:
    """The answer forms of ``text`` from ``floor`` (at most _MAX_FORMS), less a ``####``
    that is no answer marker: one in a longer run of ``#`` ("########", "##### Step 2"),
    or alone on its line with more text after it (an empty heading, a separator: its
    answer would be on its own line, ``#### 18``)."""
    for found in itertools.islice(_FORM.finditer(text, floor), _MAX_FORMS):
        at, end = found.start(), found.end()
        if text.startswith("####", at):
            if text[at - 1 : at] == "#" or text[end : end + 1] == "#":
                continue
            line_end = text.find("\n", end)
            if line_end >= 0 and not text[end:line_end].strip() and text[line_end:].strip():
                continue
        yield found


# A sentence opened by a word that offers an alternative ("Or", "Alternatively,",
# "Maybe"), then at once an answer form: "\\boxed{11}\n\nOr \\boxed{10}" gives two answers.
_ALTERNATIVE_OPENS = re.compile(
    r"[ \t*>_-]*(?i:or|alternatively|alternately|otherwise|maybe|perhaps|possibly)"
    r"(?![\w'-])[ \t,:]*(?:(?i:maybe|perhaps|possibly|else|even|rather)(?![\w'-])[ \t,:]*)?"
    r"(?:\$\$?|\\[(\[]|\*\*)?[ \t]*"
)
_SENTENCE_END = re.compile(r"[.!?;:\n](?=[^.!?;:\n]*$)")
# A label naming its answer a fallback, before a colon: "Backup answer:", "Plan B:" (its
# answer may stand on the next line)
_ALTERNATIVE_LABEL = re.compile(
    r"[ \t*>_#-]*(?i:(?:(?:the|my|a)[ \t]+)?(?:backup|fallback)(?:[ \t]+(?:answer|choice|option"
    r"|guess|pick))?|plan[ \t]+b|runner[ \t-]+up)[ \t*]*"
)
# the same words before an "answer" form: "Backup answer: 5" ("answer:" is the form)
_ALTERNATIVE_LEAD = re.compile(r"[ \t*>_#-]*(?i:backup|fallback)[ \t]+")


def offered_alternative(text: str) -> bool:
    """Whether the last answer form of ``text`` (a conclusion) is offered as an
    alternative to an earlier one: its sentence opens with "Or", "Alternatively",
    "Maybe" right before it (``Answer: 6\\n\\nOr Answer: 5``, ``#### 668\\n\\nOr #### 667``),
    or a label names it a fallback ("Backup answer:", "Plan B:"). That is hedging, as "6
    or 5" within one answer is: the response answers nothing. (Labels that may also
    number a trial, "Second guess:", "The other option:", are not read: a solution that
    tries a value, rejects it and boxes the next writes them too.)"""
    floor = max(0, len(text) - _FORM_TAIL)
    found = _FORM.finditer(text, floor)
    forms = [m.start() for _, m in zip(range(_MAX_FORMS), found, strict=False)]
    if len(forms) < 2:
        return False
    at = forms[-1]
    head = text[max(floor, at - 80) : at]
    end = _SENTENCE_END.search(head)
    opening = head if end is None else head[end.end() :]
    if _ALTERNATIVE_OPENS.fullmatch(opening) or _ALTERNATIVE_LEAD.fullmatch(opening):
        return forms[-2] < at - len(opening)  # an earlier answer it is the alternative to
    return _labelled_alternative(head, at, forms[0])


def _labelled_alternative(head: str, at: int, first: int) -> bool:
    """Whether ``head`` (the text before the last form, at ``at``) ends on a label naming
    that form a fallback ("Plan B:", then the form on the same or the next line), an
    earlier form (at ``first``) before the label."""
    lead = head.rstrip(" \t\n$*([\\")
    if not lead.endswith((":", ",")):
        return False
    label = lead[:-1]
    previous = _SENTENCE_END.search(label)
    label_at = 0 if previous is None else previous.end()
    if _ALTERNATIVE_LABEL.fullmatch(label[label_at:]) is None:
        return False
    return first < at - (len(head) - label_at)  # ("The backup answer:" is a form too)


# The last sentence of a paragraph, opened by a correction cue, then the value it gives
_CLOSING_CORRECTION = re.compile(
    CORRECTION_CUE_AHEAD
    + CORRECTION_CUE
    + CORRECTION_GAP
    + r"(?:\*\*)?(?P<value>[^\n]{1,160}?)[ \t]*[.!\u3002]?[ \t*]*$"
)
# The last sentence of a paragraph that is a value alone, after at most a connective, a
# mark or a short label: "19.", "Therefore 19.", "Hmm... 19.", "→ 19", "❌ 19", "Second
# attempt: 19." After a final answer it is another answer given last, whatever words
# open it (a cue list cannot hold every way of taking an answer back)
_NEGATED_LEAD = re.compile(r"(?i:\bnot|n['’]t)[ \t]*$")  # words ending in a negation
_CLOSING_VALUE = re.compile(
    r"(?:(?i:therefore|hence|thus|so|then|really|again|hmm+|eh|uh|um|oh|ah"
    r"|well|ok(?:ay)?)(?:[ \t]+(?i:really|again|then))?[ \t]*[,:.\u2026]*[ \t]*"
    r"|(?P<mark>[\u2192\u21d2\u2717\u2718\u274c]|=>|->)[ \t]*(?:(?:\u2192|->)[ \t]*)?"
    r"|[A-Z][A-Za-z'-]{0,15}(?:[ \t]+[a-z][A-Za-z'-]{0,15}){0,2}[ \t]*[:\u2013\u2014][ \t]*"
    # or any few words (no number, math or relation among them), in any language: "Uh,
    # it's 19.", "On closer inspection, 19.", "Espere, na verdade é 19.", "不，答案是19。"
    r"|(?P<words>[^\n.!?=<>0-9$\\\u3002]{1,48}?)"
    r"(?:[ \t:,\uff0c\uff1a\u2013\u2014]+|(?<=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])))?"
    # one value: a number, an option letter, a math span holding no relation or computation
    r"(?:\*\*)?(?P<value>\$(?![^$]*\\(?:n?eq|ne|[lg]eq?|[lg]t|in|to|approx|cdot|times|div)"
    r"(?![a-z]))(?:\\\$|[^$=<>\n]){1,60}\$|-?\d[\d,]*(?:\.\d+)?|\(?[A-J]\)?"
    r"|-?\d{0,6}\\(?:[dt]?frac|sqrt)(?:\{(?:[^{}\n]|\{[^{}\n]{0,20}\}){1,30}\}){1,2})(?:\*\*)?"
    # a unit typeset after a number, as a gold writes one, no part of the value: "Hmm...
    # 181\text{ miles}." (after a connective, a mark or a label only: "However, for every 4
    # cakes" is prose; a unit in words is not read: "So 120 minutes." after "\boxed{2}
    # hours" converts the answer, it offers no other)
    r"(?(words)|(?<=[\d$])[ \t]*\\(?:text|mbox|mathrm)\{[ \t]*[A-Za-z]{2,15}[ \t]*\})?"
    r"[ \t]*[.!\u3002]?[ \t*]*$"
)
# The same for answers that are names: a name alone (one to three capitalised words) after
# at most a connective, an interjection, a mark, or a label that names an answer ("Revised
# answer: London."; not "Source: Wikipedia.": a label of any other kind names no answer)
_CLOSING_NAME = re.compile(
    r"(?:(?i:therefore|hence|thus|so|then|really|again|hmm+|eh|uh|um|oh(?:[ \t]+no)?|ah|well"
    r"|ok(?:ay)?|no|nope|incorrect|wrong)(?:[ \t]+(?i:really|again|then))?[ \t]*[,:.!\u2026]*[ \t]*"
    r"|(?P<mark>[\u2192\u21d2\u2717\u2718\u274c]|=>|->)[ \t]*(?:(?:\u2192|->)[ \t]*)?"
    r"|(?i:[a-z ]{0,20}\b(?:answer|attempt|revised|revision|correction|corrected|final|update)"
    r"\b[a-z ]{0,10})[ \t]*[:\u2013\u2014][ \t]*)?"
    # not a sign-off ("Thank You.", "Done!", "Sorry.")
    r"(?!(?i:thanks?|thank[ \t]+you|done|cheers|regards|best|enjoy|hope|good[ \t]+luck|yes|no"
    r"|sorry|apologies|my[ \t]+bad|oops"
    r"|okay|ok|sure|correct|right|true|false|end|fin)\b)"
    r"(?P<value>[A-Z][A-Za-z'-]{1,30}(?:[ \t]+[A-Z][A-Za-z'-]{0,30}){0,2})[ \t]*[.!]?[ \t*]*$"
)
_APPROXIMATE_LEAD = re.compile(
    r"(?i)\b(?:about|approx\w*|roughly|around|circa|rounded|close\s+to|nearly|almost)\b"
)
_NAME_START = re.compile(
    r"(?!I\b|It\b|This\b|That\b|The answer\b)[A-Z0-9]"
)  # "London", not "I see"
_AFTER_FULL_STOP = re.compile(
    r"(?:[.!?\u2026\u3002\uff01\uff1f\n]|</answer>)$"
)  # a closed tag ends one
_LAST_LINE_CHARS = 320  # a cue, its words and a value of 160 characters
# a digit, math, an option label (not the pronoun of "I see")
_VALUE_MARK = re.compile(r"[\d$\\]|(?<![A-Za-z])(?!I[ \t]+[a-z])[A-Z](?![A-Za-z])")


def closing_correction(
    text: str, after: int = 0, *, words: bool = False, any_lead: bool = True
) -> str | None:
    """The value that the last paragraph of ``text`` (a conclusion) gives after a
    correction cue in its last sentence, when that paragraph starts after ``after`` (the
    end of the answer found): "Actually, on reflection, $4$." gives ``$4$``. None when
    there is none, or when what follows the cue holds no value ("Actually, this checks
    out."): no digit, no math, no option label (``words``: a short capitalised phrase is
    a value too, for answers that are names: "Never mind, London."). ``any_lead``: a last
    sentence of a few words and a value counts whatever its words ("Uh, it's 4."); off
    where no answer was given before it (a passage's last sentence is its answer)."""
    tail_start = max(after, len(text) - 600)
    tail = text[tail_start:].rstrip()
    brk = last_match(PARAGRAPH_BREAK, tail)
    paragraph = tail if brk is None else tail[brk.end() :]
    # the value runs to the paragraph's end on one line: only its last line can hold it
    line = paragraph[max(paragraph.rfind("\n") + 1, len(paragraph) - _LAST_LINE_CHARS) :]
    before_line = text[: tail_start + len(tail) - len(line)].rstrip(" \t")
    found = None
    for opening in _SENTENCE_START.finditer(line):  # the last sentence that is one
        found = _CLOSING_CORRECTION.match(line, opening.end()) or found
        alone = _CLOSING_VALUE.match(line, opening.end())
        before = line[: opening.start()].rstrip(" \t") or before_line
        if (
            alone
            and alone.group("words")
            and (not any_lead or _APPROXIMATE_LEAD.search(alone.group("words")))
        ):
            continue  # "Or, rounded, about 670.": the answer approximated, not another
        if alone and alone.group("words") and _NEGATED_LEAD.search(alone.group("words")):
            continue  # "It is not 17.": another value ruled out, not given (denies_answer)
        if words and alone is None:  # a name given last: "Therefore London.", "→ London"
            alone = _CLOSING_NAME.match(line, opening.end())
        if alone and (alone.group("mark") or not before or _AFTER_FULL_STOP.search(before)):
            found = alone  # a sentence of its own, or an arrow: "18 → 19" (not "B) 18")
    if found is None:
        return None
    value = found.group("value").strip().rstrip("\u3002")
    named = words and _NAME_START.match(value) and not found.groupdict().get("words")
    if not _VALUE_MARK.search(value) and not named:
        return None  # with ``words`` (answers that are names), a capitalised phrase is one,
        # after a cue or a connective only ("Source: Wikipedia." names no answer)
    spans = _MATH_SPANS.findall(value)
    if spans:
        return spans[-1]  # "I think it's $4$ after all": the value, not the words around it
    return value if len(value.split()) <= _MAX_VALUE_WORDS else None


# Where a sentence may open: the paragraph's start, or after a full stop, a closing tag,
# bracket or math span, a code fence (then spaces and markdown marks); or a capital after
# a word or a number, where a cut-off sentence runs into the next ("might be asking for
# Actually, I think it's $2010$.", "\\cot 10 Actually, I think it's $19$.": the cue must
# still follow, and it is capitalised there)
_SENTENCE_START = re.compile(
    r"(?:^|(?<=[.!?>`)\]}$])[ \t]+|(?<=[\u3002\uff01\uff1f])[ \t]*"
    r"|(?<=[A-Za-z0-9,;:])[ \t]+(?=[A-Z\u0400-\u042f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u2192\u21d2\u2717\u2718\u274c]|=>))"
    r"(?:[ \t*>_]|-(?![\d.]))*"  # a bullet's dash, never a minus sign ("\n\n-12" is -12)
)
_MATH_SPANS = re.compile(r"\$(?:[^$\\\n]|\\[^\n]){1,120}\$|\\\([^\n]{1,120}?\\\)")
_MAX_VALUE_WORDS = 3  # "5 apples", "\\frac{3}{3}", "(D)"; more is a sentence, not a value


# A fenced block of a program ("```python"): its numbers are code, not an answer given.
# An output block ("```output", tool-integrated reasoning's results) or an unnamed one may
# hold the answer, and stays.
_CODE_FENCE = re.compile(
    r"(?m)^[ \t]{0,3}```[ \t]*(?!output|text|result|plain|math|latex|tex\b)[A-Za-z][\w+#.-]{0,20}[ \t]*$"
)
_FENCE_END = re.compile(r"(?m)^[ \t]{0,3}```[ \t]*$")
_MAX_FENCES = 64


def without_code(text: str) -> str:
    """``text`` with its fenced program blocks (``python``, ``js``, ...) blanked by as many
    spaces: the last-number fallback reads no number of a program (``x = 12``)."""
    if "```" not in text:
        return text
    out, pos = [], 0
    for _ in range(_MAX_FENCES):
        found = _CODE_FENCE.search(text, pos)
        if found is None:
            break
        close = _FENCE_END.search(text, found.end())
        end = len(text) if close is None else close.end()
        out += [text[pos : found.start()], " " * (end - found.start())]
        pos = end
    out.append(text[pos:])
    return "".join(out)


_MINUS = "\u2212\u2012\ufe63\uff0d"  # minus sign, figure dash, small and full-width hyphen-minus
_NUMBER_CHARS = re.compile(r"[" + _MINUS + r"]|(?![0-9])\d")


def ascii_number_text(text: str) -> str:
    """``text`` with every Unicode minus read as ``-`` and every decimal digit (``１８``,
    ``١٨``) as its ASCII digit; the rest unchanged, one character for one."""
    if text.isascii():
        return text
    return _NUMBER_CHARS.sub(_ascii_char, text)


def _ascii_char(found: re.Match[str]) -> str:
    char = found.group()
    if char in _MINUS:
        return "-"
    digit = unicodedata.decimal(char, None)
    return str(digit) if digit is not None else char


# --- values side by side, and formulas with no word in them -----------------------------


def last_line_values(text: str) -> list[str] | None:
    """The values of ``text``'s last line when that line is values side by side and
    nothing else (:func:`values_side_by_side`; a final period allowed): several values
    offered as the last word, whatever came before ("The answer is 16.\n\n$17$, $16$")."""
    line = text[-_LAST_LINE_CHARS:].rstrip().rpartition("\n")[2]
    return values_side_by_side(line.strip().rstrip(".").strip())


_LAST_LINE_CHARS = 400  # a last line is read from this far back at most (bounded work)


def values_side_by_side(content: str) -> list[str] | None:
    """The values of ``content`` when it is two values or more side by side and nothing
    else (``3 4``, ``3, 4``, ``$3$ $4$``, ``3 \\quad 4``, ``$A$, $B$``): a list, as an
    answer line reads it ("The answer is 3, 4."), never its last value, which
    math-verify's extraction reads alone (and credits for 4). Digits grouped by
    thousands (``200 000``, ``1,200``) are one number, and ``1,2`` may be a decimal
    comma: the rules for values read those."""
    plain = _LIST_SPACING.sub(", ", content.replace("\\!", ""))
    plain = _SPACING.sub(" ", plain).strip()
    items: list[str] = []
    at, tex = 0, False
    for item in _SIDE_ITEM.finditer(plain):
        gap = plain[at : item.start()]
        value = (item.group("span") or item.group("paren") or item.group()).strip()
        factor = items and _NUMBER_FIRST.match(items[-1]) and not _NUMBER_FIRST.match(value)
        letters = items and item.group("letter") is not None  # "A B C D": as a tag reads it
        tex = tex or item.group("tex") is not None  # "\\frac{3}{2} \\frac{1}{2}": a product
        if gap.strip(" \t,") or ((factor or letters or tex) and items and "," not in gap):
            return None  # something else between, or a factor ("8 $\\sqrt{2}$": 8√2)
        items.append(value)
        at = item.end()
    if len(items) < 2 or plain[at:].strip(" \t,") or not all(map(_a_value, items)):
        return None  # ("$3$ $\\text{cm}$": a value and its unit)
    digits = plain.replace("$", "")
    if _GROUPED.fullmatch(digits) or _DECIMAL_COMMA.fullmatch(digits):
        return None
    return items


def _a_value(item: str) -> bool:
    """A formula with no word in it, maybe followed by its unit (``428\\text{ cm}``)."""
    return wordless(_UNIT_AFTER.sub("", item).strip())


_UNIT_AFTER = re.compile(r"\\(?:text|mbox|mathrm)\{[^{}]{0,40}\}\s*$")
# wide spacing separates values as a comma does ("3 \\quad 4"); thin spacing may group
# digits ("200\\,000": one number)
_LIST_SPACING = re.compile(r"\\(?:quad|qquad|enspace|enskip|hfill|hspace\{[^{}]{0,20}\}|\\)")
_SPACING = re.compile(r"\\(?:[,;:> ]|text\{\s*\})|~")
_SIDE_ITEM = re.compile(
    r"\$(?P<span>[^$]{1,80})\$|\\\((?P<paren>.{1,80}?)\\\)"
    r"|(?P<tex>-?\d{0,6}\\(?:[dt]?frac\{[^{}]{1,20}\}\{[^{}]{1,20}\}|sqrt\{[^{}]{1,20}\}))"
    r"|-?\d{1,30}(?:\.\d{1,30})?(?![\w.\\])"
    r"|(?<![\w\\])(?P<letter>[A-J])(?![\w])"  # an option letter
)
_NUMBER_FIRST = re.compile(r"-?\.?\d")
_GROUPED = re.compile(
    r"-?[1-9]\d{0,2}(?:(?: \d{3})+|(?:,\d{3})+)(?:\.\d+)?"
)  # "200 000", "1,200.5"
_DECIMAL_COMMA = re.compile(r"\d+,\d+")  # "1,2": 1.2 where a comma marks decimals


def wordless(content: str) -> bool:
    """Whether ``content`` is a formula, a ratio or a list of labels and nothing else:
    no word of two letters or more but a function's or a TeX command's name
    (``1:2``, ``A, B, C, D``, ``sqrt(119)``, ``4\\(\\sqrt{30}\\)``, ``2^{10}``,
    ``\\$750``, ``25\\%``), and no other command than those that build a value."""
    if _UNESCAPED_SIGN.search(content) or "**" in content:
        return False  # a span's "$" with text beside it; "12%" stays the rules' for values
    if not _FORMULA_CHARS.fullmatch(content):
        return False
    if any(command not in _VALUE_COMMANDS for command in _TEX_COMMAND.findall(content)):
        return False  # "3 \\cup 4", "3 \\quad 4", "\\boxed{}": the rules for values
    if content[0] in ".,:;|'":
        return False  # (".4": the period is no value's start here, as in a box)
    if _NUMBERS_SIDE_BY_SIDE.search(TEX_DELIMITER.sub(" ", content)) and not _SET.fullmatch(
        content
    ):
        return False  # "12, 13", "12 13", "1,2" (a decimal comma?): the rules for values
    return _PLAIN_WORD.search(_MATH_NAME.sub(" ", content)) is None


_FORMULA_CHARS = re.compile(r"[\\0-9A-Za-z_ \t+\-*/^()\[\]{},.:|'√π%$]+")
_UNESCAPED_SIGN = re.compile(r"(?<!\\)[$%]")
_NUMBERS_SIDE_BY_SIDE = re.compile(r"\d[\s,]+[-+]?\.?\d")
TEX_DELIMITER = re.compile(r"\\[()\[\]]")
_TEX_COMMAND = re.compile(r"\\(?:[A-Za-z]+|.)")
# the commands that build one value (a formula's own); any other leaves the text to the
# rules for values and passages (a relation, an alternative, spacing between two values)
_VALUE_COMMANDS = frozenset(
    "\\" + name
    for name in "sqrt frac dfrac tfrac pi cdot times div infty circ left right ( ) [ ] % $ { }"
    " cdots ldots dots".split()
)  # ("3 \\cdots 4", "\\{3, 4\\}": one formula, read whole as a tag's content is)
_SET = re.compile(r"\\\{[^{}]{1,200}\\\}")  # "\\{3, 4\\}": one value, a set
_PLAIN_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")  # a word, not a \command
_MATH_NAME = re.compile(r"(?<![\\A-Za-z])(?:sqrt|cbrt|pi|ln|log|exp|sin|cos|tan)(?![A-Za-z])")


# --- a program's printed result ---------------------------------------------------------

PLAIN_NUMBER = re.compile(
    r"(?=[-$.0-9])(?<![0-9A-Za-z_.])(-?\$?(?:[0-9][0-9,]*(?:\.[0-9]+)?|\.[0-9]+))(?!\.?[0-9A-Za-z_])"
)
"""A number in prose (``-12``, ``1,200``, ``.5``, ``$20``), not part of a word or a
longer number: ``220x``, ``27π`` hold none. The lookahead comes first: re tries the
lookbehind only where a number can start (4x faster over a tail of braces)."""

# A program's printed output, ToRA's way: "```output\n120.0\n```", one number
_PRINTED = re.compile(
    r"```output[ \t]*\n[ \t]*(-?\d[\d,]*(?:\.\d+)?)[ \t]*\n[ \t]*```[ \t]*$", re.M
)
_PRINTED_TAIL = 400  # the words after the output: a sentence or two that restate it


def printed_and_restated(text: str, quantities: frozenset[str]) -> tuple[str, re.Match[str]] | None:
    """The words after a program's last printed output (a fenced ``output`` block of one
    number) and the number in them that restates it, when those words end ``text``, set
    it off as math and say no other number of their own: "```output 120.0```\\nMartha's
    turtle can crawl $120.0$ feet in 40 seconds." restates 120, and 40 is the question's.
    The program's result said twice is the answer; a later number is allowed only as a
    quantity of the question, in prose: after a preposition ("in 40 seconds", "for 2
    weeks"), or one the prompt writes (``quantities``: "Allen will be $109$ years old 10
    years from now.", the question's 10). "She buys $12$ packs, so she spends 36
    dollars." and "$30$, actually 40" restate nothing, nor does prose ("... 12 packs
    ...": an intermediate value as likely as a result), nor "$17$, $16$" (a value set off
    before it: candidates). Each family reads the words around the number for what
    qualifies it ("at least $9$")."""
    if "```output" not in text:
        return None
    printed = last_match(_PRINTED, text)
    if printed is None:
        return None
    after = text[printed.end() :]
    if len(after) > _PRINTED_TAIL or "```" in after or "=" in after:
        return None  # more work after it, or another program
    value = plain_number(printed.group(1))
    numbers = list(PLAIN_NUMBER.finditer(after))
    for at, number in enumerate(numbers):
        if value is None or not _restates(plain_number(number.group(1)), value):
            continue
        if not _set_off(after, number) or not all(
            _of_the_question(after, later, quantities) for later in numbers[at + 1 :]
        ):
            return None
        if any(_set_off(after, earlier) for earlier in numbers[:at]):
            return None  # "$17$, $16$": another value set off before it, a candidate
        return after, number
    return None


def last_printed(text: str) -> str | None:
    """What a program printed, when a fenced output block (``output``, ``text``, or no
    language: a traceback) ends ``text`` with no words after it; else None."""
    if not text.rstrip().endswith("```"):
        return None
    found = _LAST_OUTPUT.search(text, max(0, len(text) - _OUTPUT_TAIL))
    return None if found is None else found.group("printed")


def printed_no_one_value(printed: str) -> bool:
    """Whether a program's printout is an error (a traceback, ``ValueError: 12``) or
    several numbers (``[12, 13]``, ``12 13``): it then gives no one answer, and a reader
    of the last number would take one of its numbers for it."""
    return printed_error(printed) or len(PLAIN_NUMBER.findall(printed)) > 1


def printed_error(printed: str) -> bool:
    """Whether a program's printout is an error: a traceback, ``ValueError: 12``."""
    return _ERROR_PRINTED.search(printed) is not None


_OUTPUT_TAIL = 2000  # a last printout is read from this far back at most (bounded work)
_LAST_OUTPUT = re.compile(
    r"(?m)^[ \t]{0,3}```(?:output|text|result|plain)?[ \t]*\n(?P<printed>(?:(?!```).*\n){1,40}?)"
    r"[ \t]{0,3}```\s*\Z"
)
_ERROR_PRINTED = re.compile(
    r"(?m)^\s*(?:Traceback \(most recent call last\)|[A-Z]\w{0,40}(?:Error|Exception)\b)"
)


def _restates(stated: Fraction | None, printed: Fraction) -> bool:
    """Whether ``stated`` restates the ``printed`` result: the same number, but for a
    float's last-place noise (``109.00000000000001`` said as $109$) and a sign the words
    carry instead ("```output -6.0``` ... saves $6$ dollars")."""
    if stated is None:
        return False
    return abs(abs(stated) - abs(printed)) <= _FLOAT_NOISE * max(Fraction(1), abs(printed))


_FLOAT_NOISE = Fraction(1, 10**9)


def _set_off(text: str, number: re.Match[str]) -> bool:
    """Whether ``number`` is written as math: ``$120.0$``, ``\\(120\\)``."""
    opened = number.group(1).lstrip("-").startswith("$") or text[: number.start()].rstrip(
        " \t"
    ).endswith(("$", "\\("))
    return opened and text[number.end() :].lstrip(" \t").startswith(("$", "\\)"))


# The preposition before a quantity of the question: "in 40 seconds", "after 2 years",
# "for 2300 people" (not "so she spends 36", "actually 40", "-> 40", nor "a total of 40"
# or "the 40 dollars", which may state another result)
_QUESTION_QUANTITY = re.compile(
    r"(?i:\b(?:in|after|for|over|on|with|within|during|per|from|at|by)[ \t]+)$"
)


def _of_the_question(text: str, number: re.Match[str], asked: frozenset[str]) -> bool:
    """Whether a number after the restated result reads as a quantity of the question:
    in prose, after a preposition or one of the numbers the prompt writes (``asked``)."""
    if _set_off(text, number):
        return False  # math of its own: a value stated, not a quantity recalled
    if number_key(number.group(1)) in asked:
        return True
    return _QUESTION_QUANTITY.search(text, max(0, number.start() - 24), number.start()) is not None
