"""guards: rewardkit.verifiers.tool_call: one table of rows through the whole scorer
(inline and in a worker), hostile rows included, and the verifier's options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _support.verifier_rows import table_mismatches
from rewardkit import RewardLoop
from rewardkit.config import RewardConfig, load_config
from rewardkit.io import read_rows
from rewardkit.scoring.engine import RewardEngine
from rewardkit.scoring.rows import context_of, first_phases
from rewardkit.types import Sample
from rewardkit.verifiers.tool_call import ToolCallVerifier


def hermes(name: str, arguments: Any) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def openai(*calls: tuple[str, Any], content: Any = None) -> dict[str, Any]:
    """An assistant message with OpenAI tool calls (arguments as given: text or object)."""
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ],
    }


WEATHER = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]
# the expected call made twice in one message: structured, and written in its text too
CALLED_IN_BOTH = openai(
    ("get_weather", '{"city": "Paris", "days": 3}'),
    content=hermes("get_weather", {"city": "Paris", "days": 3}),
)
TWO = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_time", "arguments": {"zone": "CET"}},
]
BFCL = [{"calc_area": {"base": [10], "height": [5, 5.0], "unit": ["cm", ""]}}]

ROWS = [
    # (response, ground_truth, status, score, failed, why)
    (hermes("get_weather", {"city": "Paris", "days": 3}), WEATHER, "ok", 1.0, None, "exact call"),
    (hermes("get_weather", {"days": 3, "city": "Paris"}), WEATHER, "ok", 1.0, None, "key order"),
    (hermes("get_weather", {"city": "Paris", "days": 3.0}), WEATHER, "ok", 1.0, None, "5 == 5.0"),
    (
        "I'll check.\n" + hermes("get_weather", {"city": "Paris", "days": 3}) + "\nDone.",
        WEATHER,
        "ok",
        1.0,
        None,
        "prose around the block",
    ),
    (
        hermes("get_weather", {"city": "Paris", "days": 3}),
        json.dumps(WEATHER),
        "ok",
        1.0,
        None,
        "ground truth as a JSON string",
    ),
    (
        hermes("get_weather", {"city": "Paris", "days": 3}),
        WEATHER[0],
        "ok",
        1.0,
        None,
        "one expected call as an object",
    ),
    (
        hermes("f", {"flag": 1}),
        [{"name": "f", "arguments": {"flag": True}}],
        "ok",
        0.0,
        "arguments",
        "1 is not true",
    ),
    (
        hermes("f", {"flag": True}),
        [{"name": "f", "arguments": {"flag": 1}}],
        "ok",
        0.0,
        "arguments",
        "true is not 1",
    ),
    (
        hermes("f", {"n": "5"}),
        [{"name": "f", "arguments": {"n": 5}}],
        "ok",
        0.0,
        "arguments",
        "'5' is not 5",
    ),
    (
        hermes("f", {"ids": "[1, 2]"}),
        [{"name": "f", "arguments": {"ids": [1, 2]}}],
        "ok",
        0.0,
        "arguments",
        "an array sent as a JSON string",
    ),
    (
        hermes("f", {"q": '{"a": 1}'}),
        [{"name": "f", "arguments": {"q": {"a": 1}}}],
        "ok",
        0.0,
        "arguments",
        "an object sent as a JSON string",
    ),
    (
        hermes("f", {"q": {"b": [1, {"c": None}], "a": 1}}),
        [{"name": "f", "arguments": {"q": {"a": 1, "b": [1.0, {"c": None}]}}}],
        "ok",
        1.0,
        None,
        "nested values, key order and 1 == 1.0 inside",
    ),
    (
        hermes("f", {"ids": [2, 1]}),
        [{"name": "f", "arguments": {"ids": [1, 2]}}],
        "ok",
        0.0,
        "arguments",
        "array order matters",
    ),
    (
        '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\", \\"days\\": 3}"}'
        "</tool_call>",
        WEATHER,
        "ok",
        0.0,
        "malformed",
        "Hermes arguments as a JSON-encoded string",
    ),
    (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}',
        WEATHER,
        "ok",
        0.0,
        "malformed",
        "unclosed tag",
    ),
    (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3},}</tool_call>',
        WEATHER,
        "ok",
        0.0,
        "malformed",
        "invalid JSON (trailing comma)",
    ),
    ("<tool_call>[1, 2]</tool_call>", WEATHER, "ok", 0.0, "malformed", "a block holding an array"),
    (
        '<tool_call>{"arguments": {"city": "Paris"}}</tool_call>',
        WEATHER,
        "ok",
        0.0,
        "malformed",
        "a block without a name",
    ),
    (
        hermes("get_weather", {"city": "Paris", "days": 3}) + "</tool_call>",
        WEATHER,
        "ok",
        0.0,
        "malformed",
        "a stray closing tag",
    ),
    (
        'I would call get_weather with {"city": "Paris", "days": 3}.',
        WEATHER,
        "ok",
        0.0,
        "count",
        "prose that looks like a call is no call",
    ),
    (
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}',
        WEATHER,
        "ok",
        0.0,
        "count",
        "a bare JSON call without tags is no call",
    ),
    (
        "<think>" + hermes("get_weather", {"city": "Paris", "days": 3}) + "</think>The weather?",
        WEATHER,
        "ok",
        0.0,
        "count",
        "a call made while thinking is no call",
    ),
    (
        "<think>maybe "
        + hermes("get_weather", {"city": "Rome", "days": 3})
        + "</think>"
        + hermes("get_weather", {"city": "Paris", "days": 3}),
        WEATHER,
        "ok",
        1.0,
        None,
        "the call after </think> counts, the one inside does not",
    ),
    (
        "<think>" + hermes("get_weather", {"city": "Paris", "days": 3}),
        WEATHER,
        "ok",
        0.0,
        "count",
        "a thinking never closed answered nothing",
    ),
    (
        hermes("get_weather", {"city": "Paris", "days": 3}) * 2,
        WEATHER,
        "ok",
        0.0,
        "count",
        "the right call twice",
    ),
    (
        hermes("get_weather", {"city": "Paris", "days": 3}) + hermes("get_time", {"zone": "CET"}),
        WEATHER,
        "ok",
        0.0,
        "count",
        "an extra call",
    ),
    (hermes("get_weather", {"city": "Paris"}), TWO, "ok", 0.0, "count", "a call missing"),
    (
        hermes("get_wether", {"city": "Paris", "days": 3}),
        WEATHER,
        "ok",
        0.0,
        "name",
        "near-miss name",
    ),
    (
        hermes("get_weather", {"city": "Paris", "days": 3, "unit": "C"}),
        WEATHER,
        "ok",
        0.0,
        "arguments",
        "an argument the expected call does not have",
    ),
    (
        hermes("get_weather", {"city": "Paris"}),
        WEATHER,
        "ok",
        0.0,
        "arguments",
        "a required argument missing",
    ),
    (
        hermes("get_weather", {"city": "paris", "days": 3}),
        WEATHER,
        "ok",
        0.0,
        "arguments",
        "strings compare exactly (no case folding)",
    ),
    (
        hermes("get_time", {"zone": "CET"}) + hermes("get_weather", {"city": "Paris"}),
        TWO,
        "ok",
        0.0,
        "order",
        "parallel calls out of order under order strict",
    ),
    (
        hermes("get_time", {"zone": "CET"}) + hermes("get_weather", {"city": "Paris"}),
        {"calls": TWO, "order": "any"},
        "ok",
        1.0,
        None,
        "the row's own order: any",
    ),
    ("The capital of France is Paris.", [], "ok", 1.0, None, "no call expected, none made"),
    (
        hermes("get_weather", {"city": "Paris"}),
        [],
        "ok",
        0.0,
        "count",
        "no call expected, one made",
    ),
    ("", WEATHER, "ok", 0.0, "count", "an empty response"),
    # OpenAI tool calls: a single assistant message, or a trajectory
    (
        openai(("get_weather", '{"city": "Paris", "days": 3}')),
        WEATHER,
        "ok",
        1.0,
        None,
        "an assistant message, arguments a JSON string",
    ),
    (
        openai(("get_weather", {"days": 3, "city": "Paris"})),
        WEATHER,
        "ok",
        1.0,
        None,
        "an assistant message, arguments an object",
    ),
    (
        openai(("get_weather", '{"city": "Paris", "days": 3')),
        WEATHER,
        "ok",
        0.0,
        "malformed",
        "arguments that are not JSON",
    ),
    (
        openai(("get_weather", json.dumps(json.dumps({"city": "Paris", "days": 3})))),
        WEATHER,
        "ok",
        0.0,
        "malformed",
        "arguments encoded twice",
    ),
    (
        CALLED_IN_BOTH,
        WEATHER,
        "ok",
        1.0,
        None,
        "tool_calls win over the same call left in the content",
    ),
    (
        [
            {
                "role": "assistant",
                "content": hermes("get_weather", {"city": "Paris", "days": 3}),
                "tool_calls": [],
            }
        ],
        WEATHER,
        "ok",
        1.0,
        None,
        "no tool_calls: the content's blocks",
    ),
    (
        [
            openai(("search", '{"q": "weather"}')),
            {"role": "tool", "tool_call_id": "call_0", "name": "search", "content": "sunny"},
            openai(("get_weather", '{"city": "Paris", "days": 3}')),
        ],
        WEATHER,
        "ok",
        1.0,
        None,
        "a trajectory: the final assistant turn's calls",
    ),
    (
        [
            openai(("get_weather", '{"city": "Paris", "days": 3}')),
            {"role": "tool", "tool_call_id": "call_0", "content": "sunny"},
            {"role": "assistant", "content": "It will be sunny."},
        ],
        WEATHER,
        "ok",
        0.0,
        "count",
        "a trajectory that ends in text: its final turn calls nothing",
    ),
    (
        [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": hermes("get_weather", {"city": "Paris", "days": 3})}
                ],
            }
        ],
        WEATHER,
        "ok",
        1.0,
        None,
        "content parts are text too",
    ),
    # BFCL's possible answers
    (
        hermes("calc_area", {"base": 10, "height": 5}),
        BFCL,
        "ok",
        1.0,
        None,
        "BFCL: the optional unit left out",
    ),
    (
        hermes("calc_area", {"base": 10.0, "height": 5, "unit": "cm"}),
        BFCL,
        "ok",
        1.0,
        None,
        "BFCL: every argument among its values",
    ),
    (
        hermes("calc_area", {"base": 10, "height": 5, "unit": "m"}),
        BFCL,
        "ok",
        0.0,
        "arguments",
        "BFCL: a value not among the acceptable ones",
    ),
    (
        hermes("calc_area", {"height": 5}),
        BFCL,
        "ok",
        0.0,
        "arguments",
        "BFCL: a required argument left out",
    ),
    (
        hermes("b", {"x": 2}) + hermes("a", {"x": 1}),
        {"id": "parallel_0", "ground_truth": [{"a": {"x": [1]}}, {"b": {"x": [2]}}]},
        "ok",
        1.0,
        None,
        "BFCL's record, parallel calls in any order",
    ),
    (
        hermes("a", {"x": 1}) + hermes("a", {"x": 1}),
        [{"a": {"x": [1, 2]}}, {"a": {"x": [2]}}],
        "ok",
        0.0,
        "arguments",
        "BFCL: one call cannot answer two expected ones",
    ),
    (
        hermes("a", {"x": 2}) + hermes("a", {"x": 1}),
        [{"a": {"x": [1, 2]}}, {"a": {"x": [2]}}],
        "ok",
        1.0,
        None,
        "BFCL: the pairing a greedy match would miss",
    ),
    (
        hermes("f", {"unit": "C"}),
        [{"name": "f", "arguments": {"unit": "celsius"}, "acceptable": {"unit": ["celsius", "C"]}}],
        "ok",
        1.0,
        None,
        "acceptable values in rewardkit's own layout",
    ),
    (
        hermes("book", {"guest": {"name": "Ada", "age": 36}}),
        [{"book": {"guest": [{"name": ["Ada", "ada"], "age": [36], "vip": [True, ""]}]}}],
        "ok",
        1.0,
        None,
        "BFCL: a dict argument's keys with listed values, an optional one left out",
    ),
    (
        hermes("book", {"guest": {"name": "Ada"}}),
        [{"book": {"guest": [{"name": ["Ada"], "age": [36]}]}}],
        "ok",
        0.0,
        "arguments",
        "BFCL: a dict argument missing a required key",
    ),
    (
        hermes("book", {"guest": {"name": "Ada", "age": 36, "pet": "cat"}}),
        [{"book": {"guest": [{"name": ["Ada"], "age": [36]}]}}],
        "ok",
        0.0,
        "arguments",
        "BFCL: a dict argument with a key not expected",
    ),
    (
        hermes("book", {"rooms": [{"n": 1}, {"n": 2}]}),
        [{"book": {"rooms": [[{"n": [1]}, {"n": [2]}]]}}],
        "ok",
        1.0,
        None,
        "BFCL: a list of dicts, dict by dict",
    ),
    (
        hermes("book", {"rooms": [{"n": 2}, {"n": 1}]}),
        [{"book": {"rooms": [[{"n": [1]}, {"n": [2]}]]}}],
        "ok",
        0.0,
        "arguments",
        "BFCL: a list of dicts in another order",
    ),
    (
        hermes("f", {"q": {"a": "x"}}),
        [{"name": "f", "arguments": {"q": {"a": ["x"]}}}],
        "ok",
        0.0,
        "arguments",
        "rewardkit's layout: a dict of lists is that value, nothing more",
    ),
    # bad ground truths are bad data, never a 0
    (hermes("f", {}), "not json", "invalid", None, None, "a ground truth string that is not JSON"),
    (hermes("f", {}), 5, "invalid", None, None, "a number for a ground truth"),
    (hermes("f", {}), [{"name": "f", "args": {}}], "invalid", None, None, "a misspelt key"),
    (hermes("f", {}), {"calls": [], "order": "random"}, "invalid", None, None, "an unknown order"),
    (hermes("f", {}), [{"f": {"x": 1}}], "invalid", None, None, "BFCL values not in a list"),
    (hermes("f", {}), None, "invalid", None, None, "no ground truth"),
    (
        [{"role": "assistant", "content": "x"}, 7],
        WEATHER,
        "invalid",
        None,
        None,
        "a trajectory holding a non-message",
    ),
    # a message's text calls beside its structured ones: the same calls (a template that
    # keeps the raw text) or a malformed message (a wrong call hidden in the text)
    (
        [CALLED_IN_BOTH],
        WEATHER,
        "ok",
        1.0,
        None,
        "the structured call also written in the text",
    ),
    (
        [
            openai(
                ("get_weather", '{"city": "Paris", "days": 3}'),
                content=hermes("delete_files", {"path": "/"}),
            )
        ],
        WEATHER,
        "ok",
        0.0,
        "malformed",
        "another call written in the text",
    ),
    # a ground truth of no call means no call in any turn: a forbidden tool used in turn 1,
    # then "Done.", scored 1.0 when only the final turn was read
    (
        [
            openai(("delete_files", '{"path": "/"}')),
            {"role": "tool", "tool_call_id": "call_0", "content": "deleted"},
            {"role": "assistant", "content": "Done."},
        ],
        [],
        "ok",
        0.0,
        "called_earlier",
        "a call in an earlier turn, none expected",
    ),
    (
        [
            {"role": "assistant", "content": "No tool is needed here."},
            {"role": "user", "content": "Thanks."},
            {"role": "assistant", "content": "You are welcome."},
        ],
        [],
        "ok",
        1.0,
        None,
        "no call in any turn, none expected",
    ),
    (
        [
            openai(("get_time", '{"zone": "CET"}')),
            {"role": "tool", "tool_call_id": "call_0", "content": "12:00"},
            openai(("get_weather", '{"city": "Paris", "days": 3}')),
        ],
        WEATHER,
        "ok",
        1.0,
        None,
        "calls expected: the final turn's are read, as before",
    ),
    (
        [{"role": "Assistant", "content": hermes("get_weather", {"city": "Paris"})}],
        [],
        "invalid",
        None,
        None,
        "a role spelled otherwise: its call would go unseen",
    ),
]


@pytest.fixture(scope="module")
def loop(both_paths_loop: RewardLoop) -> RewardLoop:
    return both_paths_loop


def test_table(loop: RewardLoop) -> None:
    """Every row in one batch (each row's verdict is its own, whatever its neighbours)."""
    assert table_mismatches(loop, "tool_call", ROWS) == []


def test_two_trajectories_with_the_same_text_but_other_calls_are_not_shared(
    loop: RewardLoop,
) -> None:
    right = [openai(("get_weather", '{"city": "Paris", "days": 3}'), content="Checking.")]
    wrong = [openai(("get_weather", '{"city": "Rome", "days": 3}'), content="Checking.")]
    rows = [
        {"data_source": "tool_call", "response": r, "ground_truth": WEATHER}
        for r in (right, wrong, right, wrong)
    ]
    assert [r.score for r in loop.score(rows)] == [1.0, 0.0, 1.0, 0.0]
    assert Sample.from_row(rows[0]).response_key != Sample.from_row(rows[1]).response_key


def _verdict(verifier: ToolCallVerifier, response: Any, truth: Any) -> float:
    sample = Sample.from_row({"data_source": "tool_call", "response": response})
    _, quick = first_phases(
        verifier, sample.response_text, truth, context_of(verifier, sample, None)
    )
    assert quick is not None
    return quick.score


def test_order_any_and_every_turn_are_options() -> None:
    swapped = hermes("get_time", {"zone": "CET"}) + hermes("get_weather", {"city": "Paris"})
    assert _verdict(ToolCallVerifier(), swapped, TWO) == 0.0
    assert _verdict(ToolCallVerifier(order="any"), swapped, TWO) == 1.0
    trajectory = [
        openai(("get_weather", {"city": "Paris"})),
        {"role": "tool", "content": "sunny"},
        openai(("get_time", {"zone": "CET"})),
    ]
    assert _verdict(ToolCallVerifier(), trajectory, TWO) == 0.0
    assert _verdict(ToolCallVerifier(turns="all"), trajectory, TWO) == 1.0


def test_calls_read_back_from_parquet_score_as_they_were_written(
    loop: RewardLoop, tmp_path: Path
) -> None:
    """pandas and Hugging Face datasets store a column of argument objects as one struct
    of every row's keys, read back as nulls where a row lacks one: a third row's extra
    "units" made both right calls score 0. A null argument is one not given."""
    rows = [
        {"response": [openai(("square", {"x": 5}))], "ground_truth": [call("square", x=5)]},
        {"response": [openai(("weather", {"city": "Paris"}))],
         "ground_truth": [call("weather", city="Paris")]},
        {"response": [openai(("weather", {"city": "Paris", "units": "F"}))],
         "ground_truth": [call("weather", city="Paris")]},
    ]  # fmt: skip
    rows = [{"data_source": "tool_call", **row} for row in rows]
    path = tmp_path / "calls.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    read = list(read_rows(path))
    assert read[0]["ground_truth"][0]["arguments"]["city"] is None  # the struct's null
    assert [r.score for r in loop.score(read)] == [1.0, 1.0, 0.0]
    assert [r.score for r in loop.score(rows)] == [1.0, 1.0, 0.0]
    bfcl = [{"weather": {"city": ["Paris"], "units": None}}]  # BFCL layout, null-filled
    assert _verdict(ToolCallVerifier(), [openai(("weather", {"city": "Paris"}))], bfcl) == 1.0


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def test_options_come_from_the_config_and_bad_ones_are_refused() -> None:
    config = load_config({"reward": {"verifiers": {"tool_call": {"order": "any"}}}})
    assert config.reward.verifiers.tool_call.order == "any"
    with pytest.raises(Exception, match="order"):
        load_config({"reward": {"verifiers": {"tool_call": {"order": "sorted"}}}})
    with pytest.raises(Exception, match="ordr"):
        load_config({"reward": {"verifiers": {"tool_call": {"ordr": "any"}}}})


def test_hostile_sizes_stay_bounded() -> None:
    """A thousand calls, a block nested past the parser's depth: malformed, quickly."""
    verifier = ToolCallVerifier()
    many = hermes("f", {}) * 1000
    assert _verdict(verifier, many, [{"name": "f", "arguments": {}}]) == 0.0
    deep = '<tool_call>{"name": "f", "arguments": {"x": ' + "[" * 100_000 + "</tool_call>"
    assert _verdict(verifier, deep, [{"name": "f", "arguments": {}}]) == 0.0


async def test_a_large_batch_and_a_huge_trajectory_take_the_workers_paths_with_the_same_verdicts() -> (
    None
):
    """A batch of 64 rows or more spreads its phases over the workers (the trajectory goes
    with each row); a trajectory past the inline size runs every phase in a worker."""
    rows = [
        {"data_source": "tool_call", "response": response, "ground_truth": truth}
        for response, truth, status, *_ in ROWS
        if status == "ok"
    ]
    rows = (rows * 3)[:120]
    expected = [r["score"] for r in _inline_scores(rows)]
    huge = [
        openai(("search", '{"q": "x"}')),
        {"role": "tool", "content": "y" * 150_000},
        openai(("get_weather", '{"city": "Paris", "days": 3}')),
    ]
    big_rows = [
        {"data_source": "tool_call", "response": huge, "ground_truth": WEATHER},
        {"data_source": "tool_call", "response": huge, "ground_truth": TWO},
    ]
    engine = await RewardEngine.create(RewardConfig.model_validate({"reward": {"num_workers": 2}}))
    try:
        spread = await engine.score_many(rows)
        assert engine.stats["spread"] >= 64
        whole = await engine.score_many(big_rows)
    finally:
        await engine.close()
    assert [r.score for r in spread] == expected
    assert [(r.status.value, r.score) for r in whole] == [("ok", 1.0), ("ok", 0.0)]


def _inline_scores(rows: list[dict[str, Any]]) -> list[Any]:
    verifier = ToolCallVerifier()
    out = []
    for row in rows:
        sample = Sample.from_row(row)
        _, quick = first_phases(
            verifier, sample.response_text, row["ground_truth"], context_of(verifier, sample, None)
        )
        assert quick is not None
        out.append({"score": quick.score})
    return out
