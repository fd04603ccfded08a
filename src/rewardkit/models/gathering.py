"""Gathering a GRPO group's rows for a scorer that judges them together (the group judge).

A row's group is ``extra_info.uid``, else ``extra_info.group``
(:data:`rewardkit.groups.GROUP_KEYS`), else its data_source and prompt. How many rows
make the group depends on how the rows came:

* a batch call (``RewardLoop.score``/``stream``, the CLI, ``/v1/score``, a trainer's
  batch): the engine wraps the call in :func:`together`, which counts each group's
  rows in it. A group is judged as soon as its rows are in, whatever the other groups
  are doing: there is no barrier across groups.
* a per-row call (``RewardLoop.ascore``, a call of one row as verl's per-sample
  ``compute_score`` makes), or a batch call that
  holds fewer of a group's rows than its size (one-row requests to the reward server):
  the row names the size (``extra_info.group_size``, else
  ``reward_model.judge.group.size``), and its group's rows, from any calls, wait up to
  ``gather_timeout_s`` for each other.

A row that fails before it reaches the judge (a missing ground truth for its rule
verifier, a response over ``max_response_chars``) is :func:`left_out`, so its group
does not wait for it. Rows that wait past the timeout fail typed: never a hang, never
a judgement of part of a group.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar, runtime_checkable

from rewardkit.errors import ScorerError
from rewardkit.groups import group_id
from rewardkit.models.base import ModelScore
from rewardkit.types import Sample

__all__ = [
    "Batch",
    "GatheringScorer",
    "Group",
    "batch_of",
    "current_batch",
    "gathers",
    "group_of",
    "left_out",
    "together",
    "within",
]

T = TypeVar("T")

Outcome = ModelScore | BaseException
JudgeGroup = Callable[[list[Sample]], Awaitable[list[Outcome]]]


def group_of(sample: Sample) -> Hashable:
    """The group ``sample`` belongs to: its extra_info's uid or group, else its prompt."""
    named = group_id(sample.extra_info)
    if named is not None:
        return ("id", named)
    return ("prompt", sample.data_source, sample.prompt_text)


@runtime_checkable
class GatheringScorer(Protocol):
    """A model scorer that scores a row only with the rest of its group."""

    gathers_groups: bool

    def withdraw(self, sample: Sample) -> None:
        """``sample`` will never be scored: its group stops waiting for it."""
        ...


def gathers(scorers: Iterable[Any]) -> bool:
    """Whether any of ``scorers`` gathers groups (then rows of a call go in together)."""
    return any(getattr(s, "gathers_groups", False) for s in scorers)


def left_out(scorers: Iterable[Any], parsed: Sample | Exception) -> None:
    """Tell the gathering scorers that the row ``parsed`` failed before reaching them."""
    if not isinstance(parsed, Sample):
        return
    for scorer in scorers:
        if isinstance(scorer, GatheringScorer) and scorer.gathers_groups:
            scorer.withdraw(parsed)


class Batch:
    """The rows of one call: how many each group has, and the groups being gathered."""

    def __init__(self, counts: Counter[Hashable]) -> None:
        self.counts = counts
        self.groups: dict[Hashable, Group] = {}

    @classmethod
    def of(cls, rows: Iterable[Any], parse: Callable[[Any], Sample | Exception]) -> Batch:
        """Count the groups of ``rows``; a row that does not parse belongs to none (it fails
        before any scorer sees it)."""
        counts: Counter[Hashable] = Counter()
        for raw in rows:
            parsed = parse(raw)
            if isinstance(parsed, Sample):
                counts[group_of(parsed)] += 1
        return cls(counts)


_BATCH: ContextVar[Batch | None] = ContextVar("rewardkit_group_batch", default=None)


def current_batch() -> Batch | None:
    """The batch call the running row belongs to; None on a per-row call."""
    return _BATCH.get()


def batch_of(
    rows: list[Any], parse: Callable[[Any], Sample | Exception], scorers: Iterable[Any]
) -> Batch | None:
    """The batch ``rows`` make for ``scorers``: None without a gathering scorer, and for a
    call of one row, which is a per-row call (verl's per-sample ``compute_score`` sends
    each row alone and waits for it): a group of one judged alone would be a silent
    mistake, where a per-row call asks for the group's size."""
    if len(rows) < 2 or not gathers(scorers):
        return None
    return Batch.of(rows, parse)


@contextmanager
def together(
    rows: list[Any], parse: Callable[[Any], Sample | Exception], scorers: Iterable[Any]
) -> Iterator[None]:
    """Score ``rows`` as one batch call: the tasks started inside see its groups. Does
    nothing when :func:`batch_of` makes none, or inside a batch already (:func:`within`)."""
    batch = None if _BATCH.get() is not None else batch_of(rows, parse, scorers)
    if batch is None:
        yield
        return
    token = _BATCH.set(batch)
    try:
        yield
    finally:
        _BATCH.reset(token)


async def within(batch: Batch, work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` (a row of a batch scored row by row, as ``stream`` does) in ``batch``.
    Meant as a task's own coroutine: the batch is set in that task's context only."""
    _BATCH.set(batch)
    return await work


class Group:
    """One group being gathered: members join with their sample and get a future of their
    score; once ``expected`` have come (or left), ``judge`` scores them all at once."""

    def __init__(
        self,
        expected: int,
        judge: JudgeGroup,
        *,
        timeout_s: float,
        timeout_setting: str,
        forget: Callable[[], None],
        tasks: set[asyncio.Task[None]],
        failure: BaseException | None = None,
    ) -> None:
        self.expected = expected
        self.members: list[tuple[Sample, asyncio.Future[ModelScore]]] = []
        self._judge = judge
        self._forget = forget
        self._tasks = tasks
        self._failure = failure
        self._started = False
        self._setting = (timeout_setting, timeout_s)
        loop = asyncio.get_running_loop()
        self._timer = None if failure else loop.call_later(timeout_s, self._expire)

    def join(self, sample: Sample) -> asyncio.Future[ModelScore]:
        """Add ``sample``; its future holds its score (or its failure) once judged."""
        future: asyncio.Future[ModelScore] = asyncio.get_running_loop().create_future()
        if self._failure is not None:  # the whole group is refused: each row says why
            future.set_exception(self._failure)
            return future
        self.members.append((sample, future))
        self._maybe_start()
        return future

    def withdraw(self) -> None:
        """One expected row will never come."""
        self.expected -= 1
        self._maybe_start()

    def abandon(self) -> None:
        """The scorer is closing: stop the clock, and no member waits any longer."""
        self._started = True
        if self._timer is not None:
            self._timer.cancel()
        self._forget()
        for _, future in self.members:
            future.cancel()

    def _maybe_start(self) -> None:
        if self._started or self._failure is not None or len(self.members) < self.expected:
            return
        self._started = True
        if self._timer is not None:
            self._timer.cancel()
        self._forget()  # rows of the same group that come later form a new one
        if self.members:
            task = asyncio.get_running_loop().create_task(self._run())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self) -> None:
        samples = [sample for sample, _ in self.members]
        try:
            outcomes = await self._judge(samples)
        except Exception as exc:  # a failure of the whole request: every member's
            outcomes = [exc] * len(samples)
        except BaseException:  # cancelled (the scorer is closing): no member waits on
            for _, future in self.members:
                future.cancel()
            raise
        for (_, future), outcome in zip(self.members, outcomes, strict=True):
            if future.done():  # its row stopped waiting (its own deadline)
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    def _expire(self) -> None:
        if self._started:
            return
        self._started = True
        self._forget()
        setting, timeout_s = self._setting
        failure = ScorerError(
            f"incomplete group: {len(self.members)} of {self.expected} rows arrived within "
            f"{setting}={timeout_s:g}s (a per-row caller must send a group's rows concurrently; "
            "a batch call judges the rows it holds)"
        )
        for _, future in self.members:
            if not future.done():
                future.set_exception(failure)
