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
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import torch

from rewardkit.config import ConfigSource
from rewardkit.integrations._backend import FailurePolicy, OnFailure, get_backend, plain
from rewardkit.tokens import place_scores, response_mask_from_attention, valid_response_length
from rewardkit.types import Result

__all__ = ["RewardkitRewardManager", "compute_score", "compute_score_async"]

# Keyword arguments some verl versions pass to every reward function or manager: accepted
# and unused. Anything else is a typo in reward_kwargs and is refused by name.
_VERL_EXTRAS = frozenset({"reward_router_address", "reward_model_tokenizer"})


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    rewardkit_config: ConfigSource = None,
    rewardkit_url: str | None = None,
    on_failure: OnFailure = "raise",
    fill_score: float = 0.0,
    **verl_kwargs: Any,
) -> dict[str, Any]:
    """Score one response with verl's custom-function signature.

    Returns ``{"score", "status", "error", **extra}``: verl rewards ``score`` and
    collects every key into ``reward_extra_info``. A failed row raises ScorerError
    unless ``on_failure="fill"`` (see the module docstring).
    """
    _refuse_unknown(verl_kwargs)
    policy = FailurePolicy(on_failure, fill_score)
    row = _row(data_source, solution_str, ground_truth, extra_info)
    [result] = get_backend(rewardkit_config, rewardkit_url).score([row])
    return _score_dict(result, policy)


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
    **verl_kwargs: Any,
) -> dict[str, Any]:
    """:func:`compute_score` for verl's reward loop, which awaits async functions concurrently."""
    _refuse_unknown(verl_kwargs)
    policy = FailurePolicy(on_failure, fill_score)
    row = _row(data_source, solution_str, ground_truth, extra_info)
    result = await get_backend(rewardkit_config, rewardkit_url).ascore(row)
    return _score_dict(result, policy)


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
    extra_keys: ClassVar[tuple[str, ...]] = ("acc",)
    """Extra keys reported per row by :meth:`run_single`. verl's reward loop needs the same
    keys on every row, so they are fixed here; a row without one reports NaN."""

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
        _refuse_unknown(verl_kwargs)
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

    # ------------------------------------------------------------- legacy interface

    def __call__(self, data: Any, return_dict: bool = False) -> torch.Tensor | dict[str, Any]:
        """Score the batch: ``reward_tensor [B, R]`` (and ``reward_extra_info`` with return_dict)."""
        rows, response_mask = self._rows(data)
        results = get_backend(self._config, self._url).score(rows)
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
        result = await get_backend(self._config, self._url).ascore(rows[-1])
        [score] = self.policy.scores([result])
        info: dict[str, Any] = {
            "score": score,
            "status": result.status.value,
            "error": result.error or "",
        }
        for key in self.extra_keys:
            info[key] = plain(result.extra.get(key, float("nan")))
        return {"reward_score": score, "reward_extra_info": info}

    @classmethod
    def assemble_rm_scores(cls, data: Any, scores: Sequence[float]) -> torch.Tensor:
        """Put each row's score on its last valid response token: ``[B, R]``."""
        response_mask = response_mask_from_attention(
            data.batch["attention_mask"], data.batch["responses"].shape[-1]
        )  # [B, R]
        return place_scores(torch.tensor(list(scores), dtype=torch.float32), response_mask)

    # ------------------------------------------------------------------ plumbing

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


def _row(data_source: str, response: str, ground_truth: Any, extra_info: Any) -> dict[str, Any]:
    return {
        "data_source": data_source,
        "response": response,
        "ground_truth": plain(ground_truth),
        "extra_info": dict(plain(extra_info) or {}),
    }


def _score_dict(result: Result, policy: FailurePolicy) -> dict[str, Any]:
    [score] = policy.scores([result])
    out = {str(k): plain(v) for k, v in result.extra.items()}
    out.update({f"component/{k}": v for k, v in result.components.items()})
    out.update(score=score, status=result.status.value, error=result.error or "")
    return out


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


def _refuse_unknown(kwargs: Mapping[str, Any]) -> None:
    unknown = sorted(set(kwargs) - _VERL_EXTRAS)
    if unknown:
        raise TypeError(
            f"unexpected keyword arguments {unknown} (check reward_kwargs); rewardkit takes "
            "rewardkit_config, rewardkit_url, on_failure, fill_score"
        )
