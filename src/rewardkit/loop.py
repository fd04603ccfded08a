"""RewardLoop: the Python API. Start once, score every training step, close at the end.

    from rewardkit import RewardLoop

    with RewardLoop({"reward": {"num_workers": 2, "timeout_s": 5}}) as loop:
        results = loop.score(rows)               # list[Result], in input order
        one = await loop.ascore(row)             # from async code
        async for result in loop.stream(rows):   # as each row completes
            ...

The engine (workers, models, caches) lives on a private event loop in a background
thread, so the same object serves synchronous trainers, async rollout workers and
the command line, and stays warm between steps.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import threading
from collections import deque
from collections.abc import AsyncIterator, Coroutine, Iterable, Iterator
from typing import Any, TypeVar

from rewardkit import wiring
from rewardkit.aggregate import needs_groups, refuse_per_sample, rescore
from rewardkit.config import ConfigSource, RewardConfig, check_runnable, load_config
from rewardkit.errors import PoolUnavailable, RewardkitError
from rewardkit.execution.health import engine_problem, refusals
from rewardkit.models import gathering
from rewardkit.scoring.engine import RewardEngine
from rewardkit.types import Result

__all__ = ["RewardLoop"]

T = TypeVar("T")

_CHUNK = 256  # rows per hop onto the engine's thread when streaming large inputs


class RewardLoop:
    """Scores rows with every source the config enables. See the module docstring."""

    def __init__(self, config: ConfigSource = None, overrides: Iterable[str] = ()) -> None:
        self.config: RewardConfig = load_config(config, overrides)
        check_runnable(self.config)  # a missing model folder: now, not after workers start
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._engine: RewardEngine | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> RewardLoop:
        """Start workers and load models. Idempotent."""
        if self._engine is not None:
            return self
        wiring.prepare_pool(self.config.reward)  # from this thread: the main one, often
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="rewardkit-loop", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        try:
            self._engine = self._call(RewardEngine.create(self.config))
        except BaseException:
            self._stop_thread()
            raise
        return self

    def close(self) -> None:
        """Stop workers and models. Idempotent.

        Whatever is still pending on the loop afterwards (rows of an interrupted
        ``iter_score``) is cancelled and awaited, so the loop stops with nothing pending:
        no "Event loop is closed" noise from callbacks that outlive it.
        """
        if self._engine is not None:
            engine, self._engine = self._engine, None
            try:
                self._call(_settle_rows(engine))
                self._call(engine.close())
            finally:
                self._call(_cancel_others())
        self._stop_thread()

    def __enter__(self) -> RewardLoop:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def engine(self) -> RewardEngine:
        if self._engine is None:
            raise RewardkitError(
                "the RewardLoop is not started: use `with RewardLoop(...)` or .start()"
            )
        return self._engine

    # ------------------------------------------------------------------ scoring

    def score(self, samples: Iterable[Any]) -> list[Result]:
        """Score rows (Sample objects or Sample-shaped dicts); one Result per row, in order.

        Raises PoolUnavailable (a ScorerError) when rows failed because no Ray actor has
        been live for ``reward.ray.unavailable_timeout_s``; its ``results`` holds the rows
        scored until then.
        """
        done: list[Result] = []
        try:
            for result in self.iter_score(samples):
                done.append(result)
        except PoolUnavailable as exc:
            exc.results = done + exc.results
            raise
        return done

    def iter_score(self, samples: Iterable[Any], *, window: int = 8192) -> Iterator[Result]:
        """Yield Results in input order while at most ``window`` rows are in flight.

        Memory stays flat however long the input: this is what `rewardkit score` uses.
        Each Result is yielded soon (within 0.2 s) after it and every row before it are done, so a
        consumer stopped midway (Ctrl-C) has every row finished up to that point.
        Raises PoolUnavailable as :meth:`score` does (``results``: the rows of that take).

        With ``reward.aggregation: normalize_then_sum`` or ``reward.scale_rewards`` set,
        a row's score depends on its group's other rows, which may come anywhere in the
        input: every row is scored first and the whole input aggregated as one batch
        (:func:`rewardkit.aggregate.rescore`), so memory grows with the input.

        With a group judge (``reward_model.judge.group``) the whole input is one batch, read
        at once, so that no group is cut between two chunks.
        """
        if needs_groups(self.config.reward):
            yield from rescore(list(self._iter_rows(samples, window)), self.config.reward)
            return
        yield from self._iter_rows(samples, window)

    def _iter_rows(self, samples: Iterable[Any], window: int) -> Iterator[Result]:
        engine = self.engine
        refused = refusals(engine)
        inbox = _InOrder()
        pending: deque[concurrent.futures.Future[None]] = deque()
        submitted = 0
        grouped = gathering.gathers(engine.model_scorers)
        try:
            for chunk in _chunks(samples, 0 if grouped else _CHUNK):
                pending.append(self._submit(_score_into(engine, chunk, submitted, inbox)))
                submitted += len(chunk)
                while submitted - inbox.next_index >= window:
                    yield from _checked(engine, inbox.take(pending), refused)
            while inbox.next_index < submitted:
                yield from _checked(engine, inbox.take(pending), refused)
        finally:  # abandoned (Ctrl-C, a consumer that stopped): stop the rows in flight
            for future in pending:
                future.cancel()

    async def ascore(self, sample: Any, *, index: int = 0) -> Result:
        """Score one row from async code (any event loop). Refuses (ConfigError) a config
        whose aggregation needs whole groups."""
        refuse_per_sample(self.config.reward, "RewardLoop.ascore")
        return await asyncio.wrap_future(self._submit(self.engine.score_row(index, sample)))

    async def stream(
        self, samples: Iterable[Any], *, max_in_flight: int = 8192
    ) -> AsyncIterator[Result]:
        """Yield each row's Result as soon as it is ready; ``result.index`` is its input
        position. Refuses (ConfigError) a config whose aggregation needs whole groups.

        With a group judge (``reward_model.judge.group``) the rows are one batch, read at once
        and all in flight: each group's rows come as soon as that group is judged.
        """
        refuse_per_sample(self.config.reward, "RewardLoop.stream")
        engine = self.engine
        in_flight: set[asyncio.Future[Result]] = set()
        batch = None
        if gathering.gathers(engine.model_scorers):
            samples = list(samples)
            batch = gathering.batch_of(samples, engine._parse, engine.model_scorers)
            max_in_flight = len(samples) + 1
        try:
            for index, sample in enumerate(samples):
                if len(in_flight) >= max_in_flight:
                    done, in_flight = await asyncio.wait(
                        in_flight, return_when=asyncio.FIRST_COMPLETED
                    )
                    for future in done:
                        yield future.result()
                row = engine.score_row(index, sample)
                work = row if batch is None else gathering.within(batch, row)
                in_flight.add(asyncio.wrap_future(self._submit(work)))
            while in_flight:
                done, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    yield future.result()
        finally:
            for future in in_flight:
                future.cancel()

    # ------------------------------------------------------------------ plumbing

    def _submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._submit(coro).result()

    def _stop_thread(self) -> None:
        if self._loop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        self._loop = self._thread = None


class _InOrder:
    """Results delivered from the engine's thread in any order, taken out in input order.

    The engine's thread only stores each result in ``done`` (a dict assignment, atomic
    under the GIL); the consumer wakes once per finished chunk, or every ``poll_s`` while a slow
    chunk is still running, so fast rows cost no thread switch each.
    """

    def __init__(self, poll_s: float = 0.2) -> None:
        self.done: dict[int, Result] = {}
        self._poll_s = poll_s
        self.next_index = 0

    def take(self, pending: deque[concurrent.futures.Future[None]]) -> list[Result]:
        """The next results in order: at least one, as many as are done in a row."""
        done, index = self.done, self.next_index
        while index not in done:
            if not pending:
                raise RuntimeError(f"row {index} was never scored")  # a bug of ours
            try:
                pending[0].result(timeout=self._poll_s)  # re-raises a failure of ours
            except concurrent.futures.TimeoutError:
                continue
            pending.popleft()
        taken = []
        while index in done:
            taken.append(done.pop(index))
            index += 1
        self.next_index = index
        return taken


async def _score_into(engine: RewardEngine, rows: list[Any], start: int, inbox: _InOrder) -> None:
    task = asyncio.current_task()
    if task is not None:
        task.set_name(_ROWS_TASK)  # found by _settle_rows when the run is interrupted
    await engine.score_into(rows, start, inbox.done)


_ROWS_TASK = "rewardkit-rows"


async def _settle_rows(engine: RewardEngine) -> None:
    """Cancel the rows still in flight and what they wait on; return once all have stopped."""
    current = asyncio.current_task()
    rows = [t for t in asyncio.all_tasks() if t is not current and t.get_name() == _ROWS_TASK]
    for task in rows:
        task.cancel()
    await asyncio.gather(*rows, return_exceptions=True)
    await engine.cancel_pending()


async def _cancel_others() -> None:
    """Cancel every task on this loop but the caller's, and wait until they have stopped."""
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    if others:  # bounded: a user coroutine that swallows its cancellation is left behind
        await asyncio.wait(others, timeout=_SETTLE_S)


_SETTLE_S = 5.0
"""How long closing waits for cancelled tasks to stop before leaving them behind."""


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size``; 0: all of them in one."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size or None)):
        yield chunk


def _checked(engine: RewardEngine, results: list[Result], refused: int) -> list[Result]:
    """``results``, unless rows were refused for want of a live actor and none is live now."""
    if refusals(engine) > refused:
        problem = engine_problem(engine)
        if problem is not None:
            raise PoolUnavailable(f"cannot score: {problem}", results)
    return results
