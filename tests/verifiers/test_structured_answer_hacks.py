"""guards: answers that are structures (tool calls, JSON documents, instruction-following
texts) are read only where the response answers, and only as one value.

Each row is a shape a red team wrote from outside the project and found credited (or
ending ``error``) before the rule it guards, against the honest shape beside it:
- an empty ``<think></think>`` written after the thinking made the thinking the answer
  (a format mention, in the math families' reading): here every ``</think>`` closes;
- IFEval graded a ``<think>`` never closed as the answer (the JSON families did not);
- a key twice (``{"city": "London", "city": "Paris"}``) was read last-wins: a call could
  name two functions; now the JSON is refused, as ``NaN`` is, and a number past the float
  range too (``1e400`` read as infinity equalled ``2e400``);
- BFCL's candidate lists written back as the value (``{"city": ["Paris"]}``) matched the
  possible answers themselves; BFCL's own checker refuses them;
- a 4,000-digit integer against ``multipleOf`` ended ``error`` (OverflowError): a
  document that cannot be shown valid is not valid; a ``$schema`` that is no URI is an
  invalid ground truth, not an internal error;
- a fenced document taken back after its fence, by another document or a corrected
  value ("Actually, that is wrong; the record is {...}"), kept its credit;
- and one false negative: a ``<think>`` inside a JSON string (``{"q": "<think>"}``) was
  read as a thinking opened there, which cut a right answer; only one that opens the
  text or a line opens a thinking.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rewardkit import RewardLoop
from rewardkit.types import Status

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>'
WEATHER = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]
PERSON = {"schema": {"type": "object", "required": ["name"]}, "required_values": {"/name": "Ada"}}
ESSAY = "The weather today is mild and pleasant. People walk in the park and enjoy the sun. " * 40
WORDS = {
    "instruction_id_list": ["length_constraints:number_words", "keywords:existence"],
    "kwargs": [{"num_words": 300, "relation": "at least"}, {"keywords": ["park"]}],
}
BFCL = [{"book_hotel": {"location": [{"city": ["Paris", "Paris, France"]}], "nights": [2]}}]


def _call(arguments: dict[str, Any], name: str = "book_hotel") -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


ROWS: list[tuple[str, str, Any, float]] = [
    # (data_source, response, ground_truth, score): the hack first, then the honest answer
    ("tool_call", f"I should call it. {CALL} <think></think>\nI cannot help.", WEATHER, 0.0),
    ("tool_call", f"<think>I should call it.</think>\n{CALL}", WEATHER, 1.0),
    (
        "json_schema",
        'Draft:\n```json\n{"name": "Ada"}\n```\n<think>...</think>\nSorry.',
        PERSON,
        0.0,
    ),
    ("json_schema", '<think>Draft.</think>\n```json\n{"name": "Ada"}\n```', PERSON, 1.0),
    ("google/IFEval", ESSAY + "<think></think>\nOk.", WORDS, 0.0),
    ("google/IFEval", "<think>" + ESSAY, WORDS, 0.0),  # a thinking never closed answers nothing
    ("google/IFEval", "<think>Plan.</think>\n" + ESSAY, WORDS, 1.0),
    (
        "tool_call",
        CALL.replace('"city": "Paris"', '"city": "London", "city": "Paris"'),
        WEATHER,
        0.0,
    ),
    (
        "tool_call",
        CALL.replace('"name": "get_weather"', '"name": "drop", "name": "get_weather"'),
        WEATHER,
        0.0,
    ),
    ("json_schema", '{"name": "Bob", "name": "Ada"}', PERSON, 0.0),
    (
        "tool_call",
        _call({"location": {"city": ["Paris", "Paris, France"]}, "nights": 2}),
        BFCL,
        0.0,
    ),
    ("tool_call", _call({"location": {"city": ["Paris"]}, "nights": 2}), BFCL, 0.0),
    ("tool_call", _call({"location": {"city": "Paris, France"}, "nights": 2}), BFCL, 1.0),
    ("json_schema", '{"x": ' + "9" * 4000 + "}", {"properties": {"x": {"multipleOf": 0.5}}}, 0.0),
    ("json_schema", '{"x": 1e400}', {"properties": {"x": {"type": "number"}}}, 0.0),
    # a "<think>" inside a JSON string opens no thinking (it cut a right answer there)
    ("json_schema", '{"q": "what is <think>?"}', {"type": "object", "required": ["q"]}, 1.0),
    (
        "tool_call",
        '<tool_call>{"name": "f", "arguments": {"q": "<think>"}}</tool_call>',
        [{"name": "f", "arguments": {"q": "<think>"}}],
        1.0,
    ),
    ("tool_call", f"Plan.\n<think>I should call it. {CALL}", WEATHER, 0.0),  # never closed
    # the fence's document taken back after it, with another one or a corrected value
    (
        "json_schema",
        '```json\n{"name": "Ada"}\n```\nActually, that is wrong; the record is {"name": "Bob"}.',
        PERSON,
        0.0,
    ),
    ("json_schema", '```json\n{"name": "Ada"}\n```\nWait, it should be Bob.', PERSON, 0.0),
    ("json_schema", '```json\n{"name": "Ada"}\n```\nHere, `name` is Ada.', PERSON, 1.0),
    ("json_schema", '```json\n{"name": "Ada"}\n```\nNote: {name} is required.', PERSON, 1.0),
]


@pytest.fixture(scope="module")
def results() -> list[Any]:
    rows = [{"data_source": d, "response": r, "ground_truth": g} for d, r, g, _ in ROWS]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        return loop.score(rows)


@pytest.mark.parametrize(
    "index", range(len(ROWS)), ids=[f"{d}:{i}" for i, (d, *_) in enumerate(ROWS)]
)
def test_each_shape_scores_what_an_honest_grader_gives(results: list[Any], index: int) -> None:
    result, (_, response, _, score) = results[index], ROWS[index]
    assert result.status is Status.OK, (result.error, response[:120])
    assert result.score == score, (result.extra, response[:120])


def test_a_schema_whose_dollar_schema_is_no_uri_is_an_invalid_ground_truth() -> None:
    row = {"data_source": "json_schema", "response": '{"a": 5}', "ground_truth": {"$schema": 5}}
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        (result,) = loop.score([row])
    assert result.status is Status.INVALID and "$schema" in (result.error or "")


def test_a_schema_with_a_slow_keyword_is_checked_in_a_worker_under_the_time_limit() -> None:
    """uniqueItems is quadratic: a 16 KB array took 1.9 s on the event loop, past a 0.5 s
    reward.timeout_s, and ended ok; such a schema is checked in a worker, whatever the
    document's size (as a regular expression is)."""
    from rewardkit.verifiers.json_schema import JsonSchemaVerifier

    verifier = JsonSchemaVerifier()
    extracted = verifier.extract(json.dumps(list(range(50))))
    assert verifier.quick_check(extracted, {"type": "array", "uniqueItems": True}) is None
    assert verifier.quick_check(extracted, {"type": "array"}) is not None  # fast: inline
