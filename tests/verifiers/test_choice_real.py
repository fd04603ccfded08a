"""guards: choice.py on real multiple-choice outputs (tests/data/choice_outputs, 1,164 rows
of published MMLU-Pro and CommonsenseQA generations from 21 models; sources, licences
and how the truth was settled in its README).

The verifier's verdict equals the truth on every row but the known misreadings below,
each read by hand. A change that credits one more wrong row, or loses one more right
one, fails here: move the row into the table only with its reason.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from rewardkit.verifiers.base import Context
from rewardkit.verifiers.choice import ChoiceVerifier

ROWS = Path(__file__).parents[1] / "data" / "choice_outputs" / "rows.jsonl.gz"

# row id -> why the verifier's verdict differs from the truth
KNOWN: dict[str, str] = {
    # credited, truth wrong
    "00199-mmlupro-2682": "a few-shot question's answer summarised after the model's own, read last",
    "00683-mmlupro-3032": "'Option (H) is correct' before a final hedge over (D) and (H)",
    # not credited, truth right
    "00361-mmlupro-652": "'(E) for the number that ...': one letter for two parts, left unread",
    "00363-mmlupro-4681": "a letter and its option's text inside a sentence, no answer word",
    "00364-mmlupro-4749": "a letter and its option's text inside a sentence, no answer word",
    "00366-mmlupro-8008": "a letter and its option's text inside a sentence, no answer word",
    "00368-mmlupro-2299": "a last line 'A. <option text>' longer than a line answer is read",
    "00370-mmlupro-5014": "a letter and its option's text inside a sentence, no answer word",
    "00371-mmlupro-4709": "a letter and its option's text inside a sentence, no answer word",
    "00376-mmlupro-4835": "a letter and its option's text inside a sentence, no answer word",
    "00377-mmlupro-8441": "a last line 'A. <option text>' longer than a line answer is read",
    "00378-mmlupro-985": "a letter and its option's text inside a sentence, no answer word",
    "00486-mmlupro-10504": "'F. <option text>' then a paragraph naming 'option F'",
    "00500-mmlupro-11045": "'D. none of the above': 'none' in the option's text reads as no answer",
    "00652-mmlupro-2594": "'The answer is B. 8.': the option's number read as a second answer",
    "00674-mmlupro-2957": "'The closest option is (D)' then a discrepancy: weighed, not chosen",
    "01354-re2-127": "the option's text boxed without its letter",
    "01414-re2-1086": "the option's text boxed without its letter",
    "01415-re2-1095": "the option's text boxed without its letter",
    "01428-re2-469": "the option's text boxed without its letter",
}


def _rows() -> list[dict[str, Any]]:
    with gzip.open(ROWS, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture(scope="module")
def misread() -> dict[str, bool]:
    """Row id -> the verifier's verdict, for every row whose verdict is not its truth."""
    verifier = ChoiceVerifier()
    out = {}
    for row in _rows():
        if row["truth"] is None:
            continue
        extracted = verifier.extract(row["response"], Context.of(row["prompt"], None))
        credited = verifier.quick_check(extracted, row["gold"]).score == 1.0
        if credited != row["truth"]:
            out[row["id"]] = credited
    return out


def test_every_row_but_the_known_misreadings_gets_its_true_verdict(
    misread: dict[str, bool],
) -> None:
    assert set(misread) == set(KNOWN), sorted(set(misread) ^ set(KNOWN))


def test_at_most_two_wrong_answers_credited(misread: dict[str, bool]) -> None:
    assert sum(misread.values()) <= 2
