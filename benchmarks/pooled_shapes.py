"""What the rows left to math-verify look like, on the real-output corpus and its slices.

    .venv/bin/python benchmarks/pooled_shapes.py            # the shape table per batch
    .venv/bin/python benchmarks/pooled_shapes.py --show 5   # and 5 rows of each shape
    .venv/bin/python benchmarks/pooled_shapes.py --verdicts before.json   # on one tree,
    .venv/bin/python benchmarks/pooled_shapes.py --verdicts after.json --against before.json

``--verdicts`` also scores every row in this process (inline phases, then math-verify
where they defer, as a worker would) and writes each row's score and whether it was left
to math-verify; ``--against`` an earlier file prints the rows whose verdict changed and
how many rows moved from math-verify to the inline phases.

A row is *left to math-verify* when the MATH verifier's inline phases do not decide it
(``quick_check`` answers None: the row goes to a worker). Each such row is put in one
shape, by how its answer was found (``source``) and what it and the gold look like: the
first matching shape of :data:`SHAPES` wins. No scorer runs here, no timing: counts only,
so that the effect of an inline rule is a count any machine reproduces.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import real_outputs as ro
import real_slices as rs

_SPAN = re.compile(r"\$[^$]+\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_LETTERS = re.compile(r"(?<!\\)\b[a-zA-Z]\b")


def _has(pattern: str) -> Callable[[str, str], bool]:
    found = re.compile(pattern)
    return lambda answer, gold: bool(found.search(answer) or found.search(gold))


def _last_line(text: str) -> str:
    return text.rstrip().rpartition("\n")[2]


SHAPES: list[tuple[str, str, Callable[[str, str], bool]]] = [
    # (source group, shape, test on (answer or passage, gold))
    ("passage", "whole conclusion is one value", lambda a, g: _one_value(a)),
    ("passage", "tag holding a sentence", lambda a, g: a.endswith("</answer>")),
    (
        "passage",
        "last line ends on a math span",
        lambda a, g: bool(re.search(r"(\$|\\\)|\\\])\s*\.?\s*$", _last_line(a))),
    ),
    (
        "passage",
        "last line ends on a number (words around)",
        lambda a, g: bool(re.search(r"\d\s*(?:[A-Za-z ]{0,40})\.?\s*$", _last_line(a))),
    ),
    ("passage", "other passage", lambda a, g: True),
    ("answer", "percent on one side", _has(r"%|percent")),
    ("answer", "degrees", _has(r"\\circ|°|degree")),
    ("answer", "relation or chain in the answer (=, x=...)", lambda a, g: "=" in a),
    ("answer", "several values (list, tuple, set)", lambda a, g: "," in a or "," in g),
    ("answer", "interval or inequality", _has(r"\\(?:le|ge|infty)|[<>]")),
    ("answer", "text answer", _has(r"\\text|\\mbox|[A-Za-z]{3,}")),
    ("answer", "expression with variables", lambda a, g: bool(_LETTERS.search(a + " " + g))),
    ("answer", "radicals, pi, powers", _has(r"\\sqrt|\\pi|\^|√|sqrt|pi")),
    ("answer", "fraction vs decimal", lambda a, g: ("." in a) != ("." in g)),
    ("answer", "other", lambda a, g: True),
]


def _one_value(passage: str) -> bool:
    """The passage (the whole conclusion) is a single number or a single math span."""
    text = passage.strip().rstrip(".").strip()
    return bool(_NUMBER.fullmatch(text) or (_SPAN.fullmatch(text) and text.count("$") <= 2))


def shape_of(source: str | None, answer: str, gold: str) -> str:
    group = "passage" if source == "expression" else "answer"
    return next(
        f"{source}: {name}" for g, name, test in SHAPES if g == group and test(answer, gold)
    )


def _extract(verifier: Any, row: dict[str, Any]) -> Any:
    """The verifier's extraction, given what the engine gives it of the row (its prompt's
    context: ``rewardkit.scoring.rows.context_of``)."""
    from rewardkit.scoring.rows import context_of
    from rewardkit.types import Sample
    from rewardkit.verifiers.base import extract_with

    context = context_of(verifier, Sample.from_row(row), None)
    return extract_with(verifier, row["response"], context)


def pooled(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows no inline rule decides, each with its answer (or passage) and shape."""
    from rewardkit.config import load_config
    from rewardkit.verifiers.registry import VerifierTable

    table = VerifierTable(load_config({}).reward)
    out = []
    for row in rows:
        verifier = table.pick(row["data_source"])
        extracted = _extract(verifier, row)
        if verifier.quick_check(extracted, row["ground_truth"]) is not None:
            continue
        source, answer = extracted.extra.get("source"), extracted.answer or ""
        gold = str(row["ground_truth"])
        out.append({"row": row, "answer": answer, "shape": shape_of(source, answer, gold)})
    return out


def verdicts(rows: list[dict[str, Any]]) -> dict[str, tuple[bool, float | None]]:
    """Row id -> (left to math-verify, score), scored in this process."""
    from rewardkit.config import load_config
    from rewardkit.verifiers.registry import VerifierTable

    table = VerifierTable(load_config({}).reward)
    out = {}
    for row in rows:
        verifier = table.pick(row["data_source"])
        extracted = _extract(verifier, row)
        quick = verifier.quick_check(extracted, row["ground_truth"])
        said = quick if quick is not None else verifier.check(extracted, row["ground_truth"])
        out[row["id"]] = (quick is None, said.score)
    return out


def compare(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Rows moved inline, rows whose score changed (each listed)."""
    for name in after:
        old, new = before.get(name, {}), after[name]
        common = sorted(set(old) & set(new))
        moved = sum(old[i][0] and not new[i][0] for i in common)
        back = sum(new[i][0] and not old[i][0] for i in common)
        changed = [i for i in common if old[i][1] != new[i][1]]
        print(
            f"{name}: {len(common)} rows; left to math-verify {sum(old[i][0] for i in common)}"
            f" -> {sum(new[i][0] for i in common)} ({moved} now inline, {back} now pooled);"
            f" score changed on {len(changed)}"
        )
        for i in changed:
            print(f"  {i}: {old[i][1]} -> {new[i][1]}")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=0, help="rows to print per shape")
    parser.add_argument("--verdicts", help="write every row's score (scored here) to this file")
    parser.add_argument("--against", help="with --verdicts: an earlier file to compare with")
    parser.add_argument(
        "--rows", help="this JSONL (or .jsonl.gz) of rows instead of the corpus, as bench_scoring"
    )
    args = parser.parse_args(argv)
    rows = ro.load_rows(Path(args.rows)) if args.rows else ro.load_corpus()
    # no truth is read here (shapes and scores only): the prose rows carry none, and a
    # --rows set is not run through math-verify first (minutes on long harness dumps)
    prose, _ = rs.prose_rows(rows, [None] * len(rows))
    batches = {"corpus": rows, "degenerate": rs.degenerate_rows(rows), "prose": prose}
    left = {name: pooled(batch) for name, batch in batches.items()}
    counts = {name: Counter(p["shape"] for p in found) for name, found in left.items()}
    shapes = sorted(
        set().union(*counts.values()), key=lambda s: -sum(c[s] for c in counts.values())
    )
    print("| shape | " + " | ".join(f"{n} ({len(batches[n])} rows)" for n in batches) + " |")
    print("|---|" + "---:|" * len(batches))
    for shape in shapes:
        print(f"| {shape} | " + " | ".join(str(counts[n][shape]) for n in batches) + " |")
    print("| **left to math-verify** | " + " | ".join(str(len(left[n])) for n in batches) + " |")
    if args.verdicts:
        said = {name: verdicts(batch) for name, batch in batches.items()}
        Path(args.verdicts).write_text(json.dumps(said))
        if args.against:
            compare(json.loads(Path(args.against).read_text()), said)
    if args.show:
        by_shape: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for name, found in left.items():
            for p in found:
                by_shape[p["shape"]].append({**p, "batch": name})
        for shape in shapes:
            print(f"\n## {shape}")
            for p in by_shape[shape][:: max(1, len(by_shape[shape]) // args.show)][: args.show]:
                tail = p["answer"][-120:].replace("\n", " ")
                print(f"- [{p['batch']}] gold {p['row']['ground_truth']!r}: {tail!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
