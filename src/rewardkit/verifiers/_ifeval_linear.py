"""Four IFEval checkers' readings, in one pass over the response.

The official checkers read placeholders, bullets, a postscript and a title with patterns
that go back over the text they have read: ``\\[.*?\\]`` scans to the end of the line from
every ``[``, ``^\\s*`` rescans a run of blank lines from each of its line starts, a
leading ``\\s*`` does the same from every blank, and ``<<[^\\n]+>>`` scans to the end of
the line from every ``<<``. On 20,000 characters of ``[`` or of newlines, the way a
collapsing policy writes, one check took 0.3 to 2 seconds in a worker (4 in IFEval's
loose mode). Each function here gives what the official code derives from its pattern,
the count or the yes/no, by a scan that reads each character a bounded number of times;
``tests/verifiers/test_ifeval.py`` compares them with the official patterns on random
texts. :mod:`~rewardkit.verifiers._ifeval_checks` puts them in the checkers.
"""

from __future__ import annotations

import re

__all__ = ["bullet_count", "has_title", "placeholder_count", "postscript_pattern"]

_BLANKS = re.compile(r"\s*")  # re's own \s: Unicode blanks, as the official patterns read them


def placeholder_count(text: str) -> int:
    """``len(re.findall(r"\\[.*?\\]", text))``: a ``[`` and the first ``]`` after it on the
    same line. A ``[`` with no ``]`` after it on its line leaves none for a later ``[``
    there either, so the scan goes on at the next line."""
    count, pos = 0, 0
    while (opened := text.find("[", pos)) >= 0:
        line_end = text.find("\n", opened)
        line_end = len(text) if line_end < 0 else line_end
        closed = text.find("]", opened + 1, line_end)
        if closed >= 0:
            count, pos = count + 1, closed + 1
        else:
            pos = line_end + 1
    return count


def bullet_count(text: str) -> int:
    """``len(re.findall(p, text, re.M))`` summed over IFEval's two bullet patterns,
    ``^\\s*\\*[^\\*].*$`` and ``^\\s*-.*$``: each found from the first line start of a
    blank run (``\\s*`` crosses newlines) to the end of the line its text ends on."""
    return _line_items(text, star=True) + _line_items(text, star=False)


def _line_items(text: str, *, star: bool) -> int:
    """Matches of ``^\\s*\\*[^\\*].*$`` (``star``) or ``^\\s*-.*$``, non-overlapping, from
    the left, as ``re.findall`` with ``re.MULTILINE`` finds them. Every line start in one
    run of blanks reaches the same first non-blank, so the run is read once."""
    count, start, size = 0, 0, len(text)
    while start <= size:
        blanks = _BLANKS.match(text, start)  # (always matches: it may be empty)
        first = blanks.end() if blanks else start  # the first non-blank (or the end)
        body = _item_body(text, first, star)
        if body is not None:  # ".*$": to the end of the line that body starts on
            count += 1
            end = text.find("\n", body)
            if end < 0:
                break
            start = end + 1  # (an empty line at ``end`` starts the same blank run)
        else:  # no line start up to ``first`` begins an item: on after its line's end
            newline = text.find("\n", first)
            if newline < 0:
                break
            start = newline + 1
    return count


def _item_body(text: str, first: int, star: bool) -> int | None:
    """Where ``.*$`` starts when an item's mark stands at ``first``, or None."""
    if star:  # "*" then one character that is no "*" (a newline too)
        if text.startswith("*", first) and first + 1 < len(text) and text[first + 1] != "*":
            return first + 2
        return None
    return first + 1 if text.startswith("-", first) else None


def postscript_pattern(marker: str) -> str | None:
    """The pattern whose search says what IFEval's ``findall(r"\\s*" + marker + r".*$")``
    says (whether any is found), or None to run the official pattern: a blank run
    before the marker is the empty one's choice too, so ``\\s*`` is dropped. Not for a
    marker that opens with a repeat (``?``, ``+``, ``*``, ``{``), which would then
    repeat ``\\s``; the two official markers are the patterns the official code uses."""
    if marker == "P.P.S":
        return r"p\.\s?p\.\s?s.*$"
    if marker == "P.S.":
        return r"p\.\s?s\..*$"
    lowered = marker.lower()
    if not lowered or lowered[0] in "?+*{":
        return None
    return lowered + r".*$"


def has_title(text: str) -> bool:
    """Whether ``re.findall(r"<<[^\\n]+>>", text)`` finds a title with words in it. On a
    line, only its first ``<<`` can open one (a later one has less room), and it ends at
    the line's last ``>>`` (``[^\\n]+`` is greedy): one candidate per line."""
    for line in text.split("\n"):
        opened, closed = line.find("<<"), line.rfind(">>")
        if opened >= 0 and closed >= opened + 3:
            if line[opened : closed + 2].lstrip("<").rstrip(">").strip():
                return True
    return False
