"""guards: rewardkit.types: Sample read from rows (each bad field named), Result's rules."""

from __future__ import annotations

import pytest

from rewardkit import InvalidSampleError, Result, RewardLoop, Sample, Status


def test_from_row_reads_verl_parquet_layout() -> None:
    row = {
        "data_source": "openai/gsm8k",
        "prompt": [{"role": "user", "content": "2+2?"}],
        "response": "#### 4",
        "reward_model": {"ground_truth": "4", "style": "rule"},
        "extra_info": {"index": 3},
    }
    sample = Sample.from_row(row)
    assert sample.ground_truth == "4"
    assert sample.prompt_text == "2+2?"
    assert sample.extra_info == {"index": 3}


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"response": "x"}, "data_source"),
        ({"data_source": "", "response": "x"}, "data_source"),
        ({"data_source": "math"}, "response"),
        ({"data_source": "math", "response": None}, "response"),
        ({"data_source": "math", "response": 42}, "response"),
        ({"data_source": "math", "response": "x", "prompt": 7}, "prompt"),
        ({"data_source": "math", "response": "x", "extra_info": [1]}, "extra_info"),
    ],
)
def test_from_row_names_the_bad_field(row: dict, field: str) -> None:
    with pytest.raises(InvalidSampleError, match=field):
        Sample.from_row(row)


def test_non_mapping_row_is_invalid() -> None:
    with pytest.raises(InvalidSampleError, match="expected an object"):
        Sample.from_row(["not", "a", "row"])


def test_default_data_source_fills_a_missing_one() -> None:
    assert Sample.from_row({"response": "x"}, default_data_source="math").data_source == "math"


def test_lone_surrogates_are_replaced_so_text_always_encodes() -> None:
    sample = Sample.from_row({"data_source": "math", "response": "a\ud800b\x00"})
    sample.response.encode("utf-8")
    # U+FFFD, never "?": a verifier reads "#### 72?" as a question, not the answer 72
    assert sample.response == "a\ufffdb\x00"


def test_result_refuses_a_score_on_failure_and_none_on_success() -> None:
    with pytest.raises(ValueError):
        Result(0, Status.TIMEOUT, score=0.0)
    with pytest.raises(ValueError):
        Result(0, Status.OK, score=None)
    with pytest.raises(ValueError):
        Result(0, Status.OK, score=float("nan"))


def test_result_row_is_the_input_plus_outcome() -> None:
    result = Result(
        2, Status.OK, score=1.0, components={"rule": 1.0}, extra={"acc": True}, row={"id": "a"}
    )
    row = result.to_row()
    assert row == {
        "id": "a",
        "score": 1.0,
        "status": "ok",
        "error": None,
        "components": {"rule": 1.0},
        "extra": {"acc": True},
    }
    assert result.log() == {"reward/rule": 1.0, "reward/score": 1.0}


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ("a\nb", "a b"),
        ("a\r\n  b\u2028c\x85d", "a b c d"),
        ("x" * 5000, "x" * 1999 + "\u2026"),
        ("plain  spaces kept", "plain  spaces kept"),  # no break: untouched
    ],
)
def test_a_result_error_is_always_one_bounded_line(error: str, expected: str) -> None:
    assert Result(0, Status.ERROR, error=error).error == expected


def test_hand_built_samples_with_wrong_types_are_invalid_rows_not_a_failed_batch() -> None:
    """A Sample built in Python is checked as a dict row is: a list as extra_info, bytes or
    an int as response make an invalid row, not a failed ``loop.score`` call (every row
    lost) nor a value reaching the verifier."""
    good = Sample(data_source="openai/gsm8k", response="#### 4", ground_truth="4")
    rows = [
        good,
        Sample(data_source="openai/gsm8k", response="#### 4", ground_truth="4", extra_info=[1]),  # type: ignore[arg-type]
        Sample(data_source="openai/gsm8k", response=b"#### 4", ground_truth="4"),  # type: ignore[arg-type]
        Sample(data_source="lighteval/MATH", response=4, ground_truth="4"),  # type: ignore[arg-type]
        Sample(data_source=None, response="#### 4", ground_truth="4"),  # type: ignore[arg-type]
        {"data_source": "openai/gsm8k", "response": b"#### 4", "ground_truth": "4"},
        good,
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        results = loop.score(rows)
    assert [r.score for r in results] == [1.0, None, None, None, None, None, 1.0]
    assert all(r.status is Status.INVALID for r in results[1:-1])
    assert results[1].error == "field 'extra_info' must be an object"
    assert (
        results[2].error
        == "field 'response' must be a string or a list of chat messages (got bytes)"
    )
    assert (
        results[3].error == "field 'response' must be a string or a list of chat messages (got int)"
    )
    assert Sample.from_row(good) is good  # a well-typed Sample is taken as it is


TRAJECTORY = [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "1", "name": "f", "content": "42"},
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "#### "}, {"type": "text", "text": "42"}],
    },
]


def test_the_responses_api_output_text_parts_are_text() -> None:
    """A model's answer in an ``output_text`` part (OpenAI's Responses API) is its text:
    read as no text, a right answer scored 0."""
    message = {"role": "assistant", "content": [{"type": "output_text", "text": "#### 42"}]}
    assert Sample.from_row({"data_source": "gsm8k", "response": [message]}).response_text == (
        "#### 42"
    )
    with pytest.raises(InvalidSampleError, match="text part without a string 'text'"):
        Sample.from_row(
            {
                "data_source": "gsm8k",
                "response": [{**message, "content": [{"type": "output_text"}]}],
            }
        )


def test_a_trajectory_is_a_response_and_text_verifiers_read_its_final_assistant_text() -> None:
    sample = Sample.from_row({"data_source": "gsm8k", "response": TRAJECTORY})
    assert sample.response == TRAJECTORY
    assert sample.response_text == "#### 42"
    assert sample.response_chars > len("#### 42")  # the tool calls and results count too
    one = Sample.from_row(
        {"data_source": "gsm8k", "response": {"role": "assistant", "content": "x"}}
    )
    assert one.response == [{"role": "assistant", "content": "x"}]
    calls_only = Sample.from_row({"data_source": "gsm8k", "response": TRAJECTORY[:2]})
    assert calls_only.response_text == ""  # no assistant text: an empty response


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ([1], "field 'response' message 0 must be a chat message object (got int)"),
        (
            [{"content": "x"}],
            "field 'response' message 0: 'role' must be a non-empty string (got missing)",
        ),
        (
            [{"role": "assistant"}, {"role": 3}],
            "field 'response' message 1: 'role' must be a non-empty string (got int)",
        ),
        (
            [{"role": "assistant", "content": 5}],
            "field 'response' message 0: 'content' must be a string, a list of content parts or null (got int)",
        ),
        (
            [{"role": "assistant", "content": ["x"]}],
            "field 'response' message 0: content part 0 must be an object (got str)",
        ),
        (
            [{"role": "assistant", "content": [{"type": "text", "text": 1}]}],
            "field 'response' message 0: content part 0 is a text part without a string 'text'",
        ),
        (
            [{"role": "assistant", "tool_calls": "f()"}],
            "field 'response' message 0: 'tool_calls' must be a list (got str)",
        ),
        (
            [{"role": "assistant", "tool_calls": [None]}],
            "field 'response' message 0: tool call 0 must be an object (got NoneType)",
        ),
        # a role in another spelling would hide the model's turns from every reader (a
        # forbidden call in an "Assistant" turn scored 1.0, a right answer 0.0)
        *(
            (
                [{"role": role, "content": "#### 42"}],
                f"field 'response' message 0: unknown role {role!r} (roles are assistant, "
                "developer, function, ipython, system, tool, user; the model's turns are "
                "'assistant')",
            )
            for role in ("Assistant", "ASSISTANT", "model", "bot")
        ),
        *(
            (
                trajectory,
                "field 'response' is a trajectory without an 'assistant' message: nothing "
                "the model said to score",
            )
            for trajectory in ([], [{"role": "tool", "content": "42"}], [{"role": "user"}])
        ),
    ],
)
def test_a_malformed_trajectory_names_the_message_and_its_field(
    response: object, reason: str
) -> None:
    with pytest.raises(InvalidSampleError) as caught:
        Sample.from_row({"data_source": "gsm8k", "response": response})
    assert str(caught.value) == reason


def test_a_bad_trajectory_costs_its_row_only_and_text_verifiers_score_the_final_text() -> None:
    rows = [
        {"data_source": "openai/gsm8k", "response": TRAJECTORY, "ground_truth": "42"},
        {"data_source": "openai/gsm8k", "response": [{"role": 1}], "ground_truth": "42"},
        {"data_source": "openai/gsm8k", "response": TRAJECTORY[:2], "ground_truth": "42"},
        Sample(data_source="openai/gsm8k", response=TRAJECTORY[2], ground_truth="42"),  # type: ignore[arg-type]
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        results = loop.score(rows)
    assert [(r.status.value, r.score) for r in results] == [
        ("ok", 1.0),
        ("invalid", None),
        ("ok", 0.0),
        ("ok", 1.0),
    ]
    assert results[0].row["response"] == TRAJECTORY  # echoed as given


def test_size_limits_count_the_whole_trajectory() -> None:
    big = [{"role": "tool", "content": "x" * 5000}, {"role": "assistant", "content": "#### 4"}]
    config = {"reward": {"num_workers": 1, "max_response_chars": 1000}}
    with RewardLoop(config) as loop:
        [result] = loop.score([{"data_source": "gsm8k", "response": big, "ground_truth": "4"}])
    assert result.status is Status.INVALID
    assert "response (a trajectory) has" in (result.error or "")
