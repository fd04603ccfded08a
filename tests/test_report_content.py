"""guards: what the report's page says: labelled plots at full width, one panel per fact, the rows' answers and times, GRPO groups by uid/group.

Built from rows in memory with the real builder and renderer (matplotlib); the SVG that
matplotlib writes is read back as XML to see each plot's axes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from rewardkit.groups import group_id
from rewardkit.report import ReportBuilder
from rewardkit.report_html import render

SVG = "{http://www.w3.org/2000/svg}"


def _row(i: int, score: float, **fields: Any) -> dict[str, Any]:
    """A scored gsm8k row as `rewardkit score` writes it."""
    row: dict[str, Any] = {
        "id": f"r{i}",
        "data_source": "openai/gsm8k",
        "prompt": f"question {i // 4}",
        "response": f"so it is #### {int(score * 72)}",
        "ground_truth": "72",
        "status": "ok",
        "score": score,
        "components": {"rule": score},
        "extra": {"acc": score == 1.0, "pred": str(int(score * 72))},
        "elapsed_s": 0.01,
    }
    row.update(fields)
    return row


def _page(rows: list[dict[str, Any]]) -> str:
    builder = ReportBuilder()
    for row in rows:
        builder.add(row)
    return render(builder.data(), "test")


def _axes(page: str) -> list[dict[str, tuple[list[str], list[str]]]]:
    """Per plot panel: {axis id: (its label texts, its tick texts)}."""
    found = []
    for svg in re.findall(r"<svg.*?</svg>", page, re.S):
        for axes in ET.fromstring(svg).iter(f"{SVG}g"):
            if not re.fullmatch(r"axes_\d+", axes.get("id", "")):
                continue
            panel = {}
            for axis in axes:
                if axis.get("id", "").startswith("matplotlib.axis"):
                    labels = [
                        "".join(g.itertext()).strip()
                        for g in axis
                        if g.get("id", "").startswith("text_")
                    ]
                    ticks = [
                        "".join(g.itertext()).strip()
                        for g in axis
                        if re.match(r"[xy]tick_", g.get("id", ""))
                    ]
                    panel[axis.get("id", "")] = (labels, ticks)
            found.append(panel)
    return found


MIXED = [_row(i, 1.0 if i % 3 else 0.0) for i in range(12)] + [
    {**_row(12, 0.0, status="error", error="rule: boom", extra={}), "score": None},
]


def test_every_plot_axis_has_a_label_and_whole_number_counts() -> None:
    panels = _axes(_page(MIXED))
    assert len(panels) == 5  # one score panel, the status bars, two group plots, length
    for panel in panels:
        assert len(panel) == 2
        for labels, ticks in panel.values():
            assert len(labels) == 1 and labels[0], panel
            if labels[0] in {"ok rows", "rows", "groups"}:  # counts
                assert ticks and all(re.fullmatch(r"\d+", t) for t in ticks), (labels, ticks)
    score_axis = panels[0]["matplotlib.axis_1"]
    assert score_axis == (["score"], ["0", "1"])  # 0/1 rewards: a bar on each, no -0.25


def test_one_component_equal_to_the_score_is_not_a_second_panel() -> None:
    page = _page(MIXED)
    assert "openai/gsm8k: score" in page and "openai/gsm8k: rule" not in page
    shaped = [
        _row(i, s + 0.1, components={"rule": s, "format": 0.1})
        for i, s in enumerate([0.0, 1.0, 1.0])
    ]
    page = _page(shaped)
    for column in ("score", "rule", "format"):
        assert f"openai/gsm8k: {column}" in page


def test_plots_are_drawn_at_the_pages_width() -> None:
    page = _page(MIXED)
    widths = [float(w) for w in re.findall(r'<svg[^>]*\swidth="([\d.]+)pt"', page)]
    assert len(widths) == 4 and all(w > 700 for w in widths), widths  # 10.5 in, less margins
    assert ".plot svg{width:100%" in page


def _cells(page: str, section: str) -> str:
    start = page.index(f'id="{section}"')
    end = page.find("<h2", start)
    return page[start : end if end > 0 else None]


def test_flagged_and_slowest_rows_show_the_ground_truth_and_the_extracted_answer() -> None:
    rows = [
        _row(0, 0.0, response="either \\boxed{70} or \\boxed{71}", extra={"pred": "70, 71"}),
        _row(1, 0.0, response="", extra={"pred": None}, elapsed_s=2.5),
    ]
    page = _page(rows)
    for section in ("flagged", "slowest"):
        cells = _cells(page, section)
        assert "<th>ground truth</th><th>extracted answer</th>" in cells
        assert "<code>72</code>" in cells
    assert "<code>70, 71</code>" in _cells(page, "flagged")  # hedging
    slowest = _cells(page, "slowest")
    assert slowest.index("2.500") < slowest.index("0.010")
    assert '<span class="empty">none</span>' in slowest  # the verifier found no answer


def test_slowest_rows_show_a_shared_time_once_with_how_many_share_it() -> None:
    # 40 rows of one worker task end within a fraction of a millisecond of each other;
    # two rows have times of their own.
    rows = [_row(i, 1.0, elapsed_s=0.0741 + i * 1e-6) for i in range(40)]
    rows += [_row(40, 1.0, elapsed_s=0.5), _row(41, 1.0, elapsed_s=0.2)]
    builder = ReportBuilder()
    for row in rows:
        builder.add(row)
    slowest = builder.slowest()
    assert [round(s.elapsed_s or 0, 4) for s in slowest] == [0.5, 0.2, 0.0741]
    assert [s.same_time for s in slowest] == [0, 0, 39]
    cells = _cells(render(builder.data(), "t"), "slowest")
    assert "shared by 40 rows" in cells and "elapsed_s" in cells


def test_grpo_groups_follow_extra_info_uid_then_group_then_prompt() -> None:
    assert group_id({"uid": "a", "group": 3}) == "a"
    assert group_id({"group": 3}) == 3
    assert group_id({"other": 1}) is None and group_id(None) is None
    # Four rollouts of one problem whose prompts differ (a sampled system line, say):
    # extra_info.group makes them one group, as the bundled examples mark them.
    rows = [
        _row(i, 1.0 if i < 2 else 0.0, prompt=f"variant {i}", extra_info={"group": 7})
        for i in range(4)
    ]
    rows += [_row(4 + i, 1.0, prompt="same", extra_info={}) for i in range(2)]
    rows += [_row(6, 1.0, prompt="same", extra_info={"uid": "u1"})]
    builder = ReportBuilder()
    for row in rows:
        builder.add(row)
    sizes = sorted(g.n for g in builder.group_stats().values())
    assert sizes == [1, 2, 4]
    page = render(builder.data(), "t")
    assert "extra_info.uid (else extra_info.group, else the same prompt)" in page


def test_a_ground_truth_that_is_a_test_suite_is_shown_cut() -> None:
    suite = {"inputs": ["1 2\n" * 5000] * 300, "outputs": ["3\n"] * 300}
    rows = [_row(0, 0.0, ground_truth=suite, response="", extra={}, elapsed_s=1.0)]
    rows.append(_row(1, 0.0, ground_truth={"target": ["Paris"]}, elapsed_s=2.0))
    builder = ReportBuilder()
    for row in rows:
        builder.add(row)
    shown = {s.index: s.ground_truth for s in builder.slowest()}
    assert shown[0].startswith("{'inputs': [") and len(shown[0]) <= 301
    assert shown[1] == "{'target': ['Paris']}"
