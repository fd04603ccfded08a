"""Reading a large JSON body without holding the server's event loop.

Starlette reads a request's JSON with one ``json.loads`` call. On a 60 MB body of long
trajectories that call takes over a second, and the C decoder holds the GIL all the way
through: a thread would not help, and every other request (``/health`` included) waits.

:func:`loads` reads what ``json.loads`` reads, value for value and error for error
(:class:`json.JSONDecodeError`, which FastAPI answers as 422 ``json_invalid``), but walks
the top two levels of containers itself: the body's object, then each list or object in
it (``samples``, ``query``, ``messages``). Their members are decoded one by one by the
standard decoder, and the loop is handed back whenever about :data:`STEP_CHARS` of text
has been read. A request therefore holds the loop for about as long as its largest single
row takes to decode, never for the whole body.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Coroutine, Generator
from typing import Any

from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

STEP_CHARS = 1 << 20  # about 20 ms of decoding between two turns of the loop
_WALKED_DEPTH = 2  # the body, then its lists and objects; deeper values are decoded whole
_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # json's own

_Steps = Generator[None, None, Any]


class YieldingRequest(Request):
    """A Starlette request whose :meth:`json` lets the event loop run while it decodes."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = await loads(await self.body())
        return self._json


class YieldingRoute(APIRoute):
    """FastAPI's route, reading its JSON body with :class:`YieldingRequest` (FastAPI's
    documented way to change how a route reads its request)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def handle_yielding(request: Request) -> Response:
            return await handle(YieldingRequest(request.scope, request.receive))

        return handle_yielding


async def loads(body: bytes | str, step_chars: int = STEP_CHARS) -> Any:
    """``json.loads(body)``, handing the loop back every ``step_chars`` of text read."""
    text = _text(body)
    if len(text) <= step_chars:
        return json.loads(text)
    if text.startswith("\ufeff"):  # json.loads refuses it in a str (the bytes are decoded)
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    steps = _document(text, step_chars)
    try:
        while True:
            next(steps)
            await asyncio.sleep(0)
    except StopIteration as done:
        return done.value


def _text(body: bytes | str) -> str:
    if isinstance(body, str):
        return body
    return body.decode(json.detect_encoding(body), "surrogatepass")  # as json.loads does


def _document(text: str, step_chars: int) -> _Steps:
    reader = _Reader(text, step_chars)
    value = yield from reader.value(reader.skip(0), 0)
    end = reader.skip(reader.at)
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


class _Reader:
    """The walk over one document; ``at`` is the index just past the last value read."""

    def __init__(self, text: str, step_chars: int) -> None:
        self.text = text
        self.step_chars = step_chars
        self.at = 0
        self._handed_back_at = 0

    def skip(self, i: int) -> int:
        return _WHITESPACE.match(self.text, i).end()  # type: ignore[union-attr]  # * matches

    def value(self, i: int, depth: int) -> _Steps:
        opening = self.text[i : i + 1]
        if depth < _WALKED_DEPTH and opening == "{":
            return (yield from self._object(i + 1, depth + 1))
        if depth < _WALKED_DEPTH and opening == "[":
            return (yield from self._array(i + 1, depth + 1))
        value, self.at = _DECODER.raw_decode(self.text, i)  # "Expecting value" at i if none
        if self.at - self._handed_back_at >= self.step_chars:
            self._handed_back_at = self.at
            yield
        return value

    def _array(self, i: int, depth: int) -> _Steps:
        items: list[Any] = []
        i = self.skip(i)
        if self.text[i : i + 1] == "]":
            self.at = i + 1
            return items
        while True:
            items.append((yield from self.value(i, depth)))
            i = self.skip(self.at)
            closing = self.text[i : i + 1]
            if closing == "]":
                self.at = i + 1
                return items
            if closing != ",":
                raise json.JSONDecodeError("Expecting ',' delimiter", self.text, i)
            i = self.skip(i + 1)

    def _object(self, i: int, depth: int) -> _Steps:
        members: dict[str, Any] = {}  # a repeated key keeps its first place, its last value
        i = self.skip(i)
        if self.text[i : i + 1] == "}":
            self.at = i + 1
            return members
        while True:
            if self.text[i : i + 1] != '"':
                raise json.JSONDecodeError(
                    "Expecting property name enclosed in double quotes", self.text, i
                )
            key, i = _DECODER.raw_decode(self.text, i)  # a string: it opens with '"'
            i = self.skip(i)
            if self.text[i : i + 1] != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", self.text, i)
            members[key] = yield from self.value(self.skip(i + 1), depth)
            i = self.skip(self.at)
            closing = self.text[i : i + 1]
            if closing == "}":
                self.at = i + 1
                return members
            if closing != ",":
                raise json.JSONDecodeError("Expecting ',' delimiter", self.text, i)
            i = self.skip(i + 1)
