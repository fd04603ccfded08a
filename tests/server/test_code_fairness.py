"""guards: code rows of concurrent requests share the sandbox's slots fairly, and a row's
time limit (reward.async_timeout_s) counts its own runs, never its wait for a slot, which
has a bound of its own (reward.sandbox_fusion.queue_timeout_s)."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import httpx
import pytest

from _support.serving import in_thread, running_app, running_server
from rewardkit._fair import FairSlots, fair_share
from rewardkit.config import load_config
from rewardkit.errors import ConfigError
from rewardkit.sandbox import Sandbox, SandboxOptions
from rewardkit.sandbox.server import create_sandbox_app
from rewardkit.scoring.guard import Guard
from rewardkit.types import Status

SLOW_S = 1.0  # each of request A's runs sleeps this long: no CPU, so the load cannot bend it


def _code_row(i: int, sleep_s: float, row_id: str) -> dict[str, Any]:
    """A correct stdin/stdout answer that sleeps ``sleep_s`` first (one case; ``i`` makes
    each row's tests, so each row's run, its own)."""
    code = f"import time\ntime.sleep({sleep_s})\nprint(int(input()) + 1)"
    return {
        "id": row_id,
        "data_source": "codecontests",
        "response": f"```python\n{code}\n```",
        "ground_truth": {"inputs": [f"{i}\n"], "outputs": [f"{i + 1}\n"]},
    }


def _config(**sandbox: Any) -> dict[str, Any]:
    # the embedded sandbox may run code unisolated here (a remote one runs as it is set up)
    embedded = {} if "url" in sandbox else {"allow_unisolated": True}
    return {
        "reward": {
            "num_workers": 1,
            "async_timeout_s": 3,
            "sandbox_fusion": {"max_concurrent": 2, **embedded, **sandbox},
        }
    }


def _score(base: str, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], float]:
    started = time.monotonic()
    answer = httpx.post(f"{base}/v1/score", json={"samples": rows}, timeout=60, trust_env=False)
    assert answer.status_code == 200, answer.text
    return answer.json()["results"], time.monotonic() - started


def _long_then_short(base: str, rows: int) -> None:
    """Request A: ``rows`` correct rows of 1 s each (more queue on 2 slots than the
    rows' time limit); request B: 1 fast row sent 0.3 s after A. B is served at the first
    free slot, and each of A's rows is timed from its own run: all of them score 1.0."""
    warm, _ = _score(base, [_code_row(100, 0, "warm")])  # the sandbox starts (probes)
    assert warm[0]["status"] == "ok", warm
    thread, out = in_thread(
        lambda: _score(base, [_code_row(i, SLOW_S, f"a{i}") for i in range(rows)])
    )
    time.sleep(0.3)
    (fast,), b_latency = _score(base, [_code_row(200, 0, "b")])
    thread.join(timeout=60)
    a_results, a_latency = out[0]
    assert fast["status"] == "ok" and fast["score"] == 1.0, fast
    # Served first come, first served, B would wait for A's queue (or its late rows' timeouts).
    assert b_latency < 2.0, f"request B took {b_latency:.2f}s behind request A"
    assert [(r["status"], r["score"]) for r in a_results] == [("ok", 1.0)] * rows, [
        (r["id"], r["status"], r.get("error")) for r in a_results
    ]
    assert a_latency >= rows / 2 * SLOW_S  # A's rows did wait, rows / 2 runs deep


def test_a_request_behind_a_long_one_waits_for_one_slot_and_no_correct_row_times_out() -> None:
    """The embedded sandbox: 8 rows of 1 s on 2 slots (4 s of queue, 3 s limit)."""
    with running_server(_config()) as base:
        _long_then_short(base, rows=8)


def test_a_remote_sandbox_is_shared_as_fairly_and_its_queue_is_not_run_time() -> None:
    """A remote sandbox (`rewardkit sandbox`'s app on 127.0.0.1, FIFO itself): rewardkit's
    2 requests in flight to it are the slots, shared by request; 6 rows of 1 s, a 2 s
    limit."""
    sandbox = Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=2))
    with running_app(create_sandbox_app(sandbox), wait_ready=False) as remote:
        config = _config(url=f"{remote}/run_code")
        config["reward"]["async_timeout_s"] = 2
        with running_server(config) as base:
            _long_then_short(base, rows=6)


def test_a_row_that_waits_past_the_queue_bound_is_an_error_saying_it_waited() -> None:
    """One slot, rows of 1.5 s, a 1 s bound on the wait: one row runs and scores, the
    others wait past the bound and fail as errors whose message names the wait and the
    setting, and which are not cached as a verdict on the answer."""
    with running_server(_config(max_concurrent=1, queue_timeout_s=1)) as base:
        _score(base, [_code_row(100, 0, "warm")])
        results, took = _score(base, [_code_row(i, 1.5, f"r{i}") for i in range(3)])
        assert took < 2 * 1.5  # the late rows did not wait for a slot to run
        ran = [r for r in results if r["status"] == "ok"]
        late = [r for r in results if r["status"] != "ok"]
        assert len(ran) == 1 and ran[0]["score"] == 1.0, results
        for row in late:
            assert row["status"] == "error", row
            assert "waited" in row["error"] and "queue_timeout_s=1s" in row["error"], row
        # Alone, the same row (same answer, same tests) runs and scores: not cached.
        (again,), _ = _score(base, [_code_row(int(late[0]["id"][1:]), 1.5, "again")])
        assert (again["status"], again["score"]) == ("ok", 1.0), again


@pytest.mark.parametrize("bad", [0, -1, "soon"])
def test_the_queue_bound_is_validated_at_load_naming_its_key(bad: Any) -> None:
    with pytest.raises(ConfigError, match=r"reward\.sandbox_fusion\.queue_timeout_s"):
        load_config({"reward": {"sandbox_fusion": {"queue_timeout_s": bad}}})
    assert load_config({}).reward.sandbox_fusion.queue_timeout_s == 600


# ---------------------------------------------------------------------- the fair slot queue


def test_fair_slots_serve_the_requester_holding_fewest_first_and_fifo_within_one() -> None:
    """Two slots; A queues six takers, then B one: B gets the first slot freed, the rest
    go to A in the order A asked."""

    async def scenario() -> list[str]:
        slots: FairSlots[int] = FairSlots([0, 1])
        order: list[str] = []
        leave = {name: asyncio.Event() for name in ["b", *(f"a{i}" for i in range(6))]}

        async def taker(name: str) -> None:
            async with slots.take():
                order.append(name)
                await leave[name].wait()

        tasks = []
        with fair_share("A"):
            tasks += [asyncio.ensure_future(taker(f"a{i}")) for i in range(6)]
        await asyncio.sleep(0)
        with fair_share("B"):
            tasks.append(asyncio.ensure_future(taker("b")))
        await asyncio.sleep(0)
        assert order == ["a0", "a1"] and slots.waiting == 5
        for left in range(7):  # the holders leave in the order they were served
            leave[order[left]].set()
            await asyncio.sleep(0.01)
        await asyncio.gather(*tasks)
        assert slots.waiting == 0 and slots.idle == 2
        assert not slots._last_served  # no record kept of requesters gone
        return order

    assert asyncio.run(scenario()) == ["a0", "a1", "b", "a2", "a3", "a4", "a5"]


def test_fair_slots_give_up_a_wait_on_timeout_or_cancel_without_losing_a_slot() -> None:
    async def scenario() -> None:
        slots: FairSlots[str] = FairSlots(["only"])
        held = await slots.acquire("A")
        with pytest.raises(TimeoutError):
            await slots.acquire("B", timeout=0.05)
        waiter = asyncio.ensure_future(slots.acquire("C"))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert slots.waiting == 0
        slots.release("A", held)
        assert slots.idle == 1 and await slots.acquire("D", timeout=0.05) == "only"

    asyncio.run(scenario())


# ---------------------------------------------------------------------- the row's clock


def test_the_guard_times_a_row_by_its_runs_and_bounds_its_wait_apart() -> None:
    """One slot held 0.6 s by another row: a row that then runs 0.3 s is not timed out
    at 0.5 s (its clock ran 0.3 s), a row that runs 0.7 s is, and one whose wait passes
    its queue bound is an error that says it waited."""

    async def scenario() -> list[tuple[Status, Any]]:
        slots: FairSlots[int] = FairSlots([0])
        guard = Guard(10, {})

        async def row(run_s: float) -> str:
            async with slots.take():
                await asyncio.sleep(run_s)
            return "done"

        holder = asyncio.ensure_future(guard.awaited(row(0.6), 5))
        await asyncio.sleep(0.05)
        with fair_share("B"):
            short = guard.awaited(row(0.3), 0.5)
            long = guard.awaited(row(0.7), 0.5)
            waits = guard.awaited(row(0.1), 5, queue_timeout=0.3, queue_setting="q_s")
            outcomes = await asyncio.gather(short, long, waits)
        assert (await holder)[0] is Status.OK
        return list(outcomes)

    short, long, waits = asyncio.run(scenario())
    assert short == (Status.OK, "done")
    assert long[0] is Status.TIMEOUT and "timed out after 0.5s" in long[1], long
    assert "waiting for a slot, not counted" in long[1], long
    assert waits[0] is Status.ERROR and re.search(r"waited 0\.\ds .*q_s=0\.3s", waits[1]), waits
