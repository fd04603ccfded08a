"""What a reward model's first forward of a new batch shape costs on CUDA, per attention kernel.

    python benchmarks/rm_attention_shapes.py     # a CUDA machine; about a minute

An RM's batches rarely repeat a (rows, width) shape. cuDNN's attention builds an
execution plan per shape and per thread; the memory-efficient kernel needs none. This
forwards bench_rm's 1B Llama classifier (bf16, right-padded batches with the padding
mask, as every forward ran before the scorer learned to skip a decoder's mask) on a
fresh thread: eight shapes it has not seen, then the last one again, with and without
cuDNN's kernel (``discriminative.AVOID_CUDNN_ATTENTION``), in three alternated rounds;
then a warm 8 x 2048 batch each way. It first names the attention kernel each way runs
(the profiler). Prints its measurements; BENCHMARKS.md cites them (Reward models on a
GPU).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_rm as b

from rewardkit.models import discriminative as D


def on_thread(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` on a new thread (a thread that has built no plan yet)."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join()
    return out[0]


def seqs(rows: int, width: int) -> list[list[int]]:
    """A right-padded batch: the last row is 7 tokens shorter."""
    x = [[5] * width for _ in range(rows)]
    x[-1] = x[-1][:-7]
    return x


def kernels(scorer: Any) -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile

    for avoid in (False, True):
        D.AVOID_CUDNN_ATTENTION = avoid
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            scorer.forward(seqs(8, 333 + avoid))
            torch.cuda.synchronize()
        keys = ("cudnn", "fmha", "flash", "attention", "attn", "sdpa", "mem_eff")
        names = {e.key for e in prof.key_averages() if any(k in e.key.lower() for k in keys)}
        print("avoid", avoid, "attention kernels:", sorted(names)[:6], flush=True)


def cold_shapes(scorer: Any) -> None:
    for rnd in range(3):
        for avoid in (False, True):
            D.AVOID_CUDNN_ATTENTION = avoid

            def cold(rnd: int = rnd, avoid: bool = avoid) -> tuple[list[float], list[float]]:
                new, again = [], []
                for j in range(8):
                    x = seqs(16 + rnd, 150 + 10 * j + 3 * rnd + (200 if avoid else 0))
                    start = time.perf_counter()
                    scorer.forward(x)
                    new.append(time.perf_counter() - start)
                for _ in range(3):
                    start = time.perf_counter()
                    scorer.forward(x)
                    again.append(time.perf_counter() - start)
                return new, again

            new, again = on_thread(cold)
            print(
                f"round {rnd} avoid_cudnn={avoid}: new shapes on a new thread ms "
                f"{[round(1000 * t, 1) for t in new]}; same shape again ms "
                f"{[round(1000 * t, 1) for t in again]}",
                flush=True,
            )


def warm(scorer: Any) -> None:
    import torch

    x = seqs(8, 2048)
    for avoid in (False, True, False, True):
        D.AVOID_CUDNN_ATTENTION = avoid
        scorer.forward(x)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(5):
            scorer.forward(x)
        print(f"warm 8x2048 avoid={avoid}: {1000 * (time.perf_counter() - start) / 5:.1f} ms")


async def main(path: str) -> None:
    import torch

    print(
        "cudnn_sdp",
        torch.backends.cuda.cudnn_sdp_enabled(),
        "flash",
        torch.backends.cuda.flash_sdp_enabled(),
        "mem_eff",
        torch.backends.cuda.mem_efficient_sdp_enabled(),
        flush=True,
    )
    scorer = await b.started_scorer(path, "cuda", "bfloat16")
    scorer._mask_free = False  # the masked forwards whose kernels this compares
    scorer.forward(seqs(4, 100))
    kernels(scorer)
    cold_shapes(scorer)
    warm(scorer)
    await scorer.close()


if __name__ == "__main__":
    b.__dict__.update(b.SIZES["1b"], MAX_LENGTH=4096)
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(b.build_model(Path(tmp) / "rm", "bfloat16")))
