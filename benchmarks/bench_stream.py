"""Streaming `rewardkit score` over a large JSONL file: throughput and peak memory.

    python benchmarks/bench_stream.py            # 1,000,000 rows
    python benchmarks/bench_stream.py --quick    # 50,000 rows

Writes GSM8K-shaped rows to a temporary file, runs the real command line on it in a
child process and reads the child's peak RSS from the kernel (getrusage). The target
of the scoring-engine issue: memory flat over a million rows, under 1 GiB RSS.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_rows(path: Path, count: int) -> None:
    rng = random.Random(0)
    with path.open("w") as handle:
        for i in range(count):
            truth = rng.randint(1, 500)
            answer = truth if rng.random() < 0.6 else truth + rng.randint(1, 3)
            handle.write(
                json.dumps(
                    {
                        "id": str(i),
                        "data_source": "openai/gsm8k",
                        "prompt": "How many apples are left?",
                        "response": f"Step by step: we start with some apples and eat a few.\n#### {answer}",
                        "ground_truth": str(truth),
                    }
                )
                + "\n"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    count = 50_000 if args.quick else args.rows
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "rows.jsonl", Path(tmp) / "scored.jsonl"
        write_rows(source, count)
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "rewardkit.cli",
                "score",
                str(source),
                "-o",
                str(target),
                "--no-progress",
                "reward.num_workers=2",
            ],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        elapsed = time.perf_counter() - started
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size_mib = source.stat().st_size / 2**20
    print("| rows | input size | wall time | rows/s | peak RSS of `rewardkit score` |")
    print("|---:|---:|---:|---:|---:|")
    print(
        f"| {count:,} | {size_mib:,.0f} MiB | {elapsed:.1f} s | {count / elapsed:,.0f} | {peak_mib:,.0f} MiB |"
    )


if __name__ == "__main__":
    main()
