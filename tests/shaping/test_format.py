"""guards: the <think>...</think> answer format reward."""

from __future__ import annotations

import time

import pytest

from rewardkit.shaping.format import format_score

ROWS = [
    ("<think>2+2 is 4</think>The answer is 4.", 1.0),
    ("\n  <think>\nreasoning\n</think>\n\n4", 1.0),
    ("<think></think>4", 1.0),
    ("<think>reasoning</think>", 0.0),  # no answer
    ("<think>reasoning</think>   \n", 0.0),
    ("The answer is 4.", 0.0),  # no block
    ("Sure! <think>reasoning</think>4", 0.0),  # text before the block
    ("<think>a</think><think>b</think>4", 0.0),  # two blocks
    ("<think>a<think>b</think>4", 0.0),
    ("<think>reasoning never closed... 4", 0.0),
    ("</think>4", 0.0),
    ("<think>a</think>4</think>", 0.0),
    ("", 0.0),
]


@pytest.mark.parametrize(("response", "expected"), ROWS)
def test_think_format(response: str, expected: float) -> None:
    assert format_score(response) == expected


def test_other_tag_names() -> None:
    assert format_score("<reasoning>r</reasoning>4", think_tag="reasoning") == 1.0
    assert format_score("<think>r</think>4", think_tag="reasoning") == 0.0


@pytest.mark.parametrize("tag", ["", "<think>", "a b", "x" * 100, None])
def test_bad_tag_names_are_rejected(tag: object) -> None:
    with pytest.raises(ValueError, match="think_tag"):
        format_score("<think>r</think>4", think_tag=tag)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "response",
    [
        "<think>" * 200_000,
        "<think>" + "a" * 1_000_000 + "</think>4",
        "\x00<think>\ud800</think>\x00",
    ],
)
def test_hostile_responses_are_bounded(response: str) -> None:
    started = time.perf_counter()
    score = format_score(response)
    assert time.perf_counter() - started < 1.0
    assert score == (1.0 if response.endswith("</think>4") else 0.0)
