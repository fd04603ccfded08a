"""Bounded LaTeX handling for the MATH verifier's main-process phases.

``find_boxes`` scans ``\\boxed{...}`` groups from the end of a response; ``normalise``
maps an answer to a canonical string for cheap equality; ``exact_number`` reads plain
numbers (``1,000``, ``-0.5``, ``\\frac{3}{4}``, ``3/4``, ``twelve``) as fractions;
``guard_reason`` flags answers that must never reach sympy. All are linear in their
input: str methods, regexes without nested quantifiers, and single passes.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction

from rewardkit.verifiers._common import MAX_ANSWER_CHARS

MAX_BOX_CHARS = 4096
"""A ``\\boxed{`` not closed within this many characters is treated as unclosed."""
MAX_BOXES = 64
"""Boxes looked at from the end of a response (more than this is hedging anyway)."""
MAX_BOX_COMMANDS = 4096
"""``\\boxed`` commands looked at in all, closed or not: bounds the work on junk."""
MAX_SCAN_CHARS = 16 * MAX_BOX_CHARS
"""Characters brace-scanned in all by one ``find_boxes`` call: ``\\boxed{`` after
``\\boxed{`` each followed by thousands of ``{`` cost a scan of up to MAX_BOX_CHARS each.
When it is spent the scan stops; earlier boxes are not read (as past MAX_BOX_COMMANDS)."""
MAX_NESTING = 50
MAX_EXPONENT = 10_000
MAX_RELATIONS = 16
"""An answer (or a formula of a fallback passage) chaining more relations (``=``, ``<``,
``\\geq``, ...) is decided by its text: latex2sympy builds a chain as a nested ``And``
that it flattens again at each link (200 links of ``=``: 2.5 s in a worker; a 3,900-character
chain of ``<`` in a passage ran to the worker's 10 s limit)."""
_RELATION_SIGN = re.compile(
    r"\\(?:le|leq|ge|geq|ne|neq|lt|gt|leqslant|geqslant)(?![A-Za-z])|[=<>≤≥≠]"
)

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_BRACE_OR_ESCAPE = re.compile(r"\\.|[{}]", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Box:
    """One ``\\boxed``/``\\fbox`` group: its span and content (None: unclosed or too long)."""

    start: int
    end: int
    content: str | None


def find_boxes(text: str) -> list[Box]:
    """The closed boxes of ``text``, last first, at most MAX_BOXES.

    The last box is returned even when unclosed (content None: a truncated answer).
    At most MAX_SCAN_CHARS are brace-scanned in all (the first box always gets its
    MAX_BOX_CHARS): a megabyte of unclosed boxes costs milliseconds.
    An earlier box must close before the next box starts, or it is a box around that
    box (or unclosed) and is skipped. So each brace scan reads only the gap up to the
    next box, each ``rfind`` resumes below its previous hit, and the whole text is
    read a bounded number of times.
    """
    boxes: list[Box] = []
    hits = {cmd: text.rfind(cmd) for cmd in _BOX_COMMANDS}
    limit, budget = len(text), MAX_SCAN_CHARS
    for _ in range(MAX_BOX_COMMANDS):
        if len(boxes) == MAX_BOXES or budget <= 0:
            break
        cmd = max(hits, key=lambda c: hits[c])
        start = hits[cmd]
        if start < 0:
            break
        hits[cmd] = text.rfind(cmd, 0, start)
        after = start + len(cmd)
        box = _read_box(text, start, after, min(limit, after + budget))
        budget -= (box.end if box else after) - after
        if box is None:
            continue  # "\boxedsymbol" and the like: not a box
        if box.content is not None or not boxes:
            boxes.append(box)
        limit = start
    return boxes


def _read_box(text: str, start: int, after: int, limit: int) -> Box | None:
    pos = after
    while pos < limit and pos - after < 8 and text[pos] in " \t":
        pos += 1
    if pos >= limit:
        return Box(start, limit, None)  # cut off right after "\boxed"
    if text[pos] == "{":
        return _braced(text, start, pos, min(limit, pos + MAX_BOX_CHARS))
    if pos > after:  # "\boxed 5": up to the next "$" or line end
        stop = min(_find(text, "$", pos), _find(text, "\n", pos), limit)
        return Box(start, stop, text[pos:stop].strip())
    if _ONE_DIGIT.match(text, pos, limit):  # "\boxed4": TeX boxes the one token 4
        return Box(start, pos + 1, text[pos])
    return None


# One digit that ends the token run: "\boxed4." is a box of 4; "\boxed42" (TeX: a boxed 4,
# then 2), "\boxed4x" and "\boxed4.5" are left alone, for math-verify reads them whole
_ONE_DIGIT = re.compile(r"\d(?=$|[\s$]|[.,;:!?](?!\d))")


def _braced(text: str, start: int, brace: int, limit: int) -> Box:
    depth = 0
    for token in _BRACE_OR_ESCAPE.finditer(text, brace, limit):
        if token.group() == "{":
            depth += 1
        elif token.group() == "}":
            depth -= 1
            if depth == 0:
                return Box(start, token.end(), text[brace + 1 : token.start()].strip())
    return Box(start, limit, None)


_FUNCTIONS = (
    r"log|ln|lg|exp|sin|cos|tan|sec|csc|cot|arcsin|arccos|arctan|sinh|cosh|tanh|det|gcd"
    r"|lcm|max|min|lim|deg|arg|Pr|operatorname\{[A-Za-z]{1,12}\}"
)

# What makes a box an operand of a larger expression, read right before or after it (a
# few characters; spaces and a "$" between are skipped before it): a sign or operator
# ("$-\boxed{18}$", "-$\boxed{18}$", "2 \cdot \boxed{18}"), a digit or letter glued to it
# ("1\boxed{18}" shows 118), an argument of a fraction, root, power or index
# ("\frac{1}{\boxed{18}}"); after it, a power, index, prime or digit ("\boxed{18}^2",
# "\boxed{18}0"), or an operator with an operand in the same math span ("\boxed{18} + 1$").
# A markdown bullet ("- $\boxed{18}$" at a line's start), "=" and words are not.
_OPERAND_BEFORE = re.compile(
    r"(?:[-+/]|(?<!\*)\*|\\(?:cdot|times|div|pm|mp|neg|lnot)|[\^_]\{?"
    r"|\\(?:sqrt(?:\[[^\]]{0,8}\])?|[dt]?frac|binom)\{|\}\{)[ \t$]{0,3}\n?\Z"
    # a function applied to it: "\log \boxed{18}", "\sin(\boxed{18})"
    r"|\\(?:" + _FUNCTIONS + r")(?![A-Za-z])[ \t]{0,3}(?:\\left)?\(?[ \t]{0,3}\n?\Z"
    # glued to a letter or digit: on the same line ("7\boxed{7}"; a line that ends in
    # 7, then a box on the next, is a result then its answer: "3 + 4 = 7\n\boxed{7}")
    r"|(?<![A-Za-z])[A-Za-z]\Z|[0-9]\Z"
)
_BULLET = re.compile(r"(?:^|\n)[ \t]{0,8}[-+*][ \t]{1,3}\$?[ \t]{0,3}$")
_OPERAND_AFTER = re.compile(
    # in brackets, then a power or a factorial: "(\boxed{18})^2", "(\boxed{18})!"
    r"[ \t]{0,3}(?:\\right)?\)[ \t]{0,3}(?:[\^_'!]|\\prime)"
    # a factorial in the same math span ("$\boxed{18}!$"; "\boxed{18}! Great" is prose)
    r"|!(?=[ \t]{0,3}(?:\$|\\\)|\\\]|[-=+*/^)]))"
    # a factor glued after it: "\boxed{18}\pi", "\boxed{2}\sqrt{3}", "\boxed{18}π"
    r"|[ \t]{0,2}(?:\\(?:pi|sqrt|infty|theta|alpha|beta|gamma|phi|omega|[dt]?frac)(?![A-Za-z])"
    r"|[\u0370-\u03ff√])"
    r"|(?!\^\s?\{?\s?\\circ)(?:[\^_'0-9]"
    r"|[ \t]{0,3}(?:[-+*/]|\\(?:cdot|times|div|pm|mp))[ \t]{0,3}[\\\w(][^$\n]{0,40}(?:\$|\\\)|\\\]))"
)


def box_operand(text: str, box: Box) -> bool:
    """Whether ``box`` is an operand of an expression written around it (see
    :data:`_OPERAND_BEFORE`): the response answers that expression, not the box's value."""
    before = text[max(0, box.start - 24) : box.start]
    if _OPERAND_BEFORE.search(before) and not _BULLET.search(before):
        return True
    return _OPERAND_AFTER.match(text, box.end) is not None


def _find(text: str, sub: str, pos: int) -> int:
    found = text.find(sub, pos, pos + MAX_BOX_CHARS)
    return len(text) if found < 0 else found


def boxes_joined(prev: Box, nxt: Box, text: str) -> bool:
    """Whether two consecutive boxes form one multi-part answer (``\\boxed{2}, \\boxed{3}``)."""
    between = text[prev.end : nxt.start]
    if len(between) > 24:
        return False
    return _SEPARATOR_NOISE.sub("", between) == ""


# ", ", " and ", " or ", "$ or $x = ": what may stand between the boxes of one answer
_SEPARATOR_NOISE = re.compile(
    r"\\text\{\s*(?:and|or)\s*\}|\\q?quad|\\[,;: ]|and|or|\b[a-zA-Z]\s?=|[\s$,;~]"
)
_OR_WORD = re.compile(r"\bor\b")


def box_join(prev: Box, nxt: Box, text: str) -> str | None:
    """How two consecutive boxes are joined: ``"and"`` (one multi-part answer, joined by
    ``,``, ``;``, ``and`` or spacing), ``"or"`` (alternatives), or None (not joined)."""
    if not boxes_joined(prev, nxt, text):
        return None
    return "or" if _OR_WORD.search(text[prev.end : nxt.start]) else "and"


_BLANK_NOISE = re.compile(
    r"\\[hv]?phantom\s?\{[^{}]{0,64}\}|\\(?:text|mbox)\s?\{\s*\}|\\q?quad|\\[,;:! ]|[\s{}~]"
)


def is_blank(content: str) -> bool:
    """Whether a box holds nothing: ``{}``, spaces, ``\\phantom{2}``, ``\\quad``, ``~``."""
    if len(content) > 200:
        return False
    return _BLANK_NOISE.sub("", content) == ""


# --- normalisation ---------------------------------------------------------------

_SPACING = re.compile(r"\\[,!;:> ]|\\q?quad(?![a-zA-Z])|~|\\displaystyle|\\textstyle")
_LEFT_RIGHT = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])")
_FRAC_VARIANT = re.compile(r"\\[dtc]frac(?![a-zA-Z])")
_DEGREES = re.compile(r"\^\s?\{\s?\\circ\s?\}|\^\s?\\circ|°|\\degree(?![a-zA-Z])")
_PERCENT = re.compile(r"\\?%")
PERCENT_WORD = re.compile(r"\\text\{(?:percent|percentage|pct)\}")
"""A percent sign in words that math-verify reads as the sign (``0.5\\text{percent}`` is
0.5%); with a space inside (``\\text{ percent}``) it is a unit that it drops."""
_TEXT_COMMAND = re.compile(r"\\(?:text(?:bf|rm|it|normal|sf|tt)?|mbox|math(?:rm|bf|it|sf))\s?\{")
_UNIT_TAIL = re.compile(r"(?:\^\{?[23]\}?)?")
_UNIT_WORDS = re.compile(r"[A-Za-z][A-Za-z ./]*")
_FRAC_DIGITS = re.compile(r"\\frac(\d)(\d)")
_FRAC_DIGIT_BRACE = re.compile(r"\\frac(\d)\{")
_FRAC_BRACE_DIGIT = re.compile(r"\\frac\{([^{}]*)\}(\d)")
_SQRT_TOKEN = re.compile(r"\\sqrt(\w)")
_LEADING_VARIABLE = re.compile(r"[A-Za-z](?:_\{?[A-Za-z0-9]{1,4}\}?)?=")


@functools.lru_cache(maxsize=4096)  # pure; one row's phases normalise the same box often
def normalise(answer: str, *, strip_variable: bool = True) -> str:
    """A canonical string for equality: spacing, ``\\left``, ``dfrac``, degrees, ``%``,
    ``$``, ``\\text{}`` wrappers and trailing unit words, a trailing ``.`` and (unless
    ``strip_variable`` is false) a leading ``x =`` removed; ``\\frac12`` and ``\\sqrt3``
    braced; all whitespace dropped."""
    text = answer.replace("\u2212", "-").replace("{,}", ",").replace("\\$", "").replace("$", "")
    text = _BASE_TEN.sub(r"\1", text)
    text = _SPACING.sub(" ", text)
    text = _LEFT_RIGHT.sub("", text)
    text = _FRAC_VARIANT.sub(r"\\frac", text)
    text = _DEGREES.sub("", text)
    text = _PERCENT.sub("", text)
    text = _strip_text_commands(_strip_text_commands(text))  # \text{\textbf{A}} too
    text = "".join(text.split())
    text = _strip_delimiters(text).rstrip(".")
    if (
        strip_variable
        and text.count("=") == 1
        and (lead := _LEADING_VARIABLE.match(text))
        and lead.end() < len(text)
    ):
        text = text[lead.end() :]
    text = _FRAC_DIGITS.sub(r"\\frac{\1}{\2}", text)
    text = _FRAC_DIGIT_BRACE.sub(r"\\frac{\1}{", text)
    text = _FRAC_BRACE_DIGIT.sub(r"\\frac{\1}{\2}", text)
    return _SQRT_TOKEN.sub(r"\\sqrt{\1}", text)


# A base-ten subscript is the number as written (``15_{\text{ten}}`` is 15); math-verify
# reads ``_{\text{ten}}`` as a subscript symbol, so the comparison drops it first.
_BASE_TEN = re.compile(r"(\d)\s*_(?:10|\{10\}|\{\\(?:text|mathrm)\{ten\}\})(?![\w{}])")


def unicode_math(answer: str) -> str:
    """``answer`` with the Unicode math signs a model writes as plain text spelled in
    LaTeX, as a reader and math-verify read LaTeX: a vulgar fraction (``¾`` is
    ``\\frac{3}{4}``; ``18½`` the mixed number ``18\\frac{1}{2}``, as MATH writes one),
    superscript digits (``2³`` is ``2^{3}``), a root sign (``3√2`` is ``3\\sqrt{2}``,
    ``√(x+1)`` is ``\\sqrt{x+1}``) and ``π``, ``×``, ``·``, ``÷``. math-verify reads none of
    them but ``1²``; left as they were, ``The answer is ¾.`` scored 0 against ``\\frac{3}{4}``."""
    if answer.isascii():
        return answer
    text = _VULGARS_APART.sub(r"\1, ", answer)  # "½ ¼": two values, never their product
    text = _VULGAR.sub(lambda m: _VULGAR_LATEX[m.group()], text)
    text = _SUPERSCRIPTS.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPT_DIGITS) + "}", text)
    text = _ROOT.sub(_root_latex, text)
    return text.translate(_SIGNS)


_VULGAR_LATEX = {
    chr(code): f"\\frac{{{num}}}{{{den}}}"
    for code, (num, den) in {
        0xBC: (1, 4), 0xBD: (1, 2), 0xBE: (3, 4), 0x2150: (1, 7), 0x2151: (1, 9),
        0x2152: (1, 10), 0x2153: (1, 3), 0x2154: (2, 3), 0x2155: (1, 5), 0x2156: (2, 5),
        0x2157: (3, 5), 0x2158: (4, 5), 0x2159: (1, 6), 0x215A: (5, 6), 0x215B: (1, 8),
        0x215C: (3, 8), 0x215D: (5, 8), 0x215E: (7, 8),
    }.items()
}  # fmt: skip
_VULGAR = re.compile("[" + "".join(_VULGAR_LATEX) + "]")
_VULGARS_APART = re.compile(f"({_VULGAR.pattern})[ \\t]+(?={_VULGAR.pattern})")
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPTS = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]{1,12}")
_ROOT = re.compile(
    r"([√∛∜])[ \t]{0,2}(?:\(([^()\n]{1,60})\)|\{([^{}\n]{1,60})\}|(\d+(?:\.\d+)?|[A-Za-z]))"
)
_ROOT_INDEX = {"√": "", "∛": "[3]", "∜": "[4]"}
_SIGNS = str.maketrans({"π": "\\pi ", "×": "\\times ", "·": "\\cdot ", "÷": "\\div "})


def _root_latex(found: re.Match[str]) -> str:
    radicand = found.group(2) or found.group(3) or found.group(4)
    return f"\\sqrt{_ROOT_INDEX[found.group(1)]}{{{radicand}}}"


def degree_signs(text: str) -> int:
    """Degree signs (``^\\circ``, ``°``, ``\\degree``) and ``\\text{ degrees}`` words in
    ``text``: what normalising drops, so that a caller can tell whether one side had them."""
    return len(_DEGREES.findall(text)) + len(_DEGREE_WORD.findall(text))


_DEGREE_WORD = re.compile(r"\\text\{\s*degrees?\s*\}")


def _strip_delimiters(text: str) -> str:
    for left, right in (("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(left) and text.endswith(right) and len(text) >= 4:
            return text[2:-2]
    return text


def _strip_text_commands(text: str) -> str:
    """Unwrap ``\\text{X}`` to X; drop a trailing unit (``5\\text{ cm}^2`` -> ``5``)."""
    out: list[str] = []
    pos = 0
    for command in _TEXT_COMMAND.finditer(text):
        if command.start() < pos:
            continue  # inside a group already consumed
        close = _closing_brace(text, command.end() - 1)
        if close < 0:
            break
        content = text[command.end() : close]
        tail = _UNIT_TAIL.match(text, close + 1)
        prefix = "".join(out) + text[pos : command.start()]
        is_unit = (
            tail is not None
            and tail.end() == len(text)
            and prefix.strip() != ""
            and _UNIT_WORDS.fullmatch(content.strip()) is not None
        )
        out.append(text[pos : command.start()])
        out.append("" if is_unit else content)
        pos = len(text) if is_unit else close + 1
    out.append(text[pos:])
    return "".join(out)


def _closing_brace(text: str, brace: int) -> int:
    depth = 0
    for token in _BRACE_OR_ESCAPE.finditer(text, brace):
        if token.group() == "{":
            depth += 1
        elif token.group() == "}":
            depth -= 1
            if depth == 0:
                return token.start()
    return -1


# --- a sign after a group ------------------------------------------------------------

# A degree or percent sign after a closing bracket: "(30, 60)^\circ". math-verify read it
# as a power of the group and kept the group's last item (60): a wrong "(99, 60)\%"
# equalled 60, and "(30, 60)^\circ" was no (30, 60).
_MARK_AFTER_GROUP = re.compile(
    r"(?P<close>(?:\\right\s*)?(?:\)|\]|\\\}))(?:\s|\\[,;:! ])*+"
    r"(?P<mark>\^\s?\{\s?\\circ\s?\}|\^\s?\\circ(?![A-Za-z])|°|\\degree(?![A-Za-z])|\\%)"
    # possessive blank runs: three that could share a run of blanks were cubic in it
    r"(?P<tail>\s*+(?:\\text\s?\{[^{}]*\})?\s*+\.?\s*+)$"
)


def sign_after_group(text: str) -> bool:
    """Whether a degree or percent sign ends ``text`` right after a closing bracket."""
    return len(text) <= MAX_BOX_CHARS and _MARK_AFTER_GROUP.search(text) is not None


def distribute_marks(text: str) -> str:
    """``(30, 60)^\\circ`` as ``(30^\\circ, 60^\\circ)``: the sign on every item of the group
    it follows (and of the tuples in it), as each item means it. ``text`` unchanged when
    that group lists no items: ``2(3+4)\\%`` is no ``2(3+4\\%)``."""
    mark = _MARK_AFTER_GROUP.search(text) if len(text) <= MAX_BOX_CHARS else None
    if mark is None:
        return text
    opening = _opening(text, mark.end("close") - 1)
    group = text[opening : mark.end("close")] if opening is not None else ""
    if len(_items(group)) < 2:
        return text
    signed = _signed_items(group, mark.group("mark"), MAX_NESTING)
    return text[:opening] + signed + mark.group("tail")


def _opening(text: str, close: int) -> int | None:
    """The index of the bracket that the one at ``close`` closes (any of ``([{``)."""
    depth = 0
    for at in range(close, -1, -1):
        depth += text[at] in ")]}"
        depth -= text[at] in "([{"
        if depth == 0:
            return at
    return None


_GROUP_CLOSE = re.compile(r"(?:\\right\s*)?\\?[)\]}]$")


def _items(group: str) -> list[str]:
    """The top-level items of ``(a, b)``, ``\\{a, b\\}``, ``\\left(a, b\\right)`` (the group
    starts at its bracket): split at commas of depth 0 inside it."""
    close = _GROUP_CLOSE.search(group)
    if not group or group[0] not in "([{" or close is None:
        return []
    items, depth, start = [], 0, 1
    for at in range(1, close.start()):
        depth += group[at] in "([{"
        depth -= group[at] in ")]}"
        if group[at] == "," and depth == 0 and group[at - 1] != "\\":  # not "\,"
            items.append(group[start:at])
            start = at + 1
    return [*items, group[start : close.start()]]


def _signed_items(group: str, sign: str, depth: int) -> str:
    """``group`` with ``sign`` after each item; an item that is itself a tuple gets it on
    each of its items instead (``((1, 2), (3, 4))^\\circ``)."""
    close = _GROUP_CLOSE.search(group)
    assert close is not None  # _items found it
    out = []
    for item in _items(group):
        core = item.strip()
        nested = depth > 0 and core[:1] in "([" and _opening(core, len(core) - 1) == 0
        if nested and len(_items(core)) > 1:
            out.append(item.replace(core, _signed_items(core, sign, depth - 1), 1))
        else:
            end = _spacing_start(item)
            out.append(item[:end] + sign + item[end:])
    return group[0] + ",".join(out) + close.group()


def _spacing_start(item: str) -> int:
    """Where the spacing that ends ``item`` starts (``-1\\ `` has ``\\ ``): the sign goes
    before it, for a backslash left alone would make ``\\^``."""
    end = len(item)
    while end:
        if end >= 2 and item[end - 2] == "\\" and item[end - 1] in ",;:! ":
            end -= 2
        elif item[end - 1].isspace():
            end -= 1
        else:
            break
    return end


# --- exact numbers ----------------------------------------------------------------

# Thousands groups never open with a 0: math-verify reads "0,001" and "01,000" as decimals
_DECIMAL = re.compile(r"-?(?:[1-9]\d{0,2}(?:,\d{3})+|\d+)(?:\.\d+)?|-?\.\d+|-?\d+\.")
_FRACTION = re.compile(
    r"(-?)\\frac\{(-?\d{1,100}(?:\.\d{1,100})?)\}\{(-?\d{1,100}(?:\.\d{1,100})?)\}"
)
_SLASH = re.compile(r"(-?\d{1,100})/(-?\d{1,100})")


@functools.lru_cache(maxsize=4096)  # pure, and Fractions are immutable
def exact_number(norm: str) -> Fraction | None:
    """The exact value of a normalised plain number, or None for anything else."""
    if len(norm) > 200:
        return None
    if _DECIMAL.fullmatch(norm):
        return Fraction(norm.replace(",", ""))
    if match := _FRACTION.fullmatch(norm):
        return _ratio(match.group(2), match.group(3), negate=match.group(1) == "-")
    if match := _SLASH.fullmatch(norm):
        return _ratio(match.group(1), match.group(2), negate=False)
    return word_number(norm)


def _ratio(numerator: str, denominator: str, *, negate: bool) -> Fraction | None:
    den = Fraction(denominator)
    if den == 0:
        return None
    value = Fraction(numerator) / den
    return -value if negate else value


_UNITS = {
    name: value
    for value, name in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen"
        " fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    name: 10 * value
    for value, name in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6}
_WORDS = sorted([*_UNITS, *_TENS, *_SCALES, "and"], key=len, reverse=True)
_NUMBER_WORD = re.compile("|".join(_WORDS) + "|-")


def word_number(norm: str) -> Fraction | None:
    """An English number word (``twelve``, ``twenty-one``, ``one hundred five``), spaces dropped.

    Read by a strict grammar, so that what is not one number is no number: ``-five``
    (a sign), ``two one`` (two numbers) and ``five five`` are None, never a sum.
    """
    text = norm.lower()
    if not text or len(text) > 60 or not text.replace("-", "").isalpha():
        return None
    words: list[str] = []
    pos = 0
    while pos < len(text):
        word = _NUMBER_WORD.match(text, pos)
        if word is None:
            return None
        words.append(word.group())
        pos = word.end()
    if words == ["zero"]:
        return Fraction(0)
    value = _scaled(words)
    return None if value is None else Fraction(value)


def _scaled(words: list[str]) -> int | None:
    """``[group million] [group thousand] [[and] group]``, every group 1..999."""
    total, at, last_scale = 0, 0, 10**9
    while at < len(words):
        if total and words[at] == "and":
            at += 1
        group = _group(words, at)
        if group is None:
            return None
        value, at = group
        scale = _SCALES.get(words[at], 1) if at < len(words) and words[at] != "hundred" else 1
        if scale >= last_scale or (scale == 1 and at < len(words)):
            return None  # "thousand thousand", or words after the units
        total += value * scale
        at += scale > 1
        last_scale = scale
    return total or None


def _group(words: list[str], at: int) -> tuple[int, int] | None:
    """``unit hundred [and] [below-100]`` or ``below-100``: (value, next index)."""
    head = _below_hundred(words, at)
    if head is None:
        return None
    value, at = head
    if at < len(words) and words[at] == "hundred" and value < 10:
        value, at = value * 100, at + 1
        at += at < len(words) - 1 and words[at] == "and"
        if (tail := _below_hundred(words, at)) is not None:
            value, at = value + tail[0], tail[1]
    return value, at


def _below_hundred(words: list[str], at: int) -> tuple[int, int] | None:
    """``seven``, ``seventeen``, ``seventy``, ``seventy-seven`` (1..99)."""
    if at >= len(words):
        return None
    word = words[at]
    if word in _TENS:
        rest = words[at + 1 : at + 3]
        if rest[:1] == ["-"] and len(rest) == 2 and 0 < _UNITS.get(rest[1], 0) < 10:
            return _TENS[word] + _UNITS[rest[1]], at + 3
        if rest[:1] and 0 < _UNITS.get(rest[0], 0) < 10:
            return _TENS[word] + _UNITS[rest[0]], at + 2  # "twenty one", spaces dropped
        return _TENS[word], at + 1
    if 0 < _UNITS.get(word, 0):
        return _UNITS[word], at + 1
    return None


# --- multiple-choice labels ---------------------------------------------------------

_CHOICE_LABEL = re.compile(r"\(([A-E])\)(.*)", re.DOTALL)


def choice_label(norm: str) -> tuple[str | None, str]:
    """Split an AMC-style answer ``(C)12`` into (``C``, ``12``); a bare ``C`` is (``C``, "")."""
    if len(norm) == 1 and norm in "ABCDE":
        return norm, ""
    if match := _CHOICE_LABEL.fullmatch(norm):
        return match.group(1), match.group(2)
    return None, norm


# --- words that change a value ------------------------------------------------------

_AND_OR_TEXT = re.compile(r"\\(?:text|mbox)\s?\{\s*(?:and|or)\s*\}")
_TRAILING_SUPERSCRIPT = re.compile(r"(?:\^\s?\{?\s?-?\d\s?\}?|\{\^\d\})$")
_COMMAND_NAME = re.compile(r"\\[A-Za-z]+")
_MATH_IN_TAIL = re.compile(r"[0-9+=<>*]")
_MODULUS = re.compile(r"\bmod(?:ulo)?\s*\d+", re.IGNORECASE)
_QUALIFYING = re.compile(  # a hedge, a negation or a bound ("not 6" rules 6 out: kept)
    r"\b(?:or|nor|either|maybe|perhaps|possibly|probably|not(?!\s{1,3}\$?-?\d)|never|wrong"
    r"|incorrect|false|except|excluding|least|most|if|unless|otherwise|else"
    # a bound or an approximation after it ("27 max", "27ish", "27 (approximately)")
    r"|max|min|maximum|minimum|tops|-?ish|approx\w*"
    # a hedge however worded: "27 and change", "27, roughly", "27 or thereabouts"
    r"|and\s+change|thereabouts|roughly|unsure|uncertain|unverified|tentative)\b"
    # a suffix: "27-odd", "27-something", "27-plus" ("27 odd numbers" is a count)
    r"|-(?:odd|something|plus)\b"
    # a remark in brackets: "27 (estimate)", "27 (guess)", "27 (upper bound)"
    r"|\(\s{0,2}(?:(?:lower|upper)\s+)?(?:estimated?|rounded|guess(?:ed)?|placeholder|bound"
    r"|low\s+confidence|TODO|to\s+be\s+checked)\b"
    # after it at once: "27+", "27~", "27...", "27 ✗": more, about, trailing off, struck
    r"|^\s{0,2}(?:\+(?!\s{0,3}\$?\d)|~|\.\.\.|\u2026|[\u2717\u2718\u274c])"
    # a negation however it is spelled: "isn't right", "isnt it", "ain't", "cannot be"
    r"|\b(?:is|are|was|were|ai|do|does|did|ca|wo|could|should|would|must|has|have)n['’]?t\b"
    r"|\b(?:cannot|nope)\b|\?"  # "27?": asked, not answered
    r"|\band\s+(?:up|above|below|over|more|less|(?:a|one)\s+(?:half|third|quarter))\b"
    # a sign in words: "27 below zero" is -27 (not "27 in base 8": a gold may be 27_8)
    r"|\b(?:below|under)\s+zero\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty"
    r"|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|half)\b"
)
# An operator first, or pi ("2 pi" is 2 pi, no 2 and a unit). Not scale or fraction words:
# "5 thousand", "5 dozen", "5 halves" answer "how many thousand (dozen, halves)", a unit as
# math-verify reads it.
_CHANGING_FIRST = re.compile(
    r"(?:(?:plus|minus|less|over|divided|times|per\s*cent\s+of|%\s*of)\s+(?:by\s+)?(?:\$?\d|"
    + _NUMBER_WORDS
    + r")|(?:squared|cubed|factorial|sqrt|doubled|tripled|halved|twice|reciprocal|inverse|pi)\b"
    r"|(?:to\s+the\s+(?:\w+\s+)?power|raised\s+to|with\s+(?:a\s+)?remainder)\b)",
    re.IGNORECASE,
)


def value_qualifier(answer: str) -> str | None:
    """The text after a value that math-verify drops as a unit (everything from the first
    ``\\text{`` when the answer ends in a ``}``) and that changes or qualifies the value
    instead: math (``5\\text{ or 6}``, ``5\\text{ + 1}``, ``5\\text{,000}``), a hedge, a
    negation or a bound (``5\\text{ or more}``, ``5\\text{ is wrong}``), or an operator
    word first (``5\\text{ squared}``, ``5\\text{ minus one}``). None when there is no such
    text or it reads as a unit (``5\\text{ cm}^2``, ``5\\text{ more apples}``,
    ``5\\text{ thousand}``)."""
    if len(answer) > MAX_ANSWER_CHARS:
        return None
    text = _AND_OR_TEXT.sub(",", answer.replace("$", "")).strip()  # "\text{ or }": a list
    first = _TEXT_COMMAND.search(text)
    if first is None or not text[: first.start()].strip(" {\\,;:!~"):
        return None  # no text, or nothing before it: math-verify keeps it
    end = _TRAILING_SUPERSCRIPT.search(text)
    tail = text[first.start() : end.start() if end else len(text)]
    if not tail.endswith("}"):
        return None  # math after the text: math-verify drops nothing
    tail = _UNIT_POWER.sub("}", tail)  # "\text{ kcal m}^{-2} \text{ yr}": a unit's power
    words = _COMMAND_NAME.sub(" ", tail).replace("{", " ").replace("}", " ").strip()
    math = _MATH_IN_TAIL.search(_MODULUS.sub("", words))  # "(mod 7)" names no other value
    return words if math or qualifying_words(words) else None


_UNIT_POWER = re.compile(r"\}[ \t]{0,3}\^[ \t]{0,3}(?:\{[ \t]{0,3}-?\d[ \t]{0,3}\}|-?\d)")
_PER_CENT = re.compile(r"\bper\s+cent\b", re.IGNORECASE)  # "per cent of 40": 3 words


def qualifying_words(words: str) -> bool:
    """Whether words written after a value change or qualify it: a hedge, a negation or
    a bound ("or more", "is wrong", "at least", "and a half"), or an operator first
    ("squared", "minus one"). Only the first three words count: later ones describe ("5
    students like both, so each likes at least one"). "not 6" after a value rules 6 out:
    not counted."""
    head = " ".join(_PER_CENT.sub("percent", words).split()[:3])
    head = _NOUN_DESCRIBED.sub(r"\1 ", head)  # "20 kids not allergic": 20 kids
    if _THAN.search(head) and not _DIFFERENCE.match(words):
        return True  # "5 more than 3", "5 or less than": a bound or an expression
    return bool(_QUALIFYING.search(head) or _CHANGING_FIRST.match(head.lstrip(" (,.-")))


_THAN = re.compile(r"\bthan\b", re.IGNORECASE)
# A noun, then "not" and what it is not: the words describe the noun, and leave the value
# as it is ("$20$ kids not allergic to anything"); after a verb, "not" negates ("20 is
# not right"), and before a number it rules the number out ("20, not 30")
_NOUN_DESCRIBED = re.compile(
    r"^(?!(?:is|are|was|were|be|been|am|does|do|did|has|have|had|will|would|can|could"
    r"|should|might|may|must|shall|and|or|but|so|it|that|this)\b)([A-Za-z]{2,20})\s+not\s+"
    r"(?=[A-Za-z]{3,})(?!(?:sure|certain|right|correct|exactly|quite|the|a|an)\b)",
    re.IGNORECASE,
)
_COMPARATIVE = (
    r"(?:more|less|fewer|greater|larger|bigger|smaller|higher|lower|farther|further|longer"
    r"|shorter|older|younger|heavier|lighter|taller|cheaper|faster|slower|earlier|later)"
)
_WORD = r"[A-Za-z'&-]{1,20}"
# "21 more candies than James", "6 dollars more than Jenny", "14 degrees lower than the
# start": a difference stated, whose size is the value (math-verify reads it so). Not
# when a number follows "than" ("5 less than 10" is 5), nor with a hedge ("5 or more").
_DIFFERENCE = re.compile(
    r"\s{0,3}(?:" + _COMPARATIVE + r"(?:\s{1,3}" + _WORD + r"){0,2}"
    r"|" + _WORD + r"(?:\s{1,3}" + _WORD + r")?\s{1,3}" + _COMPARATIVE + r")"
    r"\s{1,3}than\s{1,3}(?!" + _NUMBER_WORDS + r")(?![^A-Za-z\s])[A-Za-z]",
    re.IGNORECASE,
)


def changes_before(words: str) -> bool:
    """Whether the words right before a value change it or bound it: a sign, a multiple,
    a bound ("negative 27", "half of 27", "twice 27", "under 27", "up to 27")."""
    return bool(_CHANGING_BEFORE.search(words))


FUNCTION_OF = (  # "the square of 27", "the square root of 27": a function of the value
    r"(?:square|cube|reciprocal|inverse|opposite|factorial|log(?:arithm)?|sqrt"
    r"|(?:square|cube)\s+root)\s+of"
)
# "up to 27" bounds it; "adds up to 27" sums to it
UP_TO = r"(?<!add )(?<!adds )(?<!added )(?<!adding )(?<!sum )(?<!sums )(?<!summed )up\s+to"
_CHANGING_BEFORE = re.compile(
    r"(?i)(?:\b(?:negative|minus|twice|double|triple|thrice|half(?:\s+of)?|under|over|below"
    r"|above|"
    + UP_TO
    + r"|"
    + FUNCTION_OF
    # a bound, however worded: a closed class of words. Not an approximation ("about",
    # "approximately", "~"): a rounded answer is right where the problem asks to round
    # (real outputs: "approximately $428$ square centimeters" for 428)
    + r"|nearly|almost|beyond|except"
    r"|(?:just|slightly|a\s+(?:bit|little)|well|way)\s+(?:under|over|below|above|more\s+than"
    r"|less\s+than)|not\s+quite|in\s+excess\s+of|upwards\s+of|(?:shy|short|north|south)\s+of"
    r"|(?:on\s+the\s+)?order\s+of"
    r"|anything\s+but|everything\s+except|more\s+than|less\s+than|fewer\s+than|greater\s+than"
    r"|at\s+(?:least|most)"
    # a value named by its relation to the number: "a multiple of 18", "the successor of 18"
    r"|(?:a|an|the)\s+(?:multiple|divisor|factor|successor|predecessor|negative|opposite"
    r"|complement|double|fraction|power|digit|neighbou?r)\s+of"
    r"|the\s+(?:next|previous)\s+(?:integer|number|one)\s+(?:after|before)"
    r"|the\s+(?:integer|number|one)\s+(?:after|before))"
    # then an opening math delimiter on its line ("the square of \\(4\\)", "half of $$12$$";
    # not "is displayed below\n\\[ 490 \\]": display math on a line of its own)
    r"|\bO\()(?:\s*|[ \t]*(?:\$\$?|\\[(\[])[ \t]*)$"
)


def factor_first(words: str) -> bool:
    """Whether what follows a number multiplies it (or completes it) rather than names its
    unit: a Greek letter (``27π``, ``5θ``; ``μ`` before a unit is a prefix, ``5μm``), a
    superscript, subscript or root sign (``3²``, ``18₂``, ``5√2``), a fraction (a mixed
    number: ``18½``, ``18\\tfrac{1}{2}``), or a letter standing alone (``2x``, ``3 i``), except the
    one-letter units that math-verify's own normalisation drops (m, g, s, h, l). Read as
    a unit, ``27π`` was 27."""
    return bool(_FACTOR_FIRST.match(words))


_FACTOR_FIRST = re.compile(
    r"[ \t]{0,3}(?:[²³¹⁰⁴-⁹√∞]|μ(?![A-Za-z])|(?!μ)[\u0370-\u03ff]"
    # a subscript digit: a base or an index ("18₂")
    r"|[\u2080-\u2089]"
    # a fraction after it: a mixed number ("18½", "18\tfrac{1}{2}" is 18.5, never 18)
    r"|[\u00bc-\u00be\u2150-\u215e]"
    # the same in LaTeX: "27\pi", "5 \sqrt{2}", "3\theta", "2\infty"
    r"|\\(?:pi|sqrt|infty|theta|alpha|beta|gamma|delta|phi|varphi|omega|lambda|mu|sigma|tau"
    r"|[dt]?frac)"
    r"(?![A-Za-z])"
    # a letter alone: then the end, a digit, an operator or a clause's end ("M&Ms",
    # "S'mores": a word)
    # (not an abbreviation: "12 i.e. 3 groups", "12 e.g.")
    r"|(?![mgshl](?![^\W\d_]))(?!(?i:i\.[ \t]?e|e\.[ \t]?g|c\.[ \t]?f)\b)"
    r"[A-Za-z](?=[ \t]{0,3}(?:$|[\d.,;:!?()\[\]{}+\-*/=^<>])))"
)


# --- marks that are no value notation ----------------------------------------------


def unknown_first(answer: str) -> str | None:
    """The mark that opens ``answer`` (after a name, if any) when it is no value notation
    nor a relation another rule reads: ``\\ll 18``, ``x \\doteq 18``, ``n \\succ 18``,
    ``≲ 18``. Each says something about 18 other than "it is 18", and math-verify reads
    the 18. The rule is an allow-list (:data:`_VALUE_COMMANDS`, :data:`_VALUE_SYMBOLS`):
    LaTeX has hundreds of relation symbols, so a list of the ones refused is never whole."""
    if len(answer) > MAX_ANSWER_CHARS:
        return None
    command = _COMMAND_FIRST.match(answer)
    if command is not None:
        name = command.group(1)
        return None if name in _VALUE_COMMANDS else "\\" + name
    symbol = _SYMBOL_FIRST.match(answer)
    if symbol is not None and symbol.group(1) not in _VALUE_SYMBOLS:
        return symbol.group(1)
    return None


_MARK_NAME = r"\s*(?:[A-Za-z](?:_\{?[A-Za-z0-9]{1,3}\}?)?\s*)?"
_COMMAND_FIRST = re.compile(_MARK_NAME + r"\\([A-Za-z]+)")
# math operators, arrows, supplemental operators and arrows, miscellaneous technical
_SYMBOL_FIRST = re.compile(
    _MARK_NAME + "([\u2190-\u21ff\u2200-\u22ff\u2300-\u23ff\u27c0-\u27ff\u2900-\u2aff])"
)
# What may open a value (functions, constants, fonts, sizes, spacing, brackets, signs) or
# a relation that other rules read (_RELATION_FIRST, _NOT_EQUAL, intervals, sets)
_VALUE_COMMANDS = frozenset(
    """frac dfrac tfrac cfrac sqrt root pi infty sin cos tan cot sec csc arcsin arccos arctan
    sinh cosh tanh coth log ln lg exp lim sum prod int oint binom dbinom tbinom choose gcd
    lcm max min det deg mod bmod pmod left right big Big bigg Bigg bigl bigr Bigl Bigr
    lfloor lceil lvert lVert vert Vert langle mid overline underline bar hat vec widehat
    tilde widetilde dot ddot overrightarrow overleftrightarrow angle measuredangle triangle
    square circ degree prime emptyset varnothing mathbb mathcal mathfrak mathrm mathbf
    mathit mathsf mathtt boldsymbol bm operatorname text textbf textit textrm textsf texttt
    textnormal textup emph mbox hbox displaystyle textstyle scriptstyle tiny small
    normalsize large Large LARGE huge Huge color textcolor boxed fbox framebox quad qquad
    hspace phantom hphantom vphantom pm mp cdot times div ast star nabla partial ell hbar
    imath jmath Re Im aleph ldots cdots dots vdots begin end matrix pmatrix bmatrix
    alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu
    nu xi omicron rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma
    Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega neq ne neg lnot not le leq ge geq
    lt gt leqslant geqslant nless ngtr nleq ngeq approx sim simeq cong propto to
    rightarrow longrightarrow mapsto nsim ncong in notin ni subset subseteq supset supseteq
    cup cap setminus equiv wedge vee land lor implies iff Rightarrow Leftrightarrow
    parallel perp colon textdollar dollar pounds euro yen textsterling texteuro textyen
    cent rm bf it sf tt cal Bbb frak scriptsize footnotesize varpi underset overset
    stackrel surd arg Pr hom ker dim sup inf liminf limsup cdotp underbrace overbrace
    cancel""".split()
)
_VALUE_SYMBOLS = frozenset("−∓√∛∜∞∠∡∘⋅∙∗∪∩∈∉∋≤≥≠⊂⊆⊃⊇∅∑∏∫∆∇∂∝≈≅∼≃→↦≡⌊⌈∧∨⇒⇔∥⊥⟨⊕⊗△▱□")


def subscripted_number(answer: str) -> bool:
    """Whether ``answer`` opens with a number with a subscript: a base (``18_8`` is 16) or
    an index (``18₂``), never the number. Base ten (``18_{10}``, ``18_{\\text{ten}}``) is
    the number written as it is: math-verify reads it so."""
    return _SUBSCRIPTED_NUMBER.match(answer) is not None


_SUBSCRIPTED_NUMBER = re.compile(
    r"\s*-?\d+(?:\.\d+)?\s*(?:_(?!(?:10|\{10\}|\{\\(?:text|mathrm)\{ten\}\})(?![\w{}]))|[\u2080-\u2089])"
)


def unknown_mark_before(words: str) -> bool:
    """Whether ``words`` (what stands before a number) end in a mark that is no value
    notation (:func:`unknown_first`): ``#### x \\ll 18``, ``#### ≲ 18``."""
    mark = _MARK_LAST.search(words[-40:])
    if mark is None:
        return False
    command, symbol = mark.group(1), mark.group(2)
    return command not in _VALUE_COMMANDS if command else symbol not in _VALUE_SYMBOLS


_MARK_LAST = re.compile(
    r"(?:\\([A-Za-z]+)|([\u2190-\u21ff\u2200-\u22ff\u2300-\u23ff\u27c0-\u27ff\u2900-\u2aff]))"
    r"[ \t]{0,3}(?:\\?\$)?[ \t]{0,2}$"
)


# --- guards -------------------------------------------------------------------------

_NUMERIC_TOWER = re.compile(r"\^\{?\d+\^")
_BIG_EXPONENT = re.compile(r"\^\{?(\d{5,})")
_BIG_FACTORIAL = re.compile(r"\d{5,}!")
_NESTED_FACTORIAL = re.compile(r"!\s{0,3}(?:[)}\]]\s{0,3}){0,4}!")


def guard_reason(norm: str) -> str | None:
    """Why a normalised answer must not reach sympy (None: it may)."""
    if len(norm) > MAX_ANSWER_CHARS:
        return "too long"
    if len(_RELATION_SIGN.findall(norm)) > MAX_RELATIONS:
        return "long chain"
    return passage_guard_reason(norm)


def passage_guard_reason(text: str) -> str | None:
    """Why a text must not reach math-verify's parser (None: it may): the answer guards,
    for a fallback passage (bounded by its own length, and read by math-verify's
    extraction, which may parse any of its formulas), applied to each formula in it. A
    passage ending on 1,500 nested parentheses, on ``$2^{2^{2^{2^{2^{2}}}}}$``, or on a
    3,900-character formula chaining ``<`` ran to the worker's time limit there; each is
    decided at once instead. (Outside math mode math-verify reads a chain's last value,
    cheaply: only formulas are measured.)"""
    if _nesting_depth(text) > MAX_NESTING:
        return "deep nesting"
    if _exponent_depth(text) >= 3 or _NUMERIC_TOWER.search(text):
        return "exponent tower"
    big = _BIG_EXPONENT.search(text)
    if (big and int(big.group(1)) > MAX_EXPONENT) or _BIG_FACTORIAL.search(text):
        return "huge number"
    if _NESTED_FACTORIAL.search(text):  # "27!!", "(5!)!": sympy computes (27!)!
        return "huge number"
    for formula in _FORMULA.finditer(text):
        if formula.end() - formula.start() > MAX_ANSWER_CHARS:
            return "too long"  # a formula longer than an answer may be (1,000 chars: ~1 s)
        if len(_RELATION_SIGN.findall(text, formula.start(), formula.end())) > MAX_RELATIONS:
            return "long chain"
    return None


# A formula in math mode, as math-verify's extraction finds them (each read in one parse)
_FORMULA = re.compile(r"\$\$.+?\$\$|\$[^$]+\$|\\\[.+?\\\]|\\\(.+?\\\)", re.DOTALL)


MAX_FRACTION_DEPTH = 8
"""Fractions nested deeper than this are never compared by math-verify: its cost doubles
with each level of a continued fraction (``\\frac{1}{1+\\frac{1}{1+...}}``: 0.05 s at
depth 8, 0.9 s at 13, past any worker's time limit at 20; the parse is cheap, sympy's
comparison is not), far under MAX_NESTING. Nested roots cost little (9 deep: 5 ms)."""


def parse_guard_reason(text: str) -> str | None:
    """Why an answer the inline phases could not decide must not be compared by
    math-verify (None: it may): for a passage, the value math-verify read from it (a deep
    fraction elsewhere in the passage is never compared). Apart from
    :func:`guard_reason`: an answer this deep is still evaluated inline where it is
    rational (a continued fraction of numbers)."""
    if fraction_depth(text) > MAX_FRACTION_DEPTH:
        return "deep fractions"
    return None


def fraction_depth(text: str) -> int:
    """How many fraction arguments are open inside one another at the deepest point:
    ``\\frac{1}{1+\\frac{1}{2}}`` is 2, ``\\sqrt{\\frac{1}{2}}`` is 1. One pass."""
    opened: list[bool] = []  # per open brace: is it a fraction's argument?
    pending = depth = deepest = 0  # pending: the arguments of the last fraction not opened
    for token in _FRACTION_TOKEN.finditer(text):
        found = token.group()
        if found == "{":
            is_argument = pending > 0
            pending -= is_argument
            opened.append(is_argument)
            depth += is_argument
            deepest = max(deepest, depth)
        elif found == "}":
            depth -= opened.pop() if opened else 0
        else:  # \frac, \dfrac, \tfrac, \cfrac: two arguments
            pending = 2
    return deepest


_FRACTION_TOKEN = re.compile(r"\\[dtc]?frac(?![A-Za-z])|[{}]")


def _nesting_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}" and depth > 0:
            depth -= 1
    return deepest


def _exponent_depth(text: str) -> int:
    """How many exponents are stacked (``9^{9^{9}}`` and ``9^9^9`` are 3)."""
    groups: list[bool] = []  # per open brace: does it hold an exponent?
    open_exponents = chain = deepest = 0
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char == "^":
            braced = pos + 1 < len(text) and text[pos + 1] == "{"
            chain = chain + 1 if _follows_bare_exponent(text, pos) else 0
            deepest = max(deepest, open_exponents + 1 + chain)
            if braced:
                groups.append(True)
                open_exponents += 1
                pos += 1
        elif char == "{":
            groups.append(False)
        elif char == "}" and groups:
            open_exponents -= groups.pop()
        pos += 1
    return deepest


def _follows_bare_exponent(text: str, caret: int) -> bool:
    """``a^b^c``: is this caret right after a one-token exponent?"""
    return caret >= 2 and text[caret - 2] == "^" and text[caret - 1] != "}"
