"""guards: rewardkit.models.replicas: reward-model replicas as Ray actors: the local model's
scores, spread, a dead replica survived.
"""

from __future__ import annotations

import asyncio

import pytest
import ray
import torch
import transformers

from rewardkit.config import load_config
from rewardkit.errors import ConfigError
from rewardkit.execution.health import PoolHealth
from rewardkit.models.replicas import ReplicatedModelScorer, wants_replicas
from rewardkit.types import Sample

pytestmark = pytest.mark.usefixtures("ray_cluster")

WORDS = "what is two plus three the answer four five i think it is maybe yes no".split()


@pytest.fixture(scope="module")
def tiny_rm(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A random 2-layer BertForSequenceClassification with a word-level tokenizer."""
    from _support.model_fakes import bert_config, build_tokenizer, save_model

    tok = build_tokenizer("bert")
    torch.manual_seed(0)
    config = bert_config(len(tok), num_labels=1, pad_token_id=tok.pad_token_id)
    model = transformers.BertForSequenceClassification(config)
    return save_model(tmp_path_factory.mktemp("tiny-rm") / "bert-rm", model, tok)


def _section(path: str, **reward: object):
    rm = {"enable": True, "model_path": path, "device": "cpu", "replicas": 2}
    ray_opts = {"replica_num_cpus": 0.5, "replica_num_gpus": 0}
    return load_config({"reward": {"reward_model": rm, "ray": ray_opts, **reward}}).reward


def _samples() -> list[Sample]:
    words = WORDS * 3
    return [
        Sample(
            data_source="chat",
            prompt=" ".join(words[i : i + 5]),
            response=" ".join(words[i + 2 : i + 4 + i % 7]),
        )
        for i in range(40)
    ]


async def test_replicas_score_like_one_local_model_and_survive_a_dead_replica(tiny_rm: str) -> None:
    from rewardkit.models.discriminative import LocalRewardModel

    samples = _samples()
    local = LocalRewardModel(_section(tiny_rm).reward_model)
    await local.start()
    try:
        expected = [s.score for s in await asyncio.gather(*(local.score(s) for s in samples))]
    finally:
        await local.close()

    scorer = ReplicatedModelScorer(_section(tiny_rm))
    await scorer.start()
    try:
        assert scorer.component == "rm" and scorer.weight == 1.0
        assert scorer.health() == PoolHealth(2, 2)
        assert len({a["node_id"] for a in scorer.actors}) == 2  # one replica per node
        first = await asyncio.gather(*(scorer.score(s) for s in samples))
        assert [s.score for s in first] == pytest.approx(expected, abs=1e-4)

        # Kill the replica the next round goes to first (the least loaded, listed first).
        victim = scorer.actor_handles[0]
        ray.kill(victim, no_restart=True)
        second = await asyncio.gather(*(scorer.score(s) for s in samples))
        assert [s.score for s in second] == pytest.approx(expected, abs=1e-4)  # each row once
        assert scorer.stats["retried"] == len(samples) and scorer.stats["actors_lost"] == 1
    finally:
        await scorer.close()


def test_which_configs_run_replicas(tiny_rm: str) -> None:
    assert wants_replicas(_section(tiny_rm))
    assert wants_replicas(_section(tiny_rm, backend="ray"))
    one = load_config({"reward": {"reward_model": {"enable": True, "model_path": tiny_rm}}}).reward
    assert not wants_replicas(one)
    remote = load_config(
        {
            "reward": {
                "reward_model": {
                    "enable": True,
                    "backend": "vllm",
                    "urls": ["http://127.0.0.1:1", "http://127.0.0.1:2"],
                }
            }
        }
    ).reward
    assert not wants_replicas(remote)
    with pytest.raises(ConfigError, match=r"reward_model\.urls"):
        ReplicatedModelScorer(remote)
