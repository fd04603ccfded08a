"""Cold start: how long a fresh process waits for its first results.

    .venv/bin/python benchmarks/cold_start.py [--repeats 5] [--workers 2] [--no-write]

Each repeat is a fresh Python process (nothing imported, no fork server yet) that times,
from just before ``RewardLoop(...).start()``:

* ``start``: until ``start()`` returns (the workers start in the background);
* ``first inline``: a MATH row the inline phases decide (``\\boxed{\\frac{1}{2}}`` against
  ``0.5``), scored right after start;
* ``first pooled``: then a row that needs math-verify in a worker
  (``\\sin^2 x + \\cos^2 x`` against ``1``): it waits for the first worker;
* ``all workers``: until every worker of the pool is up;
* ``all warm``: until each has been swapped for one the zygote forked after the parser's
  warm-up (they serve meanwhile).

Then ``rewardkit score examples/grpo_math.jsonl`` (a fresh process too): the wall time its
summary reports, start-up included, beside the time spent scoring. Medians over the
repeats; the load average is printed with them (the development machine is shared: read
it before comparing). Writes its section of BENCHMARKS.md unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import write_section

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Cold start (benchmarks/cold_start.py)"

_PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
from rewardkit import RewardLoop
loop = RewardLoop({"reward": {"num_workers": %d}})
began = time.perf_counter()
loop.start()
started = time.perf_counter()
inline = loop.score([{"data_source": "math", "response": "so \\boxed{\\frac{1}{2}}",
                      "ground_truth": "0.5"}])
first_inline = time.perf_counter()
pooled = loop.score([{"data_source": "math", "response": "\\boxed{\\sin^2 x + \\cos^2 x}",
                      "ground_truth": "1"}])
first_pooled = time.perf_counter()
pool = loop.engine.pool
while pool.started < pool.size:
    time.sleep(0.005)
everyone = time.perf_counter()
while pool.warming:
    time.sleep(0.005)
warm = time.perf_counter()
loop.close()
assert inline[0].score == 1.0 and pooled[0].score == 1.0, (inline, pooled)
print(json.dumps({"import": began - t0, "start": started - began,
                  "first inline": first_inline - began, "first pooled": first_pooled - began,
                  "all workers": everyone - began, "all warm": warm - began}))
"""


def probe(workers: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE % workers],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def cli_run(workers: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        began = time.perf_counter()
        subprocess.run(
            [
                *(sys.executable, "-m", "rewardkit.cli", "score", "examples/grpo_math.jsonl"),
                *("-o", str(Path(tmp) / "out.jsonl"), "--no-progress"),
                *("--summary-json", str(summary), f"reward.num_workers={workers}"),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        process = time.perf_counter() - began
        data = json.loads(summary.read_text())
    return {
        "rows": data["rows"],
        "scoring": data["seconds"],
        "wall": data["wall_seconds"],
        "process": process,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    probes = [probe(args.workers) for _ in range(args.repeats)]
    runs = [cli_run(args.workers) for _ in range(args.repeats)]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())

    def med(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(row[key] for row in rows)

    lines = [
        SECTION,
        "",
        f"`.venv/bin/python benchmarks/cold_start.py --repeats {args.repeats} "
        f"--workers {args.workers}` on {time.strftime('%Y-%m-%d')}; {os.cpu_count()} cores, "
        f"Python {sys.version.split()[0]}; load average before the end: {load}. Seconds "
        "from just before `RewardLoop(...).start()` in a fresh process (medians of "
        f"{args.repeats}):",
        "",
        "| start() returns | first inline result | first pooled result | all workers up "
        "| all warm |",
        "|---:|---:|---:|---:|---:|",
        f"| {med(probes, 'start'):.2f} | {med(probes, 'first inline'):.2f} "
        f"| {med(probes, 'first pooled'):.2f} | {med(probes, 'all workers'):.2f} "
        f"| {med(probes, 'all warm'):.2f} |",
        "",
        f"Importing rewardkit before that: {med(probes, 'import'):.2f} s. A pooled row waits "
        "for the first worker, which forks from a fork server that only imports the scoring "
        "code; a zygote runs the parser's warm-up meanwhile and then forks the workers that "
        "replace the cold ones.",
        "",
        f"`rewardkit score examples/grpo_math.jsonl` ({runs[0]['rows']:.0f} rows): "
        f"{med(runs, 'scoring'):.2f} s of scoring, {med(runs, 'wall'):.2f} s wall with "
        f"start-up as its summary reports it, {med(runs, 'process'):.2f} s for the whole "
        "process (the interpreter's start and imports too).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section(SECTION, text, ROOT / "BENCHMARKS.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
