"""Exact-match QA (Search-R1's data sources ``searchR1_nq``, ``searchR1_hotpotqa``, ...).

verl's ``search_r1_like_qa_em`` semantics, read from the conclusion (after the last
``</think>``: :mod:`~rewardkit.verifiers._final`): the answer is the last
``<answer>...</answer>`` span, and two spans that normalise differently are hedging
(score 0, ``hedged``) unless ``answers="last"`` (verl's reading,
``reward.verifiers.search_qa.answers: last``); the format's placeholder (``<answer>
answer here </answer>``) is no span. It scores 1 when, after SQuAD normalisation (lower case, punctuation and the
articles a/an/the removed, whitespace collapsed), it equals one of the ground truth's
``target`` answers, and 0 otherwise (also when there is no answer). Unlike verl, an
answer that normalises to nothing (empty, "the", ".") never matches a target that
normalises to nothing too (blood type "A"): such a target keeps its articles; and a
target's last word "a"/"an"/"the" is a letter or name, not an article ("Vitamin A" is
not "Vitamin"); and the numbers written must be the same numbers (:func:`numbers`): SQuAD
drops the marks that make them, so verl credits -5 for 5, 1.2 for 12, 1/2 for 12, 20:00
for 2000. A response with
more than 10 opening or closing answer tags earns a quarter of a correct score, so
spamming tags does not pay. Everything here is linear in the response: no regex with
``.*?`` spans, no worker needed.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers import _repetition
from rewardkit.verifiers._commitment import undercut
from rewardkit.verifiers._common import MAX_ANSWER_CHARS, calls_wrong, disowns_answer, unhidden
from rewardkit.verifiers._final import answering_texts, closing_correction
from rewardkit.verifiers.base import NO_CONTEXT, Context, Extracted, Verdict

__all__ = ["SearchQAVerifier", "normalize_answer"]

_OPEN, _CLOSE = "<answer>", "</answer>"
_MAX_TAGS = 10  # verl: more tags than this earn score / 4
_ARTICLES = re.compile(r"\b(a|an|the)\b")
# An article needs a word after it: a last "a" is a letter ("Vitamin A", "Type A").
_INNER_ARTICLES = re.compile(r"\b(a|an|the)\b(?=\W*\w)")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation, in verl's order: lower, strip punctuation, articles, spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


@dataclass(frozen=True, slots=True)
class SearchQAVerifier:
    """Score 1.0 when the last ``<answer>`` equals a target after normalisation, else 0.0.

    The ground truth is verl's ``{"target": [answers]}`` (a string or list of strings),
    or the answers themselves. ``answers`` (``reward.verifiers.search_qa.answers``):
    ``"hedged"``, two different answer tags score 0; ``"last"``, verl's reading.
    """

    reads_context: ClassVar[bool] = True  # extract(response, context): see base.Context

    answers: Literal["hedged", "last"] = "hedged"

    @property
    def key(self) -> str:
        return "search_qa_em" if self.answers == "hedged" else "search_qa_em:last"

    def extract(self, response: str, context: Context = NO_CONTEXT) -> Extracted:
        """The last complete ``<answer>...</answer>`` span (stripped) of the conclusion
        (:func:`~rewardkit.verifiers._final.answering_texts`), and the tag counts. With
        ``answers="hedged"`` (the default), another non-blank span of the conclusion that
        normalises differently, or an answer not asserted, is hedging: no answer (``hedged``,
        :func:`_hedged`)."""
        response = _repetition.unpadded(response)  # a decoder's padding is no text of it
        opens, closes = response.count(_OPEN), response.count(_CLOSE)
        extra: dict[str, Any] = {"answer_tags": max(opens, closes)}
        if _repetition.degenerate(response):  # a loop to the end: no answer
            return Extracted(None, {**extra, "degenerate": 1})
        # hidden text removed (a hidden or commented-out tag answers nothing), the rest
        # compared character for character
        for text in answering_texts(unhidden(response), context, rendered=False):
            spans = _answers(text)
            if not spans:
                continue
            answer = spans[-1]
            if self.answers == "hedged" and _hedged(text, spans):
                return Extracted(None, {**extra, "hedged": True, "pred": answer[:MAX_ANSWER_CHARS]})
            return Extracted(answer, extra)
        return Extracted(None, extra)

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Always decides: a string comparison."""
        answer = extracted.answer
        targets = _targets(ground_truth)  # a bad ground truth is invalid, hedged or not
        if extracted.extra.get("hedged"):
            return Verdict(0.0, {"acc": False, "pred": extracted.extra.get("pred"), "hedged": True})
        correct = answer is not None and _matches(answer, targets)
        tags = int(extracted.extra.get("answer_tags", 0))
        score = (0.25 if tags > _MAX_TAGS else 1.0) if correct else 0.0
        pred = None if answer is None else answer[:MAX_ANSWER_CHARS]
        return Verdict(score, {"acc": correct, "pred": pred})

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        return self.quick_check(extracted, ground_truth)


def _hedged(text: str, spans: list[str]) -> bool:
    """Whether the conclusion ``text``, whose answer tags hold ``spans``, gives more than
    one answer or does not assert the last: two tags or a later answer (another tag, a
    box, an answer line) that normalise differently, a correction after the tag
    ("Actually, it's $Lyon$."), the answer called wrong ("Hmm, Paris is wrong."), denied
    or doubted before the tag ("It's not the <answer>", "I don't think it's ..."),
    disowned or doubted after it ("Wait, that's not right.", "It could also be ..."), or
    asked (``<answer>Paris?</answer>``)."""
    answer = spans[-1]
    said = {normalize_answer(span) for span in spans if span}
    closing = _closing_value(text, answer)
    if closing is not None:
        said.add(normalize_answer(closing.strip("$")))
    last_open = text.rfind(_OPEN)
    after = text.find(_CLOSE, last_open) + len(_CLOSE) if last_open >= 0 else 0
    said.update(
        normalize_answer(later)
        for later in _later_answers(text[after:])
        if not _restated(later, answer)  # "The answer is Paris, the capital.": the same
    )
    same = _same_answer(answer)
    return (
        len(said) > 1
        or calls_wrong(text, after, same, words=True)
        or (
            undercut(text, last_open)
            and not _NO_DOUBT.search(text, max(0, last_open - 80), last_open)
        )
        or disowns_answer(text, after, same)
        or _DOUBT_AFTER.search(text, after, after + _DOUBT_CHARS) is not None
        or _ALTERNATIVE_RIGHT_AFTER.match(text, after) is not None
    )


def _closing_value(text: str, answer: str) -> str | None:
    """The value a last sentence gives after the tag (:func:`closing_correction`): after a
    correction cue ("Actually, it's Lyon."), or of a few words of its own ("It's 1970."
    after 1969) when it is the same kind as the answer, a number for a number: "It was
    built in 1889." after "Eiffel Tower" is a fact about it, not another answer."""
    after = text.rfind(_CLOSE)
    cued = closing_correction(text, after, words=True, any_lead=False)
    if cued is not None:
        return cued
    loose = closing_correction(text, after, words=True)
    if loose is None or bool(_DIGIT.search(loose)) != bool(_DIGIT.search(answer)):
        return None
    return loose


def _same_answer(answer: str) -> Callable[[str], bool | None]:
    """Whether words named in prose ("Paris", "$Paris$") are ``answer``, normalised."""
    return lambda value: normalize_answer(value.strip("$")) == normalize_answer(answer)


def _matches(answer: str, targets: list[str]) -> bool:
    """SQuAD exact match, stricter in two ways (it never credits what verl would not).

    A last-word article is kept (:func:`_keep_last_article`), and an answer normalised
    to nothing matches nothing.

    A target of only articles or punctuation ("A", "The", "!!!") normalises to "" as
    an empty ``<answer></answer>`` does, and verl credits that pair; here such a target
    is compared with its articles kept, so "a" or "A." matches "A" and "the" does not.
    """
    normalized, tail_kept = normalize_answer(answer), _keep_last_article(answer)
    for target in targets:
        gold = normalize_answer(target)
        if gold:
            if (
                normalized == gold
                and tail_kept == _keep_last_article(target)
                and numbers(answer) == numbers(target)
            ):
                return True
        elif _loose(target) and _loose(answer) == _loose(target):
            return True
    return False


def numbers(text: str) -> list[str]:
    """The numbers ``text`` writes, each with the marks that make it that number: a sign,
    a decimal point, a fraction bar, a colon, a dash or comma between digits, a percent
    sign (``"-5"``, ``"1.2"``, ``"1/2"``, ``"20:00"``, ``"19-84"``, ``"5%"``). Thousands
    commas are dropped (``"1,000"`` is 1000), dashes are one dash, a plus sign is none.
    A hyphen after a word is no sign ("COVID-19" writes 19)."""
    found = []
    for match in _NUMBER.finditer(text):
        token = _THOUSANDS.sub(lambda group: group.group().replace(",", ""), match.group())
        token = _DASHES.sub("-", token).lstrip("+")
        found.append(token.replace(" ", "").replace("\u00a0", "").replace("\u202f", ""))
    return found  # ("50 %", as French and SI write it, is 50%)


# A number: an optional sign (not after a letter or digit: "COVID-19" is 19), digits, more
# digits after a mark between them, an optional percent sign.
_NUMBER = re.compile(
    r"(?<![\w.,:/\-‐-―−])[-+‐-―−]?\.?\d+(?:[.,:/\-‐-―−]\d+)*(?:[ \u00a0\u202f]?%)?"
)
_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")
_DASHES = re.compile("[‐-―−]")


def _keep_last_article(text: str) -> str:
    """SQuAD's normalisation, but a last word "a", "an" or "the" stays: it names something.

    Required as well as the SQuAD match (so never credits more than verl): "Vitamin"
    is not "Vitamin A", though SQuAD reads both as "vitamin".
    """
    return " ".join(_INNER_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def _loose(text: str) -> str:
    """Lower case, punctuation dropped unless that leaves nothing, spaces collapsed."""
    lowered = text.lower()
    return " ".join(lowered.translate(_PUNCTUATION).split()) or " ".join(lowered.split())


def _answers(response: str) -> list[str]:
    """What ``re.finditer(r"<answer>(.*?)</answer>", s, re.S)`` finds (stripped), in one
    pass; the format's placeholder (``<answer> answer here </answer>``) is none."""
    found, position = [], 0
    while (start := response.find(_OPEN, position)) >= 0:
        end = response.find(_CLOSE, start + len(_OPEN))
        if end < 0:
            break
        span = response[start + len(_OPEN) : end].strip()
        if not _PLACEHOLDER.fullmatch(span):
            found.append(span)
        position = end + len(_CLOSE)
    return found


# An answer given after the last tag in another form: a tag written otherwise (<ANSWER>,
# <answer >), a box, or a line "Final answer: X" / "The answer is X" (markdown allowed)
_LATER_ANSWER = re.compile(
    r"<\s{0,3}(?i:answer)\s{0,3}>(?P<tag>[^<\n]{1,200})<\s{0,3}/\s{0,3}(?i:answer)\s{0,3}>"
    r"|\\boxed\{(?P<box>[^{}\n]{1,200})\}"
    r"|(?m:^)[ \t>#*_-]{0,6}(?i:(?:the\s{1,3})?(?:final\s{1,3})?answer(?:\s{1,3}is)?)[ \t*_]{0,4}"
    r"[:：]?[ \t*_]{0,4}(?P<line>[^\n*]{1,200}?)[ \t*_.!]*$",
    re.MULTILINE,
)
_LATER_CHARS = 2000  # after the last tag: the text read for later answers
_MAX_LINE_WORDS = 6
_POINTER = re.compile(
    r"(?i)(?:in|above|below|provided|given|shown|as|that|this|it|here|there|within|inside"
    r"|correct|right|wrong|not|unknown|unclear)\b"
)


def _later_answers(after: str) -> list[str]:
    """The answers given after the last ``<answer>`` tag in another form (see
    :data:`_LATER_ANSWER`): with the tag's, two different ones are hedging."""
    found = []
    for match in _LATER_ANSWER.finditer(after[:_LATER_CHARS]):
        value = (match.group("tag") or match.group("box") or match.group("line") or "").strip()
        if match.group("line") and (len(value.split()) > _MAX_LINE_WORDS or _POINTER.match(value)):
            continue  # a sentence ("The answer is given in the tag above"), not an answer
        if value and not _PLACEHOLDER.fullmatch(value):
            found.append(value)
    return found


# After the tag, a sentence that opens by offering another answer or doubting the tag's:
# "It could also be X.", "Alternatively: X.", "Or maybe X.", "However, I believe ..." (not
# words inside an explanation: "The name may also be spelled ...", "Mount Everest,
# alternatively known as Sagarmatha", "37 million (or possibly more)")
_DOUBT_AFTER = re.compile(
    r"(?im)(?:^|(?<=[.!?]))[ \t*_>]*(?:"
    r"(?:it|this|that|the[ \t]+answer)[ \t]+(?:could|might|may)[ \t]+also[ \t]+be\b"
    r"|alternatively\b|or[ \t]+(?:maybe|perhaps|possibly|else)\b"
    r"|however,?[ \t]+I[ \t]+(?:believe|think|suspect)\b)"
)
_DOUBT_CHARS = 600
# right after the tag: "<answer>X</answer> (or maybe Y)"
_ALTERNATIVE_RIGHT_AFTER = re.compile(r"(?i)[ \t]*\([ \t]*or[ \t]+(?:maybe|perhaps|possibly)\b")
# "There is no doubt: <answer>", "without a doubt": certainty, not doubt
_NO_DOUBT = re.compile(r"(?i)\b(?:no|little|without[ \t]+(?:a|any))[ \t]+doubt\b")
_DIGIT = re.compile(r"\d")


def _restated(later: str, answer: str) -> bool:
    """Whether a later answer line gives the tag's answer again with detail after it ("the
    Eiffel Tower, located in Paris", "Eiffel Tower (324 m)"): the words before its first
    comma, parenthesis, semicolon or dash are the answer, and nothing after them offers
    or rules out another ("Paris, or maybe Lyon", "Paris, not Lyon": no restatement)."""
    head = _DETAIL.split(later, maxsplit=1)[0]
    detail = later[len(head) :]
    if not detail or _OTHER_OFFERED.search(detail):
        return False
    return normalize_answer(head) == normalize_answer(answer) != ""


_DETAIL = re.compile(r"[,(;:—–]|[ \t]-[ \t]")  # where a restated answer's detail begins
_OTHER_OFFERED = re.compile(
    r"(?i)\b(?:or|nor|not|maybe|perhaps|possibly|alternatively|either|unless|if|but|probably)\b"
)


_PLACEHOLDER = re.compile(
    r"(?i)(?:(?:your|the|final|my)\s+)*answer(?:\s+(?:goes\s+)?here)?|\.\.\.|…"
)


def _targets(ground_truth: Any) -> list[str]:
    value = ground_truth.get("target") if isinstance(ground_truth, Mapping) else ground_truth
    tolist = getattr(value, "tolist", None)
    if callable(tolist):  # verl's parquet rows hold numpy arrays
        value = tolist()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise InvalidSampleError(
            "search_qa: ground_truth must be {'target': [answers]} or a non-empty list of "
            f"strings, got {type(ground_truth).__name__}"
        )
    if not all(isinstance(item, str) for item in items):
        raise InvalidSampleError("search_qa: every target answer must be a string")
    return list(items)
