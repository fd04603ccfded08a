"""Multiple choice (MMLU, GPQA, ARC, CommonsenseQA, ...): the chosen letter, A to J.

The letter is taken from the end of the response, strongest evidence first:

1. the last ``answer is (C)`` / ``Answer: C`` / ``**Answer:** C`` / ``\\boxed{C}`` /
   ``<answer>C</answer>``; else the last ``option C`` / ``the correct choice is C``;
2. else a last line that is only a letter (``C``, ``(C)``, ``C.``);
3. else the last ``**C**`` or ``(C)`` anywhere (in the last ``TAIL_CHARS``).

Offering several letters is *hedging*, no letter (``hedged: True``, score 0): a letter
listed with another (``A, B, C, D``, ``C or D``, ``(C)(D)``, ``\\boxed{A, C}``, ``**A**
**B**``, lone letters on the last lines), or, in the paragraph of the final answer (from
its last blank line or ``</think>`` on), another stated answer with a different letter
(``Answer: A`` then ``\\boxed{C}``), or words after the stated letter, in its paragraph
or the next, offering another or taking it back ("A but C is also possible", "it could
be C", "Or maybe C", "Option D would also work", "Actually, B"), or a paragraph longer
than is read with an answer in the part not read, or the options restated with their
texts (``(A) 18 (B) 20 (C) 22 (D) 24``, after "Answer:" too): every option, no choice,
or a bold letter alone on its line in the section (``Answer: B``, a blank line,
``**D**``: bare answers one a paragraph are one section, ``_common.section_start``).
"Or" in other words joins letters ("C vs D", "C oder D": ``_common.OR_WORD``). An answer
stated in an earlier paragraph or in the thinking is a step on the way. The response is
read as rendered (``_common.visible``): ``Answer: ~~D~~ B`` answers B. Full-width forms
are their ASCII letters (``（Ｂ）`` is ``(B)``), and "answer" is read in Chinese too
(``答案是 B``, ``答案：B``): letters joined or asked with no blank between (``B或C``,
``A、B``, ``B吗？``) are no choice, and ``选D`` ("choose D") chooses D.

Every reading must be committed to (:mod:`rewardkit.verifiers._commitment`): a letter
discussed, ruled out, tabled, weighed under a condition or chosen by somebody else is no
choice ("We can rule out (B).", "Students often choose B.", "Option B is the best
distractor.", "I don't think the answer is B."), and the words after a letter are its
option's text (read from the prompt) or an affirmation, never a judgement of it.

Everything is decided in the main process; there is no slow path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers import _repetition
from rewardkit.verifiers._commitment import closes, led_plainly, plain_words, undercut
from rewardkit.verifiers._common import (
    ANSWER_ZH,
    CORRECTION_CUE,
    CORRECTION_GAP,
    DENIAL,
    DENIAL_CJK,
    OFFER_CUE,
    OFFER_PREDICATE,
    OR_WORD,
    SECTION_CHARS,
    calls_wrong,
    gold_strings,
    last_match,
    later_paragraphs,
    rest_of_paragraph,
    section_start,
    unread_answer,
    verdict,
)
from rewardkit.verifiers._final import (
    answering_texts,
    closing_correction,
    last_line_values,
    no_fallback,
    offered_alternative,
)
from rewardkit.verifiers.base import NO_CONTEXT, Context, Extracted, Verdict

__all__ = ["ChoiceVerifier"]

# "A" and "I" before a lower-case word (or a contraction) are an article and a pronoun:
# "The answer is A bit subtle", "Answer: I don't know" (not "The answer is A because ...")
_LETTER = (
    r"[\(\[]?(?P<letter>[B-HJ]|[AI](?!['’])(?![ \t]{1,3}(?!(?:because|since|as|and|or|is|was"
    r"|with|for|but|not|so|then|here|this|that)\b)[a-z]))[\)\]]?(?![A-Za-z0-9])"
)
_STATEMENT = (
    r"(?:[ \t]{0,2}\*\*)?[ \t]{0,3}(?:(?i:is|est|es|ist|é|è|(?:should|must)[ \t]+be)"
    r"|(?:应该|应)?是|应为|为|為|は)?[ \t]{0,3}(?:[:：=→–]|-(?!\d))?[ \t]{0,3}"
    r"(?:\*\*)?[ \t]{0,3}(?:(?i:option|choice)[ \t]{1,3})?"  # "the answer is option A"
    r"(?:(?i:most[ \t]+likely|probably|likely|clearly|definitely|certainly)[ \t]{1,3})?"
    # a letter in math mode, a box, a code span or quotes: "\(B\)", "`B`", "\"B\"", "*B*"
    r"(?:\$|\\\(|[`\"'“‘*](?!\*))?(?:\\boxed\{|\\text\{|\\textbf\{)?[ \t]{0,2}" + _LETTER
)
# "answer" (and the <answer> tag) states the answer; "option"/"choice" may only discuss one
_STATED = re.compile(
    # "答案是 B", "答案：B": "answer" in Chinese; not the wrong one, or one ruled out; in
    # English "answer" then a separator ("answer B" names an option: "Answer B fails").
    # The lookahead first: re passes fast over where no word of them starts
    r"(?=[aArRoOоО答正정])(?:(?i:answer)(?=[ \t]{0,3}(?:\*\*[ \t]{0,3})?(?:(?i:is|(?:should|must)"
    r"[ \t]+be)\b|[:：=→–-]|\*\*))|(?<!排除)"
    + ANSWER_ZH
    # "answer" in the languages models answer in: "Réponse : B", "Die richtige Antwort ist
    # B", "A resposta correta é B", "答え：B", "正解はBです", "정답: B", "Ответ: B"
    + r"|(?i:réponse|respuesta|antwort|risposta|resposta|ответ|odpowiedź)"
    r"(?:[ \t]+(?i:correcte|correcta|correta|corretta|richtige|correct))?"
    r"(?=[ \t]{0,3}(?:(?i:est|es|ist|é|è)[ \t]|[:：]))"
    + r"|答え|正解|정답"
    + r")(?:"
    + _STATEMENT
    # "Answer: b", "answer is (b)." ending its line: a lower-case letter stated as the answer
    + r"|(?:[ \t]{0,2}\*\*)?[ \t]{0,3}(?:(?i:is)[ \t]{0,3})?[:：]?[ \t]{0,3}(?:\*\*)?[ \t]{0,3}"
    r"[\(\[]?(?P<letter_b>[a-j])[\)\]]?(?=[ \t]{0,3}(?:\*\*)?[ \t]{0,3}\.?[ \t]{0,3}(?:\n|$)))"
)
# <answer>C</answer>, <answer> $C$ </answer>, <answer>(C) 42</answer>; not "<answer> C(5, 2)"
_TAGGED = re.compile(
    r"<answer>\s{0,8}\$?(?:\\boxed\{|\\text\{)?[\(\[]?(?P<letter>[A-J])[\)\]]?"
    r"(?=[}$.:]{0,3}\s{0,8}</answer>|[.:)][ \t])"
)
# "option"/"choice" states the answer only when chosen ("the correct option is C", "option
# C is correct", "I choose C"), never when discussed ("Option D is a distractor.")
_OPTION = re.compile(  # the lookahead first: re passes fast over where no word starts
    r"(?=[oOcCsSpPgG选])(?:(?i:option|choice)[ \t]{1,3}(?:(?i:is)[ \t]{0,3}[:：]?[ \t]{0,3}(?:\*\*)?[ \t]{0,3}"
    + _LETTER
    + r"|(?:\*\*)?"
    + _LETTER.replace("letter", "letter_b")
    + r"(?:\*\*)?(?=[ \t]{1,3}(?i:is[ \t]+(?:the[ \t]+)?(?:correct|right|best|answer)\b)))"
    + r"|\b(?i:choose|select|pick|go[ \t]+with)[ \t]{1,3}(?:(?i:option|choice)[ \t]{1,3})?(?:\*\*)?"
    + _LETTER.replace("letter", "letter_c")
    # "所以选D", "选择 B": "choose" in Chinese (not "不选B": do not choose it)
    + r"|(?<!不)(?<!不要)(?:选择|选)[ \t]{0,3}[:：]?[ \t]{0,3}(?:选项[ \t]{0,3})?(?:\*\*)?"
    + _LETTER.replace("letter", "letter_d")
    + ")"
)
# the last line is the option chosen, restated: "B) 42", "(B) 42", "A. lightning."
# (its text short, not a judgement of the option: "(A) is wrong because ..." discusses it)
_OPTION_LINE = re.compile(  # "B) Paris", "B. Paris", "B: Paris", "B - Paris"
    r"[\(\[]?(?P<letter>[A-J])(?:[\)\]]|[.:](?=[ \t])|[ \t]+[-–—](?=[ \t]))"
    r"(?![ \t:]*(?i:is|are|was|were|fails?|can|cannot|can't|could|would|should|does|doesn't|isn't"
    r"|seems|looks|might|may|and|or|vs)\b)[ \t]{0,3}:?[ \t]{0,3}(?![\(\[]?[A-J][\)\]])"
    r"(?:(?![\(\[][A-J][\)\]]|\*\*[A-J]\*\*)[^\n]){1,80}"
)
_BOXED = re.compile(r"\\boxed\{[ \t]{0,2}(?:\\text(?:bf)?\{)?[ \t]{0,2}" + _LETTER)
_BOLD = re.compile(r"\*\*[\(\[]?(?P<letter>[A-J])[\)\]]?[.:]?\*\*")
_PARENTHESISED = re.compile(r"\((?P<letter>[A-J])\)")
_STATED_FORMS = (_STATED, _BOXED, _TAGGED)
_LONE_LINE = re.compile(  # "c" too; "$C$", "\\(C\\)": the letter in math mode
    r"(?:\$|\\\()?[\(\[]?(?P<letter>[A-Ja-j])[\)\]]?(?:\$|\\\))?\.?"
)
# another letter listed after the one read: "A, B", "C or D", "C (or D)", "(C)(D)", "**C** or **D**"
# (not a word: "C. A photon...", "C I think" are prose)
_TEX_GAP = r"(?:[ \t]|~|\\[,;:!> ]|\\q?quad(?![A-Za-z]))"  # TeX's spaces: "C \, D"
_LISTED_AFTER = re.compile(  # "C vs D", "C oder D", "C 或 D": "or" in any language too
    r"(?:\*\*|[}$])?"
    + _TEX_GAP
    + r"{0,6}\(?[ \t]{0,3}(?:[,;/&|+∨∪]|(?<![ \t])[-–](?=[A-J]\b)|\\&|\b(?:and/or|and)\b|(?<![^\W\d_])"
    + OR_WORD
    + r"|[、和与及]|或者?|还是"  # "B或C", "A、B", "A和B": no blank between in Chinese
    + r"|\b(?i:through|thru|to|till|until)\b|\.\.\.|…"  # a range: "B through D", "(B) to (D)"
    # "C \text{ and } D": the word in TeX's text
    + r"|\\text(?:rm)?\{[ \t]{0,3}(?:and/or|and|or)[ \t]{0,3}\}"
    + r"|\\(?:lor|vee|cup|land|wedge)(?![A-Za-z]))?"  # "$B \lor C$": logic's "or" and "and"
    + _TEX_GAP
    + r"{0,6}(?:\*\*|\$|\\boxed\{|\\text(?:bf)?\{|\\\(|[\"'`*“‘])?[ \t]{0,2}[\(\[]?[A-J][\)\]]?"
    r"(?![A-Za-z0-9])(?![ \t]{1,3}(?!are[ \t]+(?:both|all|correct|right|true)\b)[a-z])"
    r"|[ \t]{0,3}(?:吗|呢)?[ \t]{0,3}\?"  # "C?", "是C吗？": asked, not chosen
)
# a marked letter listed just before the one read: "(A) (B) (C)", "**A**, **B**"
_LISTED_BEFORE = re.compile(
    r"(?<![A-Za-z0-9])(?:\*\*)?[\(\[]?[A-J][\)\]]?(?:\*\*)?[ \t]{0,3}"
    r"(?:[,;/&|]|\band\b|(?<![^\W\d_])" + OR_WORD + r")?[ \t]{0,3}$"
)
TAIL_CHARS = 16_000
"""The letter is looked for in this many characters at the end of a response: a chosen
letter followed by more text than this is junk, and the cap bounds the work."""
_GOLD = re.compile(r"[\(\[]?(?P<letter>[A-Ja-j])(?:[\)\].:\s]|$)")


@dataclass(frozen=True, slots=True)
class ChoiceVerifier:
    """Score 1.0 when the chosen letter is the ground truth's, else 0.0.

    The ground truth is a letter (``C``, ``(C)``, ``c``), an option text that starts
    with its letter (``C) 42``), or a list of acceptable letters.
    """

    reads_context: ClassVar[bool] = True  # extract(response, context): see base.Context

    @property
    def key(self) -> str:
        return "choice"

    def extract(self, response: str, context: Context = NO_CONTEXT) -> Extracted:
        """The chosen letter (None when several are offered), read from the conclusion
        (:func:`~rewardkit.verifiers._final.answering_texts`); bounded: every search
        starts from the end and reads at most a few KB around the letter found. A
        degenerate response (it ends in a loop) has none."""
        response = _repetition.unpadded(response).translate(_FULL_WIDTH)
        if _repetition.degenerate(response):
            return Extracted(None, {"pattern": None, "degenerate": 1})
        texts = answering_texts(response, context)
        if texts.disowned:  # "Answer: B\n\nWait, that's not right.": taken back
            return Extracted(None, {"pattern": None, "hedged": True, "disowned": True})
        if offered_alternative(texts[0]):  # "Answer: B\n\nOr Answer: C": two answers
            return Extracted(None, {"pattern": None, "hedged": True})
        if _letters_offered_last(texts[0]):  # "Answer: C\n\n$D$, $C$": two offered last
            return Extracted(None, {"pattern": None, "hedged": True})
        cut = no_fallback(texts[0], context)
        for text in texts:
            found = _extract_in(text, cut, context.question)
            if (
                found.answer is not None
                and not context.asks_for_wrong  # "Which is incorrect? ... C is incorrect."
                and calls_wrong(text, 0, _same_letter(found.answer))
            ):
                # "Answer: B. Hmm, B is wrong.": its last word on B is that it is wrong
                return Extracted(None, {**found.extra, "hedged": True, "pred": found.answer})
            if found.answer is not None or found.extra.get("hedged"):
                return found
        return Extracted(None, {"pattern": None})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Always decides: the letters are compared."""
        golds = {_gold_letter(text) for text in gold_strings(ground_truth, "choice")}
        if extracted.extra.get("hedged"):
            return verdict(False, extracted.extra.get("pred"), hedged=True)
        return verdict(extracted.answer in golds, extracted.answer)

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Same as :meth:`quick_check`; multiple choice never needs a worker."""
        return self.quick_check(extracted, ground_truth)


# Full-width forms (U+FF01-FF5E) as the ASCII they stand for, one character for one:
# a model writing Chinese or Japanese answers "答案是（Ｂ）", the letter B in parentheses.
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}


def _letters_offered_last(text: str) -> bool:
    """Whether ``text``'s last line is option letters side by side, two or more of them
    (:func:`~rewardkit.verifiers._final.last_line_values`): several answers offered as
    the last word, whatever was answered before."""
    items = last_line_values(text)
    letters = {item.strip().upper() for item in items or ()}
    return len(letters) > 1 and all(len(letter) == 1 and "A" <= letter <= "J" for letter in letters)


def _extract_in(full: str, cut: bool, question: str = "") -> Extracted:
    """The chosen letter of one text that may answer; ``cut``: the response was
    truncated, so only stated answers count (no last line, no marked letter).
    ``question``: the prompt's words (``Context.question``), where an option's text is
    found. Each reading must be committed to (:mod:`._commitment`): a stated letter
    neither undercut nor judged after it, a weaker one also led to plainly."""
    offset = max(0, len(full) - TAIL_CHARS)
    response = full[offset:]
    stated = _last_of(response, _STATED_FORMS)
    lines = response[-400:].split("\n")
    line_at = len(response) - len(lines[-1])
    last = lines[-1].strip(" \t*")
    lone = None if cut else (_LONE_LINE.fullmatch(last) or _OPTION_LINE.fullmatch(last))
    if lone is not None and stated is not None and line_at < stated.end():
        lone = None  # the stated answer is on the last line itself
    if stated is not None and (lone is None or _letter(lone) == _letter(stated)):
        if not _stated_firmly(stated, question):
            return _uncommitted(stated, "stated")
        hedged = _other_stated(full, offset, stated) or _offered_after(response, stated)
        hedged = hedged or _options_follow(response, stated) or _bold_elsewhere(response, stated)
        hedged = hedged or _offered_as_alternative(response, stated)
        hedged = hedged or _label_listed_after(response, stated, question)
        return _unless_hedged(stated, "stated", hedged)
    if stated is not None and lone is not None:  # "Answer: A" then a last line "B) 42"
        return Extracted(None, {"pattern": "line", "hedged": True, "pred": _letter(lone)})
    option = last_match(_OPTION, response)
    if option is not None and (lone is None or option.end() > line_at):
        if not _chosen_plainly(option, question):
            return _uncommitted(option, "stated")
        # taken back or offered beside, as after a stated one: "I'll go with B. Actually,
        # C.", "I choose B. Or maybe C."
        hedged = _offered_after(response, option) or _bold_elsewhere(response, option)
        hedged = hedged or _label_listed_after(response, option, question)
        return _unless_hedged(option, "stated", hedged)
    if lone is not None:
        if not _lone_line_chosen(lone, lines, question):
            return _uncommitted(lone, "line")
        # the line above it, across blank lines ("(B)\n\nC" lists two letters too)
        above_line = next((ln.strip(" \t*") for ln in reversed(lines[:-1]) if ln.strip()), "")
        above = _LONE_LINE.fullmatch(above_line) or _OPTION_LINE.fullmatch(above_line)
        hedged = above is not None and _letter(above) != _letter(lone)
        # another letter chosen before it ("I choose B.\n\nC"), as "Answer: B" before it is
        hedged = hedged or (
            option is not None
            and _letter(option) != _letter(lone)
            and _chosen_plainly(option, question)  # not "Many students choose A because"
        )
        hedged = hedged or _bold_elsewhere(response, lone, line_at)
        return _unless_hedged(lone, "line", hedged)  # "A\nB\nC": a list of letters
    marked = None if cut else _last_of(response, (_BOLD, _PARENTHESISED))
    if marked is not None:
        if not _chosen_plainly(marked, question):
            return _uncommitted(marked, "marked")
        before = response[max(0, marked.start() - 16) : marked.start()]
        listed = _LISTED_BEFORE.search(before) is not None or _options_restated(marked)
        return _unless_hedged(marked, "marked", listed or _bold_elsewhere(response, marked))
    return Extracted(None, {"pattern": None})


def _stated_firmly(found: re.Match[str], question: str) -> bool:
    """Whether a stated letter ("the answer is B", a box, an answer tag) is asserted:
    not in a clause that negates, doubts or reports it, nor judged after it."""
    text = found.string
    return not undercut(text, found.start()) and closes(text, found.end(), question, strict=False)


def _chosen_plainly(found: re.Match[str], question: str) -> bool:
    """Whether a letter read without an answer word (in bold or parentheses, after a
    choosing verb) is chosen: led to plainly and left standing after it."""
    text = found.string
    return led_plainly(text, found.start(), question) and closes(text, found.end(), question)


def _lone_line_chosen(found: re.Match[str], lines: list[str], question: str) -> bool:
    """Whether a last line holding a letter (``B``, ``B) 42``) is the choice: the line
    says nothing of the option but its text, and the line above, where it leads into
    it (ends in ":" or a verb), leads to a conclusion ("Final answer:", not "Options
    eliminated so far:" or "The remaining option to examine is")."""
    if not closes(found.string, found.end("letter"), question):
        return False
    above = next((line.strip(" \t*") for line in reversed(lines[:-1]) if line.strip()), "")
    if not above or above[-1] in ".!?。！？)":
        return True
    return led_plainly(above, len(above), question)


def _uncommitted(found: re.Match[str], pattern: str) -> Extracted:
    """No answer: the letter ``found`` is discussed, not chosen."""
    return Extracted(
        None, {"pattern": pattern, "hedged": True, "uncommitted": True, "pred": _letter(found)}
    )


def _unless_hedged(found: re.Match[str], pattern: str, hedged: bool) -> Extracted:
    """The letter of ``found``, or none when another letter is listed right after it or
    ``hedged`` says another one is offered."""
    letter = _letter(found)
    wrapper = _CLOSING_WRAPPER.match(found.string, found.end())  # '"B" or "C"', "\\(B\\) and"
    end = wrapper.end() if wrapper else found.end()
    after = _LISTED_AFTER.match(found.string, end)
    if hedged or (after is not None and after.group().strip(" \t*$}([])\"'`\\") != letter):
        return Extracted(None, {"pattern": pattern, "hedged": True, "pred": letter})
    if _doubted(found.string[end : end + 80]):
        return Extracted(None, {"pattern": pattern, "hedged": True, "pred": letter})
    if _NEGATED_BEFORE.search(found.string, max(0, found.start() - 32), found.start()):
        return Extracted(
            None, {"pattern": pattern, "hedged": True, "negated": True, "pred": letter}
        )
    return Extracted(letter, {"pattern": pattern})


# What closes a letter stated in math mode, code or quotes (read past before what follows)
_CLOSING_WRAPPER = re.compile(r"\\\)|[\"'`*”’]")

# A negation right before the letter's form: "The answer is not (B)", "$\neg\boxed{B}$",
# "not $\boxed{B}$ but C", "rather than **B**": the option ruled out, never chosen
_NEGATED_BEFORE = re.compile(
    r"(?:(?i:\b(?:not|isn't|never|rather[ \t]+than|instead[ \t]+of|except|excluding))"
    r"|\\(?:neg|lnot)(?![A-Za-z])|¬)[ \t*$]{0,6}$"
)


def _doubted(after: str) -> bool:
    """Whether the words right after the letter offer another option or doubt it: "B (or
    possibly D)", "B (probably)", "B if x > 0, else C", "B unless ...". Not "B, not C"
    (an option ruled out), nor "B or I think so" ("I" before a word is a pronoun)."""
    return _DOUBT_AFTER.match(after) is not None


_DOUBT_AFTER = re.compile(
    r"[ \t,]{0,3}[(\[]?[ \t]{0,2}(?:or[ \t,]+(?:(?:possibly|maybe|perhaps|else|otherwise"
    r"|if[ \t]+not)[ \t,]+)?(?:option[ \t]+)?"
    r"[(\[]?[A-J]\b(?![ \t]{1,3}[a-z])|(?:probably|possibly|maybe|perhaps|likely)\b"
    # another option added: "B (also C)", "B. Also C." (the sentence ends at its letter:
    # "Also D) Madrid is in Spain", "Also I'd note" discuss, not add)
    r"|(?<=\()[ \t]{0,2}also[ \t]+(?-i:[A-J])[ \t]{0,2}\)"
    r"|[.;,]?[ \t]{0,2}(?:and[ \t]+)?also[ \t]+(?:option[ \t]+)?(?-i:[A-J])(?=[ \t]*[.!]?[ \t]*(?:\n|$))"
    r"|[，,][ \t]{0,2}也(?:可能|许)(?:是)?[ \t]{0,2}(?-i:[A-J])"  # "B，也可能是C": could also be C
    r"|(?:if|unless)\b"
    # marked wrong or unsure: "B is wrong", "B (eliminated)", "B (guess)", "B ✗", "B (50%)"
    r"|(?:is|was|seems)[ \t]+(?:wrong|incorrect|false|not[ \t]+(?:right|correct))\b"
    r"|(?:wrong|incorrect|false|eliminated|ruled[ \t]+out|(?:random[ \t]+)?guess(?:ed)?|unsure"
    r"|uncertain|tentative|no)\b(?![ \t]{1,3}[a-z])|[\u2717\u2718\u274c]|-[ \t]*(?:eliminated|wrong)\b"
    r"|(?<=\()\d{1,3}[ \t]?%"
    # another option set beside it by an operator or a part: "B >> C", "B \\ C", "B for (a)"
    r"|(?:>>?|~>|->|\u2192|=>|\u2228|\u222a|\\)[ \t]{0,2}[(\[]?[A-J]\b"
    r"|for[ \t]+(?:part[ \t]+)?\(?[a-z0-9]\))",
    re.IGNORECASE,
)


def _other_stated(text: str, offset: int, final: re.Match[str]) -> bool:
    """Whether the paragraph of the final stated answer (found at ``offset`` +
    ``final.start()`` of ``text``; after the last ``</think>`` before it) states another
    letter before it, or is longer than is read and may state one where it is not."""
    at = offset + final.start()
    start = section_start(text, at)
    start = max(start, text.rfind("</think>", start, at))  # thinking is no answer
    read_from = max(start, at - SECTION_CHARS)
    if unread_answer(text, start, read_from):
        return True
    return _another_letter_stated(text, read_from, at, _letter(final))


def _another_letter_stated(text: str, start: int, end: int, letter: str) -> bool:
    """Whether ``text[start:end]`` states a letter other than ``letter``."""
    return any(
        _letter(other) != letter
        for pattern in _STATED_FORMS
        for other in pattern.finditer(text, start, end)
    )


# After the stated letter, in its paragraph: another letter offered in words ("but C is
# also possible", "it could be C", a sentence opening "Or C", "perhaps C"). "A" and "I"
# before a lower-case word are an article and a pronoun ("Or I might be wrong").
_OFFERED_LETTER = r"[\(\[]?(?P<{name}>[B-HJ]|[AI](?![ \t]{{1,3}}[a-z]))[\)\]]?(?![A-Za-z0-9])"
# after "option"/"choice", "A" and "I" are letters whatever follows ("Option A would also work")
_NAMED_LETTER = r"(?i:option|choice)[ \t]+[\(\[]?(?P<{name}>[A-J])[\)\]]?(?![A-Za-z0-9])"
_OFFERED_AFTER = re.compile(
    OFFER_CUE
    + r"[ \t,:]{1,3}(?:(?i:option|choice)[ \t]+)?(?:\*\*|\\boxed\{)?"  # "or maybe **C**"
    + _OFFERED_LETTER.format(name="offered")
    + r"|(?<![A-Za-z0-9])(?:(?i:option|choice)[ \t]+)?"
    + _OFFERED_LETTER.format(name="other")
    + r"[ \t]+(?i:is|seems|looks|could|might|may)[ \t]+(?:(?i:also|be|equally)[ \t]+){0,2}"
    r"(?i:possible|plausible|likely|correct|right|valid|true|acceptable|work)\b"
    + r"|(?<![A-Za-z0-9])(?:"
    + _NAMED_LETTER.format(name="named")
    + "|"
    + _OFFERED_LETTER.format(name="also")
    + ")"
    + OFFER_PREDICATE  # "D would also work", "D is also a valid answer", "D works too"
)
# in a later paragraph: the answer taken back ("Answer: A\n\nActually, B.")
_CORRECTED = re.compile(
    CORRECTION_CUE
    + CORRECTION_GAP
    + r"(?:(?i:the[ \t]+answer[ \t]+is|option|choice)[ \t]+)?(?:\*\*)?"
    + _OFFERED_LETTER.format(name="offered")
)


def _offered_after(text: str, final: re.Match[str]) -> bool:
    """Whether the paragraph after the final stated letter offers another letter in
    words: "The answer is A but C is also possible" is a hedge, not A."""
    window = rest_of_paragraph(text, final.end())
    offers = [*_OFFERED_AFTER.finditer(window)]
    later = later_paragraphs(text, final.end())  # the next paragraph offers or takes back too
    offers += [*_OFFERED_AFTER.finditer(later), *_CORRECTED.finditer(later)]
    letter = _letter(final)
    if any(_offered_letter(found) != letter for found in offers):
        return True
    chosen = _LATER_CHOICE.finditer(window + "\n" + later)
    if any((found.group("letter") or found.group("named")) != letter for found in chosen):
        return True  # "Answer: B\n\nI choose C.", "(C) is the correct option."
    closing = closing_correction(text, final.end())  # "Actually, on reflection, $D$."
    if closing is not None and _closing_letter(closing) != letter:
        return True
    denied = _DENIED_LATER.finditer(window + "\n" + later)  # "The answer is not (B)."
    if any(found.group("letter") == letter for found in denied):  # (not C: C ruled out)
        return True
    listed = _SET_TO_LETTERS.search(text, final.end(), final.end() + _LIST_WINDOW)
    return listed is not None  # "So $a = D, C, A$.": candidates given after the answer


# An answer denied after it was stated: "The answer is not (B)", "Answer: not B", "答案不是B":
# of the letter stated, the response takes it back
_DENIED_LATER = re.compile(
    "(?:" + DENIAL + r"[ \t*$]{1,4}|" + DENIAL_CJK + r"[ \t]*)[(\[]?(?P<letter>[A-J])(?![A-Za-z])"
)


# A letter chosen again in a sentence of its own after the answer: "I choose C.", "Going
# with C.", "So C it is.", "(C) is the correct option.", "La réponse est C."
_LATER_CHOICE = re.compile(
    r"(?:^|(?<=[.!?\n]))[ \t*]{0,4}(?:"
    r"(?i:I(?:'ll|[ \t]+will)?[ \t]+(?:choose|pick|take|select|go[ \t]+with)|going[ \t]+with"
    r"|my[ \t]+(?:final[ \t]+)?(?:pick|choice|answer)[ \t]*(?:is|:)|so"
    r"|la[ \t]+r[ée]ponse[ \t]+est|die[ \t]+antwort[ \t]+ist|la[ \t]+respuesta[ \t]+es"
    r"|la[ \t]+risposta[ \t]+[èe]|a[ \t]+resposta[ \t]+[ée])"
    r"[ \t]+(?:option[ \t]+)?[(\[]?(?P<letter>[A-J])[)\]]?(?:[ \t]+it[ \t]+is)?"
    r"|[(\[](?P<named>[A-J])[)\]][ \t]+(?i:is[ \t]+(?:the[ \t]+)?(?:correct|right|best)"
    r"(?:[ \t]+(?:option|answer|choice))?))[ \t*]*[.!]?[ \t*]*(?=$|\n)",
)


# A name set to several letters after the answer ("\\boxed{a = D, C, A}", "$a = D, C$")
_SET_TO_LETTERS = re.compile(r"=[ \t]*\(?[A-J]\)?(?:[ \t]*,[ \t]*\(?[A-J]\)?){1,9}(?![A-Za-z])")
_LIST_WINDOW = 600


def _closing_letter(value: str) -> str | None:
    """The option letter a closing correction gives (``$D$``, ``(D)``, ``option D``);
    None when it gives none, which then differs from any answer (fail closed)."""
    found = _CLOSING_LETTER.fullmatch(value.strip(" \t$*.()[]"))
    return found.group("letter") if found else None


_CLOSING_LETTER = re.compile(r"(?:(?i:option|choice|answer)[ \t:]+)?\(?(?P<letter>[A-J])\)?")


def _offered_letter(found: re.Match[str]) -> str:
    groups = found.groupdict()
    return next(groups[name] for name in ("offered", "other", "named", "also") if groups.get(name))


# a bold letter alone on its line: an answer as plainly as "Answer: C" is
_BOLD_LINE = re.compile(
    r"(?m:^)[ \t>-]{0,4}\*\*[ \t]{0,2}[\(\[]?(?P<letter>[A-J])[\)\]]?[.:]?[ \t]{0,2}\*\*[ \t.]{0,3}(?m:$)"
)


def _bold_elsewhere(text: str, final: re.Match[str], at: int = -1) -> bool:
    """Whether a bold letter alone on its line, in the concluding section of the final
    letter (at ``at``, else where ``final`` matched ``text``; bare answers one a paragraph
    count as one section: ``_common.section_start``), is another letter: "Answer: B"
    then a blank line then ``**D**`` offers two."""
    at = final.start() if at < 0 else at
    found = list(_BOLD_LINE.finditer(text, section_start(text, at), at))
    last = last_match(_BOLD_LINE, text)
    if last is not None and last.start() > at and section_start(text, last.start()) <= at:
        found.append(last)
    return any(_letter(other) != _letter(final) for other in found)


def _options_restated(final: re.Match[str]) -> bool:
    """Whether the last marked letter ends the options restated in its paragraph:
    ``(A) 18 (B) 20 (C) 22 (D) 24`` lists every option, it chooses none (before, the D
    was read). That is the letters A, B, C... in order up to the last one, at least
    three, the last followed by its option's text, not a full stop ("(A) is wrong, (B)
    fails, (C) too, so (D)." eliminates, then chooses)."""
    text, at = final.string, final.start()
    start = section_start(text, at)
    labels = [
        found.group("letter")
        for pattern in (_BOLD, _PARENTHESISED)
        for found in pattern.finditer(text, max(start, at - _LIST_CHARS), final.end())
    ]
    letter = _letter(final)
    if letter < "C" or sorted(set(labels)) != [chr(c) for c in range(ord("A"), ord(letter) + 1)]:
        return False
    return _OPTION_TEXT.match(text, final.end()) is not None


def _options_follow(text: str, final: re.Match[str]) -> bool:
    """Whether the stated letter starts the options restated ("Answer: (A) 18 (B) 20
    (C) 22 (D) 24"): two labels or more follow it, the next letters in order, each
    after a short option text with no sentence end ("Answer: (A) 18. (B) is wrong"
    discusses another option after choosing)."""
    pos, expected, seen = final.end(), ord(_letter(final)) + 1, 0
    while seen < 10:
        found = _LABEL.search(text, pos, pos + 80)
        if found is None or ord(found.group("letter")) != expected:
            break
        if _STOP.search(text, pos, found.start()):
            break
        pos, expected, seen = found.end(), expected + 1, seen + 1
    return seen >= 2


def _label_listed_after(text: str, final: re.Match[str], question: str) -> bool:
    """Whether the chosen letter's sentence is a list of options as the prompt writes
    them, and nothing more: "Answer: B) Paris, C) Rome" and "The answer is (B) 12 or (C)
    15." choose two. Each item is a label written as the chosen one is ("C)" after "B)",
    "(C)" after "(B)"), then that option's whole text as the prompt gives it; the items
    are joined by list marks or words and end the sentence, or say they are all right
    ("C) Rome are both possible"). Words anywhere else make it a sentence about the
    options ("(B) Paris, because (A) Berlin and (C) Rome are capitals of other
    countries", "(B) 12; (A) 10 too small"): no list. Only with the prompt's words
    (``question``): without them an option's text cannot be told from a remark."""
    style = _label_style(final)
    if not question or style is None:
        return False
    start = final.end()
    if style == "dot":  # "B. Paris, C. Rome": read past the letter's own full stop
        label_dot = _OWN_LABEL_DOT.match(text, start)
        if label_dot is None:
            return False  # the sentence ends at the letter
        start = label_dot.end()
    line_end = text.find("\n", start)
    end = min(len(text) if line_end < 0 else line_end, start + _LINE_CHARS)
    stop = _LABEL_SENTENCE_STOP.search(text, start, end)
    end = stop.start() if stop is not None else end
    letter, options = _letter(final), plain_words(question)
    item = _ITEM.match(text, start, end)  # the chosen option's own text first
    if item is None or not _is_option(plain_words(f"{letter} {item.group(1)}"), options):
        return False
    listed, at = False, item.end()
    while (label := _LISTED_LABEL.match(text, at, end)) is not None:
        other = _letter(label)
        item = _ITEM.match(text, label.end(), end)
        if _label_style(label) != style or item is None:
            return False
        if not _is_option(plain_words(f"{other} {item.group(1)}"), options):
            return False
        listed, at = listed or other != letter, item.end()
    return listed and _LIST_END.fullmatch(text, at, end) is not None


def _is_option(key: str, options: str) -> bool:
    """Whether ``key`` ("c rome") is a whole option of the prompt's words: its label and
    text, then the next label or the end ("a. darwin and a. r. wallace" holds no "a r")."""
    at = options.find(key)
    while at >= 0:
        after = options[at + len(key) : at + len(key) + 3]
        if (at == 0 or options[at - 1] == " ") and (after == "" or _NEXT_LABEL.match(after)):
            return True
        at = options.find(key, at + 1)
    return False


_NEXT_LABEL = re.compile(r" [a-j](?: |$)")


def _label_style(found: re.Match[str]) -> str | None:
    """How the letter of ``found`` is written as a label: "paren" ``(B)``, "close" ``B)``,
    "dot" ``B.``, "bold" ``**B**``; None for a bare letter (``Answer: B``)."""
    text, name = found.string, found.lastgroup or "letter"
    at, end = found.start(name), found.end(name)
    before, after = text[at - 1 : at], text[end : end + 1]
    if after in (")", "]"):
        return "paren" if before in ("(", "[") else "close"
    if text[at - 2 : at] == "**" and text[end : end + 2] == "**":
        return "bold"
    return "dot" if after == "." else None


# a list word or mark, then an option's label: ", C)", " or (C)", "; **C**", ", C. Rome"
_LISTED_LABEL = re.compile(
    r"[ \t]*(?:[,;/&]|(?<![A-Za-z])(?:and/or|and|or|plus)(?![A-Za-z]))[ \t]{0,3}"
    r"(?:(?:and|or|also)[ \t]{1,3})?(?:\*\*)?"
    r"(?:\((?P<letter>[A-J])\)|\[(?P<letter_b>[A-J])\]|(?P<letter_c>[A-J])[\)\]]"
    r"|(?<=\*\*)(?P<letter_d>[A-J])(?=\*\*)|(?P<letter_e>[A-J])\.(?=[ \t]+\w))"
)
# an option's text after its label, up to the next item, the sentence's end, or "are"
# ("C) Rome are both possible")
_ITEM = re.compile(
    r"(?:\*\*)?[ \t]{0,3}([^\n]{1,80}?)[ \t]*(?=[,;]|[ \t](?i:and|or)\b|[.!?](?:\s|$)|$"
    r"|[ \t](?i:are)\b)"
)
# what may end a list of options: nothing, or words calling them all right
_LIST_END = re.compile(
    r"[ \t*]*(?:(?i:are|were)[ \t]+(?i:both|all)(?:[ \t]+(?i:possible|correct|right|valid"
    r"|acceptable|true|plausible))?[ \t*]*)?"
)
# a sentence's end; not the full stop of a label ("B. Paris, C. Rome")
_LABEL_SENTENCE_STOP = re.compile(r"(?<!\b[A-J])[.!?](?:\s|$)")
_LINE_CHARS = 200  # how far along its line a chosen letter's sentence is read
# the full stop of the chosen letter's own label, its option's text after it
_OWN_LABEL_DOT = re.compile(r"\.[ \t]+(?![\(\[]?[A-J][\)\].])(?=\w)")


def _offered_as_alternative(text: str, final: re.Match[str]) -> bool:
    """Whether the stated answer is introduced as an alternative to another letter stated
    before it ("Answer: B ... Alternatively:\nAnswer: C"): one of several offered."""
    before = text[max(0, final.start() - 80) : final.start()]
    if _ALTERNATIVE_BEFORE.search(before) is None:
        return False
    # ("Alternatively, by elimination the answer is B." confirms B: no other letter before)
    start = max(0, final.start() - _LIST_CHARS)
    return _another_letter_stated(text, start, final.start(), _letter(final))


_ALTERNATIVE_BEFORE = re.compile(
    r"(?i)\b(?:alternatively|another[ \t]+(?:possible[ \t]+)?(?:answer|option|choice)"
    r"|other[ \t]+possible[ \t]+answer)\b[^.!?\n]{0,40}[:,]?[ \t*]*\n?[ \t*>#-]*"
    r"(?:(?:the[ \t]+)?(?:final[ \t]+)?)?\Z"
    r"|\b(?:another|other|alternative)[ \t]+(?:possible[ \t]+)?\Z"  # "Another possible answer is C"
    r"|\b(?:backup|fallback|alternate)[ \t]+\Z"  # "Backup answer: C"
)


_LABEL = re.compile(r"(?:\(|\*\*)(?P<letter>[A-J])(?:\)|\*\*)")
_STOP = re.compile(r"[.!?](?:\s|$)|\n[ \t]*\n")
_LIST_CHARS = 2000  # how far back a restated list of options is looked for
_OPTION_TEXT = re.compile(r"[ \t]{0,3}:?[ \t]{0,3}[\w$\\-]")  # "(D) 24", "**D**: 24", "(D) Paris"


def _same_letter(letter: str) -> Callable[[str], bool | None]:
    """Whether a value named in prose is ``letter`` ("(B)", "B"); a number or a formula
    is no letter (False)."""
    return lambda value: value.strip(" ()").upper() == letter


def _letter(found: re.Match[str]) -> str:
    """The letter ``found`` reads (in whichever of its ``letter`` groups matched), upper
    case ("Answer: b" chooses B)."""
    return (found.group(found.lastgroup or "letter") or "").upper()


def _last_of(text: str, patterns: tuple[re.Pattern[str], ...]) -> re.Match[str] | None:
    found = [m for m in (last_match(p, text) for p in patterns) if m is not None]
    return max(found, key=lambda m: m.end(), default=None)


def _gold_letter(text: str) -> str:
    match = _GOLD.match(text)
    if match is None:
        shown = text if len(text) <= 60 else text[:60] + "…"
        why = (
            " (an option's index: datasets number options from 0 (cais/mmlu) or from 1"
            " (ARC's keys), so give the letter, A for the first option)"
            if text.isdigit()
            else ""
        )
        raise InvalidSampleError(f"choice: ground_truth {shown!r} is not a letter A-J{why}")
    return match.group("letter").upper()
