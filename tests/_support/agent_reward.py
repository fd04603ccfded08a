"""An async reward function for agent-loop tests (loaded by path as a custom function).

A row whose ``extra_info.slow`` is a number of seconds sleeps that long first, so a test
can hold one row in flight and watch the others finish. The score is 1.0 when the
response ends with the ground truth; ``turns_seen`` echoes the ``num_turns`` it was given.
"""

from __future__ import annotations

import asyncio
from typing import Any

PATH = __file__


async def compute_score(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Any, **kwargs: Any
) -> dict[str, Any]:
    slow = (extra_info or {}).get("slow")
    if slow:
        await asyncio.sleep(float(slow))
    turns = (extra_info or {}).get("num_turns")
    return {
        "score": float(solution_str.strip().endswith(str(ground_truth))),
        "turns_seen": -1 if turns is None else turns,
    }
