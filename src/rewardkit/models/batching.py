"""Gathering concurrent per-row calls into batches.

The scoring loop awaits ``scorer.score(row)`` for every row at once; a model wants few
large, evenly sized batches. :class:`Batcher` collects the calls that arrive within a
short window (or while the previous batch is still running) into a *round* and hands
the round to the scorer's ``process`` function; :func:`pack_by_tokens` cuts a round into
batches whose padded size (rows x longest row) stays under a token budget, trading
padding against the cost of another forward pass as :class:`ForwardCost` measures it.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rewardkit.errors import ScorerError

__all__ = [
    "DEFAULT_COST",
    "Batcher",
    "CostModel",
    "Emit",
    "ForwardCost",
    "ModelThread",
    "pack_by_tokens",
    "run_on_thread",
    "shutdown_thread",
]

T = TypeVar("T")
R = TypeVar("R")

Emit = Callable[[int, "R | BaseException"], None]
"""``emit(i, result_or_exception)`` delivers the result of item ``i`` of a round."""


@dataclass(frozen=True, slots=True)
class CostModel:
    """What a forward pass over ``rows`` rows padded to ``width`` tokens costs:
    ``fixed + per_token * rows * width + per_token_sq * rows * width**2`` (the last term is
    attention's). Any unit will do: only ratios matter to :func:`pack_by_tokens`."""

    fixed: float
    per_token: float = 1.0
    per_token_sq: float = 0.0

    def padding(self, width: int, length: int) -> float:
        """The cost of padding one row of ``length`` tokens to ``width``."""
        return self.per_token * (width - length) + self.per_token_sq * (width**2 - length**2)

    def padding_tokens(self) -> float:
        """The padding, in tokens at the linear rate, that costs as much as one forward."""
        return self.fixed / self.per_token if self.per_token > 0 else math.inf


DEFAULT_COST = CostModel(fixed=512.0)
"""The cost model before any forward pass is timed: 512 tokens of padding per forward."""


def pack_by_tokens(
    lengths: Sequence[int],
    max_tokens: int,
    max_rows: int,
    cost: CostModel = DEFAULT_COST,
) -> list[list[int]]:
    """Group row indices into batches with ``rows x longest <= max_tokens`` and ``rows <= max_rows``.

    Rows are taken longest first. A row joins the current batch while the padding the
    batch has gathered costs less than one more forward pass (``cost.fixed``); past that,
    a new batch is cheaper. On a GPU a forward has a large fixed cost and batches grow to
    the budget; on a CPU it is nearly free and a batch holds rows of about one length.
    A row longer than the budget is batched alone.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0  # the current batch's longest row: its first, as rows come longest first
    padded = 0.0  # what the current batch's padding costs
    for i in order:
        full = (len(current) + 1) * width > max_tokens or len(current) >= max_rows
        extra = cost.padding(width, lengths[i])
        if current and (full or padded + extra > cost.fixed):
            batches.append(current)
            current = []
        if not current:
            width, padded, extra = lengths[i], 0.0, 0.0
        current.append(i)
        padded += extra
    if current:
        batches.append(current)
    return batches


class ForwardCost:
    """A :class:`CostModel` fitted to the forward passes a model has run.

    Least squares over the last ``window`` passes, each given as (rows, width, seconds).
    Until ``min_samples`` passes of varied sizes are timed (the largest at least 1.5x
    the smallest in padded tokens), :attr:`model` is ``prior``. A fit with a negative
    term is refitted without the attention term; one whose cost still does not grow with
    tokens cannot bound padding and keeps the model it had (the prior, or its last fit
    that could); one with no fixed cost batches rows of equal length only.

    Why not trust a fit with a negative linear term and a positive attention term: on a
    GPU, a forward's time grows with tokens in steps (kernel tiles, waves of thread
    blocks), not smoothly, and over a window of similar batches least squares can put all
    of the growth in the attention term and a negative slope in the linear one. Clamped
    to 0, that slope made the allowance (:meth:`CostModel.padding_tokens`) infinite, and
    batches took any row that fit the budget, padding included.
    """

    def __init__(
        self, prior: CostModel = DEFAULT_COST, *, window: int = 64, min_samples: int = 8
    ) -> None:
        self.model = prior
        self._min_samples = min_samples
        self._samples: deque[tuple[int, int, float]] = deque(maxlen=window)

    def observe(self, rows: int, width: int, seconds: float) -> None:
        """Record one forward pass and refit."""
        self._samples.append((rows, width, seconds))
        tokens = [r * w for r, w, _ in self._samples]
        if len(tokens) < self._min_samples or max(tokens) < 1.5 * min(tokens):
            return  # too few, or too alike to tell the fixed cost from the per-token cost
        self.model = self._fit()

    def _fit(self) -> CostModel:
        # Features in thousands of tokens keep the normal equations well scaled.
        ys = [s for _, _, s in self._samples]
        linear = [r * w / 1e3 for r, w, _ in self._samples]
        square = [r * w * w / 1e6 for r, w, _ in self._samples]
        coef = _least_squares([[1.0, x, z] for x, z in zip(linear, square, strict=True)], ys)
        if coef is None or coef[1] <= 0 or coef[2] < 0:
            coef = _least_squares([[1.0, x] for x in linear], ys)
            if coef is None:
                return self.model
            coef = [*coef, 0.0]
        fixed, per_k, per_m = coef
        if per_k * max(linear) <= 1e-6 * max(ys):
            # tokens seem free (a millionth of the largest pass, rounding error): nothing
            # bounds padding, keep what we had
            return self.model
        return CostModel(max(0.0, fixed), per_k / 1e3, per_m / 1e6)


def _least_squares(xs: list[list[float]], ys: list[float]) -> list[float] | None:
    """Solve the normal equations by Gaussian elimination; None when they are singular."""
    k = len(xs[0])
    # Augmented matrix [X^T X | X^T y].
    a = [
        [sum(x[i] * x[j] for x in xs) for j in range(k)]
        + [sum(x[i] * y for x, y in zip(xs, ys, strict=True))]
        for i in range(k)
    ]
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-12 * max(1.0, abs(a[0][0])):
            return None
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(k):
            if r != col:
                f = a[r][col] / a[col][col]
                a[r] = [v - f * p for v, p in zip(a[r], a[col], strict=True)]
    return [a[i][k] / a[i][i] for i in range(k)]


class Batcher(Generic[T, R]):
    """Collects concurrent :meth:`submit` calls into rounds processed by ``process``.

    A round starts once a processing slot is free and the oldest waiting item has waited
    ``max_wait_s`` (or ``max_round`` items are waiting). ``process(items, emit)`` must
    call ``emit(i, result)`` for each item, from the event loop's thread; an item it
    leaves without a result, or all of them if it raises, fail with ScorerError, so a
    caller never waits forever. Items whose caller gave up (cancelled) are dropped before
    their round starts.
    """

    def __init__(
        self,
        process: Callable[[list[T], Emit[R]], Awaitable[None]],
        *,
        max_wait_s: float = 0.005,
        max_round: int = 4096,
        max_inflight: int = 1,
        name: str = "batcher",
    ) -> None:
        self._process = process
        self._max_wait = max_wait_s
        self._max_round = max_round
        self._name = name
        self._pending: list[tuple[T, asyncio.Future[R], float]] = []
        self._slots = asyncio.Semaphore(max_inflight)
        self._arrived = asyncio.Event()
        self._full = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None
        self._rounds: set[asyncio.Task[None]] = set()
        self._closed = False

    async def submit(self, item: T) -> R:
        """Queue ``item`` and wait for its result (or exception)."""
        if self._closed:
            raise ScorerError(f"{self._name} is closed")
        loop = asyncio.get_running_loop()
        if self._runner is None or self._runner.done():
            self._runner = loop.create_task(self._run(), name=f"{self._name}-collector")
        future: asyncio.Future[R] = loop.create_future()
        self._pending.append((item, future, loop.time()))
        self._arrived.set()
        if len(self._pending) >= self._max_round:
            self._full.set()
        return await future

    async def close(self) -> None:
        """Stop collecting; fail the calls still waiting or in a running round."""
        self._closed = True
        tasks = [t for t in (self._runner, *self._rounds) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        pending, self._pending = self._pending, []
        for _, future, _ in pending:
            if not future.done():
                future.set_exception(self._closed_error())

    def _closed_error(self) -> ScorerError:
        return ScorerError(f"{self._name} closed before scoring this row")

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._slots.acquire()
            try:
                await self._arrived.wait()
                # Wait out the window counted from the oldest arrival: while the previous
                # round ran, its successors were already gathering.
                wait = self._pending[0][2] + self._max_wait - loop.time()
                if wait > 0 and len(self._pending) < self._max_round:
                    try:
                        await asyncio.wait_for(self._full.wait(), wait)
                    except TimeoutError:
                        pass
                taken = self._take()
            except BaseException:
                self._slots.release()
                raise
            if not taken:
                self._slots.release()
                continue
            task = loop.create_task(self._round(taken), name=f"{self._name}-round")
            self._rounds.add(task)
            task.add_done_callback(self._rounds.discard)

    def _take(self) -> list[tuple[T, asyncio.Future[R]]]:
        taken = self._pending[: self._max_round]
        del self._pending[: self._max_round]
        if not self._pending:
            self._arrived.clear()
        if len(self._pending) < self._max_round:
            self._full.clear()
        return [(item, future) for item, future, _ in taken if not future.done()]

    async def _round(self, taken: list[tuple[T, asyncio.Future[R]]]) -> None:
        futures = [future for _, future in taken]

        def emit(i: int, result: R | BaseException) -> None:
            future = futures[i]
            if future.done():  # the caller gave up, or a result was already given
                return
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)

        try:
            await self._process([item for item, _ in taken], emit)
        except asyncio.CancelledError:
            for i in range(len(futures)):
                emit(i, self._closed_error())
            raise
        except Exception as exc:
            failure = (
                exc
                if isinstance(exc, ScorerError)
                else ScorerError(f"{self._name}: {type(exc).__name__}: {exc}")
            )
            for i in range(len(futures)):
                emit(i, failure)
        finally:
            self._slots.release()
            for i in range(len(futures)):
                emit(i, ScorerError(f"{self._name} produced no result for this row"))


async def run_on_thread(
    executor: ThreadPoolExecutor,
    work: Callable[[list[T], Emit[R]], None],
    items: list[T],
    emit: Emit[R],
) -> None:
    """Run ``work(items, emit)`` on ``executor``'s thread (a model's own thread, so the event
    loop stays free); each result it emits is handed back to the loop's thread."""
    loop = asyncio.get_running_loop()

    def threadsafe(i: int, result: R | BaseException) -> None:
        loop.call_soon_threadsafe(emit, i, result)

    await loop.run_in_executor(executor, work, items, threadsafe)


async def shutdown_thread(executor: ThreadPoolExecutor) -> None:
    """Shut a model thread down, waiting for its current batch without blocking the loop."""
    await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)


class ModelThread:
    """A local model that lives on its own thread: it loads there, batches run there.

    For scorers and generators: set ``_executor`` (one worker), ``_batcher`` and ``_model``
    (None until loaded) in ``__init__`` and write ``_load``; ``start`` and ``close`` are
    then the same for every local model.
    """

    _executor: ThreadPoolExecutor
    _batcher: Batcher[Any, Any]
    _model: Any

    def _load(self) -> None:
        """Load the tokenizer(s) and weights (runs on the model thread)."""
        raise NotImplementedError

    async def start(self) -> None:
        """Load tokenizer(s) and weights on the model thread."""
        if self._model is None:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._load)

    async def close(self) -> None:
        """Finish the batch in flight, stop the thread and drop the weights."""
        await self._batcher.close()
        await shutdown_thread(self._executor)
        self._model = None
