"""guards: rewardkit.groups: per-prompt group statistics, against hand-computed values."""

from __future__ import annotations

import math

import pytest

from rewardkit.groups import GroupStats, group_stats, summarize_groups
from rewardkit.types import Result, Status


def test_scores_grouped_in_order_of_first_appearance():
    stats = group_stats([1.0, 0.0, 1.0, 1.0, None, 0.5], ["a", "a", "b", "b", "c", "c"])
    assert list(stats) == ["a", "b", "c"]
    a, b, c = stats["a"], stats["b"], stats["c"]
    assert (a.n, a.n_failed, a.mean, a.pass_rate) == (2, 0, 0.5, 0.5)
    assert a.std == pytest.approx(math.sqrt(0.5))  # sample std of {0, 1}
    assert b == GroupStats(n=2, n_failed=0, mean=1.0, std=0.0, pass_rate=1.0)
    assert c == GroupStats(n=2, n_failed=1, mean=0.5, std=0.0, pass_rate=0.0)
    assert c.n_scored == 1


def test_results_use_acc_and_skip_failures():
    results = [
        Result(0, Status.OK, score=0.9, extra={"acc": True}),  # penalised, still correct
        Result(1, Status.OK, score=1.0, extra={"acc": False}),
        Result(2, Status.TIMEOUT, error="hard limit"),
        Result(3, Status.OK, score=1.0),
    ]
    stats = group_stats(results, [7, 7, 7, 7])
    group = stats[7]
    assert (group.n, group.n_failed, group.pass_rate) == (4, 1, pytest.approx(2 / 3))
    assert group.mean == pytest.approx(2.9 / 3)


def test_a_group_with_no_score_has_none_statistics():
    stats = group_stats([None, float("nan")], ["p", "p"])
    assert stats["p"] == GroupStats(n=2, n_failed=2, mean=None, std=None, pass_rate=None)


def test_equal_scores_have_exactly_zero_std():
    assert group_stats([0.1, 0.1, 0.1], [0, 0, 0])[0].std == 0.0


def test_pass_threshold():
    stats = group_stats([-1.0, 1.0, 0.5], ["g"] * 3, pass_threshold=0.5)
    assert stats["g"].pass_rate == pytest.approx(2 / 3)


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="3 results but 2 group ids"):
        group_stats([1.0, 0.0, 1.0], ["a", "b"])


def test_summary_metrics():
    stats = group_stats([1.0, 0.0, 1.0, 1.0, None, 0.5, None], ["a", "a", "b", "b", "c", "c", "d"])
    metrics = summarize_groups(stats)
    assert metrics == pytest.approx(
        {
            "groups/n": 4.0,
            "groups/failed_rows": 2.0,
            "groups/mean_pass_rate": 0.5,  # (0.5 + 1 + 0) / 3 scored groups
            "groups/mean_std": math.sqrt(0.5) / 3,
            "groups/frac_zero_std": 2 / 3,
            "groups/frac_all_pass": 1 / 3,
            "groups/frac_none_pass": 1 / 3,
        }
    )
    assert summarize_groups({}, prefix="g") == {"g/n": 0.0, "g/failed_rows": 0.0}


def test_statistics_of_scores_near_the_float_range_raise_nothing():
    from rewardkit.groups import group_stats_of, mean_std

    assert mean_std([1e200, 0.0]) == pytest.approx((5e199, 1e200 / math.sqrt(2)))
    assert mean_std([1.7e308, 1.7e308]) == (1.7e308, 0.0)
    mean, std = mean_std([1.7e308, -1.7e308])
    assert mean == 0.0 and std == math.inf  # past the range: inf, never OverflowError
    stats = group_stats_of([(1e308, True), (0.5, False)])
    assert stats.mean == pytest.approx(5e307) and math.isfinite(stats.std or 0.0)
