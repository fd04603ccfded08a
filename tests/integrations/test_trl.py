"""guards: rewardkit.integrations.trl: TRL's reward-function contract, and a real GRPOTrainer
run on CPU.
"""

from __future__ import annotations

import importlib.util
import math
import pickle
from pathlib import Path
from typing import Any

import pytest
import torch

from rewardkit.errors import ConfigError
from rewardkit.integrations.trl import areward_func, reward_func

EXAMPLES = Path(__file__).parents[2] / "examples" / "integrations"


def test_plain_completions_score_and_failures_are_none(rk_config):
    fn = reward_func(rk_config)
    rewards = fn(
        prompts=["What is 36 + 36?"] * 3,
        completions=["36 + 36 = 72\n#### 72", "#### 7", "#### 72"],
        ground_truth=["72", "72", "72"],
        data_source=["openai/gsm8k", "openai/gsm8k", "no/such-source"],
    )
    assert rewards == [1.0, 0.0, None]


def test_conversational_completions_use_the_last_assistant_message(rk_config):
    fn = reward_func(rk_config)
    prompt = [{"role": "user", "content": "What is 36 + 36?"}]
    completions = [
        [{"role": "assistant", "content": "#### 72"}],
        [
            {"role": "assistant", "content": "#### 72"},
            {"role": "tool", "content": "checked"},
            {"role": "assistant", "content": [{"type": "text", "text": "no, #### 7"}]},
        ],
    ]
    rewards = fn(
        prompts=[prompt, prompt],
        completions=completions,
        ground_truth=["72", "72"],
        data_source=["openai/gsm8k"] * 2,
    )
    assert rewards == [1.0, 0.0]


def test_verl_layout_columns_and_default_data_source(rk_config):
    fn = reward_func(rk_config, default_data_source="openai/gsm8k")
    assert fn.__name__ == "rewardkit_openai_gsm8k"
    rewards = fn(prompts=["q"], completions=["#### 72"], reward_model=[{"ground_truth": "72"}])
    assert rewards == [1.0]


def test_logs_statuses_through_trl_hooks(rk_config):
    metrics: dict[str, float] = {}
    columns: dict[str, list[Any]] = {}
    fn = reward_func(rk_config)
    fn(
        prompts=["q", "q"],
        completions=["#### 72", "#### 72"],
        ground_truth=["72", None],  # the second row has nothing to check against: invalid
        data_source=["openai/gsm8k"] * 2,
        completion_ids=[[4, 1], [4, 1]],
        log_metric=metrics.__setitem__,
        log_extra=columns.__setitem__,
    )
    assert metrics == {
        "rewardkit/timeout_frac": 0.0,
        "rewardkit/error_frac": 0.0,
        "rewardkit/invalid_frac": 0.5,
        "rewardkit/component/rule/mean": 1.0,  # over the rows that have it
    }
    assert columns == {"rewardkit_status": ["ok", "invalid"]}


def test_rows_carry_token_lengths_and_columns(rk_config):
    fn = reward_func(rk_config)
    rows = fn.rows(
        ["p"], ["#### 72"], ground_truth=["72"], completion_ids=[[1, 2, 3]], trainer_state=[None]
    )
    assert rows == [
        {
            "ground_truth": "72",
            "prompt": "p",
            "response": "#### 72",
            "extra_info": {"response_length": 3},
        }
    ]
    with pytest.raises(ValueError, match="column 'ground_truth' has 2 values for 1 completions"):
        fn.rows(["p"], ["c"], ground_truth=["72", "1"])
    # context objects a newer TRL may add are not columns
    assert fn.rows(["p"], ["c"], some_new_hook=print)[0] == {"prompt": "p", "response": "c"}
    with pytest.raises(ValueError, match="2 prompts but 1 completions"):
        fn.rows(["p", "q"], ["c"])


def test_names_config_errors_and_pickles(rk_config):
    assert reward_func(rk_config).__name__ == "rewardkit"
    assert reward_func(rk_config, name="math").__name__ == "math"
    with pytest.raises(ConfigError, match=r"reward\.timeout_s"):
        reward_func(rk_config, timeout_s=-1)
    with pytest.raises(ConfigError, match=r"reward\.no_such_key: unknown key"):
        reward_func(no_such_key=1)
    with pytest.raises(TypeError, match="do not apply to a server"):
        reward_func(url="http://127.0.0.1:1", num_workers=2)
    clone = pickle.loads(pickle.dumps(reward_func(rk_config)))
    assert clone(
        prompts=["q"], completions=["#### 72"], ground_truth=["72"], data_source=["openai/gsm8k"]
    ) == [1.0]


def _load_example(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tiny_model_dir(tiny_tokenizer_dir: Path, tiny_tokenizer: Any, tmp_path_factory) -> Path:
    """A random-init one-layer Llama over the tiny vocabulary, saved with its tokenizer."""
    import torch
    from transformers import LlamaForCausalLM

    from _support.model_fakes import llama_config

    torch.manual_seed(0)
    config = llama_config(
        len(tiny_tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=128,
        pad_token_id=tiny_tokenizer.pad_token_id,
        eos_token_id=tiny_tokenizer.eos_token_id,
        bos_token_id=None,
    )
    path = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return path


def _two_grpo_steps(tokenizer: Any) -> dict[str, Any]:
    """GRPO arguments for two quick steps on CPU, the model allowed to say only '####',
    '72', '7' and '36' (some answers right, some wrong: groups differ)."""
    allowed = set(tokenizer.convert_tokens_to_ids(["####", "72", "7", "36"]))
    suppress = [i for i in range(len(tokenizer)) if i not in allowed]
    return {
        "max_steps": 2,
        "num_generations": 4,
        "max_completion_length": 4,
        "learning_rate": 1e-3,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "use_cpu": True,
        "seed": 0,
        "generation_kwargs": {"suppress_tokens": suppress},
    }


def test_grpo_trainer_trains_two_steps_with_the_example(
    tiny_model_dir: Path, tiny_tokenizer: Any, tmp_path: Path
):
    example = _load_example("trl_grpo")
    # Let the random model say only '####', '72' and '7': some answers are then right and
    # some wrong, so groups differ and the rewards actually drive a gradient.
    steps = _two_grpo_steps(tiny_tokenizer)
    del steps["use_cpu"]  # the example picks the CPU (and fp32) itself when there is no GPU
    trainer = example.train(
        str(tiny_model_dir), str(tmp_path / "out"), per_device_train_batch_size=4, **steps
    )
    assert trainer.state.global_step == 2
    assert torch.cuda.is_available() or (trainer.args.use_cpu and not trainer.args.bf16)
    logged = [e for e in trainer.state.log_history if "rewards/rewardkit_openai_gsm8k/mean" in e]
    assert len(logged) == 2
    for entry in logged:
        assert entry["rewardkit/invalid_frac"] == entry["rewardkit/timeout_frac"] == 0.0
        assert not math.isnan(entry["loss"])
        # the per-component metric reaches TRL's logs through its log_metric hook
        component = entry["rewardkit/component/rule/mean"]
        assert component == pytest.approx(entry["rewards/rewardkit_openai_gsm8k/mean"])
    means = [entry["rewards/rewardkit_openai_gsm8k/mean"] for entry in logged]
    assert all(0.0 <= m <= 1.0 for m in means)
    assert any(entry["reward_std"] > 0 and entry["grad_norm"] > 0 for entry in logged), logged


def test_async_reward_function_matches_the_sync_one(rk_config):
    import asyncio
    import inspect

    fn = areward_func(rk_config, name="rk_async")
    assert inspect.iscoroutinefunction(fn)  # how TRL 1.6 tells async reward functions apart
    assert fn.__name__ == "rk_async"
    metrics: dict[str, float] = {}
    rewards = asyncio.run(
        fn(
            prompts=["q"] * 3,
            completions=["#### 72", "#### 7", "#### 72"],
            ground_truth=["72"] * 3,
            data_source=["openai/gsm8k", "openai/gsm8k", "no/such-source"],
            log_metric=metrics.__setitem__,
        )
    )
    assert rewards == [1.0, 0.0, None]
    assert metrics["rewardkit/invalid_frac"] == pytest.approx(1 / 3)


def _declared_trl_floor() -> str:
    import re
    import tomllib

    pyproject = tomllib.loads((EXAMPLES.parents[1] / "pyproject.toml").read_text())
    [spec] = [
        r for r in pyproject["project"]["optional-dependencies"]["trl"] if r.startswith("trl")
    ]
    found = re.fullmatch(r"trl>=([0-9.]+)", spec)
    assert found, f"the trl requirement should be a floor, got {spec!r}"
    return found.group(1)


def test_declared_trl_floor_is_where_none_leaves_the_baseline():
    """A None reward is left out of its group's baseline from TRL 1.6.0 on (the
    ``unscorable_mask`` in GRPOTrainer._generate_and_score_completions; 1.5.0 has none:
    checked against both wheels). The declared floor must be at least that, and the
    installed TRL must have the mask."""
    import inspect

    from packaging.version import Version
    from trl import GRPOTrainer
    from trl import __version__ as trl_version

    floor = Version(_declared_trl_floor())
    assert floor >= Version("1.6.0")
    assert Version(trl_version) >= floor
    source = inspect.getsource(GRPOTrainer._generate_and_score_completions)
    assert "unscorable_mask" in source and "nanmean" in source


def test_grpo_trainer_two_steps_with_the_async_function_and_failures(
    tiny_model_dir: Path, tiny_tokenizer: Any, tmp_path: Path
):
    """Mixed data sources, one of them unknown to rewardkit: its rows are None every step."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    # Two prompts per step (8 completions, 4 per prompt), and the dataset holds two: every
    # step has one group rewardkit scores and one group whose every reward is None.
    rows = [
        {"prompt": "what is 36 + 36 ?", "ground_truth": "72", "data_source": "openai/gsm8k"},
        {"prompt": "so the answer ?", "ground_truth": "72", "data_source": "no/such-source"},
    ]
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=8,
        **_two_grpo_steps(tiny_tokenizer),
    )
    reward = areward_func(EXAMPLES / "reward.yaml", name="rk")
    trainer = GRPOTrainer(
        model=str(tiny_model_dir),
        reward_funcs=[reward],
        args=args,
        train_dataset=Dataset.from_list(rows),
    )
    trainer.train()
    assert trainer.state.global_step == 2
    logged = [e for e in trainer.state.log_history if "rewards/rk/mean" in e]
    assert len(logged) == 2
    for entry in logged:
        assert entry["rewardkit/invalid_frac"] == 0.5  # the unknown source's group, every step
        assert not math.isnan(entry["loss"]) and not math.isnan(entry["rewards/rk/mean"])
        assert 0.0 <= entry["rewards/rk/mean"] <= 1.0


def test_grpo_trainer_on_gsm8ks_own_columns_warns_naming_the_fix(
    tiny_model_dir: Path, tiny_tokenizer: Any, tmp_path: Path, rk_config: Any
) -> None:
    """GSM8K as TRL users load it (its "answer" column, no data_source) inside a real
    GRPOTrainer step: every reward is None, and the user is told why and what to map."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    dataset = Dataset.from_list(
        [{"prompt": "How many clips? End with '#### <number>'.", "answer": "24 + 48\n#### 72"}] * 4
    )
    steps = {**_two_grpo_steps(tiny_tokenizer), "max_steps": 1}
    args = GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, **steps)
    trainer = GRPOTrainer(
        model=str(tiny_model_dir),
        reward_funcs=[reward_func(rk_config)],
        args=args,
        train_dataset=dataset,
    )
    with pytest.warns(RuntimeWarning) as caught:
        trainer.train()
    [message] = [str(w.message) for w in caught if "failed to score" in str(w.message)]
    assert "no ground_truth column" in message and "fields={'ground_truth': 'answer'}" in message
