"""rewardkit as verl's reward: a ``compute_score`` function and a reward manager.

verl is never imported here (it pins its own transformers and stays out of
rewardkit's install); everything is duck-typed against verl's interfaces.

**A custom reward function** (``reward.custom_reward_function``), scored through a
process-wide :class:`~rewardkit.RewardLoop` started on first use::

    reward.custom_reward_function.path=pkg://rewardkit.integrations.verl
    reward.custom_reward_function.name=compute_score        # or compute_score_async
    +reward.custom_reward_function.reward_kwargs.rewardkit_config=/abs/path/reward.yaml

**A reward manager** (``reward.reward_manager.source=importlib``) that scores the
whole batch at once, locally or through ``rewardkit serve``::

    reward.reward_manager.source=importlib
    reward.reward_manager.module.path=pkg://rewardkit.integrations.verl
    reward.reward_manager.name=RewardkitRewardManager

It works with both verl generations: the legacy ``verl.workers.reward_manager``
interface (``__call__(data, return_dict)`` returning ``reward_tensor`` and
``reward_extra_info``) and the reward-loop interface (``run_single`` +
``assemble_rm_scores``). Configure it with a subclass that sets the class attributes
(see ``examples/integrations/verl_reward.py``), with the legacy ``reward_kwargs``, or
with ``$REWARDKIT_CONFIG`` / ``$REWARDKIT_URL``. The ``compute_score`` verl passes it
is not used: rewardkit's own config (``reward.custom_reward_function``) says how to score.

**verl's agent loop** scores each sample as its rollout ends, through ``run_single``
(concurrently: one slow sample delays no other). Its fields reach rewardkit in
``extra_info`` as verl's naive manager puts them there (``num_turns``, the tools'
rewards as components ``tool/<name>``, a ``reward_score`` set before: not scored
again; see :mod:`rewardkit.shaping.rollout`), and each row's dict adds
:data:`AGENT_KEYS`. An agent loop that scores a sample itself stores
:func:`prescored_extra_info` as its ``reward_extra_info``.

**What verl gets back.** Every row's dict (``compute_score``, ``run_single``) has the
same keys, ``score``, ``status``, ``error``, :data:`OK_KEY` (``rewardkit_ok``: 1.0 or
0.0, the one verl's metrics keep) and :data:`EXTRA_KEYS`; scores keep verl's
scale per data source (``math_dapo``/``math``/``aime*``: -1 for a wrong answer).
``compute_score`` also takes verl's ``BatchRewardManager`` call (``data_sources=``,
``solution_strs=``, ...). A ``reward_router_address`` from verl is used by a rewardkit
config whose judge url is :data:`ROUTER_URL`, and refused (ConfigError) otherwise.

**Failed rows (the decision).** verl needs a number for every row and has no way to
say "no reward". Turning a timeout into 0.0 would teach the policy that the answer
was wrong, which is the failure mode rewardkit exists to remove. So by default a row
whose status is not ``ok`` raises :class:`~rewardkit.ScorerError` naming the rows,
their statuses and the first reason: the run stops loudly instead of learning from
invented rewards. Training through occasional failures is an explicit opt-in:
``on_failure="fill"`` gives failed rows ``fill_score`` (default 0.0) and keeps
``status`` and ``error`` in verl's ``reward_extra_info``, so they stay visible in
verl's logs and generation dumps. Both also come from rewardkit's config
(``reward.on_failure``, ``reward.fill_score``); an argument here wins. ``drop`` is
refused (:data:`NO_DROP`): verl has no per-row way to leave a row out.

**Per-component scores** reach verl as numbers: every row's dict also has
``component/<name>`` for each component the config scores (``rule``, ``rm`` or
``judge``, ``format``, ``overlong``: :func:`rewardkit.aggregate.component_names`),
unweighted, NaN where a row has none. They are what verl's own GDPO reads
(``algorithm.adv_estimator=gdpo``, ``algorithm.gdpo_reward_keys=[component/rule,
component/format]``, the weights in ``algorithm.gdpo_reward_weights``).
``reward.aggregation: normalize_then_sum`` needs whole groups, so the per-row calls
(``compute_score`` on one row, ``compute_score_async``, ``run_single``) refuse it;
the batch calls (the legacy ``__call__``, ``BatchRewardManager``'s ``compute_score``)
apply it.
"""

from __future__ import annotations

import asyncio
import functools
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import torch

from rewardkit.aggregate import (
    component_names,
    needs_groups,
    refuse_aggregated,
    refuse_per_sample,
)
from rewardkit.config import VERL_ROUTER_URL, ConfigSource, check_runnable, load_config
from rewardkit.engines import client_backend
from rewardkit.errors import ConfigError
from rewardkit.integrations._backend import (
    ENV_CONFIG,
    ENV_URL,
    Backend,
    FailurePolicy,
    OnFailure,
    check_server_url,
    get_backend,
    plain,
)
from rewardkit.shaping.rollout import NUM_TURNS, ROLLOUT_SCORES, TOOL_PREFIX, TOOL_REWARDS
from rewardkit.tokens import place_scores, response_mask_from_attention, valid_response_length
from rewardkit.types import Result, Status

__all__ = [
    "AGENT_KEYS",
    "EXTRA_KEYS",
    "NO_DROP",
    "OK_KEY",
    "ROUTER_URL",
    "RewardkitRewardManager",
    "compute_score",
    "compute_score_async",
    "prescored_extra_info",
]

# Keyword arguments verl passes to reward functions and managers besides reward_kwargs.
# reward_router_address is honoured (see ROUTER_URL); the tokenizer is not needed.
# Anything else is a typo in reward_kwargs and is refused by name.
_VERL_EXTRAS = frozenset({"reward_router_address", "reward_model_tokenizer"})

EXTRA_KEYS: tuple[str, ...] = ("acc", "pred")
"""The verifier extras every row reports, besides ``score``, ``status`` and ``error``.

verl's reward loop (``RewardLoopManager.compute_rm_score``) takes the keys of row 0's
``reward_extra_info`` and reads them on every row, and its naive managers append per
key: a batch mixing data sources (gsm8k reports ``method``, math ``source``) or holding
a failed row (no extras at all) would crash or misalign. So the per-row output has
exactly these keys; a row without one reports ``""`` for ``pred`` and NaN otherwise."""

AGENT_KEYS: tuple[str, ...] = ("num_turns", "tool_reward", "prescored")
"""The numbers every row of verl's agent loop reports besides :data:`EXTRA_KEYS`.

A row whose ``extra_info.num_turns`` is set (verl's agent loop sets ``__num_turns__``
on every row of a batch) also reports ``num_turns``, ``tool_reward`` (the sum of its
``tool/<name>`` components before ``reward.rollout_reward_weight``; 0.0 without any)
and ``prescored`` (1.0 when the row came with its ``reward_score``, else 0.0): numbers,
so verl's metrics keep them."""

OK_KEY = "rewardkit_ok"
"""The numeric status key in every row's ``reward_extra_info``: 1.0 scored, 0.0 failed
(filled under ``on_failure="fill"``). verl's metrics keep numbers only and drop the text
``status`` and ``error``, so this key's mean is the run's success rate there."""

NO_DROP = (
    "verl needs a number for every row (reward_tensor) and has no per-row mask for the "
    "reward; its algorithm.filter_groups evicts only groups whose metric is identical on "
    "every row, which one row's score cannot arrange"
)
"""Why the verl adapter refuses ``on_failure='drop'`` (README, "Several rewards")."""

ROUTER_URL = VERL_ROUTER_URL
"""Set ``reward.reward_model.url`` to this in rewardkit's config to send a generative
judge's requests to the reward-model servers verl starts (``reward_router_address``)."""


def compute_score(
    data_source: str | None = None,
    solution_str: str | None = None,
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    *,
    data_sources: Sequence[str] | None = None,
    solution_strs: Sequence[str] | None = None,
    ground_truths: Sequence[Any] | None = None,
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    rewardkit_config: ConfigSource = None,
    rewardkit_url: str | None = None,
    on_failure: OnFailure | None = None,
    fill_score: float | None = None,
    extra_keys: Sequence[str] = EXTRA_KEYS,
    **verl_kwargs: Any,
) -> dict[str, Any] | list[dict[str, Any]]:
    """Score with verl's custom-function signature, one row or (BatchRewardManager) a batch.

    One row: ``compute_score(data_source, solution_str, ground_truth, extra_info)`` returns
    ``{"score", "status", "error", *extra_keys}``; verl rewards ``score`` and collects
    every key into ``reward_extra_info``. A batch, as verl's ``BatchRewardManager`` calls
    it (``data_sources=..., solution_strs=..., ground_truths=..., extra_infos=...``),
    returns one such dict per row, scored together. A failed row raises ScorerError
    unless ``on_failure="fill"`` (see the module docstring).
    """
    router = _refuse_unknown(verl_kwargs)
    backend = _backend(rewardkit_config, rewardkit_url, router)
    policy = _policy(on_failure, fill_score, backend)
    keys = _row_keys(extra_keys, backend)
    if solution_strs is not None:
        rows = _batch_rows(data_sources, solution_strs, ground_truths, extra_infos)
        results = backend.score(rows)
        scores = policy.scores(results)
        return [
            _score_dict(r, s, keys, agent=_agent(row))
            for r, s, row in zip(results, scores, rows, strict=True)
        ]
    if data_source is None or solution_str is None:
        raise TypeError("compute_score needs data_source and solution_str (or the batch lists)")
    _refuse_per_sample(backend, "verl's compute_score on one row")
    row = _row(data_source, solution_str, ground_truth, extra_info)
    [result] = backend.score([row])
    refuse_aggregated(result, "verl's compute_score on one row")
    [score] = policy.scores([result])
    return _score_dict(result, score, keys, agent=_agent(row))


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    rewardkit_config: ConfigSource = None,
    rewardkit_url: str | None = None,
    on_failure: OnFailure | None = None,
    fill_score: float | None = None,
    extra_keys: Sequence[str] = EXTRA_KEYS,
    **verl_kwargs: Any,
) -> dict[str, Any]:
    """:func:`compute_score` for verl's reward loop, which awaits async functions concurrently."""
    router = _refuse_unknown(verl_kwargs)
    backend = _backend(rewardkit_config, rewardkit_url, router)
    policy = _policy(on_failure, fill_score, backend)
    _refuse_per_sample(backend, "verl's compute_score_async")
    row = _row(data_source, solution_str, ground_truth, extra_info)
    result = await backend.ascore(row)
    [score] = policy.scores([result])
    return _score_dict(result, score, _row_keys(extra_keys, backend), agent=_agent(row))


def prescored_extra_info(
    score: float,
    num_turns: int | None = None,
    extra_keys: Sequence[str] = EXTRA_KEYS,
    *,
    rewardkit_config: ConfigSource = None,
) -> dict[str, Any]:
    """The ``reward_extra_info`` of a sample an agent loop scored itself.

    An agent loop that sets ``output.reward_score`` is not sent to the reward loop, and
    verl assembles the step's batch reading the first sample's ``reward_extra_info``
    keys on every sample: a sample without them fails that step (KeyError) or, first in
    it, drops every other sample's. Set ``output.extra_fields["reward_extra_info"]`` to
    this: the keys rewardkit's scored samples have, with ``prescored`` 1.0 (as rewardkit
    reports a row that arrives with ``extra_info.reward_score``). ``rewardkit_config``
    (else ``$REWARDKIT_CONFIG``, else the defaults) is the manager's: its components are
    keys too (``component/<name>``).
    """
    config = load_config(rewardkit_config or os.environ.get(ENV_CONFIG) or None)
    components = [_COMPONENT + name for name in component_names(config.reward)]
    extra_keys = tuple(dict.fromkeys([*extra_keys, *components]))
    extra: dict[str, Any] = {"prescored": 1}
    if num_turns is not None:
        extra["num_turns"] = num_turns
    result = Result(0, Status.OK, score=float(score), components={"prescored": score}, extra=extra)
    return _score_dict(result, float(score), extra_keys, agent=True)


class RewardkitRewardManager:
    """A verl reward manager that scores a batch's rows through rewardkit.

    Class attributes are the defaults a subclass sets; constructor keywords (verl's
    legacy ``reward_kwargs``) override them.
    """

    rewardkit_config: ClassVar[ConfigSource] = None
    """A rewardkit config (dict, YAML path or RewardConfig); None: ``$REWARDKIT_CONFIG``."""
    rewardkit_url: ClassVar[str | None] = None
    """A ``rewardkit serve`` address to score through instead of a local loop."""
    on_failure: ClassVar[OnFailure | None] = None
    """None: rewardkit's ``reward.on_failure``, else raise."""
    fill_score: ClassVar[float | None] = None
    """None: rewardkit's ``reward.fill_score`` (default 0.0)."""
    extra_keys: ClassVar[tuple[str, ...]] = EXTRA_KEYS
    """Extra keys reported per row by :meth:`run_single` (see :data:`EXTRA_KEYS`)."""

    def __init__(
        self,
        tokenizer: Any,
        num_examine: int = 0,
        compute_score: Any = None,
        reward_fn_key: str = "data_source",
        *,
        config: Any = None,
        rewardkit_config: ConfigSource = None,
        rewardkit_url: str | None = None,
        on_failure: OnFailure | None = None,
        fill_score: float | None = None,
        **verl_kwargs: Any,
    ) -> None:
        self._router = _refuse_unknown(verl_kwargs)
        del compute_score, config  # verl's scorer and trainer config: rewardkit has its own
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.reward_fn_key = reward_fn_key
        self._config = rewardkit_config if rewardkit_config is not None else self.rewardkit_config
        self._url = rewardkit_url if rewardkit_url is not None else self.rewardkit_url
        self._on_failure = on_failure or type(self).on_failure
        self._fill_score = type(self).fill_score if fill_score is None else fill_score
        self._examined: dict[str, int] = {}
        self._source: tuple[ConfigSource, str | None] | None = None  # see _scorer
        # verl builds its managers before the first step: refuse what would fail every batch.
        loaded = None
        if self._url is not None:
            check_server_url(self._url)
        elif self._config is not None and self._router is None:
            loaded = load_config(self._config)
            check_runnable(loaded)
        # on_failure='drop' is refused here too (each call resolves it with its scorer's config)
        FailurePolicy.resolve(
            self._on_failure, self._fill_score, loaded, default="raise", no_drop=NO_DROP
        )

    # ------------------------------------------------------------- legacy interface

    def __call__(self, data: Any, return_dict: bool = False) -> torch.Tensor | dict[str, Any]:
        """Score the batch: ``reward_tensor [B, R]`` (and ``reward_extra_info`` with return_dict).

        A batch that already holds ``rm_scores`` (computed by verl's reward loop) is
        returned as it is, with the ``reward_extra_info`` the loop stored, as verl's own
        managers do: scoring it again would double the work and could disagree.
        """
        if "rm_scores" in data.batch.keys():
            return _precomputed(data, return_dict)
        rows, response_mask = self._rows(data)
        scorer = self._scorer()
        if scorer.config is None or needs_groups(scorer.config.reward):
            _with_uids(rows, data)  # a server's config may aggregate too
        results = scorer.score(rows)
        scores = _policy(self._on_failure, self._fill_score, scorer).scores(results)
        reward_tensor = place_scores(torch.tensor(scores), response_mask)  # [B, R]
        self._examine(rows, results)
        if not return_dict:
            return reward_tensor
        return {"reward_tensor": reward_tensor, "reward_extra_info": _extra_info(results, scores)}

    # --------------------------------------------------------- reward-loop interface

    async def run_single(self, data: Any) -> dict[str, Any]:
        """Score one row (the last one of a multi-sequence item, as verl's naive manager does).

        verl's reward-loop workers and its agent loop (each sample as its rollout ends)
        await this from many tasks at once: the row is scored on rewardkit's own loop
        while this one waits, so rows never queue behind each other here. The agent
        loop's fields (``__num_turns__``, ``tool_extra_fields``, ``reward_scores``) reach
        rewardkit in ``extra_info`` as verl's naive manager puts them there.
        """
        # Decoding a long trajectory takes milliseconds: off the loop, as verl's managers do.
        rows, _ = await asyncio.to_thread(self._rows, data)
        scorer = self._scorer()
        _refuse_per_sample(scorer, "verl's run_single")
        result = await scorer.ascore(rows[-1])
        [score] = _policy(self._on_failure, self._fill_score, scorer).scores([result])
        info = _score_dict(
            result, score, _row_keys(self.extra_keys, scorer), agent=_agent(rows[-1])
        )
        return {"reward_score": score, "reward_extra_info": info}

    @classmethod
    def assemble_rm_scores(cls, data: Any, scores: Sequence[float]) -> torch.Tensor:
        """Put each row's score on its last valid response token: ``[B, R]``."""
        response_mask = response_mask_from_attention(
            data.batch["attention_mask"], data.batch["responses"].shape[-1]
        )  # [B, R]
        return place_scores(torch.tensor(list(scores), dtype=torch.float32), response_mask)

    # ------------------------------------------------------------------ plumbing

    def _scorer(self) -> Backend:
        """The process's scorer. What it scores with is resolved once: with verl's router
        address that means reading the config, which run_single must not do on the
        event loop for every sample."""
        if self._source is None:
            self._source = _source(self._config, self._url, self._router)
        return get_backend(*self._source)

    def _rows(self, data: Any) -> tuple[list[dict[str, Any]], torch.Tensor]:
        """Sample-shaped rows decoded from a DataProto, and its response mask ``[B, R]``."""
        prompts = data.batch["prompts"]  # [B, P]
        responses = data.batch["responses"]  # [B, R]
        attention = data.batch["attention_mask"]  # [B, P + R]
        prompt_mask = attention[:, : prompts.shape[-1]]  # [B, P]
        response_mask = response_mask_from_attention(attention, responses.shape[-1])  # [B, R]
        lengths = valid_response_length(response_mask).tolist()
        prompt_texts = self._decode(prompts, prompt_mask)
        response_texts = self._decode(responses, response_mask)
        column = functools.partial(_column, data.non_tensor_batch, responses.shape[0])
        rows = []
        for i, (data_source, reward_model, extra_info, agent) in enumerate(
            zip(
                column(self.reward_fn_key),
                column("reward_model"),
                column("extra_info"),
                _agent_fields(data.non_tensor_batch, responses.shape[0]),
                strict=True,
            )
        ):
            extra = {**(plain(extra_info) or {}), **agent}
            extra.setdefault("response_length", lengths[i])  # exact, for the overlong penalty
            ground_truth = (
                reward_model.get("ground_truth") if isinstance(reward_model, Mapping) else None
            )
            rows.append(
                {
                    "data_source": data_source,
                    "prompt": prompt_texts[i],
                    "response": response_texts[i],
                    "ground_truth": plain(ground_truth),
                    "extra_info": extra,
                }
            )
        return rows, response_mask

    def _decode(self, ids: torch.Tensor, mask: torch.Tensor) -> list[str]:
        kept = [row[row_mask != 0].tolist() for row, row_mask in zip(ids, mask, strict=True)]
        return self.tokenizer.batch_decode(kept, skip_special_tokens=True)

    def _examine(self, rows: list[dict[str, Any]], results: list[Result]) -> None:
        """Print the first ``num_examine`` rows of each data source, as verl's managers do."""
        for row, result in zip(rows, results, strict=True):
            seen = self._examined.get(row["data_source"], 0)
            if seen >= self.num_examine:
                continue
            self._examined[row["data_source"]] = seen + 1
            print(f"[prompt] {row['prompt']}\n[response] {row['response']}")
            print(
                f"[ground_truth] {row['ground_truth']}\n[score] {result.score} [status] {result.status}"
            )


def _row(
    data_source: str | None, response: str, ground_truth: Any, extra_info: Any
) -> dict[str, Any]:
    return {
        "data_source": data_source,
        "response": response,
        "ground_truth": plain(ground_truth),
        "extra_info": dict(plain(extra_info) or {}),
    }


def _batch_rows(
    data_sources: Sequence[str] | None,
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any] | None,
    extra_infos: Sequence[Any] | None,
) -> list[dict[str, Any]]:
    n = len(solution_strs)
    sources = list(data_sources) if data_sources is not None else [None] * n
    truths = list(ground_truths) if ground_truths is not None else [None] * n
    extras = list(extra_infos) if extra_infos is not None else [None] * n
    if not len(sources) == len(truths) == len(extras) == n:
        raise ValueError(
            f"data_sources, solution_strs, ground_truths and extra_infos differ in length "
            f"({len(sources)}, {n}, {len(truths)}, {len(extras)})"
        )
    rows = zip(sources, solution_strs, truths, extras, strict=True)
    return [_row(source, response, truth, extra) for source, response, truth, extra in rows]


def _agent(row: Mapping[str, Any]) -> bool:
    """Whether a row comes from verl's agent loop: its ``extra_info.num_turns`` is set
    (from ``__num_turns__``, which the agent loop sets on every sample of a step)."""
    extra_info = row.get("extra_info")
    return isinstance(extra_info, Mapping) and extra_info.get(NUM_TURNS) is not None


def _score_dict(
    result: Result, score: float, extra_keys: Sequence[str], agent: bool = False
) -> dict[str, Any]:
    """One row's reward_extra_info, with the same keys on every row (see EXTRA_KEYS), and
    AGENT_KEYS for a row of verl's agent loop. A ``component/<name>`` key reads the row's
    component ``name``."""
    out: dict[str, Any] = {
        "score": score,
        "status": result.status.value,
        "error": result.error or "",
        OK_KEY: float(result.ok),
    }
    for key in extra_keys:
        if key.startswith(_COMPONENT):
            value = result.components.get(key[len(_COMPONENT) :])
        else:
            value = plain(result.extra.get(key))
        out[key] = _missing(key) if value is None else value
    if agent:
        turns = result.extra.get("num_turns")
        out["num_turns"] = math.nan if turns is None else float(turns)
        tools = [v for k, v in result.components.items() if k.startswith(TOOL_PREFIX)]
        out["tool_reward"] = sum(tools, 0.0)  # fsum raises on overflow; this gives inf
        out["prescored"] = float(result.extra.get("prescored", 0))
    return out


def _agent_fields(non_tensor: Mapping[str, Any], size: int) -> list[dict[str, Any]]:
    """Per row, what verl's agent loop adds to ``extra_info`` (as its naive manager does).

    ``tool_extra_fields`` (the agent loop's extra fields: ``tool_rewards``,
    ``turn_scores``, ...) are merged in; ``__num_turns__`` becomes ``num_turns`` and
    ``reward_scores`` ``rollout_reward_scores``. In verl's batch path (a reward model
    without its own resource pool) those extra fields are columns of their own: there
    ``tool_rewards`` is read from its column.
    """
    rows: list[dict[str, Any]] = [{} for _ in range(size)]
    for key, target in (
        ("tool_extra_fields", None),
        (TOOL_REWARDS, TOOL_REWARDS),
        ("__num_turns__", NUM_TURNS),
        ("reward_scores", ROLLOUT_SCORES),
    ):
        values = non_tensor.get(key)
        if values is None:
            continue
        for row, value in zip(rows, list(values), strict=True):
            value = plain(value)
            if target is None:
                row.update(value if isinstance(value, Mapping) else {})
            elif value is not None:
                row[target] = value
    return rows


_COMPONENT = "component/"


def _with_uids(rows: list[dict[str, Any]], data: Any) -> None:
    """verl's ``uid`` column (a prompt's group) as each row's ``extra_info.uid``, where
    the row names none: what ``reward.aggregation`` groups by, as verl's advantage does."""
    uids = _column(data.non_tensor_batch, len(rows), "uid")
    for row, uid in zip(rows, uids, strict=True):
        if uid is not None:
            row["extra_info"].setdefault("uid", plain(uid))


def _row_keys(extra_keys: Sequence[str], backend: Backend) -> tuple[str, ...]:
    """``extra_keys`` plus ``component/<name>`` for each component the backend's config
    scores (a server's config is not known here: name its components in extra_keys)."""
    names = component_names(backend.config.reward) if backend.config is not None else ()
    return tuple(dict.fromkeys([*extra_keys, *(_COMPONENT + name for name in names)]))


def _policy(
    on_failure: OnFailure | None, fill_score: float | None, backend: Backend
) -> FailurePolicy:
    """The failure policy: the argument, else the backend's config, else raise."""
    return FailurePolicy.resolve(
        on_failure, fill_score, backend.config, default="raise", no_drop=NO_DROP
    )


def _refuse_per_sample(backend: Backend, entry: str) -> None:
    if backend.config is not None:
        refuse_per_sample(backend.config.reward, entry)


def _missing(key: str) -> Any:
    return "" if key == "pred" else math.nan


def _precomputed(data: Any, return_dict: bool) -> torch.Tensor | dict[str, Any]:
    """verl's reward-loop scores already in the batch (``rm_scores``), as verl's managers read them."""
    reward_tensor = data.batch["rm_scores"]  # [B, R]
    if not return_dict:
        return reward_tensor
    keys = data.meta_info.get("reward_extra_keys", [])
    info = {key: list(data.non_tensor_batch[key]) for key in keys}
    return {"reward_tensor": reward_tensor, "reward_extra_info": info}


def _backend(config: ConfigSource, url: str | None, router: str | None) -> Backend:
    """The scorer; with verl's reward_router_address, a config whose judge names ROUTER_URL."""
    return get_backend(*_source(config, url, router))


def _source(
    config: ConfigSource, url: str | None, router: str | None
) -> tuple[ConfigSource, str | None]:
    """What :func:`get_backend` takes: as given, or with verl's router in each judge url
    that names ROUTER_URL (``reward_model.url``, any ``reward_models.<name>.url``)."""
    if router is None:
        return config, url
    if config is None and url is None:
        url = os.environ.get(ENV_URL) or None
        config = os.environ.get(ENV_CONFIG) or None
    loaded = load_config(config) if url is None else None
    sections = loaded.reward.model_sections() if loaded is not None else []
    # verl launched the servers of its one reward_model (its rollout.name): a rewardkit
    # reward_model that would launch them too uses verl's instead.
    routed = [
        (key, rm)
        for key, rm in sections
        if rm.url == ROUTER_URL or (rm.managed and key == "reward_model")
    ]
    if not routed:
        raise ConfigError(
            f"verl passed reward_router_address={router!r} (it started reward-model servers): "
            f"to judge with them, set reward.reward_model.url: {ROUTER_URL} in rewardkit's "
            "config (kind: generative, backend: openai); to score without them, set "
            "reward.reward_model.enable=False in verl's config"
        )
    assert loaded is not None  # the sections above came from it
    tree = loaded.model_dump()
    for key, rm in routed:  # reward_model, or reward_models.<name> (names hold no dots)
        section = tree["reward"]
        for part in key.split("."):
            section = section[part]
        section["url"] = f"http://{router}"
        if rm.managed:  # launch none here: the backend the engine implies, no rollout
            assert rm.rollout.name is not None
            section["backend"] = client_backend(rm.rollout.name, rm.kind)
            section["rollout"] = {}
    return tree, None


def _extra_info(results: list[Result], scores: list[float]) -> dict[str, list[Any]]:
    """verl's reward_extra_info: a list per key, one entry per row, for every key any row has.

    A row without a key gets "" where the key holds text (so verl's metrics skip it) and
    NaN elsewhere (so a mean shows the gap instead of a made-up value).
    """
    per_row = [
        {
            **{str(k): plain(v) for k, v in r.extra.items()},
            **{f"component/{k}": v for k, v in r.components.items()},
        }
        for r in results
    ]
    keys = list(dict.fromkeys(key for row in per_row for key in row))
    info: dict[str, list[Any]] = {
        "score": scores,
        "status": [r.status.value for r in results],
        "error": [r.error or "" for r in results],
        OK_KEY: [float(r.ok) for r in results],
    }
    for key in keys:
        if key in info:
            continue
        present = [row[key] for row in per_row if key in row]
        missing: Any = "" if all(isinstance(v, str) for v in present) else float("nan")
        info[key] = [row.get(key, missing) for row in per_row]
    return info


def _column(non_tensor: Mapping[str, Any], size: int, key: str) -> list[Any]:
    """One non-tensor column as a list (None for each row when the batch lacks it)."""
    values = non_tensor.get(key)
    if values is None:
        return [None] * size
    return list(values)


def _refuse_unknown(kwargs: Mapping[str, Any]) -> str | None:
    """Refuse keywords that are neither rewardkit's nor verl's; return the router address."""
    unknown = sorted(set(kwargs) - _VERL_EXTRAS)
    if unknown:
        raise TypeError(
            f"unexpected keyword arguments {unknown} (check reward_kwargs); rewardkit takes "
            "rewardkit_config, rewardkit_url, on_failure, fill_score, extra_keys"
        )
    return kwargs.get("reward_router_address")
