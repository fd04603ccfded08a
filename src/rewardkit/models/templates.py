"""Turning a row into model input: the RM's chat template, truncation, judge prompts.

Reward-model input is the prompt plus the response as the assistant turn, rendered
with the *reward model's* chat template (plain concatenation when it has none), then
tokenized once. Truncation keeps the prompt's end and the response's start, so the
question right before the answer and the answer's beginning survive.

Judge prompts are text templates with ``{{prompt}}``, ``{{response}}`` and
``{{ground_truth}}``, filled in a single pass so that a response that *contains*
``{{ground_truth}}`` cannot pull the reference answer into the judge's view.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from rewardkit.errors import ConfigError, InvalidSampleError

__all__ = [
    "BUILTIN_TEMPLATES",
    "Encoded",
    "JudgeTemplate",
    "as_messages",
    "as_text",
    "concatenate",
    "encode_row",
    "load_judge_template",
    "render_row",
]

Message = Mapping[str, Any]

BUILTIN_TEMPLATES = {"score_0_10": "score", "reference": "verdict"}
"""Built-in judge templates and the parser each one asks for."""

_FIELD = re.compile(r"\{\{\s*(prompt|response|ground_truth)\s*\}\}")


@dataclass(frozen=True, slots=True)
class Encoded:
    """A row as reward-model token ids (prompt part, then response part)."""

    ids: list[int]
    prompt_tokens: int
    truncated: bool


def as_messages(prompt: str | Sequence[Message]) -> list[dict[str, Any]]:
    """The prompt as chat messages (a string becomes one user message)."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}] if prompt else []
    return [dict(m) for m in prompt]


def prompt_text(prompt: str | Sequence[Message]) -> str:
    """The prompt flattened to text (message contents joined by newlines)."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(str(m.get("content", "")) for m in prompt)


def render_row(
    tokenizer: Any, prompt: str | Sequence[Message], response: str
) -> tuple[str, int, bool]:
    """Render prompt + response as one text; return (text, where the response starts, templated).

    With a chat template the response is the assistant turn; without one the two are
    concatenated (see :func:`concatenate`).
    """
    if getattr(tokenizer, "chat_template", None):
        messages = [*as_messages(prompt), {"role": "assistant", "content": response}]
        text = tokenizer.apply_chat_template(messages, tokenize=False)
        return text, _response_start(tokenizer, prompt, response, text), True
    text, split = concatenate(prompt, response)
    return text, split, False


def concatenate(prompt: str | Sequence[Message], response: str) -> tuple[str, int]:
    """Prompt then response as one text, and where the response starts.

    A newline goes between them only when neither side brings whitespace, so that
    words never fuse ('two plus two' + 'four' is not 'twofour').
    """
    head = prompt_text(prompt)
    glue = (
        "\n" if head and response and not head[-1].isspace() and not response[0].isspace() else ""
    )
    return head + glue + response, len(head) + len(glue)


def _response_start(
    tokenizer: Any, prompt: str | Sequence[Message], response: str, text: str
) -> int:
    """Where the response begins in the rendered text.

    Usually the prompt rendered with the generation prompt is a prefix of the whole,
    and the response follows it; a template that rewrites the turns (drops a system
    message, strips whitespace) falls back to the last place the response appears.
    """
    try:
        head = tokenizer.apply_chat_template(
            as_messages(prompt), tokenize=False, add_generation_prompt=True
        )
    except Exception:  # a template may refuse an empty or unusual conversation
        head = None
    needles = [n for n in dict.fromkeys((response, response.strip())) if n]
    if isinstance(head, str) and text.startswith(head):
        at = next((a for n in needles if (a := text.find(n, len(head))) >= 0), len(head))
        return at
    return next((a for n in needles if (a := text.rfind(n)) >= 0), len(text))


def encode_row(
    tokenizer: Any,
    prompt: str | Sequence[Message],
    response: str,
    *,
    prompt_length: int,
    response_length: int,
) -> Encoded:
    """Render and tokenize one row; cut the prompt to its last ``prompt_length`` tokens and
    the response to its first ``response_length``.

    A template already holds the special tokens (BOS), so a templated text is tokenized
    without adding them again; a plain concatenation gets the tokenizer's usual ones.
    """
    text, split, templated = render_row(tokenizer, prompt, response)
    head, tail = _split_tokens(tokenizer, text, split, add_special=not templated)
    truncated = False
    if len(head) > prompt_length:
        truncated = True
        # A leading special token (BOS, [CLS]) opens every sequence the model saw: keep it.
        keep_first = head[0] in set(getattr(tokenizer, "all_special_ids", ())) and prompt_length > 1
        head = [head[0], *head[1 - prompt_length :]] if keep_first else head[-prompt_length:]
    if len(tail) > response_length:
        truncated = True
        tail = tail[:response_length]
    return Encoded(ids=head + tail, prompt_tokens=len(head), truncated=truncated)


def _split_tokens(
    tokenizer: Any, text: str, split: int, *, add_special: bool
) -> tuple[list[int], list[int]]:
    """Tokenize ``text`` once and split the ids where the character ``split`` falls.

    Tokenizing the whole text (not the two parts) gives exactly the ids the model sees;
    the character offsets say which ids belong to the response. A slow tokenizer has no
    offsets, so its two parts are tokenized apart.
    """
    if not getattr(tokenizer, "is_fast", False):
        head = tokenizer(text[:split], add_special_tokens=False)["input_ids"]
        tail = tokenizer(text[split:], add_special_tokens=False)["input_ids"]
        if add_special:
            both = tokenizer.build_inputs_with_special_tokens(head, tail or None)
            return both[: len(both) - len(tail)], tail
        return head, tail
    enc = tokenizer(text, add_special_tokens=add_special, return_offsets_mapping=True)
    ids, offsets = enc["input_ids"], enc["offset_mapping"]
    # The first real token starting at or after the split opens the response; added
    # special tokens have empty offsets (0, 0) and stay with the part they sit in.
    cut = next((i for i, (a, b) in enumerate(offsets) if b > a and a >= split), len(ids))
    return ids[:cut], ids[cut:]


@dataclass(frozen=True, slots=True)
class JudgeTemplate:
    """A judge prompt template and the parser its answer format needs."""

    name: str
    text: str
    parser: str

    @property
    def needs_ground_truth(self) -> bool:
        return any(m.group(1) == "ground_truth" for m in _FIELD.finditer(self.text))

    def fill(self, prompt: str, response: str, ground_truth: Any) -> str:
        """The judge's user message for one row, filled in one pass."""
        if self.needs_ground_truth and ground_truth is None:
            raise InvalidSampleError(
                f"judge template '{self.name}' needs a ground_truth; the row has none"
            )
        values = {"prompt": prompt, "response": response, "ground_truth": as_text(ground_truth)}
        return _FIELD.sub(lambda m: values[m.group(1)], self.text)


def load_judge_template(name_or_path: str, parser: str = "auto") -> JudgeTemplate:
    """A built-in template by name, or a template file by path."""
    if name_or_path in BUILTIN_TEMPLATES:
        text = (
            resources.files("rewardkit.models")
            .joinpath(f"templates/{name_or_path}.txt")
            .read_text("utf-8")
        )
        return JudgeTemplate(
            name_or_path, text, BUILTIN_TEMPLATES[name_or_path] if parser == "auto" else parser
        )
    path = Path(name_or_path).expanduser()
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        known = ", ".join(sorted(BUILTIN_TEMPLATES))
        raise ConfigError(
            f"reward_model.judge.template: '{name_or_path}' is neither a built-in template ({known}) "
            f"nor a readable file ({exc.strerror})"
        ) from exc
    if not any(m.group(1) == "response" for m in _FIELD.finditer(text)):
        raise ConfigError(f"reward_model.judge.template: {path} never uses {{{{response}}}}")
    return JudgeTemplate(str(path), text, "score" if parser == "auto" else parser)


def as_text(value: Any) -> str:
    """A template value as text: a string as is, other JSON values dumped, None empty."""
    if value is None or isinstance(value, str):
        return value or ""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)
