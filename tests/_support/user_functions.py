"""User reward functions that misbehave (print, raise, hang, die, return odd values), as
module source for ``write_module``, and the helpers that score rows with them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardkit import RewardLoop

__all__ = [
    "ASYNC_HOSTILE",
    "MISBEHAVING",
    "NAMED",
    "NAP_UNTIL_GO",
    "SLOW",
    "custom_config",
    "custom_row",
    "run_named",
]

# "sleep S" sleeps S seconds, then scores 0; else 1 if the response is the ground truth.
SLOW = """
import time

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    if solution_str.startswith("sleep"):
        time.sleep(float(solution_str.split()[1]))
    return float(solution_str.strip() == str(ground_truth))
"""

# "nap S GO ..." naps up to S seconds, ending early once the file GO exists, then scores
# 0; else 1 if the response is the ground truth. A test holds rows in flight for as long
# as it measures something, then lets them go instead of waiting out fixed sleeps.
NAP_UNTIL_GO = """
import os, time

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    if solution_str.startswith("nap"):
        _, seconds, go = solution_str.split()[:3]
        ends = time.monotonic() + float(seconds)
        while time.monotonic() < ends and not os.path.exists(go):
            time.sleep(0.01)
    return float(solution_str.strip() == str(ground_truth))
"""

# compute_score's behaviour is chosen by the response.
MISBEHAVING = """
import asyncio, ctypes, os, time

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    s = solution_str
    if s == "hang":
        while True:
            pass
    if s == "segfault":
        ctypes.string_at(0)
    if s == "exit":
        os._exit(7)
    if s == "raise":
        raise RuntimeError("scorer bug")
    if s == "raise_lines":
        raise ValueError("first line\\nsecond line\\r\\nthird line")
    if s == "print":  # a debug print of 1 MB, then raw writes to descriptor 1
        print("P" * 1_000_000)
        os.write(1, b'{"fake": "row"}\\n' * 100)
    if s == "fork_print":  # a child that prints after its parent has answered
        if os.fork() == 0:
            time.sleep(0.5)
            print('{"from": "grandchild"}', flush=True)
            os._exit(0)
    if s == "env":
        return float(os.environ.get("RK_TEST_MARK") == "set by runtime_env")
    if s.startswith("nap "):
        time.sleep(0.25)
        return int(s.split()[1]) / 100
    if s == "nan":
        return float("nan")
    if s == "text":
        return "1.0"
    if s == "dict":
        return {"score": 0.5, "acc": True, "pred": "x"}
    if s == "extra_nan":
        return {"score": 0.5, "ratio": float("nan"), "big": float("inf")}
    if s == "array":
        import numpy as np
        return np.array([1.0, 2.0])
    if s == "huge_int":
        return 10**400
    if s == "numpy_float":
        import numpy as np
        return np.float64(0.75)
    if s == "numpy_bool":
        import numpy as np
        return np.bool_(True)
    if s == "bool":
        return True
    return float(s == str(ground_truth)) + kw.get("bonus", 0.0)

async def acompute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    if solution_str == "slow":
        await asyncio.sleep(30)
    await asyncio.sleep(0.01)
    return float(solution_str == ground_truth)
"""


ASYNC_HOSTILE = """
import asyncio

async def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    s = solution_str
    if s == "system_exit":
        raise SystemExit(3)
    if s == "keyboard_interrupt":
        raise KeyboardInterrupt()
    if s == "cancelled":
        raise asyncio.CancelledError()
    if s == "own_timeout":  # its own client's timeout, at once: not our limit
        raise TimeoutError("judge server did not answer")
    if s == "stubborn":  # swallows every cancellation
        while True:
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                pass
    await asyncio.sleep(0.01)
    return float(s == str(ground_truth))
"""

# One function a name: random values (sync, async), a raise, hangs (sync, async), a death.
NAMED = """
import asyncio, os, random, time

def rnd(data_source, solution_str, ground_truth, extra_info, **kw):
    return random.random()

async def arnd(data_source, solution_str, ground_truth, extra_info, **kw):
    await asyncio.sleep(0)
    return random.random()

def boom(data_source, solution_str, ground_truth, extra_info, **kw):
    raise ValueError("boom")

def hang(data_source, solution_str, ground_truth, extra_info, **kw):
    time.sleep(60)
    return 1.0

async def ahang(data_source, solution_str, ground_truth, extra_info, **kw):
    await asyncio.sleep(60)
    return 1.0

def die(data_source, solution_str, ground_truth, extra_info, **kw):
    os._exit(0)
"""


_SAME_ROW = {"data_source": "anything", "response": "same", "ground_truth": "1"}


def run_named(path: Path, name: str, cache: bool = False, timeout_s: float = 2) -> list[Any]:
    """Score with function ``name`` of the module at ``path``, in two batches: three
    identical rows, then the same row again (``timeout_s``: reward.timeout_s and
    async_timeout_s)."""
    function = {"path": str(path), "name": name, "cache": cache}
    config = {"reward": {"num_workers": 2, "timeout_s": timeout_s, "async_timeout_s": timeout_s,
                         "custom_reward_function": function}}  # fmt: skip
    with RewardLoop(config) as loop:
        return loop.score([_SAME_ROW] * 3) + loop.score([_SAME_ROW])


def custom_row(
    response: str, truth: Any = "42", source: str = "custom", **extra: Any
) -> dict[str, Any]:
    """A row for a custom function: ``response`` picks what MISBEHAVING does."""
    return {"data_source": source, "response": response, "ground_truth": truth, **extra}


def custom_config(path: str, name: str | None = None, **reward: Any) -> dict[str, Any]:
    """A config scoring with function ``name`` (compute_score by default) of the module at
    ``path``: one worker unless ``reward`` (reward.* keys) says otherwise."""
    function: dict[str, Any] = {"path": str(path)} | ({"name": name} if name else {})
    return {"reward": {"num_workers": 1, **reward, "custom_reward_function": function}}
