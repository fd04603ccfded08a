"""guards: custom reward functions (rewardkit.custom): loaded from a file, called on every row.

No dedup, no cache, unless the config says cache; a function's own classes come back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _support.user_functions import custom_row, run_named
from rewardkit import ConfigError, RewardLoop, Status

RANDOM_FN = """
import random

def compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs):
    return random.random()

async def compute_score_async(data_source, solution_str, ground_truth, extra_info, **kwargs):
    return random.random() + kwargs.get("offset", 0.0)
"""

ROWS = [{"data_source": "x", "response": "same", "ground_truth": "1"}] * 4


def _scores(config: dict) -> tuple[list[float], list[float]]:
    with RewardLoop(config) as loop:
        first = [r.score for r in loop.score(ROWS)]
        second = [r.score for r in loop.score(ROWS)]
    return first, second


def _config(path: str, name: str = "compute_score", **fn: object) -> dict:
    function = {"path": path, "name": name, **fn}
    return {"reward": {"num_workers": 1, "custom_reward_function": function}}


def test_a_random_function_is_called_for_every_row_and_batch(write_module):
    path = write_module("random_reward", RANDOM_FN)
    first, second = _scores(_config(path))
    values = first + second
    assert len(set(values)) == len(values), values  # identical rows, fresh values each time


def test_an_async_random_function_is_not_shared_either(write_module):
    path = write_module("random_reward_async", RANDOM_FN)
    config = _config(path, "compute_score_async", reward_kwargs={"offset": 10.0})
    first, second = _scores(config)
    values = first + second
    assert len(set(values)) == len(values) and all(v >= 10.0 for v in values)


def test_cache_true_shares_identical_rows_within_and_across_batches(write_module):
    path = write_module("random_reward_cached", RANDOM_FN)
    first, second = _scores(_config(path, cache=True))
    assert len(set(first + second)) == 1


@pytest.mark.parametrize("name", ["rnd", "arnd"])
def test_a_random_function_is_called_on_every_row_unless_cache_is_true(
    named_functions: Path, name: str
) -> None:
    fresh = [r.score for r in run_named(named_functions, name)]
    assert len(set(fresh)) == 4  # four calls, across and within batches
    cached = [r.score for r in run_named(named_functions, name, cache=True)]
    assert len(set(cached)) == 1


OWN_CLASSES = """
class Score(float):
    pass


class Info:
    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Info({self.value})"


def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    if solution_str == "subclass":
        return Score(0.5)
    if solution_str == "object_in_extra":
        return {"score": 1.0, "info": Info(3)}
    return float(solution_str == ground_truth)
"""


def test_a_function_may_return_instances_of_its_own_classes(write_module) -> None:
    """A value of a class from the function's file (a float subclass, an object in the
    extra dict), pickled by the worker, is rebuilt by the parent: the module a ``.py``
    function is loaded as has one name in every process (not one after ``hash(path)``,
    which read as 'unreadable reply from a worker', status error, worker replaced)."""
    path = write_module("own_classes", OWN_CLASSES)
    config = {"reward": {"num_workers": 1, "custom_reward_function": {"path": path}}}
    with RewardLoop(config) as loop:
        results = loop.score(
            [custom_row("42"), custom_row("subclass"), custom_row("object_in_extra")]
        )
    assert [r.status for r in results] == [Status.OK] * 3, [r.error for r in results]
    assert [r.score for r in results] == [1.0, 0.5, 1.0]
    assert repr(results[2].extra["info"]) == "Info(3)"


def test_missing_custom_function_is_a_config_error_naming_the_key(write_module) -> None:
    path = write_module("empty", "x = 1\n")
    with pytest.raises(ConfigError, match=r"custom_reward_function\.name"):
        RewardLoop({"reward": {"custom_reward_function": {"path": path}}}).start()
    with pytest.raises(ConfigError, match=r"custom_reward_function\.path"):
        RewardLoop(
            {"reward": {"custom_reward_function": {"path": "/nonexistent/reward.py"}}}
        ).start()


def test_custom_function_from_a_module_name(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "my_rewards"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "scoring.py").write_text(
        "def length_score(data_source, solution_str, ground_truth, extra_info, **kw):\n"
        "    return min(len(solution_str) / 10, 1.0)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))  # worker processes inherit the path
    config = {
        "reward": {
            "num_workers": 1,
            "custom_reward_function": {"path": "my_rewards.scoring", "name": "length_score"},
        }
    }
    with RewardLoop(config) as loop:
        short, long = loop.score([custom_row("abcde"), custom_row("x" * 40)])
    assert (short.score, long.score) == (0.5, 1.0)
    with pytest.raises(ConfigError, match="cannot import module"):
        RewardLoop({"reward": {"custom_reward_function": {"path": "no_such_module_xyz"}}}).start()


TRAJECTORY_FN = """
def compute_score(data_source, solution_str, ground_truth, extra_info):
    calls = [c["function"]["name"] for m in solution_str for c in (m.get("tool_calls") or [])]
    return {"score": float(calls == ground_truth), "messages": len(solution_str)}
"""


def test_a_custom_function_gets_a_trajectory_as_given_and_caches_on_all_of_it(write_module):
    """Two trajectories that end alike but called different tools are two calls, cached or not."""
    path = write_module("trajectory_reward", TRAJECTORY_FN)

    def trajectory(tool: str) -> list[dict]:
        call = {"type": "function", "function": {"name": tool, "arguments": "{}"}}
        return [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "content": "ok"},
            {"role": "assistant", "content": "done"},
        ]

    rows = [
        {"data_source": "agent", "response": trajectory(tool), "ground_truth": ["search"]}
        for tool in ("search", "delete", "search", "delete")
    ]
    with RewardLoop(_config(path, cache=True)) as loop:
        results = loop.score(rows)
    assert [r.score for r in results] == [1.0, 0.0, 1.0, 0.0]
    assert results[0].extra["messages"] == 3
