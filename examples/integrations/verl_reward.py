"""rewardkit inside verl: a reward manager and a custom reward function, in one file.

The reward manager scores each batch through rewardkit (recommended)::

    python -m verl.trainer.main_ppo ... \
        reward.reward_manager.source=importlib \
        reward.reward_manager.module.path=examples/integrations/verl_reward.py \
        reward.reward_manager.name=RewardManager

Or keep verl's manager and let it call rewardkit per row::

    python -m verl.trainer.main_ppo ... \
        reward.custom_reward_function.path=examples/integrations/verl_reward.py \
        reward.custom_reward_function.name=compute_score
"""

import functools
from pathlib import Path

from rewardkit.integrations import verl

REWARDKIT_CONFIG = str(Path(__file__).with_name("reward.yaml"))


class RewardManager(verl.RewardkitRewardManager):
    rewardkit_config = REWARDKIT_CONFIG
    # rewardkit_url = "http://reward-host:8000"  # score through `rewardkit serve` instead
    # on_failure = "fill"  # train through failed rows (score 0.0, status kept in the logs)


compute_score = functools.partial(verl.compute_score, rewardkit_config=REWARDKIT_CONFIG)
