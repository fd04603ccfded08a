"""The scoring engine: one row in, one Result out, on an asyncio event loop.

For each row the engine works out which sources apply (a rule verifier, a code
verifier, a user function, reward models, the format and overlong components),
awaits them concurrently and combines them. Nothing here ever raises for a row:
every failure becomes a typed status on that row alone.

Work is avoided before it is spread: a rule verifier's cheap phases run inline,
identical (verifier, ground truth, answer) checks share one future, and finished
verdicts stay in a bounded LRU across batches. Only what is left goes to the
supervised process pool, where it cannot hang the loop.

:class:`~rewardkit.RewardLoop` runs an engine on a background thread; the server
runs one on its own event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import operator
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Coroutine, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardkit import wiring
from rewardkit._loopwatch import BlockLog, watched
from rewardkit.config import RewardConfig
from rewardkit.custom import is_async_function, load_function, normalize_output
from rewardkit.errors import (
    InvalidSampleError,
    RewardkitError,
    ScorerError,
    ScorerTimeout,
)
from rewardkit.execution import tasks
from rewardkit.execution.pool import WorkerPool, fair_share
from rewardkit.types import BadRow, Result, Sample, Status
from rewardkit.verifiers import registry
from rewardkit.verifiers.base import (
    NO_CONTEXT,
    AsyncVerifier,
    Context,
    Extracted,
    Verdict,
    Verifier,
    extract_with,
    is_async,
)
from rewardkit.verifiers.format import format_score
from rewardkit.verifiers.overlong import MAX_RESPONSE_LENGTH, overlong_penalty

__all__ = ["RewardEngine"]


@dataclass(slots=True)
class _Piece:
    """One source's contribution to a row: a score, or a failure with its status."""

    component: str
    weight: float
    score: float | None = None
    status: Status = Status.OK
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


_Outcome = tuple[Status, Any]  # (OK, Verdict) | (TIMEOUT, message) | (ERROR, message)


class RewardEngine:
    """Scores rows on the running event loop. Create with :meth:`create`, end with :meth:`close`."""

    def __init__(self, config: RewardConfig) -> None:
        self.config = config
        self.section = config.reward
        self.pool: wiring.Pool | None = None
        self.model_scorers: list[Any] = []
        self._custom: Callable[..., Any] | None = None
        self._verifiers = wiring.make_verifiers(config.reward)
        self._inflight: dict[Any, asyncio.Future[_Outcome]] = {}
        self._cache: OrderedDict[Any, _Outcome] = OrderedDict()
        # The answers the cache holds a check of, by (verifier, ground truth): a spread
        # task leaves those to the cache instead of checking them again (_score_spread).
        self._cached_answers: dict[tuple[str, str], set[tuple[Any, Any]]] = {}
        self._length_tokenizer: Any = None
        self.blocks = BlockLog()  # who blocked the event loop, for the rows that waited
        self._abandoned: set[asyncio.Future[Any]] = set()  # past their deadline, still running
        self.stats = {
            "rows": 0,
            "cache_hits": 0,
            "deduplicated": 0,
            "quick": 0,
            "pool": 0,
            "spread": 0,  # rows whose inline phases ran in a worker (see score_into)
        }

    @classmethod
    async def create(cls, config: RewardConfig) -> RewardEngine:
        """Validate what can only be checked by loading it, then start workers and models."""
        engine = cls(config)
        try:
            await engine._start()
        except BaseException:
            await engine.close()
            raise
        return engine

    async def _start(self) -> None:
        section = self.section
        fn_cfg = section.custom_reward_function
        # Imports of user code and tokenizers can be slow: off the loop, which may be serving.
        if fn_cfg.path:
            self._custom = await asyncio.to_thread(load_function, fn_cfg.path, fn_cfg.name)
        if section.overlong_buffer.enable and section.overlong_buffer.tokenizer:
            tokenizer = section.overlong_buffer.tokenizer
            self._length_tokenizer = await asyncio.to_thread(_load_tokenizer, tokenizer)
        self.pool = wiring.make_pool(section)  # WorkerPool, or Ray actors for reward.backend=ray
        await self.pool.start()
        self.model_scorers = wiring.make_model_scorers(self.config)
        for scorer in self.model_scorers:
            await scorer.start()

    async def cancel_pending(self) -> None:
        """Cancel the shared computations rows wait on, and wait until they have stopped.

        For an interrupted run (Ctrl-C): afterwards no task still holds a worker, so
        :meth:`close` stops the pool with nothing racing it.
        """
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        await _end_abandoned(self._abandoned)
        for scorer in self.model_scorers:
            await scorer.close()
        await self._verifiers.aclose()
        if self.pool is not None:
            await self.pool.close()

    # ------------------------------------------------------------------ rows

    async def score_row(self, index: int, raw: Any) -> Result:
        """Score one row. Never raises: failures are the row's status. Sets ``elapsed_s``."""
        started = self.start_row(index, raw)
        return started if isinstance(started, Result) else await started

    def start_row(self, index: int, raw: Any) -> Result | Coroutine[Any, Any, Result]:
        """The row's Result when its phases decide it here and now, else the coroutine
        that finishes it. Never raises, like :meth:`score_row`.

        Most rows of a math batch are decided by the rule verifier's inline phases; a
        caller scoring many rows awaits (and wraps in a task) only the others, so a row
        decided inline costs no task or event-loop round trip.
        """
        started = time.perf_counter()
        self.stats["rows"] += 1
        row = _row_of(raw)
        if isinstance(raw, BadRow):
            return _timed(Result(index, Status.INVALID, error=raw.reason, row=row), started)
        try:
            sample = Sample.from_row(raw, default_data_source=self.section.default_data_source)
            pieces = self._start_pieces(sample)
        except Exception as exc:
            return _timed(_failed(index, exc, row), started)
        if isinstance(pieces, list):
            return _timed(_combine(index, pieces, row), started)
        return self._finish_row(index, pieces, row, started)

    async def _finish_row(
        self,
        index: int,
        pieces: Awaitable[list[_Piece]],
        row: Mapping[str, Any],
        started: float,
    ) -> Result:
        try:
            result = _combine(index, await pieces, row)
        except Exception as exc:
            result = _failed(index, exc, row)
        return _timed(result, started)

    async def score_many(self, rows: list[Any], start: int = 0) -> list[Result]:
        """Score rows concurrently; results in input order. The rows of one call share the
        worker pool fairly with other calls' rows (no call waits behind another's queue)."""
        done: dict[int, Result] = {}
        with fair_share():
            await self.score_into(rows, start, done)
        return [done[start + offset] for offset in range(len(rows))]

    async def score_into(self, rows: list[Any], start: int, done: dict[int, Result]) -> None:
        """Score rows concurrently, storing each Result at ``done[start + offset]`` as it
        finishes (a dict store: another thread may read ``done`` meanwhile).

        A row decided inline is stored at once; each other row becomes a task, started
        before the next row is read, so that its work reaches the pool while the rest of
        the rows are checked inline. The loop is handed back at least every
        :data:`INLINE_ROWS_PER_STEP` rows: a long batch of inline rows never keeps a
        server from answering others for more than a few milliseconds.
        """
        spread = self._spread_for(len(rows))
        async with asyncio.TaskGroup() as group:
            inline = 0
            for offset, row in enumerate(rows):
                if spread and (spreadable := self._spreadable(start + offset, row)):
                    if full := spread.add(spreadable):
                        group.create_task(self._score_spread(full, done))
                        await asyncio.sleep(0)
                    continue
                started = self.start_row(start + offset, row)
                if isinstance(started, Result):
                    done[start + offset] = started
                    inline += 1
                    if inline % INLINE_ROWS_PER_STEP:
                        continue
                else:
                    group.create_task(_store(started, start + offset, done))
                await asyncio.sleep(0)  # the new task's first step, or the loop's other work
            for rest in spread.take_all() if spread else ():
                group.create_task(self._score_spread(rest, done))

    # ------------------------------------------------------------------ spread rows
    #
    # A large batch (a trainer's step, a big HTTP request) would keep the event loop's one
    # core busy with every row's extraction and fast paths while the workers wait for the
    # few rows those leave them: the inline phases cap the whole engine's rate (more so the
    # more cores). Past SPREAD_MIN_ROWS rows they run in the workers too, a few dozen rows
    # per task, and the same task checks the rows they leave to the slow path (unless the
    # cache holds that check): a task per checked row would cost the loop and the worker
    # a round trip each, a sixth of the whole run on math outputs. What a task leaves
    # unchecked (past its SPREAD_CHECK_S, or a check that failed) goes on to the pool's
    # checks as it would from here (shared keys, cache, affinity). Same verifier code,
    # same verdicts, in another process.

    def _spread_for(self, rows: int) -> _Spread | None:
        """What gathers a batch of ``rows`` rows into spread tasks, or None: the batch is
        too small, the pool is not local, one worker would leave the loop's core idle, or
        a user function or a reward model scores the rows."""
        pool = self.pool
        if (
            rows >= SPREAD_MIN_ROWS
            and isinstance(pool, WorkerPool)
            and pool.size >= 2
            and self._custom is None
            and not self.model_scorers
        ):
            return _Spread(pool.size)
        return None

    def _spreadable(self, index: int, raw: Any) -> _SpreadRow | None:
        """The row, when a worker can run its inline phases; None for anything
        :meth:`start_row` must see (bad rows, oversized ones, async verifiers)."""
        started = time.perf_counter()
        if isinstance(raw, BadRow):
            return None
        try:
            sample = Sample.from_row(raw, default_data_source=self.section.default_data_source)
        except Exception:
            return None  # start_row reports it
        if sample.ground_truth is None or len(sample.response) > self.section.max_response_chars:
            return None
        if _too_big_inline(sample.response, sample.ground_truth):
            return None  # every phase in a worker, on its own (_whole_in_pool)
        verifier = self._verifiers.pick(sample.data_source)
        if verifier is None or is_async(verifier):
            return None
        gold = _freeze(sample.ground_truth)
        return _SpreadRow(index, _row_of(raw), sample, verifier, started, gold)

    async def _score_spread(self, rows: list[_SpreadRow], done: dict[int, Result]) -> None:
        """Run ``rows`` in one worker task (their inline phases, then the checks those
        leave), then finish each row: decided, or on to the pool's checks."""
        assert self.pool is not None
        self.stats["spread"] += len(rows)
        check_for_s = min(SPREAD_CHECK_S, self.section.timeout_s / 2)
        fast_paths = self.section.verifiers.fast_paths
        try:
            outcomes = await self.pool.run(
                tasks.spread_rows,
                self._spread_work(rows),
                fast_paths,
                check_for_s,
                # a check it starts (before check_for_s) has reward.timeout_s of its own,
                # as alone: one that would pass alone never costs the task its rows
                timeout=self.section.timeout_s + check_for_s,
                affinity=rows[0].gold,  # the worker every row's ground truth prefers
            )
        except (RewardkitError, ScorerTimeout):  # (a BaseException: named on its own)
            # a row killed its worker or ran out of time: find which, each row alone
            outcomes = [None] * len(rows)
        # The worker is free: let the next task reach it before these rows are finished
        # here (a millisecond of the loop's time, per task, that it would otherwise idle).
        await asyncio.sleep(0)
        later = []
        for row, outcome in zip(rows, outcomes, strict=True):
            try:
                finished = self._spread_result(row, outcome)
            except Exception as exc:  # a verifier's bad verdict: this row only, as inline
                finished = _failed(row.index, exc, row.raw)
            if isinstance(finished, Result):
                done[row.index] = _timed(finished, row.started)
            else:
                later.append(_store(finished, row.index, done))
        await asyncio.gather(*later)

    def _spread_work(self, rows: list[_SpreadRow]) -> list[tasks.SpreadRow]:
        """What a spread task needs of each row, with the answers the cache holds for it.

        At most SPREAD_KNOWN_MAX answers a task: a reference with more (a common one, late
        in a run) sends None, its rows' checks left to the pool and its cache, so that a
        task's size and the loop's work for it never grow with the cache."""
        known: dict[tuple[str, str], frozenset[tuple[Any, Any]] | None] = {}
        budget = SPREAD_KNOWN_MAX
        work = []
        for row in rows:
            key = (row.verifier.key, row.gold)
            if key not in known:
                answers = self._cached_answers.get(key, ())
                fits = len(answers) <= budget
                budget -= len(answers) if fits else 0
                known[key] = frozenset(answers) if fits else None
            sample = row.sample
            context = self._context(row.verifier, sample)
            work.append(
                (row.verifier, sample.response, sample.ground_truth, row.gold, known[key], context)
            )
        return work

    def _spread_result(
        self, row: _SpreadRow, outcome: tasks.SpreadOutcome | None
    ) -> Result | Coroutine[Any, Any, Result]:
        """A row's Result from its inline phases' outcome, or the coroutine that checks it."""
        self.stats["rows"] += 1
        if outcome is None:  # its batch failed: this row's inline phases alone, in a worker
            return self._spread_alone(row)
        return self._spread_outcome(row, outcome)

    async def _spread_alone(self, row: _SpreadRow) -> Result:
        """A row of a failed spread task, alone: the Result it gets on the loop, unless it
        is the row that ran out of time or killed its worker (then that, typed)."""
        # no check in the task: a row that fails here must fail as it would on the loop
        fast_paths = self.section.verifiers.fast_paths
        status, value = await self._in_pool(
            tasks.spread_rows, self._spread_work([row]), fast_paths, 0, count=False
        )
        try:
            if status is not Status.OK:
                rule = _Piece(
                    "rule", self.section.rule_weight, status=status, error=f"rule: {value}"
                )
                result = _combine(row.index, [rule, *self._shape_pieces(row.sample)], row.raw)
            else:
                finished = self._spread_outcome(row, value[0])
                if not isinstance(finished, Result):
                    return await finished  # timed by _finish_row
                result = finished
        except Exception as exc:  # a verifier's bad verdict: this row only, as inline
            result = _failed(row.index, exc, row.raw)
        return _timed(result, row.started)

    def _spread_outcome(
        self, row: _SpreadRow, outcome: tasks.SpreadOutcome
    ) -> Result | Coroutine[Any, Any, Result]:
        """A row's Result from its inline phases' outcome, as :meth:`start_row` would give."""
        kind, value = outcome
        if kind == "invalid":
            return _failed(row.index, InvalidSampleError(value), row.raw)
        if kind == "bug":
            return Result(row.index, Status.ERROR, error=f"internal error: {value}", row=row.raw)
        extracted, quick, checked, shared = value
        if quick is not None and self.section.verifiers.fast_paths:
            self.stats["quick"] += 1
            return self._spread_verdict(row, extracted, quick)
        if checked is not None:  # checked in the spread task, as the pool would have
            self.stats["deduplicated" if shared else "pool"] += 1
            self._cache_put(_check_key(row.verifier, row.gold, extracted), (Status.OK, checked))
            return self._spread_verdict(row, extracted, checked)
        pooled = self._pooled_piece(row.verifier, row.sample, extracted)
        return self._finish_row(row.index, self._gather_pieces([pooled], row.sample),
                                row.raw, row.started)  # fmt: skip

    def _spread_verdict(self, row: _SpreadRow, extracted: Extracted, verdict: Verdict) -> Result:
        rule = _verdict_piece("rule", self.section.rule_weight, verdict, extracted.extra)
        try:
            return _combine(row.index, [rule, *self._shape_pieces(row.sample)], row.raw)
        except Exception as exc:
            return _failed(row.index, exc, row.raw)

    def _start_pieces(self, sample: Sample) -> list[_Piece] | Awaitable[list[_Piece]]:
        """The row's pieces when all are decided inline, else an awaitable of them."""
        if len(sample.response) > self.section.max_response_chars:
            raise InvalidSampleError(
                f"response has {len(sample.response):,} characters, over "
                f"reward.max_response_chars={self.section.max_response_chars:,}"
            )
        rule = self._rule_job(sample)  # before the model jobs: it may raise
        models = [self._model_job(scorer, sample) for scorer in self.model_scorers]
        if rule is None and not models:
            raise InvalidSampleError(
                f"unknown data_source {sample.data_source!r}{registry.suggest(sample.data_source)}: "
                "no verifier handles it and no reward model is enabled (see README, 'Data sources')"
            )
        if isinstance(rule, _Piece) and not models:
            return [rule, *self._shape_pieces(sample)]  # decided inline: no await at all
        jobs = [rule, *models] if rule is not None else models
        return self._gather_pieces(jobs, sample)

    async def _gather_pieces(
        self, jobs: Sequence[_Piece | Awaitable[_Piece]], sample: Sample
    ) -> list[_Piece]:
        waiting = [job for job in jobs if not isinstance(job, _Piece)]
        if len(waiting) == 1:  # the usual case, one source: no task for it
            done = iter([await waiting[0]])
        else:
            done = iter(await asyncio.gather(*waiting))
        pieces = [job if isinstance(job, _Piece) else next(done) for job in jobs]
        return [*pieces, *self._shape_pieces(sample)]

    # ------------------------------------------------------------------ sources

    def _rule_job(self, sample: Sample) -> _Piece | Awaitable[_Piece] | None:
        if self._custom is not None:
            return self._custom_piece(sample)
        verifier = self._verifiers.pick(sample.data_source)
        if verifier is None:
            return None
        if is_async(verifier):  # awaited on the loop; else its phases, inline or pooled
            return self._async_verifier_piece(verifier, sample)
        return self._verifier_piece(verifier, sample)

    def _context(self, verifier: Verifier, sample: Sample) -> Context:
        """What the verifier reads of the row besides its response (its prompt's answer
        forms, whether it was truncated): :class:`~rewardkit.verifiers.base.Context`.
        verl's response length against ``overlong_buffer.max_resp_len`` tells truncation
        too, where both are given."""
        if not getattr(verifier, "reads_context", False):
            return NO_CONTEXT
        limit = self.section.overlong_buffer.max_resp_len
        return Context.of(sample.prompt, sample.extra_info, max_response_length=limit)

    def _verifier_piece(self, verifier: Verifier, sample: Sample) -> _Piece | Awaitable[_Piece]:
        """The cheap phases inline: a quick verdict is the piece; else the pooled check."""
        weight = self.section.rule_weight
        if sample.ground_truth is None:
            raise InvalidSampleError(f"data_source {sample.data_source!r} needs a ground_truth")
        if _too_big_inline(sample.response, sample.ground_truth):
            return self._whole_in_pool(verifier, sample)
        extracted = extract_with(verifier, sample.response, self._context(verifier, sample))
        # A bad ground truth raises InvalidSampleError (the row is invalid); anything else
        # is a bug of the verifier, reported as an internal error, not as bad data.
        verdict = verifier.quick_check(extracted, sample.ground_truth)
        if verdict is not None and self.section.verifiers.fast_paths:
            self.stats["quick"] += 1
            return _verdict_piece("rule", weight, verdict, extracted.extra)
        return self._pooled_piece(verifier, sample, extracted)

    async def _pooled_piece(
        self, verifier: Verifier, sample: Sample, extracted: Extracted
    ) -> _Piece:
        weight = self.section.rule_weight
        gold = _freeze(sample.ground_truth)
        key = _check_key(verifier, gold, extracted)
        status, value = await self._shared(
            key,
            lambda: self._in_pool(
                tasks.check, verifier, extracted, sample.ground_truth, affinity=gold
            ),
        )
        if status is not Status.OK:
            return _Piece(
                "rule", weight, status=status, error=f"rule: {value}", extra=extracted.extra
            )
        return _verdict_piece("rule", weight, value, extracted.extra)

    async def _whole_in_pool(self, verifier: Verifier, sample: Sample) -> _Piece:
        """A row too big to check on the event loop: every phase in a worker, under the
        hard timeout (not deduplicated or cached: its key alone would cost a full pass)."""
        weight = self.section.rule_weight
        status, value = await self._in_pool(
            tasks.verify_whole,
            verifier,
            sample.response,
            sample.ground_truth,
            self.section.verifiers.fast_paths,
            self._context(verifier, sample),
        )
        if status is not Status.OK:
            return _Piece("rule", weight, status=status, error=f"rule: {value}")
        if isinstance(value, str):
            raise InvalidSampleError(value)
        verdict, seen = value
        return _verdict_piece("rule", weight, verdict, seen)

    async def _custom_piece(self, sample: Sample) -> _Piece:
        """The user's function on this row: called every time unless custom_reward_function.cache.

        A custom function may be stochastic, stateful or remote, so rows are neither
        deduplicated nor cached by default; ``cache: true`` shares identical calls.
        """
        kwargs = self.section.function_kwargs
        args = (sample.data_source, sample.response, sample.ground_truth, dict(sample.extra_info))
        weight = self.section.rule_weight
        assert self._custom is not None
        status, value = await self._call_custom(args, kwargs)
        if status is not Status.OK:
            return _Piece("rule", weight, status=status, error=f"custom function: {value}")
        try:
            score, extra = normalize_output(value)
        except ScorerError as exc:
            return _Piece("rule", weight, status=Status.ERROR, error=str(exc))
        return _Piece("rule", weight, score=score, extra=extra)

    async def _call_custom(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Outcome:
        """One call of the user's function (async: on the loop; sync: in a worker)."""
        fn_cfg = self.section.custom_reward_function
        assert self._custom is not None
        if is_async_function(self._custom):
            custom = self._custom
            name = f"async function {fn_cfg.name!r} ({fn_cfg.path})"

            def compute() -> Awaitable[_Outcome]:
                # Watched: a coroutine that blocks the loop is named in its row's error.
                return self._guarded(
                    watched(custom(*args, **kwargs), name, self.blocks),
                    self.section.async_timeout_s,
                )
        else:

            def compute() -> Awaitable[_Outcome]:
                return self._in_pool(tasks.call_custom, fn_cfg.path, fn_cfg.name, args, kwargs)

        if not fn_cfg.cache:
            return await compute()
        key = ("custom", fn_cfg.path, fn_cfg.name, _freeze(args), _freeze(kwargs))
        return await self._shared(key, compute)

    async def _async_verifier_piece(self, verifier: AsyncVerifier, sample: Sample) -> _Piece:
        weight = self.section.rule_weight
        # A group's identical answers run their tests once (the verifier names the parts of
        # extra_info it reads, so that is all of it the key needs).
        read = {name: sample.extra_info.get(name) for name in verifier.extra_info_keys}
        key = ("async", verifier.key, _freeze(sample.ground_truth), _freeze(read), sample.response)
        status, value = await self._shared(
            key,
            lambda: self._guarded(
                verifier.ascore(sample.response, sample.ground_truth, sample.extra_info),
                self.section.async_timeout_s,
            ),
        )
        if status is not Status.OK:
            return _Piece("rule", weight, status=status, error=f"rule: {value}")
        return _verdict_piece("rule", weight, value, {})

    async def _model_job(self, scorer: Any, sample: Sample) -> _Piece:
        status, value = await self._guarded(scorer.score(sample), self.section.async_timeout_s)
        if status is not Status.OK:
            extra = getattr(value, "extra", {}) if not isinstance(value, str) else {}
            return _Piece(
                scorer.component,
                scorer.weight,
                status=status,
                error=f"{scorer.component}: {value}",
                extra=extra,
            )
        return _Piece(scorer.component, scorer.weight, score=value.score, extra=value.extra)

    def _shape_pieces(self, sample: Sample) -> list[_Piece]:
        """The format and overlong components: cheap, computed inline."""
        pieces = []
        fmt = self.section.format_reward
        if fmt.enable:
            score = format_score(sample.response, think_tag=fmt.think_tag)
            pieces.append(_Piece("format", fmt.weight, score=score))
        ob = self.section.overlong_buffer
        if ob.enable:
            assert ob.max_resp_len is not None
            length = self._response_length(sample)
            penalty = overlong_penalty(length, ob.max_resp_len, ob.len, ob.penalty_factor)
            pieces.append(_Piece("overlong", 1.0, score=penalty, extra={"overlong": penalty < 0}))
        return pieces

    def _response_length(self, sample: Sample) -> int:
        given = sample.extra_info.get("response_length")
        length = _token_count(given)
        if length is not None:
            return length
        if given is not None:  # a bad length is a data bug, not a cue to count tokens
            raise InvalidSampleError(
                "extra_info.response_length must be a whole number of tokens >= 0, got "
                f"{type(given).__name__} {str(given)[:40]} (at most 2**53)"
            )
        if self._length_tokenizer is not None:
            return len(
                self._length_tokenizer(sample.response, add_special_tokens=False)["input_ids"]
            )
        raise InvalidSampleError(
            "overlong_buffer is enabled but the row has no extra_info.response_length "
            "(and reward.overlong_buffer.tokenizer is not set)"
        )

    # ------------------------------------------------------------------ execution

    async def _in_pool(
        self,
        fn: Callable[..., Any],
        *args: Any,
        affinity: Hashable | None = None,
        count: bool = True,
    ) -> _Outcome:
        """``affinity``: rows of one prompt (its ground truth) prefer one worker, whose
        parser has already read that reference and answers like theirs. ``count``: a
        check (stats["pool"]); a spread row's extraction alone is not one."""
        assert self.pool is not None
        self.stats["pool"] += count
        timeout = self.section.timeout_s
        try:
            return Status.OK, await self.pool.run(fn, *args, timeout=timeout, affinity=affinity)
        except ScorerTimeout as exc:
            return Status.TIMEOUT, str(exc)
        except RewardkitError as exc:
            return Status.ERROR, str(exc)

    async def _guarded(self, awaitable: Awaitable[Any], timeout: float) -> _Outcome:
        """Await something that waits on I/O, with a timeout as a second guard.

        It runs as its own task, which is cancelled at the deadline but not waited for:
        a coroutine that swallows the cancellation (``except BaseException: pass`` in a
        retry loop) cannot hold its row, as it would under ``asyncio.wait_for``.
        """
        started = time.perf_counter()
        task = asyncio.ensure_future(_contained(awaitable))
        task.add_done_callback(_retrieve)  # an abandoned task's failure is not logged
        try:
            await asyncio.wait({task}, timeout=timeout)
        finally:
            if not task.done():
                task.cancel()
                self._abandoned.add(task)
                task.add_done_callback(self._abandoned.discard)
        if not task.done() or task.cancelled():
            blocked = self.blocks.during(started, time.perf_counter())
            return Status.TIMEOUT, f"timed out after {timeout:g}s" + (
                f" ({blocked})" if blocked else ""
            )
        exc = task.exception()
        if exc is None:
            return Status.OK, task.result()
        if isinstance(exc, InvalidSampleError):
            raise exc
        return Status.ERROR, exc if isinstance(exc, ScorerError) else f"{type(exc).__name__}: {exc}"

    async def _shared(self, key: Any, compute: Callable[[], Awaitable[_Outcome]]) -> _Outcome:
        """Compute each key once: join an in-flight computation, or reuse a cached outcome.

        The computation is its own task, shielded from its callers: a caller that is
        cancelled (a client that went away) does not cancel it for the others.
        """
        if key in self._cache:
            self._cache.move_to_end(key)
            self.stats["cache_hits"] += 1
            return self._cache[key]
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(compute())
            self._inflight[key] = task
            task.add_done_callback(lambda done: self._remember(key, done))
        else:
            self.stats["deduplicated"] += 1
        return await asyncio.shield(task)

    def _remember(self, key: Any, done: asyncio.Future[_Outcome]) -> None:
        self._inflight.pop(key, None)
        if done.cancelled() or done.exception() is not None:
            return
        self._cache_put(key, done.result())

    def _cache_put(self, key: Any, outcome: _Outcome) -> None:
        # Timeouts are cached too: the same pathological answer would time out again.
        # Errors are not: a crashed worker may be bad luck.
        if not self.section.cache_size or outcome[0] is Status.ERROR:
            return
        self._cache[key] = outcome
        self._cache.move_to_end(key)
        if key[0] == "verify":
            self._cached_answers.setdefault(key[1:3], set()).add(key[3:])
        if len(self._cache) > self.section.cache_size:
            old, _ = self._cache.popitem(last=False)
            if old[0] == "verify":
                answers = self._cached_answers[old[1:3]]
                answers.discard(old[3:])
                if not answers:
                    del self._cached_answers[old[1:3]]


# ---------------------------------------------------------------------- helpers


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


async def _end_abandoned(tasks: set[asyncio.Future[Any]]) -> None:
    """Stop the scorer tasks left running past their deadline, so the event loop can
    close (``asyncio.run`` waits for every task, for ever). One that swallowed its
    cancellation gets a second one; one that swallows that too has its coroutine closed."""
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=2.0)
    for task in pending:
        if not task.done() and isinstance(task, asyncio.Task):
            with contextlib.suppress(RuntimeError):  # it ignored GeneratorExit too
                task.get_coro().close()
            task.cancel()  # wakes it: the closed coroutine ends the task


def _token_count(value: Any) -> int | None:
    """A response length as given: an int (numpy's too) or a whole float (12.0 from a
    JSON writer); None for anything else (a bool, a fraction, a negative, text, more
    than MAX_RESPONSE_LENGTH)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return _in_range(int(value)) if value.is_integer() else None
    try:
        return _in_range(operator.index(value))
    except TypeError:
        return None


def _in_range(count: int) -> int | None:
    return count if 0 <= count <= MAX_RESPONSE_LENGTH else None


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def _store(result: Awaitable[Result], index: int, done: dict[int, Result]) -> None:
    done[index] = await result


def _timed(result: Result, started: float) -> Result:
    # Set on the frozen Result in place, as its own __post_init__ could: replace()
    # would copy every field of every row (measurable at thousands of rows/s).
    object.__setattr__(result, "elapsed_s", time.perf_counter() - started)
    return result


def _failed(index: int, exc: Exception, row: Mapping[str, Any]) -> Result:
    """A row's failure: invalid data, or a bug of ours that must still cost only this row."""
    if isinstance(exc, InvalidSampleError):
        return Result(index, Status.INVALID, error=str(exc), row=row)
    error = f"internal error: {type(exc).__name__}: {exc}"
    return Result(index, Status.ERROR, error=error, row=row)


def _verdict_piece(
    component: str, weight: float, verdict: Verdict, seen: Mapping[str, Any]
) -> _Piece:
    return _Piece(component, weight, score=float(verdict.score), extra={**seen, **verdict.extra})


def _combine(index: int, pieces: list[_Piece], row: Mapping[str, Any]) -> Result:
    """Weighted sum of the components; the first failed component fails the row."""
    components = {p.component: p.score for p in pieces if p.score is not None}
    extra: dict[str, Any] = {}
    for piece in pieces:
        extra.update(piece.extra)
    failed = next((p for p in pieces if p.status is not Status.OK), None)
    if failed is not None:
        return Result(
            index, failed.status, error=failed.error, components=components, extra=extra, row=row
        )
    score = sum(p.weight * p.score for p in pieces if p.score is not None)
    if not math.isfinite(score):  # finite parts, huge weights: overflow fails this row only
        error = f"combined score is not finite ({score}): components {components} x weights"
        return Result(index, Status.ERROR, error=error, components=components, extra=extra, row=row)
    return Result(index, Status.OK, score=score, components=components, extra=extra, row=row)


def _row_of(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, Sample):
        return raw.to_row()
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, BadRow):
        return {}
    return {"row": repr(raw)[:200]}


SPREAD_MIN_ROWS = 64
"""A batch of at least this many rows runs its inline phases in the workers (see score_into)."""
SPREAD_ROWS = 32
"""Rows per spread task: a few milliseconds of extraction, one pipe write."""
SPREAD_CHARS = 48_000  # responses per task: below the pool's inline send size, with room
SPREAD_KNOWN_MAX = 256
"""Cached answers a spread task carries at most (see _spread_work)."""
SPREAD_CHECK_S = 0.25
"""A spread task starts checks only this long (a check of a math row takes about 3 ms):
past it, the rows it has not checked go to the pool one by one, where requesters share
the workers fairly."""


@dataclass(slots=True)
class _SpreadRow:
    index: int
    raw: Mapping[str, Any]
    sample: Sample
    verifier: Verifier
    started: float
    gold: str  # the ground truth's key (_freeze): the checks' and the pool's affinity's


class _Spread:
    """A batch's rows gathered into spread tasks, in input order, one open task per
    worker: a row joins the task of the worker its ground truth prefers (the pool's
    affinity), so that the rows of a prompt, checked in their task, meet a parser that
    has read its reference, as they would in the pool."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.open: list[list[_SpreadRow]] = [[] for _ in range(workers)]
        self.chars = [0] * workers

    def add(self, row: _SpreadRow) -> list[_SpreadRow] | None:
        """Add a row: the task it fills, if any."""
        slot = hash(row.gold) % self.workers
        self.open[slot].append(row)
        self.chars[slot] += len(row.sample.response)
        if len(self.open[slot]) < SPREAD_ROWS and self.chars[slot] < SPREAD_CHARS:
            return None
        full, self.open[slot], self.chars[slot] = self.open[slot], [], 0
        return full

    def take_all(self) -> list[list[_SpreadRow]]:
        """The tasks still open, at the end of the batch."""
        rest = [rows for rows in self.open if rows]
        self.open = [[] for _ in range(self.workers)]
        return rest


INLINE_ROWS_PER_STEP = 64
"""Rows decided inline between two hand-backs of the event loop (about 4 ms of work)."""

# Past these sizes a rule verifier's inline phases (extraction, fast paths) could hold the
# event loop for milliseconds to seconds (a ground truth of 300,000 items: 4 s): such rows
# run all their phases in a worker instead, under reward.timeout_s.
INLINE_MAX_RESPONSE_CHARS = 100_000
INLINE_MAX_GROUND_TRUTH = 4_096  # characters, plus 16 per list or dict item


def _too_big_inline(response: str, ground_truth: Any) -> bool:
    if len(response) > INLINE_MAX_RESPONSE_CHARS:
        return True
    budget = INLINE_MAX_GROUND_TRUTH
    stack = [ground_truth]
    while stack:  # stops as soon as the budget is spent: bounded work on any input
        value = stack.pop()
        if isinstance(value, str | bytes):
            budget -= len(value)
        elif isinstance(value, Collection):  # lists, dicts, numpy arrays from parquet
            try:
                budget -= 16 * len(value)
            except TypeError:  # a 0-d array
                budget -= 16
                continue
            if budget >= 0:
                stack.extend(value.items() if isinstance(value, Mapping) else value)
        else:
            budget -= 16
        if budget < 0:
            return True
    return False


def _check_key(verifier: Verifier, gold: str, extracted: Extracted) -> tuple[Any, ...]:
    """A check's key: the source is part of it, as a fallback passage and a box holding
    the same text are read differently (math-verify's extraction against the box's content)."""
    return ("verify", verifier.key, gold, extracted.answer, extracted.extra.get("source"))


def _freeze(value: Any) -> str:
    """A hashable, order-independent key for JSON-like values."""
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _load_tokenizer(path: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True)
