"""guards: the benchmark workload generator: deterministic, Sample-shaped, its example current."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from rewardkit import Sample

ROOT = Path(__file__).resolve().parents[1]


def _workload():
    """benchmarks/ is not a package: load its workload.py by path."""
    name = "_rewardkit_bench_workload"
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "workload.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


workload = _workload()


def test_batch_is_deterministic_and_grpo_shaped():
    rows = workload.make_batch(prompts=6, rollouts=8, seed=3)
    assert rows == workload.make_batch(prompts=6, rollouts=8, seed=3)
    assert rows != workload.make_batch(prompts=6, rollouts=8, seed=4)
    assert len(rows) == 48
    for group in range(6):
        members = rows[group * 8 : (group + 1) * 8]
        assert {r["ground_truth"] for r in members} == {members[0]["ground_truth"]}
        assert {r["prompt"] for r in members} == {members[0]["prompt"]}
    for row in rows:
        sample = Sample.from_row(row)
        assert sample.data_source == "lighteval/MATH"
        assert isinstance(row["extra_info"]["expected_correct"], bool)


def test_pathological_rows_replace_only_their_share():
    clean = workload.make_batch(prompts=25, rollouts=8, seed=0)
    hostile = workload.make_batch(prompts=25, rollouts=8, seed=0, pathological=0.005)
    changed = [i for i, (a, b) in enumerate(zip(clean, hostile, strict=True)) if a != b]
    assert len(changed) == 1  # round(200 * 0.005), and at least one
    row = hostile[changed[0]]
    assert row["extra_info"]["style"] == "pathological"
    assert row["extra_info"]["expected_correct"] is False


def test_shipped_example_is_what_the_generator_writes():
    shipped = ROOT / "examples" / "grpo_math.jsonl"
    rows = [json.loads(line) for line in shipped.read_text(encoding="utf-8").splitlines()]
    assert rows == workload.example_rows(prompts=16, rollouts=8, seed=7)
    assert {r["data_source"] for r in rows} == {"lighteval/MATH", "openai/gsm8k"}
    for row in rows:
        Sample.from_row(row)
