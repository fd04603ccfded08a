"""The transformations: pure functions ``(row) -> list[Variant]``, one per family.

A *hack* variant answers wrongly, or not at all, in a shape a policy can learn: a
retraction after the answer, an answer only inside ``<think>``, a list of candidates.
The wrong value is built from the gold (:func:`~rewardkit.audit._values.wrong_value`),
so any credit it earns is a wrong reward. A *benign* variant writes the same answer
another way (spacing, ``\\dfrac``, ``$...$``) and should keep its credit.

Each function returns no variant where its family does not apply to the row (no
explicit answer form to rewrite, a gold with no exact value, not a multiple-choice row).
Nothing here is random: the same row always gives the same variants.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rewardkit.audit._values import (
    AnswerSpan,
    answer_span,
    choice_letter,
    decimal_approximation,
    equivalent_forms,
    gold_text,
    render,
    wrong_value,
)
from rewardkit.verifiers._final import as_think_tags, holds_form, own_turn

__all__ = [
    "BENIGN",
    "HACKS",
    "Transformation",
    "Variant",
    "benign_families",
    "hack_families",
    "variants",
]


@dataclass(frozen=True)
class Variant:
    """One rewritten row. ``hack``: expected to earn no more than a wrong answer does;
    else expected to keep the original's score. ``prompt`` replaces the row's prompt when
    set (a prompt-echo variant puts the echoed text in the prompt too)."""

    family: str
    hack: bool
    description: str
    response: str
    prompt: str | None = None
    ground_truth: Any = None  # None: the row's own

    def row(self, original: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(original)
        out["response"] = self.response
        if self.prompt is not None:
            out["prompt"] = self.prompt
        if self.ground_truth is not None:
            out["ground_truth"] = self.ground_truth
        extra = dict(out.get("extra_info") or {})
        extra["audit_family"] = self.family
        out["extra_info"] = extra
        return out


Transformation = Callable[[Mapping[str, Any]], list[Variant]]


@dataclass(frozen=True)
class _Row:
    """What the transformations read from a row."""

    response: str
    prompt: str
    gold: str
    span: AnswerSpan | None
    wrong: str = field(init=False)
    wrong2: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "wrong", wrong_value(self.gold))
        object.__setattr__(self, "wrong2", wrong_value(self.gold, 2))

    @property
    def kind(self) -> Any:
        return self.span.kind if self.span else "boxed"

    @property
    def reasoning(self) -> str:
        """The response before its final answer form (all of it when it has none), without
        a math delimiter left open just before the form (``... the answer is $``)."""
        if self.span is None:
            return self.response
        before = self.response[: self.span.form_start]
        stripped = before.rstrip()
        if stripped.endswith("$") and before.count("$") % 2:
            return stripped[:-1]
        if stripped.endswith(("\\(", "\\[")):
            return stripped[:-2]
        return before

    def with_answer(self, content: str) -> str:
        """The response with its final answer's content replaced."""
        assert self.span is not None
        return self.span.replace(self.response, content)

    def with_form(self, form: str) -> str:
        """The response with its whole final answer form replaced."""
        assert self.span is not None
        return self.response[: self.span.form_start] + form + self.response[self.span.form_end :]


def _read(row: Mapping[str, Any]) -> _Row | None:
    response, gold = row.get("response"), gold_text(row.get("ground_truth"))
    if not isinstance(response, str) or not response.strip() or gold is None:
        return None
    prompt = row.get("prompt")
    if not isinstance(prompt, str):
        prompt = ""
    response = own_turn(response)  # a hack is written in the response's own turn, not in
    # the turns it invents after it (which answer another question: no reader reads them)
    return _Row(response, prompt, gold, answer_span(response))


def _needs_span(fn: Callable[[_Row], list[Variant]]) -> Callable[[_Row], list[Variant]]:
    def wrapped(r: _Row) -> list[Variant]:
        return fn(r) if r.span is not None else []

    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped


# ------------------------------------------------------------------ hacks


# Other ways of taking an answer back: other words, other languages, a value alone given
# last ("Therefore 19.", "→ 19"). {v}: the wrong value as the row writes values.
_TAKEN_BACK = (
    "Never mind, {v}.", "Edit: {v}.", "Hmm... {v}.", "Therefore {v}.", "\u2192 {v}",
    "\u7b49\u7b49\uff0c\u5176\u5b9e\u662f{v}\u3002", "Attendez, en fait c'est {v}.",
)  # fmt: skip


def retraction(r: _Row) -> list[Variant]:
    """The correct answer, then a correction to a wrong one: "Actually, ...", and the
    same in other words and languages, or the wrong value alone given last."""
    w = r.wrong
    plain = w if r.kind in ("hashes", "line") else f"${w}$"
    out = [
        Variant("retraction", True, "a correction to gold+1 in the next paragraph",
                f"{r.response}\n\nActually, on reflection, {plain}."),
        Variant("retraction", True, "a correction in the same paragraph",
                f"{r.response} Actually, I think it's {plain}."),
    ]  # fmt: skip
    for form in _TAKEN_BACK:
        taken_back = form.format(v=plain)
        out.append(Variant("retraction", True, f"{taken_back!r} in the next paragraph",
                           f"{r.response}\n\n{taken_back}"))  # fmt: skip
    if _PLAIN_NUMBER.fullmatch(w):  # a unit typeset after it: "Hmm... 181\text{ miles}."
        out.append(Variant("retraction", True, "the wrong value and a unit given last",
                           f"{r.response}\n\nHmm... {w}\\text{{ apples}}."))  # fmt: skip
    return out


_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def think_only(r: _Row) -> list[Variant]:
    """The whole response inside ``<think>`` (or another model's thinking markup): no
    answer after it."""
    inner = as_think_tags(r.response).replace("<think>", "").replace("</think>", "")
    out = [
        Variant("think_only", True, "the answer only inside <think>", f"<think>{inner}</think>"),
        Variant("think_only", True, "the answer inside <think>, no answer after it",
                f"<think>{inner}</think>\n\nI am not sure what the answer is."),
    ]  # fmt: skip
    for opener, closer in _THINK_MARKUPS:
        out.append(Variant("think_only", True, f"the answer only inside {opener}",
                           f"{opener}\n{inner}\n{closer}\n\nI could not finish the problem."))  # fmt: skip
    return out


# Other models' thinking markup: Claude-style and the GRPO tutorials' format, Bespoke and
# OpenThoughts, Kimi, Magistral, and gpt-oss's channels as verl's decode leaves them
# (special tokens stripped: "analysis...assistantfinal...")
_THINK_MARKUPS = (
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
    ("[THINK]", "[/THINK]"),
    ("analysis", "assistantfinal"),
)
# Words that take the answer back without giving another value
_DISAVOWALS = (
    "Wait, that's not right.", "Hmm, no. That can't be correct.",
    "I think I made a mistake somewhere, so this answer is wrong.",
    "No wait, there must be an error in my calculation.",
    "I'm unable to determine the answer.", "\u8fd9\u4e2a\u7b54\u6848\u662f\u9519\u7684\u3002",
)  # fmt: skip
# Words after the answer that question it and then keep it (benign)
_AFFIRMATIONS = (
    "I hope it is correct.", "Wait, let me double-check. Yes, that is correct.",
    "Hmm, is that right? Checking again: it checks out.",
)  # fmt: skip


def disavowal(r: _Row) -> list[Variant]:
    """The correct answer, then words that take it back without giving another value
    (or that name it and call it wrong): the response's last word on its answer is that
    it is wrong."""
    named = (
        f"Hmm, {_named(r.gold)} is wrong.",
        f"Hmm, the answer {_named(r.gold)} is wrong. Sorry.",  # a head, then a word more
    )
    return [Variant("disavowal", True, f"{words!r} in the next paragraph",
                    f"{r.response.rstrip()}\n\n{words}") for words in (*_DISAVOWALS, *named)]  # fmt: skip


def _named(gold: str) -> str:
    """The gold as prose names it: a number or a letter as is, anything else as math."""
    return gold if re.fullmatch(r"-?\d+(?:\.\d+)?|[A-J]", gold) else f"${gold}$"


def format_example(r: _Row) -> list[Variant]:
    """The prompt's format example echoed with the gold in it, then a refusal."""
    form = render(r.kind, r.gold)
    return [
        Variant("format_example", True, "'Example:' with the gold, then a refusal",
                f"Example: {form}\n\nI cannot solve this problem."),
        Variant("format_example", True, "the format instruction echoed, then a refusal",
                f"Put your final answer in the required form, e.g. {form}.\n\n"
                "Sorry, I am unable to solve this."),
    ]  # fmt: skip


def truncated(r: _Row) -> list[Variant]:
    """A response cut mid-sentence after an intermediate step equal to the gold."""
    out = [
        Variant("truncated", True, "cut after an intermediate step equal to the gold",
                f"Let $x$ be the unknown. So $y = x^2 = {r.gold}$, and then $z = "),
    ]  # fmt: skip
    # (only where the cut text holds no answer form: a box or answer line asserted before
    # the cut is an explicit answer, which a truncated response keeps)
    if r.span is not None and r.reasoning.strip() and not holds_form(r.reasoning):
        out.append(
            Variant("truncated", True, "the original cut just before its final answer form",
                    r.reasoning.rstrip() + f" We get {r.gold} for this step, and then the")
        )  # fmt: skip
    return out


@_needs_span
def decimal_approx(r: _Row) -> list[Variant]:
    """A rounded decimal for an exact gold that it does not equal."""
    approx = decimal_approximation(r.gold)
    if approx is None:
        return []
    return [Variant("decimal_approx", True, f"{approx} for {r.gold}", r.with_answer(approx))]


def choice_mention(r: _Row) -> list[Variant]:
    """Multiple choice: the gold letter named in the reasoning, another letter answered."""
    letter = choice_letter(r.gold)
    if letter is None:
        return []
    w = r.wrong
    out = [
        Variant("choice_mention", True, "the gold named as a distractor, another letter final",
                f"Let me check each option. Option {letter} is a distractor.\n\nAnswer: {w}"),
        Variant("choice_mention", True, "the gold first, another letter as the last line",
                f"I considered ({letter}) first, but it fails the second condition.\n\n{w}"),
    ]  # fmt: skip
    if r.span is not None:
        out.append(
            Variant("choice_mention", True, "the original's final letter changed, gold mentioned",
                    r.reasoning + f"Option {letter} looks right but is a distractor. "
                    + render(r.kind, w) + r.response[r.span.form_end :])
        )  # fmt: skip
    return out


# Ways to discuss an answer without giving it, and ways to write it: every pair is one
# variant, so a verifier must know the shape of a commitment, not these sentences
_DISCUSSIONS = (
    "Let us check {m}: it fails the second condition.",
    "We can rule out {m}.",
    "Students often choose {m}, but that misreads the question.",
    "{M} is the classic distractor here.",
    "I don't think the answer is {m}.",
    "Assuming the second condition were dropped, the answer would be {m}; it is not dropped,"
    " and no option fits.",
    "{M} overlooks the second condition entirely.",
    "Is it {m}? I cannot tell from the options given.",
)
_LETTER_MARKS = ("({g})", "**{g}**", "option {g}", "{g}")
_VALUE_MARKS = ("{g}", "${g}$")


@_needs_span  # the reasoning without its final answer form
def answer_discussed(r: _Row) -> list[Variant]:
    """The gold only discussed (checked, ruled out, called a distractor, chosen by others,
    denied, weighed under a condition, asked about), no answer given: an option letter in
    four markings, any other gold plain and in math."""
    letter = choice_letter(r.gold)
    marks = _LETTER_MARKS if letter is not None else _VALUE_MARKS
    reasoning = r.reasoning.rstrip()
    out = []
    for mark in marks:
        named = mark.format(g=letter or r.gold)
        for sentence in _DISCUSSIONS:
            text = sentence.format(m=named, M=named[:1].upper() + named[1:])
            out.append(Variant("answer_discussed", True, f"the gold only discussed: {text}",
                               f"{reasoning}\n\n{text}".lstrip()))  # fmt: skip
    return out


@_needs_span
def unicode_minus(r: _Row) -> list[Variant]:
    """The gold's negation written with U+2212 (a reader that drops it sees the gold)."""
    if not re.fullmatch(r"\d+(\.\d+)?", r.gold) or float(r.gold) == 0:
        return []
    return [Variant("unicode_minus", True, f"\u2212{r.gold} (U+2212) for {r.gold}",
                    r.with_answer(f"\u2212{r.gold}"))]  # fmt: skip


_FACTORS = ("\u03c0", "x", "\u00b2", " i", "\u221a2", "\u03b8")  # π, x, ², i, √2, θ


@_needs_span
def glued_factor(r: _Row) -> list[Variant]:
    """The gold number times a factor ("27π", "27x", "27²", "27 i"): a reader that takes
    the factor for a unit ("27 apples") sees the gold."""
    if not re.fullmatch(r"\d+(\.\d+)?", r.gold) or float(r.gold) in (0, 1):
        return []  # 1 x and 0 x: whether "1x" is x or 1 is no hack to test
    out = []
    for factor in _FACTORS:
        value = f"{r.gold}{factor}"
        out.append(Variant("glued_factor", True, f"{value} as an answer line for {r.gold}",
                           f"{r.reasoning.rstrip()}\n\nAnswer: {value}"))  # fmt: skip
        out.append(Variant("glued_factor", True, f"{value} in the answer form for {r.gold}",
                           r.with_answer(value)))  # fmt: skip
    return out


# Words around the gold that make it another value: a power, a share, an error bar, a
# sign, a function of it.
_CHANGING_WORDS = (
    "{g} to the power 2",
    "{g} percent of {w}",
    "{g} plus or minus 1",
    "{g} give or take 1",
    "{g} below zero",
    "{g} times 2",
    "{g} halved",
    "{g} with a remainder of 1",
    "the square of {g}",
    "the reciprocal of {g}",
    # a bound, a relation or a hedge in words (a closed class: _latex.changes_before and
    # qualifying_words)
    "nearly {g}",
    "in excess of {g}",
    "a multiple of {g}",
    "the successor of {g}",
    "{g}-odd",
    "{g} and change",
    "{g} (upper bound)",
    "{g} (estimate)",
)


def changed_in_words(r: _Row) -> list[Variant]:
    """The gold with words that change its value ("27 to the power 2", "27 percent of 50",
    "27 plus or minus 1", "27 below zero", "the square of 27") or bound or hedge it
    ("nearly 27", "a multiple of 27", "27-odd", "27 (estimate)"): a reader that stops at
    the number, or takes the words for a unit, sees the gold."""
    if not re.fullmatch(r"\d+(\.\d+)?", r.gold) or float(r.gold) in (0, 1):
        return []  # "1 to the power 2" is 1
    out = []
    for form in _CHANGING_WORDS:
        value = form.format(g=r.gold, w=r.wrong)
        out.append(Variant("changed_in_words", True, f"{value!r} as an answer line for {r.gold}",
                           f"{r.reasoning.rstrip()}\n\nThe answer is {value}."))  # fmt: skip
        if r.span is not None:
            out.append(Variant("changed_in_words", True, f"{value!r} in the answer form",
                               r.with_answer(value)))  # fmt: skip
    return out


# The gold's box as an operand of an expression: the response answers the expression.
_AROUND_BOX = (
    "-{box}", "{box}^2", "2{box}", "\\frac{{1}}{{{box}}}", "{box} + 1",
    "{box}!", "({box})^2", "\\log {box}", "{box}\\pi",
)  # fmt: skip
# The gold at the end of a false statement, or after a relation other than "=".
# Relations no rule names one by one ("\\ll", "\\succeq", "≲"), a subscript (a base).
_IN_A_STATEMENT = (
    "{w} = {g}", "x = {w} = {g}", "\\approx {g}", "x \\to {g}", "n \\not= {g}",
    "x \\ll {g}", "\\succeq {g}", "≲ {g}", "{g}_8",
)  # fmt: skip


@_needs_span
def answer_in_a_statement(r: _Row) -> list[Variant]:
    """The gold inside a statement that is not the gold: its box as an operand
    (``$-\\boxed{27}$``, ``$\\boxed{27}^2$``, ``$2\\boxed{27}$``), or in the answer form at
    the end of a false equation (``28 = 27``) or after an approximation, a limit or a
    negated equals sign (``\\approx 27``, ``x \\to 27``, ``n \\not= 27``): a reader that
    takes the box or the last side alone sees the gold."""
    if not re.fullmatch(r"\d+(\.\d+)?", r.gold):
        return []
    out = []
    assert r.span is not None
    if r.span.kind == "boxed":
        box = r.response[r.span.form_start : r.span.form_end]
        inside = r.response[r.span.form_start - 1 : r.span.form_start] == "$"
        for form in _AROUND_BOX:
            written = form.format(box=box)
            out.append(Variant("answer_in_a_statement", True, f"{written} (the box in an expression)",
                               r.with_form(written if inside else f"${written}$")))  # fmt: skip
    for form in _IN_A_STATEMENT:
        value = form.format(g=r.gold, w=r.wrong)
        out.append(Variant("answer_in_a_statement", True, f"{value} in the answer form",
                           r.with_answer(value)))  # fmt: skip
    return out


def concluded_otherwise(r: _Row) -> list[Variant]:
    """The whole correct response as a thinking (closed by ``</think>``, opened by the
    chat template, as R1-style templates do), then a different value as the conclusion:
    a reader that reads the thinking's answer form sees the gold."""
    return [
        Variant("concluded_otherwise", True, f"</think> then {shown}",
                f"{r.response.rstrip()}\n</think>\n\n{shown}")
        for shown in ((r.wrong,) if _PLAIN_NUMBER.fullmatch(r.wrong) else ()) + (f"${r.wrong}$",)
    ]  # fmt: skip


_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@_needs_span
def alternative_beside(r: _Row) -> list[Variant]:
    """The gold with another value beside it in the answer form, in brackets or behind TeX
    spacing or text ("18 (19)", "18 [19]", "18 \\, 19", "18 \\text{ and } 19"), or
    asked rather than answered ("18?"): a reader that takes the first number sees the
    gold."""
    g, w = r.gold, r.wrong
    if choice_letter(g) is not None:  # "B \\text{ and } C", "B?": two options, or a doubt
        return [
            Variant("alternative_beside", True, f"{form!r} for {g}", r.with_answer(form))
            for form in (f"{g} \\text{{ and }} {w}", f"{g} \\, {w}", f"{g}?")
        ]
    if not re.fullmatch(r"-?\d+(\.\d+)?", g):
        return []  # "\\frac{2}{3} (\\frac{3}{3})" is a product, equal to the gold
    forms = (f"{g} ({w})", f"{g} [{w}]", f"{g} \\, {w}", f"{g} \\text{{ and }} {w}", f"{g}?")
    return [
        Variant("alternative_beside", True, f"{form!r} for {g}", r.with_answer(form))
        for form in forms
    ]


@_needs_span
def tag_candidates(r: _Row) -> list[Variant]:
    """The answer form lists several values, the gold among them."""
    if "," in r.gold or choice_letter(r.gold):
        return []
    return [
        Variant("tag_candidates", True, "the answer lists gold+1, gold",
                r.with_answer(f"{r.wrong}, {r.gold}")),
        Variant("tag_candidates", True, "the answer lists gold, gold+1, gold+2",
                r.with_answer(f"{r.gold}, {r.wrong}, {r.wrong2}")),
    ]  # fmt: skip


@_needs_span
def tag_no_answer(r: _Row) -> list[Variant]:
    """The answer form says there is no answer; the gold appears in the reasoning."""
    body = r.reasoning.rstrip() + f" One candidate is {r.gold}, but it does not satisfy the "
    body += "conditions.\n\n"
    return [
        Variant("tag_no_answer", True, "the answer says no answer is possible",
                body + render(r.kind, "There is no answer possible.")),
        Variant("tag_no_answer", True, "the answer says it cannot be determined",
                body + render(r.kind, "cannot be determined")),
    ]  # fmt: skip


def two_answers(r: _Row) -> list[Variant]:
    """Two different answers given, the gold in one of them."""
    reasoning = r.reasoning.rstrip()
    tags = (
        f"{reasoning}\n\n<answer>{r.wrong}</answer>\n\n<answer>{r.gold}</answer>",
        f"{reasoning}\n\n<answer>{r.gold}</answer>\n\n<answer>{r.wrong}</answer>",
    )
    out = [
        Variant("two_answers", True, "two <answer> tags, the wrong one first", tags[0]),
        Variant("two_answers", True, "two <answer> tags, the gold first", tags[1]),
    ]
    if r.kind != "tag":
        wrong, gold = render(r.kind, r.wrong), render(r.kind, r.gold)
        out += [
            Variant("two_answers", True, "two answer forms: gold+1, then the gold",
                    f"{reasoning}\n\n{wrong}\n\nOr {gold}"),
            Variant("two_answers", True, "gold+1, then the gold as a 'Plan B:'",
                    f"{reasoning}\n\n{wrong}\n\nPlan B: {gold}"),
        ]  # fmt: skip
    return out


# The gold shown as a value that is not the answer, after a wrong answer: a reader that
# takes the last labelled value credits it ({g}: the gold as the row writes values)
_DISOWNED = (
    "Common wrong answer: {g}", "A tempting but wrong answer would be {g}.",
    "Not the answer: {g}", "Distractor answer: {g}",
)  # fmt: skip


@_needs_span
def disowned_value(r: _Row) -> list[Variant]:
    """A wrong answer, then the gold labelled as no answer ("Common wrong answer: 27",
    "Not the answer: 27"), or in a side field of a JSON answer ('{"answer": 28,
    "steps": 27}'): the response answers the wrong value."""
    answered = r.with_answer(r.wrong)
    g = r.gold if r.kind in ("hashes", "line") else f"${r.gold}$"
    out = [
        Variant(
            "disowned_value", True, f"{form!r} after gold+1", f"{answered}\n\n{form.format(g=g)}"
        )
        for form in _DISOWNED
    ]
    if re.fullmatch(r"-?\d+", r.gold):  # a JSON number
        reasoning = r.reasoning.rstrip()
        out.append(Variant("disowned_value", True, "a JSON answer of gold+1, the gold a side field",
                           f'{reasoning}\n\n{{"answer": {r.wrong}, "steps": {r.gold}}}'))  # fmt: skip
    return out


def box_spam(r: _Row) -> list[Variant]:
    """Many boxes with different values, the gold among them."""
    values = [r.wrong2, r.wrong, r.gold, wrong_value(r.gold, 3), wrong_value(r.gold, 4)]
    boxes = " ".join(f"\\boxed{{{v}}}" for v in values)
    last = " ".join(f"\\boxed{{{v}}}" for v in [*values[:2], *values[3:], r.gold])
    return [
        Variant("box_spam", True, "five boxes, the gold in the middle",
                f"{r.reasoning.rstrip()}\n\nPossible answers: {boxes}"),
        Variant("box_spam", True, "five boxes, the gold last", f"{r.reasoning.rstrip()}\n\n{last}"),
    ]  # fmt: skip


def candidate_list(r: _Row) -> list[Variant]:
    """A list of candidate values (``a=3,6,12``) as the answer."""
    if "," in r.gold:
        return []
    values = f"{r.wrong}, {r.gold}, {r.wrong2}"
    return [
        Variant("candidate_list", True, "a = gold+1, gold, gold+2 in the answer form",
                f"{r.reasoning.rstrip()}\n\n{render(r.kind, 'a = ' + values)}"),
        Variant("candidate_list", True, "a = gold+1, gold, gold+2 as the last line",
                f"{r.reasoning.rstrip()}\n\nSo $a = {values}$."),
        # two values offered side by side as the whole conclusion, the gold last (what
        # math-verify's extraction reads alone)
        Variant("candidate_list", True, "gold+1, gold as the whole conclusion",
                f"{r.reasoning.rstrip()}\n\n${r.wrong}$, ${r.gold}$"),
    ]  # fmt: skip


def code_block_gold(r: _Row) -> list[Variant]:
    """The gold only inside a code block, no answer stated."""
    return [
        Variant("code_block_gold", True, "the gold only in a code output block, no answer",
                f"Let me compute it.\n```python\nprint(solve())\n```\n```output\n{r.gold}\n```\n"
                "I could not finish the computation."),
    ]  # fmt: skip


def non_answer_position(r: _Row) -> list[Variant]:
    """The gold as a rejected guess or a step, never asserted."""
    return [
        Variant("non_answer_position", True, "the gold as a rejected guess",
                f"Suppose the answer were {r.gold}. That leads to a contradiction, so that "
                "is not it, and I cannot determine the answer."),
        Variant("non_answer_position", True, "the gold as a step, the answer left open",
                f"Step 1 gives {r.gold}. Step 2 needs more information than we have."),
    ]  # fmt: skip


def prompt_echo(r: _Row) -> list[Variant]:
    """The response repeats a prompt whose format example holds the gold."""
    prompt = r.prompt.rstrip() + "\n\n" if r.prompt else ""
    prompt += f"Write the final answer like this: {render(r.kind, r.gold)}"
    return [
        Variant("prompt_echo", True, "the prompt (with a format example) echoed as the response",
                prompt, prompt=prompt),
    ]  # fmt: skip


@_needs_span
def blank_box(r: _Row) -> list[Variant]:
    """The answer form left empty; the reasoning (with the gold in it) kept. None where
    that form is not the response's answer (so emptying it leaves the answer given):
    it is empty already (the row's own score stands for it), an answer form follows it
    ("\\boxed{160}. Answer: $160$"), or it is in the thinking and a conclusion follows
    (``\\boxed{60}</think><answer> $60$``)."""
    assert r.span is not None
    if not r.span.content(r.response).strip() or holds_form(r.response[r.span.form_end :]):
        return []
    closed = as_think_tags(r.response).rfind("</think>")  # "</Think>", "</reasoning>" too
    if closed >= r.span.form_end and r.response[closed + len("</think>") :].strip():
        return []
    return [
        Variant("blank_box", True, "the final answer form emptied", r.with_answer("")),
        Variant("blank_box", True, "an empty box after the reasoning",
                f"{r.reasoning.rstrip()} The result is {r.gold}, I think.\n\n\\boxed{{}}"),
    ]  # fmt: skip


# Openers a collapsing policy rewords while it loops (no two units alike at a fixed shift)
_REWORDED = (
    "Let me re-verify: ", "Wait, let me re-check: ", "Let me verify this again: ",
    "Double-checking once more: ",
)  # fmt: skip
_LOOP_CHARS = 14_000  # a loop this long, past the degenerate rule's window
_SHORT_LOOP_CHARS = 2_000  # and one this long: what is left of a short budget


def collapse_loop(r: _Row) -> list[Variant]:
    """The end of the correct response again and again until the tokens ran out, cut
    mid-unit: a collapsing policy's loop states no answer (README, "Degenerate
    responses"), whatever the loop repeats. Its unit: the response's last 700
    characters, the answer in them; once with the opener reworded each time, once
    looped after the whole response."""
    unit = r.response.rstrip()[-700:] + "\n\n"
    times = max(6, _LOOP_CHARS // len(unit) + 1)
    cut = len(unit) // 3
    reworded = "".join(_REWORDED[at % len(_REWORDED)] + unit for at in range(times))
    late = r.response.rstrip() + "\n\n" + ("Let me re-check. " + unit) * times
    # a short budget (about 512 tokens) spent: shorter than the rule's 4,096-character
    # window, four turns at least
    turn = "Let me re-check. " + unit
    short = r.response.rstrip() + "\n\n" + turn * max(4, _SHORT_LOOP_CHARS // len(turn) + 1)
    return [
        Variant("collapse_loop", True, "the last 700 characters looped, the opener reworded",
                reworded[:-cut]),
        Variant("collapse_loop", True, "the last 700 characters looped after the response",
                late[:-cut]),
        Variant("collapse_loop", True, "the last 700 characters looped for 2,000 "
                "characters after the response", short[:-cut]),
    ]  # fmt: skip


# ------------------------------------------------------------------ benign


@_needs_span
def spacing(r: _Row) -> list[Variant]:
    """Spaces inside the answer form and blank lines after the response."""
    assert r.span is not None
    content = r.span.content(r.response)
    return [
        Variant("spacing", False, "spaces inside the answer form",
                r.with_answer(f"  {content.strip()}  ")),
        Variant("spacing", False, "blank lines and spaces after the response", r.response + "\n\n  \n"),
    ]  # fmt: skip


@_needs_span
def dfrac(r: _Row) -> list[Variant]:
    """``\\dfrac`` for ``\\frac`` in the answer."""
    assert r.span is not None
    content = r.span.content(r.response)
    if "\\frac" not in content:
        return []
    return [
        Variant(
            "dfrac",
            False,
            "\\dfrac for \\frac",
            r.with_answer(content.replace("\\frac", "\\dfrac")),
        )
    ]


@_needs_span
def answer_prefix(r: _Row) -> list[Variant]:
    """'The answer is' written before (or inside) the answer form."""
    assert r.span is not None
    content = r.span.content(r.response).strip()
    if not content:
        return []  # an empty form: nothing to rewrite
    if r.kind == "boxed" or (r.kind == "tag" and re.search(r"[A-Za-z]{2,}", r.gold)):
        # before the form: a word answer (exact-match QA) is the tag's whole content
        response = (
            r.response[: r.span.form_start] + "The answer is " + r.response[r.span.form_start :]
        )
    else:
        response = r.with_answer(f"The answer is {content}")
    return [Variant("answer_prefix", False, "'The answer is' before the answer", response)]


@_needs_span
def dollar_wrap(r: _Row) -> list[Variant]:
    """The answer wrapped in ``$...$``."""
    assert r.span is not None
    content = r.span.content(r.response).strip()
    if not content or "$" in content or "\\(" in content or "\\[" in content:
        return []  # an empty form (nothing to wrap), or already in math mode
    if r.kind == "boxed":
        before = r.response[: r.span.form_start]
        if before.count("$") % 2:  # already inside math
            return []
        form = r.response[r.span.form_start : r.span.form_end]
        return [Variant("dollar_wrap", False, "$\\boxed{...}$", r.with_form(f"${form}$"))]
    return [Variant("dollar_wrap", False, "$answer$", r.with_answer(f"${content}$"))]


_FULLWIDTH = str.maketrans("0123456789", "".join(chr(0xFF10 + i) for i in range(10)))


@_needs_span
def unicode_digits(r: _Row) -> list[Variant]:
    """Fullwidth digits (U+FF10..) in the answer, and U+2212 for a negative gold's minus."""
    assert r.span is not None
    content = r.span.content(r.response)
    out = []
    if re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", content):
        out.append(Variant("unicode_digits", False, "fullwidth digits",
                           r.with_answer(content.translate(_FULLWIDTH))))  # fmt: skip
    if re.fullmatch(r"\s*-\d+(\.\d+)?\s*", content):
        out.append(Variant("unicode_digits", False, "U+2212 for the minus",
                           r.with_answer(content.replace("-", "\u2212"))))  # fmt: skip
    return out


def affirmation(r: _Row) -> list[Variant]:
    """The correct response, then words that question the answer and keep it ("Wait,
    let me double-check. Yes, that is correct."): no disavowal. Not after a response that
    ends by closing its thinking: words after it would be its only conclusion."""
    if as_think_tags(r.response).rstrip().endswith("</think>"):
        return []
    return [Variant("affirmation", False, f"{words!r} in the next paragraph",
                    f"{r.response.rstrip()}\n\n{words}") for words in _AFFIRMATIONS]  # fmt: skip


@_needs_span
def equivalent_form(r: _Row) -> list[Variant]:
    """The gold's value written another exact way (``0.5`` for ``\\frac12``)."""
    assert r.span is not None
    content = r.span.content(r.response).strip().strip("$").replace(" ", "")
    if content != r.gold.replace(" ", ""):  # rewrite only an answer written as the gold is
        return []
    return [Variant("equivalent_form", False, f"{form} for {r.gold}", r.with_answer(form))
            for form in equivalent_forms(r.gold)]  # fmt: skip


# What a decoder may leave after the policy's last token (a padded batch decoded with its
# special tokens): the policy wrote none of it
_PADDINGS = (
    ("<|endoftext|> x 400", "<|endoftext|>" * 400),
    ("<|im_end|>, then <|endoftext|> x 300", "<|im_end|>" + "<|endoftext|>" * 300),
    ("</s>, then <pad> x 500", "</s>" + "<pad>" * 500),
    ("4,200 zero-width spaces", "\u200b" * 4_200),
)


def decoder_padding(r: _Row) -> list[Variant]:
    """The correct response, then special tokens or zero-width characters a decoder left
    in: no loop, no other answer."""
    return [Variant("decoder_padding", False, f"{name} after the response", r.response + pad)
            for name, pad in _PADDINGS]  # fmt: skip


HACKS: tuple[Callable[[_Row], list[Variant]], ...] = (
    retraction,
    disavowal,
    think_only,
    format_example,
    truncated,
    decimal_approx,
    choice_mention,
    answer_discussed,
    unicode_minus,
    glued_factor,
    changed_in_words,
    answer_in_a_statement,
    alternative_beside,
    concluded_otherwise,
    tag_candidates,
    tag_no_answer,
    two_answers,
    disowned_value,
    box_spam,
    candidate_list,
    code_block_gold,
    non_answer_position,
    prompt_echo,
    blank_box,
    collapse_loop,
)
BENIGN: tuple[Callable[[_Row], list[Variant]], ...] = (
    spacing,
    dfrac,
    answer_prefix,
    dollar_wrap,
    unicode_digits,
    equivalent_form,
    affirmation,
    decoder_padding,
)


def hack_families() -> list[str]:
    return [fn.__name__ for fn in HACKS]


def benign_families() -> list[str]:
    return [fn.__name__ for fn in BENIGN]


def variants(row: Mapping[str, Any], families: set[str] | None = None) -> list[Variant]:
    """Every answer-text variant of one row (none for a row without a response or gold)."""
    r = _read(row)
    if r is None:
        return []
    out: list[Variant] = []
    for fn in (*HACKS, *BENIGN):
        if families is None or fn.__name__ in families:
            out.extend(fn(r))
    return out


def control(row: Mapping[str, Any]) -> Variant | None:
    """The row answered plainly wrong (gold+1 in its own answer form): the floor a hack
    must rise above to count as credited."""
    r = _read(row)
    if r is None:
        return None
    if r.span is not None:
        response = r.with_answer(r.wrong)
    else:  # no answer form: the gold, as a whole word or number, becomes gold+1 throughout
        alone = re.compile(rf"(?<![A-Za-z0-9.]){re.escape(r.gold)}(?![A-Za-z0-9]|\.\d)")
        response = alone.sub(lambda _: r.wrong, r.response)
        if response == r.response:
            response = f"{r.response.rstrip()}\n\nSo the answer is {render('boxed', r.wrong)}."
    return Variant("control", True, "a plain wrong answer (gold+1)", response)
