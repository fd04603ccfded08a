"""The scoring engine: one row in, one Result out, on an asyncio event loop.

For each row the engine works out which sources apply (a rule verifier, a code
verifier, a user function, reward models, the format and overlong components),
awaits them concurrently and combines them. Nothing here ever raises for a row:
every failure becomes a typed status on that row alone.

Work is avoided before it is spread: a rule verifier's cheap phases run inline,
identical (verifier, ground truth, answer) checks share one future, and finished
verdicts stay in a bounded LRU across batches (:mod:`~rewardkit.scoring.outcomes`).
Only what is left goes to the supervised process pool, where it cannot hang the loop
(:mod:`~rewardkit.scoring.guard`). A large batch runs its inline phases in the workers
too (:mod:`~rewardkit.scoring.spread`), each row's outcome coming back to the same
:meth:`RewardEngine.verdict_result` an inline row takes.

:class:`~rewardkit.RewardLoop` runs an engine on a background thread; the server
runs one on its own event loop.
"""

from __future__ import annotations

import asyncio
import operator
import time
from collections.abc import Awaitable, Coroutine, Mapping, Sequence
from typing import Any

from rewardkit import wiring
from rewardkit._fair import fair_share
from rewardkit.config import RewardConfig
from rewardkit.custom import load_function
from rewardkit.errors import InvalidSampleError
from rewardkit.execution.pool import WorkerPool
from rewardkit.models import gathering
from rewardkit.scoring import tasks
from rewardkit.scoring.guard import CustomFunction, Guard
from rewardkit.scoring.outcomes import AsyncKey, CheckKey, Outcome, Outcomes
from rewardkit.scoring.rows import (
    Piece,
    combine,
    context_of,
    failed,
    first_phases,
    freeze,
    quick_decides,
    row_of,
    store,
    timed,
    too_big_inline,
    verdict_piece,
)
from rewardkit.scoring.spread import Spreader, SpreadRow
from rewardkit.shaping.format import format_score
from rewardkit.shaping.overlong import MAX_RESPONSE_LENGTH, overlong_penalty
from rewardkit.shaping.rollout import PRESCORED, num_turns, prescored, rollout_rewards
from rewardkit.types import FIELD_HINTS, BadRow, Result, Sample, Status
from rewardkit.verifiers import registry
from rewardkit.verifiers.base import (
    AsyncVerifier,
    Context,
    Extracted,
    Verdict,
    Verifier,
    is_async,
    preparations,
)

__all__ = ["INLINE_ROWS_PER_STEP", "RewardEngine"]

INLINE_ROWS_PER_STEP = 64
"""Rows decided inline between two hand-backs of the event loop (about 4 ms of work)."""


class RewardEngine:
    """Scores rows on the running event loop. Create with :meth:`create`, end with :meth:`close`."""

    def __init__(self, config: RewardConfig) -> None:
        self.config = config
        self.section = config.reward
        self.pool: wiring.Pool | None = None
        self.model_scorers: list[Any] = []
        self._custom: CustomFunction | None = None
        self._verifiers = wiring.make_verifiers(config.reward)
        self._length_tokenizer: Any = None
        self.stats = {
            "rows": 0,
            "cache_hits": 0,
            "deduplicated": 0,
            "quick": 0,
            "pool": 0,
            "spread": 0,  # rows whose inline phases ran in a worker (scoring.spread)
        }
        self.outcomes = Outcomes(self.section.cache_size, self.stats)
        self.guard = Guard(self.section.timeout_s, self.stats)
        self.spreader = Spreader(self.section, self.stats, self.guard, self.outcomes, self)

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
            fn = await asyncio.to_thread(load_function, fn_cfg.path, fn_cfg.name)
            self._custom = CustomFunction(fn, section, self.guard, self.outcomes)
        if section.overlong_buffer.enable and section.overlong_buffer.tokenizer:
            tokenizer = section.overlong_buffer.tokenizer
            self._length_tokenizer = await asyncio.to_thread(_load_tokenizer, tokenizer)
        # WorkerPool, or Ray actors for reward.backend=ray
        self.pool = self.guard.pool = wiring.make_pool(section)
        if isinstance(self.pool, WorkerPool):  # rows decided inline need no worker: no wait
            await self.pool.start(wait=False)
        else:
            await self.pool.start()
        self.model_scorers = wiring.make_model_scorers(self.config)
        for scorer in self.model_scorers:
            await scorer.start()
        routers = [s for s in self.model_scorers if getattr(s, "router_address", None)]
        if self._custom is not None and routers:  # rewardkit launched the RM's servers
            self._custom.give_router(routers[0].router_address, routers[0].tokenizer)

    async def cancel_pending(self) -> None:
        """Cancel the shared computations rows wait on, and wait until they have stopped.

        For an interrupted run (Ctrl-C): afterwards no task still holds a worker, so
        :meth:`close` stops the pool with nothing racing it.
        """
        pending = self.outcomes.pending()
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def close(self) -> None:
        await self.guard.close()
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
        return self._start_parsed(index, raw, self._parse(raw), started)

    def _parse(self, raw: Any) -> Sample | Exception:
        """The row's Sample, or why it has none (its Result says so): parsed once a row."""
        if isinstance(raw, BadRow):
            return InvalidSampleError(raw.reason)
        try:
            return Sample.from_row(raw, default_data_source=self.section.default_data_source)
        except Exception as exc:
            return exc

    def _start_parsed(
        self, index: int, raw: Any, parsed: Sample | Exception, started: float
    ) -> Result | Coroutine[Any, Any, Result]:
        self.stats["rows"] += 1
        row = row_of(raw)
        if isinstance(parsed, Exception):
            return timed(failed(index, parsed, row), started)
        try:
            pieces = self._start_pieces(parsed)
        except Exception as exc:
            gathering.left_out(self.model_scorers, parsed)  # its group stops waiting for it
            return timed(failed(index, exc, row), started)
        return self._result(index, pieces, row, started)

    def _result(
        self,
        index: int,
        pieces: list[Piece] | Awaitable[list[Piece]],
        row: Mapping[str, Any],
        started: float,
    ) -> Result | Coroutine[Any, Any, Result]:
        """The Result of a row's pieces, every row's last step: now when they are all
        decided, else the coroutine that awaits them."""
        if not isinstance(pieces, list):
            return self._finish_row(index, pieces, row, started)
        try:
            return timed(combine(index, pieces, row), started)
        except Exception as exc:
            return timed(failed(index, exc, row), started)

    async def _finish_row(
        self,
        index: int,
        pieces: Awaitable[list[Piece]],
        row: Mapping[str, Any],
        started: float,
    ) -> Result:
        try:
            result = combine(index, await pieces, row)
        except Exception as exc:
            result = failed(index, exc, row)
        return timed(result, started)

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
        server from answering others for more than a few milliseconds. A large batch's
        rows go to spread tasks (:mod:`~rewardkit.scoring.spread`) where they can; each row
        is parsed once, whichever way it goes. The rows are one batch call for a scorer that
        judges a group's rows together (:func:`rewardkit.models.gathering.together`, which
        parses them once more to count their groups).
        """
        with gathering.together(rows, self._parse, self.model_scorers):
            await self._score_into(rows, start, done)

    async def _score_into(self, rows: list[Any], start: int, done: dict[int, Result]) -> None:
        rule_only = self._custom is None and not self.model_scorers
        batch = self.spreader.batch(len(rows), rule_only)
        pick = self._verifiers.pick
        async with asyncio.TaskGroup() as group:
            inline = 0
            for offset, raw in enumerate(rows):
                index = start + offset
                if batch is None:
                    started = self.start_row(index, raw)
                else:
                    began = time.perf_counter()
                    parsed = self._parse(raw)
                    if (
                        isinstance(parsed, Sample)
                        and PRESCORED not in parsed.extra_info  # scored already: not spread
                        and (spread := self.spreader.spreadable(index, raw, parsed, began, pick))
                    ):
                        if full := batch.add(spread):
                            group.create_task(self.spreader.score(full, done))
                            await asyncio.sleep(0)
                        continue
                    started = self._start_parsed(index, raw, parsed, began)
                if isinstance(started, Result):
                    done[index] = started
                    inline += 1
                    if inline % INLINE_ROWS_PER_STEP:
                        continue
                else:
                    group.create_task(store(started, index, done))
                await asyncio.sleep(0)  # the new task's first step, or the loop's other work
            for rest in batch.take_all() if batch else ():
                group.create_task(self.spreader.score(rest, done))

    # ------------------------------------------------------------------ a rule verifier's row
    #
    # Inline rows and spread rows (whose first phases ran in a worker) take the same steps
    # from here: _rule_piece (the verdict, or the pooled check), then _with_shapes and
    # _result. fast_paths is decided in one place, rows.quick_decides.

    def verdict_result(
        self,
        row: SpreadRow,
        extracted: Extracted,
        quick: Verdict | None,
        checked: Verdict | None = None,
        shared: bool = False,
    ) -> Result | Coroutine[Any, Any, Result]:
        """A spread row's Result from its first phases (and the check its task did, if
        any), as for a row whose phases ran here."""
        sample = row.sample
        try:
            rule = self._rule_piece(
                row.verifier, sample, row.gold, extracted, quick, checked, shared
            )
            pieces = self._with_shapes([rule], sample)
        except Exception as exc:  # a verifier's bad verdict: this row only, as inline
            return timed(failed(row.index, exc, row.raw), row.started)
        return self._result(row.index, pieces, row.raw, row.started)

    def failure_result(
        self, row: SpreadRow, status: Status, error: str, extra: Mapping[str, Any] | None = None
    ) -> Result:
        """A spread row's Result when its rule verifier failed in a worker (``extra``: what
        its extraction saw, when it got that far)."""
        rule = Piece(
            "rule", self.section.rule_weight, status=status, error=error, extra=extra or {}
        )
        try:
            pieces = self._with_shapes([rule], row.sample)
        except Exception as exc:
            return timed(failed(row.index, exc, row.raw), row.started)
        result = self._result(row.index, pieces, row.raw, row.started)
        assert isinstance(result, Result)  # every piece decided
        return result

    def _rule_piece(
        self,
        verifier: Verifier,
        sample: Sample,
        gold: str | None,
        extracted: Extracted,
        quick: Verdict | None,
        checked: Verdict | None = None,
        shared: bool = False,
    ) -> Piece | Awaitable[Piece]:
        """The rule piece from the first phases: the quick verdict when it decides
        (rows.quick_decides), a check a spread task did (cached as a pooled one is), else
        the check in the pool."""
        weight = self.section.rule_weight
        if quick is not None and quick_decides(verifier, quick, self.section.verifiers.fast_paths):
            self.stats["quick"] += 1
            return verdict_piece("rule", weight, quick, extracted.extra)
        key = CheckKey.of(
            verifier, freeze(sample.ground_truth) if gold is None else gold, extracted
        )
        if checked is not None:  # checked in the spread task, as the pool would have
            self.stats["deduplicated" if shared else "pool"] += 1
            self.outcomes.put(key, (Status.OK, checked))
            return verdict_piece("rule", weight, checked, extracted.extra)
        cached = self.outcomes.cached(key)
        if cached is not None:  # decided now: no coroutine for the row
            return self._checked_piece(cached, extracted)
        return self._pooled_piece(verifier, sample, extracted, key)

    def _with_shapes(
        self, jobs: Sequence[Piece | Awaitable[Piece]], sample: Sample
    ) -> list[Piece] | Awaitable[list[Piece]]:
        """The row's pieces with its shaping ones, or an awaitable of them."""
        if len(jobs) == 1:  # the usual case, one source
            (job,) = jobs
            if isinstance(job, Piece):  # decided inline: no await at all
                return [job, *self._shape_pieces(sample)]
            return self._gather_pieces(jobs, sample)
        decided = [job for job in jobs if isinstance(job, Piece)]
        if len(decided) == len(jobs):
            return [*decided, *self._shape_pieces(sample)]
        return self._gather_pieces(jobs, sample)

    def _start_pieces(self, sample: Sample) -> list[Piece] | Awaitable[list[Piece]]:
        """The row's pieces when all are decided inline, else an awaitable of them."""
        given = prescored(sample.extra_info)
        if given is not None:  # an agent loop scored it: its score, not ours (shaping.rollout)
            rollout_rewards(sample.extra_info)  # not added, but malformed ones are invalid here too
            return [
                Piece("prescored", 1.0, score=given, extra={"prescored": 1}),
                *self._turns(sample),
            ]
        chars = sample.response_chars
        if chars > self.section.max_response_chars:
            what = "response" if isinstance(sample.response, str) else "response (a trajectory)"
            raise InvalidSampleError(
                f"{what} has {chars:,} characters, over "
                f"reward.max_response_chars={self.section.max_response_chars:,}"
            )
        rule = self._rule_job(sample)  # before the model jobs: it may raise
        models = [self._model_job(scorer, sample) for scorer in self.model_scorers]
        if rule is None and not models:
            raise InvalidSampleError(
                f"unknown data_source {sample.data_source!r}{registry.suggest(sample.data_source)}: "
                "no verifier handles it and no reward model is enabled (see README, 'Data sources')"
            )
        return self._with_shapes([rule, *models] if rule is not None else models, sample)

    async def _gather_pieces(
        self, jobs: Sequence[Piece | Awaitable[Piece]], sample: Sample
    ) -> list[Piece]:
        waiting = [job for job in jobs if not isinstance(job, Piece)]
        if len(waiting) == 1:  # the usual case, one source: no task for it
            done = iter([await waiting[0]])
        else:
            done = iter(await asyncio.gather(*waiting))
        pieces = [job if isinstance(job, Piece) else next(done) for job in jobs]
        return [*pieces, *self._shape_pieces(sample)]

    # ------------------------------------------------------------------ sources

    def _rule_job(self, sample: Sample) -> Piece | Awaitable[Piece] | None:
        if self._custom is not None:
            return self._custom.piece(sample)
        verifier = self._verifiers.pick(sample.data_source)
        if verifier is None:
            return None
        if is_async(verifier):  # awaited on the loop; else its phases, inline or pooled
            return self._async_verifier_piece(verifier, sample)
        return self._verifier_piece(verifier, sample)

    def _verifier_piece(self, verifier: Verifier, sample: Sample) -> Piece | Awaitable[Piece]:
        """The cheap phases inline: a quick verdict is the piece; else the pooled check."""
        if sample.ground_truth is None:
            raise InvalidSampleError(
                f"data_source {sample.data_source!r} needs a ground_truth (missing or null): "
                + FIELD_HINTS["ground_truth"]
            )
        if too_big_inline(sample.response_chars, sample.ground_truth):
            return self._whole_in_pool(verifier, sample)
        context = self._context(verifier, sample)
        extracted, quick = first_phases(
            verifier, sample.response_text, sample.ground_truth, context
        )
        return self._rule_piece(verifier, sample, None, extracted, quick)

    def _context(self, verifier: Verifier, sample: Sample) -> Context:
        """The row's :class:`~rewardkit.verifiers.base.Context` for ``verifier``
        (:func:`~rewardkit.scoring.rows.context_of`)."""
        return context_of(verifier, sample, self.section.overlong_buffer.max_resp_len)

    async def _pooled_piece(
        self, verifier: Verifier, sample: Sample, extracted: Extracted, key: CheckKey
    ) -> Piece:
        outcome = await self.outcomes.shared(
            key,
            lambda: self.guard.in_pool(
                tasks.check,
                verifier,
                extracted,
                sample.ground_truth,
                affinity=key.gold,
                prepare=preparations([verifier]),
            ),
        )
        return self._checked_piece(outcome, extracted)

    def _checked_piece(self, outcome: Outcome, extracted: Extracted) -> Piece:
        """The rule piece from a check's outcome (its verdict, or its failure)."""
        weight = self.section.rule_weight
        status, value = outcome
        if status is not Status.OK:
            return Piece(
                "rule", weight, status=status, error=f"rule: {value}", extra=extracted.extra
            )
        return verdict_piece("rule", weight, value, extracted.extra)

    async def _whole_in_pool(self, verifier: Verifier, sample: Sample) -> Piece:
        """A row too big to check on the event loop: every phase in a worker, under the
        hard timeout (not deduplicated or cached: its key alone would cost a full pass)."""
        weight = self.section.rule_weight
        status, value = await self.guard.in_pool(
            tasks.verify_whole,
            verifier,
            sample.response_text,
            sample.ground_truth,
            self.section.verifiers.fast_paths,
            self._context(verifier, sample),
            prepare=preparations([verifier]),
        )
        if status is not Status.OK:
            return Piece("rule", weight, status=status, error=f"rule: {value}")
        if isinstance(value, str):
            raise InvalidSampleError(value)
        verdict, seen = value
        return verdict_piece("rule", weight, verdict, seen)

    async def _async_verifier_piece(self, verifier: AsyncVerifier, sample: Sample) -> Piece:
        weight = self.section.rule_weight
        # A group's identical answers run their tests once (the verifier names the parts of
        # extra_info it reads, so that is all of it the key needs).
        read = {name: sample.extra_info.get(name) for name in verifier.extra_info_keys}
        prompt = sample.prompt_text if verifier.reads_prompt else ""
        key = AsyncKey(
            verifier.key, freeze(sample.ground_truth), freeze(read), prompt, sample.response_key
        )
        response = sample.response_text
        status, value = await self.outcomes.shared(
            key,
            lambda: self.guard.awaited(
                verifier.ascore(response, sample.ground_truth, sample.extra_info, prompt),
                self.section.async_timeout_s,  # on its runs; the wait for a slot apart:
                self.section.sandbox_fusion.queue_timeout_s,
                "reward.sandbox_fusion.queue_timeout_s",
            ),
        )
        if status is not Status.OK:
            return Piece("rule", weight, status=status, error=f"rule: {value}")
        return verdict_piece("rule", weight, value, {})

    async def _model_job(self, scorer: Any, sample: Sample) -> Piece:
        status, value = await self.guard.awaited(scorer.score(sample), self.section.async_timeout_s)
        if status is not Status.OK:
            extra = getattr(value, "extra", {}) if not isinstance(value, str) else {}
            return Piece(
                scorer.component,
                scorer.weight,
                status=status,
                error=f"{scorer.component}: {value}",
                extra=extra,
            )
        extra = value.extra
        if value.tokens is not None:  # an API's token use, per component (metrics, extra)
            extra = {**extra, f"{scorer.component}/tokens": value.tokens}
        return Piece(scorer.component, scorer.weight, score=value.score, extra=extra)

    def _shape_pieces(self, sample: Sample) -> list[Piece]:
        """The format and overlong components: cheap, computed inline."""
        pieces = []
        fmt = self.section.format_reward
        if fmt.enable:
            score = format_score(sample.response_text, think_tag=fmt.think_tag)
            pieces.append(Piece("format", fmt.weight, score=score))
        ob = self.section.overlong_buffer
        if ob.enable:
            assert ob.max_resp_len is not None
            length = self._response_length(sample)
            penalty = overlong_penalty(length, ob.max_resp_len, ob.len, ob.penalty_factor)
            extra: dict[str, Any] = {"overlong": penalty < 0}
            if ob.log:  # verl's overlong_buffer_cfg.log: the penalty itself, for its metrics
                extra["overlong_reward"] = penalty
            pieces.append(Piece("overlong", 1.0, score=penalty, extra=extra))
        weight = self.section.rollout_reward_weight
        for component, reward in rollout_rewards(sample.extra_info).items():
            pieces.append(Piece(component, weight, score=reward))
        return [*pieces, *self._turns(sample)]

    def _turns(self, sample: Sample) -> list[Piece]:
        """An agent loop's turn count, as ``extra.num_turns`` (a piece with no score)."""
        turns = num_turns(sample.extra_info)
        return [] if turns is None else [Piece("num_turns", 0.0, extra={"num_turns": turns})]

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
            if not isinstance(sample.response, str):
                raise InvalidSampleError(
                    "overlong_buffer needs extra_info.response_length for a trajectory response: "
                    "reward.overlong_buffer.tokenizer counts the tokens of a text, and a "
                    "trajectory's policy tokens (without the tool results) are the trainer's count"
                )
            return len(
                self._length_tokenizer(sample.response, add_special_tokens=False)["input_ids"]
            )
        raise InvalidSampleError(
            "overlong_buffer is enabled but the row has no extra_info.response_length "
            "(and reward.overlong_buffer.tokenizer is not set)"
        )


# ---------------------------------------------------------------------- helpers


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


def _load_tokenizer(path: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True)
