"""What the inline reading costs a row: ``extract`` + ``quick_check`` of every row, in one process.

    .venv/bin/python benchmarks/inline_cost.py                  # the real-output corpus
    .venv/bin/python benchmarks/inline_cost.py --rows FILE      # a JSONL (.gz) of rows
    .venv/bin/python benchmarks/inline_cost.py --profile 15     # and where the time goes

A row the inline phases decide never reaches math-verify, but its reading is paid on
every row: on a 2-core machine the workers share it, so it bounds the scoring rate
whatever math-verify costs (``bench_scoring.py --real`` measures the whole run). Each
row is read as the engine reads it (its prompt's context, then the verifier's
``extract`` and ``quick_check``), after one untimed pass that warms the caches and the
imports; the figure is the best of ``--repeats`` passes, per data source. math-verify's
own check of the rows the inline phases leave is not run or timed here.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import real_outputs as ro


def _readers(rows: list[dict[str, Any]]) -> list[tuple[str, Any, Any, Any]]:
    """(data source, verifier, the row's context, the row) for every row."""
    from rewardkit.config import load_config
    from rewardkit.scoring.rows import context_of
    from rewardkit.types import Sample
    from rewardkit.verifiers.registry import VerifierTable

    table = VerifierTable(load_config({}).reward)
    out = []
    for row in rows:
        verifier = table.pick(row["data_source"])
        out.append(
            (row["data_source"], verifier, context_of(verifier, Sample.from_row(row), None), row)
        )
    return out


def read_all(readers: list[tuple[str, Any, Any, Any]]) -> dict[str, tuple[float, int, int]]:
    """Per data source: (CPU seconds, rows, rows decided inline), one pass."""
    from rewardkit.verifiers.base import extract_with

    spent: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0])
    for source, verifier, context, row in readers:
        started = time.process_time()
        extracted = extract_with(verifier, row["response"], context)
        decided = verifier.quick_check(extracted, row["ground_truth"]) is not None
        tally = spent[source]
        tally[0] += time.process_time() - started
        tally[1] += 1
        tally[2] += decided
    return {source: (t[0], int(t[1]), int(t[2])) for source, t in spent.items()}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", help="this JSONL (or .jsonl.gz) of rows instead of the corpus")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes (best counts)")
    parser.add_argument("--profile", type=int, default=0, help="print this many functions")
    args = parser.parse_args(argv)
    rows = ro.load_rows(Path(args.rows)) if args.rows else ro.load_corpus()
    readers = _readers(rows)
    read_all(readers)  # untimed: imports, compiled patterns, caches
    passes = [read_all(readers) for _ in range(max(1, args.repeats))]
    best = {source: min(p[source] for p in passes) for source in passes[0]}
    total = sum(cpu for cpu, _, _ in best.values())
    print(f"{len(rows)} rows, best of {len(passes)} passes (CPU time of extract + quick_check):")
    print("| data source | rows | decided inline | us a row | seconds |")
    print("|---|---:|---:|---:|---:|")
    for source, (cpu, count, decided) in sorted(best.items()):
        print(f"| {source} | {count} | {decided} | {cpu / count * 1e6:.0f} | {cpu:.2f} |")
    print(f"| all | {len(rows)} | | {total / len(rows) * 1e6:.0f} | {total:.2f} |")
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(read_all, readers)
        stats = pstats.Stats(profile).sort_stats("cumulative")
        stats.print_stats(r"rewardkit", args.profile)


if __name__ == "__main__":
    main(sys.argv[1:])
