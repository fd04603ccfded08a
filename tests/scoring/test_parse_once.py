"""guards: RewardEngine.score_into parses each row of a large batch once, spread or not."""

from __future__ import annotations

from typing import Any

import pytest

from _support.parse_child import real_rows
from rewardkit.config import RewardConfig
from rewardkit.scoring import spread as spread_module
from rewardkit.scoring.engine import RewardEngine
from rewardkit.types import BadRow, Result, Sample, Status

# Rows a spread task cannot take: the engine itself must score them.
NOT_SPREADABLE: list[Any] = [
    {"data_source": "math", "response": "\\boxed{1}", "ground_truth": None},
    {"data_source": "no-such-source", "response": "1", "ground_truth": "1"},
    {"data_source": "math", "response": "x" * 200_000 + "\\boxed{1}", "ground_truth": "1"},
    {"data_source": "math", "response": 12, "ground_truth": "1"},  # fails to parse
    BadRow("not json"),
]


def _fields(result: Result) -> tuple[Any, ...]:
    return (result.index, result.status, result.score, result.error, result.components,
            result.extra)  # fmt: skip


async def _score_counting_parses(
    rows: list[Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Result], dict[str, int], int]:
    """Score ``rows`` in one batch on a 2-worker engine, counting Sample.from_row calls
    (the real parser runs; the count is taken around it)."""
    parses = 0
    parse = Sample.from_row

    def counted(row: Any, **options: Any) -> Sample:
        nonlocal parses
        parses += 1
        return parse(row, **options)

    config = RewardConfig.model_validate({"reward": {"num_workers": 2}})
    engine = await RewardEngine.create(config)
    monkeypatch.setattr(Sample, "from_row", counted)
    try:
        results = await engine.score_many(rows)
    finally:
        monkeypatch.undo()
        await engine.close()
    return results, engine.stats, parses


async def test_rows_a_large_batch_cannot_spread_are_parsed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = (NOT_SPREADABLE * 20)[:96]  # a batch large enough to spread, no row spreadable
    assert len(rows) >= spread_module.SPREAD_MIN_ROWS
    results, stats, parses = await _score_counting_parses(rows, monkeypatch)
    bad_rows = sum(isinstance(row, BadRow) for row in rows)  # never parsed: already failed
    assert parses == len(rows) - bad_rows
    assert stats["spread"] == 0 and stats["rows"] == len(rows)
    assert {r.status for r in results} == {Status.INVALID, Status.OK}  # the long row: whole


async def test_a_mixed_large_batch_parses_each_row_once_with_the_results_of_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = real_rows(120)
    for at in range(0, len(rows), 12):
        rows[at:at] = NOT_SPREADABLE[at // 12 % len(NOT_SPREADABLE) :][:1]
    results, stats, parses = await _score_counting_parses(rows, monkeypatch)
    bad_rows = sum(isinstance(row, BadRow) for row in rows)
    assert parses == len(rows) - bad_rows
    assert 0 < stats["spread"] < len(rows) and stats["rows"] == len(rows)
    config = RewardConfig.model_validate({"reward": {"num_workers": 2}})
    engine = await RewardEngine.create(config)
    try:
        alone = [await engine.score_row(i, row) for i, row in enumerate(rows)]
    finally:
        await engine.close()
    assert [_fields(r) for r in results] == [_fields(r) for r in alone]
