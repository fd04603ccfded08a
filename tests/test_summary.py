"""guards: the end-of-run summary (rewardkit.summary): degenerate rows counted, wall time beside the scoring rate."""

from __future__ import annotations

from rewardkit.summary import Summary
from rewardkit.types import Result, Status


def _rows() -> list[Result]:
    math = {"data_source": "lighteval/MATH"}
    return [
        Result(0, Status.OK, 0.0, extra={"acc": False, "degenerate": 1}, row=math),
        Result(1, Status.OK, 1.0, extra={"acc": True}, row=math),
        Result(2, Status.TIMEOUT, error="rule: timed out after 5s", row={"data_source": "x"}),
    ]


def test_degenerate_rows_are_counted_per_source_and_in_all() -> None:
    summary = Summary()
    for result in _rows():
        summary.add(result)
    doc = summary.to_json(1.0)
    assert doc["total"]["degenerate"] == 1 and doc["by_source"]["x"]["degenerate"] == 0
    assert doc["by_source"]["lighteval/MATH"]["degenerate"] == 1
    assert "1 rows degenerate" in summary.text(1.0)


def test_rows_read_back_count_their_degenerate_flag_too() -> None:
    summary = Summary()
    for result in _rows():
        summary.add_row(result.to_row(), result.index)
    assert summary.total.degenerate == 1


def test_the_wall_time_with_start_up_stands_beside_the_scoring_rate() -> None:
    summary = Summary()
    for result in _rows():
        summary.add(result)
    first = summary.text(0.05, wall=5.0).splitlines()[0]
    assert first == (
        "rewardkit: 3 rows in 0.05s of scoring (60 rows/s); 5.00s wall with start-up (1 rows/s)"
    )
    doc = summary.to_json(0.05, wall=5.0)
    assert doc["wall_seconds"] == 5.0 and doc["wall_rows_per_s"] == 3 / 5.0
    assert summary.to_json(0.05)["wall_seconds"] is None
    assert "wall" not in summary.text(0.05).splitlines()[0]


def test_a_failure_example_counts_input_rows_from_one() -> None:
    summary = Summary()
    for result in _rows():
        summary.add(result)
    assert "e.g. input row 3 (x): rule: timed out after 5s" in summary.text(1.0)


def test_an_accuracy_over_fewer_rows_than_the_ok_ones_says_over_how_many() -> None:
    """One ok row of three said right or wrong (a user function says neither): its 100% is
    not the accuracy of the three."""
    custom = {"data_source": "custom"}
    summary = Summary()
    summary.add(Result(0, Status.OK, 1.0, extra={"acc": True}, row=custom))
    summary.add(Result(1, Status.OK, 0.2, row=custom))
    summary.add(Result(2, Status.OK, 0.7, row=custom))
    text = summary.text(1.0)
    assert "100.00% of 1" in text and "accuracy 'of N'" in text
    assert summary.to_json(1.0)["total"]["accuracy_rows"] == 1
