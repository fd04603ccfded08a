"""The real-output corpus (tests/data/real_outputs): load it, grade it, list what needs a verdict.

    .venv/bin/python benchmarks/real_outputs.py pending [--set reward.key=value ...]
    .venv/bin/python benchmarks/real_outputs.py summary [--set reward.key=value ...]
    .venv/bin/python benchmarks/real_outputs.py record

``record`` writes ``math_verify.json`` next to the corpus: math-verify's verdict on every
row (with its version), which the CI test reads instead of re-running math-verify.

``pending`` prints, one block per row, the rows whose truth is not settled yet and that
some scorer calls correct: the source's own label is missing or disagrees with
math-verify, and math-verify or rewardkit (with the given overrides) scores the row 1.
Each needs a line in ``adjudicated.jsonl`` (``{"id", "correct", "reason"}``), written by
a person who read the response. ``summary`` prints false positives/negatives of
math-verify and of rewardkit against that truth.

The truth of a row: the hand verdict when there is one; else the source's label when
math-verify agrees with it (two independent graders); else unknown.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "real_outputs"

__all__ = [
    "load_adjudicated",
    "load_corpus",
    "math_verify_verdict",
    "math_verify_verdicts",
    "tally",
    "truth",
]


def load_corpus(folder: Path = CORPUS) -> list[dict[str, Any]]:
    """Every row of every ``*.jsonl.gz`` in the folder, files in name order."""
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    return rows


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL file (``.gz`` too) in the corpus's layout; a row without an
    ``id`` is named by its line, one without ``extra_info.source_label`` has none."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    for number, row in enumerate(rows, 1):
        row.setdefault("id", f"{path.name}:{number}")
        row["extra_info"] = {"source_label": None, **(row.get("extra_info") or {})}
    return rows


def load_adjudicated(folder: Path = CORPUS) -> dict[str, bool | None]:
    """Row id -> the hand verdict (None: read, but no verdict can be given)."""
    path = folder / "adjudicated.jsonl"
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            out[entry["id"]] = entry["correct"]
    return out


def math_verify_verdict(row: dict[str, Any]) -> bool:
    """math-verify as verl's ``math_verify`` scorer calls it: boxed gold, Expr+LaTeX prediction."""
    from math_verify import parse, verify
    from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig

    try:
        gold = parse("\\boxed{" + str(row["ground_truth"]) + "}", (LatexExtractionConfig(),))
        pred = parse(row["response"], (ExprExtractionConfig(), LatexExtractionConfig()))
        return bool(gold and pred and verify(gold, pred))
    except Exception:  # verl's scorer counts any failure as 0
        return False


def math_verify_verdicts(rows: list[dict[str, Any]], folder: Path = CORPUS) -> list[bool]:
    """math-verify's verdicts: from math_verify.json when it covers these rows with the
    installed math-verify version, else computed here (a few seconds per thousand rows)."""
    from importlib.metadata import version

    path = folder / "math_verify.json"
    if path.exists():
        doc = json.loads(path.read_text(encoding="utf-8"))
        known = doc["verdicts"]
        if doc["math_verify"] == version("math-verify") and all(r["id"] in known for r in rows):
            return [known[r["id"]] for r in rows]
    return [math_verify_verdict(r) for r in rows]


def record_math_verify(folder: Path = CORPUS) -> Path:
    """Write every row's math-verify verdict, and math-verify's version, to math_verify.json."""
    from importlib.metadata import version

    verdicts = {r["id"]: math_verify_verdict(r) for r in load_corpus(folder)}
    path = folder / "math_verify.json"
    doc = {"math_verify": version("math-verify"), "verdicts": verdicts}
    path.write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    return path


def truth(row: dict[str, Any], mv: bool, adjudicated: dict[str, bool | None]) -> bool | None:
    """The hand verdict, else the source label when math-verify agrees, else None."""
    if row["id"] in adjudicated:
        return adjudicated[row["id"]]
    label = row["extra_info"].get("source_label")
    return label if label is not None and label == mv else None


def tally(verdicts: Iterable[bool], truths: Iterable[bool | None]) -> Counter[str]:
    """fp / fn / right / unknown counts of one scorer's verdicts against the truth."""
    out: Counter[str] = Counter()
    for said, true in zip(verdicts, truths, strict=True):
        if true is None:
            out["unknown"] += 1
        elif said == true:
            out["right"] += 1
        else:
            out["fp" if said else "fn"] += 1
    return out


def rewardkit_verdicts(rows: list[dict[str, Any]], overrides: list[str]) -> list[bool]:
    from rewardkit import RewardLoop

    with RewardLoop({"reward": {"num_workers": 2, "timeout_s": 10}}, overrides) as loop:
        return [r.score == 1.0 for r in loop.score(rows)]


def _tail(text: str, n: int = 600) -> str:
    return ("..." if len(text) > n else "") + text[-n:]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["pending", "summary", "record"])
    parser.add_argument("--set", action="append", default=[])
    args = parser.parse_args(argv)
    if args.what == "record":
        print(record_math_verify())
        return
    rows, adjudicated = load_corpus(), load_adjudicated()
    mv = math_verify_verdicts(rows)
    rk = rewardkit_verdicts(rows, args.set)
    truths = [truth(r, m, adjudicated) for r, m in zip(rows, mv, strict=True)]
    if args.what == "summary":
        for name, said in (("math-verify", mv), ("rewardkit", rk)):
            print(name, dict(tally(said, truths)))
        return
    for row, m, k, t in zip(rows, mv, rk, truths, strict=True):
        if t is None and (m or k):
            print(
                json.dumps(
                    {
                        "id": row["id"],
                        "gold": row["ground_truth"],
                        "mv": m,
                        "rk": k,
                        "label": row["extra_info"]["source_label"],
                    }
                )
            )
            print(_tail(row["response"]))
            print("-" * 40)


if __name__ == "__main__":
    main(sys.argv[1:])
