"""Whether a response commits to the option letter it names, or only discusses it.

An option letter turns up all over a multiple-choice response: options are checked one
by one ("Let us check (B): it fails."), ruled out ("We can rule out (B)."), tabled,
quoted, weighed under a condition ("If friction were ignored, the answer would be (B)."),
attributed to somebody else ("Students often choose B."). A grader that credits the last
letter it sees teaches a policy to name the gold letter while it discusses it. A list of
the ways to discuss a letter never ends; the ways to commit to one are few. So the rule
is an allow-list, read in the letter's own sentence:

- *after the letter* (:func:`closes`): nothing, an affirmation that ends the clause ("is
  correct", "is the best option", "fits"), a reason ("because ..."), another option
  ruled out (", not C"), or the option's own text (words of the prompt, where the row
  has one). Anything else judges or qualifies the letter ("(B) fails", "Option B is the
  best distractor", "B with 20% probability", "Option B is correct only if ..."); a
  sentence that ends in "?" asks.
- *before a weak reading* (a letter in bold or parentheses, a choosing verb, a lone
  last line; :func:`led_plainly`): only the words that lead to a conclusion ("So",
  "Therefore, the correct choice is", "I'll go with", "leaving") in its clause.
- *before a stated answer* ("the answer is B", a box, an answer tag; stronger evidence:
  :func:`undercut`): no negation, doubt or someone else's claim in its clause ("I
  don't think the answer is B", "Some claim the answer is B"), and no counterfactual
  frame in its sentence ("If friction were ignored, the answer would be B").

Everything is read in one sentence (at most :data:`SENTENCE_CHARS` characters each side),
so the cost is bounded whatever the response's length.
"""

from __future__ import annotations

import functools
import re

from rewardkit.verifiers._common import says_nothing_more
from rewardkit.verifiers.base import words_key

__all__ = ["GLUED", "closes", "discussed", "led_plainly", "plain_words", "rejected", "undercut"]

SENTENCE_CHARS = 240
"""How far the letter's sentence is read on each side."""

# A sentence ends at ., ! or ? before a blank or the end (not "9.8"), or at a line break
_SENTENCE_END = re.compile(r"(?<![A-Z])[.!?](?=[ \t\n*_)\]\"']|$)|[。！？\n]")
_SENTENCE_END_BEFORE = re.compile(r"[.!?](?=[ \t\n*_)\]\"'])|[。！？\n]")
# A clause ends at , ; or a dash too (a colon leads into what follows it: "My final choice: B")
_CLAUSE_END = re.compile(r"[,;，；—–]|[ \t]-[ \t]|\.\.\.|…|\b(?i:but)\b")

# ---------------------------------------------------------------- after the letter

_MARKUP = re.compile(r"\\(?:text(?:bf|rm|sf|tt)?|mathrm|mathbf|textsf|mathsf)\{|[*_$}{)\]\\ \t]")
_AFFIRMATION = re.compile(
    r"(?:(?:is|'s|’s|are|was|would[ \t]+be|must[ \t]+be|should[ \t]+be)[ \t]+)?"
    r"(?:(?:indeed|clearly|definitely|certainly|therefore|thus|then|also|surely|obviously"
    r"|most[ \t]+likely|probably)[ \t]+)?"
    r"(?:(?:the|my|our)[ \t]+)?"
    r"(?:(?:(?:most|only|single|one)[ \t]+)?(?:correct|right|best|true|valid|accurate|appropriate"
    r"|reasonable|plausible|sensible|consistent|remaining|final|answer)"
    r"(?:[ \t]+(?:answer|option|choice|one|pick|selection|statement))?"
    r"|(?:answer|option|choice|one))"
    r"|it[ \t]+is|fits(?:[ \t]+best)?|works|holds|matches|satisfies[ \t]+(?:all|every|both|each)"
    r"[ \t]+(?:the[ \t]+)?\w+",
    re.IGNORECASE,
)
_REASON = re.compile(r"[,:;—–-]?[ \t]*(?:because|since|as|given|due[ \t]+to)\b", re.IGNORECASE)
_OTHER_RULED_OUT = re.compile(
    r",?[ \t]*(?:and[ \t]+)?(?:not|rather[ \t]+than|instead[ \t]+of|over)[ \t]+"
    r"(?:(?:option|choice)[ \t]+)?[(\[*]{0,3}[A-J][)\]*]{0,3}(?![A-Za-z0-9])",
    re.IGNORECASE,
)
# What says something of the letter: a verb of its own, or a verdict on it
_PREDICATE = re.compile(
    r"(?:is|isn't|isn’t|was|wasn't|are|were|be|been|being|would|wouldn't|could|couldn't|might"
    r"|may|can|cannot|can't|will|won't|shall|should|shouldn't|must|does|doesn't|did|didn't|do"
    r"|don't|has|hasn't|have|had|seems?|looks?|appears?|fails?|gives?|yields?|leads?|makes?"
    r"|requires?|needs?|ignores?|assumes?|overlooks?|contradicts?|violates?|implies|means"
    r"|comes?|goes|gets?|remains?|stays?|never|not|no(?![ \t]+doubt)|nope|false|true|wrong|incorrect|correct"
    r"|right|eliminated|excluded|rejected|discarded|ruled|invalid|impossible|unlikely"
    r"|likely|possible|plausible|tempting|distractor|trap|placeholder|unverified|guess|only"
    r"|if|unless|with|but|though|although|except|yes|ok|okay|x|✗|✘|❌|✓|✔|\?)"
    r"(?![A-Za-z])",
    re.IGNORECASE,
)
_CJK_JUDGEMENT = re.compile(r"[错誤误違违不非吗嗎否没別别排除假如果若無无]")
_PERCENT = re.compile(r"\d[ \t]?%")


def _after(text: str, end: int) -> tuple[str, str]:
    """The rest of the letter's sentence after ``end``, and the character that ends it."""
    window = text[end : end + SENTENCE_CHARS]
    stop = _SENTENCE_END.search(window)
    if stop is None:
        return window, ""
    return window[: stop.start()], stop.group()


def closes(text: str, end: int, question: str = "", strict: bool = True) -> bool:
    """Whether what follows the letter ending at ``end``, in its sentence, leaves it
    chosen: nothing, an affirmation ending the clause, a reason, another option ruled
    out, or the option's own text (its words found in ``question``, the prompt's
    words). ``strict`` (a weak reading): any other words judge it; else (a stated
    answer) only a predicate or a verdict does ("Answer: B (the largest)" stays B)."""
    rest, stop = _after(text, end)
    if stop in ("?", "？"):
        return False
    rest = _MARKUP.sub(" ", rest).strip(" \t.:!")
    while rest:
        if _CJK_JUDGEMENT.search(rest):
            return False
        if _REASON.match(rest):
            return not _PERCENT.search(rest)
        ruled_out = _OTHER_RULED_OUT.match(rest)
        if ruled_out is not None:
            rest = rest[ruled_out.end() :].strip(" \t.,:!")
            continue
        affirmed = _AFFIRMATION.match(rest)
        if affirmed is not None and affirmed.end() > 0:
            tail = rest[affirmed.end() :]
            if tail[:1].isalnum():  # "is the best distractor": the word goes on
                return False
            rest = tail.strip(" \t.,:!")
            continue
        return _option_text(rest, question, strict)
    return True


def _option_text(rest: str, question: str, strict: bool) -> bool:
    """Whether ``rest`` (after the letter) restates the option rather than judging it:
    its words are the prompt's; else, for a weak reading, no word of a predicate or a
    verdict in a few words (where the row has no prompt), and for a stated answer, no
    such word first ("Answer: B (the largest)", "The answer is D, "out of pocket."")."""
    key = plain_words(rest)
    if question and key and key in plain_words(question):
        return True
    if not strict:  # "B with 20% probability", "B (placeholder)"; not "(B) 42%"
        return _PREDICATE.match(rest.lstrip(" \t,:(\"'“")) is None
    return (
        not question
        and len(rest.split()) <= 8
        and _PREDICATE.search(rest) is None
        and _PERCENT.search(rest) is None
    )


@functools.lru_cache(maxsize=64)
def plain_words(text: str) -> str:
    """``text``'s words, lower case, without punctuation or math delimiters: an option's
    text as the prompt and a response write it ("(G) personal reports, observed ...")."""
    return " ".join(_QUOTES.sub(" ", words_key(text)).split())


_QUOTES = re.compile(r"[\"'“”‘’()\[\]:.,;—–-]")


# ---------------------------------------------------------------- before the letter

# The words that may lead into a letter that is chosen without an answer word
_LEAD_WORDS = frozenset(
    """so thus therefore hence then consequently finally overall clearly obviously
    accordingly ultimately in conclusion summary short sum all the a an my our final
    correct right best only remaining true valid answer choice option one is it's it’s it
    must be should has to i i'm i’m i'll i’ll i'd i’d we we're we’ll we'll let's let’s me
    us choose chose pick select go going with leaves leaving left that which this gives
    confident sure certain am are here definitely certainly indeed would will my
    selection response verdict result solution most likely probably best makes make
    """.split()
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_CJK_LEADS = frozenset(
    "所以因此故而综上述總综合最终終后後我们們应該该答案是为為正确確选選项項则即就：:，, "
)


def led_plainly(text: str, start: int, question: str = "") -> bool:
    """Whether the words before the letter at ``start``, in its clause, only lead to a
    conclusion ("So", "Thus the correct choice here is", "I'll go with", "leaving"), and
    its sentence frames no condition: the letter is chosen, not discussed ("We can rule
    out (B)", "Let us check (B)", "Students often choose B", "If you select B")."""
    before = _sentence_before(text, start)
    if _counterfactual(before):
        return False
    clause = _clause(before)
    if any(_CJK.match(char) and char not in _CJK_LEADS for char in clause):
        return False  # "很多同学会选B" (many students would choose B), "不能选B"
    words = [word.lower() for word in _WORD.findall(_COMMAND.sub(" ", clause))]
    words = [word for word in words if not _CJK.match(word)]
    if all(word in _LEAD_WORDS for word in words):
        return True
    # "The most likely diagnosis is an arteriovenous fistula (D).": the letter named as
    # what something is, with nothing that negates, doubts, reports or weighs it
    # (words of the question are restated: "the principle that is not used in MI is (A)"
    # where the prompt asks which principle is not used)
    asked_words = set(plain_words(question).split()) if question else set()
    own = " ".join(word for word in words if word not in asked_words)
    return (
        any(word in _COPULAS for word in words)
        and _UNDERCUTTING.search(own) is None
        and _CONSIDERING.search(own) is None
    )


_COMMAND = re.compile(r"\\[A-Za-z]+")  # "\text{The answer is } (J)": the words, not the TeX
_COPULAS = frozenset("is are was were be 's ’s".split())
# Words of an option weighed, not chosen: "The remaining option to examine is (B)"
_CONSIDERING = re.compile(
    r"\b(?:check\w*|consider\w*|compar\w*|examin\w*|evaluat\w*|test\w*|try|trying|look\w*"
    r"|analy[sz]\w*|review\w*|verif\w*|revisit\w*|next|avoid\w*|cross\w*|remov\w*|tempt\w*"
    r"|distract\w*|trap|closest|nearest|reject\w*|eliminat\w*|exclud\w*|discard\w*"
    r"|rul\w*[ \t]+out)\b",
    re.IGNORECASE,
)


# In a stated answer's clause: a negation, a doubt or somebody else's claim
_UNDERCUTTING = re.compile(
    r"\b(?:not|never|no|nobody|none|neither|nor|cannot|hardly|doubt\w*|unlikely|untrue|false"
    r"|wrong|mistaken?|claim\w*|says?|said|argu\w*|suggests?|expect\w*"
    # a modal that weighs a view, not one of the question's ("... that could appear in
    # the list is 24" restates the question)
    r"|(?:might|may|could)[ \t]+(?:well[ \t]+)?(?:be|think|say|argue|claim|expect|seem|guess"
    r"|assume|believe|suggest|conclude)"
    r"|perhaps|maybe|possibly|pretend\w*|quot\w*|format|template|e\.g|example)\b"
    r"|n['’]t\b|\bn['’]est[ \t]+pas\b|\bnicht\b|\bkeine?\b|\bno[ \t]+(?:es|puede|será)\b"
    r"|不是|不会|不會|不能|不可能|不认为|不認為|并非|並非|没有|沒有|[别別]",
    re.IGNORECASE,
)
# A counterfactual frame in the sentence: "If friction were ignored, the answer would
# be B", "Assuming no friction, the answer is B", "Had it been zero, I'd choose B"
_CONDITION = re.compile(
    r"\b(?:assum\w*|suppos\w*|hypothetically|imagine)\b|^[ \t*>-]*(?:had|were)\b|假如|假设",
    re.IGNORECASE,
)
# a condition in the letter's own clause, with an unreal verb: "if friction were zero I'd
# choose B" (a sentence opening "If they get a surprising show, it would be: C" restates
# the question's premise: its clause ends before the letter's)
_IF_UNREAL = re.compile(
    r"\b(?:if|unless|whether)\b.*\b(?:would|could|might)\b|\bif\b.*['’]d\b|如果", re.IGNORECASE
)


def undercut(text: str, start: int) -> bool:
    """Whether a stated answer's letter at ``start`` sits in a clause that negates,
    doubts or reports it, or a sentence framed as counterfactual: the response does
    not assert it ("I don't think the answer is B", "One might think the answer is
    B", "The answer is B only if ..." is read after the letter, by :func:`closes`)."""
    before = _sentence_before(text, start)
    return _counterfactual(before) or _UNDERCUTTING.search(_clause(before)) is not None


# Weighing a value in a conclusion: "We can rule out 220.", "Let us check 220: ...",
# "Consider 220.", "Some claim 220", "Students often choose 220". The verbs weigh only with
# the speaker as subject or as a command: a word problem's own words ("a single-elimination
# tournament", "the Doubtfire family", "test scores", "to the nearest whole number") and a
# derivation's ("removing", "verify") weigh nothing. A single value hedged ("possibly
# 20", "Maybe ... is 20") is still the one value given: math-verify reads it.
_REJECT_VERB = r"(?:rule[ \t]+out|eliminate|exclude|discard|reject)"
_WEIGH_VERB = (
    r"(?:check|consider|compare|examine|evaluate|test|try|revisit|avoid|" + _REJECT_VERB + ")"
)


def _by_the_speaker(verb: str) -> str:
    """``verb`` with the speaker as its subject ("we can rule out"), or as a command."""
    return (
        r"\b(?:let(?:'s|’s|[ \t]+us|[ \t]+me)|we|i|you)[ \t]+(?:(?:can|could|should|must|will"
        r"|shall|might|may|now|then|first|next|also|cannot|can't|need[ \t]+to)[ \t]+){0,2}"
        + verb
        + r"\b|^[ \t*>-]*(?:(?:next|now|first|then|finally),?[ \t]+)?"
        + verb
        + r"\b"
    )


# Somebody else's view, a doubt, a distractor: a value named so is not the speaker's answer
_NOT_OWNED = (
    r"\b(?:tempt\w*|distractor|doubt(?:s|ed|ful)?)\b"
    r"|\b(?:some|many|one|they|people|others|students)[ \t]+(?:(?:might|may|would|often"
    r"|usually|commonly)[ \t]+)?(?:claim|say|argue|think|believe|choose|pick|answer|guess)\b"
    r"|\b(?:often|usually|commonly|typically|frequently|tend[s]?[ \t]+to)[ \t]+(?:choose|pick"
    r"|select|answer|say|write|get|guess)\b"
    r"|n['’]t[ \t]+(?:think|believe)|\bnot[ \t]+sure\b"
)
# A view weighed: "might be", "could think" (after an answer, "it could be 18.0" restates it)
_MAYBE = (
    r"\b(?:might|may|could)[ \t]+(?:well[ \t]+)?(?:be|think|say|argue|claim|expect|seem|guess"
    r"|assume|believe|suggest|conclude)\b"
)
_WEIGHING = re.compile(
    _by_the_speaker(_WEIGH_VERB) + "|" + _NOT_OWNED + "|" + _MAYBE, re.IGNORECASE
)
# ... of which these reject it: after an answer, no check of it ("Let's check: 2 * 9 = 18.")
_REJECTING = re.compile(_by_the_speaker(_REJECT_VERB) + "|" + _NOT_OWNED, re.IGNORECASE)
_PRONOUN = r"(?:[:,—–-]?[ \t]*(?:it|this|that|which)[ \t]+)?"  # "220: it fails", "220, which ..."
_JUDGING = (
    r"(?:(?:is|are|was|seems|looks)[ \t]+(?:(?:the|a|an)[ \t]+)?(?:(?:classic|common|typical"
    r"|usual)[ \t]+)?(?:distractor|trap|red[ \t]+herring)|fails|overlooks|ignores|contradicts"
    r"|violates|doesn['’]t[ \t]+work|does[ \t]+not[ \t]+work"
    # ruled out in the passive: "18 can be ruled out", "18 has been eliminated", "18 is excluded"
    r"|(?:(?:can|could|should|must|will|may)[ \t]+be|(?:has|have)[ \t]+been|is|are|was|were|gets?)"
    r"[ \t]+(?:ruled[ \t]+out|eliminated|excluded|rejected|discarded|crossed[ \t]+out))\b"
)
_CALLING_WRONG = (
    r"(?:is|are|was|seems|looks)[ \t]+(?:wrong|incorrect|out\b|false|a[ \t]+mistake"
    r"|not[ \t]+(?:right|correct|it))"
)
_JUDGED = re.compile(_PRONOUN + "(?:" + _JUDGING + "|" + _CALLING_WRONG + ")", re.IGNORECASE)
# (after an answer, a value called wrong is _common.called_wrong's to read: "7 is wrong,
# lol." and "7 is wrong. Never mind." keep the answer, and it has their words)
_JUDGED_AFTER_AN_ANSWER = re.compile(_PRONOUN + _JUDGING, re.IGNORECASE)
# In the sentence of a value named after an answer, words that keep it: a negation ("There
# is no doubt that 18 is right.", "We cannot rule out 18.", "18 fails none of the
# conditions") or an affirmation ("Students often choose 18, and they are right.", "I
# initially doubted 18, but the check confirms it.")
_KEPT = re.compile(
    r"(?i)\b(?:no|not|never|cannot|none|nothing|nobody|without|right|correct(?:ly)?|confirm\w*"
    r"|indeed|true|valid|works|holds|stands)\b|n['’]t\b"
)
# words that limit or take back what the sentence says of the value: "18 fails if we drop
# the sign", "We can rule out 18 only for part (b)", "18 is a trap, lol" (not "but":
# "Students often choose 18, but that misreads the question" says more against it)
_LIMITED = re.compile(r"\b(?:if|unless|only|when|except|lol|jk|kidding)\b", re.IGNORECASE)


def discussed(text: str, start: int, end: int) -> bool:
    """Whether the value at ``text[start:end]``, the last a fallback reading would take,
    is weighed rather than given: its sentence asks or is counterfactual, its clause
    weighs, rejects, doubts or reports it ("We can rule out 220.", "Students often choose
    220"), or the words right after it judge it ("220 fails the second condition")."""
    before, (rest, stop) = _sentence_before(text, start), _after(text, end)
    if _counterfactual(before) or stop in ("?", "？"):
        return True
    return _named_so(before, rest, _WEIGHING, _JUDGED)


def rejected(text: str, start: int, end: int) -> bool:
    """Whether the value at ``text[start:end]``, named after an answer in the text's last
    sentence, is taken back: as :func:`discussed`, but not a check or a question ("Let's
    check: 2 * 9 = 18.", "Is 18 right? Yes."), which an answer is often followed by:
    ruled out, doubted, reported, judged ("We can rule out 18.", "18 is the classic
    distractor here."). Any words after its sentence may take that back ("Never mind.")."""
    stop = _SENTENCE_END.search(text, end, end + SENTENCE_CHARS)
    if stop is not None and not says_nothing_more(text[stop.end() :]):
        return False  # (a sign-off says nothing: "We can rule out 18. Hope this helps!")
    before, rest = _sentence_before(text, start), _after(text, end)[0]
    if _LIMITED.search(rest) or _KEPT.search(before) or _KEPT.search(rest):
        return False
    clause = _clause(before)  # (a frame before ";" is not its: "..., so 18")
    if _CONDITION.search(clause) or _IF_UNREAL.search(clause):
        return True
    return _named_so(before, rest, _REJECTING, _JUDGED_AFTER_AN_ANSWER)


def _named_so(
    before: str, rest: str, before_it: re.Pattern[str], after_it: re.Pattern[str]
) -> bool:
    """Whether a value's clause (ending ``before`` it) holds ``before_it``'s words, or the
    rest of its sentence (``rest``, past the value's glued LaTeX) opens with ``after_it``'s."""
    if before_it.search(_clause(before)) is not None:
        return True
    glued = GLUED.match(rest)
    rest = rest[glued.end() :] if glued else rest
    return after_it.match(rest.lstrip(" \t*$)")) is not None


GLUED = re.compile(r"(?:[ \t]?\\(?:text|textrm|mathrm|mbox)\{[^{}\n]{0,40}\}|[^\s.,;:!?])*")
"""What is left of a value's LaTeX after the number a reader took from it, written
outside math mode: ``}`` of ``\\frac{2}{3}``, ``^\\circ`` of ``105^\\circ``, ``s`` of
``2s``, ``\\text{ miles}`` of ``180\\text{ miles}``, ``\\%`` of ``20\\%``."""


def _counterfactual(before: str) -> bool:
    """Whether the sentence before the letter frames it as counterfactual: "Assuming no
    friction, the answer is B", "Had it been zero, ...", "if it were zero I'd choose B"."""
    return _CONDITION.search(before) is not None or _IF_UNREAL.search(_clause(before)) is not None


def _sentence_before(text: str, start: int) -> str:
    window = text[max(0, start - SENTENCE_CHARS) : start]
    stops = list(_SENTENCE_END_BEFORE.finditer(window))
    return window[stops[-1].end() :] if stops else window


def _clause(before: str) -> str:
    stops = list(_CLAUSE_END.finditer(before))
    return before[stops[-1].end() :] if stops else before
