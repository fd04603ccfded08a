"""guards: verl 0.9.1's own reward_model section with rollout.name=vllm loads in rewardkit and gives the vLLM command lines its keys ask for."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rewardkit.config import load_config
from rewardkit.errors import ConfigError
from rewardkit.models.managed import replica_argv


def verl_reward_model(**rollout: Any) -> dict[str, Any]:
    """verl's reward.reward_model section from its own YAML, as a verl run composes it."""
    import verl
    from omegaconf import OmegaConf

    path = Path(verl.__file__).parent / "trainer" / "config" / "reward" / "reward.yaml"
    section = OmegaConf.load(path).reward_model
    for key, value in rollout.items():
        section.rollout[key] = value
    tree = OmegaConf.to_container(section, resolve=True)
    assert isinstance(tree, dict)
    return tree


@pytest.fixture
def model_dir(tmp_path: Path) -> str:
    (tmp_path / "config.json").write_text("{}")
    return str(tmp_path)


def test_verls_section_with_vllm_gives_its_keys_as_vllm_flags(model_dir: str) -> None:
    section = verl_reward_model(name="vllm", data_parallel_size=2)
    section.update(enable=True, model_path=model_dir)
    rm = load_config(
        {"reward": {"reward_model": {**section, "kind": "generative"}}}
    ).reward.reward_model
    assert rm.managed and rm.rollout.data_parallel_size == 2
    lines = [replica_argv(rm, port=9000 + r, rank=r)[0] for r in range(2)]
    for rank, argv in enumerate(lines):
        assert argv[:3] == ["vllm", "serve", model_dir]
        flags = dict(zip(argv[3::2], argv[4::2], strict=False))
        # verl 0.9.1's defaults: tp 2, memory 0.5, 1024 seqs, 8192 batched tokens, seed 42,
        # bfloat16, max_model_len from prompt_length + response_length (2048 + 2048).
        assert flags["--tensor-parallel-size"] == "2"
        assert flags["--gpu-memory-utilization"] == "0.5"
        assert flags["--max-num-seqs"] == "1024"
        assert flags["--max-num-batched-tokens"] == "8192"
        assert flags["--seed"] == str(42 + rank)  # verl seeds replica r with seed + r
        assert flags["--dtype"] == "bfloat16"
        assert flags["--max-model-len"] == "4096"
        assert flags["--port"] == str(9000 + rank)


def test_verls_section_with_a_setting_rewardkit_does_not_pass_is_refused(model_dir: str) -> None:
    section = verl_reward_model(name="vllm", enforce_eager=False)
    section.update(enable=True, model_path=model_dir)
    with pytest.raises(ConfigError, match=r"rollout.enforce_eager=False"):
        load_config({"reward": {"reward_model": section}})


def test_verls_section_with_sglang_gives_sglang_flags(model_dir: str) -> None:
    section = verl_reward_model(name="sglang")
    section.update(enable=True, model_path=model_dir)
    rm = load_config({"reward": {"reward_model": section}}).reward.reward_model
    argv, _ = replica_argv(rm, port=9000, rank=0)
    assert argv[1:3] == ["-m", "sglang.launch_server"]
    assert argv[argv.index("--tp-size") + 1] == "2"
    assert argv[argv.index("--mem-fraction-static") + 1] == "0.5"
    assert "--is-embedding" in argv  # a discriminative RM, read at /v1/embeddings
    assert os.path.basename(argv[0]).startswith("python")
