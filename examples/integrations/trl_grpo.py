"""GRPO with TRL, rewarded by rewardkit's GSM8K verifier. Run it with a model id or path::

    python examples/integrations/trl_grpo.py Qwen/Qwen2.5-0.5B-Instruct

It trains on the GPU when there is one, else on the CPU in fp32 (TRL's default bf16
needs a GPU); ``train(..., use_cpu=True)`` forces the CPU. (The tests run ``train``
for two steps on a tiny random model, on the CPU.)
"""

import sys
from pathlib import Path

import torch
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
    if options.get("use_cpu") or not torch.cuda.is_available():
        options = {"use_cpu": True, "bf16": False, **options}
    args = GRPOConfig(output_dir=output_dir, **{"num_generations": 4, **options})
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=dataset)
    trainer.train()
    return trainer


if __name__ == "__main__":
    train(sys.argv[1])
