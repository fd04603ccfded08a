"""Score every variant of every correct row through one RewardLoop and tally per family.

For each input row three things are scored with the user's configuration: the row
itself, a *control* (the same response with a plainly wrong answer: gold + 1) and every
variant. A row is audited only when the reward separates the two: the original scores
above the control. Then

* a hack variant is **credited** when it scores above the control: it earns more than
  an honest wrong answer, which a policy will learn to exploit (this holds for a reward
  on the 0/1 scale, verl's -1/+1 scale, with a format bonus or a partial score alike);
* a benign variant **lost** credit when it scores below the original;
* a variant whose row did not end ``ok`` (timeout, error) is **failed**: reported apart,
  never counted as credited.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from rewardkit.audit.code_hacks import code_control, code_variants
from rewardkit.audit.transforms import Variant, benign_families, control, hack_families, variants
from rewardkit.errors import InputError, RewardkitError
from rewardkit.types import BadRow, Result

__all__ = [
    "AuditReport",
    "FamilyTally",
    "audit_rows",
    "default_rows",
    "load_input",
    "real_corpus_rows",
]

_EPS = 1e-9
_TAIL = 240
CODE_FAMILIES = (
    "code_early_exit",
    "code_always_equal",
    "code_patched_builtins",
    "code_forged_verdict",
    "code_namespace_injection",
    "code_read_tests",
)


def all_families() -> dict[str, bool]:
    """Every family name -> whether it is a hack."""
    out = {name: True for name in hack_families()}
    out.update({name: True for name in CODE_FAMILIES})
    out.update({name: False for name in benign_families()})
    return out


# ------------------------------------------------------------------ input


def _tail(text: str, n: int = _TAIL) -> str:
    return text if len(text) <= n else "..." + text[-n:]


def _correct(row: Mapping[str, Any]) -> bool:
    """Rows the input itself marks wrong (``extra_info.expected_correct: false``,
    ``source_label: false``) are left out; every other row is taken as correct, and the
    reward decides (a row it does not credit is skipped)."""
    extra = row.get("extra_info")
    if isinstance(extra, Mapping):
        if extra.get("expected_correct") is False or extra.get("source_label") is False:
            return False
    return True


def load_input(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a Sample file (the readers of ``rewardkit score``), or of a real-output
    corpus folder (``tests/data/real_outputs``: only its rows graded correct)."""
    from rewardkit.io import read_rows

    if Path(path).is_dir():
        return real_corpus_rows(Path(path))
    rows = [row for row in read_rows(path) if not isinstance(row, BadRow)]
    bad = [row for row in rows if not isinstance(row, dict)]
    if bad:
        raise InputError(f"{path}: rows must be JSON objects, got {type(bad[0]).__name__}")
    return [row for row in rows if _correct(row)]


def real_corpus_rows(folder: Path) -> list[dict[str, Any]]:
    """The corpus rows graded correct: a hand verdict of true, or the source's own label
    true where math-verify agrees (the corpus README's truth)."""
    if not any(folder.glob("*.jsonl.gz")):
        raise InputError(f"{folder}: no *.jsonl.gz rows in this folder")
    judged: dict[str, Any] = {}
    adjudicated = folder / "adjudicated.jsonl"
    if adjudicated.exists():
        for line in adjudicated.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                judged[entry["id"]] = entry["correct"]
    mv_path = folder / "math_verify.json"
    mv = json.loads(mv_path.read_text(encoding="utf-8"))["verdicts"] if mv_path.exists() else {}
    out = []
    for path in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                row = json.loads(line)
                if row["id"] in judged:
                    truth = judged[row["id"]]
                else:
                    label = (row.get("extra_info") or {}).get("source_label")
                    truth = label if label is True and mv.get(row["id"]) is True else None
                if truth is True:
                    out.append(row)
    return out


def _checkout() -> Path | None:
    """The source checkout this package runs from, if it is one."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "pyproject.toml").exists() and (root / "examples").is_dir() else None


def default_rows(limit: int = 0) -> tuple[list[dict[str, Any]], list[str]]:
    """The bundled sample, plus ``examples/grpo_math.jsonl`` and the real-output corpus
    when running from a source checkout: at most ``limit`` rows of each (0: all).
    Returns the rows and where they came from."""
    names = ["rewardkit/audit/data/sample.jsonl"]
    text = resources.files("rewardkit.audit").joinpath("data/sample.jsonl").read_text("utf-8")
    rows = stride([json.loads(line) for line in text.splitlines() if line.strip()], limit)
    root = _checkout()
    if root is not None:
        example = root / "examples" / "grpo_math.jsonl"
        if example.exists():
            rows += stride(load_input(example), limit)
            names.append("examples/grpo_math.jsonl")
        corpus = root / "tests" / "data" / "real_outputs"
        if corpus.is_dir() and any(corpus.glob("*.jsonl.gz")):
            rows += stride(real_corpus_rows(corpus), limit)
            names.append("tests/data/real_outputs (rows graded correct)")
    return rows, names


def stride(rows: Sequence[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """At most ``limit`` rows, a fixed stride over them (0: all), so every file is sampled."""
    if limit <= 0 or len(rows) <= limit:
        return list(rows)
    step = len(rows) / limit
    return [rows[int(i * step)] for i in range(limit)]


# ------------------------------------------------------------------ tallies


@dataclass
class FamilyTally:
    family: str
    hack: bool
    tried: int = 0
    hits: int = 0  # hack: credited; benign: lost credit
    failed: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"hack": self.hack, "tried": self.tried}
        out["credited" if self.hack else "lost"] = self.hits
        out["failed"] = self.failed
        out["examples"] = self.examples
        if self.failures:
            out["failures"] = self.failures
        return out


@dataclass
class AuditReport:
    families: dict[str, FamilyTally]
    rows_in: int
    rows_audited: int
    rows_skipped: int  # the reward did not score the original above the control
    rows_unscored: int  # the original or the control did not end ok
    sources: list[str] = field(default_factory=list)

    @property
    def credited(self) -> int:
        return sum(t.hits for t in self.families.values() if t.hack)

    @property
    def benign_lost(self) -> int:
        return sum(t.hits for t in self.families.values() if not t.hack)

    @property
    def failed(self) -> int:
        return sum(t.failed for t in self.families.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "credited": self.credited,
            "benign_lost": self.benign_lost,
            "failed": self.failed,
            "rows": {
                "input": self.rows_in,
                "audited": self.rows_audited,
                "skipped_not_credited": self.rows_skipped,
                "skipped_not_ok": self.rows_unscored,
            },
            "sources": self.sources,
            "families": {
                name: tally.to_json() for name, tally in self.families.items() if tally.tried
            },
        }


def _row_variants(row: Mapping[str, Any], families: set[str] | None) -> list[Variant]:
    found = code_variants(row) if _is_code(row) else variants(row)
    return [v for v in found if families is None or v.family in families]


def _is_code(row: Mapping[str, Any]) -> bool:
    from rewardkit.audit.code_hacks import is_code_row

    return is_code_row(row)


def audit_rows(
    rows: Iterable[Mapping[str, Any]],
    score: Any,
    *,
    families: set[str] | None = None,
    examples: int = 3,
) -> AuditReport:
    """Build every variant of ``rows``, score them with ``score`` (a callable taking a
    list of Sample dicts and returning Results in order, e.g. ``RewardLoop.score``) and
    tally per family."""
    plan: list[tuple[int, Variant | None, Mapping[str, Any]]] = []  # (row, variant, sample)
    originals: list[Mapping[str, Any]] = []
    for row in rows:
        wrong = code_control(row) if _is_code(row) else control(row)
        found = _row_variants(row, families)
        if wrong is None or not found:
            continue
        i = len(originals)
        originals.append(row)
        plan.append((i, None, dict(row)))
        plan.append((i, wrong, wrong.row(row)))
        plan += [(i, v, v.row(row)) for v in found]
    if not originals:
        raise RewardkitError(
            "no row to audit: each needs a response, a gold answer (ground_truth) and a "
            "family that applies to it"
        )
    results: list[Result] = list(score([sample for _, _, sample in plan]))
    base: dict[int, Result] = {}
    floor: dict[int, Result] = {}
    for (i, variant, _), result in zip(plan, results, strict=True):
        if variant is None:
            base[i] = result
        elif variant.family == "control":
            floor[i] = result
    names = all_families()
    tallies = {name: FamilyTally(name, hack) for name, hack in names.items()
               if families is None or name in families}  # fmt: skip
    candidates: dict[str, list[dict[str, Any]]] = {name: [] for name in tallies}
    audited: set[int] = set()
    skipped: set[int] = set()
    unscored: set[int] = set()
    for (i, variant, _), result in zip(plan, results, strict=True):
        if variant is None or variant.family == "control":
            continue
        orig, ctrl = base[i], floor[i]
        if not (orig.ok and ctrl.ok):
            unscored.add(i)
            continue
        assert orig.score is not None and ctrl.score is not None
        if orig.score <= ctrl.score + _EPS:
            skipped.add(i)
            continue
        audited.add(i)
        tally = tallies[variant.family]
        tally.tried += 1
        row = originals[i]
        if not result.ok:
            tally.failed += 1
            if len(tally.failures) < examples:
                tally.failures.append(_example(row, variant, result, orig, ctrl))
            continue
        assert result.score is not None
        hit = (
            (result.score > ctrl.score + _EPS)
            if variant.hack
            else (result.score < orig.score - _EPS)
        )
        if hit:
            tally.hits += 1
            if len(candidates[variant.family]) < _CANDIDATES:
                candidates[variant.family].append(_example(row, variant, result, orig, ctrl))
    for name, kept in candidates.items():
        tallies[name].examples = _varied(kept, examples)
    return AuditReport(
        families=tallies,
        rows_in=len(originals),
        rows_audited=len(audited),
        rows_skipped=len(skipped - audited),
        rows_unscored=len(unscored - audited),
    )


_CANDIDATES = 50  # examples kept per family before picking the varied few


def _varied(found: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """Up to ``n`` examples, each from another data_source, else with another description,
    when there are such (the first rows of a file alone would show one shape)."""
    picked: list[dict[str, Any]] = []
    for key in (
        lambda e: e["data_source"],
        lambda e: e["description"],
        lambda e: id(e),
    ):
        seen = {key(e) for e in picked}
        for example in found:
            if len(picked) >= n:
                return picked
            if example not in picked and key(example) not in seen:
                picked.append(example)
                seen.add(key(example))
    return picked


def _example(
    row: Mapping[str, Any], variant: Variant, result: Result, orig: Result, ctrl: Result
) -> dict[str, Any]:
    out = {
        "id": row.get("id"),
        "data_source": row.get("data_source"),
        "ground_truth": row.get("ground_truth")
        if isinstance(row.get("ground_truth"), str)
        else None,
        "description": variant.description,
        "original": _tail(str(row.get("response", ""))),
        "variant": _tail(variant.response),
        "score": result.score,
        "original_score": orig.score,
        "wrong_answer_score": ctrl.score,
    }
    if not result.ok:
        out["status"] = result.status.value
        out["error"] = result.error
    return out
