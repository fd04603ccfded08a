"""A large batch's inline phases, run in the workers a few dozen rows per task.

A large batch (a trainer's step, a big HTTP request) would keep the event loop's one
core busy with every row's extraction and fast paths while the workers wait for the
few rows those leave them: the inline phases cap the whole engine's rate (more so the
more cores). Past :data:`SPREAD_MIN_ROWS` rows they run in the workers too
(:func:`rewardkit.scoring.tasks.spread_rows`), a few dozen rows per task, and the same
task checks the rows they leave to the slow path (unless the cache holds that check):
a task per checked row would cost the loop and the worker a round trip each, a sixth of
the whole run on math outputs. What a task leaves unchecked (past its
:data:`SPREAD_CHECK_S`, or a check that failed) goes on to the pool's checks as it would
from the loop (shared keys, cache, affinity).

Not a second pipeline: the worker runs the phases the loop would
(:func:`~rewardkit.scoring.rows.first_phases`,
:func:`~rewardkit.scoring.rows.quick_decides`), and each row's outcome comes back to
the engine's own :meth:`RulePipeline.verdict_result`, which inline rows take too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from rewardkit.config import RewardSection
from rewardkit.errors import InvalidSampleError, RewardkitError, ScorerTimeout, WorkerCrashed
from rewardkit.execution.pool import TaskLink, WorkerPool
from rewardkit.execution.ray_pool import RayWorkerPool
from rewardkit.scoring import tasks
from rewardkit.scoring.guard import Guard
from rewardkit.scoring.outcomes import Answer, CheckKey, Outcome, Outcomes
from rewardkit.scoring.rows import (
    context_of,
    failed,
    freeze,
    row_of,
    store,
    timed,
    too_big_inline,
)
from rewardkit.types import Result, Sample, Status
from rewardkit.verifiers.base import (
    AnyVerifier,
    Extracted,
    Verdict,
    Verifier,
    is_async,
    preparations,
)

__all__ = [
    "SPREAD_CHARS",
    "SPREAD_CHECK_S",
    "SPREAD_KNOWN_MAX",
    "SPREAD_MIN_ROWS",
    "SPREAD_RAY_CHARS",
    "SPREAD_RAY_ROWS",
    "SPREAD_ROWS",
    "SPREAD_STALL_S",
    "Batch",
    "RulePipeline",
    "SpreadRow",
    "Spreader",
]

SPREAD_MIN_ROWS = 64
"""A batch of at least this many rows runs its inline phases in the workers."""
SPREAD_ROWS = 32
"""Rows per spread task: a few milliseconds of extraction, one pipe write."""
SPREAD_CHARS = 48_000  # responses per task: below the pool's inline send size, with room
SPREAD_RAY_ROWS = 64
"""Rows per spread task on Ray: a remote call costs the driver and the actor about a
millisecond of CPU each, a pipe write a tenth of that (benchmarks/bench_ray.py)."""
SPREAD_RAY_CHARS = 96_000  # (no inline send there: a call's arguments travel as one)
SPREAD_KNOWN_MAX = 256
"""Cached answers a spread task carries at most (see :meth:`Spreader.work`)."""
SPREAD_STALL_S = 0.1
"""A row's extraction or check in a spread task running this long (a math row's check
takes about 3 ms, its extraction a tenth of that) hands the task's remaining rows to
another task at once: a row waits for its own work, never for a neighbour's slow work or
its timeout."""
_LOOK_S = 0.02  # how often a cut task's progress is read while it finishes its check
SPREAD_CHECK_S = 0.25
"""A spread task starts checks only this long (a check of a math row takes about 3 ms):
past it, the rows it has not checked go to the pool one by one, where requesters share
the workers fairly."""


@dataclass(slots=True)
class SpreadRow:
    """A row whose inline phases a worker runs: parsed once, on the loop."""

    index: int
    raw: Mapping[str, Any]
    sample: Sample
    verifier: Verifier
    started: float
    gold: str  # the ground truth's key (rows.freeze): the checks' and the pool's affinity's


class _Progress:
    """What a running spread task has reported (:data:`rewardkit.scoring.tasks.SpreadProgress`):
    the outcomes of its first rows, the row it works on now (``checking``), since when.
    Its reports wait on the worker's board until it looks (:meth:`wait`): a task that ends
    in time is never looked at before its reply."""

    def __init__(self) -> None:
        self.outcomes: list[tasks.SpreadOutcome] = []
        self.checking: int | None = None
        # that row's first phases, once its check has started; None while they run
        self.first: tuple[Extracted, Verdict | None] | None = None
        self.link = TaskLink(self.feed, stall_s=SPREAD_STALL_S)
        self.fed = asyncio.Event()  # set by each report handed on

    def feed(self, part: tasks.SpreadProgress) -> None:
        if isinstance(part, int):  # a row begins: its index alone
            self.checking, self.first = part, None
        else:
            index, outcomes, first = part
            self.outcomes.extend(outcomes)
            self.checking, self.first = index, first
        self.fed.set()

    async def wait(self, run: asyncio.Future[Any], timeout: float) -> None:
        """Wait for the task to end, for a report handed on (on Ray, the actor's early
        answer brings them) or for ``timeout``; then read the reports written since the
        last look (a local worker's board)."""
        self.fed.clear()
        fed = asyncio.ensure_future(self.fed.wait())
        try:
            await asyncio.wait({run, fed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            fed.cancel()
        if not run.done():
            self.link.collect()

    def stalled(self) -> bool:
        """Whether the row it works on has taken :data:`SPREAD_STALL_S` or more."""
        since = self.link.last_part_at
        return (
            self.checking is not None
            and since is not None
            and time.monotonic() - since >= SPREAD_STALL_S
        )

    def ran_for(self) -> float:
        """How long the row it works on has run (its extraction, or its check)."""
        quiet = self.link.quiet()
        return 0.0 if quiet is None else quiet

    def wake_in(self) -> float:
        """How long to wait for the task, not cut yet, before looking at its progress again."""
        since = self.link.last_part_at
        if self.checking is None or since is None:
            return SPREAD_STALL_S  # not started yet: look again (a report may come meanwhile)
        return max(0.0, since + SPREAD_STALL_S - time.monotonic())


async def _ran_past(run: asyncio.Future[Any], progress: _Progress, owned: int) -> bool:
    """Wait a moment (:data:`_LOOK_S`) for a cut task to end or report; True (and its run
    cancelled: the pool replaces its worker) when it still works on a row it no longer
    owns. A row that ends just as the task is cut lets the task, not yet told, go on to
    the next row, which another task now has: its rows are all reported, and waiting for
    that row (its check: up to ``reward.timeout_s``) would hold the batch for nothing.
    The look comes first: a task that went on to a row's extraction (a millisecond)
    sees the cut before the row after it, and ends."""

    def went_past() -> bool:
        return progress.checking is not None and progress.checking >= owned

    await progress.wait(run, _LOOK_S)
    if run.done() or not went_past():
        return False
    run.cancel()
    await asyncio.wait({run})
    return True


class RulePipeline(Protocol):
    """The engine's way from a rule verifier's first phases to a row's Result: the one
    inline rows take (``RewardEngine``)."""

    def verdict_result(
        self,
        row: SpreadRow,
        extracted: Extracted,
        quick: Verdict | None,
        checked: Verdict | None = None,
        shared: bool = False,
    ) -> Result | Coroutine[Any, Any, Result]:
        """The row's Result, or the coroutine that checks it and gives it."""
        ...

    def failure_result(
        self, row: SpreadRow, status: Status, error: str, extra: Mapping[str, Any] | None = None
    ) -> Result:
        """The row's Result when its rule verifier failed (a timeout, a dead worker)."""
        ...


class Batch:
    """A batch's rows gathered into spread tasks, in input order, one open task per
    worker: a row joins the task of the worker its ground truth prefers (the pool's
    affinity), so that the rows of a prompt, checked in their task, meet a parser that
    has read its reference, as they would in the pool."""

    def __init__(self, workers: int, rows: int = SPREAD_ROWS, chars: int = SPREAD_CHARS) -> None:
        self.workers = workers
        self.rows, self.most_chars = rows, chars  # a task's size: whichever comes first
        self.open: list[list[SpreadRow]] = [[] for _ in range(workers)]
        self.chars = [0] * workers

    def add(self, row: SpreadRow) -> list[SpreadRow] | None:
        """Add a row: the task it fills, if any."""
        slot = hash(row.gold) % self.workers
        self.open[slot].append(row)
        self.chars[slot] += row.sample.response_chars
        if len(self.open[slot]) < self.rows and self.chars[slot] < self.most_chars:
            return None
        full, self.open[slot], self.chars[slot] = self.open[slot], [], 0
        return full

    def take_all(self) -> list[list[SpreadRow]]:
        """The tasks still open, at the end of the batch."""
        rest = [rows for rows in self.open if rows]
        self.open = [[] for _ in range(self.workers)]
        return rest


@dataclass(slots=True)
class _Promise:
    """A long check in a spread task that other rows wait for (:meth:`Outcomes.promise`),
    settled on every path: its outcome, or the same check run again in the pool."""

    outcomes: Outcomes
    key: CheckKey
    future: asyncio.Future[Outcome]
    again: Callable[[], Awaitable[Outcome]]  # the check, in the pool
    running: set[asyncio.Future[None]]  # checks run again: held until they end

    def settle(self, outcome: Outcome) -> None:
        self.outcomes.settle(self.key, self.future, outcome)

    def hand_over(self) -> None:
        """The task can no longer give the outcome (it was cancelled, or its check
        raised): the check runs again in the pool for whoever waits, as it would alone."""
        task = asyncio.ensure_future(self._again())
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def _again(self) -> None:
        outcome: Outcome = (Status.ERROR, "its check was cancelled")
        try:
            outcome = await self.again()
        finally:  # cancelled too (the engine closing): never left unsettled
            self.settle(outcome)


class Spreader:
    """Runs spread tasks for one engine and hands each row's outcome back to it."""

    def __init__(
        self,
        section: RewardSection,
        stats: dict[str, int],
        guard: Guard,
        outcomes: Outcomes,
        rows: RulePipeline,
    ) -> None:
        self.section = section
        self.stats = stats
        self.guard = guard
        self.outcomes = outcomes
        self.rows = rows
        self._rechecks: set[asyncio.Future[None]] = set()  # promised checks run again (_Promise)

    def batch(self, rows: int, rule_only: bool) -> Batch | None:
        """What gathers a batch of ``rows`` rows into spread tasks, or None: the batch is
        too small, one worker (or actor) would leave the loop's core idle, or (not
        ``rule_only``) a user function or a reward model scores the rows."""
        pool = self.guard.pool
        if isinstance(pool, WorkerPool):
            workers, size = pool.size, (SPREAD_ROWS, SPREAD_CHARS)
        elif isinstance(pool, RayWorkerPool):  # links reach its actors' processes too
            workers, size = pool.health().desired, (SPREAD_RAY_ROWS, SPREAD_RAY_CHARS)
        else:
            return None
        if rows >= SPREAD_MIN_ROWS and workers >= 2 and rule_only:
            return Batch(workers, *size)
        return None

    def spreadable(
        self,
        index: int,
        raw: Any,
        sample: Sample,
        started: float,
        pick: Callable[[str], AnyVerifier | None],
    ) -> SpreadRow | None:
        """The row, when a worker can run its inline phases; None for anything the loop
        must see (oversized rows, a missing ground truth, async verifiers)."""
        chars = sample.response_chars
        if sample.ground_truth is None or chars > self.section.max_response_chars:
            return None
        if too_big_inline(chars, sample.ground_truth):
            return None  # every phase in a worker, on its own (RewardEngine._whole_in_pool)
        verifier = pick(sample.data_source)
        if verifier is None or is_async(verifier):
            return None
        return SpreadRow(index, row_of(raw), sample, verifier, started, freeze(sample.ground_truth))

    async def score(
        self, rows: list[SpreadRow], done: dict[int, Result], handed: bool = False
    ) -> None:
        """Run ``rows`` in one worker task (each row's inline phases, then the check they
        leave), then finish each row: decided, or on to the pool's checks.

        The task reports before each row and each check; a row's extraction or check past
        :data:`SPREAD_STALL_S` holds no other row (:meth:`_hand_on`), and past
        reward.timeout_s of its own it is stopped: that row's ``timeout``.
        """
        pool = self.guard.pool
        assert isinstance(pool, (WorkerPool, RayWorkerPool))  # as Spreader.batch spreads
        if not handed:
            self.stats["spread"] += len(rows)
        timeout_s = self.section.timeout_s
        check_for_s = min(SPREAD_CHECK_S, timeout_s / 2)
        progress = _Progress()
        link = progress.link
        run = asyncio.ensure_future(
            pool.run(
                tasks.spread_rows,
                self.work(rows),
                self.section.verifiers.fast_paths,
                check_for_s,
                True,  # reports its progress before each row and each check
                # The engine stops a row past reward.timeout_s of its own (below); the
                # task's limit is the backstop, with room for each row to run up to
                # SPREAD_STALL_S, unnoticed, before that row
                timeout=timeout_s + check_for_s + len(rows) * SPREAD_STALL_S,
                affinity=rows[0].gold,  # the worker every row's ground truth prefers
                link=link,
                prepare=preparations(row.verifier for row in rows),
            )
        )
        owned = len(rows)  # rows[owned:] were handed to another task
        finished = 0  # rows[:finished] are finished
        later: list[asyncio.Future[None]] = []  # started at once: nothing waits for the task
        outcomes: list[tasks.SpreadOutcome] = []
        failure: BaseException | None = None
        abandoned = False  # cut, it went on to a row handed elsewhere: stopped, not awaited
        promised: _Promise | None = None  # the long check every row of its answer waits for
        try:
            while not run.done():
                if link.cut_sent:
                    abandoned = await _ran_past(run, progress, owned)
                    if abandoned:
                        break
                    if not run.done() and progress.ran_for() >= timeout_s:
                        await asyncio.sleep(0)  # its answer may wait, unread: I/O first
                        progress.link.collect()
                        if run.done() or link.replied() or progress.ran_for() < timeout_s:
                            continue  # it ended in time (the loop was busy elsewhere)
                        # the row had reward.timeout_s of its own: a timeout, its worker
                        # replaced (on Ray: its call cancelled)
                        failure = ScorerTimeout(f"timed out after {timeout_s:g}s")
                        if not link.expire(str(failure)):
                            run.cancel()
                        await asyncio.wait({run})
                        if not run.cancelled():
                            run.exception()  # the timeout just set: retrieved, ours
                        break
                    continue
                await progress.wait(run, progress.wake_in())
                if run.done() or not progress.stalled():
                    continue
                finished, owned, promised = self._hand_on(
                    rows, progress, (finished, owned), done, later
                )
                link.cut()
                await asyncio.sleep(0)  # let the handed tasks reach the pool first
            if failure is None:  # reported, then the reply's
                outcomes = progress.outcomes + ([] if abandoned else run.result())
        except (RewardkitError, ScorerTimeout) as exc:  # (a BaseException: named on its own)
            failure = exc  # a row killed its worker or ran out of time: see below
        except BaseException:  # cancelled (the batch was): the task's worker is freed
            for waiting in (run, *later):
                waiting.cancel()
            if promised is not None:  # its waiters may be other requests': the check
                promised.hand_over()  # runs again in the pool, for them
            raise
        if promised is not None:  # before its row is finished: that may wait for it
            outcome = self._checked_outcome(owned - 1, outcomes, failure, progress)
            promised.settle(outcome) if outcome is not None else promised.hand_over()
        # The worker is free: let the next task reach it before these rows are finished
        # here (a millisecond of the loop's time, per task, that it would otherwise idle).
        await asyncio.sleep(0)
        for offset in range(finished, owned):
            row = rows[offset]
            if offset < len(outcomes):
                self._finish(row, outcomes[offset], done, later)
            elif failure is not None and offset < len(progress.outcomes):
                self._finish(row, progress.outcomes[offset], done, later)  # done before it
            elif isinstance(failure, ScorerTimeout) and self._own_timeout(offset, progress):
                self._timed_out(row, progress, done)  # its own work ran out of time
            elif isinstance(failure, WorkerCrashed) and offset == progress.checking:
                self._crashed(row, progress, failure, done)  # its extraction or check
                # killed the worker (the task reported it was working on it): not again
            else:  # its task failed before this row was done: its inline phases alone
                self.stats["rows"] += 1
                later.append(asyncio.ensure_future(store(self._alone(row), row.index, done)))
        try:
            await asyncio.gather(*later)
        except BaseException:
            for waiting in later:
                waiting.cancel()
            raise

    def _hand_on(
        self,
        rows: list[SpreadRow],
        progress: _Progress,
        bounds: tuple[int, int],
        done: dict[int, Result],
        later: list[asyncio.Future[None]],
    ) -> tuple[int, int, _Promise | None]:
        """A row runs long: the rows reported done are finished, the rows after it go to
        another task, and the few done since the task last reported its outcomes (less
        than tasks.OUTCOMES_EVERY_S of work) to a third, on their own (among the rows
        after a long row, they would be handed on again at the next one). A long check
        becomes the one every row with its answer waits for (:meth:`Outcomes.promise`).
        Returns the new ``(finished, owned)`` bounds and that promise."""
        finished, owned = bounds
        checking = progress.checking
        assert checking is not None
        reported = min(len(progress.outcomes), checking)
        for offset in range(finished, reported):
            self._finish(rows[offset], progress.outcomes[offset], done, later)
        promised = None
        if progress.first is not None:  # in its check: its answer is known
            promised = self._promise(rows[checking], progress.first[0])
        for part in (rows[reported:checking], rows[checking + 1 : owned]):
            if part:
                later.append(asyncio.ensure_future(self.score(part, done, handed=True)))
        return checking, checking + 1, promised

    def _promise(self, row: SpreadRow, extracted: Extracted) -> _Promise | None:
        """The in-flight promise of ``row``'s check (None: cached or in flight already)."""
        key = CheckKey.of(row.verifier, row.gold, extracted)
        future = self.outcomes.promise(key)
        if future is None:
            return None

        def again() -> Awaitable[Outcome]:
            truth = row.sample.ground_truth
            return self.guard.in_pool(
                tasks.check,
                row.verifier,
                extracted,
                truth,
                affinity=key.gold,
                prepare=preparations([row.verifier]),
            )

        return _Promise(self.outcomes, key, future, again, self._rechecks)

    def _checked_outcome(
        self,
        offset: int,
        outcomes: list[tasks.SpreadOutcome],
        failure: BaseException | None,
        progress: _Progress,
    ) -> Outcome | None:
        """The outcome of the long check of the row at ``offset``, for its waiters (the
        row too); None when it must run again (it raised: in the pool, it fails there as
        it would alone)."""
        known = outcomes or progress.outcomes  # (a failed task: those it reported)
        if offset < len(known) and known[offset][0] == "ok":
            verdict = known[offset][1][2]
            if verdict is not None:
                return Status.OK, verdict
        if isinstance(failure, ScorerTimeout) and self._own_timeout(offset, progress):
            return Status.TIMEOUT, f"timed out after {self.section.timeout_s:g}s"
        if isinstance(failure, WorkerCrashed) and self._in_its_check(offset, progress):
            return Status.ERROR, str(failure)  # that check killed its worker: not again
        return None

    @staticmethod
    def _in_its_check(offset: int, progress: _Progress) -> bool:
        """Whether the task was checking the row at ``offset`` when it failed."""
        return offset == progress.checking and progress.first is not None

    def _crashed(
        self, row: SpreadRow, progress: _Progress, failure: BaseException, done: dict[int, Result]
    ) -> None:
        """The row whose extraction or check killed its task's worker: that error, as a
        row alone that kills its worker gets it (not run a second time alone)."""
        self.stats["rows"] += 1
        extra = None
        if progress.first is not None:  # in its check: a check, as a pooled one
            self.stats["pool"] += 1
            extra = progress.first[0].extra
        done[row.index] = self.rows.failure_result(row, Status.ERROR, f"rule: {failure}", extra)

    def _finish(
        self,
        row: SpreadRow,
        outcome: tasks.SpreadOutcome,
        done: dict[int, Result],
        later: list[asyncio.Future[None]],
    ) -> None:
        """Finish a row from its task's outcome: now, or in ``later`` (its pooled check)."""
        self.stats["rows"] += 1
        finished = self._outcome(row, outcome)
        if isinstance(finished, Result):
            done[row.index] = finished
        else:
            later.append(asyncio.ensure_future(store(finished, row.index, done)))

    def _own_timeout(self, offset: int, progress: _Progress) -> bool:
        """Whether the row at ``offset``, the one its task worked on when the task ran out
        of time, had reward.timeout_s of its own: a check always has (the task's deadline
        adds the time it starts checks in); an extraction when it began that long ago.
        Else it is scored again alone, where it has."""
        if offset != progress.checking:
            return False
        if progress.first is not None:
            return True
        began = progress.link.last_part_at  # its report, written as its extraction began
        return began is not None and time.monotonic() - began >= self.section.timeout_s

    def _timed_out(self, row: SpreadRow, progress: _Progress, done: dict[int, Result]) -> None:
        """The row its task was working on when it ran out of time, with reward.timeout_s
        of its own (:meth:`_own_timeout`): the timeout it would get alone. A check's is
        cached as a pooled check's is (rows with its answer get it at once), and counted
        as a check (``pool``)."""
        message = f"timed out after {self.section.timeout_s:g}s"
        extra = None
        if progress.first is not None:
            extracted, _ = progress.first
            extra = extracted.extra
            self.outcomes.put(
                CheckKey.of(row.verifier, row.gold, extracted), (Status.TIMEOUT, message)
            )
            self.stats["pool"] += 1
        self.stats["rows"] += 1
        done[row.index] = self.rows.failure_result(row, Status.TIMEOUT, f"rule: {message}", extra)

    def work(self, rows: list[SpreadRow]) -> list[tasks.SpreadRow]:
        """What a spread task needs of each row (with its context), with the answers the
        cache holds for it.

        At most SPREAD_KNOWN_MAX answers a task: a reference with more (a common one, late
        in a run) sends None, its rows' checks left to the pool and its cache, so that a
        task's size and the loop's work for it never grow with the cache."""
        known: dict[tuple[str, str], frozenset[Answer] | None] = {}
        budget = SPREAD_KNOWN_MAX
        work = []
        for row in rows:
            reference = (row.verifier.key, row.gold)
            if reference not in known:
                answers = self.outcomes.known(reference)
                fits = len(answers) <= budget  # counted before copied: bounded work
                budget -= len(answers) if fits else 0
                known[reference] = frozenset(answers) if fits else None
            sample = row.sample
            context = context_of(row.verifier, sample, self.section.overlong_buffer.max_resp_len)
            work.append(
                (
                    row.verifier,
                    sample.response_text,
                    sample.ground_truth,
                    row.gold,
                    known[reference],
                    context,
                )
            )
        return work

    async def _alone(self, row: SpreadRow) -> Result:
        """A row of a failed spread task, alone: the Result it gets on the loop, unless it
        is the row that ran out of time or killed its worker (then that, typed)."""
        # no check in the task: a row that fails here must fail as it would on the loop
        fast_paths = self.section.verifiers.fast_paths
        status, value = await self.guard.in_pool(
            tasks.spread_rows,
            self.work([row]),
            fast_paths,
            0,
            count=False,
            prepare=preparations([row.verifier]),
        )
        if status is not Status.OK:
            return self.rows.failure_result(row, status, f"rule: {value}")
        finished = self._outcome(row, value[0])
        return finished if isinstance(finished, Result) else await finished

    def _outcome(
        self, row: SpreadRow, outcome: tasks.SpreadOutcome
    ) -> Result | Coroutine[Any, Any, Result]:
        """A row's Result from its first phases' outcome in a worker, or the coroutine
        that checks it: the engine's, as for a row whose phases ran on the loop."""
        kind, value = outcome
        if kind == "invalid":
            return timed(failed(row.index, InvalidSampleError(value), row.raw), row.started)
        if kind == "bug":
            error = f"internal error: {value}"
            return timed(Result(row.index, Status.ERROR, error=error, row=row.raw), row.started)
        extracted, quick, checked, shared = value
        return self.rows.verdict_result(row, extracted, quick, checked, shared)
