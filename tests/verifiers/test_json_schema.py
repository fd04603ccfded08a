"""guards: rewardkit.verifiers.json_schema: one table of rows through the whole scorer
(inline and in a worker), hostile schemas and documents included."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from _support.verifier_rows import table_mismatches
from rewardkit import RewardLoop
from rewardkit.verifiers.json_schema import JsonSchemaVerifier

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
DOC = '{"name": "Ada", "age": 36}'
PINNED = {"schema": PERSON, "required_values": {"/name": "Ada", "/age": 36}}

# fmt: off
ROWS = [
    # (response, ground_truth, status, score, failed, why)
    (DOC, PERSON, "ok", 1.0, None, "a bare document"),
    ("  \n" + DOC + "\n\n", PERSON, "ok", 1.0, None, "blanks around it"),
    ("Here it is:\n```json\n" + DOC + "\n```", PERSON, "ok", 1.0, None, "a json fence after prose"),
    ("```\n" + DOC + "\n```\nThat is all.", PERSON, "ok", 1.0, None, "a bare fence, prose after"),
    ('```json\n{"name": "Bob"}\n```\nFixed:\n```json\n' + DOC + "\n```", PERSON, "ok", 1.0, None,
     "the last fence counts"),
    ("```json\n" + DOC + '\n```\nOops:\n```json\n{"name": "Bob"}\n```', PERSON, "ok", 0.0,
     "schema", "the last fence counts, even when wrong"),
    (DOC, json.dumps(PERSON), "ok", 1.0, None, "the schema as a JSON string"),
    ('{"name": "Ada"}', PERSON, "ok", 0.0, "schema", "a required property missing"),
    ('{"name": "Ada", "age": "36"}', PERSON, "ok", 0.0, "schema", "'36' is not an integer"),
    ('{"name": "Ada", "age": 36, "x": 1}', PERSON, "ok", 0.0, "schema", "an extra property"),
    (DOC + " Hope this helps!", PERSON, "ok", 0.0, "no_json", "JSON with trailing prose"),
    ("The answer: " + DOC, PERSON, "ok", 0.0, "no_json", "JSON after prose, no fence"),
    ("```json\n" + DOC, PERSON, "ok", 0.0, "no_json", "an unclosed fence"),
    ("<think>" + DOC + "</think>I cannot say.", PERSON, "ok", 0.0, "no_json",
     "a valid object hidden in the reasoning, not in the answer"),
    ('<think>draft {"name": 1}</think>\n' + DOC, PERSON, "ok", 1.0, None,
     "the answer after </think>"),
    ("<think>\n```json\n" + DOC + "\n```", PERSON, "ok", 0.0, "no_json",
     "a thinking never closed answered nothing"),
    ("", PERSON, "ok", 0.0, "no_json", "an empty response"),
    ('{"name": "Ada", "age": NaN}', PERSON, "ok", 0.0, "no_json", "NaN is no JSON"),
    ('{"age": ' + "9" * 5000 + "}", {"type": "object"}, "ok", 0.0, "no_json",
     "a number past the digit limit"),
    ("[" * 100 + "]" * 100, {}, "ok", 0.0, "too_deep", "nesting past 64 levels"),
    ("[" * 100_000 + "]" * 100_000, {}, "ok", 0.0, "no_json", "nesting past the parser"),
    # past the float range: refused, as NaN is (read as infinity, 1e999 would equal 2e999)
    ("{\"a\": 1e999}", {"type": "object"}, "ok", 0.0, "no_json", "a number past the float range"),
    ("{\"a\": 1, \"a\": 2}", {"type": "object"}, "ok", 0.0, "no_json", "a key twice"),
    ("5", {"type": "integer"}, "ok", 1.0, None, "a scalar document"),
    ("5.0", {"type": "integer"}, "ok", 1.0, None, "5.0 is an integer (draft 6 on)"),
    ("true", {"type": "integer"}, "ok", 0.0, "schema", "true is not an integer"),
    (DOC, True, "ok", 1.0, None, "the boolean schema true"),
    (DOC, False, "ok", 0.0, "schema", "the boolean schema false"),
    (DOC, PINNED, "ok", 1.0, None, "required values equal"),
    # what a reader sees (an outside red team's findings): a fence in an HTML comment or
    # struck out is no answer; a document taken back in words after its fence is none
    ('```json\n{"name": "Bob", "age": 36}\n```\n<!--\n```json\n' + DOC + "\n```\n-->", PINNED,
     "ok", 0.0, "required_values", "the visible fence, not the one in a comment"),
    ("Here:\n<!--\n```json\n" + DOC + "\n```\n-->", PINNED, "ok", 0.0, "no_json",
     "a fence in a comment only"),
    ("<del>```json\n" + DOC + "\n```</del>", PINNED, "ok", 0.0, "no_json", "a struck-out fence"),
    ('<!-- {"name": "Bob", "age": 36} -->\n' + DOC, PINNED, "ok", 1.0, None,
     "a commented-out draft, then the document"),
    ("```json\n" + DOC + '\n```\n<!-- {"name": "Bob"} -->', PINNED, "ok", 1.0, None,
     "a comment after the fence offers nothing"),
    ('{"html": "<!-- x --> ~~y~~"}', {"type": "object"}, "ok", 1.0, None,
     "comment marks inside a JSON string are its text"),
    ("```json\n" + DOC + "\n```\n\nActually, the name should be Bob.", PINNED, "ok", 0.0,
     "several_answers", "taken back: actually ... should be"),
    ("```json\n" + DOC + "\n```\nCorrection: name is Bob.", PINNED, "ok", 0.0, "several_answers",
     "taken back: a correction label"),
    ("```json\n" + DOC + "\n```\nIgnore the above.", PINNED, "ok", 0.0, "several_answers",
     "taken back: ignore the above"),
    ("```json\n" + DOC + "\n```\nThe above JSON is wrong.", PINNED, "ok", 0.0, "several_answers",
     "taken back: a verdict on it"),
    ("```json\n" + DOC + "\n```\n更正：名字应该是Bob。", PINNED, "ok", 0.0, "several_answers",
     "taken back, in Chinese"),
    ("```json\n" + DOC + "\n```\nActually, the age should be an integer, which it is.", PINNED,
     "ok", 1.0, None, "'actually' about the schema, no value given"),
    ('{"name": "Ada", "age": 36}<|im_end|>', PINNED, "ok", 1.0, None,
     "the document, then the end of its turn (no_json before)"),
    ('{"name": "Ada", "age": 36}<|eot_id|><|start_header_id|>user<|end_header_id|>\n{"name": "Bob"}',
     PINNED, "ok", 1.0, None, "what an invented turn says after the mark answers nothing"),
    # an outside red team's corrections, each credited before
    ("```json\n" + DOC + "\n```\n\nWait, the name should be Bob.", PINNED, "ok", 0.0,
     "several_answers", "taken back: wait ... should be"),
    ("```json\n" + DOC + "\n```\n\nOops, age should be 37, not 36.", PINNED, "ok", 0.0,
     "several_answers", "taken back: oops ... should be"),
    ("```json\n" + DOC + "\n```\n\nThe name is wrong; it should be Bob.", PINNED, "ok", 0.0,
     "several_answers", "taken back: a field called wrong, then its value"),
    ("```json\n" + DOC + "\n```\n\nWait, that's not right.", PINNED, "ok", 0.0,
     "several_answers", "taken back: a disavowal"),
    ("```json\n" + DOC + "\n```\n\nI made a mistake in the JSON above.", PINNED, "ok", 0.0,
     "several_answers", "taken back: a mistake owned"),
    ("```json\n" + DOC + "\n```\n\nNote: the name could also be Bob.", PINNED, "ok", 0.0,
     "several_answers", "another value offered"),
    # a field given another value in a sentence of its own, with or without a cue
    ("```json\n" + DOC + "\n```\n\nActually, the name is Bob.", PINNED, "ok", 0.0,
     "several_answers", "a field's value replaced: actually ... is"),
    ("```json\n" + DOC + "\n```\n\nThe age must be 18+ and the name should be YYYY-free.",
     PINNED, "ok", 1.0, None, "rules on fields, no cue: kept"),
    ("```json\n" + DOC + '\n```\n\nThe name must be "Ada" or "Bob" per the schema.', PINNED,
     "ok", 1.0, None, "an enum described, no cue: kept"),
    ("```json\n" + DOC + '\n```\n\nOops, "name" should be "Eve".', PINNED, "ok", 0.0,
     "several_answers", "a quoted key and value"),
    ("```json\n" + DOC + "\n```\n\nThe name is Ada, as the text says.", PINNED, "ok", 1.0,
     None, "the field's own value stated again"),
    ("```json\n" + DOC + "\n```\n\nThe age is 36 years.", PINNED, "ok", 1.0, None,
     "the field's own number, with its unit"),
    ("```json\n" + DOC + "\n```\n\nThe age should be a positive integer.", PINNED, "ok", 1.0,
     None, "the schema described, no value"),
    ("```json\n" + DOC + "\n```\n\nThe user name is Bob.", PINNED, "ok", 1.0, None,
     "another name than the key's"),
    ("```json\n" + DOC + "\n```\n\nNote: the date should be in ISO format if you add one.",
     PINNED, "ok", 1.0, None, "a note on the format, no correction"),
    ("```json\n" + DOC + "\n```\n\nThe `age` field must be an integer, so I wrote 36.",
     PINNED, "ok", 1.0, None, "an explanation of the document"),
    # a second red team's regressions of those rules' first version: notes that keep it
    ("```json\n" + DOC + "\n```\n\nIf any value is incorrect, it should be flagged for review.",
     PINNED, "ok", 1.0, None, "a note on handling errors"),
    ("```json\n" + DOC + '\n```\n\nSorry, no status was given, so I assumed it should be "active".',
     PINNED, "ok", 1.0, None, "an assumption explained"),
    ("```json\n" + DOC + "\n```\n\nDoes the schema allow extra fields? No.", PINNED, "ok", 1.0,
     None, "'No.' answering a question, no disavowal"),
    ("Example:\nUser: give me a record\nAssistant: sure\n\n```json\n" + DOC + "\n```", PINNED,
     "ok", 1.0, None, "a quoted dialogue before the document is no turn of its own"),
    ('{"name": "Ada", "age": 36.0}', PINNED, "ok", 1.0, None, "36 == 36.0 at a pointer"),
    # thinking markup inside a string of a document that is the whole answer closes nothing
    # (an outside red team's rows: no_json before)
    ('{"close_tag": "</think>"}', {"type": "object", "required": ["close_tag"]}, "ok", 1.0, None,
     "</think> inside a string"),
    ('{"format": "<reasoning>...</reasoning><answer>...</answer>"}',
     {"type": "object", "required": ["format"]}, "ok", 1.0, None, "a GRPO format string"),
    ('<think>Ada, 36.</think>\n{"name": "Ada", "age": 36}', PINNED, "ok", 1.0, None,
     "a real thinking before the document still closes"),
    ('{"name": "Bob", "age": 36}', PINNED, "ok", 0.0, "required_values", "a required value differs"),
    ('{"a": [1, {"b/c": true}]}', {"schema": {}, "required_values": {"/a/1/b~1c": True}}, "ok",
     1.0, None, "an escaped pointer into an array"),
    ('{"a": [1, {"b/c": 1}]}', {"schema": {}, "required_values": {"/a/1/b~1c": True}}, "ok",
     0.0, "required_values", "1 is not true"),
    ('{"a": []}', {"schema": {}, "required_values": {"/a/0": 1}}, "ok", 0.0, "required_values",
     "a pointer past the end"),
    ('{"id": "x1"}', {"properties": {"id": {"pattern": "^x[0-9]+$"}}}, "ok", 1.0, None,
     "a pattern (validated in a worker)"),
    ('{"id": "y1"}', {"properties": {"id": {"pattern": "^x[0-9]+$"}}}, "ok", 0.0, "schema",
     "a pattern not matched"),
    ('{"a": {"a": {}}}', {"$defs": {"n": {"type": "object", "additionalProperties": {"$ref": "#/$defs/n"}}},
                          "$ref": "#/$defs/n"}, "ok", 1.0, None, "a local recursive $ref"),
    ('{"$schema": 1}', {"$ref": "https://json-schema.org/draft/2020-12/schema"}, "ok", 0.0, "schema",
     "a $ref to a draft's meta-schema resolves offline"),
    (DOC, {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}, "ok", 1.0, None,
     "an older draft"),
    # bad ground truths are bad data, never a 0
    (DOC, {"type": "objekt"}, "invalid", None, None, "a schema its meta-schema refuses"),
    (DOC, {"minimum": "3"}, "invalid", None, None, "a keyword of the wrong type"),
    (DOC, "{not json", "invalid", None, None, "a ground truth string that is not JSON"),
    (DOC, [1, 2], "invalid", None, None, "an array is no schema"),
    (DOC, {"schema": PERSON, "required_values": ["/name"]}, "invalid", None, None,
     "required values not an object"),
    (DOC, {"schema": PERSON, "required_values": {"name": "Ada"}}, "invalid", None, None,
     "a pointer without its slash"),
    (DOC, {"$ref": "https://example.com/person.json"}, "invalid", None, None,
     "a remote $ref is never fetched"),
    (DOC, {"$ref": "#/$defs/missing"}, "invalid", None, None, "a local $ref to nothing"),
    (DOC, None, "invalid", None, None, "no ground truth"),
    ("no JSON here", {"type": "objekt"}, "invalid", None, None,
     "a bad schema is reported even when the response has no JSON"),
]
# fmt: on


@pytest.fixture(scope="module")
def loop(both_paths_loop: RewardLoop) -> RewardLoop:
    return both_paths_loop


def test_table(loop: RewardLoop) -> None:
    """Every row in one batch (each row's verdict is its own, whatever its neighbours)."""
    assert table_mismatches(loop, "json_schema", ROWS, worker_error_ok=True) == []


def test_a_catastrophic_pattern_costs_its_row_only() -> None:
    """A regex that backtracks for ever runs in a worker, killed at timeout_s; the row
    beside it scores."""
    evil = {"properties": {"s": {"pattern": "^(a+)+$"}}}
    rows: list[dict[str, Any]] = [
        {
            "data_source": "json_schema",
            "response": '{"s": "' + "a" * 40 + '!"}',
            "ground_truth": evil,
        },
        {"data_source": "json_schema", "response": DOC, "ground_truth": PERSON},
    ]
    with RewardLoop({"reward": {"num_workers": 1, "timeout_s": 1}}) as loop:
        started = time.perf_counter()
        results = loop.score(rows)
    assert [r.status.value for r in results] == ["timeout", "ok"]
    assert results[1].score == 1.0
    assert time.perf_counter() - started < 20


def test_a_closed_recursive_schema_is_validated_in_a_worker() -> None:
    """jsonschema checks ``unevaluatedProperties`` by validating every ``allOf``/``anyOf``
    subschema again over the subtree at each level: each level doubles the time (a
    400-character chain took 9 s). Such a schema is no inline check: the event loop
    never runs it (a red team's find)."""
    node = {
        "type": "object",
        "allOf": [{"properties": {"name": {"type": "string"}}}],
        "anyOf": [{"properties": {"child": {"$ref": "#/$defs/node"}}}, {"required": ["name"]}],
        "unevaluatedProperties": False,
    }
    schema = {"$defs": {"node": node}, "$ref": "#/$defs/node"}
    doc: dict[str, Any] = {"name": "leaf"}
    for _ in range(16):
        doc = {"name": "n", "child": doc}
    verifier = JsonSchemaVerifier()
    extracted = verifier.extract(json.dumps(doc))
    started = time.process_time()
    assert verifier.quick_check(extracted, schema) is None  # left to a worker
    assert time.process_time() - started < 0.5


def test_fenced_mode_reads_fences_only() -> None:
    fenced = JsonSchemaVerifier(answer="fenced")
    assert fenced.extract(DOC).answer is None
    assert fenced.extract("```json\n" + DOC + "\n```").answer == DOC
    assert JsonSchemaVerifier().extract(DOC).answer == DOC


@pytest.mark.parametrize(
    "response",
    ["<s>x</s> " * 40_000, "<!-- a --> " * 40_000, "```\n{}\n``` <DEL>y</DEL> " * 20_000],
    ids=["struck tags", "comments", "fences and tags"],
)
def test_reading_as_rendered_is_linear_in_hiding_marks(response: str) -> None:
    """Each comment, struck-out tag or fence is passed once (a lower-cased copy of the
    whole text per tag made 40,000 tags quadratic). Well under 100 ms on an idle core."""
    verifier = JsonSchemaVerifier()
    started = time.process_time()
    verifier.extract(response)
    assert time.process_time() - started < 1.0
