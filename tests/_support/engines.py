"""A real RewardEngine for the scoring tests: built, fed rows, compared field by field.

Also: rows at the edges of the spread rules, verifiers plugged in as a plugin would be,
and a recorder of what the engine hands its (real) worker pool.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from rewardkit.config import RewardConfig
from rewardkit.scoring import spread as spread_module
from rewardkit.scoring import tasks
from rewardkit.scoring.engine import RewardEngine
from rewardkit.scoring.outcomes import CheckKey
from rewardkit.types import BadRow, Result
from rewardkit.verifiers.base import Entry
from rewardkit.verifiers.registry import VerifierTable, entries

__all__ = [
    "EDGE_ROWS",
    "PoolCalls",
    "fields",
    "index_of",
    "make_engine",
    "plug",
    "score_rows",
    "spreading_off",
]

# Rows each spread task could get wrong: one of every source family, every shape of bad
# row, and the edges of the spread rules (the 100,000-char inline limit, None and blank
# ground truths, unhashable ground truths, a bad extra_info.response_length).
EDGE_ROWS: list[Any] = [
    {"data_source": "gsm8k", "response": "so #### 72", "ground_truth": "72"},
    {"data_source": "gsm8k", "response": "so #### 7,2", "ground_truth": "72"},
    {"data_source": "gsm8k", "response": "The answer is 72.", "ground_truth": "72"},
    {"data_source": "mcq", "response": "Answer: B", "ground_truth": "B"},
    {"data_source": "mmlu", "response": "I think (C)", "ground_truth": "B"},
    {
        "data_source": "hiyouga/geometry3k",
        "response": "<think>x</think>\\boxed{3}",
        "ground_truth": "3",
    },
    {
        "data_source": "searchR1_nq",
        "response": "<answer>Paris</answer>",
        "ground_truth": {"target": ["Paris"]},
    },
    {
        "data_source": "codecontests",
        "response": "```python\nprint(1)\n```",
        "ground_truth": json.dumps({"inputs": [""], "outputs": ["1\n"]}),
    },
    {"data_source": "nope", "response": "1", "ground_truth": "1"},
    BadRow("bad json"),
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": None},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": ""},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": "  "},
    {"data_source": "math", "response": "x" * 150_000 + "\\boxed{1}", "ground_truth": "1"},
    {"data_source": "math", "response": "x" * 99_990 + "\\boxed{1}", "ground_truth": "1"},
    {"data_source": "math", "response": 12, "ground_truth": "1"},
    {"data_source": "math", "response": None, "ground_truth": "1"},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": ["1", "2"]},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": {"a": 1}},
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": 1},
    {
        "data_source": "math",
        "response": "\\boxed{1}",
        "ground_truth": "1",
        "extra_info": {"response_length": "abc"},
    },
    {
        "data_source": "math",
        "response": "\\boxed{1}",
        "ground_truth": "1",
        "extra_info": {"response_length": -5},
    },
    {"data_source": "math", "response": "<think>a</think>\\boxed{\\frac12}", "ground_truth": "0.5"},
    {"data_source": "math", "response": "\\boxed{\\frac{1}{", "ground_truth": "1"},
    {"data_source": "math", "response": "\x00\ud800", "ground_truth": "1"},
    "just a string row",
    5,
    None,
]


def fields(result: Result) -> tuple[Any, ...]:
    """Every field of a Result but its timing (which is checked to be there)."""
    assert result.elapsed_s is not None and result.elapsed_s >= 0
    return (result.index, result.status, result.score, result.error, result.components,
            result.extra)  # fmt: skip


async def make_engine(**reward: Any) -> RewardEngine:
    """A started engine on a real pool of two workers (``reward`` keys override)."""
    config = RewardConfig.model_validate({"reward": {"num_workers": 2, **reward}})
    return await RewardEngine.create(config)


async def score_rows(rows: list[Any], **reward: Any) -> tuple[list[Result], dict[str, int]]:
    """Score ``rows`` in one batch on a fresh engine: its Results and its stats."""
    engine = await make_engine(**reward)
    try:
        results = await engine.score_many(rows)
    finally:
        await engine.close()
    return results, engine.stats


def plug(engine: RewardEngine, verifier: Any) -> RewardEngine:
    """Register ``verifier`` for the data_source named by its key, as a plugin would be (a
    class defined in a test module: the workers import it from there)."""
    key = verifier.key
    entry = Entry(key, lambda name: name == key, lambda section: verifier)
    engine._verifiers = VerifierTable(engine.section, (entry, *entries()))
    return engine


def spreading_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on every batch keeps its inline phases on the event loop."""
    monkeypatch.setattr(spread_module, "SPREAD_MIN_ROWS", 10**9)


def index_of(engine: RewardEngine) -> dict[tuple[str, str], set[tuple[Any, Any, Any]]]:
    """What the spread tasks' index of cached answers must be: rebuilt from the cache."""
    index: dict[tuple[str, str], set[tuple[Any, Any, Any]]] = {}
    for key in engine.outcomes.cache:
        if isinstance(key, CheckKey):
            answer = (key.answer, key.source, key.also)
            index.setdefault((key.verifier, key.gold), set()).add(answer)
    return index


class PoolCalls:
    """Records the functions the engine's pool runs (the real pool still runs them), and
    the pickled size of each spread task."""

    def __init__(self, engine: RewardEngine) -> None:
        self.names: list[str] = []
        self.spread_sizes: list[int] = []
        pool = engine.pool
        assert pool is not None
        run = pool.run

        async def recorded(fn: Any, *args: Any, **kwargs: Any) -> Any:
            self.names.append(fn.__name__)
            if fn is tasks.spread_rows:
                self.spread_sizes.append(len(pickle.dumps(args)))
            return await run(fn, *args, **kwargs)

        pool.run = recorded  # type: ignore[method-assign]

    def count(self, name: str) -> int:
        return self.names.count(name)
