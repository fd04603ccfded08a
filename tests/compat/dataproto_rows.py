"""Real verl DataProto batches for the compatibility tests (imported by them, not a test)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np


def make_dataproto(tokenizer: Any, rows: list[tuple[str, str, str, Any]], width: int = 6) -> Any:
    """A real verl DataProto: prompts left-padded, responses right-padded (verl's layout).

    ``rows`` are ``(data_source, prompt, response, ground_truth)``.
    """
    import torch
    from verl.protocol import DataProto

    pad = tokenizer.pad_token_id
    prompts, responses, masks = [], [], []
    for _, prompt, response, _ in rows:
        p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        r = tokenizer(response, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        prompts.append([pad] * (width - len(p)) + p)
        responses.append(r + [pad] * (width - len(r)))
        masks.append([0] * (width - len(p)) + [1] * (len(p) + len(r)) + [0] * (width - len(r)))
    objects = functools.partial(np.array, dtype=object)
    return DataProto.from_dict(
        tensors={
            "prompts": torch.tensor(prompts),
            "responses": torch.tensor(responses),
            "attention_mask": torch.tensor(masks),
            "input_ids": torch.cat([torch.tensor(prompts), torch.tensor(responses)], dim=-1),
        },
        non_tensors={
            "data_source": objects([s for s, *_ in rows]),
            "reward_model": objects([{"ground_truth": g, "style": "rule"} for *_, g in rows]),
            "extra_info": objects([{"index": i} for i in range(len(rows))]),
        },
    )


def verl_config(tokenizer_dir: Path, rk_yaml: str, **reward: Any) -> Any:
    """The parts of verl's trainer config its reward code reads."""
    from omegaconf import OmegaConf

    tree = {
        "actor_rollout_ref": {"model": {"path": str(tokenizer_dir), "tokenizer_path": None}},
        "reward": {
            "num_workers": 1,
            "reward_manager": {"source": "register", "name": "naive", "module": {"path": None}},
            "custom_reward_function": {"path": None, "name": "compute_score", "reward_kwargs": {}},
            "reward_model": {"enable": False, "model_path": None},
            "sandbox_fusion": {"url": None},
            **reward,
        },
    }
    return OmegaConf.create(tree)
