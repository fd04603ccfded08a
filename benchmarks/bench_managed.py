"""Judge throughput through managed replicas: 1 against 2 `transformers serve` replicas.

    .venv/bin/python benchmarks/bench_managed.py            # a few minutes on 2 cores
    .venv/bin/python benchmarks/bench_managed.py --quick    # a smoke run; BENCHMARKS.md untouched
    python benchmarks/bench_managed.py --engine vllm --model DIR --device cuda   # on a GPU
    .venv/bin/python benchmarks/bench_managed.py --backend ray   # replicas as Ray actors (a local Ray)

For each replica count, a :class:`~rewardkit.RewardLoop` launches the replicas
(``reward.reward_model.rollout``: ``name``, ``data_parallel_size``) of a random-init
causal LM (hidden 256, 4 layers; its judge answers are random text, so every row ends
``error`` with the judge's text: what is timed is the generation through the router,
``judge.max_tokens`` new tokens per row), waits until they are up (start-up is reported
apart), then scores the same rows in one batch, ``--repeats`` times; the best rows/s of
each count is reported with the others listed (the machine is shared). Every replica runs
one torch thread (``OMP_NUM_THREADS=1``), so 2 replicas use two cores where 1 uses one:
the table shows what a second replica adds, as a second GPU would.

With ``--backend ray`` the replicas are Ray actors of a local Ray that the loop starts
(``reward.backend: ray``; each replica actor holds ``--replica-cpus`` CPUs, and Ray sets
its ``OMP_NUM_THREADS`` from them: 1 for a fraction), the router still in this process.

Prints a markdown table; the full run also replaces the section "Managed judge servers"
of BENCHMARKS.md (with ``--backend ray``: "Managed judge servers on Ray").
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _report import write_section  # noqa: E402

SECTION = "## Managed judge servers (benchmarks/bench_managed.py)"
SECTION_RAY = "## Managed judge servers on Ray (benchmarks/bench_managed.py --backend ray)"
SECTION_GPU = "### Managed judge servers on a GPU (benchmarks/bench_managed.py --device cuda)"
WORDS = "the answer is four five six seven score grade good bad yes no".split()


def build_judge(directory: Path, hidden: int = 256, layers: int = 4) -> str:
    """A random-init LlamaForCausalLM and a word-level tokenizer with a chat template."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "<s>", "</s>", *WORDS])}
    vocab |= {f"w{i}": len(vocab) + i for i in range(2000)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="[PAD]",
        unk_token="[UNK]",
    )
    tok.chat_template = (
        "{% for m in messages %}{{ m['content'] }} </s> {% endfor %}"
        "{% if add_generation_prompt %}<s> {% endif %}"
    )
    config = transformers.LlamaConfig(
        vocab_size=len(vocab), hidden_size=hidden, intermediate_size=hidden * 2,
        num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=4,
        max_position_embeddings=2048, pad_token_id=0,
    )  # fmt: skip
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(directory)
    tok.save_pretrained(directory)
    return str(directory)


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {"data_source": "judge", "prompt": f"question {i} " + "w1 " * (20 + i % 40),
         "response": "the answer is four " + "w2 " * (10 + i % 30)}
        for i in range(n)
    ]  # fmt: skip


def run(args: argparse.Namespace, model: str, replicas: int) -> dict[str, Any]:
    from rewardkit import RewardLoop

    # One torch thread per replica (they inherit it): `transformers serve` generates
    # concurrent requests on threads of its own, and with torch's threads on top they
    # oversubscribe the cores and throughput collapses (0.9 against 21 rows/s measured).
    os.environ["OMP_NUM_THREADS"] = "1"
    rollout: dict[str, Any] = {"name": args.engine, "data_parallel_size": replicas,
                               "start_timeout_s": 900}  # fmt: skip
    if args.continuous_batching:
        rollout["engine_kwargs"] = {"transformers": {"continuous_batching": True}}
    rm = {"enable": True, "kind": "generative", "model_path": model,
          "judge": {"max_tokens": args.max_tokens}, "http": {"max_concurrent": 256},
          "rollout": rollout}  # fmt: skip
    if args.engine == "transformers":  # (vLLM and SGLang replicas get GPUs of their own)
        rm["device"] = args.device
    config: dict[str, Any] = {"reward": {"num_workers": 1, "reward_model": rm}}
    if args.backend == "ray":  # one small scoring actor; each replica an actor of its own
        ray = {"num_cpus_per_worker": 0.25, "replica_num_cpus": args.replica_cpus}
        config["reward"] |= {"backend": "ray", "ray": ray}
    batch = rows(args.rows)
    started = time.perf_counter()
    with RewardLoop(config) as loop:
        start_s = time.perf_counter() - started
        loop.score(batch[:8])  # warm-up
        rates, alone = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            results = loop.score(batch)
            rates.append(len(batch) / (time.perf_counter() - t0))
            if args.one_at_a_time:  # the same rows, one request in flight at a time
                t0 = time.perf_counter()
                for row in batch:
                    loop.score([row])
                alone.append(len(batch) / (time.perf_counter() - t0))
        statuses = {str(r.status.value) for r in results}
    found = {"replicas": replicas, "start_s": start_s, "rates": rates, "statuses": statuses}
    return found | {"alone": alone}


def machine(device: str) -> str:
    cpu = platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    gpu = ""
    if device != "cpu":
        import torch

        gpu = f", {torch.cuda.get_device_name(0)}"
    return f"{len(os.sched_getaffinity(0))} cores ({cpu}){gpu}, Python {platform.python_version()}"


def table(args: argparse.Namespace, found: list[dict[str, Any]]) -> str:
    base = max(found[0]["rates"])
    lines = [
        "| replicas | start-up (s) | rows/s (best) | vs 1 replica | all runs (rows/s) | statuses |",
        "|---:|---:|---:|---:|---|---|",
    ]
    for f in found:
        best = max(f["rates"])
        runs = ", ".join(f"{r:.1f}" for r in f["rates"])
        lines.append(
            f"| {f['replicas']} | {f['start_s']:.0f} | {best:.1f} | {best / base:.2f}x | {runs} "
            f"| {', '.join(sorted(f['statuses']))} |"
        )
    for f in found:
        if f["alone"]:
            best = max(f["alone"])
            runs = ", ".join(f"{r:.1f}" for r in f["alone"])
            lines.append(
                f"| {f['replicas']}, one request at a time | - | {best:.1f} | "
                f"{best / base:.2f}x | {runs} | |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--engine", default="transformers", choices=["transformers", "vllm", "sglang"]
    )
    parser.add_argument("--model", help="a local model directory; default: a random tiny judge")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--continuous-batching",
        action="store_true",
        help="transformers serve --continuous-batching (paged attention; by default it "
        "generates concurrent requests side by side, which contend on a CPU)",
    )
    parser.add_argument("--backend", default="local", choices=["local", "ray"])
    parser.add_argument(
        "--replica-cpus", type=float, default=0.5, help="reward.ray.replica_num_cpus (ray)"
    )
    parser.add_argument(
        "--replicas", type=int, nargs="+", default=[1, 2], help="replica counts to time"
    )
    parser.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="also time the rows sent one request at a time (what batching buys)",
    )
    parser.add_argument("--hidden", type=int, default=256, help="the random judge's hidden size")
    parser.add_argument("--layers", type=int, default=4, help="the random judge's layers")
    parser.add_argument("--quick", action="store_true", help="8 rows, 1 repeat, no file written")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.repeats = 8, 1
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or build_judge(Path(tmp) / "judge", args.hidden, args.layers)
        found = [run(args, model, n) for n in args.replicas]
    text = table(args, found)
    print(text)
    if args.quick:
        return
    title = SECTION if args.backend == "local" else SECTION_RAY
    if args.device != "cpu":
        title = SECTION_GPU
    command = shlex.join(["python", "benchmarks/bench_managed.py", *sys.argv[1:]])
    counts = " and ".join(str(n) for n in args.replicas)
    judge = (
        f"a random-init causal LM (hidden {args.hidden}, {args.layers} layers; no `--model`): "
        "its answers hold no score, so every row ends `error` with the judge's text; what "
        "is timed is the generation through the router"
        if not args.model
        else f"`{args.model}`"
    )
    section = (
        f"{title}\n\n"
        f"`{command}` ({dt.date.today()}; {machine(args.device)}): {args.rows} judge rows per "
        f"batch, {args.max_tokens} new tokens each, through the router of {counts} launched "
        "replica(s) (`reward_model.rollout.data_parallel_size`); one torch thread per "
        "replica; `one request at a time`: the same rows, each sent alone. Start-up: until "
        f"every replica answers /health. The judge: {judge}.\n\n"
        f"{text}\n"
    )
    write_section(title, section, ROOT / "BENCHMARKS.md", parent=SECTION)


if __name__ == "__main__":
    main()
