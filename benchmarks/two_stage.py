"""Parser speed-ups (two-stage parsing, digit numbers) and worker affinity: same parses, less CPU.

    .venv/bin/python benchmarks/two_stage.py          # about two minutes; writes BENCHMARKS.md

1. Parses: math-verify (as verl's ``math_verify`` scorer calls it) on every response,
   ground truth and ``$...$`` span of the real-output corpus, in two fresh processes:
   as installed (latex2sympy in ANTLR's default LL mode, digit strings read by sympy's
   expression parser), and with rewardkit's speed-ups (``rewardkit.verifiers._two_stage``:
   SLL first; ``rewardkit.verifiers._digit_numbers``: ``Integer(int(text))``). Every
   result is compared by ``srepr``.
2. CPU: the rows rewardkit leaves to math-verify (the ``pool`` rows of ``bench_scoring.py
   --real``), checked by two workers forked after the fork server's warm-up, as in
   ``worker_warmth.py``, as installed and with the speed-ups, twice in a row (a first
   epoch, then a second). The second epoch either re-deals the rows at random between the
   two workers (a pool without affinity) or gives each worker the rows of the ground
   truths it had (the pool's soft affinity at its best).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import random
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_outputs
from _report import write_section
from bench_scoring import SECTION_REAL, _deferred, _machine

ROOT = Path(__file__).resolve().parents[1]
SECTION = "### Parser speed-ups and worker affinity (benchmarks/two_stage.py)"

_PARSE_ALL = """
import json, sys
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse
from sympy import srepr
if sys.argv[1] == "two-stage":
    from rewardkit.verifiers import _digit_numbers, _two_stage
    assert _two_stage.install() and _digit_numbers.install()
config = [ExprExtractionConfig(), LatexExtractionConfig()]
out = []
for text in json.load(sys.stdin):
    try:
        found = parse(text, config, parsing_timeout=None)
        out.append([x if isinstance(x, str) else srepr(x) for x in found])
    except Exception as exc:
        out.append(["raised", type(exc).__name__])
json.dump(out, sys.stdout)
"""


def parse_inputs(rows: list[dict[str, Any]]) -> list[str]:
    texts = [r["response"] for r in rows] + [str(r["ground_truth"]) for r in rows]
    for row in rows:
        texts += [f"${m.group(1)}$" for m in re.finditer(r"\$([^$]{1,200})\$", row["response"])]
    return list(dict.fromkeys(texts))


def compare_parses(texts: list[str]) -> int:
    """How many of ``texts`` math-verify reads differently with rewardkit's speed-ups."""
    runs = {}
    for mode in ("ll", "two-stage"):
        done = subprocess.run(
            [sys.executable, "-c", _PARSE_ALL, mode],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            check=True,
        )
        runs[mode] = json.loads(done.stdout)
    return sum(a != b for a, b in zip(runs["ll"], runs["two-stage"], strict=True))


def worker_cpu(mode: str, rows: list[dict[str, Any]], second: str) -> list[float]:
    """CPU of two forked workers on ``rows``: [first epoch, second epoch] (seconds)."""
    from rewardkit.config import load_config
    from rewardkit.verifiers import _digit_numbers, _two_stage
    from rewardkit.verifiers import math as math_verifier
    from rewardkit.verifiers.registry import VerifierTable

    if mode == "ll":  # this process only: math-verify as installed
        _two_stage.install = lambda: False  # type: ignore[assignment]
        _digit_numbers.install = lambda: False  # type: ignore[assignment]
    table = VerifierTable(load_config({}).reward)
    math_verifier.warm_up()
    items = []
    for row in rows:
        verifier = table.pick(row["data_source"])
        items.append((verifier, verifier.extract(row["response"]), row["ground_truth"]))
    first = [items[0::2], items[1::2]]
    if second == "affinity":
        by_gold = [[i for i in items if zlib.crc32(str(i[2]).encode()) % 2 == w] for w in (0, 1)]
        first = again = by_gold
    else:
        rng = random.Random(0)
        shuffled = rng.sample(items, len(items))
        again = [shuffled[0::2], shuffled[1::2]]
    totals = [0.0, 0.0]
    for worker in (0, 1):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            gc.freeze()
            spent = []
            for part in (first[worker], again[worker]):
                began = time.process_time()
                for verifier, extracted, gold in part:
                    verifier.check(extracted, gold)
                spent.append(time.process_time() - began)
            os.write(write, json.dumps(spent).encode())
            os._exit(0)
        os.close(write)
        spent = json.loads(os.read(read, 1000))
        os.waitpid(pid, 0)
        totals = [t + s for t, s in zip(totals, spent, strict=True)]
    return totals


def cpu_in_child(mode: str, second: str) -> list[float]:
    done = subprocess.run(
        [sys.executable, __file__, "_cpu", mode, second], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(texts: int, differing: int, cpu: dict[tuple[str, str], list[list[float]]]) -> str:
    def mid(key: tuple[str, str], epoch: int) -> float:
        values = sorted(run[epoch] for run in cpu[key])
        return values[len(values) // 2]

    lines = [
        f"{SECTION}\n",
        f"`python benchmarks/two_stage.py` on {dt.date.today().isoformat()}; {_machine()}.\n",
        f"Parses: {texts:,} inputs of the real-output corpus (responses, ground truths, "
        f"`$...$` spans), read by math-verify as installed and with rewardkit's speed-ups "
        f"(two-stage parsing, digit numbers) in two fresh processes: **{differing} differ**.\n",
        "CPU seconds of two forked workers on the rows rewardkit leaves to math-verify "
        f"(median of {len(cpu[('ll', 'random')])} runs each; the machine is shared):\n",
        "| math-verify | second epoch deals rows | first epoch | second epoch |",
        "|---|---|---:|---:|",
    ]
    for (mode, second), _ in cpu.items():
        lines.append(
            f"| {'as installed (LL)' if mode == 'll' else 'with the speed-ups'} | "
            f"{'to the same workers (affinity)' if second == 'affinity' else 'at random'} | "
            f"{mid((mode, second), 0):.2f} | {mid((mode, second), 1):.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_cpu"]:
        rows = real_outputs.load_corpus()
        left = [r for r, deferred in zip(rows, _deferred(rows), strict=True) if deferred]
        print(json.dumps(worker_cpu(argv[1], left, argv[2])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    texts = parse_inputs(real_outputs.load_corpus())
    differing = compare_parses(texts)
    print(f"{len(texts)} inputs, {differing} parsed differently", flush=True)
    cpu: dict[tuple[str, str], list[list[float]]] = {}
    for _ in range(args.repeats):
        for key in (("ll", "random"), ("two-stage", "random"), ("two-stage", "affinity")):
            cpu.setdefault(key, []).append(cpu_in_child(*key))
            print(key, cpu[key][-1], flush=True)
    text = report(len(texts), differing, cpu)
    print(text)
    if not args.no_write:
        write_section(SECTION, text, ROOT / "BENCHMARKS.md", parent=SECTION_REAL)


if __name__ == "__main__":
    main()
