"""Degenerate responses: a collapsing policy's loop, recognised before any parse.

A policy that collapses writes the same thing until it runs out of tokens: ``\\boxed{}``
thousands of times, one boxed answer again and again, a sentence, a line or a word on a
loop, with small variations or none. Such a response *ends inside its loop*, so its
last characters are made of a handful of distinct words and symbols, where any text
that states something (prose, a derivation, a table of values, a list of numbers, code)
uses dozens within the same span.

The rule (:func:`degenerate`): without its trailing blanks, the response has at least
:data:`WINDOW_CHARS` characters; its last :data:`WINDOW_CHARS` characters hold at most
:data:`MAX_DISTINCT_TOKENS` distinct tokens, a token being a run of at most
:data:`TOKEN_CHARS` word characters (letters, digits, ``_``) or any other single
non-space character; and the loop runs to the end: no token first appears in the last
:data:`END_CHARS` characters, but the very last token (cut short). The scan stops at the first token past the bound: on ordinary text
a few dozen tokens decide it (microseconds), on a loop the window's 4,096 characters do.

Measured on the real outputs in ``tests/data/real_outputs`` (4,508 rows, 22 of them
4,096 characters or more): the one row under the bound is a loop (``traffic traffic
...``); the next has 25 distinct tokens (a loop whose window still holds its preamble),
and no row that states an answer has fewer than 130. A shorter loop is left to the
ordinary rules, whose work is bounded too. The one legitimate text the rule would call a
loop is a window of nothing but a matrix or table of two or three values (a 33 x 33
identity matrix with no word after it).
"""

from __future__ import annotations

import re

__all__ = ["END_CHARS", "MAX_DISTINCT_TOKENS", "TOKEN_CHARS", "WINDOW_CHARS", "degenerate"]

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

_TOKEN = re.compile(rf"\w{{1,{TOKEN_CHARS}}}|[^\w\s]")


def degenerate(response: str) -> bool:
    """Whether ``response`` ends in a loop (the module's rule); bounded work: at most
    :data:`WINDOW_CHARS` characters read, whatever the response's length."""
    end = len(response.rstrip())  # trailing blanks are no loop (a copy only when there are)
    if end < WINDOW_CHARS:
        return False
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
