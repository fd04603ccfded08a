"""Reward-model replicas as Ray actors: the local model's scores, spread, a dead replica survived."""

from __future__ import annotations

import asyncio

import pytest

from rewardkit.config import load_config
from rewardkit.errors import ConfigError
from rewardkit.models.replicas import ReplicatedModelScorer, wants_replicas
from rewardkit.types import Sample

ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

pytestmark = pytest.mark.usefixtures("ray_cluster")

WORDS = "what is two plus three the answer four five six i think it is maybe yes no".split()


@pytest.fixture(scope="module")
def tiny_rm(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A random 2-layer BertForSequenceClassification with a word-level tokenizer."""
    vocab = {
        w: i for i, w in enumerate(dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS]))
    }
    tk = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tk.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tk,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(
        transformers.BertConfig(
            vocab_size=len(vocab),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=128,
            num_labels=1,
            pad_token_id=0,
        )
    )
    path = tmp_path_factory.mktemp("tiny-rm") / "bert-rm"
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


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
