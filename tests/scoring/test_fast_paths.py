"""guards: scoring.rows.quick_decides, the one place reward.verifiers.fast_paths is decided, on every path a row takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from rewardkit.config import RewardConfig
from rewardkit.scoring import tasks
from rewardkit.scoring.engine import RewardEngine
from rewardkit.scoring.rows import quick_decides
from rewardkit.shaping.scaled import Scaled
from rewardkit.verifiers.base import Entry, Extracted, Verdict
from rewardkit.verifiers.math import MathVerifier
from rewardkit.verifiers.registry import VerifierTable, entries


@dataclass(frozen=True)
class _Marked:
    """Says which phase decided: ``quick_check`` always decides, ``check`` too."""

    key: str = "marked"

    def extract(self, response: str) -> Extracted:
        return Extracted(response.strip(), {})

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        return Verdict(float(extracted.answer == ground_truth), {"by": "quick"})

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        return Verdict(float(extracted.answer == ground_truth), {"by": "check"})


@dataclass(frozen=True)
class _MarkedApplyingTheSetting(_Marked):
    """A verifier that applies fast_paths itself: what its quick_check returns stands."""

    key: str = "marked-own"
    fast_paths: bool = False


QUICK = Verdict(0.0, {"hedged": True})


@pytest.mark.parametrize(
    ("verifier", "quick", "fast_paths", "decides", "why"),
    [
        (_Marked(), None, True, False, "no quick verdict: check decides"),
        (_Marked(), QUICK, True, True, "fast paths on: every quick verdict stands"),
        (_Marked(), QUICK, False, False, "off, a verifier blind to it: a fast equivalence"),
        (_MarkedApplyingTheSetting(), QUICK, False, True, "off, applied by the verifier: a guard"),
        (MathVerifier(fast_paths=False), QUICK, False, True, "MathVerifier keeps only guards"),
        (MathVerifier(fast_paths=True), QUICK, False, False, "built with them on: dropped"),
        (Scaled(MathVerifier(fast_paths=False)), QUICK, False, True, "Scaled forwards it"),
        (Scaled(_Marked()), QUICK, False, False, "Scaled of a blind verifier stays blind"),
    ],
)
def test_quick_decides(
    verifier: Any, quick: Any, fast_paths: bool, decides: bool, why: str
) -> None:
    assert quick_decides(verifier, quick, fast_paths) is decides, why


async def _score(rows: list[dict[str, Any]], fast_paths: bool) -> tuple[list[Any], dict[str, int]]:
    config = RewardConfig.model_validate(
        {"reward": {"num_workers": 2, "verifiers": {"fast_paths": fast_paths}}}
    )
    engine = await RewardEngine.create(config)
    own = [
        Entry("marked", lambda name: name == "marked", lambda section: _Marked()),
        Entry("own", lambda name: name == "own", lambda section: _MarkedApplyingTheSetting()),
    ]
    engine._verifiers = VerifierTable(config.reward, (*own, *entries()))
    try:
        results = await engine.score_many(rows)
    finally:
        await engine.close()
    return results, engine.stats


@pytest.mark.parametrize("batch", [1, 100], ids=["inline", "spread"])
async def test_fast_paths_off_sends_equivalences_to_check_and_keeps_guards(batch: int) -> None:
    rows = [
        {"data_source": "marked", "response": "1", "ground_truth": "1"},
        {"data_source": "own", "response": "1", "ground_truth": "1"},
    ] * batch
    results, stats = await _score(rows, fast_paths=False)
    assert [r.extra["by"] for r in results[:2]] == ["check", "quick"]
    assert all(r.score == 1.0 for r in results)
    assert stats["quick"] == batch  # the guard rows, decided where they were extracted
    assert stats["pool"] + stats["deduplicated"] + stats["cache_hits"] == batch
    results, stats = await _score(rows, fast_paths=True)
    assert {r.extra["by"] for r in results} == {"quick"} and stats["pool"] == 0


HEDGED = "First \\boxed{3}, then \\boxed{4}."  # two different boxes: hedging, pred the last


@pytest.mark.parametrize("data_source", ["lighteval/MATH", "math_dapo"])  # plain, Scaled
async def test_a_math_hedge_with_fast_paths_off_is_decided_inline_as_check_decides_it(
    data_source: str,
) -> None:
    """A hedge is a guard, decided before any equivalence: fast_paths=false no longer sends
    it to a worker, and its Result is the one check gives."""
    row = {"data_source": data_source, "response": HEDGED, "ground_truth": "3"}
    [result], stats = await _score([row], fast_paths=False)
    assert result.extra.get("hedged") is True
    assert stats["quick"] == 1 and stats["pool"] == 0
    verifier = MathVerifier(fast_paths=False)
    extracted = verifier.extract(HEDGED)
    checked = verifier.check(extracted, "3")
    assert checked.extra.get("hedged") is True
    assert result.components["rule"] == (checked.score if data_source != "math_dapo" else -1.0)
    # a row too big for the loop, every phase in a worker, takes the same rule
    whole = tasks.verify_whole(verifier, HEDGED, "3", False)
    assert not isinstance(whole, str) and whole[0] == verifier.quick_check(extracted, "3")


async def test_a_math_equivalence_with_fast_paths_off_still_goes_to_math_verify() -> None:
    row = {"data_source": "lighteval/MATH", "response": "\\boxed{12}", "ground_truth": "12"}
    [result], stats = await _score([row], fast_paths=False)
    assert result.score == 1.0
    assert stats["quick"] == 0 and stats["pool"] == 1


async def test_two_hedges_against_one_reference_each_keep_their_own_verdict() -> None:
    """Two hedged answers have the same check key (no answer, the same source): sent to
    check with fast_paths off, the second row was given the first row's shared verdict,
    its ``pred`` included. As guard verdicts they are each the row's own."""
    rows = [
        {"data_source": "lighteval/MATH", "response": HEDGED, "ground_truth": "3"},
        {"data_source": "lighteval/MATH", "response": HEDGED.replace("3", "5").replace("4", "6"),
         "ground_truth": "3"},
    ]  # fmt: skip
    results, stats = await _score(rows, fast_paths=False)
    assert [(r.score, r.extra["hedged"], r.extra["pred"]) for r in results] == [
        (0.0, True, "4"),
        (0.0, True, "6"),
    ]
    assert stats["pool"] == stats["deduplicated"] == stats["cache_hits"] == 0
