"""verl 0.9.1's own reward managers on a batch mixing data sources, scored by rewardkit.

Not a test: tests/compat/test_verl_mixed_batch.py calls :func:`report` (verl must be
installed). Each manager is called twice: with ``on_failure="raise"`` (the default) and
``"fill"``.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast
from verl.protocol import DataProto
from verl.workers.reward_manager.batch import BatchRewardManager
from verl.workers.reward_manager.naive import NaiveRewardManager

from rewardkit.errors import RewardkitError
from rewardkit.integrations import verl as adapter

CODE_TESTS = json.dumps({"test_list": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]})
ROWS = [  # (data_source, prompt, response, ground_truth)
    ("openai/gsm8k", "What is 36 + 36?", "36 + 36 = 72\n#### 72", "72"),
    ("lighteval/MATH", "Solve x + 1 = 4.", "So $x = \\boxed{3}$.", "3"),
    ("mbpp", "Write add.", "```python\ndef add(a, b):\n    return a + b\n```", CODE_TESTS),
    ("my_unknown_source", "Capital of France?", "Paris", "Paris"),
]


def byte_tokenizer() -> Any:
    """A byte-level BPE trained on the rows: decoding gives back the exact text."""
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator([p + r for _, p, r, _ in ROWS], trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>")


def dataproto(tok: Any) -> Any:
    """verl's layout: prompts left-padded, responses right-padded, one eos each."""
    encoded = [
        (
            tok(p, add_special_tokens=False)["input_ids"],
            tok(r, add_special_tokens=False)["input_ids"],
        )
        for _, p, r, _ in ROWS
    ]
    encoded = [(p, [*r, tok.eos_token_id]) for p, r in encoded]
    pw, rw, pad = max(len(p) for p, _ in encoded), max(len(r) for _, r in encoded), tok.pad_token_id
    prompts = torch.tensor([[pad] * (pw - len(p)) + p for p, _ in encoded])
    responses = torch.tensor([r + [pad] * (rw - len(r)) for _, r in encoded])
    mask = [[0] * (pw - len(p)) + [1] * (len(p) + len(r)) + [0] * (rw - len(r)) for p, r in encoded]
    objects = functools.partial(np.array, dtype=object)
    return DataProto.from_dict(
        tensors={
            "prompts": prompts,
            "responses": responses,
            "attention_mask": torch.tensor(mask),
            "input_ids": torch.cat([prompts, responses], dim=-1),
        },
        non_tensors={
            "data_source": objects([s for s, *_ in ROWS]),
            "reward_model": objects([{"ground_truth": g, "style": "rule"} for *_, g in ROWS]),
            "extra_info": objects([{"index": i} for i in range(len(ROWS))]),
        },
    )


def report(config: str) -> dict[str, Any]:
    tok = byte_tokenizer()

    class Manager(adapter.RewardkitRewardManager):
        rewardkit_config = config

    def naive(fail: str) -> Any:
        fn = functools.partial(adapter.compute_score, rewardkit_config=config, on_failure=fail)
        return NaiveRewardManager(tok, 0, compute_score=fn)

    def batch(fail: str) -> Any:
        return BatchRewardManager(
            tok, 0, adapter.compute_score, rewardkit_config=config, on_failure=fail
        )

    report: dict[str, Any] = {}
    for name, make in [
        ("naive", naive),
        ("batch", batch),
        ("rewardkit", lambda f: Manager(tok, 0, on_failure=f)),
    ]:
        try:
            make("raise")(dataproto(tok), return_dict=True)
            report[f"{name}/raise"] = None
        except RewardkitError as exc:
            report[f"{name}/raise"] = f"{type(exc).__name__}: {exc}"
        out = make("fill")(dataproto(tok), return_dict=True)
        info = out["reward_extra_info"]
        report[f"{name}/fill"] = {
            "scores": out["reward_tensor"].sum(dim=-1).tolist(),
            "status": list(info["status"]),
            "error": list(info["error"]),
        }
    return report
