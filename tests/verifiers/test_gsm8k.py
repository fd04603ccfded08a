"""GSM8K: strict '#### n' and flexible last-number extraction, compared numerically."""

from __future__ import annotations

import pickle
import time

import pytest

from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers.base import Verifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier

STRICT = GSM8KVerifier()
FLEXIBLE = GSM8KVerifier(method="flexible")

# (gold, response, strict score, flexible score)
ROWS = [
    (
        "72",
        "Natalia sold 48/2 = 24 clips in May.\nAltogether she sold 48+24 = 72 clips.\n#### 72",
        1.0,
        1.0,
    ),
    ("72", "She sold 48 + 24 = 72 clips in total.\n#### 72.00", 1.0, 1.0),
    ("72", "She sold 72 clips.", 0.0, 1.0),
    ("72", "#### 72\n\nWait, let me recheck: 48 + 24 = 73.", 1.0, 0.0),
    ("1000", "The total cost is 10 * 100 = $1,000.\n#### 1,000", 1.0, 1.0),
    ("1000", "#### $1,000", 1.0, 1.0),
    ("18", "Janet makes 9 * $2 = $18 every day.\n#### $18", 1.0, 1.0),
    ("-3", "The temperature dropped to -3 degrees.\n#### -3", 1.0, 1.0),
    ("-3", "#### 3", 0.0, 0.0),
    ("0.5", "Half of it: 1/2 = 0.5\n#### 0.50", 1.0, 1.0),
    ("5", "First guess: #### 3\nActually the answer is 5.\n#### 5", 1.0, 1.0),
    ("5", "#### 5\n#### 6", 0.0, 0.0),
    ("5", "#### five", 0.0, 0.0),
    ("5", "", 0.0, 0.0),
    ("5", "I don't know.", 0.0, 0.0),
    ("5", "The answer is 5.", 0.0, 1.0),
    ("12", "####12", 1.0, 1.0),
    ("1234567", "That is 1,234,567 grains.\n#### 1,234,567", 1.0, 1.0),
    # a full GSM8K dataset answer as the ground truth
    ("Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72", "#### 72", 1.0, 1.0),
]


@pytest.mark.parametrize(("gold", "response", "strict", "flexible"), ROWS)
def test_regression_table(gold: str, response: str, strict: float, flexible: float) -> None:
    for verifier, expected in ((STRICT, strict), (FLEXIBLE, flexible)):
        extracted = verifier.extract(response)
        quick = verifier.quick_check(extracted, gold)
        assert quick.score == expected, verifier.key
        assert quick.extra["acc"] is (expected == 1.0)
        assert verifier.check(extracted, gold) == quick  # no slow path


def test_pred_is_reported() -> None:
    verdict = STRICT.quick_check(STRICT.extract("#### 1,000"), "1000")
    assert verdict.extra == {"acc": True, "pred": "1,000"}
    assert STRICT.quick_check(STRICT.extract("no number"), "1").extra == {
        "acc": False,
        "pred": None,
    }


@pytest.mark.parametrize(
    ("gold", "expected"), [(72, 1.0), (72.0, 1.0), (72.5, 0.0), (["70", 72], 1.0)]
)
def test_non_string_ground_truths(gold: object, expected: float) -> None:
    assert STRICT.quick_check(STRICT.extract("#### 72"), gold).score == expected


def test_float_ground_truth_is_read_as_written() -> None:
    assert STRICT.quick_check(STRICT.extract("#### 0.1"), 0.1).score == 1.0


@pytest.mark.parametrize("gold", [None, "", "seventy-two", [], {"a": 1}, True, float("inf")])
def test_unusable_ground_truth_is_an_invalid_row(gold: object) -> None:
    with pytest.raises(InvalidSampleError, match="gsm8k: ground_truth"):
        STRICT.quick_check(STRICT.extract("#### 72"), gold)


def test_key_options_and_protocol() -> None:
    assert STRICT.key == "gsm8k:strict"
    assert FLEXIBLE.key == "gsm8k:flexible"
    assert isinstance(STRICT, Verifier)
    assert pickle.loads(pickle.dumps(FLEXIBLE)) == FLEXIBLE
    with pytest.raises(ValueError, match="strict"):
        GSM8KVerifier(method="lenient")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("response", "strict"),
    [
        ("a" * 1_000_000, 0.0),
        ("#### " * 200_000, 0.0),
        ("9" * 1_000_000, 0.0),
        ("1," * 500_000, 0.0),
        ("x" * 1_000_000 + "#### 5", 1.0),
        ("#### 5" + "x" * 1_000_000, 0.0),  # only the last 256K characters are searched
        ("\x00#### 5\x00", 1.0),
        ("\ud800 #### 5 \ud800", 1.0),
    ],
    ids=["prose", "hashes", "digits", "commas", "late-answer", "early-answer", "nul", "surrogate"],
)
def test_hostile_responses_are_bounded(response: str, strict: float) -> None:
    for verifier in (STRICT, FLEXIBLE):
        started = time.perf_counter()
        verdict = verifier.quick_check(verifier.extract(response), "5")
        assert time.perf_counter() - started < 1.0
        assert verdict.score in (0.0, 1.0)
    assert STRICT.quick_check(STRICT.extract(response), "5").score == strict
