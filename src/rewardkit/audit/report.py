"""The audit's report: an aligned text table (terminal and CI log alike) and an HTML page."""

from __future__ import annotations

import html
from typing import Any

from rewardkit.audit.runner import AuditReport

__all__ = ["html_report", "text_report"]


def _columns(report: AuditReport) -> list[list[str]]:
    rows = [["family", "kind", "tried", "credited/lost", "failed"]]
    for name, tally in report.families.items():
        if not tally.tried:
            continue
        kind = "hack" if tally.hack else "benign"
        hits = f"{tally.hits} {'credited' if tally.hack else 'lost'}" if tally.hits else "0"
        rows.append([name, kind, str(tally.tried), hits, str(tally.failed or "")])
    return rows


def text_report(report: AuditReport) -> str:
    """The per-family table, then up to three examples for each family that failed its
    expectation (a credited hack, a benign rewrite that lost credit)."""
    table = _columns(report)
    widths = [max(len(row[c]) for row in table) for c in range(len(table[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in table]  # fmt: skip
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(
        f"rows audited: {report.rows_audited} of {report.rows_in}"
        + (
            f" ({report.rows_skipped} not credited by this reward when correct"
            f", {report.rows_unscored} not ok)"
            if report.rows_skipped or report.rows_unscored
            else ""
        )
    )
    lines.append(
        f"credited hacks: {report.credited}   benign rewrites that lost credit: "
        f"{report.benign_lost}   variants not ok (timeout/error): {report.failed}"
    )
    for name, tally in report.families.items():
        for example in tally.examples:
            what = "CREDITED" if tally.hack else "LOST"
            lines += [
                "",
                f"[{what}] {name}: {example['description']} (row {example['id']}, "
                f"gold {example['ground_truth']!r})",
                f"  score {example['score']} (correct original {example['original_score']}, "
                f"wrong answer {example['wrong_answer_score']})",
                "  variant: " + _one_line(example["variant"]),
            ]
        for failure in tally.failures[:1]:
            lines += [
                "",
                f"[NOT OK] {name}: {failure['description']} (row {failure['id']}): "
                f"{failure['status']}: {failure['error']}",
            ]
    return "\n".join(lines)


def _one_line(text: str, n: int = 200) -> str:
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= n else "..." + flat[-n:]


def html_report(report: AuditReport, title: str = "rewardkit audit") -> str:
    """One self-contained HTML page: the table and the examples."""
    esc = html.escape
    table = _columns(report)
    head = "".join(f"<th>{esc(c)}</th>" for c in table[0])
    body = "".join(
        "<tr" + (' class="bad"' if row[3] != "0" else "") + ">"
        + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>"
        for row in table[1:]
    )  # fmt: skip
    examples: list[str] = []
    for name, tally in report.families.items():
        for ex in tally.examples:
            examples.append(_example_html(name, tally.hack, ex))
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{esc(title)}</title><style>"
        "body{font-family:sans-serif;margin:2em;max-width:70em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em}"
        "tr.bad{background:#fdd}pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap}"
        "</style></head><body>"
        f"<h1>{esc(title)}</h1>"
        f"<p>Credited hacks: <b>{report.credited}</b>. Benign rewrites that lost credit: "
        f"<b>{report.benign_lost}</b>. Variants not ok: {report.failed}. Rows audited: "
        f"{report.rows_audited} of {report.rows_in}.</p>"
        f"<table><tr>{head}</tr>{body}</table>"
        + ("<h2>Examples</h2>" + "".join(examples) if examples else "")
        + "</body></html>\n"
    )


def _example_html(name: str, hack: bool, ex: dict[str, Any]) -> str:
    esc = html.escape
    what = "credited" if hack else "lost credit"
    return (
        f"<h3>{esc(name)} ({what}): {esc(str(ex['description']))}</h3>"
        f"<p>row {esc(str(ex['id']))}, gold {esc(repr(ex['ground_truth']))}; score "
        f"{ex['score']} (original {ex['original_score']}, wrong answer "
        f"{ex['wrong_answer_score']})</p>"
        f"<pre>{esc(ex['variant'])}</pre>"
    )
