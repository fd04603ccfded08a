"""Several rewards per row, combined across a batch the ways trainers combine them.

The engine scores each row alone: its score is ``Σ_k w_k · x_k`` over its components
(``reward.aggregation: weighted_sum``, the default). Two settings need the rows of a
whole prompt group, so they run here, on a batch's Results, at the entry points that
see whole batches (``RewardLoop.score``, ``rewardkit score``, ``POST /v1/score``, the
trainer adapters' batch calls); per-sample entry points refuse them (:func:`refuse_per_sample`).

Notation: ``x_ik`` is component ``k`` of row ``i`` (``Result.components``, unweighted),
``w_k`` its weight (:func:`component_weights`), ``G`` the row's group (:func:`group_key`),
``B`` the batch. Only rows whose status is ``ok`` enter a mean or a std, and a failed
row keeps its status and its null score: a failure is not a wrong answer. ``std`` is the
sample standard deviation (Bessel's correction, ``n - 1``), as both TRL (``nanstd``) and
verl (``torch.std``) take it.

``aggregation: normalize_then_sum`` (GDPO), per component, within the group:

* ``group_norm: trl`` (TRL 1.16 ``GRPOTrainer._generate_and_score_completions``,
  ``grpo_trainer.py`` lines 2791-2796): ``z_ik = (x_ik - mean_G x_k) / (std_G x_k + 1e-4)``.
  A component that only one row of its group has gives that row ``z = 0`` (TRL's
  ``nanstd`` of one value is NaN and ``nansum`` drops the term; with one generation per
  prompt its std is 0 and ``z`` is 0 again).
* ``group_norm: verl`` (verl 0.9.1 ``compute_gdpo_outcome_advantage``, which runs
  ``compute_grpo_outcome_advantage`` per key): ``z_ik = (x_ik - mean) / (std + 1e-6)``;
  a group of one row has mean 0 and std 1, so ``z = x / (1 + 1e-6)``.
* Both: a group whose values are all equal gives ``z = 0`` exactly (computed in float64
  with ``math.fsum``; TRL's float32 mean may leave a few 1e-4 there). Then
  ``R_i = Σ_k w_k z_ik``; a component a row lacks adds nothing (TRL's ``nansum``).

``scale_rewards`` (TRL's ``GRPOConfig.scale_rewards``, ``grpo_trainer.py`` 2761-2799):
null leaves ``R`` as the score (the trainer computes advantages). Otherwise the score is
TRL's advantage:

* with ``weighted_sum`` (TRL's ``sum_then_normalize``): ``A_i = R_i - mean_G R``, divided
  by ``std_G R + 1e-4`` (``group``) or ``std_B R + 1e-4`` (``batch``) or nothing (``none``);
* with ``normalize_then_sum``: ``A_i = (R_i - mean_B R) / (std_B R + 1e-4)`` (TRL ignores
  ``scale_rewards`` there; the config accepts only ``batch`` or null with it).

A std over one value is taken as 0 (TRL: NaN, then ``nan_to_num`` gives the same 0).
verl's last GDPO step, ``masked_whiten`` over response tokens, weighs rows by length and
is verl's own: ``group_norm: verl`` takes ``scale_rewards: null``.

The score before any of this stays in ``extra["raw_score"]``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Hashable, Mapping, Sequence

from rewardkit.config import RewardSection
from rewardkit.errors import ConfigError
from rewardkit.groups import group_id
from rewardkit.groups import mean_std as _mean_std
from rewardkit.types import Result, Status

__all__ = [
    "RAW_SCORE_KEY",
    "component_logs",
    "component_names",
    "component_weights",
    "group_key",
    "needs_groups",
    "refuse_aggregated",
    "refuse_per_sample",
    "rescore",
]

RAW_SCORE_KEY = "raw_score"
"""``extra`` key holding a row's weighted sum before normalisation or scaling."""

TRL_EPSILON = 1e-4
"""TRL 1.16's ``std + 1e-4`` (grpo_trainer.py 2787, 2794, 2799)."""
VERL_EPSILON = 1e-6
"""verl 0.9.1's ``epsilon`` default of ``compute_grpo_outcome_advantage``."""


def needs_groups(section: RewardSection) -> bool:
    """Whether a row's score depends on the other rows of its batch."""
    return section.aggregation != "weighted_sum" or section.scale_rewards is not None


def refuse_per_sample(section: RewardSection, entry: str) -> None:
    """ConfigError when ``entry`` (a per-sample call) cannot honour the config's aggregation."""
    if not needs_groups(section):
        return
    key, value = (
        ("reward.aggregation", section.aggregation)
        if section.aggregation != "weighted_sum"
        else ("reward.scale_rewards", section.scale_rewards)
    )
    raise ConfigError(
        f"{key}={value} needs every row of a prompt group at once, and {entry} scores one "
        "row at a time; score whole batches (RewardLoop.score, rewardkit score, POST "
        "/v1/score, a trainer's batch call), or leave the normalisation to the trainer "
        "(TRL's multi_objective_aggregation, verl's algorithm.adv_estimator=gdpo with "
        "algorithm.gdpo_reward_keys=[component/<name>, ...])"
    )


def refuse_aggregated(result: Result, entry: str) -> None:
    """ConfigError when a row a server scored alone was aggregated there (it carries
    ``extra.raw_score``): the server's config needs whole groups, which ``entry`` (a
    per-sample call) cannot send, and its score would be a group of one's."""
    if RAW_SCORE_KEY in result.extra:
        raise ConfigError(
            f"the reward server aggregates rows by group (reward.aggregation or "
            f"reward.scale_rewards in its config), and {entry} sends one row at a time, "
            "a group of one; score whole batches, or serve a config without them"
        )


def component_weights(section: RewardSection) -> dict[str, float]:
    """Each component's weight in the sum, by name (:func:`weight_of` reads it: a tool
    reward ``tool/<name>`` weighs ``rollout_reward_weight``, another name 1.0)."""
    rm = section.reward_model.weight
    weights = {
        "rule": section.rule_weight,
        "rm": rm,
        "judge": rm,
        "group_judge": rm,
        "format": section.format_reward.weight,
        "overlong": 1.0,
    }
    weights.update({f"rm/{name}": model.weight for name, model in section.reward_models.items()})
    return weights


def weight_of(weights: Mapping[str, float], name: str, section: RewardSection) -> float:
    """``name``'s weight in :func:`component_weights`' table."""
    if name.startswith(_TOOL_PREFIX):
        return section.rollout_reward_weight
    return weights.get(name, 1.0)


_TOOL_PREFIX = "tool/"  # shaping.rollout's components: one per tool, named at run time


def component_names(section: RewardSection) -> tuple[str, ...]:
    """The components a config's rows may carry, in a fixed order (for per-row keys that
    must be the same on every row): ``rule``, then ``rm``/``judge``/``group_judge``, each
    named reward model's ``rm/<name>``, ``format``, ``overlong``. (Tool rewards, named by
    the rollout, are not known here: verl's agent keys carry their sum.)"""
    names = ["rule"]
    rm = section.reward_model
    if rm.enable:
        if rm.kind != "generative":
            names.append("rm")
        else:
            names.append("group_judge" if rm.judge.group is not None else "judge")
    names += [f"rm/{name}" for name, model in section.reward_models.items() if model.enable]
    if section.format_reward.enable:
        names.append("format")
    if section.overlong_buffer.enable:
        names.append("overlong")
    return tuple(names)


def component_logs(results: Sequence[Result], names: Sequence[str]) -> dict[str, list[float]]:
    """``component/<name>`` per row for OpenRLHF's ``extra_logs`` (the adapter's and
    ``/get_reward``'s): the unweighted component, 0.0 where a row has none. Numbers only:
    OpenRLHF turns each value into a tensor and averages it, where one NaN would hide
    every other row's value (``rewardkit_ok`` tells a failed row's 0.0 apart)."""
    return {
        f"component/{name}": [float(r.components.get(name, 0.0)) for r in results] for name in names
    }


def group_key(row: Mapping[str, object]) -> Hashable | None:
    """A row's GRPO group: ``extra_info.uid``, else ``extra_info.group``
    (:data:`~rewardkit.groups.GROUP_KEYS`), else its data source and prompt; None for a
    row that has none of them (verl's ``BatchRewardManager`` passes no prompt)."""
    named = group_id(row.get("extra_info"))
    if named is not None:
        return ("group", named)
    prompt = row.get("prompt")
    if not prompt:
        return None
    text = prompt if isinstance(prompt, str) else json.dumps(prompt, sort_keys=True, default=repr)
    return ("prompt", str(row.get("data_source")), text)


NO_GROUP = (
    "names no prompt group (extra_info.uid or extra_info.group) and has no prompt, so "
    "its group cannot be told"
)
"""Why a scored row is made ``invalid`` when its score needs its group's other rows."""


def rescore(results: Sequence[Result], section: RewardSection) -> list[Result]:
    """The batch's Results with scores aggregated as the config says (module docstring).
    With ``weighted_sum`` and no ``scale_rewards``: the Results as they are."""
    results = list(results)
    if not needs_groups(section):
        return results
    scored = []
    groups: dict[Hashable, list[int]] = {}
    for i, result in enumerate(results):
        if not result.ok or result.score is None:
            continue
        key = group_key(result.row if isinstance(result.row, Mapping) else {})
        if key is None:  # never one group of every such row: say so on the row
            results[i] = _ungrouped(result, section)
            continue
        scored.append(i)
        groups.setdefault(key, []).append(i)
    if section.aggregation == "normalize_then_sum":
        summed = _normalized_sums(results, groups, section)
    else:
        summed = {i: float(results[i].score or 0.0) for i in scored}
    final = _scaled(summed, groups, section.scale_rewards, section.aggregation)
    return [_with_score(r, final[i]) if i in final else r for i, r in enumerate(results)]


def _normalized_sums(
    results: list[Result], groups: Mapping[Hashable, list[int]], section: RewardSection
) -> dict[int, float]:
    """``R_i = Σ_k w_k z_ik`` for every scored row."""
    weights = component_weights(section)
    verl = section.group_norm == "verl"
    summed: dict[int, float] = {}
    for members in groups.values():
        names = list(dict.fromkeys(k for i in members for k in results[i].components))
        terms: dict[int, list[float]] = {i: [] for i in members}
        for name in names:
            have = [i for i in members if name in results[i].components]
            values = [float(results[i].components[name]) for i in have]
            for i, z in zip(have, _standardized(values, verl), strict=True):
                terms[i].append(weight_of(weights, name, section) * z)
        for i in members:
            summed[i] = _fsum(terms[i])  # huge weights: inf, then this row's own error
    return summed


def _standardized(values: list[float], verl: bool) -> list[float]:
    """One component's z within one group (module docstring)."""
    if len(values) == 1:
        return [values[0] / (1.0 + VERL_EPSILON)] if verl else [0.0]
    mean, std = _mean_std(values)
    if std == 0.0:
        return [0.0] * len(values)
    epsilon = VERL_EPSILON if verl else TRL_EPSILON
    return [(v - mean) / (std + epsilon) for v in values]


def _scaled(
    summed: Mapping[int, float],
    groups: Mapping[Hashable, list[int]],
    scale: str | None,
    aggregation: str,
) -> dict[int, float]:
    """TRL's advantage from the summed rewards, or the sums themselves (scale null)."""
    if scale is None:
        return dict(summed)
    if aggregation == "normalize_then_sum":  # grpo_trainer.py 2798-2799
        mean, std = _mean_std(list(summed.values()))
        return {i: (r - mean) / (std + TRL_EPSILON) for i, r in summed.items()}
    batch_std = _mean_std(list(summed.values()))[1]
    out: dict[int, float] = {}
    for members in groups.values():  # grpo_trainer.py 2765-2787
        mean, group_std = _mean_std([summed[i] for i in members])
        std = group_std if scale == "group" else batch_std
        for i in members:
            centred = summed[i] - mean
            out[i] = centred if scale == "none" else centred / (std + TRL_EPSILON)
    return out


def _fsum(values: list[float]) -> float:
    """``math.fsum``, inf where the sum leaves the float range (fsum raises there)."""
    try:
        return math.fsum(values)
    except OverflowError:
        return math.inf if sum(values) > 0 else -math.inf


def _ungrouped(result: Result, section: RewardSection) -> Result:
    key = "aggregation" if section.aggregation != "weighted_sum" else "scale_rewards"
    value = getattr(section, key)
    error = f"reward.{key}={value}: the row {NO_GROUP}"
    extra = {**result.extra, RAW_SCORE_KEY: result.score}
    return dataclasses.replace(result, status=Status.INVALID, score=None, error=error, extra=extra)


def _with_score(result: Result, score: float) -> Result:
    extra = {**result.extra, RAW_SCORE_KEY: result.score}
    if not math.isfinite(score):  # finite parts, huge weights: this row only
        error = f"aggregated score is not finite ({score}): components {dict(result.components)}"
        return dataclasses.replace(
            result, status=Status.ERROR, score=None, error=error, extra=extra
        )
    return dataclasses.replace(result, score=score, extra=extra)
