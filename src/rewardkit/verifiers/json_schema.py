"""Structured output (``data_source: json_schema``): 1.0 when the response's final JSON
validates against the ground truth's JSON Schema (with the ``jsonschema`` library), else 0.0.

**The answer** is read from the conclusion (after the last ``</think>``; a thinking
never closed has answered nothing): the conclusion is one JSON value (blanks around it
allowed, no prose), or it holds a fenced block (```` ```json ```` or ```` ``` ````), the
last of which is the answer, prose around the fence allowed
(``reward.verifiers.json_schema.answer: fenced`` reads fences only). A JSON value
followed by prose is no answer (a strict consumer's ``json.loads`` fails on it), and an
object that validates but sits in the reasoning is no answer either. ``NaN`` and
``Infinity`` are no JSON; a document nested deeper than 64 levels scores 0 (``failed:
too_deep``).

**The ground truth** is a JSON Schema (an object, a boolean, or a JSON string of one), or
``{"schema": ..., "required_values": {"/json/pointer": value}}``: the values at those
RFC 6901 pointers must also equal the given ones as JSON values (``5`` equals ``5.0``,
``true`` is not ``1``). The draft is the schema's ``$schema`` (default 2020-12);
``format`` is an annotation, not asserted (the draft's default). ``$ref`` resolves
within the schema and to the drafts' own meta-schemas only: nothing is fetched, a remote
reference makes the row ``invalid`` (or ``error`` when found in a worker). A schema the
draft's meta-schema refuses makes the row ``invalid``, never a 0.

Validation runs on the event loop for a small document against a schema without
regular expressions (``pattern``, ``patternProperties``); else in a worker, killed at
``reward.timeout_s``, so a catastrophic regex costs that row only.

``extra``: ``acc`` and, when it fails, ``failed``: ``no_json``, ``too_deep``,
``schema`` (the document does not validate) or ``required_values``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rewardkit.config import RewardSection
from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers._common import disavowals, unhidden
from rewardkit.verifiers._final import closing_correction
from rewardkit.verifiers._json import MISSING, conclusion, json_equal, loads, pointer
from rewardkit.verifiers.base import Entry, Extracted, Matcher, Verdict

__all__ = ["ENTRIES", "JsonSchemaVerifier"]

AnswerMode = Literal["whole", "fenced"]

FENCE = "```"
MAX_DEPTH = 64
"""Deeper documents score 0: validation recurses per level."""
INLINE_MAX_ANSWER_CHARS = 16_384
"""Larger documents are validated in a worker (``uniqueItems`` is quadratic)."""
# Keywords whose check may take long whatever the document's size: regular expressions
# (backtracking), uniqueItems (quadratic: a 16 KB array took 1.9 s on the event loop), and
# unevaluatedProperties/Items (jsonschema validates every allOf/anyOf/oneOf subschema
# again over the subtree at each level: a 727-character chain under a recursive closed
# schema took over 12 s, each level doubling it)
_SLOW_KEYWORDS = (
    '"pattern"', '"patternProperties"', '"uniqueItems"', '"unevaluatedProperties"',
    '"unevaluatedItems"',
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Gold:
    """A parsed ground truth: the schema's canonical text (the validator cache's key)
    and the required values by pointer."""

    schema_text: str
    required: tuple[tuple[str, Any], ...]
    slow: bool  # whether the schema holds a keyword whose check may take long


@dataclass(frozen=True, slots=True)
class JsonSchemaVerifier:
    """The conclusion's JSON against the ground truth's schema."""

    answer: AnswerMode = "whole"

    @property
    def key(self) -> str:
        return f"json_schema:{self.answer}"

    def extract(self, response: str) -> Extracted:
        """The final JSON text of the conclusion (None: there is none). Linear."""
        raw = conclusion(response).strip()
        if self.answer == "whole":
            ok, value = loads(raw)  # as written: a JSON string may hold "<!--" or "~~"
            if ok:
                return _document(raw, value)
        text = _rendered(raw).strip()
        if self.answer == "whole" and text != raw:
            ok, value = loads(text)  # "<!-- draft -->{...}": what a reader sees is one value
            if ok:
                return _document(text, value)
        block = _last_fence(text)
        if block is None:
            return Extracted(None, {"failed": "no_json"})
        ok, value = loads(block)
        if not ok:
            return Extracted(None, {"failed": "no_json"})
        after = text[text.rfind(FENCE) + len(FENCE) :]
        if _another_after(after) or _field_given_otherwise(after, value):
            return Extracted(None, {"failed": "several_answers"})
        return _document(block.strip(), value)

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        """No JSON scores 0 (once the ground truth is known good); a small document
        against a schema without a slow keyword (a regular expression, uniqueItems) is
        validated here; the rest in a worker, under the row's hard time limit."""
        gold = parse_gold(ground_truth)
        if extracted.answer is None:
            return _verdict(str(extracted.extra.get("failed", "no_json")))
        if gold.slow or len(extracted.answer) > INLINE_MAX_ANSWER_CHARS:
            return None
        return self.check(extracted, ground_truth)

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        gold = parse_gold(ground_truth)
        if extracted.answer is None:
            return _verdict(str(extracted.extra.get("failed", "no_json")))
        document = json.loads(extracted.answer)
        if not _valid(gold.schema_text, document):
            return _verdict("schema")
        for path, value in gold.required:
            found = pointer(document, path)
            if found is MISSING or not json_equal(found, value):
                return _verdict("required_values")
        return _verdict(None)


def _verdict(failed: str | None) -> Verdict:
    if failed is None:
        return Verdict(1.0, {"acc": True})
    return Verdict(0.0, {"acc": False, "failed": failed})


def _document(text: str, value: Any) -> Extracted:
    if _depth_over(value, MAX_DEPTH):
        return Extracted(None, {"failed": "too_deep"})
    return Extracted(text)


def _depth_over(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend(
                (inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item)
            )
    return False


def _rendered(text: str) -> str:
    """``text`` as a reader sees it rendered, its code fences kept as written: an HTML
    comment or a struck-out span (``<del>``, ``<s>``, ``<strike>``) outside a fence hides
    what it holds, fences too; hidden and struck text outside fences is dropped
    (:func:`~rewardkit.verifiers._common.unhidden`). A fenced document in a comment is
    no answer a reader was given. Linear: one pass."""
    if "<" not in text and "~~" not in text and "\\" not in text and "%" not in text:
        return text  # most answers: nothing can hide
    out: list[str] = []
    lowered = text.lower()  # once: a closing tag is found in any case
    pos = 0
    while pos < len(text):
        mark = _HIDING_OR_FENCE.search(text, pos)
        if mark is None:
            out.append(unhidden(text[pos:]))
            break
        out.append(unhidden(text[pos : mark.start()]))
        if mark.group() == FENCE:  # literal up to its closing fence (or the end)
            closed = text.find(FENCE, mark.end())
            end = len(text) if closed < 0 else closed + len(FENCE)
            out.append(text[mark.start() : end])
        else:  # hidden up to its end (an unclosed comment or tag hides the rest)
            closer = "-->" if mark.group() == "<!--" else f"</{mark.group('tag')}>"
            closed = lowered.find(closer.lower(), mark.end())
            end = len(text) if closed < 0 else closed + len(closer)
            out.append(" ")
        pos = end
    return "".join(out)


_HIDING_OR_FENCE = re.compile(r"```|<!--|<(?P<tag>del|s|strike)(?:\s[^<>]{0,80})?>", re.I)


def _another_after(rest: str) -> bool:
    """Whether the text after the answer's fence gives another document, or takes the
    answer back with a value ("Actually, that is wrong; the record is {...}") or in
    words ("Correction: ...", "Ignore the above.", "The above JSON is wrong.", "Actually,
    the name should be Bob."): the fence is then no final answer, as a retracted box is
    none."""
    opened = rest.find("{")
    if opened >= 0:
        closed = rest.rfind("}")
        if closed > opened and loads(rest[opened : closed + 1])[0]:
            return True
    window = rest[:_TAKEN_BACK_CHARS]
    if _TAKEN_BACK.search(window) or _FIELD_CORRECTED.search(window):
        return True
    if any(not _BARE_NO.fullmatch(found.group()) for found in disavowals(window, 0)):
        return True  # "Wait, that's not right." (not "Does it allow extra fields? No.")
    return closing_correction(rest, words=True, any_lead=False) is not None


# A sentence after the document that takes it back: a correction label, an order to
# ignore it, a verdict on it, or "actually ... should be" a value
_TAKEN_BACK = re.compile(
    r"(?:^|(?<=[.!?。！？\n]))[ \t*_>#]*(?:"
    r"(?i:correction|corrections|erratum|errata|korrektur|berichtigung|correcci[oó]n"
    r"|corre[cç][aã]o|rectification)[ \t]*[:：]|更正|订正|修正[:：]|정정"
    r"|(?i:(?:please[ \t]+)?(?:ignore|disregard|discard|scratch)[ \t]+(?:the|that|this|my)"
    r"[ \t]+(?:above|previous|preceding|last|earlier|json|answer|output|document|block))"
    r"|(?i:the[ \t]+(?:above|previous|preceding)[ \t]+(?:json|answer|output|document|block"
    r"|object|record)[ \t]+(?:is|was)[ \t]+(?:wrong|incorrect|invalid|not[ \t]+(?:right"
    r"|correct|valid)))"
    r"|(?i:actually),?[ \t][^.\n]{0,80}\b(?i:should)[ \t]+(?:(?i:actually)[ \t]+)?(?i:be)"
    r"[ \t]+[\"'“A-Z0-9]"
    r")"
)
_TAKEN_BACK_CHARS = 2000  # the text right after the fence: a retraction follows it
_BARE_NO = re.compile(r"(?i)[ \t]*(?:no|nope)[ \t]*")  # an answer to a question asked
# A field of the document corrected, or another value offered for it, in a sentence of
# its own: "Wait, the name should be Bob.", "Oops, age should be 37, not 36.", "The name
# is wrong; it should be Bob.", "Note: the name could also be Bob." (a sentence that
# describes the schema, "The date should be in ISO format.", has no such cue before it)
_FIELD_CORRECTED = re.compile(
    r"(?:^|(?<=[.!?。！？\n]))[ \t*_>#]*(?:"
    r"(?i:wait|oops|whoops|actually|edit|my[ \t]+bad|on[ \t]+second[ \t]+thought"
    r"|correction)\b[^.!?\n]{0,80}\b(?i:should[ \t]+(?:have[ \t]+been|be)|is[ \t]+actually)"
    r"[ \t]+[\"'“A-Z0-9]"  # a value given ("should be Bob", "37"), not "should be an integer"
    r"|[^.!?\n]{0,80}\b(?i:is|was|are)[ \t]+(?i:wrong|incorrect)[ \t]*[;,:—–-][ \t]*(?i:it|they|that)"
    r"[ \t]+(?i:should[ \t]+be)[ \t]+[\"'“A-Z0-9]"
    r"|[^.!?\n]{0,80}\b(?i:could|might|may)[ \t]+also[ \t]+be[ \t]+[\"'“A-Z0-9]"
    r")"
)


def _field_given_otherwise(rest: str, document: Any) -> bool:
    """Whether a sentence after the document gives one of its top-level fields another
    value after a correction cue: "Actually, the name is Bob.", "Oops, age is 37." after
    ``{"name": "Alice", "age": 36}`` ("Wait, the name should be Bob." is
    :data:`_FIELD_CORRECTED`'s). The field is named by its key (``_`` read as a blank);
    the value is quoted, or capitalised or a number, up to the sentence's end. The
    field's own value again ("Actually, the price is 24.99.", a prefix of it ending a
    word: "Dr." for "Dr. Jane Smith") keeps the document. Without a cue a sentence
    describes the document or its rules ("The date is ISO 8601 formatted.", "The status
    must be 'active' or 'inactive'."): kept."""
    if not isinstance(document, dict) or not rest.strip():
        return False
    window = rest[:_TAKEN_BACK_CHARS]
    for key, value in list(document.items())[:_KEYS_READ]:
        if not isinstance(key, str) or not 0 < len(key) <= 40 or isinstance(value, dict | list):
            continue
        name = r"[ \t_]+".join(re.escape(word) for word in key.replace("_", " ").split())
        if not name:
            continue
        said = re.compile(
            r"(?i)(?:^|(?<=[.!?:;\n]))[ \t*_>]*" + _CUE + r"[,:]?[ \t]+(?:the[ \t]+)?[\"'`]?"
            + name + r"[\"'`]?(?:[ \t]+field)?[ \t]+(?:is|was|=)[ \t]+" + _VALUE
        )  # fmt: skip
        for found in said.finditer(window):
            if not _same_field_value(found.group("value") or found.group("quoted"), value):
                return True
    return False


_KEYS_READ = 32  # a document's first keys: enough for any field a sentence names
_CUE = r"(?:actually|oops|whoops|wait|sorry|correction|edit|no|my[ \t]+bad)\b"
# a quoted value, or one opening with a capital, a digit or a sign, to the sentence's end
_VALUE = (
    r"(?:[\"“'`](?P<quoted>[^\"”'`\n]{0,80})[\"”'`]"
    r"|(?P<value>(?-i:[A-Z0-9-])[^\n]{0,60}?)(?=[.!?;:,]?(?:[ \t\n]|$)))"
)


def _same_field_value(said: str, value: Any) -> bool:
    """Whether words after "the <field> is" give the document's value: its text (quotes
    and case aside, or a prefix of it that ends a word: "Dr." for "Dr. Jane Smith"), or
    its number first ("36 years" for 36, "1,200" for 1200)."""
    text = said.strip().rstrip(".").strip().lower()
    if isinstance(value, bool) or value is None:
        return text.split()[0] == json.dumps(value) if text else False
    if isinstance(value, int | float):
        number = re.match(r"-?\d[\d,]*(?:\.\d+)?", text)
        return number is not None and float(number.group().replace(",", "")) == float(value)
    wanted = str(value).strip().lower()
    if text == wanted or text.startswith(wanted + " ") or text.startswith(wanted + ","):
        return True
    return bool(text) and wanted.startswith(text) and not wanted[len(text)].isalnum()


def _last_fence(text: str) -> str | None:
    """The content of the last complete fenced block, its info line (``json``) dropped;
    None when there is none, or when the last fence is never closed (a cut answer)."""
    parts = text.split(FENCE)
    if len(parts) < 3 or len(parts) % 2 == 0:
        return None
    block = parts[-2]
    first, newline, rest = block.partition("\n")
    if newline and (not first.strip() or first.strip().isalnum()):
        return rest  # ```json\n{...}: the info string is no JSON
    return block


# ---------------------------------------------------------------------- the ground truth


def parse_gold(ground_truth: Any) -> Gold:
    """The ground truth's schema (checked against its draft's meta-schema) and required
    values; InvalidSampleError naming the problem when it is unusable."""
    if isinstance(ground_truth, str):
        return _gold_of_text(ground_truth)
    try:
        text = json.dumps(ground_truth, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidSampleError(f"json_schema: ground_truth is not JSON ({exc})") from None
    return _gold_of_text(text)


@functools.lru_cache(maxsize=1024)
def _gold_of_text(text: str) -> Gold:
    ok, truth = loads(text)
    if not ok:
        raise InvalidSampleError("json_schema: ground_truth is a string but not JSON")
    schema, required = truth, {}
    if (
        isinstance(truth, Mapping)
        and "schema" in truth
        and set(truth) <= {"schema", "required_values"}
    ):
        schema, required = truth["schema"], truth.get("required_values", {})
        if isinstance(schema, str):
            ok, schema = loads(schema)
            if not ok:
                raise InvalidSampleError("json_schema: 'schema' is a string but not JSON")
    if not isinstance(required, Mapping) or not all(
        isinstance(path, str) and (path == "" or path.startswith("/")) for path in required
    ):
        raise InvalidSampleError(
            "json_schema: 'required_values' must map JSON pointers ('/a/0/b') to values"
        )
    if not isinstance(schema, Mapping | bool):
        raise InvalidSampleError(
            f"json_schema: the schema must be an object or a boolean (got {type(schema).__name__})"
        )
    schema_text = json.dumps(schema, sort_keys=True)
    _validator(schema_text)  # checked against its meta-schema now: a bad one is invalid data
    slow = any(word in schema_text for word in _SLOW_KEYWORDS)
    return Gold(schema_text, tuple(required.items()), slow)


@functools.lru_cache(maxsize=256)
def _validator(schema_text: str) -> Any:
    """A validator for the schema (built once per process), offline: ``$ref`` resolves
    within the schema and to the drafts' meta-schemas, never over the network."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    schema = json.loads(schema_text)
    try:
        cls = validator_for(schema, default=Draft202012Validator)
    except (AttributeError, TypeError):  # "$schema": 5
        raise InvalidSampleError("json_schema: the schema's $schema is not a URI") from None
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise InvalidSampleError(f"json_schema: the schema is invalid: {exc.message}") from None
    except RecursionError:
        raise InvalidSampleError("json_schema: the schema is nested too deep") from None
    return cls(schema, registry=_offline_registry())


@functools.cache
def _offline_registry() -> Any:
    from jsonschema_specifications import REGISTRY
    from referencing import Registry
    from referencing.exceptions import NoSuchResource

    def refuse(uri: str) -> Any:
        raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs fields

    return Registry(retrieve=refuse).combine(REGISTRY)  # type: ignore[call-arg]


def _valid(schema_text: str, document: Any) -> bool:
    from referencing.exceptions import Unresolvable

    try:
        return bool(_validator(schema_text).is_valid(document))
    except ArithmeticError:  # a 4,000-digit integer against multipleOf: no proof it holds
        return False
    except Unresolvable as exc:
        raise InvalidSampleError(
            f"json_schema: the schema's $ref {str(exc)[:200]} cannot be resolved offline "
            "(remote references are not fetched)"
        ) from None
    except RecursionError:
        raise InvalidSampleError("json_schema: the schema's $ref loops without end") from None


def _build(section: RewardSection) -> JsonSchemaVerifier:
    return JsonSchemaVerifier(answer=section.verifiers.json_schema.answer)


ENTRIES = (Entry("JSON Schema", Matcher(names=frozenset({"json_schema"})), _build),)
"""This module's row of the verifier registry."""
