"""guards: `rewardkit report` (rewardkit.report): the page a user opens after a run, rendered in a real browser.

The rows come from a real `rewardkit score` run over the bundled GRPO example plus rows
made to trip each part of the page (failures, flags, a slow row); the HTML is checked
for what a user looks for, and headless Chromium (Debian's `chromium` package) renders
it to a screenshot. Set REWARDKIT_SCREENSHOT=docs/report.png to refresh the README's.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from _support.cli import ROOT, run_cli, score_file
from rewardkit.cli import main
from rewardkit.report import ReportBuilder, flag_response, write_report

MATH_PROMPT = (
    "What is $2+3$?\nPlease reason step by step, and put your final answer within \\boxed{}."
)
LONG_PROMPT = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips "
    "in May. How many clips did Natalia sell altogether in April and May?"
)


def demo_rows() -> list[dict]:
    """The bundled GRPO example plus one row per thing the report must point at."""
    rows = [
        json.loads(line) for line in (ROOT / "examples/grpo_math.jsonl").read_text().splitlines()
    ]
    story = " ".join(f"Step {i}: we add {i} and {i + 1} to get {2 * i + 1}." for i in range(400))
    rows += [
        # hedging: two different boxed answers, one of them right
        {
            "data_source": "lighteval/MATH",
            "prompt": MATH_PROMPT,
            "ground_truth": "5",
            "response": "It is either $\\boxed{5}$ or $\\boxed{6}$.",
        },
        # no final answer
        {
            "data_source": "openai/gsm8k",
            "prompt": LONG_PROMPT,
            "ground_truth": "72",
            "response": "I would need more information to answer.",
        },
        # degenerate repetition
        {
            "data_source": "openai/gsm8k",
            "prompt": LONG_PROMPT,
            "ground_truth": "72",
            "response": "so so so so " * 300 + "#### 72",
        },
        # the prompt copied back
        {
            "data_source": "openai/gsm8k",
            "prompt": LONG_PROMPT,
            "ground_truth": "72",
            "response": LONG_PROMPT + " #### 72",
        },
        # very long (over 4x the typical response and 2,000 characters)
        {
            "data_source": "lighteval/MATH",
            "prompt": MATH_PROMPT,
            "ground_truth": "5",
            "response": story + " So $\\boxed{5}$.",
        },
        # failures: an unknown source, a missing response
        {
            "data_source": "openai/gsm8",
            "prompt": LONG_PROMPT,
            "ground_truth": "72",
            "response": "#### 72",
        },
        {
            "data_source": "openai/gsm8k",
            "prompt": LONG_PROMPT,
            "ground_truth": "72",
            "response": None,
        },
    ]
    return rows


@pytest.fixture(scope="module")
def scored(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    folder = tmp_path_factory.mktemp("report")
    source, out, page = folder / "in.jsonl", folder / "scored.jsonl", folder / "report.html"
    source.write_text("\n".join(json.dumps(r) for r in demo_rows()) + "\n")
    proc = score_file(source, out, "--report", str(page), "reward.num_workers=2")
    assert proc.returncode == 0, proc.stderr
    return out, page, proc


def test_score_report_is_one_self_contained_page(scored) -> None:
    _, page, proc = scored
    assert f"report written to {page}" in proc.stderr
    text = page.read_text()
    # Opens offline: nothing fetched (no scripts, stylesheets, images or fonts from elsewhere).
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\((?!#)", text)
    assert not re.search(r"(src|href)=\"(https?:)?//", text)
    assert text.count("<svg") >= 4  # scores, statuses, groups, length
    for heading in [
        "Scores per data source",
        "Statuses and failures",
        "GRPO groups",
        "Response length against score",
        "Slowest rows",
        "Flagged responses",
    ]:
        assert heading in text


def test_report_points_at_failures_groups_and_flags(scored) -> None:
    out, _, _ = scored
    builder = ReportBuilder()
    for line in out.read_text().splitlines():
        builder.add(json.loads(line))
    # Failures grouped by reason, each with an example row.
    assert builder.reasons and all(r in builder.reason_examples for r in builder.reasons)
    assert any("openai/gsm8" in r for r in builder.reasons)
    assert any("response" in r for r in builder.reasons)
    # Each flag found on the row made for it.
    assert {"hedging", "no final answer", "repetition", "copied prompt"} <= set(builder.flag_counts)
    assert any("Step 399" in s.response for s in builder.very_long())
    # Every row was timed by the engine; the slowest come first.
    slow = builder.slowest()
    assert slow and all(a.elapsed_s >= b.elapsed_s for a, b in itertools.pairwise(slow))


def test_group_view_counts_zero_variance_groups(tmp_path: Path) -> None:
    # Three prompts of four rollouts: all right, all wrong, mixed. Two groups teach nothing.
    rows = []
    for prompt, scores in [("a", [1, 1, 1, 1]), ("b", [0, 0, 0, 0]), ("c", [1, 0, 1, 0])]:
        rows += [
            {
                "data_source": "s",
                "prompt": prompt,
                "response": "r",
                "status": "ok",
                "score": float(s),
                "extra": {"acc": bool(s)},
            }
            for s in scores
        ]
    rows.append(
        {
            "data_source": "s",
            "prompt": "c",
            "response": "r",
            "status": "timeout",
            "score": None,
            "error": "timed out after 10s",
        }
    )
    page = tmp_path / "r.html"
    assert write_report(rows, page) == 13
    text = page.read_text()
    assert "2 of 3 groups (67%)" in text and "8 of 12 rollouts" in text


def test_group_pass_rate_follows_the_verifiers_acc() -> None:
    # DAPO's overlong penalty lowers a right answer's score below 1; it still passed.
    builder = ReportBuilder()
    for score, acc in [(0.8, True), (1.0, True), (0.0, False), (-0.2, False)]:
        builder.add(
            {
                "data_source": "s",
                "prompt": "p",
                "response": "r",
                "status": "ok",
                "score": score,
                "extra": {"acc": acc},
            }
        )
    (stats,) = builder.group_stats().values()
    assert stats.pass_rate == 0.5 and stats.n == 4 and stats.std > 0


@pytest.mark.parametrize(
    ("response", "prompt", "extra", "expected"),
    [
        # why: two different final answers let a policy cover both and collect the reward
        ("so $\\boxed{3}$, or maybe $\\boxed{4}$", "q", {}, ["hedging"]),
        ("The answer is either 3 or 4.", "q", {}, ["hedging"]),
        # why: the same boxed answer twice is a restatement, not a hedge
        ("$\\boxed{3}$ ... so $\\boxed{3}$", "q", {}, []),
        ("", "q", {}, ["no final answer"]),
        ("no number here", "q", {"pred": None}, ["no final answer"]),
        ("ab" * 400, "q", {}, ["repetition"]),
        # why: ordinary varied prose must not look degenerate
        (" ".join(f"line {i} adds {i * 7 % 13} apples" for i in range(60)), "q", {}, []),
        (LONG_PROMPT + " 72", LONG_PROMPT, {}, ["copied prompt"]),
        ("Natalia sold 48 clips in April and 24 in May, 72 in all.", LONG_PROMPT, {}, []),
    ],
)
def test_flags(response: str, prompt: str, extra: dict, expected: list[str]) -> None:
    assert flag_response(response, prompt, extra) == expected


def _chromium() -> str | None:
    return next(
        (p for p in map(shutil.which, ["chromium", "chromium-browser", "google-chrome"]) if p), None
    )


@pytest.mark.skipif(
    _chromium() is None and not os.environ.get("CI"),
    reason="no chromium binary (apt-get install chromium); CI installs it and never skips",
)
def test_report_renders_in_headless_chromium(scored, tmp_path: Path) -> None:
    from PIL import Image

    _, page, _ = scored
    shot = tmp_path / "report.png"
    subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1100,1500",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    image = Image.open(shot).convert("RGB")
    assert image.size == (1100, 1500)
    # Rendered, not blank: the status colours and the plots' blue are on screen.
    colours = {c for _, c in image.getcolors(maxcolors=1 << 20)}
    assert len(colours) > 50

    def near(rgb: tuple[int, int, int]) -> bool:
        return any(sum(abs(a - b) for a, b in zip(c, rgb, strict=True)) < 30 for c in colours)

    assert near((0x3B, 0x6E, 0xA5)) and near((0x4C, 0x9A, 0x2A))
    if os.environ.get("REWARDKIT_SCREENSHOT"):
        image.quantize(128).save(os.environ["REWARDKIT_SCREENSHOT"], optimize=True)  # small in git


def test_report_command_reads_jsonl_and_parquet_results(
    scored, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = scored
    parquet = tmp_path / "scored.parquet"
    # re-scoring the scored rows gives a parquet file of Result rows (the command's main(),
    # in this process: the subject here is the report, not the scoring process)
    argv = ["score", str(out), "-o", str(parquet), "--no-progress", "reward.num_workers=1"]
    assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    # As a user runs it (a process of its own) on the jsonl file; in this process (the same
    # main(), without a second interpreter start-up and import) on the parquet file.
    page = tmp_path / "jsonl.html"
    proc = run_cli("report", str(out), "-o", str(page))
    assert proc.returncode == 0, proc.stderr
    assert f"report on {len(demo_rows()):,} rows written to {page}" in proc.stderr
    assert "Flagged responses" in page.read_text()
    page = tmp_path / "parquet.html"
    assert main(["report", str(parquet), "-o", str(page)]) == 0
    assert f"report on {len(demo_rows()):,} rows written to {page}" in capsys.readouterr().err
    assert "Flagged responses" in page.read_text()
    assert main(["report", str(out), "-o", str(tmp_path / "no/r.html")]) == 2
    assert capsys.readouterr().err.startswith("rewardkit: error:")


def test_report_reads_a_scored_file_with_foreign_field_types(tmp_path: Path) -> None:
    """``rewardkit report`` reads a scored file edited elsewhere, where a row's ``error``
    (or any other field) is not of the type it writes: a report, not a traceback."""
    path = tmp_path / "scored.jsonl"
    ok = {"data_source": "gsm8k", "response": "#### 4", "score": 1.0, "status": "ok"}
    odd = {"data_source": 5, "response": 3, "score": "x", "status": "error", "error": {"a": 1}}
    odd |= {"components": [1], "extra": "s", "elapsed_s": "slow"}
    path.write_text(
        json.dumps(ok) + "\n" + json.dumps(odd) + "\n"
        '{"data_source": "gsm8k", "response": "x", "score": NaN, "status": "ok"}\n'
    )
    out = tmp_path / "report.html"
    proc = run_cli("report", str(path), "-o", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "report on 3 rows" in proc.stdout + proc.stderr
    assert out.stat().st_size > 0


def test_report_on_scores_near_the_float_range_says_so_instead_of_failing(tmp_path: Path) -> None:
    """A user function may score 1e308: the histogram cannot bin it (bins of width inf),
    the group std overflowed; the report is written, its panel saying why there is no bar."""
    path = tmp_path / "scored.jsonl"
    rows = [
        {"data_source": "custom", "response": "a", "score": 1e308, "status": "ok", "extra_info": {"uid": "g"}},
        {"data_source": "custom", "response": "b", "score": 0.5, "status": "ok", "extra_info": {"uid": "g"}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "report.html"
    proc = run_cli("report", str(path), "-o", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and out.stat().st_size > 0


def test_a_trajectory_row_shows_its_messages_not_an_empty_response(tmp_path: Path) -> None:
    call = {"type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    row = {
        "data_source": "tool_call",
        "prompt": "p",
        "response": [{"role": "assistant", "content": None, "tool_calls": [call]}],
        "status": "error",
        "score": None,
        "error": "rule: timed out",
    }
    page = tmp_path / "r.html"
    assert write_report([row], page) == 1
    text = page.read_text()
    assert "get_weather" in text  # the calls are shown (a non-string response was shown as "")
