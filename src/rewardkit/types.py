"""The data contract: a :class:`Sample` goes in, a :class:`Result` comes out.

See DESIGN.md ("Sample", "Result"). Rows arrive as plain mappings (JSONL, Parquet,
HTTP bodies); :meth:`Sample.from_row` validates one and names the offending field.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rewardkit.errors import InvalidSampleError

__all__ = ["BadRow", "Result", "Sample", "Status"]

Message = Mapping[str, Any]
"""A chat message: ``role``, optional ``content`` (a string, OpenAI content parts, or
None), optional ``tool_calls`` (OpenAI style) and, for a tool's answer, ``tool_call_id``
and ``name``."""


@dataclass(frozen=True, slots=True)
class BadRow:
    """A row that could not be parsed (by :mod:`rewardkit.io` or an adapter); scored as
    ``invalid`` with this reason."""

    reason: str


class Status(enum.StrEnum):
    """How scoring a row ended. Only ``ok`` carries a score."""

    OK = "ok"
    TIMEOUT = "timeout"  # the hard per-row limit was hit; the worker was killed
    ERROR = "error"  # a scorer, worker or server failed on this row
    INVALID = "invalid"  # the row itself is malformed or names no known scorer


@dataclass(frozen=True, slots=True)
class Sample:
    """One rollout to score.

    ``prompt`` is a string or a list of chat messages (``{"role", "content"}``).
    ``response`` is the policy's text, or its trajectory after the prompt: a list of
    chat messages (assistant turns with ``tool_calls``, tool results); one assistant
    message given as a dict is read as a list of one. Text verifiers read
    :attr:`response_text` (the final assistant message's text); a verifier that reads
    the whole trajectory says so (``reads_trajectory``, see ``verifiers.base.Context``).
    ``ground_truth`` is whatever the verifier checks against; verl's parquet layout
    (``reward_model.ground_truth``) is accepted by :meth:`from_row`.
    """

    data_source: str
    response: str | list[Message]
    prompt: str | list[Message] = ""
    ground_truth: Any = None
    extra_info: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None

    @classmethod
    def from_row(cls, row: Any, *, default_data_source: str | None = None) -> Sample:
        """Validate a mapping of the Sample shape; raise InvalidSampleError naming the field."""
        if isinstance(row, Sample):
            if row._well_typed():
                return row
            row = row._fields()  # built by hand with wrong types: checked as a dict is
        if not isinstance(row, Mapping):
            raise InvalidSampleError(f"row is {type(row).__name__}, expected an object")
        data_source = row.get("data_source") or default_data_source
        if not isinstance(data_source, str) or not data_source:
            raise InvalidSampleError(_field_problem(row, "data_source", "a non-empty string"))
        response = row.get("response")
        if isinstance(response, str):
            response = _clean_text(response)
        elif isinstance(response, list | tuple | Mapping):
            response = _check_messages(response)
        else:
            raise InvalidSampleError(
                _field_problem(row, "response", "a string or a list of chat messages")
            )
        prompt = row.get("prompt")
        prompt = _check_prompt("" if prompt is None else prompt)
        extra_info = row.get("extra_info")
        if extra_info is None:
            extra_info = {}
        elif not isinstance(extra_info, Mapping):
            raise InvalidSampleError("field 'extra_info' must be an object")
        row_id = row.get("id")
        return cls(
            data_source=data_source,
            response=response,
            prompt=prompt,
            ground_truth=_ground_truth(row),
            extra_info=extra_info,
            id=None if row_id is None else str(row_id),
        )

    def to_row(self) -> dict[str, Any]:
        """The Sample as a plain JSON-ready mapping (the input half of a Result row)."""
        row: dict[str, Any] = {}
        if self.id is not None:
            row["id"] = self.id
        extra_info = self.extra_info
        row.update(
            data_source=self.data_source,
            prompt=self.prompt,
            response=self.response,
            ground_truth=self.ground_truth,
            extra_info=dict(extra_info) if isinstance(extra_info, Mapping) else extra_info,
        )
        return row

    def _well_typed(self) -> bool:
        """Whether the fields hold what they declare (a dataclass does not check)."""
        return (
            isinstance(self.data_source, str)
            and bool(self.data_source)
            and isinstance(self.response, str)
            and isinstance(self.prompt, str | list)
            and isinstance(self.extra_info, Mapping)
            and (self.id is None or isinstance(self.id, str))
        )

    def _fields(self) -> dict[str, Any]:
        names = ("data_source", "response", "prompt", "ground_truth", "extra_info", "id")
        return {name: getattr(self, name) for name in names}

    @property
    def response_text(self) -> str:
        """What text verifiers read: the response itself, or for a trajectory the final
        assistant message's text (its content parts joined; "" when it has none, e.g. a
        message of tool calls only, or when no message is the assistant's)."""
        response = self.response
        if isinstance(response, str):
            return response
        return final_assistant_text(response)

    @property
    def response_chars(self) -> int:
        """The response's size in characters, for the size limits: the text's length, or
        for a trajectory every string, key and number it holds (tool calls and tool
        results too), counted without recursion (a hostile nesting cannot overflow it)."""
        response = self.response
        if isinstance(response, str):
            return len(response)
        return json_chars(response)

    @property
    def response_key(self) -> str:
        """The response as cache keys hold it: the text, or for a trajectory a canonical
        JSON of its messages (sorted keys), so two trajectories that end in the same text
        but called different tools never share a cached verdict."""
        response = self.response
        if isinstance(response, str):
            return response
        return canonical_json(response)

    @property
    def prompt_text(self) -> str:
        """The prompt flattened to text (chat messages joined by newlines)."""
        if isinstance(self.prompt, str):
            return self.prompt
        return "\n".join(str(m.get("content", "")) for m in self.prompt)


@dataclass(frozen=True, slots=True)
class Result:
    """The outcome of scoring one row.

    ``score`` is None unless ``status`` is ``ok``: a failure is never disguised as a
    reward of 0. ``components`` holds each source's score before combining
    (``rule``, ``rm``, ``judge``, ``format``, ``overlong``); ``extra`` is verl's
    reward_extra_info (``acc``, ``pred``, ...). ``elapsed_s`` is the wall time the engine
    spent on the row (None when not measured), for finding slow rows.
    """

    index: int
    status: Status
    score: float | None = None
    error: str | None = None
    components: Mapping[str, float] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    row: Mapping[str, Any] = field(default_factory=dict)
    elapsed_s: float | None = None

    def __post_init__(self) -> None:
        if self.error is not None and (len(self.error) > _MAX_ERROR_CHARS or _BREAKS(self.error)):
            # A reason from user code (an exception's message) may span lines or run to
            # megabytes; the contract is one line, which summaries and logs rely on.
            object.__setattr__(self, "error", _one_line(self.error))
        if self.status is Status.OK:
            if self.score is None or not math.isfinite(self.score):
                raise ValueError(f"an ok Result needs a finite score, got {self.score!r}")
        elif self.score is not None:
            raise ValueError(f"a {self.status} Result carries no score")

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def to_row(self) -> dict[str, Any]:
        """The output row of DESIGN.md: the input row plus score, status, error, components, extra
        (and ``elapsed_s`` when measured)."""
        out = dict(self.row)
        out.update(
            score=self.score,
            status=self.status.value,
            error=self.error,
            components=dict(self.components),
            extra=dict(self.extra),
        )
        if self.elapsed_s is not None:
            out["elapsed_s"] = round(self.elapsed_s, 6)
        return out

    def log(self, prefix: str = "reward") -> dict[str, float]:
        """Flatten into scalar metrics for a trainer's logger."""
        metrics = {f"{prefix}/{name}": value for name, value in self.components.items()}
        if self.score is not None:
            metrics[f"{prefix}/score"] = self.score
        return metrics


def finite_json(value: Any) -> Any:
    """``value`` with NaN and infinities as None, in nested dicts and lists too: JSON has
    no NaN, and a bare ``NaN`` makes jq, JavaScript and Go refuse the whole file. Used by
    the JSONL writer and the server, so both write the same rows."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value


_MAX_ERROR_CHARS = 2000
"""The longest ``Result.error`` kept; a longer reason is cut, marked with an ellipsis."""

_BREAKS = re.compile(r"[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]").search


def _one_line(text: str, limit: int = _MAX_ERROR_CHARS) -> str:
    """``text`` as one line of at most ``limit`` characters: line breaks (any that
    ``str.splitlines`` knows) become spaces, runs of blanks one space."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def message_text(message: Message) -> str:
    """A message's text: its ``content`` string, or its text parts joined (other parts,
    images and the like, are no text); "" for None."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") in _TEXT_PARTS
            and isinstance(part.get("text"), str)
        )
    return ""


_TEXT_PARTS = frozenset({"text", "output_text", "input_text"})
"""The content part types that hold text: chat completions' ``text``, and the Responses
API's ``output_text`` (a model's) and ``input_text``. Read as no text, a right answer in
an ``output_text`` part scored 0."""


def final_assistant_text(messages: list[Message]) -> str:
    """The text of the last message whose role is ``assistant`` ("" when there is none)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return _clean_text(message_text(message))
    return ""


def canonical_json(value: Any) -> str:
    """A canonical JSON text of a JSON-like value (sorted keys, ASCII), for cache keys;
    a value JSON cannot encode (too deep, a foreign object) falls back to its repr."""
    try:
        return json.dumps(value, sort_keys=True, default=repr, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        try:
            return repr(value)
        except RecursionError:
            return f"<unencodable {type(value).__name__} {id(value)}>"  # never shared


def json_chars(value: Any) -> int:
    """About the length of ``value`` as JSON text: its strings' and keys' characters,
    plus a few for every other item, walked without recursion."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, Mapping):
            total += 2
            for key, inner in item.items():
                total += (len(key) if isinstance(key, str) else 8) + 3
                stack.append(inner)
        elif isinstance(item, list | tuple):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 8
    return total


def _check_messages(response: Any) -> list[Message]:
    """A trajectory as a list of message dicts (a single dict is one assistant message);
    InvalidSampleError naming the message and its field when one is malformed."""
    if isinstance(response, Mapping):
        response = [response]
    messages: list[Message] = []
    for index, message in enumerate(response):
        where = f"field 'response' message {index}"
        if not isinstance(message, Mapping):
            raise InvalidSampleError(
                f"{where} must be a chat message object (got {type(message).__name__})"
            )
        role = message.get("role")
        if not isinstance(role, str) or not role:
            got = "missing" if role is None else repr(role) if role == "" else type(role).__name__
            raise InvalidSampleError(f"{where}: 'role' must be a non-empty string (got {got})")
        if role not in _ROLES:
            raise InvalidSampleError(
                f"{where}: unknown role {role!r} (roles are {', '.join(sorted(_ROLES))}; the "
                "model's turns are 'assistant')"
            )
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            if not isinstance(content, list | tuple):
                raise InvalidSampleError(
                    f"{where}: 'content' must be a string, a list of content parts or null "
                    f"(got {type(content).__name__})"
                )
            for number, part in enumerate(content):
                if not isinstance(part, Mapping):
                    raise InvalidSampleError(
                        f"{where}: content part {number} must be an object "
                        f"(got {type(part).__name__})"
                    )
                if part.get("type") in _TEXT_PARTS and not isinstance(part.get("text"), str):
                    raise InvalidSampleError(
                        f"{where}: content part {number} is a text part without a string 'text'"
                    )
        calls = message.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list | tuple):
                raise InvalidSampleError(
                    f"{where}: 'tool_calls' must be a list (got {type(calls).__name__})"
                )
            for number, call in enumerate(calls):
                if not isinstance(call, Mapping):
                    raise InvalidSampleError(
                        f"{where}: tool call {number} must be an object (got {type(call).__name__})"
                    )
        messages.append(dict(message))
    if not any(message["role"] == "assistant" for message in messages):
        raise InvalidSampleError(
            "field 'response' is a trajectory without an 'assistant' message: nothing the "
            "model said to score"
        )
    return messages


_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function", "ipython"})
"""The chat roles a trajectory may hold (OpenAI's, with Llama's ``ipython`` tool role),
spelled as chat templates spell them: a role read in another case or name (``Assistant``,
``model``) would make the model's turns invisible to every reader, a silent 0 or 1."""


def _check_prompt(prompt: Any) -> str | list[Message]:
    if isinstance(prompt, str):
        return _clean_text(prompt)
    if isinstance(prompt, list | tuple) and all(
        isinstance(m, Mapping) and "content" in m for m in prompt
    ):
        return [dict(m) for m in prompt]
    raise InvalidSampleError("field 'prompt' must be a string or a list of chat messages")


# Where a missing field usually is: the columns other datasets and trainers name it by.
_ALIASES = {
    "data_source": ("source", "dataset", "task", "data_source_name"),
    "response": ("output", "completion", "generation", "model_output", "responses", "text"),
    "ground_truth": ("answer", "gts", "solution", "label", "target", "reference"),
}
FIELD_HINTS = {
    "data_source": "give the row one, or set reward.default_data_source=NAME (rewardkit "
    "score: --field data_source=COLUMN maps a column to it)",
    "response": "give the row one (rewardkit score: --field response=COLUMN maps the "
    "column that holds it)",
    "ground_truth": "give the row one; reward_model.ground_truth is read too (rewardkit "
    "score: --field ground_truth=COLUMN maps the column that holds it)",
}
"""What to do about a missing Sample field: every such row's error ends with it. The
same rows reach the server and the trainer adapters, where there is no --field: the
advice says which command it is for."""


def _field_problem(row: Mapping[str, Any], name: str, wanted: str) -> str:
    """Why ``row[name]`` cannot be used: missing, null (not the same), empty, or of the
    wrong type; an absent value names the fix (first a column of the row that may hold it)."""
    value = row.get(name)
    if value is None or value == "":
        got = "missing" if name not in row else "null" if value is None else "an empty string"
        found = [c for c in _ALIASES.get(name, ()) if c in row]
        fix = (
            f"the row has {found[0]!r} (rewardkit score: --field {name}={found[0]} reads it "
            "from there)"
            if found
            else FIELD_HINTS[name]
        )
        return f"field {name!r} is {got}: {fix}"
    return f"field {name!r} must be {wanted} (got {type(value).__name__})"


def _ground_truth(row: Mapping[str, Any]) -> Any:
    if "ground_truth" in row and row["ground_truth"] is not None:
        return row["ground_truth"]
    nested = row.get("reward_model")  # verl's parquet layout
    if isinstance(nested, Mapping):
        return nested.get("ground_truth")
    return None


def _clean_text(text: str) -> str:
    """Replace lone surrogates so the text can always be encoded (JSON, pipes, tokenizers),
    with U+FFFD: never a "?", which a verifier reads ("#### 72?" asks, not answers)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")
