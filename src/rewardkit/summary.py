"""Running totals per data_source, for the end-of-run table of `rewardkit score`."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from rewardkit.types import Result, Status

__all__ = ["Summary"]


@dataclass
class _Totals:
    rows: int = 0
    score_sum: float = 0.0
    scored: int = 0
    correct: int = 0
    judged: int = 0  # rows whose verifier reported `acc`
    statuses: Counter[str] = field(default_factory=Counter)

    def add(self, result: Result) -> None:
        self.rows += 1
        self.statuses[result.status.value] += 1
        if result.score is not None:
            self.score_sum += result.score
            self.scored += 1
        acc = result.extra.get("acc")
        if isinstance(acc, bool):
            self.judged += 1
            self.correct += acc


class Summary:
    """Accumulates Results; renders one row per data_source plus a total."""

    def __init__(self) -> None:
        self.by_source: dict[str, _Totals] = defaultdict(_Totals)
        self.total = _Totals()

    def add(self, result: Result) -> None:
        source = result.row.get("data_source") if hasattr(result.row, "get") else None
        self.by_source[str(source or "(none)")].add(result)
        self.total.add(result)

    def table(
        self, seconds: float
    ):  # -> rich.table.Table (imported lazily: rich is slow to import)
        from rich.table import Table

        table = Table(
            title=f"rewardkit: {self.total.rows:,} rows in {seconds:.2f}s "
            f"({self.total.rows / max(seconds, 1e-9):,.0f} rows/s)"
        )
        table.add_column("data_source", no_wrap=True)
        for column in ("rows", "mean", "accuracy", *[s.value for s in Status]):
            table.add_column(column, justify="right", no_wrap=True)
        for name, totals in sorted(self.by_source.items()):
            table.add_row(name, *_cells(totals))
        if len(self.by_source) > 1:
            table.add_row("[bold]all[/bold]", *_cells(self.total))
        return table


def _cells(t: _Totals) -> list[str]:
    mean = f"{t.score_sum / t.scored:.4f}" if t.scored else "-"
    accuracy = f"{t.correct / t.judged:.2%}" if t.judged else "-"
    return [f"{t.rows:,}", mean, accuracy, *[f"{t.statuses[s.value]:,}" for s in Status]]
