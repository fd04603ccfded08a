"""Reward-server load: 64 concurrent clients against ``rewardkit serve`` and an OpenRLHF-style baseline.

    .venv/bin/python benchmarks/bench_server.py           # about 2 minutes on 2 cores
    .venv/bin/python benchmarks/bench_server.py --quick   # a smoke run; BENCHMARKS.md untouched
    python benchmarks/bench_server.py --device cuda --size 1b   # where batching pays (a GPU)

Each server is its own process on 127.0.0.1 (a free port), so the load generator
does not share its GIL:

- *rewardkit, rule-only*: ``rewardkit serve``, gsm8k rows, ``POST /v1/score``;
- *rewardkit, RM*: ``rewardkit serve`` with a tiny random-init Llama sequence
  classifier (``reward.reward_model.*``) and a data_source no verifier knows, so the
  reward model alone scores each row;
- *baseline*: the FastAPI app below, which serves the same model directory the way
  OpenRLHF's ``openrlhf/cli/serve_rm.py`` does: ``POST /get_reward`` with
  ``{"query": [text]}``, tokenized and scored by one forward pass inside the
  (async) request handler, so concurrent requests never share a batch.

The load generator runs 64 clients (asyncio + aiohttp), each sending single-sample
requests one after another; a phase stops after a fixed number of requests or a
wall-clock cap, whichever comes first, after untimed warm-up requests. The two RM
servers get the same texts (prompt + response, about 50 to 300 tokens, log-normal) in the
same order, and the same number of requests; their phases alternate (``--repeats``)
and each server's best phase is reported (the machine is shared; the others are listed).
Every server process gets the same ``OMP_NUM_THREADS`` (``--torch-threads``, default 1:
with torch's default of one thread per core, the servers and the load generator fight
over 2 cores and throughput collapses several-fold).

Last, with the servers stopped, the *model-only ceiling*: rewardkit's own model scores
the same rows one per forward, and in rounds of 64 concurrent rows through its batcher
(packed by the cost model it fits to its own forwards). Their ratio bounds what any
cross-request batching can gain on this machine.

Prints a markdown table; the full run also replaces the section "Reward server" of
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import functools
import itertools
import json
import math
import os
import platform
import random
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_rm  # noqa: E402 - a sibling script, not a package
from _report import write_section  # noqa: E402
from workload import example_rows  # noqa: E402

SECTION = "## Reward server (benchmarks/bench_server.py)"
CLIENTS = 64
# The tiny RM: small enough that one forward per request is affordable on 2 cores.
HIDDEN, LAYERS = 256, 2
RM_SOURCE = "bench/rm-only"  # no verifier knows it: the reward model alone scores the row
TARGET_SPEEDUP, TARGET_TAIL, TARGET_SHARE = 5.0, 5.0, 0.85
BASELINE = "baseline (OpenRLHF serve_rm.py style)"


@dataclass(frozen=True, slots=True)
class Plan:
    """How much load each phase gets."""

    rule_requests: int
    rm_requests: int
    warmup: int
    cap_s: float
    repeats: int


FULL = Plan(rule_requests=2000, rm_requests=1000, warmup=128, cap_s=60.0, repeats=3)
QUICK = Plan(rule_requests=300, rm_requests=150, warmup=64, cap_s=20.0, repeats=1)


@dataclass(slots=True)
class Phase:
    """One measured phase against one server."""

    server: str
    latencies: list[float] = field(default_factory=list)  # seconds, successful requests
    errors: Counter[str] = field(default_factory=Counter)
    wall_s: float = 0.0
    capped: bool = False
    model: dict[str, float] = field(default_factory=dict)  # the RM's counters over the phase

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.wall_s if self.wall_s else 0.0

    def pct_ms(self, q: float) -> float:
        """The q-quantile latency in ms (nearest rank)."""
        if not self.latencies:
            return math.nan
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


# ---------------------------------------------------------------------- workload


def build_rm(
    directory: Path,
    hidden: int = HIDDEN,
    layers: int = LAYERS,
    mlp: int | None = None,
    dtype: str = "float32",
) -> str:
    """bench_rm's random-init Llama classifier and word-level tokenizer, at this
    benchmark's size (bench_rm reads its dimensions from module constants)."""
    dims = {
        "HIDDEN": hidden,
        "LAYERS": layers,
        "HEADS": max(2, hidden // 64),
        "FFN": mlp or ffn(hidden),
    }
    with mock.patch.multiple(bench_rm, **dims):
        return bench_rm.build_model(directory, dtype)


def ffn(hidden: int) -> int:
    """Llama's MLP width for ``hidden`` (8/3 x, rounded up to a multiple of 16)."""
    return math.ceil(hidden * 8 / 3 / 16) * 16


def rm_rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` distinct rows of 49 to 299 tokens, prompt + response (log-normal, median ~110),
    for the RM only (bench_rm's rows: one word is one token)."""
    rng = random.Random(seed)
    lengths = [min(300, max(50, int(rng.lognormvariate(math.log(110), 0.6)))) for _ in range(n)]
    rows = [s.to_row() for s in bench_rm.rows_of(lengths, seed=seed + 1)]
    for row in rows:
        row["data_source"] = RM_SOURCE
    return rows


def gsm8k_rows() -> list[dict[str, Any]]:
    """The workload's gsm8k rollouts (a realistic mix of right, wrong and unmarked answers)."""
    return [r for r in example_rows(prompts=64, rollouts=8) if r["data_source"] == "openai/gsm8k"]


def rewardkit_body(row: dict[str, Any]) -> bytes:
    return json.dumps({"samples": [row]}).encode()


def baseline_body(row: dict[str, Any]) -> bytes:
    return json.dumps({"query": [row["prompt"] + row["response"]]}).encode()


def rewardkit_ok(payload: bytes) -> bool:
    results = json.loads(payload)["results"]
    return len(results) == 1 and results[0]["status"] == "ok"


def baseline_ok(payload: bytes) -> bool:
    rewards = json.loads(payload)["rewards"]
    return len(rewards) == 1 and math.isfinite(rewards[0])


# ---------------------------------------------------------------------- the baseline


def baseline_app(model_dir: str, device: str = "cpu") -> FastAPI:
    """What OpenRLHF's serve_rm.py does, with a transformers sequence classifier.

    The handler is ``async`` and calls the model synchronously, so the event loop is
    blocked for each forward and requests are scored one at a time, each in its own
    batch of one. Left padding and the appended EOS follow serve_rm.py. Its per-request
    ``logger.info`` of the result is left out (that only makes the baseline faster).
    On cuda it runs in bf16 (serve_rm.py's ``--bf16``), as rewardkit does there.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, padding_side="left")
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    model = (
        AutoModelForSequenceClassification.from_pretrained(model_dir, dtype=dtype).to(device).eval()
    )
    app = FastAPI()

    def rewards(queries: list[str]) -> list[float]:
        texts = [
            q.strip(tokenizer.pad_token).strip(tokenizer.eos_token) + tokenizer.eos_token
            for q in queries
        ]
        batch = tokenizer(
            texts, return_tensors="pt", max_length=2048, padding=True, truncation=True
        )
        with torch.no_grad():
            ids, mask = batch["input_ids"].to(device), batch["attention_mask"].to(device)
            logits = model(input_ids=ids, attention_mask=mask).logits  # [B, 1]
        return logits[:, 0].float().tolist()  # [B]

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/get_reward")
    async def get_reward(request: Request) -> JSONResponse:
        data = await request.json()
        return JSONResponse({"rewards": rewards(data.get("query"))})

    return app


def serve_baseline(model_dir: str, port: int, device: str) -> None:
    """Run the baseline app with uvicorn, as serve_rm.py does (access log off, as rewardkit's)."""
    import uvicorn

    uvicorn.run(
        baseline_app(model_dir, device),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
    )


# ---------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server_process(
    name: str, argv: Sequence[str], ready_path: str, logs: Path, port: int, threads: int
) -> Iterator[str]:
    """Start ``argv`` in its own process group with ``threads`` torch threads; yield its URL
    once ``ready_path`` answers 200; on exit (or error) SIGTERM the group, then SIGKILL what
    is left."""
    log_path = logs / f"{name}.log"
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT, env=env
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(proc, url + ready_path, log_path, timeout_s=180)
        yield url
    finally:
        _stop_group(proc)


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log_path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"server exited with {proc.returncode} before it was ready:\n{tail}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        time.sleep(0.25)
    raise RuntimeError(f"server not ready after {timeout_s:.0f}s: {url} (log: {log_path})")


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    # Workers a server started live in the same group: none may outlive the benchmark.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def rewardkit_argv(port: int, overrides: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "rewardkit.cli", "serve", "--port", str(port), *overrides]


def baseline_argv(port: int, model_dir: str, device: str) -> list[str]:
    argv = [sys.executable, __file__, "--baseline-serve", model_dir, "--port", str(port)]
    return [*argv, "--device", device]


# ---------------------------------------------------------------------- load


async def drive(
    name: str,
    url: str,
    bodies: Sequence[bytes],
    ok: Callable[[bytes], bool],
    *,
    total: int,
    warmup: int,
    cap_s: float,
    clients: int = CLIENTS,
    counters: Callable[[], dict[str, float]] | None = None,
) -> Phase:
    """``clients`` coroutines, each posting one body at a time until ``total`` requests
    are sent or ``cap_s`` has passed; bodies are taken in order (cycling). ``counters``:
    read before and after the timed part, their difference kept as ``phase.model``."""
    import aiohttp

    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=120)
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(
        connector=connector, timeout=timeout, headers=headers
    ) as session:

        async def post(body: bytes) -> tuple[bool, str]:
            try:
                async with session.post(url, data=body) as resp:
                    payload = await resp.read()
                    if resp.status != 200:
                        return False, f"HTTP {resp.status}"
                    return (True, "") if ok(payload) else (False, "bad answer")
            except (aiohttp.ClientError, TimeoutError, ValueError, KeyError) as exc:
                return False, type(exc).__name__

        await asyncio.gather(*(post(bodies[-1 - i % len(bodies)]) for i in range(warmup)))
        phase = Phase(name)
        counter = itertools.count()
        before = counters() if counters else {}
        start = time.perf_counter()
        deadline = start + cap_s

        async def client() -> None:
            while (i := next(counter)) < total:
                if time.perf_counter() > deadline:
                    phase.capped = True
                    return
                sent = time.perf_counter()
                good, why = await post(bodies[i % len(bodies)])
                if good:
                    phase.latencies.append(time.perf_counter() - sent)
                else:
                    phase.errors[why] += 1

        await asyncio.gather(*(client() for _ in range(clients)))
        phase.wall_s = time.perf_counter() - start
        if counters:
            after = counters()
            phase.model = {k: v - before.get(k, 0.0) for k, v in after.items()}
    return phase


def rm_batch_stats(url: str) -> dict[str, float]:
    """The reward model's counters from /metrics (``source="model_rm"``)."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    stats: dict[str, float] = {}
    for match in re.finditer(r"^rewardkit_engine_events_total\{([^}]*)\} (\S+)$", text, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        if labels.get("source") == "model_rm":
            stats[labels.get("event", "?")] = float(match.group(2))
    return stats


def mean_batch(stats: dict[str, float]) -> float | None:
    if stats.get("batches"):
        return stats.get("rows", 0.0) / stats["batches"]
    return None


# ---------------------------------------------------------------------- run


@dataclass(frozen=True, slots=True)
class Setup:
    """What every server process gets, equally."""

    model_dir: str
    logs: Path
    threads: int
    device: str
    overrides: tuple[str, ...]  # for the rewardkit servers
    hidden: int
    layers: int
    mlp: int


async def run_all(plan: Plan, setup: Setup) -> dict[str, Any]:
    """The rule-only phase, then the RM phases (rewardkit and baseline alternating), then
    the model-only ceiling with the servers stopped."""
    rows = rm_rows(plan.rm_requests + plan.warmup)
    out: dict[str, Any] = {"rule": await rule_phase(plan, setup)}
    out.update(await rm_phases(plan, setup, rows))
    out["ceiling"] = await model_ceiling(setup, rows[: min(plan.rm_requests, 256)])
    out["rm_tokens"] = _token_lengths(rows[: plan.rm_requests])
    return out


async def rule_phase(plan: Plan, setup: Setup) -> Phase:
    bodies = [rewardkit_body(r) for r in gsm8k_rows()]
    port = free_port()
    argv = rewardkit_argv(port, setup.overrides)
    with server_process("rewardkit-rule", argv, "/ready", setup.logs, port, setup.threads) as url:
        return await drive(
            "rewardkit, rule-only (openai/gsm8k)",
            url + "/v1/score",
            bodies,
            rewardkit_ok,
            total=plan.rule_requests,
            warmup=plan.warmup,
            cap_s=plan.cap_s,
        )


async def rm_phases(plan: Plan, setup: Setup, rows: list[dict[str, Any]]) -> dict[str, Any]:
    # Warm-up takes rows from the end, measured phases from the start.
    rk_bodies = [rewardkit_body(r) for r in rows]
    base_bodies = [baseline_body(r) for r in rows]
    overrides = [
        "reward.reward_model.enable=true",
        f"reward.reward_model.model_path={setup.model_dir}",
        f"reward.reward_model.device={setup.device}",
        *setup.overrides,
    ]
    rk_port, base_port = free_port(), free_port()
    rk_argv = rewardkit_argv(rk_port, overrides)
    base_argv = baseline_argv(base_port, setup.model_dir, setup.device)
    phases: dict[str, list[Phase]] = {"rewardkit": [], "baseline": []}
    limits = {"total": plan.rm_requests, "warmup": plan.warmup, "cap_s": plan.cap_s}
    with (
        server_process("rewardkit-rm", rk_argv, "/ready", setup.logs, rk_port, setup.threads) as rk,
        server_process(
            "baseline", base_argv, "/health", setup.logs, base_port, setup.threads
        ) as base,
    ):
        for _ in range(plan.repeats):  # alternate, so that a noisy spell hits both
            counters = functools.partial(rm_batch_stats, rk)  # where the model thread's time goes
            phases["rewardkit"].append(
                await drive(
                    "rewardkit, RM",
                    rk + "/v1/score",
                    rk_bodies,
                    rewardkit_ok,
                    counters=counters,
                    **limits,
                )
            )
            phases["baseline"].append(
                await drive(BASELINE, base + "/get_reward", base_bodies, baseline_ok, **limits)
            )
        stats = rm_batch_stats(rk)
    return {"rm_phases": phases, "rm_stats": stats}


async def model_ceiling(setup: Setup, rows: list[dict[str, Any]]) -> dict[str, float]:
    """What batching alone can buy on this machine: rewardkit's own model scoring the rows
    one per forward (the baseline's way), and in rounds of ``CLIENTS`` concurrent rows
    through its batcher, packed as its fitted cost model says (after warm-up rounds that
    fit it), in this process with the servers' thread count; best of two."""
    import torch

    from rewardkit.config import RewardModelConfig
    from rewardkit.models.discriminative import LocalRewardModel
    from rewardkit.types import Sample

    torch.set_num_threads(setup.threads)
    cfg = RewardModelConfig(enable=True, model_path=setup.model_dir, device=setup.device)
    scorer = LocalRewardModel(cfg, max_batch_wait_ms=0)
    await scorer.start()
    samples = [Sample.from_row(r) for r in rows]
    rounds = [samples[k : k + CLIENTS] for k in range(0, len(samples), CLIENTS)]

    async def batched() -> None:
        for chunk in rounds:
            await asyncio.gather(*(scorer.score(s) for s in chunk))

    try:
        seqs = [scorer.encode(s).ids for s in samples]
        for _ in range(2):  # warm-up, and the forwards the cost model is fitted to
            await batched()
        single = best_batched = math.inf
        forwards = 0.0
        for _ in range(2):
            single = min(single, _timed(lambda: [scorer.forward([s]) for s in seqs]))
            before = scorer.stats["batches"]
            start = time.perf_counter()
            await batched()
            best_batched = min(best_batched, time.perf_counter() - start)
            forwards = scorer.stats["batches"] - before
        padding = scorer.cost.padding_tokens()
    finally:
        await scorer.close()
    return {
        "rows": len(seqs),
        "single_ms": 1000 * single / len(seqs),
        "batched_ms": 1000 * best_batched / len(seqs),
        "rows_per_forward": len(seqs) / forwards,
        "padding_tokens": padding,
    }


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _token_lengths(rows: list[dict[str, Any]]) -> tuple[int, int, int]:
    """Words are tokens for bench_rm's word-level tokenizer."""
    lengths = sorted(len((r["prompt"] + r["response"]).split()) for r in rows)
    return lengths[0], lengths[len(lengths) // 2], lengths[-1]


# ---------------------------------------------------------------------- report


def best(phases: list[Phase]) -> Phase:
    return max(phases, key=lambda p: p.rps)


def table(phases: Sequence[Phase], cap_s: float) -> list[str]:
    lines = [
        "| server | requests | req/s | p50 (ms) | p90 (ms) | p99 (ms) | p99/p50 | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in phases:
        errors = ", ".join(f"{k}: {v}" for k, v in p.errors.items()) or "0"
        capped = f" (capped at {cap_s:.0f} s)" if p.capped else ""
        lines.append(
            f"| {p.server} | {len(p.latencies)}{capped} | {p.rps:.1f} | {p.pct_ms(0.5):.1f} | "
            f"{p.pct_ms(0.9):.1f} | {p.pct_ms(0.99):.1f} | {p.pct_ms(0.99) / p.pct_ms(0.5):.2f} | {errors} |"
        )
    return lines


def notes(out: dict[str, Any], plan: Plan, setup: Setup) -> list[str]:
    rk, base = best(out["rm_phases"]["rewardkit"]), best(out["rm_phases"]["baseline"])
    ratio = rk.rps / base.rps if base.rps else math.nan
    tail = rk.pct_ms(0.99) / rk.pct_ms(0.5)
    mean = mean_batch(out["rm_stats"])
    ceiling = out["ceiling"]
    share = rk.rps * ceiling["batched_ms"] / 1000
    lo, mid, hi = out["rm_tokens"]
    rates = {n: ", ".join(f"{p.rps:.1f}" for p in ps) for n, ps in out["rm_phases"].items()}
    tuned = f" plus `{' '.join(setup.overrides)}`" if setup.overrides else ""
    return [
        f"- rewardkit RM / baseline requests/s: **{ratio:.2f}x** (target >= {TARGET_SPEEDUP:g}x: "
        f"{_verdict(ratio >= TARGET_SPEEDUP)}); rewardkit RM p99/p50 {tail:.2f} "
        f"(target < {TARGET_TAIL:g}: {_verdict(tail < TARGET_TAIL)}).",
        f"- Model-only ceiling on this machine ({ceiling['rows']:.0f} of the same rows, rewardkit's "
        f"forward, {setup.threads} thread(s), no HTTP): one row per forward {ceiling['single_ms']:.2f} ms/row, "
        f"rounds of {CLIENTS} rows through rewardkit's batcher ({ceiling['rows_per_forward']:.1f} rows per "
        f"forward, fitted padding allowance {ceiling['padding_tokens']:.0f} tokens) "
        f"{ceiling['batched_ms']:.2f} ms/row: batching alone buys "
        f"**{ceiling['single_ms'] / ceiling['batched_ms']:.2f}x** here."
        + _ceiling_note(ceiling, setup.device),
        f"- The server at its model's speed: rewardkit's best RM phase served {rk.rps:.1f} "
        f"requests/s, against {1000 / ceiling['batched_ms']:.1f} rows/s for the model-only "
        f"batched ceiling: **{share:.0%}** (target >= {TARGET_SHARE:.0%}: "
        f"{_verdict(share >= TARGET_SHARE)}). {_model_thread(rk)}",
        f"- RM phases, requests/s in run order: rewardkit {rates['rewardkit']}; baseline "
        f"{rates['baseline']} (each server's best phase is in the table).",
        "- Mean rows per RM forward batch from /metrics: "
        + (
            f"{mean:.1f}."
            if mean is not None
            else "not exposed (the model scorer keeps no `stats`)."
        ),
        f"- {CLIENTS} clients, one sample per request, each client sequential; {plan.warmup} warm-up "
        f"requests per phase (untimed). Rule-only: {plan.rule_requests} requests of gsm8k rollouts "
        f"(`benchmarks/workload.py`). RM: {plan.rm_requests} requests per phase, data_source "
        f"`{RM_SOURCE}` (no verifier: the RM alone scores), texts of {lo}/{mid}/{hi} tokens "
        "(min/median/max), the same texts in the same order for rewardkit (`/v1/score`) and the "
        "baseline (`/get_reward`, prompt + response).",
        f"- Model: random-init `LlamaForSequenceClassification` (hidden {setup.hidden}, "
        f"{setup.layers} layers, MLP {setup.mlp}, vocabulary {bench_rm.VOCAB}) built by `bench_rm.build_model`, on "
        f"{setup.device} ({'bf16' if setup.device != 'cpu' else 'fp32'} in both servers); every "
        f"server process runs with `OMP_NUM_THREADS={setup.threads}`.",
        f"- rewardkit: `rewardkit serve` defaults{tuned}; baseline: a FastAPI app in the benchmark "
        "that does what OpenRLHF's `serve_rm.py` does (one forward per request inside the async "
        "handler, no cross-request batching). Each server is its own process; both run on the "
        f"same uvicorn ({_uvicorn_stack()}).",
    ]


def _model_thread(phase: Phase) -> str:
    """Where the model thread's time went in a phase (the server's /metrics counters)."""
    busy = phase.model.get("busy_seconds")
    if not busy or not phase.wall_s:
        return ""
    forward, encode = (
        phase.model.get("forward_seconds", 0.0),
        phase.model.get("encode_seconds", 0.0),
    )
    wall = phase.wall_s
    return (
        f"Of that phase's {wall:.1f} s, the model thread spent {forward / wall:.0%} in forwards, "
        f"{encode / wall:.0%} tokenizing, {(busy - forward - encode) / wall:.0%} on the rest of "
        f"its rounds, and was idle {1 - busy / wall:.0%} (waiting for requests: the event "
        f"loop's HTTP, JSON and engine work); {phase.model.get('rounds', 0):.0f} rounds, "
        f"{phase.model.get('rows', 0) / max(1.0, phase.model.get('batches', 0)):.1f} rows per forward."
    )


def _ceiling_note(ceiling: dict[str, float], device: str) -> str:
    """Say so when the machine, not the server, caps the speed-up."""
    if ceiling["single_ms"] / ceiling["batched_ms"] >= TARGET_SPEEDUP:
        return ""
    why = (
        "on a CPU a row of ~100 tokens already fills the matrix units, so a batch costs about "
        "the sum of its rows"
        if device == "cpu"
        else "a batch costs about the sum of its rows on this device"
    )
    return (
        f" No server can reach {TARGET_SPEEDUP:g}x over one-forward-per-request here: {why}. "
        "The target needs a device where a batch costs about what one row does (a GPU: "
        "`--device cuda`)."
    )


def _uvicorn_stack() -> str:
    """uvicorn's event loop and HTTP parser here (it picks uvloop and httptools when present)."""
    import importlib.util

    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return f"{loop} loop, {http} parser"


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def render(out: dict[str, Any], plan: Plan, setup: Setup, facts: dict[str, str]) -> str:
    rk, base = best(out["rm_phases"]["rewardkit"]), best(out["rm_phases"]["baseline"])
    shared = " (a shared 2-core box: other work ran too, figures are noisy)"
    head = (
        f"{section(setup.device)}\n\n`{facts['command']}` on {facts['date']}; {facts['machine']}"
        f"{shared if setup.device == 'cpu' else ''}; load average "
        f"{facts['load_before']} before, {facts['load_after']} after.\n\n"
    )
    body = [*table([out["rule"], rk, base], plan.cap_s), "", *notes(out, plan, setup)]
    return head + "\n".join(body) + "\n"


GPU_SECTION = "### Reward server on a GPU (benchmarks/bench_server.py --device cuda)"


def section(device: str) -> str:
    """The CPU run owns the section "Reward server"; a GPU run its subsection."""
    return SECTION if device == "cpu" else GPU_SECTION


def _gpu() -> str:
    import torch

    props = torch.cuda.get_device_properties(0)
    return f", {props.name} ({props.total_memory / 2**30:.0f} GiB), torch {torch.__version__}"


def _machine(device: str = "cpu") -> str:
    cpu = platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    gpu = _gpu() if device != "cpu" else ""
    return f"{len(os.sched_getaffinity(0))} cores ({cpu}), Python {platform.python_version()}{gpu}"


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run; BENCHMARKS.md untouched")
    parser.add_argument(
        "--write", action="store_true", help="update BENCHMARKS.md even with --quick"
    )
    parser.add_argument(
        "--repeats", type=int, help="RM phases per server (default 3; 1 with --quick)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an override for the rewardkit servers, e.g. server.max_batch_wait_ms=2",
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="OMP_NUM_THREADS of every server process (default 1: the load generator needs a core)",
    )
    parser.add_argument(
        "--device", default="cpu", help="the RM's device, for both servers (cpu, cuda)"
    )
    parser.add_argument("--hidden", type=int, default=HIDDEN, help="the RM's hidden size")
    parser.add_argument("--layers", type=int, default=LAYERS, help="the RM's layers")
    parser.add_argument(
        "--size",
        choices=sorted(bench_rm.SIZES),
        help="bench_rm's model shape (hidden, layers, MLP), instead of --hidden/--layers",
    )
    parser.add_argument("--baseline-serve", metavar="MODEL", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.baseline_serve:
        serve_baseline(args.baseline_serve, args.port, args.device)
        return
    # SIGTERM unwinds like Ctrl-C, so the servers' process groups are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    plan = QUICK if args.quick else FULL
    if args.repeats:
        plan = Plan(plan.rule_requests, plan.rm_requests, plan.warmup, plan.cap_s, args.repeats)
    facts = {
        "command": shlex.join(["python", "benchmarks/bench_server.py", *sys.argv[1:]]),
        "date": dt.date.today().isoformat(),
        "machine": _machine(args.device),
        "load_before": _load(),
    }
    with tempfile.TemporaryDirectory(prefix="rk-bench-server-") as tmp:
        hidden, layers, mlp = args.hidden, args.layers, ffn(args.hidden)
        if args.size:
            dims = bench_rm.SIZES[args.size]
            hidden, layers, mlp = dims["HIDDEN"], dims["LAYERS"], dims["FFN"]
        dtype = "float32" if args.device == "cpu" else "bfloat16"
        model_dir = build_rm(Path(tmp) / "rm", hidden, layers, mlp, dtype)
        setup = Setup(
            model_dir,
            Path(tmp),
            args.torch_threads,
            args.device,
            tuple(args.set),
            hidden,
            layers,
            mlp,
        )
        out = asyncio.run(run_all(plan, setup))
    facts["load_after"] = _load()
    text = render(out, plan, setup, facts)
    print(text)
    if not args.quick or args.write:
        write_section(section(args.device), text, ROOT / "BENCHMARKS.md", parent=SECTION)
        print(f"updated {ROOT / 'BENCHMARKS.md'}")


if __name__ == "__main__":
    main()
