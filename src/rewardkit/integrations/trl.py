"""rewardkit as a TRL reward function (``GRPOTrainer(reward_funcs=...)``)::

    from rewardkit.integrations.trl import reward_func
    trainer = GRPOTrainer(model=..., reward_funcs=[reward_func(num_workers=2, timeout_s=5)], ...)

The dataset supplies the Sample fields as columns: ``data_source`` (or
``default_data_source`` in the config), ``ground_truth`` (or verl's ``reward_model``
column), optionally ``extra_info`` and ``id``. Prompts and completions may be plain
strings or conversations (lists of ``{"role", "content"}`` messages). A conversational
completion (TRL's tool-calling GRPO included: assistant messages with ``tool_calls``,
``tool`` results) is passed through as a trajectory response: text verifiers read its
last assistant message's text, ``tool_call`` reads its calls.

A row that fails to score (status ``timeout``, ``error`` or ``invalid``) is returned
as ``None`` (``reward.on_failure: drop``, the default here): TRL turns None into NaN
and, from TRL 1.6.0 (rewardkit's declared floor, ``trl>=1.6``), leaves a row that
every reward function left unscored out of its group's baseline and gives it zero
advantage (before 1.6 such a row counted as 0, a made-up wrong answer). So a failure
is neither a wrong answer nor invisible. ``reward.on_failure: fill`` gives it
``reward.fill_score``; ``raise`` stops the step with the failed rows named. Each call
also logs ``rewardkit/<status>_frac`` metrics, ``rewardkit/component/<name>/mean``
for each component the rows carry (over the rows that have it; TRL averages a
``log_metric`` value over each logging step), ``rewardkit/raw_score/mean`` when
``reward.aggregation`` or ``reward.scale_rewards`` rescored the batch, and a
``rewardkit_status`` column in TRL's completions table.

:func:`areward_func` is the same function as a coroutine function: TRL awaits async
reward functions concurrently with each other, so rewardkit's scoring overlaps other
async rewards (an LLM judge, a remote check) instead of blocking the step.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import math
import re
import warnings
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from rewardkit.aggregate import RAW_SCORE_KEY, needs_groups
from rewardkit.config import ConfigSource, RewardConfig, check_runnable, load_config
from rewardkit.integrations._backend import (
    Backend,
    FailurePolicy,
    check_server_url,
    get_backend,
    plain,
)
from rewardkit.trainer_rows import model_metrics
from rewardkit.types import Result, Status

__all__ = ["TRLRewardFunction", "areward_func", "reward_func"]

AsyncRewardFunction = Callable[..., Awaitable[list[float | None]]]

_SAMPLE_FIELDS = ("data_source", "response", "ground_truth", "extra_info", "id")
"""What ``fields`` may map dataset columns to (the prompt is TRL's own)."""

_TRUTH_COLUMNS = ("answer", "solution", "label", "target", "final_answer")
"""Columns that usually hold the ground truth, suggested in the all-failed warning."""

logger = logging.getLogger("rewardkit.integrations")

# Keyword arguments TRL passes that are not dataset columns.
_TRL_CONTEXT = frozenset(
    {"trainer_state", "log_extra", "log_metric", "environments", "completion_ids"}
)


def reward_func(
    config: ConfigSource = None,
    *,
    url: str | None = None,
    name: str | None = None,
    fields: Mapping[str, str] | None = None,
    **overrides: Any,
) -> TRLRewardFunction:
    """A TRL reward function scoring through rewardkit.

    ``config`` is a rewardkit config (dict, YAML path or RewardConfig); ``overrides``
    are ``reward.*`` fields merged into it, e.g. ``reward_func(num_workers=2,
    default_data_source="openai/gsm8k", overlong_buffer={"enable": True, ...})``.
    ``url`` scores through ``rewardkit serve`` instead of a local loop. ``name`` is
    what TRL logs (``rewards/<name>/mean``); by default ``rewardkit`` or
    ``rewardkit_<default data source>``. ``fields`` maps Sample fields to the dataset
    columns that hold them, like ``rewardkit score --field``: GSM8K keeps its answer in
    ``answer``, so ``fields={"ground_truth": "answer"}``.

    When every row of a call fails to score, a warning (once per function) names the
    reason and the fix: a missing ``ground_truth`` column (map one with ``fields``) or
    no ``data_source`` column and no ``reward.default_data_source``.
    """
    fields = dict(fields or {})
    wrong = sorted(set(fields) - set(_SAMPLE_FIELDS))
    if wrong:
        close = difflib.get_close_matches(wrong[0], _SAMPLE_FIELDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"fields: {wrong[0]!r} is not a Sample field{hint}; map one of "
            f"{', '.join(_SAMPLE_FIELDS)} to a dataset column"
        )
    if overrides:
        if url is not None:
            raise TypeError(
                f"config overrides {sorted(overrides)} do not apply to a server (url={url!r})"
            )
        base = load_config(config).model_dump()
        config = load_config(_merge(base, {"reward": overrides}))
    elif config is not None:
        config = load_config(config)  # a bad config fails here, not in the first training step
    if name is None:
        source = config.reward.default_data_source if config is not None else None
        name = "rewardkit" if not source else "rewardkit_" + re.sub(r"\W+", "_", source).strip("_")
    if config is not None:
        check_runnable(config)
    if url is not None:
        check_server_url(url, "url")
    return TRLRewardFunction(config, url=url, name=name, fields=fields)


def areward_func(
    config: ConfigSource = None,
    *,
    url: str | None = None,
    name: str | None = None,
    fields: Mapping[str, str] | None = None,
    **overrides: Any,
) -> AsyncRewardFunction:
    """:func:`reward_func` as a coroutine function, for TRL to await (same arguments and results).

    A plain ``async def`` named like the sync function (TRL logs ``rewards/<name>/mean``):
    TRL 1.6 detects async reward functions with ``inspect.iscoroutinefunction``, which
    sees neither a callable object's ``async __call__`` nor, in TRL's logging, a
    partial's own name. Unlike :func:`reward_func`'s object, it does not pickle.
    """
    function = reward_func(config, url=url, name=name, fields=fields, **overrides)

    async def scored(
        prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]:
        rows = function.rows(prompts, completions, **kwargs)
        backend = get_backend(function.config, function.url)
        if backend.config is None or needs_groups(backend.config.reward):
            # whole groups at once: the config aggregates them, or a server's may
            results = await asyncio.to_thread(backend.score, rows)
        else:
            results = list(await asyncio.gather(*(backend.ascore(row) for row in rows)))
        return function.rewards(backend, results, kwargs)

    scored.__name__ = scored.__qualname__ = function.__name__
    return scored


class TRLRewardFunction:
    """The callable :func:`reward_func` returns: ``(prompts, completions, **columns) -> list[float | None]``.

    Holds only its configuration; the scorer is looked up per process (see
    ``_backend``), so the function pickles and survives forks.
    """

    def __init__(
        self,
        config: ConfigSource,
        *,
        url: str | None,
        name: str,
        fields: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.url = url
        self.__name__ = name
        self.fields = dict(fields or {})
        self._warned = False

    def __repr__(self) -> str:
        return f"<TRL reward function {self.__name__}>"

    def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]:
        rows = self.rows(prompts, completions, **kwargs)
        backend = get_backend(self.config, self.url)
        return self.rewards(backend, backend.score(rows), kwargs)

    def rewards(
        self, backend: Backend, results: Sequence[Result], kwargs: Mapping[str, Any]
    ) -> list[float | None]:
        """What TRL gets for the scored rows, after logging them through TRL's hooks."""
        _log(results, kwargs.get("log_metric"), kwargs.get("log_extra"))
        self.warn_if_all_failed(results, kwargs)
        policy = FailurePolicy.resolve(None, None, backend.config, default="drop")
        return policy.values(results)

    def warn_if_all_failed(self, results: Sequence[Result], columns: Mapping[str, Any]) -> None:
        """Warn (once) when no row of a call scored: TRL would learn nothing, silently."""
        if self._warned or not results or any(r.ok for r in results):
            return
        self._warned = True
        names = sorted(k for k in columns if k not in _TRL_CONTEXT)
        shown = ", ".join(names) or "none"
        reasons = []
        truth_column = self.fields.get("ground_truth", "ground_truth")
        if truth_column not in columns and "reward_model" not in columns:
            guess = next((c for c in _TRUTH_COLUMNS if c in columns), "COLUMN")
            reasons.append(
                f"the dataset has no ground_truth column (its columns: {shown}); map the one "
                f"that holds the answer: reward_func(..., fields={{'ground_truth': {guess!r}}})"
            )
        source_column = self.fields.get("data_source", "data_source")
        default = None
        if isinstance(self.config, RewardConfig):
            default = self.config.reward.default_data_source
        if source_column not in columns and default is None:
            reasons.append(
                "the dataset has no data_source column and reward.default_data_source is not "
                "set; pass it, e.g. reward_func(..., default_data_source='openai/gsm8k'), or "
                "map a column with fields={'data_source': COLUMN}"
            )
        first = results[0]
        reasons.append(f"first row: {first.status.value}: {first.error}")
        message = (
            f"rewardkit: all {len(results)} rows of this step failed to score, so TRL gets "
            f"None for each and learns nothing from them: {'; '.join(reasons)}"
        )
        logger.warning("%s", message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)

    def rows(
        self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[dict[str, Any]]:
        """The Sample-shaped rows TRL's arguments describe (one per completion)."""
        if len(prompts) != len(completions):
            raise ValueError(f"got {len(prompts)} prompts but {len(completions)} completions")
        # Dataset columns arrive as lists; anything else is trainer context (state, hooks).
        columns = {
            k: v for k, v in kwargs.items() if k not in _TRL_CONTEXT and isinstance(v, list | tuple)
        }
        for key, values in columns.items():
            if len(values) != len(completions):
                raise ValueError(
                    f"column {key!r} has {len(values)} values for {len(completions)} completions"
                )
        completion_ids = kwargs.get("completion_ids")
        rows = []
        missing = sorted(column for column in self.fields.values() if column not in columns)
        if missing:
            raise ValueError(
                f"fields maps to column {missing[0]!r}, which the dataset does not have "
                f"(its columns: {', '.join(sorted(columns)) or 'none'})"
            )
        for i, (prompt, completion) in enumerate(zip(prompts, completions, strict=True)):
            row = {key: plain(values[i]) for key, values in columns.items()}
            for field, column in self.fields.items():
                row[field] = plain(columns[column][i])
            row["prompt"] = prompt
            row["response"] = completion  # a string, or the messages as a trajectory
            if completion_ids is not None:
                extra = dict(row.get("extra_info") or {})
                extra.setdefault("response_length", len(completion_ids[i]))  # exact token count
                row["extra_info"] = extra
            rows.append(row)
        return rows


def _log(
    results: Sequence[Result],
    log_metric: Callable[[str, float], None] | None,
    log_extra: Callable[[str, list[Any]], None] | None,
) -> None:
    """Report statuses, per-component means and each API judge's tokens through TRL's
    hooks (absent outside a trainer)."""
    if callable(log_metric) and results:
        counts = Counter(r.status for r in results)
        for status in (Status.TIMEOUT, Status.ERROR, Status.INVALID):
            log_metric(f"rewardkit/{status.value}_frac", counts[status] / len(results))
        for name, values in _component_values(results).items():
            log_metric(f"rewardkit/component/{name}/mean", math.fsum(values) / len(values))
        raw = [r.extra[RAW_SCORE_KEY] for r in results if r.ok and RAW_SCORE_KEY in r.extra]
        if raw:
            log_metric(f"rewardkit/{RAW_SCORE_KEY}/mean", math.fsum(raw) / len(raw))
        for name, value in model_metrics(results).items():  # rewardkit/rm/helpful/tokens
            if name.endswith("/tokens"):  # (its score's mean is its component's above)
                log_metric(f"rewardkit/{name}", value)
    if callable(log_extra):
        log_extra("rewardkit_status", [r.status.value for r in results])


def _component_values(results: Sequence[Result]) -> dict[str, list[float]]:
    """Each component's values over the scored rows that have it, in first-seen order."""
    values: dict[str, list[float]] = {}
    for result in results:
        if result.ok:
            for name, value in result.components.items():
                values.setdefault(name, []).append(float(value))
    return values


def _merge(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive dict merge: ``update``'s leaves win."""
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(dict(merged[key]), value)
        else:
            merged[key] = value
    return merged
