"""guards: rewardkit.models.batching: token-budget packing and the batcher that gathers
concurrent calls into rounds.
"""

from __future__ import annotations

import asyncio
import math
import random

import pytest

from rewardkit.errors import ScorerError
from rewardkit.models.batching import (
    DEFAULT_COST,
    Batcher,
    CostModel,
    Emit,
    ForwardCost,
    pack_by_tokens,
)


def test_pack_by_tokens_respects_the_budget_and_keeps_every_row() -> None:
    rng = random.Random(0)
    lengths = [rng.choice([5, 10, 40, 200, 900]) for _ in range(300)]
    cost = CostModel(fixed=100.0)
    batches = pack_by_tokens(lengths, max_tokens=1000, max_rows=16, cost=cost)
    assert sorted(i for b in batches for i in b) == list(range(300))
    for batch in batches:
        width = max(lengths[i] for i in batch)
        assert len(batch) * width <= 1000 and len(batch) <= 16
        assert lengths[batch[0]] == width  # longest first
        assert sum(width - lengths[i] for i in batch) <= 100  # padding within one forward's cost


def test_pack_by_tokens_edges() -> None:
    assert pack_by_tokens([], 100, 8) == []
    assert pack_by_tokens([500, 3], 100, 8) == [[0], [1]]  # too long for the budget: alone
    assert pack_by_tokens([1] * 5, 100, 2) == [[0, 1], [2, 3], [4]]
    # 10 tokens padded to 100 costs 90 > 50: a forward of its own is cheaper.
    assert pack_by_tokens([100, 10, 95], 1000, 8, CostModel(fixed=50)) == [[0, 2], [1]]
    assert pack_by_tokens([100, 10, 95], 1000, 8, CostModel(fixed=95)) == [[0, 2, 1]]


def test_pack_by_tokens_follows_the_cost_of_a_forward() -> None:
    lengths = [300, 290, 200, 120, 110, 100, 60, 50]
    # Free forwards (a CPU): only rows of one length share a batch.
    assert pack_by_tokens(lengths, 10_000, 64, CostModel(fixed=0)) == [[i] for i in range(8)]
    # Costly forwards (a GPU): one batch, up to the token budget.
    assert pack_by_tokens(lengths, 10_000, 64, CostModel(fixed=math.inf)) == [list(range(8))]
    assert pack_by_tokens(lengths, 1_200, 64, CostModel(fixed=math.inf)) == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
    ]
    # Attention's square term makes padding long rows dearer than the linear rate says.
    linear = pack_by_tokens(lengths, 10_000, 64, CostModel(fixed=300, per_token=1))
    square = pack_by_tokens(lengths, 10_000, 64, CostModel(300, 1, per_token_sq=0.01))
    assert len(square) > len(linear)


def timed_passes(cost: CostModel, shapes: list[tuple[int, int]]) -> ForwardCost:
    fitted = ForwardCost(min_samples=8)
    for rows, width in shapes:
        fitted.observe(
            rows,
            width,
            cost.fixed + cost.per_token * rows * width + cost.per_token_sq * rows * width**2,
        )
    return fitted


SHAPES = [(rows, width) for rows in (1, 2, 4, 8, 16) for width in (50, 120, 300)]


def test_forward_cost_recovers_the_cost_of_its_passes() -> None:
    gpu_like = CostModel(fixed=0.020, per_token=2e-7, per_token_sq=1e-10)
    fitted = timed_passes(gpu_like, SHAPES).model
    assert fitted.fixed == pytest.approx(gpu_like.fixed, rel=1e-6)
    assert fitted.per_token == pytest.approx(gpu_like.per_token, rel=1e-4)
    assert fitted.per_token_sq == pytest.approx(gpu_like.per_token_sq, rel=1e-4)
    assert fitted.padding_tokens() == pytest.approx(100_000, rel=1e-4)

    cpu_like = CostModel(fixed=0.0, per_token=6e-5)
    assert timed_passes(cpu_like, SHAPES).model.padding_tokens() == pytest.approx(0, abs=1e-6)


def test_forward_cost_keeps_its_prior_until_it_can_tell() -> None:
    prior = CostModel(fixed=123.0)
    fitted = ForwardCost(prior, min_samples=8)
    for _ in range(7):
        fitted.observe(4, 100, 0.5)
    assert fitted.model is prior  # too few passes
    for _ in range(20):
        fitted.observe(4, 100, 0.5)
    assert fitted.model is prior  # many, but all one size: fixed and per-token cost are one


def test_forward_cost_that_cannot_bound_padding_keeps_its_prior() -> None:
    """Forwards whose time does not grow with tokens say nothing about what padding costs:
    the fit keeps the prior (an infinite allowance would pad any row into any batch)."""
    flat = timed_passes(CostModel(fixed=0.01, per_token=0.0), SHAPES).model
    assert flat == DEFAULT_COST
    assert flat.padding_tokens() == 512
    assert pack_by_tokens([900, 10], 10_000, 64, flat) == [[0], [1]]  # 890 padding > 512


def test_forward_cost_with_a_negative_linear_term_is_refitted_linear() -> None:
    """Steps in a GPU's forward times can make least squares put all of the growth in the
    attention term, with a negative linear one; clamped to 0, that printed an infinite
    allowance. The fit falls back to a line, which bounds padding."""
    stepped = CostModel(fixed=0.02, per_token=-1e-7, per_token_sq=1e-9)
    fitted = timed_passes(stepped, SHAPES).model
    assert fitted.per_token > 0 and fitted.per_token_sq == 0
    assert 0 < fitted.padding_tokens() < math.inf


class Recorder:
    """A process function that answers item * 10 and records each round."""

    def __init__(self, delay: float = 0.0) -> None:
        self.rounds: list[list[int]] = []
        self.delay = delay

    async def __call__(self, items: list[int], emit: Emit[int]) -> None:
        self.rounds.append(list(items))
        await asyncio.sleep(self.delay)
        for i, item in enumerate(items):
            emit(i, ValueError("odd") if item == 13 else item * 10)


async def test_concurrent_calls_share_a_round_and_results_stay_in_place() -> None:
    rec = Recorder()
    batcher: Batcher[int, int] = Batcher(rec, max_wait_s=0.01)
    results = await asyncio.gather(*(batcher.submit(i) for i in range(20)), return_exceptions=True)
    await batcher.close()
    assert rec.rounds == [list(range(20))]
    assert results[:13] == [i * 10 for i in range(13)] and isinstance(results[13], ValueError)


async def test_calls_arriving_while_a_round_runs_form_the_next_round() -> None:
    rec = Recorder(delay=0.05)
    batcher: Batcher[int, int] = Batcher(rec, max_wait_s=0.001)
    first = asyncio.ensure_future(batcher.submit(0))
    await asyncio.sleep(0.02)  # round one is running
    rest = [asyncio.ensure_future(batcher.submit(i)) for i in range(1, 6)]
    await asyncio.gather(first, *rest)
    await batcher.close()
    assert rec.rounds == [[0], [1, 2, 3, 4, 5]]


async def test_max_round_caps_a_round() -> None:
    rec = Recorder()
    batcher: Batcher[int, int] = Batcher(rec, max_wait_s=1.0, max_round=4)
    await asyncio.wait_for(
        asyncio.gather(*(batcher.submit(i) for i in range(8))), 0.5
    )  # full rounds need no wait
    await batcher.close()
    assert [len(r) for r in rec.rounds] == [4, 4]


async def test_a_cancelled_caller_is_dropped_before_its_round() -> None:
    rec = Recorder()
    batcher: Batcher[int, int] = Batcher(rec, max_wait_s=0.05)
    gone = asyncio.ensure_future(batcher.submit(1))
    kept = asyncio.ensure_future(batcher.submit(2))
    await asyncio.sleep(0.01)
    gone.cancel()
    assert await kept == 20
    await batcher.close()
    assert rec.rounds == [[2]]


async def test_a_failing_or_forgetful_process_never_leaves_callers_waiting() -> None:
    async def broken(items: list[int], emit: Emit[int]) -> None:
        raise RuntimeError("device lost")

    async def forgetful(items: list[int], emit: Emit[int]) -> None:
        emit(0, 1)

    batcher: Batcher[int, int] = Batcher(broken)
    with pytest.raises(ScorerError, match="device lost"):
        await batcher.submit(1)
    await batcher.close()
    batcher = Batcher(forgetful)
    results = await asyncio.gather(batcher.submit(1), batcher.submit(2), return_exceptions=True)
    await batcher.close()
    assert results[0] == 1 and isinstance(results[1], ScorerError)


async def test_close_fails_waiting_calls_and_refuses_new_ones() -> None:
    started = asyncio.Event()

    async def slow(items: list[int], emit: Emit[int]) -> None:
        started.set()
        await asyncio.sleep(10)

    batcher: Batcher[int, int] = Batcher(slow, name="slow model")
    running = asyncio.ensure_future(batcher.submit(1))
    await started.wait()
    waiting = asyncio.ensure_future(batcher.submit(2))  # queued behind the running round
    await asyncio.sleep(0)
    await asyncio.wait_for(batcher.close(), 1)
    for call in (running, waiting):
        with pytest.raises(ScorerError, match="slow model closed before scoring"):
            await call
    with pytest.raises(ScorerError, match="is closed"):
        await batcher.submit(3)
