"""What a local reward model's score should be: a direct forward of one unpadded row, and
how far two ways of computing it may differ in each precision."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from rewardkit.config import RewardModelConfig

# Each precision the scorer runs in; the CUDA ones run only with -m gpu (CI has no GPU).
PRECISIONS = [
    pytest.param("cpu", "float32", id="cpu-fp32"),
    pytest.param("cpu", "bfloat16", id="cpu-bf16"),
    pytest.param("cuda", "float32", id="cuda-fp32", marks=pytest.mark.gpu),
    pytest.param("cuda", "bfloat16", id="cuda-bf16", marks=pytest.mark.gpu),
]


def on_device(path: str, device: str, dtype: str, **overrides: Any) -> RewardModelConfig:
    if device == "cuda":
        assert torch.cuda.is_available(), "a gpu test: run it (-m gpu) where CUDA is present"
    return RewardModelConfig(enable=True, model_path=path, device=device, dtype=dtype, **overrides)


def direct_logit(scorer: Any, ids: list[int]) -> float:
    """The scorer's own weights, one unpadded row, no mask, transformers' forward: the
    logit at the last position (a decoder's per-token head), or the pooled one (BERT)."""
    model = scorer._model
    with torch.inference_mode():
        x = torch.tensor([ids], device=model.device)
        head = getattr(model, "score", None)
        if head is not None:
            hidden = model.base_model(input_ids=x).last_hidden_state
            return head(hidden)[0, -1, -1].float().item()
        return model(input_ids=x).logits[0, -1].float().item()


def tolerance(dtype: str, reference: list[float]) -> float:
    """How far two ways of computing the same logit may differ: 16 bf16 ulps (2^-8 each)
    of the logits' scale in bf16, where batch shape changes the kernels' rounding; in
    fp32, 1e-4 of it. A logit read at the wrong token is off by about the scale itself."""
    scale = max(abs(x) for x in reference)
    return (16 * 2**-8 if dtype == "bfloat16" else 1e-4) * scale + 1e-7


Forward = Callable[[list[list[int]]], list[float]]


def failing_on(forward: Forward, length: int) -> Forward:
    """``forward``, but a batch holding a row of ``length`` tokens fails (a simulated out
    of memory), as that row would on its own."""

    def fragile(seqs: list[list[int]]) -> list[float]:
        if any(len(s) == length for s in seqs):
            raise RuntimeError("CUDA out of memory (simulated)")
        return forward(seqs)

    return fragile
