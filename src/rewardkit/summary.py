"""What a scoring run did, per data_source: the end-of-run summary of `rewardkit score`.

Plain text (aligned columns, nothing truncated, so it reads the same in a terminal
and in a CI log) and JSON (``--summary-json``) from the same totals::

    summary = Summary()
    for result in results:
        summary.add(result)
    print(summary.text(seconds), file=sys.stderr)

``mean`` and ``accuracy`` are over ``ok`` rows only: a failed row has no score, and
counting it as wrong would hide the failure behind a low accuracy.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rewardkit.types import Result, Status

__all__ = ["Summary", "error_reason"]

_STATUSES = [s.value for s in Status]


def error_reason(status: str, error: str | None) -> str:
    """A failure's reason with its row-specific numbers blanked, so like failures group together."""
    text = (error or "(no message)").strip().splitlines()[0] if error else "(no message)"
    text = re.sub(r"(?<![\w.])\d+(\.\d+)?", "N", text)  # row numbers, sizes; not names (gsm8k)
    return f"{status}: {text[:160]}"


@dataclass
class _Totals:
    rows: int = 0
    ok: int = 0
    score_sum: float = 0.0
    correct: int = 0
    judged: int = 0  # ok rows whose verifier reported `acc`
    degenerate: int = 0  # ok rows that ended in a loop (extra.degenerate): scored wrong
    statuses: Counter[str] = field(default_factory=Counter)

    def add(self, status: str, score: float | None, acc: Any, degenerate: bool = False) -> None:
        self.rows += 1
        self.statuses[status] += 1
        if status != Status.OK.value or score is None:
            return
        self.ok += 1
        self.score_sum += score
        self.degenerate += degenerate
        if isinstance(acc, bool):
            self.judged += 1
            self.correct += acc

    @property
    def failed(self) -> int:
        return self.rows - self.statuses[Status.OK.value]

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "mean": self.score_sum / self.ok if self.ok else None,
            "accuracy": self.correct / self.judged if self.judged else None,
            "accuracy_rows": self.judged,
            "failed": self.failed,
            "degenerate": self.degenerate,
            "statuses": {s: self.statuses[s] for s in _STATUSES},
        }


class Summary:
    """Accumulates Results (or Result rows read back from a file) per data_source."""

    def __init__(self) -> None:
        self.by_source: dict[str, _Totals] = defaultdict(_Totals)
        self.total = _Totals()
        self.reasons: Counter[str] = Counter()
        self.examples: dict[str, dict[str, Any]] = {}
        self.models: dict[str, list[float]] = {}  # reward-model component -> [sum, ok rows]
        self.tokens: Counter[str] = Counter()  # component -> API tokens, over every row

    def add(self, result: Result) -> None:
        row = result.row if isinstance(result.row, Mapping) else {}
        self._add_models(result.status.value, result.components, result.extra)
        self._add(
            row.get("data_source"),
            result.status.value,
            result.score,
            result.extra.get("acc"),
            result.error,
            result.index,
            _degenerate(result.extra),
        )

    def add_row(self, row: Mapping[str, Any], index: int) -> None:
        """Count an output row (a Result's ``to_row()``), e.g. one kept from a resumed run."""
        extra = row.get("extra")
        acc = extra.get("acc") if isinstance(extra, Mapping) else None
        score = row.get("score")
        status = str(row.get("status") or Status.ERROR.value)
        self._add_models(status, row.get("components"), extra)
        self._add(
            row.get("data_source"),
            status,
            float(score) if isinstance(score, int | float) else None,
            acc,
            row.get("error"),
            index,
            _degenerate(extra),
        )

    def _add(
        self,
        source: Any,
        status: str,
        score: float | None,
        acc: Any,
        error: Any,
        index: int,
        degenerate: bool = False,
    ) -> None:
        name = str(source) if isinstance(source, str) and source else "(none)"
        self.by_source[name].add(status, score, acc, degenerate)
        self.total.add(status, score, acc, degenerate)
        if status != Status.OK.value:
            reason = error_reason(status, str(error) if error is not None else None)
            self.reasons[reason] += 1
            self.examples.setdefault(
                reason, {"index": index, "data_source": name, "error": str(error)[:500]}
            )

    def _add_models(self, status: str, components: Any, extra: Any) -> None:
        """Reward-model components (``rm``, ``judge``, ``rm/<name>``) of ok rows, and every
        row's API tokens (``extra["<component>/tokens"]``)."""
        if status == Status.OK.value and isinstance(components, Mapping):
            for name, value in components.items():
                if _is_model(name) and isinstance(value, int | float):
                    totals = self.models.setdefault(name, [0.0, 0])
                    totals[0] += value
                    totals[1] += 1
        for key, value in extra.items() if isinstance(extra, Mapping) else ():
            if key.endswith("/tokens") and isinstance(value, int) and not isinstance(value, bool):
                self.tokens[key.removesuffix("/tokens")] += value

    def model_means(self) -> dict[str, float]:
        """Each reward model's mean component score over the ok rows that have it."""
        return {name: total / count for name, (total, count) in self.models.items()}

    @property
    def failed_share(self) -> float:
        """Share of rows that did not end ok (0.0 for no rows)."""
        return self.total.failed / self.total.rows if self.total.rows else 0.0

    def top_reasons(self, n: int = 3) -> list[dict[str, Any]]:
        return [
            {"reason": reason, "count": count, "example": self.examples[reason]}
            for reason, count in self.reasons.most_common(n)
        ]

    def to_json(
        self, seconds: float, scored: int | None = None, wall: float | None = None
    ) -> dict[str, Any]:
        """The summary as one JSON-ready object (``--summary-json``); ``scored`` and
        ``wall`` as in :meth:`text`."""
        scored = self.total.rows if scored is None else scored
        return {
            "rows": self.total.rows,
            "rows_scored": scored,
            "seconds": round(seconds, 3),
            "rows_per_s": scored / seconds if seconds > 0 else None,
            "wall_seconds": None if wall is None else round(wall, 3),
            "wall_rows_per_s": scored / wall if wall else None,
            "failed_share": self.failed_share,
            "total": self.total.as_dict(),
            "by_source": {name: t.as_dict() for name, t in sorted(self.by_source.items())},
            "top_errors": self.top_reasons(3),
            "reward_models": self.model_means(),
            "api_tokens": dict(self.tokens),
        }

    def text(self, seconds: float, scored: int | None = None, wall: float | None = None) -> str:
        """Aligned plain-text table plus the commonest error reasons; nothing is cut but
        data_source names over 200 characters.

        ``scored``: rows scored in ``seconds`` when some rows were counted without being
        scored now (kept by --resume); the rate is over those. ``wall``: the whole run's
        time, the workers' start-up included, shown beside the scoring rate (a short run
        is mostly start-up: its scoring rate alone would flatter it).
        """
        scored = self.total.rows if scored is None else scored
        rate = scored / max(seconds, 1e-9)
        kept = self.total.rows - scored
        first = f"rewardkit: {scored:,} rows in {seconds:.2f}s of scoring ({rate:,.0f} rows/s)"
        if wall is not None:
            whole = scored / max(wall, 1e-9)
            first += f"; {wall:.2f}s wall with start-up ({whole:,.0f} rows/s)"
        lines = [first + (f", {kept:,} kept from the earlier run" if kept else "")]
        header = ["data_source", "rows", "mean", "accuracy", *_STATUSES]
        body = [[_short(name), *_cells(t)] for name, t in sorted(self.by_source.items())]
        if len(self.by_source) > 1:
            body.append(["all", *_cells(self.total)])
        lines.extend(_aligned([header, *body]))
        lines.append("mean and accuracy are over ok rows only")
        if any(t.judged < t.ok for t in (self.total, *self.by_source.values())):
            lines.append(
                "accuracy 'of N': over the N ok rows whose scorer said right or wrong "
                "(a user function or a reward model says neither)"
            )
        if self.models or self.tokens:
            means = ", ".join(f"{name} {mean:.4f}" for name, mean in self.model_means().items())
            tokens = ", ".join(f"{name} {count:,}" for name, count in self.tokens.items())
            lines.append(f"reward models (mean over ok rows): {means or '-'}")
            if tokens:
                lines.append(f"API tokens: {tokens}")

        if self.total.degenerate:
            lines.append(
                f"{self.total.degenerate:,} rows degenerate (the response ends in a loop: "
                "scored as a wrong answer, extra.degenerate = 1)"
            )
        if self.total.failed:
            share = self.failed_share
            lines.append(f"{self.total.failed:,} of {self.total.rows:,} rows failed ({share:.1%})")
            lines.append("commonest failures:")
            for item in self.top_reasons(3):
                ex = item["example"]
                lines.append(f"  {item['count']:>6,} x {item['reason']}")
                lines.append(
                    f"           e.g. input row {ex['index'] + 1} ({_short(ex['data_source'])}): "
                    f"{ex['error']}"  # counted from 1, as the reasons count lines
                )
        return "\n".join(lines)


def _is_model(component: str) -> bool:
    """A reward model's component: the single section's ``rm`` or ``judge``, or ``rm/<name>``."""
    return component in ("rm", "judge") or component.startswith("rm/")


def _degenerate(extra: Any) -> bool:
    """Whether a row's extra marks its response degenerate (a number: trainers keep numbers)."""
    return isinstance(extra, Mapping) and bool(extra.get("degenerate"))


def _short(name: str, limit: int = 200) -> str:
    """A data_source as the table shows it: a made-up name of 100,000 characters would
    otherwise widen every line of the table to that (``--summary-json`` keeps it whole)."""
    return name if len(name) <= limit else name[: limit - 1] + "\u2026"


def _cells(t: _Totals) -> list[str]:
    mean = f"{t.score_sum / t.ok:.4f}" if t.ok else "-"
    accuracy = f"{t.correct / t.judged:.2%}" if t.judged else "-"
    if 0 < t.judged < t.ok:  # 100% of 1 row is not 100% of the 3 ok rows
        accuracy += f" of {t.judged:,}"
    return [f"{t.rows:,}", mean, accuracy, *[f"{t.statuses[s]:,}" for s in _STATUSES]]


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
