"""Instruction following (IFEval: ``google/IFEval``, ``ifeval``), as Google's checker scores it.

The ground truth is Google's ``input_data.jsonl`` layout, ``{"instruction_id_list": [...],
"kwargs": [...]}`` (``kwargs`` aligned with the ids, each holding only the arguments its
instruction takes), or Hugging Face's (every argument key present, unused ones null: the
nulls are dropped), or either as a JSON string (parquet stores it as text). Anything else
is ``invalid`` with the reason, never a 0: a Tulu 3 ``allenai/RLVR-IFeval`` ground truth
(``{"func_name": ...}``) is refused by name, as its checks are open-instruct's own.

The response is read after its last ``</think>`` (:func:`~rewardkit.verifiers._final.thinking_split`),
so a thinking that follows an instruction does not follow it for the answer; the text
after the closer is read as written, less the blank lines that open it. Each instruction
is checked by IFEval's official checker (:mod:`~rewardkit.verifiers._ifeval_checks`: the
``ifeval`` extra), in a worker, under the hard timeout:

* ``reward.verifiers.ifeval.mode``: ``strict`` (default) checks the response as it is;
  ``loose`` passes an instruction when any of the official 8 variants passes.
* ``reward.verifiers.ifeval.partial``: false (default) scores 1.0 when every instruction
  is followed; true scores the fraction followed.

``extra`` holds ``acc`` (every instruction followed), ``followed`` and ``instructions``
(counts) and ``instruction_verdicts`` (1/0 per instruction, in the ground truth's order).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardkit.config import RewardSection
from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers import _ifeval_checks
from rewardkit.verifiers._final import THINK_END, THINK_OPEN, _split, own_turn
from rewardkit.verifiers._ifeval_args import check_arguments
from rewardkit.verifiers._ifeval_checks import Instruction
from rewardkit.verifiers.base import Entry, Extracted, Matcher, Verdict

__all__ = ["ENTRIES", "IFEvalVerifier", "answer_text", "parse_ground_truth"]

IFEVAL_NAMES = frozenset({"ifeval", "google/IFEval"})
"""Data sources scored here; any other whose last path segment is ``ifeval`` (any case) too."""
RLVR_IFEVAL = "rlvr-ifeval"
"""Tulu 3's ``allenai/RLVR-IFeval`` (last segment, lower case): matched, to refuse it by name."""

MAX_INSTRUCTIONS = 64
"""A ground truth with more instructions than this is refused (IFEval rows hold 1 to 6)."""


def _is_ifeval(data_source: str) -> bool:
    return data_source.rpartition("/")[2].lower() in ("ifeval", RLVR_IFEVAL)


def answer_text(response: str) -> str:
    """What answers: the text after the last ``</think>`` (an empty ``<think></think>``
    pair closes too: written after an essay in the thinking, it made the essay the
    answer), as written, less the blank lines opening it; the whole response when it has
    none, and only what comes before a ``<think>`` never closed (a thinking is no
    answer, however many words it has). A turn written for someone else after an end of
    message (``<|im_end|>``, ``<|eot_id|>``, a user's turn: :func:`~rewardkit.verifiers._final.own_turn`)
    is cut first, as in the other families: the response answered before it."""
    response = own_turn(response, labels=False, earlier_turns=True)  # (an essay may hold
    # a "User:" dialogue; all of its turns are the answer's text)
    text, cut, end = _split(response, rendered=False, mentions=False)
    if cut < 0:
        opened = response.find(THINK_OPEN)
        return response if opened < 0 else response[:opened]
    stop = len(response) if end == len(text) else end  # the whole tail, trailing blanks too
    return response[cut + len(THINK_END) : stop].lstrip()


@dataclass(frozen=True, slots=True)
class IFEvalVerifier:
    """IFEval's verdicts on the answer: strict or loose, all-or-nothing or partial."""

    loose: bool = False
    partial: bool = False
    # what a worker loads before its first check, outside the row's time (seconds of
    # imports, language profiles and the sentence splitter: base.preparations)
    prepare: ClassVar[Callable[[], None]] = staticmethod(_ifeval_checks.warm_up)

    @property
    def key(self) -> str:
        return f"ifeval:{'loose' if self.loose else 'strict'}{':partial' if self.partial else ''}"

    def extract(self, response: str) -> Extracted:
        """The answer text (:func:`answer_text`); linear in the response."""
        return Extracted(answer_text(response))

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        """Reads the ground truth (a bad one is invalid here, on the loop) and decides an
        empty answer (it follows nothing); the checkers run in ``check``."""
        instructions = parse_ground_truth(ground_truth)
        if extracted.answer is None or not extracted.answer.strip():
            return self._verdict([False] * len(instructions))
        return None

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """Every instruction through the official checker, in a worker."""
        instructions = parse_ground_truth(ground_truth)
        answer = extracted.answer or ""
        return self._verdict(_ifeval_checks.follows(instructions, answer, loose=self.loose))

    def _verdict(self, followed: list[bool]) -> Verdict:
        done = sum(followed)
        every = done == len(followed)
        score = done / len(followed) if self.partial else float(every)
        extra = {
            "acc": every,
            "followed": done,
            "instructions": len(followed),
            "instruction_verdicts": [int(flag) for flag in followed],
        }
        return Verdict(score, extra)


def parse_ground_truth(ground_truth: Any) -> tuple[Instruction, ...]:
    """The instructions of an IFEval ground truth: ``(id, arguments)`` pairs, nulls dropped.

    Raises InvalidSampleError, naming what is wrong, for anything else."""
    value = _plain(ground_truth)
    if isinstance(value, str):
        try:
            value = _plain(json.loads(value))
        except ValueError as exc:
            raise InvalidSampleError(
                f"ifeval: ground_truth is a string but not JSON ({exc})"
            ) from None
    if not isinstance(value, Mapping):
        raise InvalidSampleError(
            "ifeval: ground_truth must be {'instruction_id_list': [...], 'kwargs': [...]} "
            f"(or its JSON text), got {type(value).__name__}"
        )
    if "func_name" in value:
        raise InvalidSampleError(
            "ifeval: this ground truth is Tulu 3's RLVR-IFeval layout ({'func_name': ...}), "
            "checked by open-instruct's own functions, not IFEval's: not supported; score "
            "it with a custom_reward_function"
        )
    ids, kwargs = value.get("instruction_id_list"), value.get("kwargs")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise InvalidSampleError(
            "ifeval: ground_truth.instruction_id_list must be a non-empty list of instruction "
            f"ids, got {_short(ids)}"
        )
    if len(ids) > MAX_INSTRUCTIONS:
        raise InvalidSampleError(f"ifeval: {len(ids)} instructions (at most {MAX_INSTRUCTIONS})")
    if not isinstance(kwargs, list) or len(kwargs) != len(ids):
        raise InvalidSampleError(
            "ifeval: ground_truth.kwargs must be a list aligned with instruction_id_list "
            f"({len(ids)} entries), got {_short(kwargs)}"
        )
    return tuple(
        (instruction_id, _arguments(position, instruction_id, arguments))
        for position, (instruction_id, arguments) in enumerate(zip(ids, kwargs, strict=True))
    )


def _arguments(position: int, instruction_id: str, arguments: Any) -> Mapping[str, Any]:
    if arguments is None:
        return {}
    if not isinstance(arguments, Mapping) or not all(isinstance(k, str) for k in arguments):
        raise InvalidSampleError(
            f"ifeval: kwargs[{position}] (of {instruction_id!r}) must be an object of "
            f"arguments, got {_short(arguments)}"
        )
    used = {key: _number(v) for key, v in arguments.items() if not _null(v)}
    check_arguments(position, instruction_id, used)
    return used


def _null(value: Any) -> bool:
    """Hugging Face's unused argument: null (NaN where a dataframe stored it)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _number(value: Any) -> Any:
    """A whole float (``300.0``, as a dataframe stores an int column with nulls) is an int."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _plain(value: Any) -> Any:
    """numpy arrays and scalars (verl's parquet rows) as plain lists, dicts and numbers."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, str | bytes | int | float | bool):
        return _plain(tolist())
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _build(section: RewardSection) -> IFEvalVerifier:
    options = section.verifiers.ifeval
    return IFEvalVerifier(loose=options.mode == "loose", partial=options.partial)


ENTRIES = (
    Entry(
        "ifeval",
        Matcher(names=IFEVAL_NAMES, predicate=_is_ifeval, listed=("allenai/RLVR-IFeval",)),
        _build,
        warm_up=_ifeval_checks.warm_up,
    ),
)
"""This module's row of the verifier registry (:mod:`rewardkit.verifiers.registry`)."""
