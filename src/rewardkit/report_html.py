"""The HTML and plots of `rewardkit report` (imports matplotlib; see rewardkit.report).

:func:`render` turns a :class:`~rewardkit.report_data.ReportData` into the page: it reads
plain data and knows nothing of the builder that collected it.
"""

from __future__ import annotations

import html
import io
import itertools
from collections.abc import Sequence
from typing import Any

import matplotlib
from matplotlib.figure import Figure  # used directly: no pyplot, no global backend
from matplotlib.ticker import MaxNLocator

from rewardkit.report_data import FLAGS, ReportData, ShownRow

matplotlib.rcParams.update(
    {
        "svg.fonttype": "none",  # text stays text: small files, the browser's font
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.titlesize": 9,
    }
)

STATUS_COLORS = {"ok": "#4c9a2a", "timeout": "#e0a000", "error": "#d1453b", "invalid": "#7a5fb0"}
PALETTE = ["#3b6ea5", "#e07b39", "#4c9a2a", "#b5446e", "#7a5fb0", "#2a9d8f", "#8c6d31", "#666"]
_MAX_SOURCES = 8
_MAX_RESPONSE = 1500
_FEW_VALUES = 12  # up to this many distinct scores: one bar each, ticks on them
_WIDTH = 10.5  # inches: every plot is drawn at the page's width (main's 1100 px less padding)

CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;margin:0;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:18px 24px 60px}
h1{font-size:20px;margin:6px 0 2px}h2{font-size:16px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:4px}
.sub{color:#666;margin:0 0 12px}.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:#fff;border:1px solid #e2e4e8;border-radius:8px;padding:8px 14px;min-width:120px}
.card b{display:block;font-size:20px}.card span{color:#666;font-size:12px}
.card.bad b{color:#d1453b}.card.warn b{color:#b07800}
.plot{background:#fff;border:1px solid #e2e4e8;border-radius:8px;padding:8px;margin:8px 0;overflow-x:auto}
.plot svg{width:100%;height:auto;display:block}
table{border-collapse:collapse;background:#fff;width:100%;margin:8px 0;font-size:13px}
th,td{border:1px solid #e2e4e8;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
pre{white-space:pre-wrap;word-break:break-word;max-height:180px;overflow:auto;margin:4px 0;
background:#fafafa;border:1px solid #eee;padding:6px;font-size:12px}
.tag{display:inline-block;padding:0 6px;border-radius:4px;color:#fff;font-size:12px}
.note{color:#666;font-size:12px}.empty{color:#888;font-style:italic}
nav a{margin-right:12px;font-size:13px}
"""


def render(data: ReportData, title: str) -> str:
    sections = [
        _overview(data),
        _section("scores", "Scores per data source and component", _scores(data)),
        _section("failures", "Statuses and failures", _failures(data)),
        _section("groups", "GRPO groups (by extra_info.uid or group, else prompt)", _groups(data)),
        _section("length", "Response length against score", _length(data)),
        _section("slowest", "Slowest rows", _slowest(data)),
        _section("flagged", "Flagged responses", _flagged(data)),
    ]
    nav = " ".join(
        f'<a href="#{k}">{v}</a>'
        for k, v in [
            ("scores", "scores"),
            ("failures", "failures"),
            ("groups", "groups"),
            ("length", "length"),
            ("slowest", "slowest"),
            ("flagged", "flagged"),
        ]
    )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>"
        f"<h1>{_e(title)}</h1><nav>{nav}</nav>{''.join(sections)}</main></body></html>\n"
    )


def _section(anchor: str, heading: str, body: str) -> str:
    return f'<h2 id="{anchor}">{_e(heading)}</h2>{body}'


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return f'<div class="plot">{text[text.find("<svg") :]}</div>'


def _overview(data: ReportData) -> str:
    ok = sum(s.statuses["ok"] for s in data.sources.values())
    scores = [x for s in data.sources.values() for x in s.scores]
    acc = [a for s in data.sources.values() for a in s.accuracy]
    stats = [g for g in data.groups if g.mean is not None and g.n_scored > 1]
    wasted = sum(g.std == 0.0 for g in stats)
    failed = data.rows - ok
    flagged = sum(data.flag_counts.values())
    cards = [
        ("rows", f"{data.rows:,}", ""),
        (
            "failed (not ok)",
            f"{failed:,} ({failed / max(data.rows, 1):.1%})",
            "bad" if failed else "",
        ),
        ("mean score (ok rows)", f"{sum(scores) / len(scores):.3f}" if scores else "-", ""),
        ("accuracy (ok rows)", f"{sum(acc) / len(acc):.1%}" if acc else "-", ""),
        (
            "zero-variance groups",
            f"{wasted:,} of {len(stats):,}" + (f" ({wasted / len(stats):.0%})" if stats else ""),
            "warn" if wasted else "",
        ),
        ("flagged responses", f"{flagged:,}", "warn" if flagged else ""),
    ]
    body = "".join(
        f'<div class="card {c}"><b>{_e(v)}</b><span>{_e(k)}</span></div>' for k, v, c in cards
    )
    return f'<div class="cards">{body}</div>'


def _sources(data: ReportData) -> list[str]:
    by_size = sorted(data.sources, key=lambda s: -sum(data.sources[s].statuses.values()))
    return by_size[:_MAX_SOURCES]


def _scores(data: ReportData) -> str:
    sources = [s for s in _sources(data) if data.sources[s].scores]
    if not sources:
        return '<p class="empty">No row ended ok: no scores to show.</p>'
    named = sorted({c for s in sources for c in data.sources[s].components if c.startswith("rm/")})
    present = [
        c
        for c in ("rule", "rm", "judge", "group_judge", *named, "format", "overlong")
        if any(data.sources[s].components.get(c) for s in sources)
    ]
    if len(present) == 1 and all(
        data.sources[s].components.get(present[0], []) == data.sources[s].scores for s in sources
    ):
        present = []  # the one component is the score: one panel says it
    columns = ["score", *present]
    figure = Figure(figsize=(_WIDTH, 2.0 * len(sources) + 0.3))
    axes = figure.subplots(len(sources), len(columns), squeeze=False)
    for r, source in enumerate(sources):
        totals = data.sources[source]
        for c, column in enumerate(columns):
            ax = axes[r][c]
            values = totals.scores if column == "score" else totals.components.get(column, [])
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            plotted = bool(values) and _histogram(ax, values, PALETTE[c % len(PALETTE)])
            if not plotted:
                said = "none" if not values else "values too large to plot"
                ax.text(
                    0.5, 0.5, said, ha="center", va="center", transform=ax.transAxes, color="#999"
                )
                ax.set_xticks([])
                ax.set_yticks([])
            ax.set_title(f"{_short(source, 40)}: {column}", loc="left")
            ax.set_xlabel(column if column == "score" else f"{column} (before weighting)")
            ax.set_ylabel("ok rows")
    figure.tight_layout()
    rows = "".join(
        f"<tr><td>{_e(s)}</td><td class=n>{len(t.scores):,}</td><td class=n>{_mean(t.scores)}</td>"
        f"<td class=n>{_rate(t.accuracy)}</td></tr>"
        for s, t in sorted(data.sources.items())
    )
    table = f"<table><tr><th>data_source</th><th>ok rows</th><th>mean</th><th>accuracy</th></tr>{rows}</table>"
    return (
        _svg(figure)
        + table
        + '<p class="note">Histograms of ok rows only'
        + ("; each further column is one component before weighting" if present else "")
        + ".</p>"
    )


def _failures(data: ReportData) -> str:
    sources = _sources(data)
    statuses = ["ok", "timeout", "error", "invalid"]
    figure = Figure(figsize=(_WIDTH, 0.42 * len(sources) + 1.0))
    ax = figure.subplots()
    left = [0.0] * len(sources)
    for status in statuses:
        counts = [data.sources[s].statuses[status] for s in sources]
        ax.barh(
            [_short(s, 28) for s in sources],
            counts,
            left=left,
            color=STATUS_COLORS[status],
            label=status,
        )
        left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("rows")
    ax.set_ylabel("data_source")
    ax.legend(ncol=4, loc="lower right", bbox_to_anchor=(1, 1), frameon=False)
    figure.tight_layout()
    if not data.reasons:
        return _svg(figure) + '<p class="empty">Every row ended ok.</p>'
    rows = []
    for reason, count in data.reasons[:10]:
        ex = data.reason_examples[reason]
        rows.append(
            f"<tr><td class=n>{count:,}</td><td>{_tag(ex.status)} {_e(reason.partition(': ')[2])}</td>"
            f"<td>row {ex.index} ({_e(ex.data_source)})<br><span class=note>{_e(ex.note[:300])}</span>"
            f"{_pre(ex.response, 300)}</td></tr>"
        )
    table = (
        "<table><tr><th>rows</th><th>reason (numbers blanked)</th><th>example</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    return _svg(figure) + "<p>Top error reasons, each with its first row:</p>" + table


def _groups(data: ReportData) -> str:
    stats = [g for g in data.groups if g.mean is not None]
    multi = [g for g in stats if g.n_scored > 1]
    if not multi:
        return '<p class="empty">No prompt appears more than once: no GRPO groups to show.</p>'
    wasted = [g for g in multi if g.std == 0.0]
    wasted_rows = sum(g.n_scored for g in wasted)
    rows_in_groups = sum(g.n_scored for g in multi)
    figure = Figure(figsize=(_WIDTH, 2.6))
    ax1, ax2 = figure.subplots(1, 2)
    ax1.hist(
        [g.pass_rate for g in multi],
        bins=[i / 10 for i in range(11)],
        color=PALETTE[0],
        edgecolor="white",
    )
    ax1.set_xlabel("pass rate of the group")
    ax1.set_ylabel("groups")
    ax1.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax1.set_title("pass rate per prompt group")
    labels = ["all fail", "mixed", "all pass"]
    counts = [
        sum(g.std == 0.0 and not g.pass_rate for g in multi),
        sum(g.std != 0.0 for g in multi),
        sum(g.std == 0.0 and bool(g.pass_rate) for g in multi),
    ]
    ax2.bar(labels, counts, color=[STATUS_COLORS["error"], PALETTE[0], STATUS_COLORS["ok"]])
    ax2.set_title("groups by outcome (equal scores = no signal)")
    ax2.set_xlabel("outcome of the group's scored rows")
    ax2.set_ylabel("groups")
    ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
    figure.tight_layout()
    text = (
        f"<p><b>{len(wasted):,} of {len(multi):,} groups ({len(wasted) / len(multi):.0%})</b> "
        f"have zero score variance: their {wasted_rows:,} of {rows_in_groups:,} rollouts "
        f"({wasted_rows / max(rows_in_groups, 1):.0%}) give GRPO no signal (wasted rollouts). "
        "Groups are rows with the same data_source and extra_info.uid (else extra_info.group, "
        "else the same prompt); "
        "failed rows are left out of the statistics.</p>"
    )
    return text + _svg(figure)


def _length(data: ReportData) -> str:
    points = data.points
    if not points:
        return '<p class="empty">No scored rows.</p>'
    sources = _sources(data)
    figure = Figure(figsize=(_WIDTH, 3.2))
    ax = figure.subplots()
    for i, source in enumerate(sources):
        xs = [p[0] for p in points if p[2] == source]
        ys = [p[1] for p in points if p[2] == source]
        if not xs:
            continue  # a source whose rows all failed: no scores to place
        ax.scatter(
            xs,
            ys,
            s=8,
            alpha=0.5,
            color=PALETTE[i % len(PALETTE)],
            label=_short(source, 28),
            linewidths=0,
        )
    if max(p[0] for p in points) > 50 * max(1, min(p[0] for p in points)):
        ax.set_xscale("symlog", linthresh=100)
    ax.set_xlabel("response length (characters)")
    ax.set_ylabel("score")
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1, 0.5))
    figure.tight_layout()
    note = (
        f'<p class="note">{len(points):,} ok rows sampled at random; failed rows have no score.</p>'
    )
    return _svg(figure) + note


def _slowest(data: ReportData) -> str:
    rows = data.slowest
    if not rows:
        return '<p class="empty">No timing in these rows (elapsed_s is written by rewardkit score).</p>'
    note = (
        '<p class="note">seconds: the row\'s <code>elapsed_s</code>, the wall time from its start '
        "to its result, waiting for a worker included. In a batch of 64 rows or more, rows of "
        "rule verifiers are scored up to 32 to a worker task, and each carries its task's "
        "time: rows within a millisecond of one another show once, with how many share "
        "that time, and each one's own part of it is smaller.</p>"
    )
    return note + _rows_table(rows, [("seconds", _seconds)])


def _seconds(s: ShownRow) -> str:
    """The time, and how many rows share it (HTML)."""
    shared = (
        f"<br><span class=note>shared by {s.same_time + 1:,} rows</span>" if s.same_time else ""
    )
    return f"{s.elapsed_s:.3f}{shared}"


def _flagged(data: ReportData) -> str:
    very_long = data.very_long
    counts = dict(data.flag_counts)
    counts["very long"] = counts.get("very long", 0) + len(very_long)
    summary = "".join(
        f"<tr><td>{_e(name)}</td><td class=n>{counts.get(name, 0):,}</td><td>{_e(why)}</td></tr>"
        for name, why in FLAGS.items()
    )
    parts = [f"<table><tr><th>flag</th><th>rows</th><th>what it means</th></tr>{summary}</table>"]
    for name in FLAGS:
        shown = list(data.flagged.get(name, []))
        if name == "very long":
            shown = [*shown, *very_long][:8]
        if shown:
            parts.append(f"<h3>{_e(name)}</h3>" + _rows_table(shown, []))
    if not any(counts.values()):
        parts.append('<p class="empty">Nothing flagged.</p>')
    return "".join(parts)


def _rows_table(rows: Sequence[ShownRow], columns: list[tuple[str, Any]]) -> str:
    head = "".join(f"<th>{_e(name)}</th>" for name, _ in columns)
    body = []
    for s in rows:
        cells = "".join(f"<td class=n>{fn(s)}</td>" for _, fn in columns)  # fn gives HTML
        score = "-" if s.score is None else f"{s.score:.3f}"
        extracted = '<span class="empty">none</span>' if s.extracted is None else _code(s.extracted)
        body.append(
            f"<tr>{cells}<td class=n>{s.index}</td><td>{_e(s.data_source)}</td>"
            f"<td>{_tag(s.status)} {score}</td><td>{_code(s.ground_truth)}</td>"
            f"<td>{extracted}</td><td>{_pre(s.response, _MAX_RESPONSE)}"
            f"{'<span class=note>' + _e(s.note) + '</span>' if s.note else ''}</td></tr>"
        )
    return (
        f"<table><tr>{head}<th>row</th><th>data_source</th><th>status / score</th>"
        f"<th>ground truth</th><th>extracted answer</th><th>response</th></tr>"
        f"{''.join(body)}</table>"
    )


def _code(text: str) -> str:
    return f"<code>{_e(text)}</code>" if text else '<span class="empty">-</span>'


def _pre(text: str, limit: int) -> str:
    if len(text) > limit:
        text = text[:limit] + f"\n[... {len(text) - limit:,} more characters]"
    return f"<pre>{_e(text) or '(empty)'}</pre>"


def _tag(status: str) -> str:
    return f'<span class="tag" style="background:{STATUS_COLORS.get(status, "#666")}">{_e(status)}</span>'


def _histogram(ax: Any, values: list[float], color: str) -> bool:
    """Draw ``values``' histogram on ``ax``; False where their range leaves what a float
    can bin (a user function may score 1e308: bins of width inf): the panel says so."""
    if max(abs(v) for v in values) > _PLOTTABLE:
        return False
    ax.hist(values, bins=_bins(values), color=color, edgecolor="white", linewidth=0.4)
    if len(distinct := sorted(set(values))) <= _FEW_VALUES:
        ax.set_xticks(distinct)  # the values themselves, not -0.25 .. 1.25
    return True


_PLOTTABLE = 1e15  # past this, a bar's half-width of 0.5 is lost to rounding


def _bins(values: list[float]) -> Any:
    """20 bins, or one bar around each value when there are few (0/1 rewards: two bars,
    not two slivers at the ends of 20 bins)."""
    distinct = sorted(set(values))
    if len(distinct) == 1:
        return [distinct[0] - 0.5, distinct[0] + 0.5]
    if len(distinct) > _FEW_VALUES:
        return 20
    gap = min(b - a for a, b in itertools.pairwise(distinct))
    half = min(0.4 * gap, 0.1 * (distinct[-1] - distinct[0]))
    return [edge for v in distinct for edge in (v - half, v + half)]


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.4f}" if values else "-"


def _rate(flags: list[bool]) -> str:
    return f"{sum(flags) / len(flags):.1%}" if flags else "-"


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
