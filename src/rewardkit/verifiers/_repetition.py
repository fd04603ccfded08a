"""Degenerate responses: a collapsing policy's loop, recognised before any parse.

A policy that collapses writes the same thing until it runs out of tokens: ``\\boxed{}``
thousands of times, one boxed answer again and again, a sentence, a line or a word on a
loop, with small variations or none. Such a response *ends inside its loop*, so its
last characters are made of a handful of distinct words and symbols, where any text
that states something (prose, a derivation, a table of values, a list of numbers, code)
uses dozens within the same span.

The rule (:func:`degenerate`): without what follows its last word (:func:`content_end`:
blanks, zero-width characters, special tokens a decoder left in), the response has at
least :data:`SHORT_WINDOW_CHARS` characters, and its last :data:`WINDOW_CHARS`
characters (the window; all of a shorter response) or its last
:data:`SHORT_WINDOW_CHARS` (the short window: a loop of a short unit that began after a
derivation the window still holds) are a loop in one of three ways, or its end is near
copies of one unit (the fourth way):

- *few tokens*: the window holds at most :data:`MAX_DISTINCT_TOKENS` distinct tokens, a
  token being a run of at most :data:`TOKEN_CHARS` word characters (letters, digits,
  ``_``) or any other single non-space character; and the loop runs to the end: no token
  first appears in the last :data:`END_CHARS` characters, but the very last token (cut
  short). A loop's counter is no new token, in any numbering it counts in (Roman
  numerals, a letter or two capitals, Chinese numerals; digits are tokens seen before).
  The scan stops at the first token past the bound: on ordinary text a few dozen
  tokens decide it (microseconds), on a loop the window's 4,096 characters do.
- *one unit repeated*: with every number read as one (a loop's counter, "Step 41: ...
  Step 42: ...", makes each unit's tokens new), the window's last
  :data:`PERIOD_KEY_CHARS` characters came before, :data:`MIN_REPEATS` times or more
  within the window, the window equals itself shifted by that period on at least
  :data:`MIN_SAME` of its characters, and its last unit changes nothing that the unit
  before it had kept (a counter changes in every unit; a loop of ``\\boxed{1}`` that
  ends on ``\\boxed{2}`` offers a new value, as the first way's last characters do). A
  unit of a few sentences uses dozens of distinct words, which the first way allows no
  loop; a greedy policy's loop at its token limit is often such a unit (two paragraphs,
  "Step 43: We can rewrite $\\sqrt{53}$ as ... Since $\\"), and counts its steps. A unit longer
  than a third of the window (a "let me re-verify" paragraph holding the answer) is
  looked for in the last :data:`LONG_WINDOW_CHARS` characters, where its last
  :data:`MIN_REPEATS` units must repeat. Text that ends on a conclusion never repeats its own last
  characters a period before; a table or list of numbers in one format that runs to the
  very end, with no sentence after it, is read as a loop (it states no answer either).
- *it compresses away*: zlib packs the window to at most :data:`MAX_COMPRESSED` of its
  bytes, and nothing is new at its end (the first way's condition). A loop whose words
  vary (synonyms swapped in, "Attempt one-two", "Attempt one-three") is neither few
  tokens nor one exact unit, yet a compressor sees through it.
- *near copies*: in the response's last :data:`NEAR_WINDOW_CHARS` characters, its last
  :data:`MIN_REPEATS` units (a unit: from one place of a 48-character key, taken at the
  end or a little before it, to the next) are near copies, each of
  :data:`MIN_UNIT_CHARS` characters or more, of lengths within
  :data:`UNIT_LENGTH_SPREAD`, each adding at most :data:`MAX_NEW_SHARE` bytes per
  character to zlib's packing of the unit before it, the text's last 128 characters
  (what follows the key, when it was taken before the end) are a copy too; and nothing
  is new at the end of that window. A "let me re-verify" paragraph whose opener is
  reworded each time shifts the rest of its unit, so no fixed period matches and the window compresses to more
  than the third way's bound; and a loop that began less than a window before the cut
  leaves the derivation before it in the window, which defeats the three other ways.

Measured on the real outputs in ``tests/data/real_outputs`` (4,508 rows): 27 rows end in
a loop, 25 of them shorter than 4,096 characters (a word, ``\\ \\ \\``, quote junk,
a few-shot dialogue echoed, a whole solution again and again), each read by hand, and
no other row is flagged; the
long rows that are no loop pack to 0.22 of their bytes at least. On a public MATH-500
dump of Llama-3.1-8B-Instruct (greedy, 499 rows), 66 rows end in a loop, each cut at
the token limit (12 of them found only in the short window, 12 only by the fourth way);
the dump's own grader credited 4 of them, each for a number its extraction took out of
the loop (read by hand: no final answer is given). A response shorter than the short
window is left to the ordinary rules, whose work is bounded too. The one legitimate
text the rule would call a loop is a window of nothing but a matrix or table of two or
three values (a 33 x 33 identity matrix with no word after it).

One loop is no collapse: a response that ends on 2 to :data:`MAX_RESTATED` copies of one
unit of up to three lines stating its final answer, ending where a copy ends, stopped
after answering, and only its text before the copies is read for a loop. A held-out set
of 2,443 published outputs (Qwen2.5-Math harness dumps of Qwen2.5-Math-1.5B/7B and
Llama-3.1-8B, nobody here wrote them) has 42 such rows from one Llama harness ("The final
answer is $\\boxed{13}$." 6 to 8 times after a whole solution); 35 of them are read as
answers now, each verdict equal to the harness's own, and no row of the corpus or the
MATH-500 dumps changed (the other 7 loop before their copies).
"""

from __future__ import annotations

import operator
import re
import zlib

__all__ = [
    "END_CHARS",
    "MAX_COMPRESSED",
    "MAX_DISTINCT_TOKENS",
    "MAX_PERIODS_TRIED",
    "MIN_REPEATS",
    "MIN_SAME",
    "PERIOD_KEY_CHARS",
    "SHORT_WINDOW_CHARS",
    "TOKEN_CHARS",
    "WINDOW_CHARS",
    "content_end",
    "degenerate",
    "unpadded",
]

WINDOW_CHARS = 4096
"""How many of the response's last characters the first three ways read."""
SHORT_WINDOW_CHARS = 1024
"""A response shorter than this (without its padding) is never called a loop; the first
three ways also read its last characters this long: a loop that began less than
:data:`WINDOW_CHARS` before the end (after a derivation, or in a response of 1,500
characters, a policy's limit of 512 tokens) leaves other text in the longer window."""
MAX_DISTINCT_TOKENS = 20
"""At most this many distinct tokens in the window: the response is a loop."""
END_CHARS = 256
"""The loop must run to the end: no token first seen in the window's last END_CHARS
characters, but the very last one (cut short where the policy ran out of tokens). A loop
followed by an answer (``x x x ... So \\boxed{4}.``) is left to the ordinary rules."""
TOKEN_CHARS = 24
"""A longer run of word characters counts as several tokens (a long number, a sentence
written without spaces in a script that needs none, never one token for the window)."""

PERIOD_KEY_CHARS = 48
"""The window's last characters that must have come before, one period earlier."""
MIN_REPEATS = 3
"""The period fits this many times in the window at least."""
MAX_COMPRESSED = 0.10
"""The third way's bound: a window zlib packs to at most this share of its bytes. Prose
and derivations pack to 0.3-0.5, code to 0.25, a list of cases in one format to about
0.15; the real corpus's long rows that are no loop, to 0.22 at least; a greedy model's
loops with variations, to 0.02-0.10."""
LONG_WINDOW_CHARS = 16_384
"""The second way also looks for a longer unit, a paragraph or a few (up to a third of
this), in the response's last characters this long: a unit longer than a third of
:data:`WINDOW_CHARS` ("Let me re-verify ... \\boxed{42}", 2,000 characters, again and
again) fits the window fewer than :data:`MIN_REPEATS` times."""
MAX_PERIODS_TRIED = 8
"""Earlier places of the last characters tried as the period, nearest first."""
NEAR_WINDOW_CHARS = 65_536
"""The fourth way reads the response's last characters this long: units of up to a
quarter of it (16,384 characters: a "let me re-verify" paragraph or a few pages; zlib,
which compares two units, sees 32 KB back)."""
MIN_UNIT_CHARS = 64
"""The fourth way's shortest unit (shorter loops are the first three ways' part)."""
UNIT_LENGTH_SPREAD = 1.25
"""The fourth way's units are of lengths within this ratio of each other."""
MAX_NEW_SHARE = 0.08
"""A unit nearly a copy of the one before it adds at most this many bytes per character
to zlib's packing of it: a copy with its opener reworded adds 0.01-0.05, a paragraph of
new words 0.3 or more."""
_KEY_BACKS = (0, 256, 1024)  # the fourth way's keys end this far before the text's end
MIN_SAME = 0.95
"""The share of the window's characters equal to the one a period before (a loop varies
a little: "Let's try k = 91", then "Let's check k = 92")."""

_TOKEN = re.compile(rf"\w{{1,{TOKEN_CHARS}}}|[^\w\s]")
# A loop's counter in a numbering other than digits: Roman numerals ("(xcix)"), letters
# ("Case AB"), Chinese numerals ("第十二步"). Each unit writes a new one, so the first and
# third ways do not count one as a new token (a loop of "(i) \boxed{5} (ii) \boxed{5} ..."
# writes a new word every unit). The second way reads only digits as one (_NUMBER):
# reading these too would cost it a pass over the window on every text it reaches.
_COUNTER_WORD = (
    r"(?=[MDCLXVImdclxvi])(?:M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"
    r"|m{0,4}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3}))"
    r"|[A-Za-z]|[A-Z]{2}|第?[一二三四五六七八九十百千零〇两]+[步个條条项題题章节]?"
)
_COUNTER = re.compile(_COUNTER_WORD)
_NUMBER = re.compile(r"\d+")


def degenerate(response: str) -> bool:
    """Whether ``response`` ends in a loop (the module's rule); bounded work: at most
    :data:`WINDOW_CHARS` characters read by the first three ways, whatever the
    response's length."""
    end = content_end(response)
    if end < SHORT_WINDOW_CHARS or not _ends_in_a_loop(response, end):
        return False
    restated = _restated_answer(response, end)
    return restated < 0 or _ends_in_a_loop(response, restated)


def _ends_in_a_loop(response: str, end: int) -> bool:
    """Whether ``response[:end]`` ends in a loop in one of the module's four ways."""
    if end < SHORT_WINDOW_CHARS:
        return False
    return (
        any(_window_loops(response, end, size) for size in _window_sizes(end))
        or (
            end > WINDOW_CHARS + WINDOW_CHARS // MIN_REPEATS
            and _one_unit_repeated(
                response[max(0, end - LONG_WINDOW_CHARS) : end], WINDOW_CHARS // MIN_REPEATS + 1
            )
        )
        or (
            _near_copies(response[max(0, end - NEAR_WINDOW_CHARS) : end])
            and _nothing_new_at_the_end(response, end, window=NEAR_WINDOW_CHARS)
        )
    )


MAX_RESTATED = 16
"""A response whose last lines are one line stating its final answer (a box, "answer
is ..."), copied line for line at most this many times in a row and ending where a copy
ends, stopped after answering: a model that restates its answer a few times (a harness
that adds a line per "thought": a published Llama-3.1 dump ends 8 copies of "The final
answer is $\\boxed{13}$." after its solution), not one at its token limit, which writes far
more and is cut mid-line. Its text before the copies is read for a loop instead."""
_ANSWER_LINE = re.compile(r"\\boxed\s{0,4}\{\s{0,4}[^\s{}]|(?i:\banswer\b)[^\n]{0,40}\d")
_RESTATED_LINE_CHARS = 200


def _restated_answer(response: str, end: int) -> int:
    """Where the copies of :data:`MAX_RESTATED` begin (the end of the text before them),
    when ``response[:end]`` ends on 2 to that many copies of one unit of one to
    :data:`_RESTATED_UNIT_LINES` lines that states an answer (blank lines between copies
    allowed); else -1. Reads a window that holds more copies than allowed."""
    floor = max(0, end - (MAX_RESTATED + 2) * _RESTATED_UNIT_LINES * (_RESTATED_LINE_CHARS + 2))
    raw = response[floor:end].split("\n")
    lines = [line.strip() for line in raw]
    for size in range(1, _RESTATED_UNIT_LINES + 1):
        unit = lines[-size:]
        if "" in unit or any(len(line) > _RESTATED_LINE_CHARS for line in unit):
            break
        if not any(_ANSWER_LINE.search(line) for line in unit):
            continue
        copies, at = 0, len(lines)
        while at >= size and copies <= MAX_RESTATED:
            while at > size and not lines[at - 1] and copies:
                at -= 1  # blank lines between copies
            if lines[at - size : at] != unit:
                break
            copies, at = copies + 1, at - size
        if copies > MAX_RESTATED:
            return -1  # (a longer unit would be made of these copies: no smaller count)
        if copies >= 2:
            return floor + len("\n".join(raw[:at])) if at else -1
    return -1


_RESTATED_UNIT_LINES = 3


def _window_sizes(end: int) -> tuple[int, ...]:
    """The windows the first three ways read: the last :data:`WINDOW_CHARS` characters
    (all of a shorter response), and the last :data:`SHORT_WINDOW_CHARS` (a loop of a
    short unit that began less than a window before the end, after a derivation)."""
    if end <= SHORT_WINDOW_CHARS:
        return (end,)
    return (min(WINDOW_CHARS, end), SHORT_WINDOW_CHARS)


def _window_loops(response: str, end: int, size: int) -> bool:
    """Whether the window of ``size`` characters ending at ``end`` is a loop in one of
    the first three ways (few tokens, one unit repeated, it compresses away)."""
    window = response[end - size : end]
    return (
        _nothing_new_at_the_end(response, end, MAX_DISTINCT_TOKENS, window=size)
        or _one_unit_repeated(window)
        or (_compresses_away(window) and _nothing_new_at_the_end(response, end, window=size))
    )


def _near_copies(text: str) -> bool:
    """Whether ``text`` ends in :data:`MIN_REPEATS` near copies of one unit, each of
    :data:`MIN_UNIT_CHARS` or more (the module's fourth way). A unit runs from one
    place of a key (48 characters of the text's end, or of a little before it: the cut
    may fall in a part that varies) to the next; the units' lengths agree within
    :data:`UNIT_LENGTH_SPREAD`, and each adds at most :data:`MAX_NEW_SHARE` of its
    characters in bytes to zlib's packing of the unit before it. No unit needs the same
    length or the same characters at a fixed shift: an opener reworded ("Let me
    re-verify:", "Wait, let me re-check:") shifts the rest of its unit."""
    for back in _KEY_BACKS:
        key_end = len(text) - back
        if key_end < PERIOD_KEY_CHARS * (MIN_REPEATS + 1):
            return False
        key = text[key_end - PERIOD_KEY_CHARS : key_end]
        marks = [key_end]  # where the key ends, from the last place back
        while len(marks) <= MIN_REPEATS:
            found = text.rfind(key, 0, marks[-1] - PERIOD_KEY_CHARS)
            if found < 0:
                break
            marks.append(found + PERIOD_KEY_CHARS)
        if len(marks) <= MIN_REPEATS:
            continue  # most texts: their last characters are new
        units = [text[marks[at + 1] : marks[at]] for at in range(MIN_REPEATS)]
        sizes = [len(unit) for unit in units]
        if min(sizes) < MIN_UNIT_CHARS or max(sizes) > UNIT_LENGTH_SPREAD * min(sizes):
            continue
        if all(_adds_little(units[at + 1], units[at]) for at in range(MIN_REPEATS - 1)):
            # and the loop runs to the end: the last characters are a copy too (a key
            # taken before the end says nothing of what follows it: a conclusion after
            # three printouts of one matrix, each step's, is no loop)
            return _adds_little(units[0], text[-_LOOP_TAIL_CHARS:], _LOOP_TAIL_SHARE)
    return False


_LOOP_TAIL_CHARS = 128
_LOOP_TAIL_SHARE = 0.14
# a copy of 128 characters costs zlib a few matches and literals: 0.12 at most on the public
# MATH-500 loops; a conclusion after three printouts of a matrix, 0.17 or more


def _adds_little(before: str, unit: str, share: float = MAX_NEW_SHARE) -> bool:
    """Whether ``unit`` is nearly a copy of ``before``: zlib, having packed ``before``,
    packs it in at most ``share`` bytes a character (a new paragraph costs about a third
    of its characters). An exact copy is one, whatever zlib finds."""
    if unit == before:
        return True
    first = before.encode("utf-8", "replace")
    both = first + unit.encode("utf-8", "replace")
    # level 6: level 1 skips most places inside a long match, and so packs a copy of a
    # unit of thousands of characters in a tenth of its bytes, not a hundredth. Level 6
    # follows 128 earlier places of each 3-byte prefix; in a text of few symbols (a 0/1
    # string, a CJK alphabet of three) each has thousands, and the copy one unit back is
    # not among them (0.16 bytes a character for an exact copy of 2,500 binary digits):
    # level 9 follows 4,096 (0.01), at a cost that grows with the units (1 ms for 5 KB)
    for level in (6, 9) if len(both) <= _DEEP_SEARCH_BYTES else (6,):
        added = len(zlib.compress(both, level)) - len(zlib.compress(first, level))
        if added <= share * len(unit):
            return True
    return False


_DEEP_SEARCH_BYTES = 8_192  # level 9 on two units this long at most (a few ms)


# What may follow a response's last word without being written by the policy: blanks,
# zero-width characters, and special tokens a decoder left in (a padded batch decoded
# with its pad tokens: "<|endoftext|>" x 400 after the answer), spelled backwards: the
# end of the response is read backwards, from one place only (no search, linear).
_PADDING_BACKWARDS = re.compile(
    r"(?:[\s\u200b\u200c\u200d\u2060\ufeff]"
    r"|>\|[^\s|<>]{1,40}\|<"  # <|endoftext|>, <|im_end|>, <|eot_id|>
    r"|>\uff5c[^\s<>]{1,40}\uff5c<"  # DeepSeek's <｜end▁of▁sentence｜>, <｜▁pad▁｜>
    r"|(?i:>(?:s|soe|dap|knu|sob|toe|nrut_fo_dne)/?<)"  # </s>, <s>, <eos>, <pad>, <unk>
    r"|\](?:DAP|PES|SLC|SOE|KNU)\[)+"  # [PAD], [SEP], [CLS], [EOS], [UNK]
)
_PADDING_LAST = frozenset(" \t\n\r\f\v\u200b\u200c\u200d\u2060\ufeff>]")
_PADDING_CHUNK = 65_536  # the end is read backwards in chunks this long


def content_end(response: str) -> int:
    """Where ``response``'s content ends: before its trailing blanks, zero-width characters
    and special tokens (``<|endoftext|>``, ``<|im_end|>``, ``<｜end▁of▁sentence｜>``,
    ``</s>``, ``<eos>``, ``<pad>``, ``<unk>``, ``[PAD]``), however many (a padded batch
    decoded with its pad tokens, at a 32k-token limit). Without any (the usual case), its
    length, with nothing copied; else linear: each chunk is read once."""
    if response[-1:].isspace():  # blanks alone, however many: in C (a copy only then)
        response = response.rstrip()
    end = len(response)
    while end and response[end - 1] in _PADDING_LAST:
        start = max(0, end - _PADDING_CHUNK)
        padding = _PADDING_BACKWARDS.match(response[start:end][::-1])
        if padding is None:
            break
        end -= padding.end()
        if end - start > 64:  # stopped inside the chunk: at the content (a token cut
            break  # at the chunk's edge stops the match near it: read on from there)
    return end


def unpadded(response: str) -> str:
    """``response`` without the special tokens and zero-width characters a decoder left
    after its last word (:func:`content_end`), so that answers are read as the policy
    wrote them ("Answer: 34<|im_end|><|endoftext|>..." answers 34); the response itself
    when it ends otherwise (blanks alone stay: every reader strips them)."""
    end = content_end(response)
    if not response[end:].strip():
        return response
    return response[:end]


def _compresses_away(window: str) -> bool:
    """Whether zlib packs ``window`` to at most :data:`MAX_COMPRESSED` of its bytes (the
    module's third way): 30 microseconds a window, in C."""
    data = window.encode("utf-8", "replace")
    return len(zlib.compress(data, 1)) <= MAX_COMPRESSED * len(data)


def _one_unit_repeated(window: str, min_period: int = 1) -> bool:
    """Whether ``window``, its numbers read as one, repeats one unit to its end (the
    module's second way). The whole window repeats; with a ``min_period`` (a long unit,
    in a longer window), its last :data:`MIN_REPEATS` units do (they hold more than
    :data:`WINDOW_CHARS` characters: a list that ends a text is no such loop)."""
    if not _end_came_before(window):
        return False  # most texts, without reading their numbers as one
    text = _NUMBER.sub("0", window)
    key = text[-PERIOD_KEY_CHARS:]
    end = len(text) - min_period
    for _ in range(MAX_PERIODS_TRIED):  # the shortest period first; a unit may repeat a
        earlier = text.rfind(key, 0, end)  # sentence inside it ("Wait, ... Wait, ...")
        period = len(text) - PERIOD_KEY_CHARS - earlier
        if earlier < 0 or period * MIN_REPEATS > len(text):
            return False  # most texts: their last characters are new
        looped = text if min_period == 1 else text[-MIN_REPEATS * period :]
        if _periodic(looped, period):
            return not _new_at_the_end(window, period)
        end = earlier + PERIOD_KEY_CHARS - 1
    return False


def _end_came_before(window: str) -> bool:
    """Whether the longest digit-free piece of the window's last :data:`PERIOD_KEY_CHARS`
    characters is found earlier in it: the second way's key, numbers read as one, holds
    that piece as written, so it cannot come before unless the piece does (the test is
    exact, and costs a search where reading the numbers costs a pass over the window)."""
    tail = window[-PERIOD_KEY_CHARS:]
    piece = max(_NUMBER.split(tail), key=len)
    if not piece:
        return True  # digits only: the full reading decides
    at = len(window) - len(tail) + tail.rindex(piece)
    return window.find(piece, 0, at + len(piece) - 1) >= 0


def _periodic(text: str, period: int) -> bool:
    shifted, original = text[period:], text[:-period]
    return shifted == original or sum(map(operator.eq, shifted, original)) >= MIN_SAME * len(
        shifted
    )


_PIECE = re.compile(r"\d+|\D")  # a number or one other character: one of the text's characters


def _new_at_the_end(window: str, period: int) -> bool:
    """Whether the last unit changes something the unit before it had kept: a loop of
    ``\\boxed{1}`` that ends on ``\\boxed{2}`` gives a new value, not a loop's counter (a
    counter changes in every unit). The very last piece may be cut short."""
    pieces = _PIECE.findall(window)  # the normalised text, piece for character
    last = len(pieces) - 1
    for at in range(len(pieces) - period, len(pieces)):
        piece, before, earlier = pieces[at], pieces[at - period], pieces[at - 2 * period]
        if piece == before or (at == last and before.startswith(piece)):
            continue
        if before == earlier:
            return True
    return False


_COUNTER_CHARS = 12
_A_COUNTER = " counter"  # (no token holds a space)


def _nothing_new_at_the_end(
    response: str, end: int, max_distinct: int | None = None, window: int = WINDOW_CHARS
) -> bool:
    """Whether no token first appears in the window's last :data:`END_CHARS` characters
    but the very last one (cut short); with ``max_distinct``, False as soon as the window
    holds more distinct tokens than that (the module's first way: on ordinary text, a few
    dozen tokens decide it). The window is the response's last ``window`` characters
    (the fourth way's: a long unit's words came a unit before)."""
    tail_from = end - END_CHARS
    seen: set[str] = set()
    late: list[str] = []  # tokens that start in the last END_CHARS, first seen there
    token = ""
    for found in _TOKEN.finditer(response, max(0, end - window), end):
        token = found.group()
        if token in seen:
            continue
        if token.isalpha() and len(token) <= _COUNTER_CHARS and _COUNTER.fullmatch(token):
            token = _A_COUNTER  # a new one in every unit of a loop: no new word
            if token in seen:
                continue
        if found.start() >= tail_from:
            late.append(token)
        seen.add(token)
        if max_distinct is not None and len(seen) > max_distinct:
            return False
    return len(late) <= 1 and (not late or late[0] == token)
