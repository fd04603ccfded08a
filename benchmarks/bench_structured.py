"""Structured outputs: rows/s of ``tool_call`` and ``json_schema`` against the naive way.

    .venv/bin/python benchmarks/bench_structured.py            # writes the BENCHMARKS.md section
    .venv/bin/python benchmarks/bench_structured.py --quick    # a small batch, no file written

The workload is a GRPO batch (seeded): 256 prompts x 8 rollouts per family, rollouts of
one prompt often repeating one another, as a policy's do. ``tool_call`` rows mix Hermes
``<tool_call>`` text (with ``<think>``) and OpenAI assistant messages, right calls,
near misses and malformed blocks; ``json_schema`` rows mix bare and fenced documents
against 16 schemas of a few properties (one with a ``pattern``), valid and not.

The naive way is the plain loop a reward function would write, in this process:

- tool_call: the conclusion after ``</think>``, every ``<tool_call>`` block ``json.loads``-ed
  (OpenAI arguments too), compared with ``==`` to the expected calls in order;
- json_schema: the conclusion (a fence's content, else the whole), ``json.loads``, then
  ``jsonschema.validate(document, schema)`` (which checks the schema on every call, as a
  loop calling the library's one-call API does).

rewardkit is ``RewardLoop({"reward": {"num_workers": W}})``, warmed with one call first.
Both columns are wall time for the whole batch; the agreement column counts the rows
where the naive loop's verdict equals rewardkit's: on this workload both should read
every row alike (they part on hostile rows, ``5`` against ``5.0``, ``true`` against
``1``, a call inside ``<think>``, which the verifiers' test tables hold instead).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from _report import write_section  # noqa: E402

SECTION = "## Structured outputs: tool_call and json_schema (benchmarks/bench_structured.py)"

Row = dict[str, Any]

# ------------------------------------------------------------------ the workload

_TOOLS = [
    ("get_weather", {"city": ["Paris", "Rome", "Oslo"], "days": [1, 3, 7]}),
    ("search", {"query": ["rewardkit", "grpo", "jsonschema"], "limit": [5, 10]}),
    ("convert", {"amount": [10, 2.5, 100], "from": ["EUR", "USD"], "to": ["JPY", "GBP"]}),
]


def _call(rng: random.Random) -> dict[str, Any]:
    name, params = rng.choice(_TOOLS)
    return {"name": name, "arguments": {k: rng.choice(v) for k, v in params.items()}}


def _hermes(calls: list[dict[str, Any]], think: bool) -> str:
    blocks = "".join(f"<tool_call>\n{json.dumps(c)}\n</tool_call>\n" for c in calls)
    head = "<think>The user wants data; I will call the tool.</think>\n" if think else ""
    return head + blocks


def _openai(calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for c in calls
        ],
    }


def tool_call_rows(prompts: int, rollouts: int, seed: int = 0) -> list[Row]:
    rng = random.Random(seed)
    rows = []
    for _ in range(prompts):
        expected = [_call(rng) for _ in range(rng.choice((1, 1, 2)))]
        pool = []
        for _ in range(4):  # a policy's rollouts repeat a few answers
            kind = rng.random()
            if kind < 0.5:
                calls = expected
            elif kind < 0.8:
                calls = [_call(rng) for _ in expected]  # near misses
            else:
                calls = [*expected, _call(rng)]  # an extra call
            if rng.random() < 0.5:
                pool.append(_hermes(calls, think=rng.random() < 0.5))
            else:
                pool.append(_openai(calls))
        pool.append('<tool_call>{"name": "search", "arguments": {"query": "x"</tool_call>')
        for _ in range(rollouts):
            rows.append(
                {"data_source": "tool_call", "response": rng.choice(pool), "ground_truth": expected}
            )
    return rows


def _schema(rng: random.Random, index: int) -> dict[str, Any]:
    props: dict[str, Any] = {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
            "required": ["city"],
        },
    }
    if index == 0:
        props["zip"] = {"type": "string", "pattern": "^[0-9]{5}$"}
    keys = rng.sample(sorted(props), k=rng.randint(2, len(props)))
    return {
        "type": "object",
        "properties": {k: props[k] for k in keys},
        "required": keys[: rng.randint(1, len(keys))],
        "additionalProperties": False,
    }


def _document(schema: dict[str, Any], rng: random.Random, valid: bool) -> dict[str, Any]:
    values = {
        "name": "Ada",
        "age": rng.randint(0, 99),
        "tags": ["a", "b"],
        "address": {"city": "Paris", "zip": "75001"},
        "zip": "75001",
    }
    doc = {k: values[k] for k in schema["properties"]}
    if not valid:
        doc[rng.choice(sorted(doc))] = None if rng.random() < 0.5 else -1
    return doc


def json_schema_rows(prompts: int, rollouts: int, seed: int = 0) -> list[Row]:
    rng = random.Random(seed)
    schemas = [_schema(rng, i) for i in range(16)]
    rows = []
    for _ in range(prompts):
        schema = rng.choice(schemas)
        pool = []
        for _ in range(4):
            text = json.dumps(_document(schema, rng, valid=rng.random() < 0.6), indent=1)
            shape = rng.random()
            if shape < 0.4:
                pool.append(text)
            elif shape < 0.8:
                pool.append(f"<think>Fill the fields.</think>\nHere it is:\n```json\n{text}\n```")
            else:
                pool.append(text + "\nHope this helps!")
        for _ in range(rollouts):
            rows.append(
                {"data_source": "json_schema", "response": rng.choice(pool), "ground_truth": schema}
            )
    return rows


# ------------------------------------------------------------------ the naive way


def _conclusion(text: str) -> str:
    return text.rsplit("</think>", 1)[-1]


def naive_tool_call(row: Row) -> float:
    response, expected = row["response"], row["ground_truth"]
    try:
        if isinstance(response, dict):
            calls = [
                {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                for c in response["tool_calls"]
            ]
        else:
            text = _conclusion(response)
            calls = []
            for chunk in text.split("<tool_call>")[1:]:
                body, closed, _ = chunk.partition("</tool_call>")
                if not closed:
                    return 0.0
                calls.append(json.loads(body))
        return float(calls == expected)
    except (ValueError, KeyError, TypeError):
        return 0.0


def naive_json_schema(row: Row) -> float:
    import jsonschema

    text = _conclusion(row["response"]).strip()
    if "```" in text:
        text = text.split("```")[-2].removeprefix("json")
    try:
        jsonschema.validate(json.loads(text), row["ground_truth"])
        return 1.0
    except (ValueError, jsonschema.ValidationError):
        return 0.0


# ------------------------------------------------------------------ the runs


def timed(fn: Callable[[], list[float | None]]) -> tuple[list[float | None], float]:
    started = time.perf_counter()
    scores = fn()
    return scores, time.perf_counter() - started


def run(prompts: int, rollouts: int, workers: int) -> list[dict[str, Any]]:
    from rewardkit import RewardLoop

    out = []
    families = (
        ("tool_call", tool_call_rows(prompts, rollouts), naive_tool_call),
        ("json_schema", json_schema_rows(prompts, rollouts), naive_json_schema),
    )
    with RewardLoop({"reward": {"num_workers": workers}}) as loop:
        for name, rows, naive in families:
            loop.score(rows[:64])  # warm: workers forked, imports done
            ours, ours_s = timed(lambda rows=rows: [r.score for r in loop.score(rows)])
            theirs, theirs_s = timed(lambda rows=rows, naive=naive: [naive(r) for r in rows])
            agree = sum(a == b for a, b in zip(ours, theirs, strict=True))
            out.append(
                {
                    "family": name,
                    "rows": len(rows),
                    "rewardkit_rows_s": len(rows) / ours_s,
                    "naive_rows_s": len(rows) / theirs_s,
                    "agree": agree,
                    "mean": sum(s or 0.0 for s in ours) / len(rows),
                }
            )
    return out


def table(results: list[dict[str, Any]], workers: int) -> str:
    lines = [
        f"| family | rows | rewardkit ({workers} workers) rows/s | naive loop rows/s | speed-up | agreement | mean score |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['family']} | {r['rows']:,} | {r['rewardkit_rows_s']:,.0f} | "
            f"{r['naive_rows_s']:,.0f} | {r['rewardkit_rows_s'] / r['naive_rows_s']:.1f}x | "
            f"{r['agree']:,} of {r['rows']:,} | {r['mean']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="32 prompts, no file written")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    prompts = 32 if args.quick else 256
    results = run(prompts, 8, args.workers)
    text = table(results, args.workers)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    machine = f"{len(os.sched_getaffinity(0))} cores ({platform.machine()}), Python {platform.python_version()}"
    print(text)
    print(f"\nload average {load}; {machine}")
    if not args.quick:
        date = datetime.now(UTC).strftime("%Y-%m-%d")
        section = (
            f"{SECTION}\n\n`.venv/bin/python benchmarks/bench_structured.py`, {date}, {machine}, "
            f"load average {load}. {prompts} prompts x 8 rollouts per family; the naive loop "
            "is one process (see the script's docstring for both sides).\n\n" + text + "\n"
        )
        write_section(SECTION, section, ROOT / "BENCHMARKS.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
