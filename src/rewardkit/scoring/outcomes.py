"""Work done once: identical computations share one future, finished ones stay in an LRU.

Each kind of shared computation has its own typed key (:class:`CheckKey` for a rule
verifier's check, :class:`CustomKey` for a user function's call with
``custom_reward_function.cache``, :class:`AsyncKey` for an async verifier's call):
frozen dataclasses, equal only to a key of their own kind, read by field name.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Hashable
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

from rewardkit.types import Status
from rewardkit.verifiers.base import ALSO_OFFERED, CALLED_WRONG, Extracted, Keyed

__all__ = ["AsyncKey", "CheckKey", "CustomKey", "InPool", "Key", "Outcome", "Outcomes"]

Outcome: TypeAlias = tuple[Status, Any]
"""``(OK, value)``, ``(TIMEOUT, message)`` or ``(ERROR, message)``."""

Answer: TypeAlias = tuple[Any, Any, Any]
"""An extracted answer as checks key it: ``(answer, source, also offered)``."""


@dataclass(frozen=True, slots=True)
class CheckKey:
    """A rule verifier's check: the source is part of it, as a fallback passage and a box
    holding the same text are read differently (math-verify's extraction against the
    box's content)."""

    verifier: str
    gold: str  # the ground truth, frozen (rows.freeze)
    answer: str | None
    source: Any
    also: tuple[str, ...] = ()
    """Other final answers offered (``ALSO_OFFERED``): the check reads them too, so a
    row offering none must not reuse the verdict of one offering some, nor the reverse."""

    @classmethod
    def of(cls, verifier: Keyed, gold: str, extracted: Extracted) -> CheckKey:
        also = tuple(extracted.extra.get(ALSO_OFFERED) or ())
        source = extracted.extra.get("source")
        if extracted.answer is None:  # no answer: its verdict can read only what extraction
            # noted (json_schema's failed: no_json or several_answers, math's hedged)
            source = (source, tuple(sorted((k, repr(v)) for k, v in extracted.extra.items())))
        elif (wrong := extracted.extra.get(CALLED_WRONG)) is not None:  # read by the check
            source = (source, CALLED_WRONG, wrong)
        return cls(verifier.key, gold, extracted.answer, source, also)

    @property
    def reference(self) -> tuple[str, str]:
        """(verifier, ground truth): what the index of cached answers is keyed by."""
        return self.verifier, self.gold

    @property
    def answer_of(self) -> Answer:
        """(answer, source, also): what a spread task compares its rows' answers with."""
        return self.answer, self.source, self.also


@dataclass(frozen=True, slots=True)
class CustomKey:
    """A call of the user's function (``custom_reward_function.cache: true``)."""

    path: str | None
    name: str
    args: str  # frozen
    kwargs: str  # frozen


@dataclass(frozen=True, slots=True)
class AsyncKey:
    """An async verifier's call: the ``extra_info`` it reads is all of it the key needs,
    and the prompt only for a verifier that reads it (the code verifier's prompt helpers)."""

    verifier: str
    gold: str  # frozen
    read: str  # the extra_info keys the verifier names, frozen
    prompt: str  # "" unless the verifier reads the prompt
    response: str


Key: TypeAlias = CheckKey | CustomKey | AsyncKey


class InPool(Protocol):
    """Runs ``fn(*args)`` in the supervised pool; a failure is the outcome's status."""

    def __call__(
        self,
        fn: Callable[..., Any],
        *args: Any,
        affinity: Hashable | None = None,
        count: bool = True,
    ) -> Awaitable[Outcome]: ...


class Outcomes:
    """The engine's shared computations: in flight, and finished (a bounded LRU).

    ``stats`` is the engine's counter table (``cache_hits``, ``deduplicated``).
    """

    def __init__(self, cache_size: int, stats: dict[str, int]) -> None:
        self.cache_size = cache_size
        self.stats = stats
        self.inflight: dict[Key, asyncio.Future[Outcome]] = {}
        self.cache: OrderedDict[Key, Outcome] = OrderedDict()
        # The answers the cache holds a check of, by (verifier, ground truth): a spread
        # task leaves those to the cache instead of checking them again (scoring.spread).
        self.answers: dict[tuple[str, str], set[Answer]] = {}
        # And those a spread task is checking now, past SPREAD_STALL_S (promise)
        self.promised: dict[tuple[str, str], set[Answer]] = {}

    async def shared(self, key: Key, compute: Callable[[], Awaitable[Outcome]]) -> Outcome:
        """Compute each key once: join an in-flight computation, or reuse a cached outcome.

        The computation is its own task, shielded from its callers: a caller that is
        cancelled (a client that went away) does not cancel it for the others.
        """
        outcome = self.cached(key)
        if outcome is not None:
            return outcome
        task = self.inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(compute())
            self.inflight[key] = task
            task.add_done_callback(lambda done: self._remember(key, done))
        else:
            self.stats["deduplicated"] += 1
        return await asyncio.shield(task)

    def cached(self, key: Key) -> Outcome | None:
        """The finished outcome of ``key`` (a cache hit, counted), or None. Synchronous: a
        row whose check is cached needs no coroutine, no task (a few microseconds of the
        loop's time a row, at thousands of rows a second)."""
        outcome = self.cache.get(key)
        if outcome is not None:
            self.cache.move_to_end(key)
            self.stats["cache_hits"] += 1
        return outcome

    def known(self, reference: tuple[str, str]) -> Collection[Answer]:
        """The answers the cache holds a check of against ``(verifier, ground truth)``, and
        those a spread task is checking now (:meth:`promise`)."""
        promised = self.promised.get(reference)
        cached = self.answers.get(reference, ())
        return cached if not promised else promised.union(cached)

    def promise(self, key: CheckKey) -> asyncio.Future[Outcome] | None:
        """A check a spread task runs, that ran long (scoring.spread): in flight from now
        on, so that every row with its answer waits for it (:meth:`shared`; spread tasks
        leave it to the engine: :meth:`known`) instead of checking it again, and timing
        out again. None when the key is cached or in flight already. Whoever gets the
        future settles it (:meth:`settle`), on every path."""
        if key in self.cache or key in self.inflight:
            return None
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self.inflight[key] = future
        self.promised.setdefault(key.reference, set()).add(key.answer_of)
        return future

    def settle(self, key: CheckKey, future: asyncio.Future[Outcome], outcome: Outcome) -> None:
        """The promised check's outcome: its waiters get it, the cache keeps it (as
        :meth:`put` does); the key is no longer in flight."""
        if self.inflight.get(key) is future:
            del self.inflight[key]
        answers = self.promised.get(key.reference)
        if answers is not None:
            answers.discard(key.answer_of)
            if not answers:
                del self.promised[key.reference]
        if not future.done():
            future.set_result(outcome)
        self.put(key, outcome)

    def pending(self) -> list[asyncio.Future[Outcome]]:
        """The computations in flight now."""
        return list(self.inflight.values())

    def _remember(self, key: Key, done: asyncio.Future[Outcome]) -> None:
        self.inflight.pop(key, None)
        if done.cancelled() or done.exception() is not None:
            return
        self.put(key, done.result())

    def put(self, key: Key, outcome: Outcome) -> None:
        """Cache a finished outcome (a check done in a spread task comes in here too).

        Timeouts are cached: the same pathological answer would time out again. Errors
        are not: a crashed worker may be bad luck."""
        if not self.cache_size or outcome[0] is Status.ERROR:
            return
        self.cache[key] = outcome
        self.cache.move_to_end(key)
        if isinstance(key, CheckKey):
            self.answers.setdefault(key.reference, set()).add(key.answer_of)
        if len(self.cache) > self.cache_size:
            old, _ = self.cache.popitem(last=False)
            if isinstance(old, CheckKey):
                answers = self.answers[old.reference]
                answers.discard(old.answer_of)
                if not answers:
                    del self.answers[old.reference]
