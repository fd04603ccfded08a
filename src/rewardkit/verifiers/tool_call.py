"""Tool calls (``data_source: tool_call``): 1.0 when the response makes exactly the
expected calls, else 0.0.

**The response** is an assistant message with OpenAI ``tool_calls`` (``function.arguments``
a JSON string or an object), or text with Hermes ``<tool_call>{"name": ..., "arguments":
{...}}</tool_call>`` blocks. A trajectory (a list of messages) is read at its final
assistant message, as the single-turn tool datasets (ToolRL, verl's rlla, BFCL) score
one turn; ``reward.verifiers.tool_call.turns: all`` scores the calls of every assistant
message in order instead. A ground truth of no call (``[]``) fails on a call in any
turn, the final one read or not (``failed: called_earlier``). A message with ``tool_calls`` is read from them; one without
is read from its text. Text is read after its last ``</think>``: a call made while
thinking is no call, except that a ground truth of no call fails on it too (verl's parser
runs the blocks it finds in the thinking: ``failed: called_earlier``). Only complete blocks holding a JSON object with a string ``name``
and an object ``arguments`` (absent: none, unless the block has other keys: verl's parser
reads ``arguments`` only, so ``"parameters"`` or ``"args"`` beside a name is malformed) count; an unclosed or stray tag, invalid
JSON, or ``arguments`` given as a JSON-encoded string makes the whole answer malformed
(0.0), and a call written as prose is no call.

**The ground truth** is the list of expected calls, as an object or a JSON string of one:

* ``[{"name": "f", "arguments": {"x": 5}}]``; an argument may list its acceptable values
  in ``"acceptable": {"unit": ["celsius", "C"]}``, where ``""`` among them means it may be
  left out;
* ``{"calls": [...], "order": "any"}``: the same, with this row's order;
* BFCL's possible answers, ``[{"f": {"x": [5], "unit": ["celsius", ""]}}]`` or the whole
  record ``{"id": ..., "ground_truth": [...]}``: each argument's list of acceptable values,
  ``""`` for one that may be left out; matched in any order, as BFCL matches them. A dict
  argument's listed values are BFCL's dicts of listed values (and a list of dicts', lists
  of those), as its ``dict_checker`` reads them. BFCL's string normalisation (case,
  spaces, punctuation) is not applied: strings are equal or not.

**A match**: exactly the expected number of calls, equal names, no argument the expected
call does not have, and every argument equal as a JSON value (key order ignored, ``5``
equals ``5.0``, ``true`` is not ``1``, ``"5"`` is not ``5``, an array sent as a JSON
string is a string). ``order: strict`` (default, ``reward.verifiers.tool_call.order``)
pairs calls in order, ``any`` in any order (parallel calls).

``extra``: ``acc``, ``tool_calls`` (the number of calls read) and, when it fails,
``failed``: ``malformed``, ``count``, ``name``, ``arguments`` or ``order`` (right calls,
wrong order).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rewardkit.config import RewardSection
from rewardkit.errors import InvalidSampleError
from rewardkit.types import message_text
from rewardkit.verifiers._json import conclusion, json_equal, loads
from rewardkit.verifiers.base import NO_CONTEXT, Context, Entry, Extracted, Matcher, Verdict

__all__ = ["ENTRIES", "ToolCallVerifier"]

Order = Literal["strict", "any"]
Turns = Literal["final", "all"]

OPEN, CLOSE = "<tool_call>", "</tool_call>"
# what a block without arguments may hold besides its name ("type": "function", an id);
# another key ("parameters", "args") is arguments verl's parser never reads: malformed
_NO_ARGUMENT_KEYS = frozenset({"name", "type", "id"})
MAX_CALLS = 256
"""More calls than this in one answer is malformed (and bounds the matching's work)."""

Call = tuple[str, dict[str, Any]]
"""A call read from the response: its name and arguments."""


@dataclass(frozen=True, slots=True)
class Expected:
    """One expected call: its name, and per argument the acceptable values and whether
    it may be left out."""

    name: str
    params: Mapping[str, tuple[tuple[Any, ...], bool]]
    bfcl: bool = False  # BFCL's layout: a dict's or a list of dicts' values list theirs too

    def matches(self, call: Call) -> bool:
        name, arguments = call[0], without_nulls(call[1])
        if name != self.name or not arguments.keys() <= self.params.keys():
            return False
        for param, (values, optional) in self.params.items():
            if param not in arguments:
                if not optional:
                    return False
            elif not any(self._accepts(value, arguments[param]) for value in values):
                return False
        return True

    def _accepts(self, expected: Any, given: Any) -> bool:
        if not (self.bfcl and _candidates(expected)):
            return json_equal(given, expected)
        # BFCL's possible answers (a dict of candidate lists, or a list of such dicts): its
        # checker alone; the candidates written back as the value are no answer
        if isinstance(given, dict) and isinstance(expected, Mapping):
            return _bfcl_dict(given, expected)
        if isinstance(given, list) and isinstance(expected, list) and len(given) == len(expected):
            return all(
                isinstance(g, dict) and isinstance(e, Mapping) and _bfcl_dict(g, e)
                for g, e in zip(given, expected, strict=True)
            )
        return False


def without_nulls(value: Any) -> Any:
    """``value`` with every key whose value is null left out, at every depth: an argument
    (or a field of one) that is null is one not given, on both sides, however written.
    Arguments given as objects come so from a parquet file: pandas and Hugging Face
    datasets store a column of objects as one struct, whose fields are every row's keys,
    and read back each row's missing keys as nulls (one row's extra argument would
    otherwise be every row's)."""
    if isinstance(value, Mapping):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


def _candidates(expected: Any) -> bool:
    """Whether a BFCL expected value is a structure of candidates (a dict, a list of
    dicts), which BFCL's dict checkers read, rather than a value compared as it is."""
    if isinstance(expected, Mapping):
        return True
    return (
        isinstance(expected, list)
        and bool(expected)
        and all(isinstance(item, Mapping) for item in expected)
    )


def _bfcl_dict(given: dict[str, Any], expected: Mapping[str, Any]) -> bool:
    """BFCL's dict_checker: every key given is expected, with one of its listed values;
    every expected key left out lists ``""`` (optional). A list of dicts is matched dict
    by dict, in order (its list_dict_checker)."""
    for key, value in given.items():
        values = expected.get(key)
        if not isinstance(values, list) or not any(json_equal(value, v) for v in values):
            return False
    return all(
        key in given or (isinstance(values, list) and "" in values)
        for key, values in expected.items()
    )


@dataclass(frozen=True, slots=True)
class ToolCallVerifier:
    """The calls of the final assistant turn (or of every turn) against the expected ones."""

    order: Order = "strict"
    turns: Turns = "final"
    reads_trajectory: ClassVar[bool] = True

    @property
    def key(self) -> str:
        return f"tool_call:{self.order}:{self.turns}"

    def extract(self, response: str, context: Context = NO_CONTEXT) -> Extracted:
        """The calls made, as a canonical JSON list (None: malformed). Linear in the response."""
        messages = context.trajectory
        earlier: dict[str, Any] = {}
        if messages is None:
            calls, problem = _text_calls(response)
            if problem is None and _calls_beside_the_answer(response, len(calls)):
                earlier = {"source": EARLIER_CALLS}
        else:
            assistant = [m for m in messages if m.get("role") == "assistant"]
            calls, problem = [], None
            for message in assistant[-1:] if self.turns == "final" else assistant:
                found, problem = _message_calls(message)
                calls.extend(found)
                if problem is not None:
                    break
            if (
                self.turns == "final"
                and problem is None
                and (
                    _called(assistant[:-1])
                    or (
                        assistant
                        and _calls_beside_the_answer(message_text(assistant[-1]), len(calls))
                    )
                )
            ):
                earlier = {"source": EARLIER_CALLS}  # part of the check's key (outcomes)
        if problem is None and len(calls) > MAX_CALLS:
            problem = f"more than {MAX_CALLS} calls"
        if problem is None:
            try:
                answer = json.dumps([{"name": n, "arguments": a} for n, a in calls], sort_keys=True)
            except (TypeError, ValueError, RecursionError):  # a Python object given as arguments
                problem = "arguments that are no JSON"
            else:
                return Extracted(answer, {"tool_calls": len(calls), **earlier})
        return Extracted(None, {"tool_calls": len(calls), "failed": "malformed"})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        """Always decides: reading and comparing calls is linear in their size."""
        return self.check(extracted, ground_truth)

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        expected, order = expected_calls(ground_truth)
        if extracted.answer is None:
            return _verdict(None, "malformed")
        calls = [(c["name"], c["arguments"]) for c in json.loads(extracted.answer)]
        if not expected and extracted.extra.get("source") == EARLIER_CALLS:
            return _verdict(len(calls), "called_earlier")  # "call no tool" means in no turn
        failed = _mismatch(calls, expected, order or self.order)
        return _verdict(len(calls), failed)


def _verdict(count: int | None, failed: str | None) -> Verdict:
    extra: dict[str, Any] = {"acc": failed is None}
    if count is not None:
        extra["tool_calls"] = count
    if failed is not None:
        extra["failed"] = failed
    return Verdict(1.0 if failed is None else 0.0, extra)


# ---------------------------------------------------------------------- the response


EARLIER_CALLS = "final turn, after calls"
"""The source of a final turn's calls when calls were made outside what is read: in an
earlier assistant turn, or in the text's thinking (verl's Hermes parser runs every
``<tool_call>`` block of a turn, thinking included, and a transcript decoded as one text
has its earlier turns there). A ground truth of no call fails it (a tool the model must
not use, used in turn 1, then "Done."; a call, then ``<think></think>No tool is
needed.``), whatever the final turn does; other ground truths read the final turn."""


def _calls_beside_the_answer(text: str, read: int) -> bool:
    """Whether ``text`` holds more complete ``<tool_call>`` blocks naming a function than
    the ``read`` calls of its conclusion: calls made while thinking, in an earlier turn
    of a trajectory decoded as one text, inside a ``<tool_response>`` block the policy
    wrote, or in a turn it invented (verl's parser finds them all in what it generated)."""
    if text.count(OPEN) <= read:  # (the whole text: verl's parser reads blocks anywhere)
        return False  # the usual case: no block but those read
    named = 0
    position = 0
    while named <= read and (start := text.find(OPEN, position)) >= 0:
        end = text.find(CLOSE, start + len(OPEN))
        if end < 0:
            break
        ok, block = loads(text[start + len(OPEN) : end])
        named += ok and isinstance(block, dict) and isinstance(block.get("name"), str)
        position = end + len(CLOSE)
    return named > read


def _called(messages: list[Mapping[str, Any]]) -> bool:
    """Whether any of ``messages`` makes a call (a malformed one counts as made)."""
    for message in messages:
        found, problem = _message_calls(message)
        if found or problem is not None:
            return True
    return False


def _message_calls(message: Mapping[str, Any]) -> tuple[list[Call], str | None]:
    """An assistant message's calls: its ``tool_calls`` when it has some, else its text's
    ``<tool_call>`` blocks. Text blocks beside structured calls must be the same calls (a
    template that keeps the raw text); other ones make the message malformed: a call
    written in the text is a call made, never one the reader may skip."""
    structured = message.get("tool_calls")
    text_calls, why = _text_calls(message_text(message))
    if not structured or why is not None:
        return text_calls, why
    calls, why = _structured_calls(structured)
    if why is None and text_calls and text_calls != calls:
        return calls, "<tool_call> blocks in its text that are not its tool_calls"
    return calls, why


def _structured_calls(structured: Any) -> tuple[list[Call], str | None]:
    calls: list[Call] = []
    for call in structured:
        function = call.get("function")
        if function is None and "name" in call:  # a flat {"name", "arguments"} call
            function = call
        if not isinstance(function, Mapping):
            return calls, "a tool call without a function"
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(arguments, str):
            ok, arguments = loads(arguments)
            if not ok:
                return calls, "arguments that are not JSON"
        elif arguments is None:
            arguments = {}
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            return calls, "a call without a string name and an object of arguments"
        calls.append((name, dict(arguments)))
    return calls, None


def _text_calls(text: str) -> tuple[list[Call], str | None]:
    """The Hermes ``<tool_call>`` blocks of the text's conclusion, or why they are malformed."""
    text = conclusion(text)
    calls: list[Call] = []
    position = 0
    while (start := text.find(OPEN, position)) >= 0:
        end = text.find(CLOSE, start + len(OPEN))
        if end < 0:
            return calls, "an unclosed <tool_call>"
        ok, block = loads(text[start + len(OPEN) : end])
        if not ok or not isinstance(block, dict):
            return calls, "a <tool_call> block that is not a JSON object"
        name, arguments = block.get("name"), block.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return calls, "a <tool_call> without a string name and an object of arguments"
        if "arguments" not in block and block.keys() - _NO_ARGUMENT_KEYS:  # "parameters"
            return calls, f"a <tool_call> with {sorted(block)[:4]} but no arguments"
        calls.append((name, arguments))
        if len(calls) > MAX_CALLS:
            return calls, f"more than {MAX_CALLS} calls"
        position = end + len(CLOSE)
    if text.count(CLOSE) != len(calls):
        return calls, "a </tool_call> that closes no block"
    return calls, None


# ---------------------------------------------------------------------- the ground truth


def expected_calls(ground_truth: Any) -> tuple[tuple[Expected, ...], Order | None]:
    """The expected calls and the row's own order (None: the configured one); a ground
    truth of none of the accepted shapes is InvalidSampleError. A JSON-text ground truth
    (as Parquet datasets hold it) is read once per process."""
    if isinstance(ground_truth, str):
        return _expected_of_text(ground_truth)
    return _expected(ground_truth)


@functools.lru_cache(maxsize=4096)
def _expected_of_text(text: str) -> tuple[tuple[Expected, ...], Order | None]:
    ok, truth = loads(text)
    if not ok:
        raise InvalidSampleError("tool_call: ground_truth is a string but not JSON")
    return _expected(truth)


def _expected(truth: Any) -> tuple[tuple[Expected, ...], Order | None]:
    order: Order | None = None
    if isinstance(truth, Mapping):
        if "ground_truth" in truth:  # a BFCL possible_answer record
            truth = truth["ground_truth"]
        elif "calls" in truth:
            order = truth.get("order", "strict")
            if order not in ("strict", "any"):
                raise InvalidSampleError(
                    f"tool_call: ground_truth 'order' must be 'strict' or 'any', got {order!r}"
                )
            truth = truth["calls"]
        else:
            truth = [truth]
    if not isinstance(truth, list | tuple):
        raise InvalidSampleError(
            "tool_call: ground_truth must be a list of expected calls [{'name', 'arguments'}]"
        )
    expected = []
    bfcl = False
    for index, item in enumerate(truth):
        if isinstance(item, Mapping) and ("name" in item or "function" in item):
            expected.append(_native(item, index))
        elif isinstance(item, Mapping) and len(item) == 1:
            expected.append(_bfcl(item, index))
            bfcl = True
        else:
            raise InvalidSampleError(
                f"tool_call: expected call {index} is neither {{'name', 'arguments'}} nor "
                "BFCL's {function: {argument: [values]}}"
            )
    return tuple(expected), order if order is not None or not bfcl else "any"


_NATIVE_KEYS = frozenset({"name", "arguments", "acceptable", "function", "type", "id"})


def _native(item: Mapping[str, Any], index: int) -> Expected:
    where = f"tool_call: expected call {index}"
    unknown = sorted(set(item) - _NATIVE_KEYS)
    if unknown:
        raise InvalidSampleError(
            f"{where} has unknown key {unknown[0]!r} (keys: name, arguments, acceptable)"
        )
    function = item.get("function", item)
    if not isinstance(function, Mapping):
        raise InvalidSampleError(f"{where}: 'function' must be an object")
    name, arguments = function.get("name"), function.get("arguments", {})
    if isinstance(arguments, str):
        ok, arguments = loads(arguments)
        if not ok:
            raise InvalidSampleError(f"{where}: 'arguments' is a string but not JSON")
    arguments = without_nulls(arguments)
    if not isinstance(name, str) or not isinstance(arguments, Mapping):
        raise InvalidSampleError(f"{where} needs a string 'name' and an object 'arguments'")
    params: dict[str, tuple[tuple[Any, ...], bool]] = {
        param: ((value,), False) for param, value in arguments.items()
    }
    acceptable = item.get("acceptable") or {}
    if not isinstance(acceptable, Mapping):
        raise InvalidSampleError(f"{where}: 'acceptable' must be an object of value lists")
    for param, values in without_nulls(acceptable).items():
        params[param] = _values(values, f"{where}: acceptable {param!r}")
    return Expected(name, params)


def _bfcl(item: Mapping[str, Any], index: int) -> Expected:
    ((name, arguments),) = item.items()
    where = f"tool_call: expected call {index} ({name!r}, BFCL layout)"
    if not isinstance(arguments, Mapping):
        raise InvalidSampleError(f"{where}: its arguments must be an object")
    params = {
        param: _values(values, f"{where}: {param!r}")
        for param, values in without_nulls(arguments).items()
    }
    return Expected(str(name), params, bfcl=True)


def _values(values: Any, where: str) -> tuple[tuple[Any, ...], bool]:
    """Acceptable values and whether ``""`` among them lets the argument be left out."""
    if not isinstance(values, list | tuple) or not values:
        raise InvalidSampleError(f"{where} must be a non-empty list of acceptable values")
    return tuple(values), any(value == "" for value in values)


# ---------------------------------------------------------------------- matching


def _mismatch(calls: list[Call], expected: Sequence[Expected], order: Order) -> str | None:
    """None when the calls match, else which check failed."""
    if len(calls) != len(expected):
        return "count"
    if all(e.matches(c) for c, e in zip(calls, expected, strict=True)):
        return None
    if _matched_any_order(calls, expected):
        return None if order == "any" else "order"
    if sorted(name for name, _ in calls) != sorted(e.name for e in expected):
        return "name"
    return "arguments"


def _matched_any_order(calls: list[Call], expected: Sequence[Expected]) -> bool:
    """Whether every call pairs with its own expected call (a bipartite matching: an
    argument's acceptable values can make a greedy pairing miss one)."""
    fits = [[e.matches(call) for e in expected] for call in calls]
    owner: list[int | None] = [None] * len(expected)

    def place(call: int, seen: list[bool]) -> bool:
        for slot, fit in enumerate(fits[call]):
            if fit and not seen[slot]:
                seen[slot] = True
                holder = owner[slot]
                if holder is None or place(holder, seen):
                    owner[slot] = call
                    return True
        return False

    return all(place(call, [False] * len(expected)) for call in range(len(calls)))


def _build(section: RewardSection) -> ToolCallVerifier:
    options = section.verifiers.tool_call
    return ToolCallVerifier(order=options.order, turns=options.turns)


ENTRIES = (Entry("tool calls", Matcher(names=frozenset({"tool_call"})), _build),)
"""This module's row of the verifier registry."""
