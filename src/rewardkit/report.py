"""`rewardkit report`: one self-contained HTML page about a scored file.

    rewardkit report scored.jsonl -o report.html
    rewardkit score rollouts.jsonl -o scored.jsonl --report report.html

What a user checks after a run, at a glance: how rewards are distributed per data
source and component, which rows failed and why (with an example each), which GRPO
prompt groups teach nothing (every response scored the same), how length relates to
score, which rows were slow, and which responses look like reward hacking or
degenerate output. Plots are matplotlib SVG inlined in the page: it opens offline.

The builder streams: :meth:`ReportBuilder.add` keeps running totals, a bounded
sample of points and the few rows worth showing, so memory stays bounded on large files.
:meth:`ReportBuilder.data` hands them, as :mod:`rewardkit.report_data`, to
:mod:`rewardkit.report_html` (imported only to render: matplotlib is optional).
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import json
import math
import random
import re
import reprlib
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from rewardkit.errors import InputError, RewardkitError
from rewardkit.groups import GroupStats, group_id, group_stats_of
from rewardkit.io import BadRow, decode_result_row, write_text
from rewardkit.report_data import FLAGS, ReportData, ShownRow, SourceTotals
from rewardkit.summary import error_reason

__all__ = ["FLAGS", "ReportBuilder", "flag_response", "write_report"]

_T = TypeVar("_T")

_SAMPLE_POINTS = 5000  # points kept for the length/score scatter
_KEEP = 8  # example rows kept per flag / per error reason / slowest rows
_HEDGES = re.compile(
    r"\b(the answer (is|could be) either|could be either|either \S+ or \S+|"
    r"i'?m not sure|i am not sure|one of these)\b",
    re.IGNORECASE,
)
_SAME_TIME_S = 0.001  # rows within this of each other's elapsed_s show once among the slowest
_TRUTH_CHARS = 300  # of a ground truth shown (code rows carry whole test suites)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def flag_response(response: str, prompt: str, extra: Mapping[str, Any]) -> list[str]:
    """The FLAGS a response raises by itself (``very long`` needs the whole run: see the builder)."""
    flags = []
    boxed = {b.strip() for b in _BOXED.findall(response)}
    if len(boxed) > 1 or _HEDGES.search(response[-2000:]):
        flags.append("hedging")
    if not response.strip() or ("pred" in extra and extra["pred"] in (None, "")):
        flags.append("no final answer")
    if _repetitive(response):
        flags.append("repetition")
    if _copied(response, prompt):
        flags.append("copied prompt")
    return flags


def _repetitive(text: str) -> bool:
    """Compresses to under a tenth of its size: real reasoning does not (measured about 0.3-0.5)."""
    if len(text) < 400:
        return False
    data = text[:20_000].encode("utf-8", "replace")
    return len(zlib.compress(data, 1)) / len(data) < 0.1


def _trajectory_text(response: Any) -> str:
    """A trajectory response (chat messages) as the report shows it: its JSON text."""
    if not isinstance(response, list | dict):
        return ""
    try:
        return json.dumps(response, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return ""


def _copied(response: str, prompt: str) -> bool:
    """At least half of the response's 6-word runs appear verbatim in the prompt."""
    words = response.split()
    if len(words) < 12 or not prompt:
        return False
    prompt_runs = _runs(prompt)
    runs = [tuple(words[i : i + 6]) for i in range(len(words) - 5)]
    return sum(run in prompt_runs for run in runs) >= len(runs) / 2


@functools.lru_cache(maxsize=256)  # a GRPO group shares its prompt: built once per group
def _runs(prompt: str) -> frozenset[tuple[str, ...]]:
    words = prompt.split()
    return frozenset(tuple(words[i : i + 6]) for i in range(len(words) - 5))


class ReportBuilder:
    """Accumulates Result rows (``Result.to_row()`` or rows read from a scored file)."""

    def __init__(self, seed: int = 0) -> None:
        self.rows = 0
        self.sources: dict[str, SourceTotals] = defaultdict(SourceTotals)
        self.reasons: Counter[str] = Counter()
        self.reason_examples: dict[str, ShownRow] = {}
        self.flag_counts: Counter[str] = Counter()
        self.flagged: dict[str, list[ShownRow]] = defaultdict(list)
        # (source, prompt digest) -> (score, passed) per row, None for a failed row
        self._groups: dict[tuple[str, bytes], list[tuple[float, bool] | None]] = {}
        self._points: list[tuple[int, float, str]] = []  # (length, score, source), sampled
        self._lengths: list[int] = []  # sampled, for the typical length
        self._longest: list[tuple[int, int, ShownRow]] = []  # min-heap by length
        # [elapsed_s, index, row, rows within _SAME_TIME_S of it], at most _KEEP
        self._slowest: list[list[Any]] = []
        self._rng = random.Random(seed)

    def add(self, row: Mapping[str, Any]) -> None:
        row = decode_result_row(row)
        index = self.rows
        self.rows += 1
        source = str(row.get("data_source") or "(none)")
        status = str(row.get("status") or "error")
        score = row.get("score") if isinstance(row.get("score"), int | float) else None
        score = float(score) if score is not None and status == "ok" else None
        score = score if score is not None and math.isfinite(score) else None
        raw_response, raw_extra = row.get("response"), row.get("extra")
        response = raw_response if isinstance(raw_response, str) else _trajectory_text(raw_response)
        extra: Mapping[str, Any] = raw_extra if isinstance(raw_extra, Mapping) else {}
        shown = ShownRow(
            index,
            source,
            status,
            score,
            response,
            "",
            _elapsed(row),
            ground_truth=_truth_text(row.get("ground_truth")),
            extracted=None if extra.get("pred") is None else str(extra["pred"]),
        )
        self._count(source, status, score, row, extra)
        if status != "ok":
            error = row.get("error")  # text in our files; anything in a file edited elsewhere
            reason = error_reason(status, None if error is None else str(error))
            self.reasons[reason] += 1
            if reason not in self.reason_examples:
                self.reason_examples[reason] = _with_note(shown, str(row.get("error")))
        self._group(row, source, score, extra)
        self._sample(len(response), score, source)
        self._flag(shown, _prompt_text(row.get("prompt")), extra)
        if shown.elapsed_s is not None:
            self._keep_slow(shown.elapsed_s, shown)

    def _keep_slow(self, elapsed: float, shown: ShownRow) -> None:
        """Keep the _KEEP slowest times. Rows scored together in one worker task (a large
        batch's rule rows, 32 to a task) all carry the task's time: a row within
        _SAME_TIME_S of a kept one is counted with it, not shown again."""
        kept = self._slowest
        if len(kept) == _KEEP and elapsed < kept[-1][0] - _SAME_TIME_S:
            return
        for entry in kept:
            if abs(entry[0] - elapsed) <= _SAME_TIME_S:
                entry[3] += 1
                return
        kept.append([elapsed, shown.index, shown, 0])
        kept.sort(key=lambda e: -e[0])
        del kept[_KEEP:]

    def _count(
        self, source: str, status: str, score: float | None, row: Mapping[str, Any], extra: Any
    ) -> None:
        totals = self.sources[source]
        totals.statuses[status] += 1
        if status != "ok" or score is None:
            return
        totals.scores.append(float(score))
        components = row.get("components")
        for name, value in components.items() if isinstance(components, Mapping) else []:
            if isinstance(value, int | float):
                totals.components[name].append(float(value))
        if isinstance(extra.get("acc"), bool):
            totals.accuracy.append(extra["acc"])

    def _group(self, row: Mapping[str, Any], source: str, score: float | None, extra: Any) -> None:
        uid = group_id(row.get("extra_info"))  # extra_info.uid, else extra_info.group
        text = f"uid:{uid!r}" if uid is not None else _prompt_text(row.get("prompt"))
        key = (source, hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=12).digest())
        acc = extra.get("acc")
        # Passed as verl counts it: the verifier's acc (it survives overlong shaping), else score >= 1.
        passed = bool(acc) if isinstance(acc, bool) else score is not None and score >= 1.0
        self._groups.setdefault(key, []).append(None if score is None else (score, passed))

    def _sample(self, length: int, score: float | None, source: str) -> None:
        """Reservoir samples: every row has the same chance to be plotted."""
        self._reservoir(self._lengths, length)
        if score is not None:
            self._reservoir(self._points, (length, score, source))

    def _reservoir(self, bucket: list[_T], item: _T) -> None:
        if len(bucket) < _SAMPLE_POINTS:
            bucket.append(item)
            return
        slot = self._rng.randrange(self.rows)
        if slot < _SAMPLE_POINTS:
            bucket[slot] = item

    def _flag(self, shown: ShownRow, prompt: str, extra: Mapping[str, Any]) -> None:
        flags = flag_response(shown.response, prompt, extra)
        if extra.get("overlong") is True:
            flags.append("very long")
        for name in flags:
            self.flag_counts[name] += 1
            if len(self.flagged[name]) < _KEEP:
                self.flagged[name].append(_with_note(shown, FLAGS[name]))
        if "very long" not in flags:
            _keep_top(self._longest, (len(shown.response), shown.index, shown))

    # ------------------------------------------------------------------ results

    def group_stats(self) -> dict[tuple[str, bytes], GroupStats]:
        """Per prompt group (same data_source and extra_info.uid/group, else the same
        prompt): GRPO's view."""
        return {key: group_stats_of(rows) for key, rows in self._groups.items()}

    def data(self) -> ReportData:
        """What the page shows, from the rows added so far."""
        return ReportData(
            rows=self.rows,
            sources=self.sources,
            reasons=self.reasons.most_common(),
            reason_examples=self.reason_examples,
            flag_counts=self.flag_counts,
            flagged=self.flagged,
            groups=list(self.group_stats().values()),
            points=self._points,
            very_long=self.very_long(),
            slowest=self.slowest(),
        )

    def very_long(self) -> list[ShownRow]:
        """Rows over 4x the typical length (and 2,000 characters) seen by the builder."""
        if not self._lengths:
            return []
        typical = sorted(self._lengths)[len(self._lengths) // 2]
        limit = max(4 * typical, 2000)
        rows = sorted(
            (s for length, _, s in self._longest if length > limit), key=lambda s: -len(s.response)
        )
        return [_with_note(s, f"{len(s.response):,} characters; typical {typical:,}") for s in rows]

    def slowest(self) -> list[ShownRow]:
        """The slowest times, slowest first: one row each, with how many share it."""
        return [replace(s, same_time=n) for _, _, s, n in self._slowest]

    def write(self, path: str | Path, *, title: str = "rewardkit report") -> None:
        """Render the page and write it; OutputError if it cannot be written."""
        write_text(path, _render(self, title), what="report")


def write_report(rows: Iterable[Any], path: str | Path, *, title: str = "rewardkit report") -> int:
    """Build the report from scored rows and write it; the number of rows read.

    InputError, before anything is written, when the first row carries neither ``status``
    nor ``score``: the file was never scored, and every row would read as a failure.
    """
    builder = ReportBuilder()
    for row in rows:
        if isinstance(row, Mapping):
            if not builder.rows and "status" not in row and "score" not in row:
                raise InputError(
                    "the rows are not scored (no 'status' or 'score' field): score them "
                    "first, e.g. rewardkit score INPUT -o scored.jsonl --report report.html"
                )
            builder.add(row)
        elif not isinstance(row, BadRow):  # the input's fault: not the report's path
            raise RewardkitError(f"scored rows must be objects, got {type(row).__name__}")
    builder.write(path, title=title)
    return builder.rows


def _keep_top(heap: list[Any], item: tuple[Any, int, ShownRow]) -> None:
    if len(heap) < _KEEP:
        heapq.heappush(heap, item)
    elif item[:2] > heap[0][:2]:
        heapq.heapreplace(heap, item)


def _with_note(shown: ShownRow, note: str) -> ShownRow:
    return replace(shown, note=note)


def _elapsed(row: Mapping[str, Any]) -> float | None:
    value = row.get("elapsed_s")
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


_TRUTH_REPR = reprlib.Repr()  # bounded: nesting, items and lengths cut with "..."
_TRUTH_REPR.maxlevel, _TRUTH_REPR.maxdict, _TRUTH_REPR.maxlist = 3, 8, 8
_TRUTH_REPR.maxstring = _TRUTH_REPR.maxother = 120


def _truth_text(truth: Any) -> str:
    """A ground truth as text, in time bounded by what is shown: a code row's truth is a
    whole test suite, and every row passes here."""
    if truth is None:
        return ""
    text = truth[: _TRUTH_CHARS + 1] if isinstance(truth, str) else _TRUTH_REPR.repr(truth)
    return text if len(text) <= _TRUTH_CHARS else text[:_TRUTH_CHARS] + "…"


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        return "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, Mapping))
    return ""


# ---------------------------------------------------------------------- rendering


def _render(report: ReportBuilder, title: str) -> str:
    try:
        from rewardkit import report_html
    except ImportError as exc:  # matplotlib missing
        raise RewardkitError(
            f"the report needs matplotlib: pip install 'rewardkit[report]' ({exc})"
        ) from exc
    return report_html.render(report.data(), title)
