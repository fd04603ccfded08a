"""Statistics per prompt group: what GRPO users look at.

GRPO samples several responses per prompt and normalises each reward by its group's
mean and std, so a group whose responses all score the same teaches nothing. These
helpers show that at a glance::

    stats = group_stats(results, group_ids=[row["uid"] for row in rows])
    metrics = summarize_groups(stats)   # {"groups/frac_zero_std": 0.4, ...}

Failed rows (a :class:`~rewardkit.Result` that is not ``ok``, or a ``None`` score)
are counted in ``n_failed`` and left out of ``mean``/``std``/``pass_rate``: a failure
is not a wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from rewardkit.types import Result

__all__ = [
    "GROUP_KEYS",
    "GroupStats",
    "group_id",
    "group_stats",
    "group_stats_of",
    "mean_std",
    "summarize_groups",
]

GROUP_KEYS = ("uid", "group")
"""The ``extra_info`` keys that name a row's prompt group, first found wins: verl's
``uid``, then ``group`` (the bundled examples' key)."""


@dataclass(frozen=True, slots=True)
class GroupStats:
    """One prompt group's scores.

    ``n`` counts every row of the group, ``n_failed`` those without a score. ``mean``,
    ``std`` (sample std, ddof=1, as GRPO normalises with; 0.0 for one score) and
    ``pass_rate`` are over the scored rows, and None when there are none.
    """

    n: int
    n_failed: int
    mean: float | None
    std: float | None
    pass_rate: float | None

    @property
    def n_scored(self) -> int:
        return self.n - self.n_failed


def group_id(extra_info: object) -> Hashable | None:
    """The group a row's ``extra_info`` names (:data:`GROUP_KEYS`), or None when it names
    none (then rows are grouped by data_source and prompt)."""
    if not isinstance(extra_info, Mapping):
        return None
    for key in GROUP_KEYS:
        value = extra_info.get(key)
        if value is not None:
            return value if isinstance(value, Hashable) else repr(value)
    return None


def group_stats(
    results_or_scores: Sequence[Result | float | None],
    group_ids: Sequence[Hashable],
    *,
    pass_threshold: float = 1.0,
) -> dict[Hashable, GroupStats]:
    """Per-group statistics, keyed by group id in order of first appearance.

    A row passes when its Result's ``extra["acc"]`` is true (verl's accuracy flag,
    which survives penalties such as overlong shaping) or, lacking it, when its score
    is at least ``pass_threshold``.
    """
    if len(results_or_scores) != len(group_ids):
        raise ValueError(
            f"got {len(results_or_scores)} results but {len(group_ids)} group ids; "
            "they must pair up one to one"
        )
    members: dict[Hashable, list[tuple[float, bool] | None]] = {}
    for item, group in zip(results_or_scores, group_ids, strict=True):
        members.setdefault(group, []).append(_score_and_pass(item, pass_threshold))
    return {group: group_stats_of(rows) for group, rows in members.items()}


def summarize_groups(
    stats: Mapping[Hashable, GroupStats], prefix: str = "groups"
) -> dict[str, float]:
    """Flatten group statistics into scalar metrics for a trainer's logger.

    ``frac_zero_std``: groups whose scores are all equal (no GRPO signal);
    ``frac_all_pass`` / ``frac_none_pass``: solved by every / no response;
    ``mean_pass_rate``, ``mean_std``; ``failed_rows``. Groups without any score count
    only toward ``n`` and ``failed_rows``.
    """
    scored = [s for s in stats.values() if s.mean is not None]
    metrics = {
        f"{prefix}/n": float(len(stats)),
        f"{prefix}/failed_rows": float(sum(s.n_failed for s in stats.values())),
    }
    if scored:
        count = len(scored)
        metrics.update(
            {
                f"{prefix}/mean_pass_rate": sum(s.pass_rate or 0.0 for s in scored) / count,
                f"{prefix}/mean_std": sum(s.std or 0.0 for s in scored) / count,
                f"{prefix}/frac_zero_std": sum(s.std == 0.0 for s in scored) / count,
                f"{prefix}/frac_all_pass": sum(s.pass_rate == 1.0 for s in scored) / count,
                f"{prefix}/frac_none_pass": sum(s.pass_rate == 0.0 for s in scored) / count,
            }
        )
    return metrics


def _score_and_pass(item: Result | float | None, threshold: float) -> tuple[float, bool] | None:
    """(score, passed) for a scored row; None for a failed one."""
    if isinstance(item, Result):
        if not item.ok or item.score is None:
            return None
        acc = item.extra.get("acc")
        passed = bool(acc) if acc is not None else item.score >= threshold
        return item.score, passed
    if item is None:
        return None
    score = float(item)
    if math.isnan(score):  # TRL's marker for "no reward"
        return None
    return score, score >= threshold


def group_stats_of(rows: Sequence[tuple[float, bool] | None]) -> GroupStats:
    """One group's statistics from its rows' ``(score, passed)``, None for a failed row."""
    scored = [row for row in rows if row is not None]
    n_failed = len(rows) - len(scored)
    if not scored:
        return GroupStats(n=len(rows), n_failed=n_failed, mean=None, std=None, pass_rate=None)
    mean, std = mean_std([score for score, _ in scored])
    pass_rate = sum(passed for _, passed in scored) / len(scored)
    return GroupStats(n=len(rows), n_failed=n_failed, mean=mean, std=std, pass_rate=pass_rate)


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample std (ddof=1) in float64; for one value or equal ones, that value
    and exactly 0.0 (summing equal floats may round).

    Never raises: values so large that their sum or squares leave the float range (a
    user function may return 1e200) are scaled down first, so the mean of finite values
    is finite and a std past the range is inf; a row whose score then divides into
    something not finite gets an error of its own (``aggregate``), and its neighbours
    keep theirs."""
    if not values:
        return 0.0, 0.0
    if min(values) == max(values):
        return values[0], 0.0
    size = max(abs(v) for v in values)
    if size > _LARGE:  # fsum and ** raise OverflowError past the range: scale first
        mean, std = mean_std([v / size for v in values])
        return mean * size, std * size
    mean = math.fsum(values) / len(values)
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


_LARGE = 1e150  # squares of values up to this stay in range, and sums of many of them
