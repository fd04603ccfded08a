"""Discriminative reward-model throughput: token-budget batching vs fixed batches of 8.

    .venv/bin/python benchmarks/bench_rm.py            # two to three minutes on 2 CPU cores
    .venv/bin/python benchmarks/bench_rm.py --rows 64  # a quick look

One random-init Llama sequence classifier (hidden 512, 4 layers) scores the same
length-skewed rows (log-normal lengths, 32 to 2048 tokens) two ways:

- *fixed 8*: batches of 8 rows in arrival order, padded to the longest (as TRL and
  OpenRLHF batch their reward models);
- *token budget*: rewardkit's packing (longest first, rows x longest <= budget).

Both call the same forward function, so only the batching differs; a third line runs
rewardkit's scorer end to end (tokenizing, batching, scoring through ``score()``).
Then it reports model FLOP/s against a measured matmul FLOP/s, and the peak memory of
scoring 10,000 rows against the model plus one batch (in a fresh process).
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HIDDEN, LAYERS, HEADS, FFN, VOCAB = 512, 4, 8, 1376, 8192
BUDGET = 16384


def build_model(directory: Path) -> str:
    """A random-init LlamaForSequenceClassification and a word-level tokenizer, saved."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[PAD]": 0, "[UNK]": 1, "<s>": 2, "</s>": 3} | {
        f"w{i}": i + 4 for i in range(VOCAB - 4)
    }
    tk = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tk, bos_token="<s>", eos_token="</s>", pad_token="[PAD]", unk_token="[UNK]"
    )
    config = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        intermediate_size=FFN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=HEADS,
        max_position_embeddings=4096,
        num_labels=1,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    transformers.LlamaForSequenceClassification(config).save_pretrained(directory)
    tok.save_pretrained(directory)
    return str(directory)


def skewed_lengths(n: int, seed: int = 0) -> list[int]:
    """Log-normal lengths (median ~180 tokens, long tail), clipped to [32, 2048]."""
    rng = random.Random(seed)
    return [min(2048, max(32, int(rng.lognormvariate(math.log(180), 1.0)))) for _ in range(n)]


def rows_of(lengths: list[int], seed: int = 1) -> list[Any]:
    from rewardkit.types import Sample

    rng = random.Random(seed)
    words = [f"w{i}" for i in range(VOCAB - 4)]
    rows = []
    for length in lengths:
        prompt_len = max(1, length // 4)
        prompt = " ".join(rng.choices(words, k=prompt_len))
        response = " " + " ".join(rng.choices(words, k=length - prompt_len - 1))  # +1: the BOS
        rows.append(Sample("bench", prompt=prompt, response=response))
    return rows


def model_flops(lengths: list[int]) -> float:
    """Forward FLOPs of the real tokens: 2 x params per token plus attention (4 d L^2 a layer)."""
    per_layer = 4 * HIDDEN * HIDDEN + 3 * HIDDEN * FFN
    dense = 2 * LAYERS * per_layer
    return sum(dense * n + 4 * LAYERS * HIDDEN * n * n for n in lengths)


def matmul_flops_per_s() -> float:
    """The machine's fp32 matmul rate: the best of a few products of the model's own
    largest shape ([16384, 512] x [512, 1376]) and a square 2048 one."""
    import torch

    best = 0.0
    for m, k, n in ((BUDGET, HIDDEN, FFN), (2048, 2048, 2048)):
        a, b = torch.randn(m, k), torch.randn(k, n)
        torch.mm(a, b)
        for _ in range(5):
            start = time.perf_counter()
            torch.mm(a, b)
            best = max(best, 2 * m * k * n / (time.perf_counter() - start))
    return best


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


async def started_scorer(path: str) -> Any:
    from rewardkit.config import RewardModelConfig
    from rewardkit.models.discriminative import LocalRewardModel

    cfg = RewardModelConfig(enable=True, model_path=path, device="cpu", max_batch_tokens=BUDGET)
    scorer = LocalRewardModel(cfg)
    await scorer.start()
    return scorer


async def throughput(path: str, n_rows: int, trials: int) -> dict[str, Any]:
    from rewardkit.models.batching import pack_by_tokens

    scorer = await started_scorer(path)
    rows = rows_of(skewed_lengths(n_rows))
    seqs = [scorer.encode(r).ids for r in rows]
    lengths = [len(s) for s in seqs]
    tokens = sum(lengths)
    scorer.forward(seqs[:2])  # warm up

    def fixed() -> None:
        for k in range(0, len(seqs), 8):
            scorer.forward(seqs[k : k + 8])

    def budget() -> None:
        for batch in pack_by_tokens(lengths, BUDGET, 256):
            scorer.forward([seqs[i] for i in batch])

    padded_fixed = sum(8 * max(lengths[k : k + 8]) for k in range(0, len(lengths), 8))
    padded_budget = sum(
        len(b) * max(lengths[i] for i in b) for b in pack_by_tokens(lengths, BUDGET, 256)
    )
    # The machine is shared: alternate the two ways and keep each one's best time.
    t_fixed = t_budget = t_scorer = math.inf
    peak = 0.0
    for _ in range(trials):
        peak = max(peak, matmul_flops_per_s())  # measured alongside, under the same load
        t_fixed = min(t_fixed, timed(fixed))
        t_budget = min(t_budget, timed(budget))
        start = time.perf_counter()
        await asyncio.gather(*(scorer.score(r) for r in rows))
        t_scorer = min(t_scorer, time.perf_counter() - start)
    await scorer.close()
    return {
        "rows": n_rows,
        "tokens": tokens,
        "lengths": (min(lengths), sorted(lengths)[len(lengths) // 2], max(lengths)),
        "fixed": (t_fixed, padded_fixed),
        "budget": (t_budget, padded_budget),
        "scorer": t_scorer,
        "flops": model_flops(lengths),
        "peak": peak,
    }


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    """Start a new peak-RSS (VmHWM) measurement (Linux: clear_refs 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def rss_child(path: str, n_rows: int) -> None:
    """In a fresh process: RSS of the runtime, then the peak for one full batch, then the
    peak while scoring ``n_rows`` rows (VmHWM reset between phases; ru_maxrss would
    carry the parent's peak across fork)."""
    import torch  # noqa: F401 - the runtime is part of the baseline
    import transformers  # noqa: F401

    from rewardkit.models.batching import pack_by_tokens

    async def main() -> dict[str, float]:
        runtime = _status_mb("VmRSS")
        scorer = await started_scorer(path)
        params = sum(p.numel() * p.element_size() for p in scorer._model.parameters()) / 2**20
        rows = rows_of([16 + (i % 25) for i in range(n_rows)], seed=2)  # 16-40 tokens
        seqs = [scorer.encode(r).ids for r in rows[:4096]]
        first = pack_by_tokens([len(s) for s in seqs], BUDGET, scorer.cfg.max_batch_size)[0]
        _reset_peak()
        # One full batch of these rows, on the model thread like every batch after it
        # (memory freed by one thread's malloc arena is not reused by another's).
        batch = [seqs[i] for i in first]
        await asyncio.get_running_loop().run_in_executor(scorer._executor, scorer.forward, batch)
        one_batch = _status_mb("VmHWM")
        del seqs
        _reset_peak()
        results = await asyncio.gather(*(scorer.score(r) for r in rows))
        all_rows = _status_mb("VmHWM")
        assert len(results) == n_rows
        await scorer.close()
        return {"runtime": runtime, "params": params, "one_batch": one_batch, "all_rows": all_rows}

    print(json.dumps(asyncio.run(main())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=96, help="length-skewed rows to score")
    parser.add_argument("--trials", type=int, default=2, help="runs of each way (the best counts)")
    parser.add_argument(
        "--rss-rows", type=int, default=10_000, help="short rows for the memory check"
    )
    parser.add_argument("--rss-child", metavar="MODEL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        rss_child(args.rss_child, args.rss_rows)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = build_model(Path(tmp) / "rm")
        res = asyncio.run(throughput(path, args.rows, args.trials))
        child = subprocess.run(
            [sys.executable, __file__, "--rss-child", path, "--rss-rows", str(args.rss_rows)],
            capture_output=True,
            text=True,
            check=True,
        )
        mem = json.loads(child.stdout.strip().splitlines()[-1])
    report(res, mem, args.rss_rows)


def report(res: dict[str, Any], mem: dict[str, float], rss_rows: int) -> None:
    peak = res["peak"]
    tokens = res["tokens"]
    t_fixed, pad_fixed = res["fixed"]
    t_budget, pad_budget = res["budget"]
    lo, mid, hi = res["lengths"]
    print(
        f"Llama seq-cls, hidden {HIDDEN}, {LAYERS} layers, fp32 CPU; {res['rows']} rows, {tokens:,} tokens "
        f"(lengths min {lo}, median {mid}, max {hi}); budget {BUDGET} tokens\n"
    )
    print("| batching | time (s) | tokens/s | padded tokens | model FLOP/s | of matmul peak |")
    print("|---|---|---|---|---|---|")
    for name, t, padded in (
        ("fixed 8, padded (TRL/OpenRLHF)", t_fixed, pad_fixed),
        ("token budget (rewardkit)", t_budget, pad_budget),
    ):
        rate = res["flops"] / t
        print(
            f"| {name} | {t:.1f} | {tokens / t:,.0f} | {padded:,} | {rate / 1e9:.1f} G | {rate / peak:.0%} |"
        )
    t = res["scorer"]
    print(
        f"| rewardkit scorer end to end | {t:.1f} | {tokens / t:,.0f} | - | {res['flops'] / t / 1e9:.1f} G | {res['flops'] / t / peak:.0%} |"
    )
    print(
        f"\nspeed-up of token budget over fixed 8: {t_fixed / t_budget:.2f}x; "
        f"matmul peak measured: {peak / 1e9:.1f} GFLOP/s\n"
    )
    base = mem["runtime"]
    one, every = mem["one_batch"] - base, mem["all_rows"] - base
    print("| memory | peak RSS (MB) | above the runtime (MB) |")
    print("|---|---|---|")
    print(f"| torch + transformers runtime | {base:.0f} | - |")
    print(f"| model weights (parameter bytes) | - | {mem['params']:.0f} |")
    print(
        f"| model + one full batch of these rows ({BUDGET} tokens) | {mem['one_batch']:.0f} | {one:.0f} |"
    )
    print(f"| scoring {rss_rows:,} rows at once | {mem['all_rows']:.0f} | {every:.0f} |")
    print(
        f"\n{rss_rows:,} rows vs model + one batch: {mem['all_rows'] / mem['one_batch']:.2f}x "
        f"in total RSS, {every / one:.2f}x above the runtime"
    )


if __name__ == "__main__":
    main()
