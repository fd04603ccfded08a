"""A client of ``rewardkit serve``, sync and async, on the shared HTTP layer.

    from rewardkit.client import RewardClient

    client = RewardClient("http://127.0.0.1:8000", api_key=None)
    results = client.score(rows)               # list[Result], in input order
    results = await client.ascore(rows)        # from async code

Server-side failures of single rows come back as typed Results; a server that is
down or refuses the request raises RemoteError after the retry budget.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterable, Mapping
from typing import Any

from rewardkit.config import HttpOptions
from rewardkit.errors import RemoteError
from rewardkit.http import HttpClient
from rewardkit.types import Result, Sample, Status

__all__ = ["RewardClient"]


class RewardClient:
    """Scores rows through a rewardkit server. Thread-safe; one connection pool per event loop."""

    def __init__(
        self, url: str, *, api_key: str | None = None, options: HttpOptions | None = None
    ) -> None:
        self.url = url.rstrip("/")
        base = options or HttpOptions()
        self.options = base.model_copy(update={"api_key": api_key}) if api_key else base

    async def ascore(self, samples: Iterable[Sample | Mapping[str, Any]]) -> list[Result]:
        """Score rows; one Result per row, in order. A row that cannot be sent as JSON (a
        value JSON has no form for, such as a set or an array object) is ``invalid`` here,
        saying why, and the others are sent; NaN and lone surrogates are sent as the
        server reads them."""
        rows = [s.to_row() if isinstance(s, Sample) else dict(s) for s in samples]
        sent: list[int] = []
        encoded: list[str] = []
        unsent: dict[int, Result] = {}
        for index, row in enumerate(rows):
            try:
                # allow_nan: the server reads NaN (and answers null); ensure_ascii escapes a
                # lone surrogate, which UTF-8 cannot carry (the server reads it as a string)
                encoded.append(json.dumps(row, allow_nan=True, ensure_ascii=True))
            except (TypeError, ValueError, RecursionError) as exc:
                unsent[index] = Result(
                    index, Status.INVALID, error=f"the row cannot be sent as JSON: {exc}"
                )
                continue
            sent.append(index)
        answered: list[Result] = []
        if sent:
            body = ('{"samples":[' + ",".join(encoded) + "]}").encode()
            client = HttpClient(self.url, self.options)
            try:
                answered = _results(await client.post_encoded("/v1/score", body), len(sent))
            finally:
                await client.aclose()
        for index, result in zip(sent, answered, strict=True):
            unsent[index] = dataclasses.replace(result, index=index)
        return [unsent[index] for index in range(len(rows))]

    def score(self, samples: Iterable[Sample | Mapping[str, Any]]) -> list[Result]:
        """Blocking version of :meth:`ascore` (do not call from inside a running event loop)."""
        return asyncio.run(self.ascore(samples))

    def ready(self) -> bool:
        """True once the server has loaded its models (``GET /ready``)."""

        async def check() -> bool:
            client = HttpClient(self.url, self.options)
            try:
                answer = await client.get_json("/ready")
            except RemoteError:
                return False
            finally:
                await client.aclose()
            return bool(answer.get("ready")) if isinstance(answer, Mapping) else False

        return asyncio.run(check())


def _results(answer: Any, expected: int) -> list[Result]:
    if not isinstance(answer, Mapping) or not isinstance(answer.get("results"), list):
        raise RemoteError("the server's answer has no 'results' list")
    rows = answer["results"]
    if len(rows) != expected:
        raise RemoteError(f"sent {expected} rows, the server answered {len(rows)}")
    return [_result(i, row) for i, row in enumerate(rows)]


def _result(index: int, row: Mapping[str, Any]) -> Result:
    row = dict(row)
    status = Status(row.pop("status"))
    score = row.pop("score")
    return Result(
        index,
        status,
        score=float(score) if score is not None else None,
        error=row.pop("error", None),
        components=row.pop("components", {}) or {},
        extra=row.pop("extra", {}) or {},
        row=row,
    )
