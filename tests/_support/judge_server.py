"""An OpenAI-compatible judge on 127.0.0.1 (a free port) that records its load.

It answers ``POST /v1/chat/completions`` deterministically, after ``delay_s``, and keeps
when each request arrived and how many were in flight at once, so a test can check the
rate limits a client keeps. The model name picks the answer:

* ``judge-7``: ``Score: [[7]]`` with ``usage`` (``PROMPT_TOKENS`` + ``COMPLETION_TOKENS``);
* ``judge-no-usage``: the same answer, no ``usage`` field;
* ``judge-refuses``: HTTP 400.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = ["COMPLETION_TOKENS", "PROMPT_TOKENS", "CountingJudge"]

PROMPT_TOKENS = 120
COMPLETION_TOKENS = 8


class CountingJudge:
    """The judge app (``.app``, serve it with ``_support.model_fakes.ServerThread``)."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.arrivals: list[float] = []  # time.monotonic() of each request
        self.in_flight = 0
        self.max_in_flight = 0
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    def reset(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.arrivals.clear()
        self.in_flight = self.max_in_flight = 0

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.arrivals.append(time.monotonic())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.in_flight -= 1
        model = body.get("model")
        if model == "judge-refuses":
            return JSONResponse({"error": "this judge refuses"}, status_code=400)
        message = {"role": "assistant", "content": "Fine.\nScore: [[7]]"}
        answer: dict[str, Any] = {
            "id": "x",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
        if model != "judge-no-usage":
            answer["usage"] = {
                "prompt_tokens": PROMPT_TOKENS,
                "completion_tokens": COMPLETION_TOKENS,
                "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
            }
        return JSONResponse(answer)
