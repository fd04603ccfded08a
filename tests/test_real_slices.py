"""guards: the real-output slices of the benchmark: deterministic, truth carried right, shapes as documented."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    """benchmarks/ is not a package: load a module of it by path."""
    sys.path.insert(0, str(ROOT / "benchmarks"))  # real_slices imports real_outputs
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


slices = _load("real_slices")
ro = sys.modules["real_outputs"]
ROWS = ro.load_corpus()
TRUTHS = slices.corpus_truths(ROWS)
BY_ID = {row["id"]: row for row in ROWS}


def test_degenerate_rows_are_deterministic_seeded_and_a_few_percent():
    made = slices.degenerate_rows(ROWS)
    assert made == slices.degenerate_rows(ROWS)
    assert made != slices.degenerate_rows(ROWS, seed=1)
    assert 0.01 * len(ROWS) <= len(made) <= 0.02 * len(ROWS)
    assert {r["extra_info"]["loop"] for r in made} == set(slices.LOOPS)
    assert len({r["id"] for r in made}) == len(made)


def test_a_degenerate_row_is_wrong_and_ends_in_its_loop():
    for row in slices.degenerate_rows(ROWS):
        source = BY_ID[row["extra_info"]["from"]]
        assert slices.slice_truth(row) is False  # also a loop of the right answer
        assert row["ground_truth"] == source["ground_truth"]
        head = row["response"].split("\n")[0]
        assert source["response"].startswith(head)  # the real response, then the loop
        tail = row["response"][-slices.LOOP_CHARS[0] :]
        assert len(set(re.findall(r"\w+|[^\w\s]", tail))) <= 20, tail[-200:]
        assert len(row["response"]) >= len(source["response"]) // 2 + slices.LOOP_CHARS[0]


def test_a_loop_of_the_gold_repeats_the_gold_boxed():
    gold_loops = [
        r for r in slices.degenerate_rows(ROWS) if r["extra_info"]["loop"] == "boxed gold"
    ]
    assert gold_loops
    for row in gold_loops:
        assert row["response"].count("\\boxed{" + row["ground_truth"] + "}") >= 100


def test_prose_rows_carry_the_source_truth_and_lose_every_box_and_tag():
    made, fate = slices.prose_rows(ROWS, TRUTHS)
    assert sum(fate.values()) == len(ROWS) and fate["rewritten"] == len(made)
    assert len(made) >= 0.85 * len(ROWS)  # the dropped rows are counted, and few
    truth_of = dict(zip((r["id"] for r in ROWS), TRUTHS, strict=True))
    for row in made:
        assert "\\boxed" not in row["response"]
        assert "<answer>" not in row["response"] and "</answer>" not in row["response"]
        assert slices.slice_truth(row) is truth_of[row["extra_info"]["from"]]
    assert made == slices.prose_rows(ROWS, TRUTHS)[0]


@pytest.mark.parametrize(
    ("response", "expected", "why"),
    [
        ("So it is $\\boxed{\\frac{1}{2}}$.", "So it is $\\frac{1}{2}$.", "rewritten"),
        ("</think> <answer> 40 </answer>", "</think>   40  ", "rewritten"),
        ("<answer>$\\boxed{A,B}$</answer>", " $A,B$ ", "rewritten"),
        ("It is \\boxed{\\boxed{7}}.", "It is {7}.", "rewritten"),  # braces show 7
        ("Blank: \\boxed{} then 5", "Blank:  then 5", "rewritten"),
        ("x = 3, y = 4", None, "already prose"),
        ("<answer>3</answer> User: ... <answer>4</answer>", None, "dropped: several answer tags"),
        ("\\boxed{3} or \\boxed{4}", None, "dropped: several boxed values in the conclusion"),
        ("</think> \\boxed{3} and so \\boxed{3}", "</think> 3 and so 3", "rewritten"),
        ("the total is\\boxed{5}", None, "dropped: an unboxed value would run into its neighbour"),
        ("\\boxed{12}3 apples", None, "dropped: an unboxed value would run into its neighbour"),
        ("\\boxed 5", None, "dropped: a box without a brace group"),
        ("\\boxed{\\frac{1}{2}", None, "dropped: a box without a brace group"),
        ("\\boxed{\\{1, 2\\}}", "\\{1, 2\\}", "rewritten"),  # escaped braces are no group
    ],
)
def test_the_prose_rewrite_keeps_the_meaning_or_drops_the_row(response, expected, why):
    assert slices.rewrite_as_prose(response) == (expected, why)
