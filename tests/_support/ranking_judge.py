"""A deterministic judge behind a real OpenAI-compatible HTTP server (127.0.0.1, a free port).

It reads the request the way a judge model would read its prompt, and grades by a rule:
each response carries a marker ``quality=N`` and scores N. A listwise request (the
responses shown as ``[Response i]`` blocks) is answered ``Scores: [[q1, ..., qN]]``; a
pairwise one (``[Reference]`` then ``[Response]``) ``Score: [[5 + q - q_ref]]``
(clamped to 0..10). Words in the prompt pick a misbehaviour for that group only:

- ``SLOW<s>``: answer after s seconds (e.g. ``SLOW2``);
- ``MISCOUNT``: one score fewer than there are responses;
- ``GARBAGE``: an answer with no score at all.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = ["RankingJudge", "rows"]

_QUALITY = re.compile(r"quality=(\d+)")
_SLOW = re.compile(r"SLOW(\d+(?:\.\d+)?)")


class RankingJudge:
    """The app (``.app``) and a log of what it was asked (``.requests``: (time, user text))."""

    def __init__(self) -> None:
        self.requests: list[tuple[float, str]] = []
        self.app = Starlette(
            routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])]
        )

    async def complete(self, request: Request) -> Response:
        body = await request.json()
        text = body["messages"][-1]["content"]
        self.requests.append((time.monotonic(), text))
        if slow := _SLOW.search(text):
            await asyncio.sleep(float(slow.group(1)))
        answer = self.answer(text)
        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": answer},
                "finish_reason": "stop",
            }
            for i in range(body.get("n", 1))
        ]
        return JSONResponse({"id": "x", "object": "chat.completion", "choices": choices})

    @staticmethod
    def answer(text: str) -> str:
        if "GARBAGE" in text:
            return "These all look fine to me."
        qualities = [int(q) for q in _QUALITY.findall(text)]
        if "[Reference]" in text:
            reference, response = qualities[0], qualities[-1]
            return f"Compared.\nScore: [[{max(0, min(10, 5 + response - reference))}]]"
        if "MISCOUNT" in text:
            qualities = qualities[:-1]
        return "Ranked.\nScores: [[" + ", ".join(map(str, qualities)) + "]]"

    def listed(self, index: int) -> list[int]:
        """The qualities request ``index`` showed, in order."""
        return [int(q) for q in _QUALITY.findall(self.requests[index][1])]


def rows(group: str, qualities: list[int], prompt: str = "rate these", **extra: Any) -> list[dict]:
    """One GRPO group: a row per quality, all with ``extra_info.uid = group``."""
    return [
        {
            "data_source": "chat",
            "prompt": f"{prompt} ({group})",
            "response": f"reply {i} quality={q}",
            "ground_truth": "reference quality=5",
            "extra_info": {"uid": group, **extra},
        }
        for i, q in enumerate(qualities)
    ]
