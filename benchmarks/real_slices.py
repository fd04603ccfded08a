"""Two slices made from the real-output corpus: degenerate loops and prose answers.

    .venv/bin/python benchmarks/real_slices.py            # counts, and a sample of each slice
    .venv/bin/python benchmarks/real_slices.py --show 20  # more of the prose rewrites

``bench_scoring.py --real`` scores both beside the corpus (and the corpus with the
degenerate rows mixed in). Both are deterministic: same corpus, same seed, same rows.

*Degenerate* (:func:`degenerate_rows`): what a collapsing policy writes. A corpus row's
response, cut somewhere in its second half, runs into a loop until the policy's token
budget is spent (1,000 to 15,000 more characters), and stops mid-repeat. The loop is one
of: blank boxes ``\\boxed{}``, the gold answer boxed again and again, a sentence of the
response, a LaTeX line, one word. Truth: wrong, every row, also when the loop repeats the
right answer: a response that ends in a loop never stated a final answer, and a reward
that credits it pays the collapse. About 1.5% of the corpus size (the issue's held-out
set had 6 degenerate rows in 1,406).

*Prose* (:func:`prose_rows`): each corpus row whose answer sits in a box or an answer tag,
rewritten so that it does not: ``\\boxed{X}`` becomes ``X`` and ``<answer>``/``</answer>``
become a space. The meaning is kept, so the truth is carried over from the source row
(unknown stays unknown). Rows the rewrite would make ambiguous are dropped and counted:
several answer tags (a response that invents further turns, each with its own tag), two
different boxed values in the conclusion (a hedge that, unboxed, reads as a derivation),
a box whose value would run into a neighbouring word or number (``is\\boxed{5}``), a box
not followed by a brace group, unbalanced braces. Rows with neither box nor tag are
already prose: they are in the corpus and not repeated here.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import real_outputs as ro

__all__ = [
    "DEGENERATE_SEED",
    "DEGENERATE_SHARE",
    "LOOPS",
    "corpus_truths",
    "degenerate_rows",
    "prose_rows",
    "slice_truth",
]

DEGENERATE_SHARE = 0.015
"""Degenerate rows made, as a share of the corpus size."""
DEGENERATE_SEED = 0
LOOPS = ("blank boxes", "boxed gold", "sentence", "latex line", "word")
"""What the loop repeats; the rows take them in turn."""
LOOP_CHARS = (1_000, 15_000)
"""How long the loop runs (characters), drawn per row: what is left of a budget of 512
to 4k tokens."""


def corpus_truths(rows: list[dict[str, Any]]) -> list[bool | None]:
    """Each corpus row's truth, as ``real_outputs.truth`` settles it."""
    adjudicated = ro.load_adjudicated()
    verdicts = ro.math_verify_verdicts(rows)
    return [ro.truth(r, m, adjudicated) for r, m in zip(rows, verdicts, strict=True)]


def slice_truth(row: dict[str, Any]) -> bool | None:
    """A slice row's truth (it carries it in ``extra_info``)."""
    truth: bool | None = row["extra_info"]["truth"]
    return truth


# ---------------------------------------------------------------- degenerate rows


def degenerate_rows(
    rows: list[dict[str, Any]], share: float = DEGENERATE_SHARE, seed: int = DEGENERATE_SEED
) -> list[dict[str, Any]]:
    """``share`` of ``len(rows)`` degenerate rows, made from rows drawn with ``seed``."""
    rng = random.Random(seed)
    count = max(1, round(len(rows) * share))
    picked = sorted(rng.sample(range(len(rows)), count))
    out = []
    for k, index in enumerate(picked):
        row = rows[index]
        loop = LOOPS[k % len(LOOPS)]
        response = row["response"]
        head = response[: rng.randint(len(response) // 2, len(response))]
        unit = _loop_unit(loop, row, rng)
        size = rng.randint(*LOOP_CHARS)
        body = (unit * (size // len(unit) + 2))[: size + rng.randrange(len(unit))]
        out.append(
            {
                **row,
                "id": f"degenerate:{row['id']}",
                "response": head.rstrip() + "\n" + body,
                "extra_info": {**row["extra_info"], "slice": "degenerate", "loop": loop}
                | {"from": row["id"], "truth": False},
            }
        )
    return out


def _loop_unit(loop: str, row: dict[str, Any], rng: random.Random) -> str:
    """One turn of the loop, as a collapsing policy writes it."""
    gold = str(row["ground_truth"])
    if loop == "blank boxes":
        return rng.choice(["\\boxed{}", "\\boxed{} ", "$\\boxed{}$\n"])
    if loop == "boxed gold":
        return rng.choice([f"\\boxed{{{gold}}} ", f"The answer is $\\boxed{{{gold}}}$.\n"])
    if loop == "sentence":
        sentences = [
            s.strip() + ". "
            for s in re.split(r"(?<=[a-z0-9])\.\s+", row["response"])
            if 20 <= len(s.strip()) <= 80 and not set(s.strip()) & set("\n<>")
        ]
        return rng.choice(sentences) if sentences else "Let me check the answer again. "
    if loop == "latex line":
        lines = [m.group() for m in re.finditer(r"\$[^$\n]{4,60}\$", row["response"])]
        return (rng.choice(lines) if lines else f"$x = {gold}$") + "\n"
    words = re.findall(r"[A-Za-z]{3,12}", row["response"]) or ["wait"]
    return rng.choice(words) + " "


# --------------------------------------------------------------------- prose rows


def prose_rows(
    rows: list[dict[str, Any]], truths: list[bool | None]
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The rewritable rows without box or tag, and what became of every row (a tally:
    ``rewritten``, ``already prose``, or the reason a row was dropped)."""
    out, fate = [], Counter[str]()
    for row, truth in zip(rows, truths, strict=True):
        text, why = rewrite_as_prose(row["response"])
        fate[why] += 1
        if text is None:
            continue
        out.append(
            {
                **row,
                "id": f"prose:{row['id']}",
                "response": text,
                "extra_info": {**row["extra_info"], "slice": "prose", "from": row["id"]}
                | {"truth": truth},
            }
        )
    return out, fate


_BOX = re.compile(r"\\boxed\s*")
_TAG = re.compile(r"</?answer>")


def rewrite_as_prose(response: str) -> tuple[str | None, str]:
    """(the response without box or tag, "rewritten"), or (None, why not)."""
    if not _BOX.search(response) and not _TAG.search(response):
        return None, "already prose"
    if response.count("<answer>") > 1 or response.count("</answer>") > 1:
        return None, "dropped: several answer tags"
    parts, values, end = [], [], 0
    for found in _BOX.finditer(response):
        if found.start() < end:
            continue  # a box inside the box just unwrapped: its own turn comes below
        close = _closing_brace(response, found.end())
        if close is None:
            return None, "dropped: a box without a brace group"
        inner = response[found.end() + 1 : close]
        before, after = response[found.start() - 1 : found.start()], response[close + 1 : close + 2]
        if inner.strip() and (_joins(before, inner[:1]) or _joins(inner[-1:], after)):
            return None, "dropped: an unboxed value would run into its neighbour"
        parts += [response[end : found.start()], inner]
        values.append((found.start(), inner.strip()))
        end = close + 1
    text = _BOX.sub("", "".join(parts) + response[end:])  # a box in a box: its braces stay
    conclusion = response.rfind("</think>")
    final = {v for at, v in values if at > conclusion and v}
    if len(final) > 1:
        return None, "dropped: several boxed values in the conclusion"
    return _TAG.sub(" ", text), "rewritten"


def _closing_brace(text: str, start: int) -> int | None:
    """The index of the brace closing the group that opens at ``start``, or None."""
    if text[start : start + 1] != "{":
        return None
    depth, i = 0, start
    while i < min(len(text), start + 2000):
        ch = text[i]
        if ch == "\\":
            i += 2  # an escaped character (\{, \}) or a command's first letter
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            return i
        i += 1
    return None


def _joins(left: str, right: str) -> bool:
    """Two characters that, put side by side, read as one word or number."""
    return bool(left and right and (left.isalnum() or left == ".") and right.isalnum())


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=5, help="prose rewrites to print")
    parser.add_argument("--seed", type=int, default=1, help="which prose rewrites to print")
    args = parser.parse_args(argv)
    rows = ro.load_corpus()
    truths = corpus_truths(rows)
    loops = degenerate_rows(rows)
    prose, fate = prose_rows(rows, truths)
    print(f"corpus: {len(rows)} rows")
    print(
        f"degenerate: {len(loops)} rows; loops {dict(Counter(r['extra_info']['loop'] for r in loops))}"
    )
    known = Counter(str(slice_truth(r)) for r in prose)
    print(f"prose: {len(prose)} rows (truth {dict(known)}); every corpus row: {dict(fate)}")
    by_id = {r["id"]: r for r in rows}
    for row in random.Random(args.seed).sample(prose, min(args.show, len(prose))):
        source = by_id[row["extra_info"]["from"]]["response"]
        print("-" * 60, f"\n{row['id']} gold {row['ground_truth']!r} truth {slice_truth(row)}")
        print("before: ..." + source[-240:].replace("\n", " "))
        print("after:  ..." + row["response"][-240:].replace("\n", " "))


if __name__ == "__main__":
    main(sys.argv[1:])
