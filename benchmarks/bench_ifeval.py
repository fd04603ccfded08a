"""IFEval benchmark: rewardkit (2 workers) against the reference checker's loop in one process.

    .venv/bin/python benchmarks/bench_ifeval.py             # the 541 published GPT-4 rows, 3 rounds
    .venv/bin/python benchmarks/bench_ifeval.py --quick     # smoke: 40 rows, 1 round
    .venv/bin/python benchmarks/bench_ifeval.py --limit 100 --mode loose
    .venv/bin/python benchmarks/bench_ifeval.py --write     # also rewrite its BENCHMARKS.md section

The rows are Google's published IFEval prompts with GPT-4's responses
(``tests/data/ifeval/official_gpt4.jsonl.gz``), each with the official verdicts. Contenders:

- **reference, one process**: the naive way, google-research's ``evaluation_lib`` loop
  (``test_instruction_following_strict``/``_loose``) over the checkers rewardkit uses
  (if-verifiable's copy), one row after another: per instruction, build the checker
  from its arguments and call ``check_following`` on the response (loose: on its 8
  variants, until one passes);
- **rewardkit**: ``RewardLoop`` with ``num_workers: 2`` and the result cache off
  (``cache_size: 0``), so every row is checked; the loop is started and a row scored
  before the clock starts (workers fork with the checkers loaded).

Each round times both on the same rows; the table shows the best round of each (the
steadier figure on a shared host) and how many per-instruction verdicts equal the
official ones. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from rewardkit import RewardLoop  # noqa: E402
from rewardkit.verifiers._ifeval_checks import loose_variants, warm_up  # noqa: E402

DATA = ROOT / "tests" / "data" / "ifeval" / "official_gpt4.jsonl.gz"
SECTION = "## IFEval (benchmarks/bench_ifeval.py)"


def load(limit: int | None) -> list[dict[str, Any]]:
    with gzip.open(DATA, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    return rows[:limit] if limit else rows


def reference(rows: list[dict[str, Any]], loose: bool) -> list[list[bool]]:
    """The official evaluation loop, in this process, over if-verifiable's checkers."""
    from if_verifiable.ifeval.instructions_registry import INSTRUCTION_DICT

    out = []
    for row in rows:
        response = row["response"]
        texts = loose_variants(response) if loose else (response,)
        verdicts = []
        for instruction_id, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
            checker = INSTRUCTION_DICT[instruction_id](instruction_id)
            checker.build_description(**kwargs)
            verdicts.append(any(t.strip() and checker.check_following(t) for t in texts))
        out.append(verdicts)
    return out


def samples(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "data_source": "google/IFEval",
            "response": row["response"],
            "ground_truth": {
                "instruction_id_list": row["instruction_id_list"],
                "kwargs": row["kwargs"],
            },
        }
        for row in rows
    ]


def agreement(got: list[list[bool]], rows: list[dict[str, Any]], mode: str) -> tuple[int, int]:
    pairs = [
        (g, o)
        for mine, row in zip(got, rows, strict=True)
        for g, o in zip(mine, row[mode], strict=True)
    ]
    return sum(g == o for g, o in pairs), len(pairs)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    rows = load(args.limit)
    loose = args.mode == "loose"
    warm_up()  # the reference's imports and model loads, as rewardkit's fork server does
    config = {
        "reward": {
            "num_workers": 2,
            "cache_size": 0,
            "timeout_s": 60,
            "verifiers": {"ifeval": {"mode": args.mode}},
        }
    }
    times: dict[str, list[float]] = {"reference": [], "rewardkit": []}
    verdicts: dict[str, list[list[bool]]] = {}
    with RewardLoop(config) as loop:
        loop.score(samples(rows[:1]))
        for _ in range(args.rounds):
            started = time.perf_counter()
            verdicts["reference"] = reference(rows, loose)
            times["reference"].append(time.perf_counter() - started)
            started = time.perf_counter()
            results = loop.score(samples(rows))
            times["rewardkit"].append(time.perf_counter() - started)
            bad = [r for r in results if r.status.value != "ok"]
            if bad:
                raise SystemExit(f"{len(bad)} rows failed: {bad[0].error}")
            verdicts["rewardkit"] = [
                [bool(v) for v in r.extra["instruction_verdicts"]] for r in results
            ]
    return {"rows": rows, "times": times, "verdicts": verdicts}


def report(measured: dict[str, Any], args: argparse.Namespace, argv: list[str] | None) -> str:
    rows, times, verdicts = measured["rows"], measured["times"], measured["verdicts"]
    command = shlex.join(["python", "benchmarks/bench_ifeval.py", *(argv or sys.argv[1:])])
    lines = [
        SECTION,
        "",
        f"`{command}` ({time.strftime('%Y-%m-%d')}; {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f}): {len(rows)} rows (Google's GPT-4 responses), "
        f"{args.mode}, best of {args.rounds} round(s).",
        "",
        "| contender | seconds | rows/s | verdicts equal to the official ones |",
        "|---|---:|---:|---:|",
    ]
    for name, label in (
        ("reference", "reference checker, one process (evaluation_lib's loop)"),
        ("rewardkit", "rewardkit, `num_workers: 2`"),
    ):
        best = min(times[name])
        same, total = agreement(verdicts[name], rows, args.mode)
        lines.append(f"| {label} | {best:.2f} | {len(rows) / best:,.0f} | {same}/{total} |")
    speedup = min(times["reference"]) / min(times["rewardkit"])
    lines += ["", f"rewardkit / reference: {speedup:.2f}x rows/s."]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 rows, 1 round: a smoke run")
    parser.add_argument("--limit", type=int, default=None, help="the first N rows only")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", choices=("strict", "loose"), default="strict")
    parser.add_argument("--write", action="store_true", help="rewrite BENCHMARKS.md's section")
    args = parser.parse_args(argv)
    if args.quick:
        args.limit, args.rounds = 40, 1
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    text = report(measure(args), args, argv)
    print(text)
    if args.write:
        from _report import write_section

        write_section(SECTION, text, ROOT / "BENCHMARKS.md")
        print(f"updated {ROOT / 'BENCHMARKS.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
