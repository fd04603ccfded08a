"""Why more workers do not divide math-verify's time: each worker learns its own parser.

    .venv/bin/python benchmarks/worker_warmth.py [--workers 1 2 4 8 16]   # about a minute

The rows of the real-output corpus that rewardkit leaves to math-verify (no inline rule
decides them, the ``pool`` rows of ``bench_scoring.py --real``) cost most of their time
in latex2sympy's ANTLR parser, and most of that in building its prediction DFA for token
sequences it has not seen yet. The DFA lives in the process: a second pass over the same
rows costs about half the first. Each of N workers builds its own.

This splits those rows round-robin among N fresh processes forked from one parent that
ran the math verifier's warm-up (as the worker fork server does), runs the N one after
another (no contention: CPU time, not wall time) and prints the CPU seconds they spent
together: ``cold`` after the warm-up without its corpus (two comparisons), ``warmed``
after the fork server's whole warm-up, which also parses
``rewardkit.verifiers._warm_corpus.LATEX`` (written for it, not taken from the corpus),
and ``frozen`` as a worker runs: warmed, then ``gc.freeze()`` first thing in the child
(``rewardkit.execution._worker``), so that the collector leaves the inherited heap alone.
BENCHMARKS.md cites the figures (Scoring engine on real model outputs).

``--transfer`` asks how much *any* warm-up corpus could give. It splits the rows in two
halves (even and odd positions) and measures one worker's CPU on the second half after the
fork server's warm-up, then after also checking the first half (a corpus drawn from the
very same outputs, the best a corpus written apart could hope for), then after checking
the second half itself (a parser that has seen these exact rows: the floor).

``--decisions`` asks where a first pass spends its prediction time. One worker (forked
after the fork server's whole warm-up) checks the rows twice while every ANTLR prediction
(``adaptivePredict``, one per decision point the parser meets) is timed by decision; it
prints the CPU of each pass, the share spent predicting, and the decisions that cost most
with the grammar rule each belongs to.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_outputs
from bench_scoring import _deferred

from rewardkit.config import load_config
from rewardkit.verifiers import _warm_corpus
from rewardkit.verifiers import math as math_verifier
from rewardkit.verifiers.registry import VerifierTable


def children_cpu(
    rows: list[dict[str, Any]], table: VerifierTable, workers: int, freeze: bool
) -> float:
    """CPU seconds of ``workers`` forked processes checking ``rows`` between them."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for part in range(workers):
        pid = os.fork()
        if pid == 0:
            if freeze:
                gc.freeze()
            _check(table, rows[part::workers])
            os._exit(0)
        os.waitpid(pid, 0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def measure(
    rows: list[dict[str, Any]], workers: int, corpus: bool, freeze: bool = False
) -> dict[str, float]:
    """In a fresh forked parent (its parser state is its own): warm up, then the N children."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        table = VerifierTable(load_config({}).reward)
        if not corpus:
            _warm_corpus.LATEX = ()
        started = time.perf_counter()
        math_verifier.warm_up()
        warm = time.perf_counter() - started
        figures = {"cpu": children_cpu(rows, table, workers, freeze), "warm_s": warm}
        os.write(write, json.dumps(figures).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as fh:
        figures = json.loads(fh.read())
    os.waitpid(pid, 0)
    return figures


def transfer(rows: list[dict[str, Any]]) -> dict[str, float]:
    """One worker's CPU on the odd rows after warming on nothing, the even rows, the odd rows."""
    first, second = rows[0::2], rows[1::2]
    table = VerifierTable(load_config({}).reward)
    math_verifier.warm_up()
    figures = {}
    for name, warm in (("warm-up only", []), ("+ other half", first), ("+ same rows", second)):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            gc.freeze()
            _check(table, warm)
            started = time.process_time()
            _check(table, second)
            os.write(write, json.dumps(time.process_time() - started).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as fh:
            figures[name] = json.loads(fh.read())
        os.waitpid(pid, 0)
    return figures


def decisions(rows: list[dict[str, Any]], top: int = 6) -> list[str]:
    """One warmed worker's two passes over ``rows``, with ANTLR's predictions timed by decision."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, json.dumps(_timed_passes(rows, top)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as fh:
        lines: list[str] = json.loads(fh.read())
    os.waitpid(pid, 0)
    return lines


def _timed_passes(rows: list[dict[str, Any]], top: int) -> list[str]:
    from antlr4.atn.ParserATNSimulator import ParserATNSimulator
    from latex2sympy2_extended.latex2sympy2 import PSParser

    table = VerifierTable(load_config({}).reward)
    math_verifier.warm_up()
    gc.freeze()
    spent: dict[int, list[float]] = {}
    predict = ParserATNSimulator.adaptivePredict

    def timed(self: Any, stream: Any, decision: int, outer: Any) -> int:
        started = time.thread_time()
        try:
            return predict(self, stream, decision, outer)
        finally:
            entry = spent.setdefault(decision, [0, 0.0])
            entry[0] += 1
            entry[1] += time.thread_time() - started

    ParserATNSimulator.adaptivePredict = timed
    lines = []
    for name in ("first pass", "second pass"):
        spent.clear()
        started = time.thread_time()
        _check(table, rows)
        cpu = time.thread_time() - started
        predicting = sum(seconds for _, seconds in spent.values())
        lines.append(
            f"{name}: {cpu:.2f} s CPU, {predicting:.2f} s ({predicting / cpu:.0%}) in ANTLR's "
            "predictions; by decision (calls, seconds, rule):"
        )
        ranked = sorted(spent.items(), key=lambda item: -item[1][1])[:top]
        for decision, (calls, seconds) in ranked:
            rule = PSParser.ruleNames[PSParser.atn.decisionToState[decision].ruleIndex]
            lines.append(f"  decision {decision}: {int(calls)} calls, {seconds:.3f} s, rule {rule}")
    return lines


def _check(table: VerifierTable, rows: list[dict[str, Any]]) -> None:
    for row in rows:
        verifier = table.pick(row["data_source"])
        verifier.check(verifier.extract(row["response"]), row["ground_truth"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--transfer", action="store_true", help="see the module docstring")
    parser.add_argument("--decisions", action="store_true", help="see the module docstring")
    args = parser.parse_args(argv)
    corpus = real_outputs.load_corpus()
    rows = [row for row, left in zip(corpus, _deferred(corpus), strict=True) if left]
    if args.decisions:
        print(f"One warmed worker checking the {len(rows)} rows left to math-verify, twice:")
        print("\n".join(decisions(rows)))
        return
    if args.transfer:
        figures = transfer(rows)
        print(f"CPU seconds of one worker on {len(rows) // 2} of the {len(rows)} rows, warmed on:")
        for name, seconds in figures.items():
            print(f"  {name}: {seconds:.2f} ({seconds / figures['warm-up only']:.2f})")
        return
    print(f"{len(rows)} rows left to math-verify; CPU seconds of N workers checking them")
    print("| workers | cold | warmed | frozen | frozen / cold |\n|---:|---:|---:|---:|---:|")
    for workers in args.workers:
        cold = measure(rows, workers, corpus=False)
        warmed = measure(rows, workers, corpus=True)
        frozen = measure(rows, workers, corpus=True, freeze=True)
        print(
            f"| {workers} | {cold['cpu']:.2f} | {warmed['cpu']:.2f} | {frozen['cpu']:.2f} "
            f"| {frozen['cpu'] / cold['cpu']:.2f} |",
            flush=True,
        )
    print(
        f"(the fork server's warm-up: {cold['warm_s']:.2f} s without the corpus, "
        f"{warmed['warm_s']:.2f} s with it; once per process, before the fork)"
    )


if __name__ == "__main__":
    main()
