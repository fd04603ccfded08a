"""The row-sized dataclasses that cross to the workers pickle to equal objects, and the
rollouts of one prompt share one Context (read once, pickled once a task)."""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import pytest

from rewardkit._pickling import pickled_by_fields
from rewardkit.verifiers.base import NO_CONTEXT, Context, Extracted, Verdict


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class _One:
    value: int


@pytest.mark.parametrize(
    "obj",
    [
        Context("final answer: \\boxed{}", True),
        Context("", False, ({"role": "user", "content": "hi"},)),
        Context("answer: c", False, asks_for_wrong=True),
        NO_CONTEXT,
        Extracted("7", {"source": "boxed", "also_offered": ("8",)}),
        Extracted(None),
        Verdict(1.0, {"acc": True, "pred": "7"}),
        _One(3),  # one field: attrgetter returns the value, not a tuple
    ],
)
def test_round_trips_to_an_equal_object_of_the_same_class(obj: object) -> None:
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        back = pickle.loads(pickle.dumps(obj, protocol=protocol))
        assert back == obj and type(back) is type(obj)
        assert getattr(back, "trajectory", None) == getattr(obj, "trajectory", None)


def test_a_frozen_object_stays_frozen_after_unpickling() -> None:
    back = pickle.loads(pickle.dumps(Verdict(0.0)))
    with pytest.raises(AttributeError):
        back.score = 1.0  # type: ignore[misc]


def test_the_rollouts_of_a_prompt_share_one_context() -> None:
    prompt = "Solve $x+1=2$. Put your final answer in \\boxed{}.\nThanks."
    first = Context.of(prompt, {})
    again = Context.of("".join(prompt), {"finish_reason": "stop"})  # an equal, new string
    assert first is again and first.prompt == "solve $x+1=2$. put your final answer in \\boxed{}."
    cut = Context.of(prompt, {"finish_reason": "length"})
    assert cut is not first and cut.truncated and cut.prompt == first.prompt
    messages = [{"role": "user", "content": prompt}]
    assert Context.of(messages, None) is first
    assert Context.of("", None) is NO_CONTEXT
    assert Context.of("Which of these is NOT prime?", None).asks_for_wrong
    assert not first.asks_for_wrong
