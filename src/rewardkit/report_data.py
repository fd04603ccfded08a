"""What `rewardkit report` shows, as plain data: the builder fills it, the page renders it.

:class:`~rewardkit.report.ReportBuilder` streams rows into running totals and hands
:meth:`~rewardkit.report.ReportBuilder.data` to :func:`rewardkit.report_html.render`.
Both import this module and nothing of each other but the builder's lazy call of the
renderer (matplotlib is optional), so the imports point one way.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rewardkit.groups import GroupStats

__all__ = ["FLAGS", "ReportData", "ShownRow", "SourceTotals"]

FLAGS = {
    "hedging": "more than one different final answer, or a hedge ('either ... or')",
    "no final answer": "empty response, or the verifier found no answer in it",
    "repetition": "degenerate output: the same text over and over",
    "copied prompt": "most of the response is copied from the prompt",
    "very long": "far longer than the run's typical response, or penalised as overlong",
}
"""Each flag a response can raise, with what it means (the page's legend)."""


@dataclass(frozen=True)
class ShownRow:
    """A row worth showing: where it is, what it said, why it is here."""

    index: int
    data_source: str
    status: str
    score: float | None
    response: str
    note: str
    elapsed_s: float | None = None
    ground_truth: str = ""
    """The row's ground truth as text (cut to a few hundred characters)."""
    extracted: str | None = None
    """The answer the verifier extracted (``extra.pred``), None when it reports none."""
    same_time: int = 0
    """Other rows whose ``elapsed_s`` is within a millisecond of this one's (slowest rows
    only): rows scored together in one worker task carry that task's time."""


@dataclass
class SourceTotals:
    """One data source's running totals (scores and accuracy of ok rows only)."""

    scores: list[float] = field(default_factory=list)
    components: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter[str] = field(default_factory=Counter)
    accuracy: list[bool] = field(default_factory=list)


@dataclass(frozen=True)
class ReportData:
    """Everything the page shows about a scored file."""

    rows: int
    sources: Mapping[str, SourceTotals]
    reasons: Sequence[tuple[str, int]]
    """Error reasons (numbers blanked) with their row counts, most common first."""
    reason_examples: Mapping[str, ShownRow]
    """The first row of each reason."""
    flag_counts: Mapping[str, int]
    flagged: Mapping[str, Sequence[ShownRow]]
    """A few rows per flag, in file order."""
    groups: Sequence[GroupStats]
    """Per prompt group (same data_source and extra_info.uid/group, else prompt): GRPO's view."""
    points: Sequence[tuple[int, float, str]]
    """(response length, score, data_source) of ok rows, sampled at random."""
    very_long: Sequence[ShownRow]
    """Rows far longer than the typical one, longest first."""
    slowest: Sequence[ShownRow]
    """The slowest rows, slowest first; rows of (nearly) the same time shown once."""
