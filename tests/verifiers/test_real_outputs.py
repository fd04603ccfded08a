"""guards: the math and GSM8K verifiers on real model outputs (tests/data/real_outputs), in CI.

The corpus holds outputs other projects published (MATH and GSM8K, several models), each
with its gold answer and the source's own verdict where it recorded one. The truth of a
row is a hand verdict from ``adjudicated.jsonl`` where there is one, else the source's
verdict when math-verify (called as verl's ``math_verify`` scorer calls it) agrees with
it. The targets:

- on rows where math-verify and an independent grader agree, rewardkit is wrong on at
  most 0.5% of them;
- rewardkit has no false positive beyond math-verify's own: every row it scores 1 that
  the truth calls wrong is also scored 1 by math-verify (listed by id otherwise).

The rows run through the real ``RewardLoop`` with 2 workers, as in CI. math-verify's
verdicts are read from ``math_verify.json`` (written by ``benchmarks/real_outputs.py
record``) to keep CI short; a slow test re-runs math-verify and checks the record.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from rewardkit import RewardLoop

DATA = Path(__file__).resolve().parents[1] / "data" / "real_outputs"
MAX_WRONG_WHERE_AGREED = 0.005


def _corpus() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(DATA.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    return rows


def _adjudicated() -> dict[str, bool | None]:
    lines = (DATA / "adjudicated.jsonl").read_text(encoding="utf-8").splitlines()
    return {e["id"]: e["correct"] for e in map(json.loads, filter(None, lines))}


def _recorded_math_verify() -> dict[str, bool]:
    doc = json.loads((DATA / "math_verify.json").read_text(encoding="utf-8"))
    return doc["verdicts"]


def _math_verify(row: dict[str, Any]) -> bool:
    """verl's math_verify scorer: gold boxed and read as LaTeX; prediction as Expr or LaTeX."""
    from math_verify import parse, verify
    from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig

    try:
        gold = parse("\\boxed{" + row["ground_truth"] + "}", (LatexExtractionConfig(),))
        pred = parse(row["response"], (ExprExtractionConfig(), LatexExtractionConfig()))
        return bool(gold and pred and verify(gold, pred))
    except Exception:  # verl's scorer counts any failure as 0
        return False


@pytest.fixture(scope="module")
def graded() -> list[dict[str, Any]]:
    """Each row with math-verify's verdict, rewardkit's result and the truth."""
    rows, adjudicated, recorded = _corpus(), _adjudicated(), _recorded_math_verify()
    with RewardLoop({"reward": {"num_workers": 2, "timeout_s": 10}}) as loop:
        results = loop.score(rows)
    out = []
    for row, result in zip(rows, results, strict=True):
        mv = recorded[row["id"]]
        label = row["extra_info"]["source_label"]
        if row["id"] in adjudicated:
            truth = adjudicated[row["id"]]
        else:
            truth = label if label is not None and label == mv else None
        out.append(
            {"row": row, "mv": mv, "rk": result.score == 1.0, "result": result, "truth": truth}
        )
    return out


def _shape(g: dict[str, Any]) -> str:
    row = g["row"]
    tail = row["response"][-90:].replace("\n", " ")
    return f"{row['id']} gold={row['ground_truth']!r} rewardkit={g['rk']} ...{tail!r}"


def test_corpus_is_well_formed_and_small() -> None:
    rows = _corpus()
    ids = [r["id"] for r in rows]
    assert len(rows) >= 3000 and len(set(ids)) == len(ids)
    assert sum(p.stat().st_size for p in DATA.iterdir()) < 5 * 2**20
    for r in rows:
        assert r["data_source"] in {"lighteval/MATH", "openai/gsm8k"}
        assert isinstance(r["response"], str) and isinstance(r["ground_truth"], str)
        assert r["extra_info"]["source"].count("@") == 1
        assert r["extra_info"]["source_label"] in (True, False, None)
    sources = {r["extra_info"]["source"].split("@")[0] for r in rows}
    assert len(sources) >= 4


@pytest.mark.slow
def test_recorded_math_verify_verdicts_are_what_math_verify_says() -> None:
    recorded = _recorded_math_verify()
    rows = _corpus()
    assert set(recorded) == {r["id"] for r in rows}
    differ = [r["id"] for r in rows if _math_verify(r) != recorded[r["id"]]]
    assert not differ, differ[:20]


def test_every_verdict_names_a_row_and_gives_a_reason() -> None:
    ids = {r["id"] for r in _corpus()}
    lines = (DATA / "adjudicated.jsonl").read_text(encoding="utf-8").splitlines()
    for entry in map(json.loads, lines):
        assert entry["id"] in ids, entry
        assert entry["correct"] in (True, False, None) and entry["reason"].strip(), entry


def test_every_row_gets_a_typed_result(graded: list[dict[str, Any]]) -> None:
    bad = [g for g in graded if str(g["result"].status) != "ok"]
    assert not bad, [(_shape(g), g["result"].error) for g in bad[:10]]


@pytest.mark.parametrize("family", ["lighteval/MATH", "openai/gsm8k", "all"])
def test_wrong_on_at_most_half_a_percent_where_graders_agree(
    graded: list[dict[str, Any]], family: str
) -> None:
    rows = [g for g in graded if family in ("all", g["row"]["data_source"])]
    agreed = [g for g in rows if g["truth"] is not None and g["truth"] == g["mv"]]
    wrong = [g for g in agreed if g["rk"] != g["truth"]]
    assert len(agreed) >= 1000
    share = len(wrong) / len(agreed)
    assert share <= MAX_WRONG_WHERE_AGREED, (
        f"{len(wrong)}/{len(agreed)} = {share:.2%} wrong; first ones:\n"
        + "\n".join(_shape(g) for g in wrong[:25])
    )


def test_no_false_positive_beyond_math_verify(graded: list[dict[str, Any]]) -> None:
    extra = [g for g in graded if g["truth"] is False and g["rk"] and not g["mv"]]
    assert not extra, "\n".join(_shape(g) for g in extra)
