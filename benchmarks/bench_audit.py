"""Reward-hacking audit, family x scorer: which hacks each scorer credits, which rewrites it drops.

    .venv/bin/python benchmarks/bench_audit.py            # writes the BENCHMARKS.md section
    .venv/bin/python benchmarks/bench_audit.py --quick    # the bundled sample only, no file written

The rows and variants are exactly those of ``rewardkit audit`` (default input: the
bundled sample, ``examples/grpo_math.jsonl`` and the real-output corpus's rows graded
correct, at most ``--limit`` rows of each). Every scorer sees the same variants; a row
is audited for a scorer when that scorer gives the correct original more than a plainly
wrong answer (gold + 1), and a hack is credited when it earns more than that wrong
answer (``rewardkit.audit.runner``). Scorers:

- rewardkit: ``RewardLoop`` with the default configuration (the built-in verifiers);
- math-verify called as verl 0.9.1's ``verl.utils.reward_score.math_verify`` calls it:
  the gold wrapped in ``\\boxed{}`` and parsed as LaTeX, the response parsed as an
  expression or LaTeX, credited when any parsed prediction verifies against any gold
  (in this process, main thread, so math-verify's own timeouts apply);
- verl 0.9.1's ``default_compute_score`` (by data_source), run in verl's own venv
  (``.bench/verl-venv``, made on first use as ``bench_scoring.py`` does); a data_source
  it does not implement raises there, which is counted as not ok;
- TRL's ``trl.rewards.accuracy_reward`` on the gold as written (TRL returns None, which
  skips the row, when it cannot parse the gold: counted as not ok).

Code families are scored by rewardkit only (the peers are math/QA scorers here).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Reward-hacking audit, family x scorer (benchmarks/bench_audit.py)"
VERL_VERSION = "0.9.1"

Scores = list[tuple[float | None, str | None]]  # (score, error) per row


# ------------------------------------------------------------------ the scorers


def math_verify_scores(rows: Sequence[dict[str, Any]]) -> Scores:
    from math_verify.grader import verify
    from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig, parse

    from rewardkit.audit._values import gold_text

    out: Scores = []
    for row in rows:
        gold = gold_text(row["ground_truth"]) or ""
        try:
            golds = parse("\\boxed{" + gold + "}", (LatexExtractionConfig(),))
            preds = parse(row["response"], (ExprExtractionConfig(), LatexExtractionConfig()))
            score = 0.0
            if golds and preds:
                score = max(1.0 if any(verify(g, p) for g in golds) else 0.0 for p in preds)
            out.append((score, None))
        except Exception:  # verl's scorer prints the error and returns 0.0
            out.append((0.0, None))
    return out


def trl_scores(rows: Sequence[dict[str, Any]]) -> Scores:
    from trl.rewards import accuracy_reward

    from rewardkit.audit._values import gold_text

    completions = [[{"role": "assistant", "content": row["response"]}] for row in rows]
    golds = [gold_text(row["ground_truth"]) or "" for row in rows]
    out: Scores = []
    for start in range(0, len(rows), 256):
        scores = accuracy_reward(completions[start : start + 256], golds[start : start + 256])
        out += [(s, None) if s is not None else (None, "gold not parsed") for s in scores]
    return out


def verl_scores(rows: Sequence[dict[str, Any]], python: Path) -> Scores:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "rows.jsonl", Path(tmp) / "scores.json"
        src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        subprocess.run([str(python), __file__, "--verl-worker", str(src), str(dst)], check=True)
        return [tuple(pair) for pair in json.loads(dst.read_text())]  # type: ignore[misc]


def _verl_worker(src: str, dst: str) -> None:
    """Inside verl's venv: default_compute_score on each row."""
    from verl.utils.reward_score import default_compute_score

    out: list[tuple[float | None, str | None]] = []
    for line in Path(src).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        try:
            res = default_compute_score(
                row["data_source"], row["response"], row["ground_truth"], row.get("extra_info")
            )
            out.append((float(res["score"] if isinstance(res, dict) else res), None))
        except Exception as exc:
            out.append((None, f"{type(exc).__name__}: {exc}"[:200]))
    Path(dst).write_text(json.dumps(out))


def verl_python() -> tuple[Path | None, str]:
    """verl's venv python, made on first use; None and the reason when it cannot be."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_scoring import BENCH, ensure_verl_venv

        BENCH.mkdir(exist_ok=True)
        return ensure_verl_venv(BENCH / "verl-venv-install.log"), ""
    except (subprocess.CalledProcessError, OSError) as exc:
        return None, f"verl {VERL_VERSION} could not be installed or imported ({exc})"


def _as_results(scores: Scores) -> list[Any]:
    from rewardkit.types import Result, Status

    return [
        Result(i, Status.OK, score) if score is not None else Result(i, Status.ERROR, error=error)
        for i, (score, error) in enumerate(scores)
    ]


# ------------------------------------------------------------------ the run


def run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str], list[str]]:
    from rewardkit.audit import audit_rows, default_rows
    from rewardkit.audit.code_hacks import is_code_row
    from rewardkit.loop import RewardLoop

    rows, sources = default_rows(args.limit)
    if args.quick:
        rows = rows[:33]
    text_rows = [row for row in rows if not is_code_row(row)]
    reports: dict[str, Any] = {}
    notes: list[str] = []
    started = time.perf_counter()
    with RewardLoop({"reward": {"num_workers": args.workers}}) as loop:
        reports["rewardkit"] = audit_rows(rows, loop.score)
    print(f"rewardkit: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    python, why = (None, "verl not run (--no-verl)") if args.no_verl else verl_python()
    verl_key = f"verl {VERL_VERSION} default_compute_score"
    peers: dict[str, Callable[[list[dict[str, Any]]], list[Any]] | None] = {
        "math-verify (verl's math_verify path)": lambda r: _as_results(math_verify_scores(r)),
        verl_key: (lambda r: _as_results(verl_scores(r, python))) if python else None,
        "TRL accuracy_reward": lambda r: _as_results(trl_scores(r)),
    }
    if python is None:
        notes.append(why)
    for name, score in peers.items():
        if score is None:
            reports[name] = None
            continue
        started = time.perf_counter()
        reports[name] = audit_rows(text_rows, score)
        print(f"{name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return reports, sources, notes


def table(reports: dict[str, Any]) -> str:
    from rewardkit.audit import all_families

    names = list(reports)
    lines = [
        "| family | kind | " + " | ".join(names) + " |",
        "|---|---|" + "---:|" * len(names),
    ]
    for family, hack in all_families().items():
        cells = []
        for name in names:
            report = reports[name]
            tally = report.families.get(family) if report is not None else None
            if report is None:
                cells.append("not run")
            elif tally is None or not tally.tried:
                cells.append("n/a" if family.startswith("code_") and name != "rewardkit" else "-")
            else:
                mark = f"**{tally.hits}**" if tally.hits else "0"
                cells.append(f"{mark} / {tally.tried}")
        lines.append(f"| {family} | {'hack' if hack else 'benign'} | " + " | ".join(cells) + " |")

    def share(report: Any, hack: bool) -> str:
        tried = sum(t.tried for t in report.families.values() if t.hack == hack)
        hits = report.credited if hack else report.benign_lost
        return f"**{hits}** / {tried} ({100 * hits / max(tried, 1):.0f}%)"

    totals = [
        ("**credited hacks**", lambda r: share(r, True)),
        ("**benign rewrites that lost credit**", lambda r: share(r, False)),
        ("variants not ok (error, None)", lambda r: str(r.failed)),
        ("rows audited (correct original scored above gold+1)",
         lambda r: f"{r.rows_audited} / {r.rows_in}"),
        ("rows whose original was not ok (unimplemented data_source, gold not parsed)",
         lambda r: str(r.rows_unscored)),
    ]  # fmt: skip
    for label, cell in totals:
        row = [cell(reports[n]) if reports[n] is not None else "not run" for n in names]
        lines.append(f"| {label} | | " + " | ".join(row) + " |")
    return "\n".join(lines)


def section(
    reports: dict[str, Any], sources: list[str], notes: list[str], args: argparse.Namespace
) -> str:
    import datetime as dt
    from importlib.metadata import version

    versions = f"math-verify {version('math-verify')}, trl {version('trl')}"
    return (
        f"{SECTION}\n\n"
        "`rewardkit audit`'s variants of correct rows (hacks: expected to earn no more than "
        "a wrong answer; benign rewrites: expected to keep the credit), scored by each "
        "scorer. A cell is *credited / tried* for a hack family and *lost / tried* for a "
        "benign one; *tried* counts the variants of rows that scorer credits when correct, "
        "so it differs between scorers. `-`: the family made no variant for the rows that "
        "scorer audits; code families run for rewardkit only. Compare shares, not counts: "
        "a scorer that credits fewer correct originals is tried on fewer variants (verl's "
        "`default_compute_score` has no multiple-choice scorer and raises on those rows; its "
        "MATH scorer reads only the last `\\boxed{}`; TRL returns None for a gold it cannot "
        "parse).\n\n"
        "```bash\n.venv/bin/python benchmarks/bench_audit.py\n```\n\n"
        f"{table(reports)}\n\n"
        f"Rows: {'; '.join(sources)} (at most {args.limit} of each"
        + (", the first 33 only (--quick)" if args.quick else "")
        + "). "
        + "".join(f"{note}. " for note in notes)
        + f"{versions}. Run {dt.date.today().isoformat()} on the branch's verifiers; rerun "
        "after changing a verifier.\n"
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the bundled sample only")
    parser.add_argument("--limit", type=int, default=300, help="rows of each input (default 300)")
    parser.add_argument("--workers", type=int, default=2, help="rewardkit's num_workers")
    parser.add_argument("--no-verl", action="store_true", help="skip verl (no venv made)")
    parser.add_argument("--verl-worker", nargs=2, metavar=("ROWS", "OUT"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if args.verl_worker:
        _verl_worker(*args.verl_worker)
        return
    reports, sources, notes = run(args)
    text = section(reports, sources, notes, args)
    print(text)
    if not args.quick:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from _report import write_section

        write_section(SECTION, text, ROOT / "BENCHMARKS.md")


if __name__ == "__main__":
    main(sys.argv[1:])
