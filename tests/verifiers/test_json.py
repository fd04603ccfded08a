"""guards: rewardkit.verifiers._json: equality as JSON values (generated values and their
rewrites), pointers, and a parser that never raises."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.verifiers._json import MISSING, conclusion, json_equal, loads, pointer

scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same JSON value with every object's keys in another order and ints as floats."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


@settings(max_examples=100, deadline=None)
@given(values, st.randoms(use_true_random=False))
def test_a_value_equals_its_rewrites_and_its_json_text_round_trip(
    value: Any, rng: random.Random
) -> None:
    assert json_equal(value, json.loads(json.dumps(value)))
    assert json_equal(value, _shuffled(value, rng))
    assert not json_equal(value, [value]) and not json_equal(value, json.dumps(value))


def test_the_rules_of_equality() -> None:
    assert json_equal(5, 5.0) and json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not json_equal(True, 1) and not json_equal(1, True) and not json_equal(False, 0)
    assert not json_equal("5", 5) and not json_equal([1, 2], "[1, 2]")
    assert not json_equal({"a": 1}, {"a": 1, "b": 2}) and not json_equal([1, 2], [2, 1])
    assert not json_equal(float("nan"), float("nan"))
    assert json_equal(2**60, 2**60) and not json_equal(2**60 + 1, float(2**60))


def test_deep_values_compare_without_recursion() -> None:
    deep: Any = 1
    for _ in range(5_000):
        deep = [deep]
    other: Any = 1
    for _ in range(5_000):
        other = [other]
    assert json_equal(deep, other)


def test_loads_never_raises() -> None:
    assert loads('{"a": 1}') == (True, {"a": 1})
    for bad in ("{", "NaN", '{"a": Infinity}', "9" * 5000, "[" * 100_000, "1 2"):
        assert loads(bad) == (False, None)


def test_pointers() -> None:
    doc = {"a": [10, {"b/c": 1, "d~e": 2}], "": 3}
    assert pointer(doc, "") is doc
    assert pointer(doc, "/a/0") == 10 and pointer(doc, "/a/1/b~1c") == 1
    assert pointer(doc, "/a/1/d~0e") == 2 and pointer(doc, "/") == 3
    for missing in ("/a/2", "/a/01", "/a/-", "/a/\u00b2", "/x", "a", "/a/0/z"):
        assert pointer(doc, missing) is MISSING


def test_the_conclusion_is_after_the_thinking() -> None:
    assert conclusion("<think>a</think>b") == "b"
    assert conclusion("plain") == "plain"
    assert conclusion("<think>never closed {}") == ""
