"""Discriminative reward-model throughput: token-budget batching vs fixed batches of 8.

    .venv/bin/python benchmarks/bench_rm.py            # two to three minutes on 2 CPU cores
    .venv/bin/python benchmarks/bench_rm.py --quick    # a smoke run; BENCHMARKS.md untouched
    python benchmarks/bench_rm.py --device cuda --size 1b --rows 1024 --max-length 4096

One random-init Llama sequence classifier (``--size``: small, hidden 512 and 4 layers;
1b, Llama-3.2-1B's shape) scores the same length-skewed rows (log-normal lengths, 32 to
``--max-length`` tokens) four ways:

- *fixed 8*: batches of 8 rows in arrival order, padded to the longest (as TRL and
  OpenRLHF batch their reward models);
- *token budget, padded*: rewardkit's batching (longest first, rows x longest <= budget);
- *token budget, packed*: rows laid end to end without padding (``use_remove_padding``);
- *one at a time*: one row per forward (a server that never batches across requests).

All call the same model, so only the batching differs; two more lines run rewardkit's
scorer end to end (tokenizing, batching, scoring through ``score()``), padded and packed.
Then it reports model FLOP/s against a matmul FLOP/s measured in the same run (fp32 on a
CPU; bf16 on a GPU), and peak memory: on a CPU the RSS of scoring 10,000 rows against
the model plus one batch (in a fresh process); on a GPU the allocator's peak while the
scorer scores every row, against the model plus the largest single batch.
Prints a markdown table; the CPU run replaces the section "Reward models" of
BENCHMARKS.md, a GPU run its subsection "on a GPU".
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import write_section

HIDDEN, LAYERS, HEADS, FFN, VOCAB = 512, 4, 8, 1376, 8192
SIZES = {
    "small": {"HIDDEN": 512, "LAYERS": 4, "HEADS": 8, "FFN": 1376},
    # Llama-3.2-1B's shape (hidden 2048, 16 layers, 32 heads, MLP 8192), with full
    # multi-head attention (its 8 key/value heads would only shrink two projections).
    "1b": {"HIDDEN": 2048, "LAYERS": 16, "HEADS": 32, "FFN": 8192},
}
BUDGET = 16384
MAX_LENGTH = 2048
ROOT = Path(__file__).resolve().parents[1]


def build_model(directory: Path, dtype: str = "float32") -> str:
    """A random-init LlamaForSequenceClassification and a word-level tokenizer, saved
    (weights in ``dtype``: a 1B model saved in bf16 writes and loads twice as fast)."""
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
        max_position_embeddings=max(4096, MAX_LENGTH),
        num_labels=1,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    init_on = "cuda" if torch.cuda.is_available() else "cpu"  # a 1B init is slow on a CPU
    with torch.device(init_on):
        model = transformers.LlamaForSequenceClassification(config)
    model.to("cpu", getattr(torch, dtype)).save_pretrained(directory)
    del model
    if init_on == "cuda":
        torch.cuda.empty_cache()  # the benchmark's own processes load it again
    tok.save_pretrained(directory)
    return str(directory)


def skewed_lengths(n: int, seed: int = 0, longest: bool = False) -> list[int]:
    """Log-normal lengths (median ~180 tokens, long tail), clipped to [32, MAX_LENGTH];
    ``longest``: the last row is MAX_LENGTH long, so that the tail reaches it."""
    rng = random.Random(seed)
    lengths = [
        min(MAX_LENGTH, max(32, int(rng.lognormvariate(math.log(180), 1.0)))) for _ in range(n)
    ]
    if longest and lengths:
        lengths[-1] = MAX_LENGTH
    return lengths


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


def matmul_flops_per_s(device: str = "cpu", dtype: str = "float32") -> float:
    """The machine's matmul rate in the model's dtype: the best of a few products of the
    model's own largest shape ([budget, hidden] x [hidden, MLP]) and a square one (2048 on
    a CPU; 8192 on a GPU, where a bf16 8192^3 product is the usual peak measurement)."""
    import torch

    square = 8192 if device != "cpu" else 2048
    best = 0.0
    for m, k, n in ((BUDGET, HIDDEN, FFN), (square, square, square)):
        a = torch.randn(m, k, device=device, dtype=getattr(torch, dtype))
        b = torch.randn(k, n, device=device, dtype=getattr(torch, dtype))
        torch.mm(a, b)
        for _ in range(5 if device == "cpu" else 20):
            _sync(device)
            start = time.perf_counter()
            torch.mm(a, b)
            _sync(device)
            best = max(best, 2 * m * k * n / (time.perf_counter() - start))
        del a, b
    return best


def _sync(device: str) -> None:
    if device != "cpu":
        import torch

        torch.cuda.synchronize()


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


async def started_scorer(
    path: str, device: str = "cpu", dtype: str = "auto", packing: bool = False
) -> Any:
    from rewardkit.config import RewardModelConfig
    from rewardkit.models.discriminative import LocalRewardModel

    cfg = RewardModelConfig(
        enable=True,
        model_path=path,
        device=device,
        dtype=dtype,  # type: ignore[arg-type]
        max_batch_tokens=BUDGET,
        prompt_length=MAX_LENGTH,  # no row is truncated: every way scores the same tokens
        response_length=MAX_LENGTH,
        use_remove_padding=packing,
    )
    scorer = LocalRewardModel(cfg)
    await scorer.start()
    return scorer


async def throughput(
    path: str,
    n_rows: int,
    trials: int,
    device: str = "cpu",
    dtype: str = "float32",
    longest: bool = False,
) -> dict[str, Any]:
    from rewardkit.errors import ConfigError
    from rewardkit.models.batching import pack_by_tokens
    from rewardkit.models.packing import pack_rows

    scorer = await started_scorer(path, device, dtype)
    try:  # the model is checked at start: a refusal is a finding, not a crash
        packer, refused = await started_scorer(path, device, dtype, packing=True), None
    except ConfigError as exc:
        packer, refused = None, str(exc)
    rows = rows_of(skewed_lengths(n_rows, longest=longest))
    seqs = [scorer.encode(r).ids for r in rows]
    lengths = [len(s) for s in seqs]
    tokens = sum(lengths)
    scorer.forward(seqs[:2])  # warm up
    for batch in pack_by_tokens(lengths, BUDGET, 256):  # on a GPU: every kernel shape once
        scorer.forward([seqs[i] for i in batch])
    layouts = pack_rows(lengths, BUDGET, 256)
    for layout in layouts if packer else ():
        scorer.forward_packed([seqs[i] for i in layout.rows])

    def fixed() -> None:
        for k in range(0, len(seqs), 8):
            scorer.forward(seqs[k : k + 8])

    def budget() -> None:
        for batch in pack_by_tokens(lengths, BUDGET, 256):
            scorer.forward([seqs[i] for i in batch])

    def packed() -> None:
        for layout in layouts:
            scorer.forward_packed([seqs[i] for i in layout.rows])

    def single() -> None:
        for seq in seqs:
            scorer.forward([seq])

    padded_fixed = sum(8 * max(lengths[k : k + 8]) for k in range(0, len(lengths), 8))
    padded_budget = sum(
        len(b) * max(lengths[i] for i in b) for b in pack_by_tokens(lengths, BUDGET, 256)
    )
    padded_packed = sum(layout.padded_tokens for layout in layouts)
    # The machine is shared: alternate the ways and keep each one's best time.
    runs: dict[str, list[float]] = {
        k: [] for k in ("fixed", "budget", "packed", "single", "scorer", "scorer_packed")
    }
    peak = 0.0
    for _ in range(trials):
        # measured alongside, under the same load
        peak = max(peak, matmul_flops_per_s(device, dtype))
        runs["fixed"].append(timed(fixed))
        runs["budget"].append(timed(budget))
        runs["packed"].append(timed(packed) if packer else math.inf)
        runs["single"].append(timed(single))
        for key, way in (("scorer", scorer), ("scorer_packed", packer)):
            if way is None:
                runs[key].append(math.inf)
                continue
            start = time.perf_counter()
            await asyncio.gather(*(way.score(r) for r in rows))
            runs[key].append(time.perf_counter() - start)
    best = {k: min(v) for k, v in runs.items()}
    if packer is not None:
        await packer.close()
    memory = await gpu_memory(scorer, rows, seqs) if device != "cpu" else {}
    await scorer.close()
    t_fixed, t_budget, t_single, t_scorer = (
        best[k] for k in ("fixed", "budget", "single", "scorer")
    )
    return {
        "runs": runs,
        "memory": memory,
        "single": t_single,
        "rows": n_rows,
        "tokens": tokens,
        "lengths": (min(lengths), sorted(lengths)[len(lengths) // 2], max(lengths)),
        "fixed": (t_fixed, padded_fixed),
        "budget": (t_budget, padded_budget),
        "packed": (best["packed"], padded_packed),
        "scorer": t_scorer,
        "scorer_packed": best["scorer_packed"],
        "refused": refused,
        "flops": model_flops(lengths),
        "trials": trials,
        "peak": peak,
    }


async def gpu_memory(scorer: Any, rows: list[Any], seqs: list[list[int]]) -> dict[str, float]:
    """The CUDA allocator's peak (MiB): the model alone, the model plus each packed batch
    forwarded alone (the largest counts), and the scorer scoring every row at once."""
    import torch

    from rewardkit.models.batching import pack_by_tokens

    mib = 2**20
    torch.cuda.synchronize()
    model = torch.cuda.memory_allocated() / mib
    params = sum(p.numel() * p.element_size() for p in scorer._model.parameters()) / mib
    one_batch = 0.0
    for batch in pack_by_tokens([len(s) for s in seqs], BUDGET, scorer.cfg.max_batch_size):
        torch.cuda.reset_peak_memory_stats()
        scorer.forward([seqs[i] for i in batch])
        one_batch = max(one_batch, torch.cuda.max_memory_allocated() / mib)
    torch.cuda.reset_peak_memory_stats()
    await asyncio.gather(*(scorer.score(r) for r in rows))
    all_rows = torch.cuda.max_memory_allocated() / mib
    reserved = torch.cuda.max_memory_reserved() / mib
    return {
        "params": params,
        "model": model,
        "one_batch": one_batch,
        "all_rows": all_rows,
        "reserved": reserved,
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
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run (24 rows, one trial); BENCHMARKS.md untouched",
    )
    parser.add_argument(
        "--no-write", dest="write", action="store_false", help="leave BENCHMARKS.md untouched"
    )
    parser.add_argument(
        "--device", default="cpu", help="cpu, or cuda (then the memory check is the GPU's)"
    )
    parser.add_argument(
        "--dtype",
        choices=("auto", "float32", "bfloat16", "float16"),
        default="auto",
        help="the model's dtype (auto: bfloat16 on cuda, float32 on cpu)",
    )
    parser.add_argument(
        "--size", choices=sorted(SIZES), default="small", help="the model's shape (default small)"
    )
    parser.add_argument(
        "--budget", type=int, default=BUDGET, help="padded tokens per token-budget batch"
    )
    parser.add_argument(
        "--max-length", type=int, default=MAX_LENGTH, help="the longest row, in tokens"
    )
    parser.add_argument(
        "--include-longest",
        action="store_true",
        help="one row exactly --max-length tokens long (the tail reaches it)",
    )
    parser.add_argument("--rss-child", metavar="MODEL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rows, args.trials, args.rss_rows, args.write = 24, 1, 1000, False
    if args.dtype == "auto":
        args.dtype = "float32" if args.device == "cpu" else "bfloat16"
    globals().update(SIZES[args.size], BUDGET=args.budget, MAX_LENGTH=args.max_length)
    if args.rss_child:
        rss_child(args.rss_child, args.rss_rows)
        return
    command = shlex.join(["python", "benchmarks/bench_rm.py", *sys.argv[1:]])
    with tempfile.TemporaryDirectory() as tmp:
        path = build_model(Path(tmp) / "rm", args.dtype)
        res = asyncio.run(
            throughput(path, args.rows, args.trials, args.device, args.dtype, args.include_longest)
        )
        if args.device == "cpu":
            child = subprocess.run(
                [
                    *(sys.executable, __file__, "--rss-child", path, "--size", args.size),
                    *("--rss-rows", str(args.rss_rows), "--budget", str(args.budget)),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            mem = json.loads(child.stdout.strip().splitlines()[-1])
    if args.device == "cpu":
        section, text = SECTION, report(res, mem, args.rss_rows, command)
    else:
        section, text = GPU_SECTION, report_gpu(res, args, command)
    print(text)
    if args.write:
        write_section(section, text, ROOT / "BENCHMARKS.md", parent=SECTION)
        print(f"updated {ROOT / 'BENCHMARKS.md'}")


SECTION = "## Reward models (benchmarks/bench_rm.py)"
TARGET_SPEEDUP, TARGET_SHARE, TARGET_MEMORY, TARGET_PACKED = 2.0, 0.40, 1.5, 0.60


def report(res: dict[str, Any], mem: dict[str, float], rss_rows: int, command: str) -> str:
    """The section of BENCHMARKS.md: throughput of each batching way, then memory."""
    peak, tokens = res["peak"], res["tokens"]
    t_fixed, t_budget = res["fixed"][0], res["budget"][0]
    lo, mid, hi = res["lengths"]
    lines = [
        SECTION,
        "",
        f"`{command}` (or `rewardkit bench rm`) on {dt.date.today().isoformat()}; "
        f"{len(os.sched_getaffinity(0))} cores, fp32 on CPU, shared machine (each way's best of "
        f"{res['trials']} alternated runs). Model: random-init Llama sequence classifier (hidden "
        f"{HIDDEN}, {LAYERS} layers); {res['rows']} rows, lengths long-tailed from {lo} to {hi} "
        f"tokens (median {mid}); budget {BUDGET:,} tokens per batch.",
        "",
        "| batching | time (s) | tokens/s | padded tokens | model FLOP/s | of measured matmul FLOP/s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, t, padded in _ways(res):
        rate = res["flops"] / t
        lines.append(
            f"| {name} | {t:.1f} | {tokens / t:,.0f} | {padded} | {rate / 1e9:.1f} G | {rate / peak:.0%} |"
        )
    speedup, share = t_fixed / t_budget, res["flops"] / t_budget / peak
    memory = mem["all_rows"] / mem["one_batch"]
    lines += [
        "",
        f"- Token-budget batching: **{speedup:.2f}x** the fixed-batch way (target "
        f"{TARGET_SPEEDUP:g}x); {share:.0%} of a matmul rate of {peak / 1e9:.0f} GFLOP/s measured "
        f"in the same run (target {TARGET_SHARE:.0%}). The token-budget line packs with the "
        "default cost model (512 tokens of padding per forward); the scorer fits its own "
        "(`reward_model.max_padding_tokens: auto`, see docs/models.md).",
        f"- Memory: scoring {rss_rows:,} rows peaks at {mem['all_rows']:,.0f} MB RSS against "
        f"{mem['one_batch']:,.0f} MB for the model plus one full batch: **{memory:.2f}x** (target "
        f"{TARGET_MEMORY:g}x).",
        "- GPU: see the next subsection (`--device cuda`).",
    ]
    return "\n".join(lines) + "\n"


def _ways(res: dict[str, Any]) -> list[tuple[str, float, str]]:
    """(name, seconds, padded tokens) of each way the rows were scored."""
    (t_fixed, pad_fixed), (t_budget, pad_budget) = res["fixed"], res["budget"]
    t_packed, pad_packed = res["packed"]
    ways = [
        ("fixed 8, padded to the longest (TRL/OpenRLHF)", t_fixed, f"{pad_fixed:,}"),
        ("token budget, sorted by length (rewardkit, padded)", t_budget, f"{pad_budget:,}"),
        ("token budget, packed without padding (rewardkit)", t_packed, f"{pad_packed:,}"),
        ("one row per forward (no batching)", res["single"], f"{res['tokens']:,}"),
        ("rewardkit scorer end to end, padded", res["scorer"], "-"),
        ("rewardkit scorer end to end, packed", res["scorer_packed"], "-"),
    ]
    return [way for way in ways if math.isfinite(way[1])]  # packed ones: unless refused


GPU_SECTION = "### Reward models on a GPU (benchmarks/bench_rm.py --device cuda)"


def _gpu_name() -> str:
    import torch

    props = torch.cuda.get_device_properties(0)
    return (
        f"{props.name} ({props.total_memory / 2**30:.0f} GiB), torch {torch.__version__}, "
        f"CUDA {torch.version.cuda}"
    )


def report_gpu(res: dict[str, Any], args: argparse.Namespace, command: str) -> str:
    """The GPU subsection: the same ways on CUDA, model FLOP/s against the bf16 matmul
    rate of the same run, and the allocator's peak against the model plus one batch."""
    peak, tokens, mem = res["peak"], res["tokens"], res["memory"]
    lo, mid, hi = res["lengths"]
    params = mem["params"] * 2**20 / {"float32": 4, "bfloat16": 2, "float16": 2}[args.dtype]
    lines = [
        GPU_SECTION,
        "",
        f"`{command}` on {dt.date.today().isoformat()}; {_gpu_name()}, {args.dtype} (each way's "
        f"best of {res['trials']} alternated runs). Model: random-init Llama sequence classifier, "
        f"{params / 1e9:.2f}B parameters (hidden {HIDDEN}, {LAYERS} layers, {HEADS} heads, MLP "
        f"{FFN}); {res['rows']} rows, lengths long-tailed from {lo} to {hi} tokens (median "
        f"{mid}), {tokens:,} tokens; budget {BUDGET:,} tokens per batch.",
        "",
        "| batching | time (s) | tokens/s | padded tokens | model FLOP/s | of measured bf16 matmul FLOP/s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, t, padded in _ways(res):
        rate = res["flops"] / t
        lines.append(
            f"| {name} | {t:.2f} | {tokens / t:,.0f} | {padded} | {rate / 1e12:.1f} T | {rate / peak:.0%} |"
        )
    t_budget, t_scorer = res["budget"][0], res["scorer"]
    vs_fixed, vs_single = res["fixed"][0] / t_budget, res["single"] / t_budget
    share = res["flops"] / min(t_budget, t_scorer) / peak
    packed_share = res["flops"] / min(res["packed"][0], res["scorer_packed"]) / peak
    packed_line = (
        f"- Packed (`use_remove_padding`): **{packed_share:.0%}** of that rate, for the faster "
        f"of the packed lines (target {TARGET_PACKED:.0%}: "
        f"{_verdict(packed_share >= TARGET_PACKED)}); padded tokens "
        f"{res['packed'][1]:,} against {res['budget'][1]:,} padded, {tokens:,} real."
        if res["refused"] is None
        else f"- Packed (`use_remove_padding`): refused at start: {res['refused']}"
    )
    ratio = mem["all_rows"] / mem["one_batch"]
    lines += [
        "",
        f"- Token-budget batching: **{vs_fixed:.2f}x** fixed batches of 8 (target "
        f"{TARGET_SPEEDUP:g}x: {_verdict(vs_fixed >= TARGET_SPEEDUP)}) and **{vs_single:.1f}x** "
        "one row per forward.",
        f"- Model FLOP/s (2 x parameters per real token plus attention, 4 x hidden x length^2 a "
        f"layer and row; padding not counted): **{share:.0%}** of a bf16 matmul rate of "
        f"{peak / 1e12:.0f} TFLOP/s measured in the same run (best of the model's "
        f"[{BUDGET}, {HIDDEN}] x [{HIDDEN}, {FFN}] product and a square 8192 one), for the "
        f"faster of the padded token-budget and scorer lines (target {TARGET_SHARE:.0%}: "
        f"{_verdict(share >= TARGET_SHARE)}).",
        packed_line,
        f"- GPU memory (the CUDA allocator's peak): the weights take {mem['params']:,.0f} MiB; "
        f"the model plus the largest single batch peaks at {mem['one_batch']:,.0f} MiB; the scorer "
        f"scoring all {res['rows']} rows at once peaks at {mem['all_rows']:,.0f} MiB: "
        f"**{ratio:.2f}x** (target {TARGET_MEMORY:g}x: {_verdict(ratio <= TARGET_MEMORY)}); "
        f"the caching allocator reserved at most {mem['reserved']:,.0f} MiB.",
        "- Each run in order (s): "
        + "; ".join(f"{k} {', '.join(f'{t:.2f}' for t in ts)}" for k, ts in res["runs"].items())
        + ". A first run meets each of its batch shapes for the first time (on the model "
        "thread, for the scorer).",
    ]
    return "\n".join(lines) + "\n"


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


if __name__ == "__main__":
    main()
