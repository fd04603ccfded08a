"""Helpers shared by the rule verifiers: bounded search, ground-truth coercion, verdicts.

Everything here runs in the scoring loop's own process, so every function is linear
in its input and uses only regexes without nested quantifiers.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers.base import Verdict

MAX_ANSWER_CHARS = 1000
"""Answers longer than this are never parsed as math, only compared as strings."""

SEARCH_TAIL_CHARS = 1 << 18
"""Answers are looked for in the last 256K characters only: text after an answer that
long is junk, and the cap keeps the worst case (no match at all) to milliseconds."""

PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
"""A blank line: where a paragraph (a step, or the concluding section) ends."""

_CORRECTION = (
    r"(?:(?i:actually|wait|no(?=[ \t]*[,:;!.\u2014-])|sorry|oops|correction|i[ \t]+mean"
    r"|i[ \t]+meant|make[ \t]+that|scratch[ \t]+that|on[ \t]+second[ \t]+thought"
    r"|(?:up)?on[ \t]+(?:further[ \t]+|second[ \t]+)?reflection|hmm+|hold[ \t]+on"
    r"|let[ \t]+me[ \t]+(?:re-?check|reconsider|correct[ \t]+(?:that|myself))"
    # more English: an edit note, an apology, a retraction of what came before
    r"|never[ \t]*mind|(?:edit|update|erratum|typo)(?=[ \t]*[:,.)])|my[ \t]+bad|whoops|err(?=[ \t]*[,.])"
    r"|(?:strike|disregard|ignore)[ \t]+(?:that|this|the[ \t]+above)|i[ \t]+was[ \t]+wrong"
    r"|(?:that|this)[ \t]+was[ \t]+(?:a[ \t]+)?(?:mistake|wrong|an[ \t]+error)"
    r"|re-?checking(?:[ \t]+(?:gives|shows|yields))?"
    # the same in the languages models answer in: "wait", "actually", "no", "correction"
    r"|attendez|attends|en[ \t]+fait|non(?=[ \t]*[,:;!.])|oups|espera|en[ \t]+realidad"
    r"|perd[oó]n|warte|eigentlich|nein(?=[ \t]*[,:;!.])|korrektur|na[ \t]+verdade|aspetta"
    r"|in[ \t]+realt[àa]|подожди(?:те)?|на[ \t]+самом[ \t]+деле|нет(?=[ \t]*[,:;!.])"
    r"|исправление)"
    r"|等等|等一下|其实是?|其實是?|不对|不對|更正|应该是|應該是|而是|待って|いいえ|実は|訂正|잠깐|사실은?)"
)
_CORRECTION_FILL = (
    r"(?i:it(?:'s|[ \t]+is|[ \t]+should[ \t]+be)|should[ \t]+be|that[ \t]+is|the[ \t]+"
    r"(?:final[ \t]+|correct[ \t]+|right[ \t]+|real[ \t]+|actual[ \t]+)?answer[ \t]+(?:is|should[ \t]+be)"
    r"|i[ \t]+get|we[ \t]+get|i[ \t]+(?:think|believe|guess|suppose)|it[ \t]+must[ \t]+be"
    r"|it[ \t]+(?:'s|is)[ \t]+(?:actually|really)|should[ \t]+read|c'est|es[ \t]+ist|es)"
)
CORRECTION_CUE = rf"\b{_CORRECTION}(?:[ \t]*[,:;!.\u2014\uff0c\u3001-]?[ \t]*\b(?:{_CORRECTION}|{_CORRECTION_FILL})){{0,3}}"
"""Words that take a final answer back and give another: "Wait, no: 20", "Actually,
it's 20", "Sorry, I mean 20", "No, 20" ("no" only before a stop: "no 20-year-old" is
no correction). Also read past the answer's paragraph (:func:`later_paragraphs`)."""
CORRECTION_GAP = (
    r"(?:(?:[ \t,:;\u2013\u2014\uff0c\uff1a\uff1b\u3001]|-(?![\d.])){1,4}"
    r"|(?<=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]))"
)  # a dash, not a minus sign; nothing after a CJK word ("其实是19")
"""What may stand between a :data:`CORRECTION_CUE` and the value it gives: spaces and
punctuation ("Wait, no: 20", "Hmm, no \u2014 20")."""


_OR_FOREIGN = (
    r"(?:(?i:vs\.?|versus|oder|ou|eller|lub|albo|nebo|alebo|vagy|veya|atau|hoặc"
    r"|или|або|ή|أو|או|या)(?![^\W\d_])|또는|혹은|または|もしくは|或者?|[还還]是)"
)
"""Words that offer one of two values and are no English word: "vs", "versus", and "or"
in the languages models answer in ("oder", "ou", "или", "或", "または", "أو", ...). With
"or" they open a clause that offers another value (:data:`OFFER_CUE`)."""

ALTERNATIVE_WORD = r"(?:(?i:or|o|u|sau|tai|hay)(?![^\W\d_])|" + _OR_FOREIGN + ")"
"""A word before a value that offers it as an alternative to another: "or 20", "vs 20",
"oder 20", "或 20"; the short ones ("o", "u") read only between two values."""

OR_WORD = r"(?:(?i:of)(?![^\W\d_])|" + ALTERNATIVE_WORD + ")"
"""A word between two values that offers them as alternatives: "18 or 20", "18 vs 20",
"18 oder 20", "18 或 20", and the short ones read only between two values ("18 o 20",
"18 of 20": Dutch "or"; an English "18 of 20" is no bare 18 either, it may mean 18/20).
A number, this word, then another number is never the first number alone."""

# "answer" in Chinese, as an answer line's marker ("答案：18", "答案是 B"): not the wrong one
# ("错误答案是 18", "不正确的答案是 B")
ANSWER_ZH = r"(?<!错误)(?<!错误的)(?<!不正确的)答案"

# "answer" in the languages models answer in, as a label: after a final answer it states
# another ("Answer: 18. Antwort: 20.", "Answer: 18\n答案：20"). The first letters first:
# a position that starts none is passed over fast
_ANSWER_ABROAD = (
    r"(?=[aAoOrRsSvVcCjJоОвВαΑתاउ答解정đĐ])(?:\b(?i:antwort|réponse|respuesta|risposta|resposta"
    r"|antwoord|svar|vastaus|odpowiedź|odpověď|válasz|răspuns|cevap|jawaban|ответ|відповідь"
    r"|απάντηση|תשובה|الإجابة|الجواب|उत्तर)\b|答案|答え|解答|정답|(?i:đáp án))"
)

CONTEXT_WORD = (
    r"(?i:in|on|at|for|per|by|from|after|before|within|each|every|with|during|since|until"
    r"|till|over|under|out|than|more|less|fewer)\b"
)
"""Words after a number that put it in a context, not beside another value: "18 in 2
weeks", "18 per 3 days". Any other word between two numbers ("18 sau 20", "18 hours 30
minutes", "18 (English), 20 (Deutsch)") makes the first no value alone."""

OFFER_CUE = (
    r"(?:\b(?i:could|might|may)(?:[ \t]+(?i:also|even|well|actually|instead|equally|possibly))?"
    r"[ \t]+(?i:be)(?:[ \t]+(?i:also|even))?"
    # "or" opening a clause, a parenthesis or the text right after the answer: "18 or maybe
    # 20", "18 (or possibly 20)", "18. Or 20.", "18 vs 20", "18 oder 20" (not "x or y"
    # inside a sentence)
    r"|(?:^[ \t$*)\\}]{0,4}[ \t]*"
    + ALTERNATIVE_WORD
    + r"|[.,;:!?\n()\[\u2013\u2014\u2026-][ \t]*(?:(?i:or)|"
    + _OR_FOREIGN
    + "))"
    r"(?:[ \t]+(?i:maybe|perhaps|possibly|else|even|rather|alternatively))?"
    r"|\b(?i:maybe|perhaps|possibly|alternatively|alternately|otherwise|conceivably)"
    # "another possible answer is", "an alternative value would be", "other solutions:"
    r"|\b(?i:another|other|alternative|second)(?:[ \t]+(?i:possible|valid|plausible|potential"
    r"|acceptable|correct))?[ \t]+(?i:answer|value|solution|option|choice|possibility|candidate)s?"
    r"(?:[ \t]+(?i:is|would[ \t]+be|could[ \t]+be|might[ \t]+be))?"
    r"|\b(?i:unless)[ \t]+(?i:it(?:'s|[ \t]+is)|the[ \t]+answer[ \t]+is)"
    # a condition opening a parenthesis, then a value: "18 (if rounding, 20)", "(rounded: 20)";
    # or a sentence, then a value that ends it: "If rounding, 20." (not "If we add 2, 16 remain")
    r"|\((?i:if|when|assuming|rounding|rounded)\b[^()\n]{0,40}?[,:]"
    r"|(?:^|[.!?][ \t]{1,3})(?i:if|when|assuming)\b[^.,;()\n]{1,40}[,:]"
    r"(?=[ \t]{1,3}(?:\\?\$)?(?:-?\d[\d,.]*|\(?[A-J]\)?)\$?[ \t]*(?:[.!?)]|$))"
    # "Answer: 18. Antwort: 20." (a label opens a line or a sentence: few places to try)
    r"|(?:^|(?<=[\n.!?;]))[ \t*>]{0,3}" + _ANSWER_ABROAD + r"[ \t]{0,3}(?=:)"
    r"|" + CORRECTION_CUE + ")"
)
"""Words that offer another value after a final answer: "it could be", "might also be",
"or" opening a clause ("Or 20", "(or possibly 20)"), "perhaps", "alternatively",
"another possible answer is", "unless it is". The verifiers follow it with their own value.
The rule is the shape, not a list of phrasings: a word of possibility or alternative,
then a value right after it (never "could be verified", "alternatively, using ...")."""

# Where an OFFER_CUE or CORRECTION_CUE match can begin, as a lookahead put before them.
# It changes no match (every match begins where it holds: a first letter of a cue word
# at a word start, a punctuation mark that opens a cue, the text's start, or after the
# marks the "Antwort:" branch looks behind at); it only lets re pass over the other
# positions without trying every branch there, which is most of the cost on a long
# paragraph. The letters are inside (?i:...) so that they fold as the cue words do.
CORRECTION_CUE_AHEAD = r"(?=\b(?i:[a-eh-iklmnoprstuwпнио]|[等其不更应應而待い実訂잠사]))"
"""A lookahead true wherever a CORRECTION_CUE match can begin (see OFFER_CUE_AHEAD): the
first letters of _CORRECTION's words ("hmm", "hold on", "let me re-check" too)."""
OFFER_CUE_STARTS = (
    r"[.,;:!?\n()\[\u2013\u2014\u2026-]|\b(?i:[a-eikmnoprstuwпнио]|[等其不更应應而待い実訂잠사])"
    r"|^|(?<=[\n.!?;])"
)
"""Where an OFFER_CUE match can begin (zero-width alternatives, for a lookahead)."""
OFFER_CUE_AHEAD = f"(?={OFFER_CUE_STARTS})"
"""A lookahead true wherever an OFFER_CUE match can begin: put it first in a pattern
that starts with OFFER_CUE (tests/verifiers/test_extract_speed.py compares them)."""
DENIAL = (
    r"(?i:(?:\banswer|(?:(?<=[\n.!?])|(?<=[.!?][ \t])|\A)[ \t]*it)"
    r"(?:[ \t]+(?:is|was)(?:[ \t]+(?:definitely|certainly|clearly|surely))?[ \t]+not"
    r"|[ \t]+(?:isn['’]t|wasn['’]t|(?:can['’]t|cannot|can[ \t]+not|couldn['’]t)[ \t]+be)"
    r"|['’]s(?:[ \t]+(?:definitely|certainly|clearly|surely))?[ \t]+not|[ \t]*:[ \t]*not)"
    r"|(?:(?<=[\n.!?])|(?<=[.!?][ \t])|\A)[ \t]*not)\b"
)
"""Words that deny an answer: "the answer is not", "the answer isn't", "the answer
can't be", "Answer: not", and a sentence opening "It's not", "It is definitely not" or
"Not" (a value follows)."""
DENIAL_CJK = "答案(?:并|並)?不是"  # "答案不是": the answer is not
ANSWER_DENIED = re.compile(
    DENIAL + r"(?=[^\n]{0,60}?(?:\d|\$|\\\())" + "|" + DENIAL_CJK + r"(?=[^\n。]{0,30}?\d)"
)
"""An answer stated, after the final one, as not a value: "The answer is not 18 but 19",
"Answer: not 18", "答案不是18，而是19" (a value follows on the line). See
:func:`denies_answer`."""


def denies_answer(text: str, start: int, same: Callable[[str], bool | None]) -> bool:
    """Whether ``text`` after ``start`` (a final answer's end) takes that answer back with
    :data:`ANSWER_DENIED`: the value it gives instead is not surely the answer ("The answer
    is not 18 but 19": 19), or, giving none, the value it denies may be the answer ("The
    answer is not 18"). Ruling another value out ("The answer is not 17, it is 18" after
    18) takes nothing back. ``same(value)`` says whether a value is the answer (None:
    cannot tell)."""
    for denial in ANSWER_DENIED.finditer(text, start):
        line = text[denial.end() :].partition("\n")[0].split("\u3002")[0]  # to its end
        found = list(VALUE_IN_LINE.finditer(line))
        if not found or _WORD.search(_COMMAND.sub("", line[: found[0].start()])):
            continue  # "It can't be anything other than 18": no value denied
        values = [value.group() for value in found]
        listed = all(_OR.fullmatch(line, a.end(), b.start()) for a, b in itertools.pairwise(found))
        if listed and any(same(value) is not False for value in values):
            return True  # "It cannot be 18 or 19": each one denied
        if not listed and same(values[-1]) is not True:
            return True  # "The answer is not 17 but 19": the value given instead
    return False


_OR = re.compile(r"[ \t,]*(?:(?i:or|nor|and)\b[ \t,]*)?")  # between values denied alike


_WORD = re.compile(r"[^\W\d_]{2,}")  # a word of letters (one letter may be an option's)
_COMMAND = re.compile(r"\\[A-Za-z]+")  # a LaTeX command (\boxed): no word
_THE_ANSWER = r"the[ \t]+(?:(?:right|correct|final)[ \t]+)?answer"  # "18 is not the answer"
_IS_WRONG = (  # "'s not right", " is *incorrect*", " can't be correct", " doesn't add up"
    r"(?:(?:'s|’s|[ \t]+(?:is|was|seems|appears|looks|must[ \t]+be))?(?:[ \t]+to[ \t]+be)?"
    r"[ \t]+(?:(?:quite|definitely|clearly|obviously|certainly|totally|completely)[ \t]+)?"
    r"[*_]{0,2}(?:not[ \t]+(?:quite[ \t]+)?(?:right|correct|" + _THE_ANSWER + r")"
    r"|incorrect|wrong|a[ \t]+mistake)\b(?!-)"
    r"|[ \t]+(?:isn't|isn’t|wasn't|can't|can’t|cannot|can[ \t]+not|couldn't|could[ \t]+not)"
    r"(?:[ \t]+be)?[ \t]+(?:(?:quite[ \t]+)?(?:right|correct)|" + _THE_ANSWER + r")\b(?!-)"
    r"|[ \t]+(?:doesn't|doesn’t|does[ \t]+not)[ \t]+(?:make[ \t]+sense|(?:seem|look)[ \t]+right"
    r"|check[ \t]+out|add[ \t]+up)\b)"
)
# What may open the sentence before the words: "Wait, ", "Hmm... ", "But ", "等等，".
# Each one atomic (``(?>...)``): its two runs of blanks could otherwise share a space
# two ways, and "Wait, so " forty times before no disavowal backtracked 2^40 times (one
# row hung the event loop: tests/verifiers/test_extraction_bounds.py). At most 32: the
# search tries every start, each giving its run back one at a time (quadratic in a run of
# two thousand "嗯": 0.8 s unbounded, 30 ms so), and a sentence opens with a few (eight
# was too few: nine "Wait, " before "I made a mistake." kept the answer).
_LEAD = (
    r"(?:(?>(?:(?i:wait|hmm+|oh|but|oops|actually|well|so|okay|ok|no|sorry|whoops|scratch[ \t]+that"
    r"|honestly|frankly|unfortunately|sadly"
    r"|hold[ \t]+on|never[ \t]*mind|my[ \t]+bad|on[ \t]+second[ \t]+thought"
    r"|(?:up)?on[ \t]+(?:further[ \t]+|second[ \t]+)?reflection)\b|等等|等一下|嗯|哦)"
    r"[ \t]*[,.!…—–\-，。！]*[ \t]*)){0,32}"
)
"""Lead-ins a sentence may open with before it names a value and calls it wrong: the
interjections and the correction cues that take an answer back ("Scratch that, 18 is
wrong.", "On reflection, $18$ is incorrect.")."""
DISAVOWAL = re.compile(
    _LEAD + r"(?:(?P<whole>(?i:"  # about the answer or the work, wherever it was given
    r"(?:my|th(?:e|is))[ \t]+(?:final[ \t]+|previous[ \t]+|above[ \t]+)?"
    r"(?:answer|result|solution|calculation)(?:[ \t]+above)?"
    + _IS_WRONG
    + r"|everything[ \t]+above"
    + _IS_WRONG
    + r"|I[ \t]+(?:think[ \t]+I[ \t]+|must[ \t]+have[ \t]+|might[ \t]+have[ \t]+|have[ \t]+"
    r"|'ve[ \t]+)?made[ \t]+(?:a|an|some)[ \t]+(?:mistake|error|miscalculation)s?\b"
    r"|there[ \t]+(?:is|was|must[ \t]+be|seems[ \t]+to[ \t]+be)[ \t]+(?:a|an)[ \t]+"
    r"(?:mistake|error|miscalculation)\b(?![ \t]+in[ \t]+(?:the|your)[ \t]+"
    r"(?:problem|question|statement|calculation))"
    r"|I(?:[ \t]+was|[ \t]+am|'m|’m)[ \t]+(?:wrong|mistaken)\b|I[ \t]+messed[ \t]+up\b"
    r"|I[ \t]+(?:retract|withdraw)[ \t]+(?:this|that|my)[ \t]+(?:final[ \t]+)?answer\b"
    r"|scratch[ \t]+that\b|(?:ignore|disregard)[ \t]+(?:that|this|the[ \t]+above|everything"
    r"[ \t]+above|my[ \t]+(?:previous[ \t]+)?answer)\b"
    # an abstention, the whole sentence: "I don't know.", "I give up.", "I'm unable to
    # determine the answer.", "I cannot solve this problem.", "No idea." (not the text of
    # an answer tag: "<answer>No Idea.</answer>" names a song)
    r"|(?P<abstain>(?:I[ \t]+(?:really[ \t]+|honestly[ \t]+|just[ \t]+)?(?:don['’]?t|do[ \t]+not)"
    r"[ \t]+know(?:[ \t]+(?:the[ \t]+answer|what[ \t]+the[ \t]+answer[ \t]+is|for[ \t]+sure))?"
    r"|I[ \t]+give[ \t]+up(?:[ \t]+on[ \t]+(?:this|it)(?:[ \t]+(?:one|problem|question))?)?"
    r"|I[ \t]+(?:really[ \t]+)?have[ \t]+no[ \t]+(?:answer|idea|clue)|no[ \t]+(?:idea|clue)"
    r"|I(?:['’]m|[ \t]+am)[ \t]+(?:unable|not[ \t]+able)[ \t]+to[ \t]+(?:determine|find|solve"
    r"|answer|give)[ \t]+(?:the[ \t]+answer|an[ \t]+answer|this|it|the[ \t]+problem)"
    r"(?:[ \t]+(?:problem|question))?"
    r"|I[ \t]+(?:can['’]?t|cannot|could[ \t]*n['’]?t)[ \t]+(?:solve|answer|determine|do)[ \t]+"
    r"(?:this|it|the[ \t]+(?:problem|question|answer))(?:[ \t]+(?:problem|question))?)"
    r"(?=[ \t]*(?:[.!…][ \t]*(?!</)|$))))"
    r"|我(?:算|做|想)?错了|(?:这个|那个|我的|上面的)?答案(?:是)?(?:不对|错的|错误的|错了))"
    # about what was said last: "That's not right.", "Wait, no.", "Nope."
    r"|(?i:(?:that|this|it)"
    + _IS_WRONG
    + r"|I[ \t]+don['’]?t[ \t]+think[ \t]+(?:that|this|it)(?:['’]s|[ \t]+is)[ \t]+"
    r"(?:right|correct)\b|(?<=[ \t,.!…—–-])no(?=[ \t]*(?:[.!…]|$))|nope\b(?=[ \t]*(?:[.!…]|$)))"
    r"|(?:这|那)?(?:是)?(?:不对|错的)"
    # the same in the languages models drift into: "C'est faux.", "Das ist falsch.", "Eso
    # está mal.", "Это неверно.", "これは間違いです。"
    r"|(?i:c['’]est[ \t]+(?:faux|incorrect|erroné)|(?:das|dies)[ \t]+ist[ \t]+(?:falsch"
    r"|nicht[ \t]+richtig)|(?:eso|esto)[ \t]+(?:está[ \t]+mal|es[ \t]+incorrecto)"
    r"|это[ \t]+(?:неверно|неправильно))|(?:これは|それは)?間違い(?:です)?)",
    re.M,
)
"""Words that take the value just given back without giving another, as a sentence of
their own: "Wait, that's not right.", "I made a mistake.", "This answer is wrong.",
"Hmm... no.", "Scratch that.", "等等，这不对。" (group ``whole``: about the answer or the
work, not only the last thing said). Read by :func:`disavowals`, which keeps only those
that open a sentence and are not explained away in it."""
_DISAVOWAL_WORDS = (
    "wrong", "correct", "right", "mistake", "error", "miscalc", "sense", "add up",
    "check out", "hmm", "wait", "oops", "nope", "no.", "no!", "no…", "scratch", "ignore",
    "disregard", "messed", "mistaken", "the answer", "final answer", "retract", "withdraw",
    "t know", "not know", "give up", "no idea", "no clue", "no answer", "unable to", "not able to",
    "t solve", "not solve", "t answer", "not answer", "t determine", "not determine", "t do ",
    "not do ",
    "faux", "falsch", "nicht richtig", "está mal", "incorrecto", "неверно", "неправильно",
    "間違い",
    "不对", "错",
)  # fmt: skip
_FOLDED_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")  # İ ı ſ K: re's (?i) folds them
# In the rest of its sentence, words that explain the disavowal away ("I made an error at
# first, but fixed it", "It is wrong because ...": about something else, or settled)
_EXPLAINED = re.compile(
    r"(?i:\b(?:but|which|though|although|because|since|as|if|unless|when|whereas|while"
    r"|fixed|corrected|except|to|for|in[ \t]+your)\b|[;:(])"
)
_SENTENCE_END = re.compile(r"[.!?\n。！？]")


# Every CORRECTION_CUE match begins with one of _CORRECTION's words, each of which holds one
# of these (lower case, runs of blanks one space; "no", "non" and "nein" only before a
# stop: _NO_THEN_STOP)
_CORRECTION_STEMS = (
    "actually", "wait", "sorry", "oops", "oups", "correction", "let me correct", "i mean",
    "make that", "scratch that", "thought", "reflection", "hmm", "hold on", "recheck",
    "re-check", "reconsider", "never", "edit", "update", "erratum", "typo", "my bad",
    "err,", "err.", "err ,", "err .", "strike", "disregard", "ignore", "wrong", "mistake",
    "an error", "attend", "fait", "espera", "realidad", "perd", "warte", "eigentlich",
    "korrektur", "verdade", "aspetta", "realt",
)  # fmt: skip
_NO_THEN_STOP = re.compile(r"(?:no|non|nein)[ \t]*[,:;!.-]")
_BLANKS = re.compile(r"[ \t]+")


def may_correct(text: str) -> bool:
    """False only when no :data:`CORRECTION_CUE` match can be in ``text``: most passages
    hold none of its words, and skip a regex tried at every word (a tenth of a prose
    row's reading). Beyond ASCII, case folding and the other languages' words are re's."""
    if not text.isascii():
        return True
    low = text.lower()
    if "\t" in low or "  " in low:
        low = _BLANKS.sub(" ", low)  # "I  mean", "hold\ton": the words' [ \t]+
    return any(stem in low for stem in _CORRECTION_STEMS) or bool(_NO_THEN_STOP.search(low))


def may_disavow(text: str) -> bool:
    """Whether ``text`` holds a word every :data:`DISAVOWAL` match holds (and every one of
    :func:`called_wrong`'s patterns): scans in C, so that the regex runs only on the few
    texts that may match. re folds four letters beyond ASCII into ASCII ones ("ſ" is
    "s"): a text holding one is left to re."""
    if not text.isascii() and any(map(text.__contains__, _FOLDED_TO_ASCII)):
        return True
    lowered = text.lower()
    if "\t" in lowered or "  " in lowered:
        lowered = _BLANKS.sub(" ", lowered)  # "the  answer": the words' [ \t]+
    if any(map(lowered.__contains__, _DISAVOWAL_WORDS)):
        return True
    return "no" in lowered and _NO_THEN_END.search(lowered) is not None  # "Wait, no"


_NO_THEN_END = re.compile(r"no[ \t]*(?:[.!…\n]|\Z)")  # DISAVOWAL's "no", its sentence's end


def disavowals(text: str, start: int, end: int | None = None) -> Iterator[re.Match[str]]:
    """The :data:`DISAVOWAL` matches of ``text[start:end]`` that open a sentence (after
    ``.``, ``!``, ``?`` or a line break, blanks and markup between; "Please let me know
    if I made a mistake" opens none) and whose sentence says nothing more of them ("I
    made an error at first, but fixed it", "This is wrong because it confuses ...",
    "That is not correct; the passage never says so" are about something else)."""
    end = len(text) if end is None else end
    if not may_disavow(text[start:end]):
        return
    for found in DISAVOWAL.finditer(text, start, end):
        if not found.group().strip() or not _opens_sentence(text, found.start()):
            continue
        if found.group("abstain") is not None and not _after_a_statement(text, found.start()):
            continue  # "Is there a closed form? I don't know.": its own question's answer
        rest = _SENTENCE_END.split(text[found.end() : found.end() + 120], maxsplit=1)[0]
        if not _EXPLAINED.search(rest):
            yield found


def _after_a_statement(text: str, at: int) -> bool:
    """After a sentence that states (its end ``.``, ``!``; a line of its own after any but
    a question), not one that asks (``?``) nor a closing ``$`` on its line: "... for $y$
    I have no answer." is about $y$."""
    before = text[:at].rstrip(" \t*_\"'(")
    if before.endswith("\n"):  # a line of its own: after anything but a question
        before = before.rstrip()
        return not before or before[-1] not in "?？"
    return not before or before[-1] in ".!。！…"


def _opens_sentence(text: str, at: int) -> bool:
    """After a sentence's end, or after a closed answer form (``}``, ``$``, ``>``)."""
    while at > 0 and text[at - 1] in " \t*_\"'(":
        at -= 1
    return at == 0 or text[at - 1] in ".!?\n。！？…}$>"


def affirmed(text: str) -> bool:
    """Whether ``text`` (after a disavowal) keeps the answer after all: "Yes, that is
    correct.", "it checks out", "Verified." (not "I can't confirm it", "not verified")."""
    for found in AFFIRMED.finditer(text):
        if not _NEGATED_BEFORE.search(text, max(0, found.start() - 16), found.start()):
            return True
    return False


AFFIRMED = re.compile(
    r"(?i:\b(?:is|was|it's|that's|it’s|that’s)[ \t]+(?:indeed[ \t]+|still[ \t]+)?"
    r"(?:correct|right)\b|\bconfirm|\bchecks[ \t]+out|\bverified\b)|✓|✔|\\checkmark"
)
"""Words after a disavowal that may keep the answer after all (see :func:`affirmed`)."""
_NEGATED_BEFORE = re.compile(r"(?i:\bnot|n['’]t|\bcannot|\bdoubt|\bnever|\bno)\b[^.!?\n]{0,12}$")
VALUE_IN_LINE = re.compile(r"\$[^$\n]{1,60}\$|\\\([^\n]{1,60}?\\\)|-?\d[\d,]*(?<!,)(?:\.\d+)?")
"""A value in prose: a math span or a number (what :func:`disowns_answer` reads), never
the comma after a number ("17, of course": 17)."""


_DISOWN_NEAR = 600  # a disavowal this near the answer, and a last word this near the end
WORD_CHAR = re.compile(r"[^\W_]")
"""A letter or digit: where one stands between two places, something was said there."""
_WORDS_CHARS = 120  # longer than any DISAVOWAL match


def disowns_answer(text: str, start: int, same: Callable[[str], bool | None]) -> bool:
    """Whether ``text`` after ``start`` (a final answer's end) takes that answer back in
    words (:func:`disavowals`: "Wait, that's not right.", "I made a mistake."), near it
    and near the end, and neither states it again nor affirms it after ("... 3 + 4 = 7.
    Yes, that is correct."). A disavowal of what was said last after another value named
    ("Option A is 5. This is incorrect.") is about that value, not the answer.
    ``same(value)`` says whether a value is the answer."""
    if calls_wrong(text, start, same):  # however far: it names the answer
        return True  # "\\boxed{7}. Hmm, 7 is wrong.": the answer, by name, called wrong last
    if (said := _WRONG_RIGHT_AFTER.match(text, start)) and says_nothing_more(said.group("tail")):
        return True  # "Hmm, \\boxed{7} is wrong.": the answer form itself, called wrong last
    if len(text) - start > 2 * _DISOWN_NEAR + _WORDS_CHARS:
        return False  # more work after it than words near both ends: the later forms decide
    last = None
    for last in disavowals(text, start, start + _DISOWN_NEAR + _WORDS_CHARS):  # noqa: B007
        pass
    if last is None or last.start() - start > _DISOWN_NEAR or len(text) - last.end() > _DISOWN_NEAR:
        return False  # far from the answer, or more work after it: the later forms decide
    if last.group("abstain") is not None and WORD_CHAR.search(text, start, last.start()):
        return False  # "\\boxed{5}. There might be a slicker proof. I don't know.": not the answer
    named = VALUE_IN_LINE.findall(text, start, last.start())
    if last.group("whole") is None and named and same(named[-1]) is not True:
        return False  # "That's not right." is about the value named last, not the answer
    after = text[last.end() :]
    values = VALUE_IN_LINE.findall(after)
    if values:
        return same(values[-1]) is not True  # stated again: the answer stands
    return not affirmed(after)


# A value named, then called wrong, as the text's last sentence: "Hmm, 7 is wrong.", "But
# $7$ is incorrect.", "B is wrong." (a number, a math span, an option label), or (words)
# "Hmm, Paris is wrong." (a few words of prose); the value may be named with a head
# ("Option B", "Choice (B)", "the answer 7", "x = 7", "\\boxed{7}", "my answer Paris"), and
# a few words that say nothing more may follow ("Sorry.", "I give up.", ":(")
_NAMED_VALUE = (
    r"\$(?:[^$\\\n]|\\[^\n]){1,80}\$|\\\([^\n]{1,60}?\\\)|-?\d[\d,]*(?:\.\d+)?|\(?[A-J]\)?(?![\w(])"
)
_VALUE_HEAD = (
    r"(?:(?i:(?:my|the|this|our)[ \t]+(?:final[ \t]+)?answer(?:[ \t]+of)?|option|choice)[ \t]+"
    r"|[a-zA-Z][ \t]*=[ \t]*|\\boxed\{)?"
)
_CALLED_WRONG = r"\}?(?i:" + _IS_WRONG + r")[ \t]*(?P<tail>(?:[.!…,\s*_\"')]|\Z)[^\d$\\?]{0,60})\Z"
_WRONG_RIGHT_AFTER = re.compile(r"[ \t]*[}$]{0,3}" + _CALLED_WRONG)  # at an answer form's end
_NAMED_WRONG = re.compile(_LEAD + _VALUE_HEAD + r"(?P<value>" + _NAMED_VALUE + r")" + _CALLED_WRONG)
_WORDS_WRONG = re.compile(
    _LEAD + _VALUE_HEAD + r"(?P<value>[^\s.!?][^.!?\n]{0,79}?)" + _CALLED_WRONG
)
_NAMED_TAIL = 200  # the last sentence is looked for among the text's last characters


def calls_wrong(
    text: str, start: int, same: Callable[[str], bool | None], *, words: bool = False
) -> bool:
    """Whether ``text`` after ``start`` (a final answer's end) ends on a sentence that
    names a value and calls it wrong (:func:`called_wrong`), a value that ``same`` says is
    the answer: "The answer is 7. 6 is wrong." rules another value out, and so may a value
    that cannot be told apart inline ("\\boxed{30^\\circ} ... But 60 is wrong.", "#### 18
    ... So $x = 20$ is wrong."). Its last word on its answer is then that it is wrong, as
    with :func:`disowns_answer`'s words."""
    found = called_wrong(text, start, words=words)
    return found is not None and same(found.group("value")) is True


def called_wrong(text: str, start: int = 0, *, words: bool = False) -> re.Match[str] | None:
    """The last sentence of ``text`` (after ``start``) when it names a value and calls it
    wrong ("Hmm, 7 is wrong.", "But $7$ is incorrect.", "B is wrong."; with ``words``,
    prose too: "Hmm, Paris is wrong."), its group ``value`` the value; else None."""
    tail = max(start, len(text) - _NAMED_TAIL)
    if not may_disavow(text[tail:]):
        return None
    pattern = _WORDS_WRONG if words else _NAMED_WRONG
    while (found := pattern.search(text, tail)) is not None:
        if _opens_sentence(text, found.start()) and says_nothing_more(found.group("tail")):
            return found
        # a later start may open the sentence ("so 7": "7"), or be the last of two
        # ("A is wrong. B is wrong.": the tail of A's holds B's sentence)
        tail = found.start() + 1
    return None


def says_nothing_more(tail: str) -> bool:
    """Whether the words after "... is wrong" (no value, no math: the pattern saw to that)
    leave it said: nothing but a sign-off ("Sorry.", "I give up.", "My bad.", ":(") and
    markup ("---", "</p>"). Anything else may take it back or explain it away ("Never
    mind.", "Just kidding.", "..., but only for x < 0", "Yes, it is correct."), so a
    known sign-off alone counts, not words merely lacking a reason."""
    left = _SIGN_OFF.sub(" ", _SMILEY.sub(" ", _MARKUP.sub(" ", tail)))
    return not left.strip(_SAID_CHARS)


# After "... is wrong": what says nothing more (see says_nothing_more)
_SMILEY = re.compile(r"[:;=][-'^]?[()\[\]/\\|DPpOo]")
_MARKUP = re.compile(r"</?[A-Za-z]{1,10}>|[-*_#=~]{2,}")
_SIGN_OFF = re.compile(
    r"(?i:\b(?:sorry|apologies|my[ \t]+bad|oops|ugh|sigh|hmm+|damn"
    r"|I[ \t]+give[ \t]+up(?:[ \t]+on[ \t]+(?:this|it)(?:[ \t]+(?:one|problem|question))?)?"
    r"|I[ \t]+(?:can['’]?t|cannot|could[ \t]*n['’]?t)[ \t]+(?:solve|do|figure[ \t]+out)"
    r"[ \t]+(?:it|this)(?:[ \t]+(?:one|problem|question))?"
    r"|I[ \t]+(?:don['’]?t|do[ \t]+not)[ \t]+know(?:[ \t]+the[ \t]+answer)?"
    r"|let[ \t]+me[ \t]+(?:try[ \t]+again|re-?try|start[ \t]+over)"
    # a chat's closing courtesies, which say nothing of any value
    r"|(?:I[ \t]+)?hope[ \t]+(?:this|that|it)[ \t]+helps"
    r"|(?:thanks|thank[ \t]+you)(?:[ \t]+for[ \t]+(?:reading|asking|your[ \t]+(?:time|question)))?"
    r"|(?:please[ \t]+)?let[ \t]+me[ \t]+know[ \t]+if[ \t]+you[ \t]+have[ \t]+(?:any[ \t]+)?"
    r"(?:(?:other|more|further)[ \t]+)?questions|feel[ \t]+free[ \t]+to[ \t]+ask"
    r"|good[ \t]+luck|cheers|happy[ \t]+to[ \t]+help"
    r"|have[ \t]+a[ \t]+(?:great|nice|good)[ \t]+day)\b)"
)
_SAID_CHARS = " \t\r\n.!…,;:'\"()*_-—–"


NUMBER_START = r"(?<![0-9][,.])"
"""A lookbehind for a pattern that reads a number as a run of digits and separators
(``\\d[\\d,]*``) and is searched for: it starts at the run's first digit, never after
one of its separators. Without it, a regex tries every number of a long list
(``0,1,2,...,3000``) and runs each to the list's end: quadratic (seconds on a 16 KB list,
outside any time limit when inline). A match starting inside the run is one starting
at its first digit, longer, unless the pattern refuses that digit's left side (``x1,2``):
a value glued to a word or a sign is no value, nor is the end of its run."""

VALUE_AHEAD = r"(?=[-$\\.\d])"
"""A lookahead true wherever a value in prose (a number, ``$...$``, ``\\(...\\)``) can begin."""

OFFER_PREDICATE = (
    r"(?:[ \t]+(?:(?i:is|are|seems|looks|would|could|might|may|can|be)[ \t]+){0,2}(?:"
    r"(?i:possible|plausible|likely)"
    r"|(?i:also|too|equally)[ \t]+(?:(?i:be|is)[ \t]+)?(?:(?i:an?)[ \t]+)?"
    r"(?i:possible|plausible|likely|correct|right|valid|acceptable|works?|answer|solution)"
    r"|(?i:works?|correct|right|valid|acceptable)[ \t]*,?[ \t]+(?i:too|also|as[ \t]+well)"
    r"|(?:(?i:an?)[ \t]+)?(?i:another|alternative|other|second|possible|plausible)[ \t]+"
    r"(?:(?i:valid|possible|plausible|correct)[ \t]+)?(?i:answer|solution|option|choice))\b"
    # a value under a condition, in parentheses: "18 (20 if rounding)"
    r"|[ \t]+(?i:if|when|assuming)\b[^()\n]{0,40}\))"
)
"""Words after a value that offer it as another answer: "20 would also work", "20 could
also be right", "20 is also a valid answer", "20 is plausible", "20 works too", "20 is
another answer", "(20 if rounding)". A value said to be valid without "also" ("$x = 5$
is valid", after a root ruled out) is a check, not an offer; "20 is not possible" rules
it out."""

# Each branch of OFFER_PREDICATE holds one of these words, or "if", "when" or "assuming"
# then a ")" (see may_offer_predicate)
_PREDICATE_WORDS = (
    "possible", "plausible", "likely", "also", "too", "equally", "well",
    "answer", "solution", "option", "choice",
)  # fmt: skip


def may_offer_predicate(text: str) -> bool:
    """False only when no OFFER_PREDICATE match can be in ``text``: each of its branches
    reads one of _PREDICATE_WORDS, or a condition word and a ")". Most paragraphs hold
    none, and skip a regex tried at every digit. Beyond ASCII, case folding is re's
    ("ſecond" matches "second"), so re decides."""
    if not text.isascii():
        return True
    low = text.lower()
    if any(word in low for word in _PREDICATE_WORDS):
        return True
    return ")" in text and ("if" in low or "when" in low or "assuming" in low)


AFTER_ANSWER_CHARS = 300
"""How far after a final answer its paragraph is read for another value offered."""

SECTION_CHARS = 16_000
"""How much of the concluding section (the paragraph of the final answer, up to the
end) the verifiers read for other final answers; see :func:`unread_answer` for the rest."""

# an answer stating a value ("answer is 5", "Answer: $5$", "<answer> 5", "#### 5"), not
# the word in prose ("to find the answer, ..."): a long paragraph of steps may say that
_MAYBE_ANSWER = re.compile(
    r"(?i:\banswer\b(?:[ \t]+is)?|<answer>)[ \t]{0,3}[:=：]?[ \t]{0,3}(?:\*\*)?[ \t]{0,3}"
    r"(?:\$|\\[(\[]|\\boxed)?[ \t]{0,3}(?:-?\d|\\|\(?[A-J]\b)|####[ \t]{0,8}-?\$?\d"
)
_MAYBE_BOX = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")

_SEARCH_WINDOW = 4096
_MAX_INT_GOLD = 10**999
_PLAIN_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)")


# Format characters a reader never sees: zero-width spaces and joiners, direction marks
# and embeddings, the word joiner, a byte-order mark, a soft hyphen
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
# a space of another width (no-break, thin, ideographic): a space ("18\u2009\u00bd" is 18 and a
# half, as "18 \u00bd" is; a reader that looks for spaces must see it)
_WIDE_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
# struck-out text: "~~20~~ 18", "<del>20</del> 18" (a value taken back, as "not 20" is)
_STRUCK = re.compile(
    r"~~(?=[^\s~])[^~\n]{1,200}~~|<(?i:del|strike)>[^<\n]{0,200}</(?i:del|strike)>"
)


# where struck-out text may start: "~~" (found by str's own search), or a tag that re
# finds by its literal "<" (3x faster than one pattern for both, which scans by charset)
_STRUCK_TAG = re.compile(r"<(?i:del|strike)>")
# struck out or hidden in other ways, each removed whole: a tag spanning lines, LaTeX's
# strike-outs and phantoms (``\phantom{\boxed{18}}`` shows nothing), an HTML element
# marked hidden, ``\iffalse ... \fi`` and the comment environment
_GROUP = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\}){0,200}\}"  # braces nested 3 deep
_HIDDEN = re.compile(
    r"<(?i:del|strike)>[^<]{0,400}</(?i:del|strike)>"
    r"|\\(?:sout|st|xout|phantom|hphantom|vphantom)(?![A-Za-z])\s{0,3}"
    + _GROUP
    # an element marked hidden, or styled so that it shows nothing (white or transparent
    # text, a zero font size or opacity)
    + r"|<(?P<tag>[A-Za-z]{1,10})\b[^<>]{0,200}?(?:\bhidden\b|display:\s{0,3}none|visibility:"
    r"\s{0,3}hidden|(?<![\w-])color:\s{0,3}(?:white|transparent|#fff(?:fff)?\b)"
    r"|font-size:\s{0,3}0(?![.\d]*[1-9])|opacity:\s{0,3}0(?![.\d]*[1-9]))"
    r"[^<>]{0,200}>.{0,400}?</(?P=tag)\s{0,3}>"
    # (here, in this order, stand the unshown elements: _UNSHOWN_OPENER, _UNSHOWN_CLOSERS)
    # a LaTeX comment line ("% \boxed{18}"); a markdown comment ("[//]: # (18)")
    r"|(?:^|(?<=\n))[ \t]{0,8}%[^\n]{0,400}"
    r"|(?:^|(?<=\n))[ \t]{0,3}\[[^\]\n]{0,40}\]:[ \t]{0,3}(?:#|<>)[ \t]{0,3}(?:\([^\n]{0,400}\)|\"[^\n]{0,400}\")"
    r"[ \t]*(?=\n|$)"
    # "<s>20</s>": struck (not a BOS token opening the text, nor an EOS one ending it)
    r"|(?<=.)<s>[^<\n]{1,200}</s>(?=.)",
    re.DOTALL,
)
# Elements a browser never shows, CDATA, ``\\iffalse ... \\fi`` and the comment environment:
# hidden too, where the closer stands at most _UNSHOWN_SPAN characters after the opener.
# As branches of one pattern (_HIDDEN_WHOLE) a lazy ``.{0,2000}?`` rescans 2,000 characters
# for each unclosed opener (55 ms over 20,000 characters of "<style>"): past
# _FEW_UNSHOWN openers, :func:`_merged_hidden` finds each closer once instead.
_UNSHOWN_BRANCHES = (
    r"<(?P<unshown>template|noscript|script|style)\b[^<>]{0,200}>.{0,2000}?</(?P=unshown)\s{0,3}>"
    r"|<!\[CDATA\[.{0,2000}?\]\]>"
    r"|\\iffalse\b.{0,2000}?\\fi\b|\\begin\{comment\}.{0,2000}?\\end\{comment\}"
)
# (after _HIDDEN's branches: none of them starts where one of these can, but the hidden
# element's, which finds the same closer first)
_HIDDEN_WHOLE = re.compile(_HIDDEN.pattern + "|" + _UNSHOWN_BRANCHES, re.DOTALL)
_UNSHOWN_WORDS = (
    "<template", "<noscript", "<script", "<style", "<![CDATA[", "\\iffalse", "\\begin{comment}",
)  # fmt: skip
_FEW_UNSHOWN = 64  # openers whose lazy scans cost less than a Python loop over the matches
_UNSHOWN_SPAN = 2000
_UNSHOWN_OPENER = re.compile(
    r"<(?P<tag>template|noscript|script|style)\b[^<>]{0,200}>|<!\[CDATA\[|\\iffalse\b"
    r"|\\begin\{comment\}"
)
_UNSHOWN_CLOSERS = {
    **{
        tag: re.compile(rf"</{tag}\s{{0,3}}>")
        for tag in ("template", "noscript", "script", "style")
    },
    "<![CDATA[": re.compile(r"\]\]>"),
    "\\iffalse": re.compile(r"\\fi\b"),
    "\\begin{comment}": re.compile(r"\\end\{comment\}"),
}
# What may start a part of _HIDDEN, by a literal first character (a pattern with one is
# scanned by memchr; an alternation of several first characters is not: 30x slower)
_MAY_HIDE_TEX = re.compile(
    r"\\(?:sout|st|xout|phantom|hphantom|vphantom|iffalse|begin\{comment)(?![A-Za-z])"
)
_MAY_HIDE_TAG = re.compile(r"<(?:(?i:del|strike)>|s>|template|noscript|script|style|!\[CDATA)")
_HIDE_WORDS = ("hidden", "display:", "visibility:", "color:", "font-size:", "opacity:", "]:")
_COMMENT_LINE = re.compile(r"(?:^|\n)[ \t]{0,8}%")
# a character struck through by a combining stroke ("B\u0336"): struck out
_COMBINING_STROKE = re.compile(".[\u0335\u0336]+")
# a dash before a digit written as a minus ("\u201318", "\u221218" is read elsewhere): a minus
_DASH_MINUS = re.compile("[\u2010-\u2015\u2043\u02d7\u207b\u208b\u2796](?=[0-9])")
# a fraction written with the fraction slash, its digits raised or lowered ("18\u2044\u2082",
# "\u00b9\u2044\u2082"): a fraction, as "18/2" is (read as 18 followed by a mark, it was 18)
_FRACTION_SLASH = re.compile(
    "([0-9\u00b9\u00b2\u00b3\u2070\u2074-\u2079]*)\u2044([0-9\u2080-\u2089]*)"
)
_PLAIN_DIGITS = str.maketrans(
    "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089",
    "01234567890123456789",
)


def _plain_fraction(match: re.Match[str]) -> str:
    return f"{match.group(1).translate(_PLAIN_DIGITS)}/{match.group(2).translate(_PLAIN_DIGITS)}"


def visible(text: str) -> str:
    """``text`` as a reader sees it rendered, the only text an answer is read from:
    format characters dropped (``1\u200b8`` is 18, a direction mark hides no "or"), a
    full-width colon read as a colon, a space of any width as a space, a dash before a digit read as a minus (``\u201318``
    is -18), a fraction slash as a slash (``18\u2044\u2082`` is 18/2), and HTML comments (an unclosed one hides the rest), struck-out and hidden text
    removed (``18 <!-- 20 -->`` answers 18, as ``~~20~~ 18``, ``<del>20</del> 18``,
    ``\\sout{20} 18``, ``B\u0336`` and ``<span hidden>20</span>`` do). An answer label
    that disowns its value is no label (:func:`disowned_labels`), and a JSON object with
    an answer key reads as that answer (:func:`json_answers`). Linear: each is a scan,
    and most responses have none."""
    if not text.isascii():  # O(1) in CPython: most responses skip this
        if _INVISIBLE.search(text):
            text = _INVISIBLE.sub("", text)
        text = text.replace("：", ": ")  # a full-width colon ("答案：20") is a colon
        if _WIDE_SPACES.search(text):
            text = _WIDE_SPACES.sub(" ", text)
        text = _COMBINING_STROKE.sub(" ", _DASH_MINUS.sub("-", text))
        if "\u2044" in text:
            text = _FRACTION_SLASH.sub(_plain_fraction, text)
    return json_answers(disowned_labels(unhidden(text)))


# Before an answer label's word: a word that says the value it introduces is not the
# answer given, then at most two words ("common", "final"): "Wrong answer: 18", "A common
# incorrect answer is 18", "Not the answer: 18", "a tempting but wrong answer would be 18"
_DISOWNING_BEFORE = re.compile(
    r"(?i:\b(?:wrong|incorrect|false|mistaken|erroneous|invalid|rejected|discarded|naive"
    r"|tempting|trap|decoy|distractor|not[ \t]+the|isn't[ \t]+the|not[ \t]+an?)"
    r"(?:[ \t]+[a-z]+){0,2}[ \t]+)$"
)
_LABEL_WORD = re.compile(r"(?i:answer)(?=s?\b)")
_DISOWNING_WORDS = (
    "wrong", "incorrect", "false", "mistaken", "erroneous", "invalid", "rejected",
    "discarded", "naive", "tempting", "trap", "decoy", "distractor", "not",
)  # fmt: skip


def disowned_labels(text: str) -> str:
    """``text`` without the clauses whose answer label disowns its value ("Common wrong
    answer: 18", "A common incorrect answer is 18, but ...", "Not the answer: $18$"): a
    value shown as a wrong one, a trap or a distractor is no answer the response gives,
    as a struck-out one is not. The clause runs from the disowning word to the end of its
    line or sentence, a semicolon, a closing bracket, or a comma before a conjunction (",
    but the answer is 19" is read). Only the 40 characters before each word "answer" are read for the
    disowning words, and only where one of them is in the text at all."""
    low = text.lower()
    if "answer" not in low or not any(word in low for word in _DISOWNING_WORDS):
        return text
    parts, done = [], 0
    for word in _LABEL_WORD.finditer(text):
        at = word.start()
        if at < done:
            continue  # inside a clause already dropped
        disowning = _DISOWNING_BEFORE.search(text, max(done, at - 40), at)
        if disowning is None:
            continue
        end = _CLAUSE_END.search(text, word.end())
        if not text[word.end() : len(text) if end is None else end.start()].strip(_NO_VALUE):
            continue  # "18 is not the correct answer.": no value labelled (it is called wrong)
        parts.append(text[done : disowning.start()])
        done = len(text) if end is None else end.start()
    return "".join(parts) + text[done:] if parts else text


_NO_VALUE = " \t*_:s"  # after a label word: its plural's s, markup, a colon and blanks


# An answer key of a JSON object, and the object's opening brace at most this far before it
_JSON_KEY = re.compile(r'"(?i:final[ _]?)?(?i:answer)"\s{0,8}:')
_JSON_REACH = 2000
_JSON_KEYS_READ = 8  # the last answer keys of a response: bounded work on a response of them
_JSON_TAIL = 1 << 16  # answer keys are looked for in this many characters at the end
_JSON_ANSWER_KEYS = ("answer", "final_answer", "finalanswer", "final answer")
_JSON = json.JSONDecoder()


def json_answers(text: str) -> str:
    """``text`` with each JSON object that holds one answer key (``{"answer": 19,
    "steps": 18}``) replaced by ``Answer: 19``: the object answers its key's value, and
    its other fields are no answers (a reader of the last number would take the 18). The
    object is the one that opens at the nearest ``{`` before the key and holds it (a key
    of an object nested in another is left as written); text that does not parse is left
    as it is. Bounded: the last few keys of the last 64 KB, each parsed once from its brace."""
    if '"' not in text or "nswer" not in text:
        return text
    parts, done = [], 0
    found = list(_JSON_KEY.finditer(text, max(0, len(text) - _JSON_TAIL)))
    for key in found[-_JSON_KEYS_READ:]:
        if key.start() < done:
            continue  # inside an object read already
        start = text.rfind("{", max(done, key.start() - _JSON_REACH), key.start())
        if start < 0:
            continue
        try:
            fields, end = _JSON.raw_decode(text, start)
        except ValueError:
            continue
        if not isinstance(fields, dict) or end < key.end():
            continue
        names = [name for name in fields if name.lower() in _JSON_ANSWER_KEYS]
        if len(names) != 1:
            continue  # two answer keys: left as written, for the readers to refuse
        value = fields[names[0]]
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts += [text[done:start], f"Answer: {shown}"]
        done = end
    return "".join(parts) + text[done:] if parts else text


# Where a disowned label's clause ends: a line's or a sentence's end, a semicolon, a
# closing bracket (kept), or a comma before a word that opens another clause
_CLAUSE_END = re.compile(
    r"\n|[.!?;](?=\s|$)|[)\]]|,[ \t]+(?=(?i:but|and|so|while|whereas|however|yet|though|although"
    r"|instead|rather|the|it|its|it's|we|I)\b)"
)


def unhidden(text: str) -> str:
    """``text`` less what a reader never sees rendered, character for character otherwise:
    HTML comments, struck-out and hidden text (see :func:`visible`). For readers that
    compare characters (exact match), where :func:`visible`'s other readings do not apply."""
    if "<!--" in text:
        text = _without_comments(text)
    if _may_hide(text):
        text = _without_hidden(text)
    if "~~" in text or _STRUCK_TAG.search(text):
        text = _STRUCK.sub(" ", text)
    return text


def _without_hidden(text: str) -> str:
    """``_HIDDEN_WHOLE.sub(" ", text)``: by the pattern itself (in C) where few unshown
    openers stand, else by :func:`_merged_hidden` (linear, a Python step a match)."""
    if sum(map(text.count, _UNSHOWN_WORDS)) <= _FEW_UNSHOWN:
        return _HIDDEN_WHOLE.sub(" ", text)
    return _merged_hidden(text)


def _merged_hidden(text: str) -> str:
    """``_HIDDEN_WHOLE.sub(" ", text)``: at each step the leftmost of the next _HIDDEN match
    and the next unshown element (:func:`_unshown_after`; at the same place _HIDDEN's
    match, as its branches come first). Each search's answer is kept while it still lies
    ahead, so that no stretch of text is searched twice."""
    pieces: list[str] = []
    closers: dict[str, re.Match[str] | None] = {}
    pos, hidden, unshown = 0, _HIDDEN.search(text), _unshown_after(text, 0, closers)
    while hidden is not None or unshown is not None:
        if hidden is not None and (unshown is None or hidden.start() <= unshown[0]):
            start, end = hidden.span()
        else:
            assert unshown is not None
            start, end = unshown
        pieces += [text[pos:start], " "]
        pos = end
        if hidden is not None and hidden.start() < pos:
            hidden = _HIDDEN.search(text, pos)
        if unshown is not None and unshown[0] < pos:
            unshown = _unshown_after(text, pos, closers)
    return "".join(pieces) + text[pos:] if pieces else text


def _unshown_after(
    text: str, pos: int, closers: dict[str, re.Match[str] | None]
) -> tuple[int, int] | None:
    """The first unshown element at or after ``pos`` (its span), or None. ``closers``
    keeps each kind's next closer, found once for a run of openers."""
    while opener := _UNSHOWN_OPENER.search(text, pos):
        kind = opener["tag"] or opener[0]
        closer = closers.get(kind, opener)  # the opener: not searched yet
        if closer is not None and closer.start() < opener.end():
            closer = closers[kind] = _UNSHOWN_CLOSERS[kind].search(text, opener.end())
        if closer is not None and closer.start() - opener.end() <= _UNSHOWN_SPAN:
            return opener.start(), closer.end()
        pos = opener.start() + 1
    return None


def _may_hide(text: str) -> bool:
    """Whether a part of :data:`_HIDDEN` may be in ``text`` (a quick test before it)."""
    return (
        ("\\" in text and _MAY_HIDE_TEX.search(text) is not None)
        or ("<" in text and _MAY_HIDE_TAG.search(text) is not None)
        or ("%" in text and _COMMENT_LINE.search(text) is not None)
        or any(word in text for word in _HIDE_WORDS)
    )


def _without_comments(text: str) -> str:
    """``text`` less its ``<!-- ... -->`` comments; an unclosed one hides the rest of the
    text, as it does rendered."""
    pieces, pos = [], 0
    while (opened := text.find("<!--", pos)) >= 0:
        pieces += [text[pos:opened], " "]
        closed = text.find("-->", opened + 4)
        if closed < 0:
            return "".join(pieces)
        pos = closed + 3
    pieces.append(text[pos:])
    return "".join(pieces)


def gold_strings(ground_truth: Any, verifier: str) -> tuple[str, ...]:
    """The acceptable answers in a ground truth: a string, a number, or a list of those.

    Raises InvalidSampleError (the row becomes ``invalid``) for a missing or unusable
    ground truth, naming the verifier, so a data bug never reads as a wrong answer.
    """
    items = ground_truth if isinstance(ground_truth, list | tuple) else (ground_truth,)
    if not items:
        raise InvalidSampleError(f"{verifier}: ground_truth is an empty list")
    return tuple(_gold_string(item, verifier) for item in items)


def _gold_string(value: Any, verifier: str) -> str:
    if value is None:
        raise InvalidSampleError(f"{verifier}: ground_truth is missing (None)")
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise InvalidSampleError(f"{verifier}: ground_truth is an empty string")
        return text
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)  # repr keeps 0.1 as "0.1", which Fraction reads exactly
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < _MAX_INT_GOLD:
        return str(value)
    raise InvalidSampleError(
        f"{verifier}: ground_truth must be a string, a finite number or a list of those,"
        f" got {type(value).__name__} {_clip(repr(value), 60)}"
    )


def last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of ``pattern`` in the last SEARCH_TAIL_CHARS of ``text``.

    Windows double from the end: answers sit at the end of a response, so this usually
    reads a few KB; with no match it reads the tail about twice. A match touching a
    window's left edge may be cut short, so the window grows past it.
    """
    floor = max(0, len(text) - SEARCH_TAIL_CHARS)
    window = _SEARCH_WINDOW
    while True:
        start = max(floor, len(text) - window)
        found = None
        for match in pattern.finditer(text, start):
            found = match
        if start == floor or (found is not None and found.start() > start):
            return found
        window *= 2


def section_start(text: str, at: int) -> int:
    """Where the concluding section of an answer found at ``at`` begins: the start of
    its paragraph (after its last blank line, at most SEARCH_TAIL_CHARS back); when that
    paragraph is a bare answer (:func:`bare_answer`), the start of the bare answers
    right before it: ``**18**`` then a blank line then ``**20**`` offers two final
    answers, never a step then the answer."""
    floor = max(0, at - SEARCH_TAIL_CHARS)
    found = last_match(PARAGRAPH_BREAK, text[floor:at])
    start = floor if found is None else floor + found.end()
    if at - start > _BARE_CHARS or not bare_answer(text[start : _paragraph_end(text, start)]):
        return start  # an answer said among words: the paragraphs before it are steps
    for _ in range(_MAX_BARE_PARAGRAPHS):
        before = _paragraph_before(text, start)
        if before is None or not bare_answer(text[before[0] : before[1]]):
            break
        start = before[0]
    return start


_MAX_BARE_PARAGRAPHS = 8
_BARE_CHARS = 400  # a bare answer is short: longer paragraphs are steps


def _paragraph_end(text: str, start: int) -> int:
    """Where the paragraph starting at ``start`` ends (its first _BARE_CHARS and a bit:
    a longer one is no bare answer, and is cut)."""
    brk = PARAGRAPH_BREAK.search(text, start, start + _BARE_CHARS + 2)
    return min(len(text), start + _BARE_CHARS + 2) if brk is None else brk.start()


def _paragraph_before(text: str, start: int) -> tuple[int, int] | None:
    """Where the paragraph before the one starting at ``start`` begins and ends, when it
    is at most _BARE_CHARS long (None: none, or a longer one). Blank lines between them,
    however many (up to _GAP_CHARS), separate nothing more than one does."""
    low = max(0, start - _GAP_CHARS)
    end = low + len(text[low:start].rstrip())
    floor = max(low, end - _BARE_CHARS - 2)
    if end == low or (floor == low and low > 0):
        return None  # nothing before, or only blanks back to the window's edge
    found = last_match(PARAGRAPH_BREAK, text[floor:end])
    if found is None:
        return (0, end) if floor == 0 else None  # longer than _BARE_CHARS: a step
    return floor + found.end(), end


_GAP_CHARS = 1 << 16


# One answer alone on its line: a box, a bold value, "#### n", an <answer> tag, or an
# answer line with a short value ("The answer is 18.", "**Answer:** B"), in markdown marks
_BARE_MARKED = (
    r"(?:\*\*[^*\n]{1,80}\*\*|\$*(?:\\\[)?[ \t]{0,3}\\(?:boxed|fbox)\{[^\n]{0,80}\}[ \t]{0,3}"
    r"(?:\\\])?\$*|####[^\n]{1,40}|<answer>[^\n]{0,80}</answer>)"
)
_BARE_LEAD = (  # (in Chinese too: "答案：B", "最终答案是 18")
    r"(?:(?i:(?:the[ \t]+)?(?:final[ \t]+)?answer(?:[ \t]+is)?)|(?:最终|最終)?答案[是为為]?)"
    r"[ \t]{0,3}(?:\*\*)?[ \t]{0,3}[:：]?[ \t]{0,3}(?:\*\*)?[ \t]{0,3}"
)
_BARE_LINE = re.compile(
    rf"[ \t>*#-]{{0,8}}(?:{_BARE_LEAD}(?:{_BARE_MARKED}|[^\s*][^\n*]{{0,39}})?|{_BARE_MARKED})"
    r"[ \t.]{0,3}"
)
_FENCE = re.compile(r"(?m)^[ \t]{0,3}```[^\n`]{0,20}$")


def bare_answer(paragraph: str) -> bool:
    """Whether a paragraph is only final answers, one a line (``**18**``, ``\\boxed{18}``,
    ``#### 18``, ``<answer>18</answer>``, "The answer is 18."; in a code block too): no
    step on the way, which would hold words or math besides. A heading alone
    (``**Final Answer**``) is bare too, as is a rule (``---``, ``<br>``): no value."""
    if "```" in paragraph:
        paragraph = _FENCE.sub("", paragraph)
    lines = [line for line in paragraph.split("\n") if not _SEPARATOR_LINE.fullmatch(line)]
    return all(_BARE_LINE.fullmatch(line.rstrip()) for line in lines)  # a rule alone: bare


# a blank line, a markdown rule ("---", "***") or a break ("<br>", "<hr/>"): no value
_SEPARATOR_LINE = re.compile(r"\s*(?:[-*_=~]{3,}|<(?i:br|hr)\s*/?>)?\s*")


def unread_answer(text: str, section: int, read_from: int, *, boxes: bool = True) -> bool:
    """Whether ``text[section:read_from]``, the start of a concluding section longer than
    what was read for other answers, holds anything that may be one (an answer stating
    a value or a letter, ``#### n``, with ``boxes`` a box). Then the final answer cannot be vouched for: a hedge
    hidden behind a few KB of filler in one paragraph is still a hedge, never the last
    value. (The MATH rules read a section's boxes further back, so pass ``boxes=False``.)"""
    if section >= read_from:
        return False
    if _MAYBE_ANSWER.search(text, section, read_from) is not None:
        return True
    return boxes and _MAYBE_BOX.search(text, section, read_from) is not None


def rest_of_paragraph(text: str, start: int) -> str:
    """Up to AFTER_ANSWER_CHARS of ``text`` from ``start``, cut at the next blank line."""
    window = text[start : start + AFTER_ANSWER_CHARS]
    brk = PARAGRAPH_BREAK.search(window)
    return window if brk is None else window[: brk.start()]


def later_paragraphs(text: str, start: int) -> str:
    """Up to AFTER_ANSWER_CHARS of ``text`` after the paragraph that ``start`` is in (or
    "" when it does not end within AFTER_ANSWER_CHARS): where a correction ("Wait,
    actually it's 20.") or an offer ("Or maybe 20.") follows a final answer."""
    window = text[start : start + 2 * AFTER_ANSWER_CHARS]
    brk = PARAGRAPH_BREAK.search(window)
    return "" if brk is None else window[brk.end() : brk.end() + AFTER_ANSWER_CHARS]


def plain_number(text: str) -> Fraction | None:
    """The exact value of a GSM8K-style number; ``,`` and ``$`` anywhere are ignored."""
    cleaned = text.replace(",", "").replace("$", "").strip()
    if len(cleaned) > MAX_ANSWER_CHARS or not _PLAIN_NUMBER.fullmatch(cleaned):
        return None
    # Fraction(cleaned) from its parts: the same value, without Fraction's string parser
    # (a regex and more), which cost a twentieth of extraction
    whole, dot, decimals = cleaned.partition(".")
    if not dot:
        return Fraction(int(cleaned))
    digits = int(whole.lstrip("-") + decimals)  # "-.5": 5; "12.": 12
    return Fraction(-digits if whole.startswith("-") else digits, 10 ** len(decimals))


def verdict(correct: bool, pred: str | None, **extra: Any) -> Verdict:
    """A 1/0 verdict with verl's reward_extra_info (``acc``, ``pred``) plus ``extra``."""
    info: dict[str, Any] = {"acc": correct, "pred": None if pred is None else _clip(pred)}
    info.update(extra)
    return Verdict(score=1.0 if correct else 0.0, extra=info)


def _clip(text: str, limit: int = MAX_ANSWER_CHARS) -> str:
    """Keep logged answers small: a 1 MB "answer" must not bloat every output row."""
    return text if len(text) <= limit else text[:limit] + "…"
