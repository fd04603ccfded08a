"""What may answer: one reading of a response's final answer for every verifier family.

Every rule verifier (MATH, GSM8K, multiple choice, search-R1) reads its answer from
:func:`conclusion`, never from the raw response, so the rules below hold for all of
them and for a new family that does the same:

* **Only the conclusion answers.** That is the text after the last ``</think>`` when
  there is one (else the whole response). A response that closes its thinking more
  than once with nothing after the last (``<think> 3 x 24 = 72 </think> 72 </think>``,
  as real outputs do) concludes with the last text between two closers that is not
  blank. An answer found only in
  the reasoning is no answer.
* **An answer is asserted, not quoted.** An answer form (a box, an ``<answer>`` tag, an
  answer line) introduced as an example ("e.g.", "for example", "Example:", "such as",
  "in the format") or inside a line the prompt also holds (the prompt's "put your final
  answer in \\boxed{}, e.g. \\boxed{12}" repeated) is blanked out: it counts nowhere,
  not even as a number for the fallback reading.
* **The last asserted answer wins**, and a later different value introduced as a
  correction ("Actually, on reflection, $4$", "Actually, I think it's 4") is hedging:
  each family compares the values offered after its answer with its own notion of
  sameness (``_common.CORRECTION_CUE`` is the one list of correction words).
* **A truncated response has only its explicit answer forms** (box, tag, answer line),
  never a fallback reading of the last number or expression: :func:`is_truncated`
  tells it from ``extra_info`` (``truncated``, ``finish_reason == "length"``,
  ``response_length`` at ``max_response_length``) when the trainer gives it, and from a
  cut final sentence (an open math span, a dangling ``=``) otherwise.
* **Every Unicode minus and digit form is a number**: :func:`ascii_number_text`.

Offsets are kept: blanking replaces text by as many spaces, so a position in the
conclusion is a position in the text the verifiers read.
"""

from __future__ import annotations

import re
import unicodedata

from rewardkit.verifiers._common import visible
from rewardkit.verifiers.base import NO_CONTEXT, Context, is_truncated

__all__ = [
    "NO_CONTEXT",
    "Context",
    "answering_texts",
    "ascii_number_text",
    "conclusion",
    "cut_off",
    "is_truncated",
    "thinking_split",
]

THINK_END = "</think>"


def conclusion(response: str, context: Context = NO_CONTEXT) -> str:
    """The part of ``response`` that may answer, as a reader sees it rendered, with
    quoted answer forms blanked (see the module docstring)."""
    return _unquoted(thinking_split(response)[1], context.prompt)


def answering_texts(
    response: str, context: Context = NO_CONTEXT, *, rendered: bool = True
) -> list[str]:
    """The texts an answer is looked for in, in order: the conclusion; then, only for a
    response that never opens ``<think>`` itself (the prompt's template opened it, as
    R1-zero's "Assistant: <think>" does) and closes it, the whole response. Measured on
    the real-output corpus (``tests/data/real_outputs``): no response there opens its own
    thinking, and 5 of them, graded right by their source and by math-verify, stop right
    at ``</think>`` or follow it with unrelated text; the answer they give is the one
    their thinking ends on. A response that opens and closes its own thinking has only
    its conclusion. ``rendered=False`` keeps the text as written (no hidden text removed,
    no digits read: an exact-match family compares characters)."""
    thinking, final = thinking_split(response, rendered=rendered)
    texts = [_unquoted(final, context.prompt)]
    if thinking and "<think>" not in thinking:
        texts.append(_unquoted(f"{thinking}\n{final}", context.prompt))
    return texts


def thinking_split(response: str, *, rendered: bool = True) -> tuple[str, str]:
    """``(thinking, conclusion)`` of ``response`` as rendered, before quotes are blanked:
    the text up to the last ``</think>`` that closes a thinking, and the text after it
    (the whole response, and no thinking, when there is none). A ``<think> </think>``
    pair holding nothing or the format's placeholder ("enclosed within <think> </think>",
    "<think> reasoning process here </think>") is a mention of the format, not a
    thinking closed."""
    text = ascii_number_text(visible(response)) if rendered else response
    text = text.rstrip()  # a megabyte of blanks after it hides nothing
    cut = _last_closer(text, len(text))
    if cut < 0:
        return "", text
    end = len(text)
    for _ in range(_MAX_CLOSERS):  # closed more than once: the last text that is not blank
        if text[cut + len(THINK_END) : end].strip():
            break
        before = _last_closer(text, cut)
        if before < 0:
            break
        cut, end = before, cut
    return text[:cut], text[cut + len(THINK_END) : end].rstrip()


_MAX_CLOSERS = 8  # closers looked back over (a response of them is junk: bounded work)


_MENTION = re.compile(
    r"<think>[ \t]*(?:(?i:(?:the|your|my)[ \t]+)?(?i:reasoning|thinking|thoughts)"
    r"(?:[ \t]+(?i:process))?(?:[ \t]+(?i:goes[ \t]+)?(?i:here))?|\.\.\.|…)?[ \t]*$"
)


def _last_closer(text: str, end: int) -> int:
    """Where the last ``</think>`` before ``end`` that closes a thinking starts (-1: none)."""
    for _ in range(8):
        cut = text.rfind(THINK_END, 0, end)
        if cut < 0 or not _MENTION.search(text, max(0, cut - 70), cut):
            return cut
        end = cut
    return -1


# An answer form: a box, an <answer> tag, an "Answer:" line. Introduced by an example
# word right before it (a few marks between), it is a format shown, not an answer given.
_EXAMPLE_CUE = re.compile(
    r"(?i:\be\.\s?g\.|\bfor[ \t]+(?:example|instance)\b|\bexamples?\b|\bsuch[ \t]+as\b"
    r"|\b(?:in|using|with)[ \t]+(?:the|this)[ \t]+(?:format|form)\b|\bformat(?:ted)?\b"
    r"|\blike[ \t]+(?:this|so)\b)"
    r"[ \t]{0,3}[:,(]?[ \t]{0,3}(?:`{1,3}|\$|\\\(|\")?[ \t]{0,2}"
    r"(?=\\(?:boxed|fbox)\b|<answer>|####|(?i:(?:the[ \t]+)?(?:final[ \t]+)?answer[ \t]*(?:is|:)))"
)
_FORM_END = re.compile(r"</answer>|\n|(?<=\})")
_MAX_QUOTED = 32  # answer forms blanked at most: bounds the work on a response of them


def _unquoted(text: str, prompt: str) -> str:
    """``text`` with each answer form introduced as an example, or on a line the prompt
    also holds, replaced by spaces."""
    spans: list[tuple[int, int]] = []
    if _may_quote(text):
        for found in _EXAMPLE_CUE.finditer(text):
            spans.append((found.end(), _form_end(text, found.end())))
            if len(spans) >= _MAX_QUOTED:
                break
    if prompt:
        spans += _echoed(text, prompt.lower())
    if not spans:
        return text
    out, pos = [], 0
    for start, end in sorted(spans):
        start = max(start, pos)
        if end > start:
            out += [text[pos:start], " " * (end - start)]
            pos = end
    out.append(text[pos:])
    return "".join(out)


def _may_quote(text: str) -> bool:
    """False only when no :data:`_EXAMPLE_CUE` can match: each branch needs one of these
    words (most responses hold none and skip the regex)."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(
        word in low for word in ("e.g", "e. g", "example", "instance", "such", "form", "like")
    )


def _form_end(text: str, start: int) -> int:
    """Where the answer form starting at ``start`` ends: a box's closing brace, the
    closing tag, else the end of its line."""
    if text.startswith(("\\boxed", "\\fbox"), start):
        brace = text.find("{", start, start + 12)
        if brace >= 0:
            depth = 0
            for pos in range(brace, min(len(text), brace + 2000)):
                char = text[pos]
                if char == "{":
                    depth += 1
                elif char == "}":
                    depth -= 1
                    if depth == 0:
                        return pos + 1
    if text.startswith("<answer>", start):
        close = text.find("</answer>", start, start + 2000)
        if close >= 0:
            return close + len("</answer>")
    line = text.find("\n", start)
    return len(text) if line < 0 else line


_ECHO_FORM = re.compile(r"\\(?:boxed|fbox)\b|<answer>|(?i:\banswer\b[ \t]*(?:is|:))")
_MIN_ECHO = 12  # a line this long, found in the prompt, is the prompt's, not the model's


def _echoed(text: str, prompt: str) -> list[tuple[int, int]]:
    """The lines of ``text`` holding an answer form that the prompt also holds."""
    spans = []
    for found in _ECHO_FORM.finditer(text, max(0, len(text) - 65_536)):
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        end = len(text) if end < 0 else end
        line = text[start:end].strip()
        if len(line) >= _MIN_ECHO and line.lower() in prompt:
            spans.append((start, end))
        if len(spans) >= _MAX_QUOTED:
            break
    return spans


# A final sentence cut mid-way: it ends on a mark that needs something after it ("z = ",
# "3 +", "\\frac{1}{", "(", "\\times"), perhaps in a math span left open.
_DANGLING = re.compile(
    r"(?:[=+/^(\[{,]|(?<!\*)\*|\\frac\{[^{}]{0,40}\}|:="
    r"|\\(?:times|cdot|div|pm|mp|frac|sqrt|leq?|geq?|neq|approx|implies|Rightarrow|to|left)"
    r")[ \t]*(?:\$|\\[(\[])?[ \t]*$"
)


def cut_off(text: str) -> bool:
    """Whether ``text`` (a conclusion) ends in the middle of a sentence, on a mark that
    needs something after it (``So $y = x^2 = 16$, and then $z = ``). Then only
    explicit answer forms count (see the module docstring)."""
    tail = text[-200:].rstrip()
    return bool(tail) and _DANGLING.search(tail) is not None


_MINUS = "\u2212\u2012\ufe63\uff0d"  # minus sign, figure dash, small and full-width hyphen-minus
_NUMBER_CHARS = re.compile(r"[" + _MINUS + r"]|(?![0-9])\d")


def ascii_number_text(text: str) -> str:
    """``text`` with every Unicode minus read as ``-`` and every decimal digit (``１８``,
    ``١٨``) as its ASCII digit; the rest unchanged, one character for one."""
    if text.isascii():
        return text
    return _NUMBER_CHARS.sub(_ascii_char, text)


def _ascii_char(found: re.Match[str]) -> str:
    char = found.group()
    if char in _MINUS:
        return "-"
    digit = unicodedata.decimal(char, None)
    return str(digit) if digit is not None else char
