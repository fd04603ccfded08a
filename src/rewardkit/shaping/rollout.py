"""What an agent loop hands a row besides its response: turns, tool rewards, a given score.

verl 0.9.1's reward managers (``verl/experimental/reward_loop/reward_manager/naive.py``)
put these in ``extra_info`` before scoring a row, and rewardkit's verl adapter does the
same; any other row (a JSONL file, the server, TRL) may carry them too:

* ``num_turns`` (:data:`NUM_TURNS`): the trajectory's chat turns (verl's
  ``__num_turns__``: user, assistant and tool). Reported as ``extra.num_turns``.
* ``rollout_reward_scores`` (:data:`ROLLOUT_SCORES`): rewards the tools gave during
  the rollout, by tool name (verl's ``reward_scores`` column; SGLang's multi-turn
  rollout fills it with ``{tool_name: float}``, and lists such as
  ``user_turn_rewards``). Each name becomes a component ``tool/<name>`` (a list: its sum).
* ``tool_rewards`` (:data:`TOOL_REWARDS`): the step rewards of verl 0.9.1's
  ``ToolAgentLoop`` (what each ``BaseTool.execute`` returned), a list without names:
  the component :data:`STEP_COMPONENT` (their sum).
* ``reward_score`` (:data:`PRESCORED`): a score the agent loop already set. The row is
  not scored again: the score is the row's, marked ``extra.prescored = 1``.

The tool components are weighted by ``reward.rollout_reward_weight`` and summed into
the score like every other component. A malformed value makes the row invalid with a
message naming the key: these come from code (a tool, an agent loop), and a wrong shape
is a bug to fix, not a reward to guess.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from numbers import Real
from typing import Any

from rewardkit.errors import InvalidSampleError

__all__ = [
    "NUM_TURNS",
    "PRESCORED",
    "ROLLOUT_SCORES",
    "STEP_COMPONENT",
    "TOOL_PREFIX",
    "TOOL_REWARDS",
    "num_turns",
    "prescored",
    "rollout_rewards",
]

NUM_TURNS = "num_turns"
ROLLOUT_SCORES = "rollout_reward_scores"
TOOL_REWARDS = "tool_rewards"
PRESCORED = "reward_score"
TOOL_PREFIX = "tool/"
STEP_COMPONENT = "tool/steps"
"""The component of ``tool_rewards`` (verl's unnamed step rewards)."""

_MAX_TURNS = 2**31  # verl stores them as int32


def rollout_rewards(extra_info: Mapping[str, Any]) -> dict[str, float]:
    """The tool components of a row, ``{"tool/<name>": reward}``; empty when it has none.

    A name given in both places (``rollout_reward_scores`` and the step rewards'
    ``steps``) gets the sum. An empty list gives no component: verl's single-turn loop
    sends ``tool_rewards: []`` on every row.
    """
    if ROLLOUT_SCORES not in extra_info and TOOL_REWARDS not in extra_info:
        return {}  # most rows: every row of a batch passes here
    out: dict[str, float] = {}
    given = _listed(extra_info.get(ROLLOUT_SCORES))
    if given is not None:
        if not isinstance(given, Mapping):
            raise InvalidSampleError(
                f"extra_info.{ROLLOUT_SCORES} must be an object of tool name -> reward "
                f"(a number or a list of numbers), got {type(given).__name__}"
            )
        for name, value in given.items():
            where = f"extra_info.{ROLLOUT_SCORES}.{name}"
            total = _total(value, where)
            if total is not None:
                key = TOOL_PREFIX + str(name)
                out[key] = out.get(key, 0.0) + total
    steps = _total(extra_info.get(TOOL_REWARDS), f"extra_info.{TOOL_REWARDS}", numbers=False)
    if steps is not None:
        out[STEP_COMPONENT] = out.get(STEP_COMPONENT, 0.0) + steps
    for key, value in out.items():
        if not math.isfinite(value):  # finite parts that overflow when summed
            raise InvalidSampleError(f"the rollout rewards of {key} sum to {value}")
    return out


def num_turns(extra_info: Mapping[str, Any]) -> int | None:
    """``extra_info.num_turns`` as an int (numpy's and a whole float too); None when absent."""
    value = extra_info.get(NUM_TURNS)
    if value is None:
        return None
    value = _listed(value)  # a 0-d numpy array
    count: int | None = None
    if isinstance(value, float) and value.is_integer():
        count = int(value)
    elif not isinstance(value, bool | float):
        try:
            count = operator.index(value)
        except TypeError:
            count = None
    if count is None or not 0 <= count < _MAX_TURNS:
        raise InvalidSampleError(
            f"extra_info.{NUM_TURNS} must be a whole number of turns >= 0, got "
            f"{type(value).__name__} {str(value)[:40]}"
        )
    return count


def prescored(extra_info: Mapping[str, Any]) -> float | None:
    """``extra_info.reward_score``, a finite number: the row's score as given; None when absent."""
    value = extra_info.get(PRESCORED)
    if value is None:
        return None
    return _number(_listed(value), f"extra_info.{PRESCORED}")


def _total(value: Any, where: str, numbers: bool = True) -> float | None:
    """A reward or the sum of a list of them; None for None or an empty list."""
    value = _listed(value)
    if value is None:
        return None
    if isinstance(value, list | tuple):
        if not value:
            return None
        # sum, not fsum: an overflow gives inf (refused by the caller, naming the key)
        # where fsum raises OverflowError
        return sum(_number(item, f"{where}[{i}]") for i, item in enumerate(value))
    if numbers:
        return _number(value, where)
    raise InvalidSampleError(
        f"{where} must be a list of numbers, got {type(value).__name__} {str(value)[:40]}"
    )


def _number(value: Any, where: str) -> float:
    try:  # an int past the float range (10**400) overflows: no finite number either
        number = None if isinstance(value, bool) or not isinstance(value, Real) else float(value)
    except OverflowError:
        number = None
    if number is None or not math.isfinite(number):
        shown = f"{type(value).__name__} {str(value)[:40]}" if number is None else repr(value)[:40]
        raise InvalidSampleError(f"{where} must be a finite number, got {shown}")
    return number


def _listed(value: Any) -> Any:
    """numpy arrays and scalars (a DataProto's values) as Python values."""
    tolist = getattr(value, "tolist", None)
    return tolist() if callable(tolist) and not isinstance(value, Mapping) else value
