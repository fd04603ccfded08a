"""guards: verl's DAPO settings give rewardkit's manager the rewards verl 0.9.1's DAPO manager gives."""

from __future__ import annotations

from typing import Any

import pytest
from dataproto_rows import make_dataproto

from rewardkit.integrations import verl as adapter

ROWS = [
    ("openai/gsm8k", "what is 36 + 36 ?", "so #### 72", "72"),  # 4 tokens with <eos>: penalized
    ("openai/gsm8k", "what is 36 + 36 ?", "#### 7", "72"),  # 3 tokens: within the limit
]
BUFFER = {"enable": True, "len": 2, "penalty_factor": 1.0, "log": True}
MAX_RESP_LEN = 5


def test_dapo_overlong_penalty_matches_verls_dapo_manager(tokenizer: Any) -> None:
    import torch
    from omegaconf import OmegaConf
    from verl.utils.reward_score import default_compute_score
    from verl.workers.reward_manager.dapo import DAPORewardManager

    data = make_dataproto(tokenizer, ROWS)
    theirs = DAPORewardManager(
        tokenizer,
        0,
        compute_score=default_compute_score,
        max_resp_len=MAX_RESP_LEN,
        overlong_buffer_cfg=OmegaConf.create(BUFFER),
    )(data, return_dict=True)
    # verl's DAPO keys, where verl's config keeps them, as rewardkit's config
    config = {
        "reward": {
            "num_workers": 1,
            "reward_manager": {"name": "dapo"},
            "reward_kwargs": {"overlong_buffer_cfg": BUFFER, "max_resp_len": MAX_RESP_LEN},
        }
    }
    ours = adapter.RewardkitRewardManager(tokenizer=tokenizer, rewardkit_config=config)(
        data, return_dict=True
    )
    assert torch.allclose(ours["reward_tensor"], theirs["reward_tensor"])
    assert ours["reward_tensor"].sum(-1).tolist() == pytest.approx([0.5, 0.0])
    theirs_overlong = [float(v) for v in theirs["reward_extra_info"]["overlong_reward"]]
    assert ours["reward_extra_info"]["overlong_reward"] == pytest.approx(theirs_overlong)
