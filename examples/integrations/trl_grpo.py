"""GRPO with TRL, rewarded by rewardkit's GSM8K verifier. Run it with a model id or path::

    python examples/integrations/trl_grpo.py Qwen/Qwen2.5-0.5B-Instruct

(The tests run ``train`` for two steps on a tiny random model.)
"""

import sys
from pathlib import Path

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from rewardkit.integrations.trl import reward_func

QUESTIONS = [
    ("Natalia sold 48 clips in April and half as many in May. How many clips in all?", "72"),
    ("A shelf holds 9 rows of 8 books. How many books is that?", "72"),
    ("Tom has 100 marbles and gives away 28. How many are left?", "72"),
    ("What is 36 + 36?", "72"),
]


def train(model: str, output_dir: str = "grpo-rewardkit", **options) -> GRPOTrainer:
    dataset = Dataset.from_list(
        [
            {
                "prompt": f"{question} End with '#### <number>'.",
                "ground_truth": answer,  # dataset columns reach the reward function
                "data_source": "openai/gsm8k",  # picks the verifier
            }
            for question, answer in QUESTIONS
        ]
    )
    reward = reward_func(Path(__file__).with_name("reward.yaml"))  # failed rows -> None
    args = GRPOConfig(output_dir=output_dir, **{"num_generations": 4, **options})
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=dataset)
    trainer.train()
    return trainer


if __name__ == "__main__":
    train(sys.argv[1])
