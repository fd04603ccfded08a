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
verl's logs and generation dumps.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import torch

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
from rewardkit.tokens import place_scores, response_mask_from_attention, valid_response_length
from rewardkit.types import Result

__all__ = [
    "EXTRA_KEYS",
    "OK_KEY",
    "ROUTER_URL",
    "RewardkitRewardManager",
    "compute_score",
    "compute_score_async",
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

OK_KEY = "rewardkit_ok"
"""The numeric status key in every row's ``reward_extra_info``: 1.0 scored, 0.0 failed
(filled under ``on_failure="fill"``). verl's metrics keep numbers only and drop the text
``status`` and ``error``, so this key's mean is the run's success rate there."""

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
    on_failure: OnFailure = "raise",
    fill_score: float = 0.0,
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
    policy = FailurePolicy(on_failure, fill_score)
    backend = _backend(rewardkit_config, rewardkit_url, router)
    if solution_strs is not None:
        rows = _batch_rows(data_sources, solution_strs, ground_truths, extra_infos)
        results = backend.score(rows)
        scores = policy.scores(results)
        return [_score_dict(r, s, extra_keys) for r, s in zip(results, scores, strict=True)]
    if data_source is None or solution_str is None:
        raise TypeError("compute_score needs data_source and solution_str (or the batch lists)")
    [result] = backend.score([_row(data_source, solution_str, ground_truth, extra_info)])
    [score] = policy.scores([result])
    return _score_dict(result, score, extra_keys)


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    rewardkit_config: ConfigSource = None,
    rewardkit_url: str | None = None,
    on_failure: OnFailure = "raise",
    fill_score: float = 0.0,
    extra_keys: Sequence[str] = EXTRA_KEYS,
    **verl_kwargs: Any,
) -> dict[str, Any]:
    """:func:`compute_score` for verl's reward loop, which awaits async functions concurrently."""
    router = _refuse_unknown(verl_kwargs)
    policy = FailurePolicy(on_failure, fill_score)
    row = _row(data_source, solution_str, ground_truth, extra_info)
    result = await _backend(rewardkit_config, rewardkit_url, router).ascore(row)
    [score] = policy.scores([result])
    return _score_dict(result, score, extra_keys)


class RewardkitRewardManager:
    """A verl reward manager that scores a batch's rows through rewardkit.

    Class attributes are the defaults a subclass sets; constructor keywords (verl's
    legacy ``reward_kwargs``) override them.
    """

    rewardkit_config: ClassVar[ConfigSource] = None
    """A rewardkit config (dict, YAML path or RewardConfig); None: ``$REWARDKIT_CONFIG``."""
    rewardkit_url: ClassVar[str | None] = None
    """A ``rewardkit serve`` address to score through instead of a local loop."""
    on_failure: ClassVar[OnFailure] = "raise"
    fill_score: ClassVar[float] = 0.0
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
        self.policy = FailurePolicy(
            on_failure or type(self).on_failure,
            type(self).fill_score if fill_score is None else fill_score,
        )
        self._examined: dict[str, int] = {}
        # verl builds its managers before the first step: refuse what would fail every batch.
        if self._url is not None:
            check_server_url(self._url)
        elif self._config is not None and self._router is None:
            check_runnable(load_config(self._config))

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
        results = self._scorer().score(rows)
        scores = self.policy.scores(results)
        reward_tensor = place_scores(torch.tensor(scores), response_mask)  # [B, R]
        self._examine(rows, results)
        if not return_dict:
            return reward_tensor
        return {"reward_tensor": reward_tensor, "reward_extra_info": _extra_info(results, scores)}

    # --------------------------------------------------------- reward-loop interface

    async def run_single(self, data: Any) -> dict[str, Any]:
        """Score one row (the last one of a multi-sequence item, as verl's naive manager does)."""
        rows, _ = self._rows(data)
        result = await self._scorer().ascore(rows[-1])
        [score] = self.policy.scores([result])
        info = _score_dict(result, score, self.extra_keys)
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
        return _backend(self._config, self._url, self._router)

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
        for i, (data_source, reward_model, extra_info) in enumerate(
            zip(
                column(self.reward_fn_key),
                column("reward_model"),
                column("extra_info"),
                strict=True,
            )
        ):
            extra = dict(plain(extra_info) or {})
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


def _score_dict(result: Result, score: float, extra_keys: Sequence[str]) -> dict[str, Any]:
    """One row's reward_extra_info, with the same keys on every row (see EXTRA_KEYS)."""
    out: dict[str, Any] = {
        "score": score,
        "status": result.status.value,
        "error": result.error or "",
        OK_KEY: float(result.ok),
    }
    for key in extra_keys:
        value = plain(result.extra.get(key))
        out[key] = _missing(key) if value is None else value
    return out


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
    if router is None:
        return get_backend(config, url)
    if config is None and url is None:
        url = os.environ.get(ENV_URL) or None
        config = os.environ.get(ENV_CONFIG) or None
    loaded = load_config(config) if url is None else None
    rm = loaded.reward.reward_model if loaded is not None else None
    if rm is None or not rm.enable or (rm.url != ROUTER_URL and not rm.managed):
        raise ConfigError(
            f"verl passed reward_router_address={router!r} (it started reward-model servers): "
            f"to judge with them, set reward.reward_model.url: {ROUTER_URL} in rewardkit's "
            "config (kind: generative, backend: openai); to score without them, set "
            "reward.reward_model.enable=False in verl's config"
        )
    assert loaded is not None  # rm above came from it
    tree = loaded.model_dump()
    tree["reward"]["reward_model"]["url"] = f"http://{router}"
    if rm.managed:  # verl launched the servers (its reward_model.rollout): launch none here
        assert rm.rollout.name is not None
        tree["reward"]["reward_model"]["backend"] = client_backend(rm.rollout.name, rm.kind)
        tree["reward"]["reward_model"]["rollout"] = {}
    return get_backend(tree)


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
