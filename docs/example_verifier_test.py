"""guards: yes_no.py, the yes/no verifier: one table of rows through the whole scorer.

Copy to ``tests/verifiers/test_<name>.py`` (the test file mirrors the module it guards,
and opens with what it guards). Each row goes through the whole scorer (registry,
engine, worker pool), as a trainer's row would. Write one row per behaviour, with why it
is there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rewardkit import RewardLoop

ROWS = [
    # (data_source, response, ground_truth, status, score, why)
    ("google/boolq", "The sky is blue, so yes.", "yes", "ok", 1.0, "right answer"),
    ("boolq", "Yes", True, "ok", 1.0, "booleans are ground truths too, any case"),
    ("boolq", "Yes at first, but no.", "yes", "ok", 0.0, "the last word counts"),
    ("boolq", "There is nothing to add.", "no", "ok", 0.0, "'no' inside a word is not one"),
    ("boolq", "I cannot tell.", "no", "ok", 0.0, "no answer scores as wrong"),
    ("boolq", "yes", "maybe", "invalid", None, "a bad ground truth is bad data"),
    ("boolq", "yes", None, "invalid", None, "so is a missing one"),
]


@pytest.fixture(scope="module", params=[True, False], ids=["inline", "in a worker"])
def loop(request: pytest.FixtureRequest) -> Iterator[RewardLoop]:
    config = {"reward": {"num_workers": 1, "verifiers": {"fast_paths": request.param}}}
    with RewardLoop(config) as scorer:
        yield scorer


@pytest.mark.parametrize(("data_source", "response", "truth", "status", "score", "why"), ROWS)
def test_row(
    loop: RewardLoop,
    data_source: str,
    response: str,
    truth: Any,
    status: str,
    score: float | None,
    why: str,
) -> None:
    row = {"data_source": data_source, "response": response, "ground_truth": truth}
    [result] = loop.score([row])
    assert (result.status.value, result.score) == (status, score), (why, result.error)
