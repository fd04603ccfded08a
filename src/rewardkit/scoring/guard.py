"""The guard around code the engine does not trust to return: a failure costs its row only.

Two kinds of guard, each turning whatever happens into an :data:`Outcome`:

* :meth:`Guard.in_pool`: CPU-bound work (a verifier's check, a sync user function) in
  the supervised process pool, killed at ``reward.timeout_s``.
* :meth:`Guard.awaited`: work that waits on I/O (an async user function, an async
  verifier, a reward model) on the event loop, as a task of its own abandoned at its
  deadline, with what blocked the loop meanwhile named in the message. The deadline is
  on the work's run time: what it waits for a shared slot (the code sandbox's) is not
  counted (:class:`~rewardkit._fair.RowClock`) and has a bound of its own.

:class:`CustomFunction` is the user's ``compute_score`` behind these guards, its output
normalised to a score (or a typed failure).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING, Any

from rewardkit._fair import RowClock, clocked
from rewardkit._loopwatch import BlockLog, watched
from rewardkit.custom import is_async_function, normalize_output
from rewardkit.errors import InvalidSampleError, RewardkitError, ScorerError, ScorerTimeout
from rewardkit.scoring import tasks
from rewardkit.scoring.outcomes import CustomKey, Outcome, Outcomes
from rewardkit.scoring.rows import Piece, freeze
from rewardkit.types import Sample, Status

if TYPE_CHECKING:
    from rewardkit.config import RewardSection
    from rewardkit.wiring import Pool

__all__ = ["CustomFunction", "Guard"]


class Guard:
    """Runs guarded work for one engine. ``pool`` is set once the engine has started it;
    ``stats["pool"]`` counts the checks sent to it."""

    def __init__(self, timeout_s: float, stats: dict[str, int]) -> None:
        self.timeout_s = timeout_s
        self.stats = stats
        self.pool: Pool | None = None
        self.blocks = BlockLog()  # who blocked the event loop, for the rows that waited
        self.abandoned: set[asyncio.Future[Any]] = set()  # past their deadline, still running

    async def in_pool(
        self,
        fn: Callable[..., Any],
        *args: Any,
        affinity: Hashable | None = None,
        count: bool = True,
        prepare: tuple[Callable[[], None], ...] = (),
    ) -> Outcome:
        """``affinity``: rows of one prompt (its ground truth) prefer one worker, whose
        parser has already read that reference and answers like theirs. ``count``: a
        check (stats["pool"]); a spread row's extraction alone is not one. ``prepare``:
        what the check needs loaded in its worker first, outside its time
        (:func:`rewardkit.verifiers.base.preparations`)."""
        assert self.pool is not None
        self.stats["pool"] += count
        timeout = self.timeout_s
        try:
            return Status.OK, await self.pool.run(
                fn, *args, timeout=timeout, affinity=affinity, prepare=prepare
            )
        except ScorerTimeout as exc:
            return Status.TIMEOUT, str(exc)
        except RewardkitError as exc:
            return Status.ERROR, str(exc)

    async def awaited(
        self,
        awaitable: Awaitable[Any],
        timeout: float,
        queue_timeout: float | None = None,
        queue_setting: str = "its queue bound",
    ) -> Outcome:
        """Await something that waits on I/O, with a timeout as a second guard.

        It runs as its own task, which is cancelled at the deadline but not waited for:
        a coroutine that swallows the cancellation (``except BaseException: pass`` in a
        retry loop) cannot hold its row, as it would under ``asyncio.wait_for``.

        ``timeout`` is on the time the work *runs*: while it only waits for a slot (it
        reports so through :mod:`rewardkit._fair`) its clock stands still, so a row is
        never timed out for the queue in front of it. That wait is bounded apart, by
        ``queue_timeout`` seconds in all (None: not here): past it the row is an error
        (not a timeout, which would be cached as the answer's) naming ``queue_setting``.
        """
        started = time.perf_counter()
        clock = RowClock()
        with clocked(clock):  # the task, and the tasks it starts, report to this clock
            task = asyncio.ensure_future(_contained(awaitable))
        task.add_done_callback(_retrieve)  # an abandoned task's failure is not logged
        try:
            over = await _until_done_or_over(task, clock, timeout, queue_timeout)
        finally:
            if not task.done():
                task.cancel()
                self.abandoned.add(task)
                task.add_done_callback(self.abandoned.discard)
        if over == "wait":
            return Status.ERROR, (
                f"waited {clock.waited():.1f}s for a free slot, past {queue_setting}="
                f"{queue_timeout:g}s (its own runs: {clock.ran():.1f}s): a queue too long "
                "for the load, not a verdict on this row"
            )
        if not task.done() or task.cancelled():
            blocked = self.blocks.during(started, time.perf_counter())
            waited = clock.waited()
            notes = []
            if waited >= 0.05:
                notes.append(f"besides {waited:.1f}s waiting for a slot, not counted")
            if blocked:
                notes.append(blocked)
            return Status.TIMEOUT, f"timed out after {timeout:g}s" + (
                f" ({'; '.join(notes)})" if notes else ""
            )
        exc = task.exception()
        if exc is None:
            return Status.OK, task.result()
        if isinstance(exc, InvalidSampleError):
            raise exc
        return Status.ERROR, exc if isinstance(exc, ScorerError) else f"{type(exc).__name__}: {exc}"

    async def close(self) -> None:
        """Stop the scorer tasks left running past their deadline, so the event loop can
        close (``asyncio.run`` waits for every task, for ever). One that swallowed its
        cancellation gets a second one; one that swallows that too has its coroutine closed."""
        pending = [task for task in self.abandoned if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2.0)
        for task in pending:
            if not task.done() and isinstance(task, asyncio.Task):
                with contextlib.suppress(RuntimeError):  # it ignored GeneratorExit too
                    task.get_coro().close()
                task.cancel()  # wakes it: the closed coroutine ends the task


class CustomFunction:
    """The user's function (``reward.custom_reward_function``) as the rule piece of a row:
    called every time unless ``custom_reward_function.cache``.

    A custom function may be stochastic, stateful or remote, so rows are neither
    deduplicated nor cached by default; ``cache: true`` shares identical calls. An async
    function is awaited on the loop under ``reward.async_timeout_s``; a sync one runs in
    a worker under ``reward.timeout_s``.
    """

    def __init__(
        self, fn: Callable[..., Any], section: RewardSection, guard: Guard, outcomes: Outcomes
    ) -> None:
        self.fn = fn
        self.section = section
        self.guard = guard
        self.outcomes = outcomes
        self.router: dict[str, Any] = {}
        """verl's extra keywords when rewardkit launched the reward model's servers:
        ``reward_router_address`` (``host:port``) and ``reward_model_tokenizer``."""

    def give_router(self, address: str, tokenizer: Any) -> None:
        """Pass the router of a managed reward model as verl does (its reward loop's
        ``reward_router_address`` and ``reward_model_tokenizer``); the tokenizer only to a
        function that takes it, as rewardkit's own functions need not."""
        self.router = {"reward_router_address": address}
        if _accepts(self.fn, "reward_model_tokenizer"):
            self.router["reward_model_tokenizer"] = tokenizer

    async def piece(self, sample: Sample) -> Piece:
        kwargs = {**self.section.function_kwargs, **self.router}
        args = (sample.data_source, sample.response, sample.ground_truth, dict(sample.extra_info))
        weight = self.section.rule_weight
        status, value = await self._call(args, kwargs)
        if status is not Status.OK:
            return Piece("rule", weight, status=status, error=f"custom function: {value}")
        try:
            score, extra = normalize_output(value)
        except ScorerError as exc:
            return Piece("rule", weight, status=Status.ERROR, error=str(exc))
        return Piece("rule", weight, score=score, extra=extra)

    async def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
        """One call of the user's function (async: on the loop; sync: in a worker)."""
        fn_cfg = self.section.custom_reward_function
        guard = self.guard
        if is_async_function(self.fn):
            custom = self.fn
            name = f"async function {fn_cfg.name!r} ({fn_cfg.path})"

            def compute() -> Awaitable[Outcome]:
                # Watched: a coroutine that blocks the loop is named in its row's error.
                return guard.awaited(
                    watched(custom(*args, **kwargs), name, guard.blocks),
                    self.section.async_timeout_s,
                )
        else:

            def compute() -> Awaitable[Outcome]:
                return guard.in_pool(tasks.call_custom, fn_cfg.path, fn_cfg.name, args, kwargs)

        if not fn_cfg.cache:
            return await compute()
        own = {k: v for k, v in kwargs.items() if k not in self.router}  # the router is fixed
        key = CustomKey(fn_cfg.path, fn_cfg.name, freeze(args), freeze(own))
        return await self.outcomes.shared(key, compute)


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


async def _contained(awaitable: Awaitable[Any]) -> Any:
    """Await user code in a task of its own; what it raises that is not an ``Exception``
    (SystemExit, KeyboardInterrupt, a CancelledError of its own making) would otherwise
    end the event loop's thread or the whole batch: here it fails its row only."""
    try:
        return await awaitable
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # cancelled by us (the deadline) or our caller: pass it on
        raise ScorerError("CancelledError raised by the scorer itself") from None
    except (SystemExit, KeyboardInterrupt) as exc:
        raise ScorerError(f"{type(exc).__name__} raised by the scorer: {exc}") from None


async def _until_done_or_over(
    task: asyncio.Future[Any], clock: RowClock, timeout: float, queue_timeout: float | None
) -> str | None:
    """Wait until ``task`` is done (None), its run time passes ``timeout`` ("run"), or its
    wait for slots passes ``queue_timeout`` ("wait"); woken at each switch between the two."""
    while not task.done():
        left: float | None
        if clock.paused:
            left = None if queue_timeout is None else queue_timeout - clock.waited()
            over = "wait"
        else:
            left = timeout - clock.ran()
            over = "run"
        if left is not None and left <= 0:
            return over
        await asyncio.wait(
            {task, clock.changed()}, timeout=left, return_when=asyncio.FIRST_COMPLETED
        )
    return None


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
