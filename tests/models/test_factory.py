"""guards: rewardkit.models: build_model_scorers, the reward_model config section, and rendering
without a chat template.
"""

from __future__ import annotations

import pytest

import rewardkit.models as models
from rewardkit.config import load_config
from rewardkit.errors import ConfigError
from rewardkit.models import ModelScorer, build_model_scorers
from rewardkit.models.templates import encode_row, render_row


def section(**rm: object):
    return load_config({"reward": {"reward_model": {"enable": True, **rm}}}).reward


def test_disabled_gives_no_scorers() -> None:
    assert build_model_scorers(load_config({}).reward) == []


@pytest.mark.parametrize(
    ("rm", "cls", "component"),
    [
        ({"model_path": "/m"}, "LocalRewardModel", "rm"),
        ({"backend": "vllm", "url": "http://h"}, "RemoteRewardModel", "rm"),
        ({"backend": "sglang", "url": "http://h"}, "RemoteRewardModel", "rm"),
        ({"backend": "tei", "url": "http://h"}, "RemoteRewardModel", "rm"),
        ({"kind": "generative", "backend": "openai", "url": "http://h"}, "LLMJudge", "judge"),
        ({"kind": "generative", "backend": "vllm", "url": "http://h"}, "LLMJudge", "judge"),
        ({"kind": "generative", "model_path": "/m"}, "LLMJudge", "judge"),
    ],
)
def test_factory_picks_the_scorer(rm: dict, cls: str, component: str) -> None:
    (scorer,) = build_model_scorers(section(weight=0.5, **rm), max_batch_wait_ms=1)
    assert type(scorer).__name__ == cls and isinstance(scorer, getattr(models, cls))
    assert isinstance(scorer, ModelScorer)
    assert scorer.component == component and scorer.weight == 0.5


def test_local_replicas_go_to_the_ray_scorer() -> None:
    (scorer,) = build_model_scorers(section(model_path="/m", replicas=2))
    assert type(scorer).__name__ == "ReplicatedModelScorer"
    assert scorer.component == "rm"


def test_openai_backend_is_for_judges() -> None:
    with pytest.raises(ConfigError, match="kind: generative"):
        build_model_scorers(section(backend="openai", url="http://h"))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["reward.reward_model.judge.n=0"], "reward.reward_model.judge.n"),
        (["reward.reward_model.judge.aggregate=median"], "reward.reward_model.judge.aggregate"),
        (["reward.reward_model.http.timeout_s=-1"], "reward.reward_model.http.timeout_s"),
        (["reward.reward_model.http.retries=2"], "reward.reward_model.http.retries: unknown key"),
        (["reward.reward_model.dtype=int8"], "reward.reward_model.dtype"),
    ],
)
def test_config_errors_name_the_key(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_config({}, overrides)


def test_yaml_style_overrides_reach_the_typed_sections() -> None:
    cfg = load_config(
        {},
        [
            "reward.reward_model.judge.template=reference",
            "reward.reward_model.judge.n=4",
            "reward.reward_model.http.requests_per_minute=600",
            "reward.reward_model.max_batch_size=8",
        ],
    ).reward.reward_model
    assert cfg.judge.template == "reference" and cfg.judge.n == 4
    assert cfg.http.requests_per_minute == 600 and cfg.max_batch_size == 8


def test_plain_concatenation_without_a_chat_template(bert_rm: str) -> None:
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(bert_rm, local_files_only=True)
    assert render_row(tok, "how many apples", " five") == ("how many apples five", 15, False)
    assert render_row(tok, "how many apples", "five") == ("how many apples\nfive", 16, False)
    assert render_row(tok, [{"role": "user", "content": "a"}], "") == ("a", 1, False)
    encoded = encode_row(tok, "how many apples", " five", prompt_length=100, response_length=100)
    tokens = tok.convert_ids_to_tokens(encoded.ids)
    assert tokens == ["[CLS]", "how", "many", "apples", "five", "[SEP]"]
    assert encoded.prompt_tokens == 4  # [CLS] stays with the prompt, [SEP] with the response

    cut = encode_row(
        tok, "what is two plus two", "four five six", prompt_length=3, response_length=2
    )
    assert tok.convert_ids_to_tokens(cut.ids) == ["[CLS]", "plus", "two", "four", "five"]
    assert cut.truncated and cut.prompt_tokens == 3
