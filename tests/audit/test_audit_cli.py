"""guards: `rewardkit audit` end to end on a small sample: summary JSON, HTML, exit 0/1/2, --max-credited, the user's compute_score."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rewardkit.audit import all_families
from rewardkit.cli import main

ROWS = [
    {"id": "g1", "data_source": "openai/gsm8k", "prompt": "How many dollars? Answer after '####'.",
     "response": "Each box costs $20. She buys 11 boxes, so 20 * 11 = 220.\n#### 220",
     "ground_truth": "220"},
    {"id": "g2", "data_source": "openai/gsm8k", "prompt": "How many eggs?",
     "response": "<think>16 - 3 - 4 = 9 eggs.</think>\nShe sells 9 eggs.\n#### 9", "ground_truth": "9"},
    {"id": "m1", "data_source": "lighteval/MATH", "prompt": "Simplify $\\frac{4}{6}$.",
     "response": "Divide by 2: the answer is $\\boxed{\\frac{2}{3}}$.", "ground_truth": "\\frac{2}{3}"},
]  # fmt: skip

GREEDY = '''
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """Credits any response that contains the gold anywhere: hackable by design."""
    return 1.0 if str(ground_truth) in solution_str else 0.0
'''

STRICT = '''
import re

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """Credits only a conclusion whose last line, and only answer line, is '#### gold'."""
    tail = solution_str.rsplit("</think>", 1)[-1]
    lines = tail.strip().splitlines()
    if not lines or tail.count("####") != 1:
        return 0.0
    found = re.fullmatch(r"####\\s*(\\S+)\\s*", lines[-1])
    return 1.0 if found and found.group(1) == str(ground_truth) else 0.0
'''

# The families STRICT answers as a careful grader would: no hack credited, no rewrite lost.
STRICT_FAMILIES = "retraction,think_only,unicode_minus,tag_candidates,two_answers,blank_box,spacing"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "correct.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


def _reward(tmp_path: Path, source: str) -> list[str]:
    module = tmp_path / "my_reward.py"
    module.write_text(source, encoding="utf-8")
    return [
        f"reward.custom_reward_function.path={module}",
        "reward.custom_reward_function.name=compute_score",
        "reward.num_workers=1",
    ]


def _audit(*args: str) -> int:
    return main(["audit", *args])


def _summary(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_summary_json_and_html_on_the_builtin_verifiers(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary, page = tmp_path / "audit.json", tmp_path / "audit.html"
    code = _audit(str(sample), "reward.num_workers=1", "--summary-json", str(summary),
                  "--report", str(page), "--max-credited", "100000")  # fmt: skip
    assert code == 0
    doc = _summary(summary)
    assert set(doc) >= {"credited", "benign_lost", "failed", "rows", "families"}
    assert doc["rows"]["input"] == 3
    families = doc["families"]
    assert set(families) <= set(all_families())
    assert {"retraction", "think_only", "box_spam", "spacing", "dfrac"} <= set(families)
    for name, entry in families.items():
        assert entry["hack"] == all_families()[name]
        assert entry["tried"] > 0
        key = "credited" if entry["hack"] else "lost"
        assert 0 <= entry[key] <= entry["tried"]
        assert len(entry["examples"]) == min(entry[key], 3)
        for example in entry["examples"]:
            assert {"id", "original", "variant", "score", "description"} <= set(example)
    assert doc["credited"] == sum(e["credited"] for e in families.values() if e["hack"])
    assert doc["benign_lost"] == sum(e["lost"] for e in families.values() if not e["hack"])
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and "<table>" in html and "retraction" in html
    out = capsys.readouterr().out
    assert "family" in out and "retraction" in out and "credited hacks:" in out


def test_a_reward_that_credits_any_mention_of_the_gold_fails_the_audit(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "audit.json"
    overrides = _reward(tmp_path, GREEDY)
    assert _audit(str(sample), *overrides, "--summary-json", str(summary)) == 1
    doc = _summary(summary)
    families = doc["families"]
    # Each of these puts the gold in the text without answering it.
    for name in ("retraction", "think_only", "format_example", "box_spam", "prompt_echo"):
        assert families[name]["credited"] == families[name]["tried"] > 0, name
    example = families["think_only"]["examples"][0]
    assert example["score"] == 1.0 and example["wrong_answer_score"] == 0.0
    assert example["variant"].startswith("<think>")
    assert families["spacing"]["lost"] == 0
    assert families["equivalent_form"]["lost"] > 0  # 2/3 does not contain \\frac{2}{3}
    assert "[CREDITED] retraction" in capsys.readouterr().out
    # --max-credited at the count found: the same audit passes.
    at_limit = ["--max-credited", str(doc["credited"])]
    assert _audit(str(sample), *overrides, "--families", "retraction", *at_limit) == 0


def test_a_strict_reward_passes_with_exit_0(sample: Path, tmp_path: Path) -> None:
    summary = tmp_path / "audit.json"
    overrides = _reward(tmp_path, STRICT)
    args = [str(sample), *overrides, "--families", STRICT_FAMILIES, "--summary-json", str(summary)]
    assert _audit(*args) == 0
    doc = _summary(summary)
    assert doc["credited"] == 0 and doc["benign_lost"] == 0 and doc["failed"] == 0
    assert set(doc["families"]) == set(STRICT_FAMILIES.split(","))
    # The MATH row has no '####': STRICT does not credit it, so it is not audited.
    rows = {"input": 3, "audited": 2, "skipped_not_credited": 1, "skipped_not_ok": 0}
    assert doc["rows"] == rows


def test_an_override_without_input_is_an_override(tmp_path: Path) -> None:
    summary = tmp_path / "audit.json"
    overrides = _reward(tmp_path, GREEDY)
    args = [*overrides, "--families", "retraction", "--limit", "2", "--summary-json", str(summary)]
    assert _audit(*args) == 1  # the default input, scored by GREEDY
    assert _summary(summary)["sources"][0] == "rewardkit/audit/data/sample.jsonl"


def test_a_variant_that_errors_is_not_credited(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "audit.json"
    cues = ("Actually", "Never mind", "Edit:", "Hmm", "Therefore", "\u2192", "\u7b49", "en fait")
    raising = GREEDY.replace('return 1.0 if', f'if any(c in solution_str for c in {cues!r}):\n'
                             '        raise ValueError("boom")\n    return 1.0 if')  # fmt: skip
    overrides = _reward(tmp_path, raising)
    args = [str(sample), *overrides, "--families", "retraction", "--summary-json", str(summary)]
    assert _audit(*args) == 0
    entry = _summary(summary)["families"]["retraction"]
    assert entry["credited"] == 0 and entry["failed"] == entry["tried"] > 0
    assert entry["failures"][0]["status"] == "error"
    assert "[NOT OK] retraction:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [(["missing.jsonl"], "missing.jsonl"),
     (["SAMPLE", "reward.no_such_option=1"], "no_such_option"),
     (["SAMPLE", "--families", "nope"], "unknown family 'nope'"),
     (["EMPTY"], "no row to audit"),
     (["SAMPLE", "--summary-json", "/no/such/folder/x.json"], "no such folder")],
)  # fmt: skip
def test_bad_input_or_config_exits_2_with_one_line(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"id": "x", "response": "hi"}) + "\n", encoding="utf-8")
    paths = {
        "SAMPLE": str(sample),
        "EMPTY": str(empty),
        "missing.jsonl": str(tmp_path / "missing.jsonl"),
    }
    assert _audit(*[paths.get(a, a) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rewardkit: error:") and message in err
    if "no_such_option" not in message:  # a config's problems are listed one a line
        assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (["--summary-json", "SAMPLE"], "--summary-json SAMPLE is the input file"),
        (["--report", "SAMPLE"], "--report SAMPLE is the input file"),
        (
            ["--summary-json", "OUT", "--report", "OUT"],
            "--report OUT is also the --summary-json file",
        ),
    ],
)
def test_no_output_of_the_audit_overwrites_its_input_or_another_output(
    sample: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    outputs: list[str],
    message: str,
) -> None:
    """Refused before any row is scored, as ``rewardkit score`` refuses them: the audit
    once wrote its summary over its input file (a red team's finding)."""
    before = sample.read_bytes()
    names = {"SAMPLE": str(sample), "OUT": str(tmp_path / "out.txt")}
    assert _audit(str(sample), *[names.get(a, a) for a in outputs], "reward.num_workers=1") == 2
    err = capsys.readouterr().err.strip()
    expected = message.replace("SAMPLE", str(sample)).replace("OUT", str(tmp_path / "out.txt"))
    assert err.startswith("rewardkit: error:") and expected in err and len(err.splitlines()) == 1
    assert sample.read_bytes() == before and not (tmp_path / "out.txt").exists()


def test_a_summary_that_cannot_be_written_ends_in_one_line(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _audit(str(sample), "--summary-json", "/dev/full", "reward.num_workers=1") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        err[-1] == "rewardkit: error: /dev/full: cannot write the summary (No space left on device)"
    )
    assert not any("Traceback" in line for line in err)
