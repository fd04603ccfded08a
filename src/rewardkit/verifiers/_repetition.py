"""Degenerate responses: a collapsing policy's loop, recognised before any parse.

A policy that collapses writes the same thing until it runs out of tokens: ``\\boxed{}``
thousands of times, one boxed answer again and again, a sentence, a line or a word on a
loop, with small variations or none. Such a response *ends inside its loop*, so its
last characters are made of a handful of distinct words and symbols, where any text
that states something (prose, a derivation, a table of values, a list of numbers, code)
uses dozens within the same span.

The rule (:func:`degenerate`): without its trailing blanks, the response has at least
:data:`WINDOW_CHARS` characters, and its last :data:`WINDOW_CHARS` characters (the
window) are a loop in one of two ways:

- *few tokens*: the window holds at most :data:`MAX_DISTINCT_TOKENS` distinct tokens, a
  token being a run of at most :data:`TOKEN_CHARS` word characters (letters, digits,
  ``_``) or any other single non-space character; and the loop runs to the end: no token
  first appears in the last :data:`END_CHARS` characters, but the very last token (cut
  short). The scan stops at the first token past the bound: on ordinary text a few dozen
  tokens decide it (microseconds), on a loop the window's 4,096 characters do.
- *one unit repeated*: with every number read as one (a loop's counter, "Step 41: ...
  Step 42: ...", makes each unit's tokens new), the window's last
  :data:`PERIOD_KEY_CHARS` characters came before, :data:`MIN_REPEATS` times or more
  within the window, the window equals itself shifted by that period on at least
  :data:`MIN_SAME` of its characters, and its last unit changes nothing that the unit
  before it had kept (a counter changes in every unit; a loop of ``\\boxed{1}`` that
  ends on ``\\boxed{2}`` offers a new value, as the first way's last characters do). A unit of a few sentences uses dozens of distinct
  words, which the first way allows no loop; a greedy policy's loop at its token limit is
  often such a unit (two paragraphs, "Step 43: We can rewrite $\\sqrt{53}$ as ... Since
  $\\"), and counts its steps. Text that ends on a conclusion never repeats its own last
  characters a period before; a table or list of numbers in one format that runs to the
  very end, with no sentence after it, is read as a loop (it states no answer either).

Measured on the real outputs in ``tests/data/real_outputs`` (4,508 rows, 22 of them
4,096 characters or more): the one row under the bound is a loop (``traffic traffic
...``); the next has 25 distinct tokens (a loop whose window still holds its preamble),
and no row that states an answer has fewer than 130. A shorter loop is left to the
ordinary rules, whose work is bounded too. The one legitimate text the rule would call a
loop is a window of nothing but a matrix or table of two or three values (a 33 x 33
identity matrix with no word after it).
"""

from __future__ import annotations

import operator
import re

__all__ = [
    "END_CHARS",
    "MAX_DISTINCT_TOKENS",
    "MIN_REPEATS",
    "MIN_SAME",
    "PERIOD_KEY_CHARS",
    "TOKEN_CHARS",
    "WINDOW_CHARS",
    "degenerate",
]

WINDOW_CHARS = 4096
"""How many of the response's last characters are looked at (and its least length)."""
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
MIN_SAME = 0.95
"""The share of the window's characters equal to the one a period before (a loop varies
a little: "Let's try k = 91", then "Let's check k = 92")."""

_TOKEN = re.compile(rf"\w{{1,{TOKEN_CHARS}}}|[^\w\s]")
_NUMBER = re.compile(r"\d+")


def degenerate(response: str) -> bool:
    """Whether ``response`` ends in a loop (the module's rule); bounded work: at most
    :data:`WINDOW_CHARS` characters read, whatever the response's length."""
    end = len(response.rstrip())  # trailing blanks are no loop (a copy only when there are)
    if end < WINDOW_CHARS:
        return False
    return _few_tokens(response, end) or _one_unit_repeated(response[end - WINDOW_CHARS : end])


def _one_unit_repeated(window: str) -> bool:
    """Whether ``window``, its numbers read as one, repeats one unit to its end (the
    module's second way)."""
    text = _NUMBER.sub("0", window)
    key = text[-PERIOD_KEY_CHARS:]
    earlier = text.rfind(key, 0, len(text) - 1)  # the last time before: the shortest period
    if earlier < 0:
        return False  # most texts: their last characters are new
    period = len(text) - PERIOD_KEY_CHARS - earlier
    if period * MIN_REPEATS > len(text):
        return False
    shifted, original = text[period:], text[:-period]
    if shifted != original and sum(map(operator.eq, shifted, original)) < MIN_SAME * len(
        shifted
    ):
        return False
    return not _new_at_the_end(window, period)


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


def _few_tokens(response: str, end: int) -> bool:
    """Whether the window holds few distinct tokens, nothing new at its end (the module's
    first way)."""
    start = end - WINDOW_CHARS
    tail_from = end - END_CHARS
    seen: set[str] = set()
    late: list[str] = []  # tokens that start in the last END_CHARS, first seen there
    token = ""
    for found in _TOKEN.finditer(response, start, end):
        token = found.group()
        if token not in seen:
            if found.start() >= tail_from:
                late.append(token)
            seen.add(token)
            if len(seen) > MAX_DISTINCT_TOKENS:
                return False
    # The loop runs to the end: nothing new there but a last token cut short.
    return len(late) <= 1 and (not late or late[0] == token)
