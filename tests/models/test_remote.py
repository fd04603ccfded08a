"""guards: rewardkit.models.remote: remote discriminative RMs against a real HTTP server
answering in vLLM/SGLang/TEI shapes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from _support.model_fakes import FakeModelServer, fake_score, scored_by
from rewardkit.config import HttpOptions, RewardModelConfig
from rewardkit.errors import InvalidSampleError, RemoteError
from rewardkit.http import HttpStatusError
from rewardkit.models.remote import RemoteRewardModel
from rewardkit.models.templates import encode_row
from rewardkit.types import Sample

ROWS = [
    Sample("rm", prompt="what is two plus two", response="the answer is four"),
    Sample("rm", prompt=[{"role": "user", "content": "how many apples"}], response="five apples"),
    Sample("rm", prompt="how many apples are there", response="three"),
]
FAST = HttpOptions(timeout_s=5, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.02)


def config(url: str, backend: str, **overrides: Any) -> RewardModelConfig:
    return RewardModelConfig(enable=True, backend=backend, url=url, http=FAST, **overrides)


async def score_all(cfg: RewardModelConfig, rows: list[Sample]) -> list[Any]:
    return await scored_by(RemoteRewardModel(cfg), rows)


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
async def test_token_ids_rendered_here_are_sent_in_one_batch(
    fake_server: tuple[str, FakeModelServer], llama_chat_rm: str, backend: str
) -> None:
    url, fake = fake_server
    cfg = config(url, backend, model_path=llama_chat_rm, model_name="rm-served")
    results = await score_all(cfg, ROWS)
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(llama_chat_rm, local_files_only=True)
    expected_ids = [
        encode_row(tok, r.prompt, r.response, prompt_length=2048, response_length=2048).ids
        for r in ROWS
    ]
    assert len(fake.requests) == 1
    path, body = fake.requests[0]
    assert path == {"vllm": "/classify", "sglang": "/v1/embeddings"}[backend]
    assert body["model"] == "rm-served" and body["input"] == expected_ids
    if backend == "vllm":
        assert body["use_activation"] is False
    assert [r.score for r in results] == pytest.approx([fake_score(ids) for ids in expected_ids])
    assert all(r.extra["truncated"] is False for r in results)


async def test_vllm_without_a_tokenizer_sends_the_conversation(
    fake_server: tuple[str, FakeModelServer],
) -> None:
    url, fake = fake_server
    results = await score_all(config(url, "vllm"), ROWS[:2])
    bodies = sorted(
        (body for _, body in fake.requests), key=lambda b: len(b["messages"][-1]["content"])
    )
    assert len(bodies) == 2 and all(b["use_activation"] is False for b in bodies)
    assert bodies[0]["messages"] == [
        {"role": "user", "content": "how many apples"},
        {"role": "assistant", "content": "five apples"},
    ]
    assert results[1].score == pytest.approx(fake_score(bodies[0]["messages"]))


async def test_tei_gets_rendered_text_with_raw_scores(
    fake_server: tuple[str, FakeModelServer], llama_chat_rm: str
) -> None:
    url, fake = fake_server
    results = await score_all(config(url, "tei", model_path=llama_chat_rm), ROWS)
    ((path, body),) = fake.requests
    assert path == "/predict" and body["raw_scores"] is True and body["truncate"] is True
    texts = [x[0] for x in body["inputs"]]
    assert (
        texts[0] == "<|user|> what is two plus two </s> <|assistant|> the answer is four </s> "
    )  # no leading <s>
    assert [r.score for r in results] == pytest.approx([len(t) / 10 for t in texts])


async def test_sglang_without_tokenizer_sends_plain_text(
    fake_server: tuple[str, FakeModelServer],
) -> None:
    url, fake = fake_server
    results = await score_all(config(url, "sglang"), ROWS[:1])
    assert fake.requests[0][1]["input"] == ["what is two plus two\nthe answer is four"]
    assert results[0].score == pytest.approx(len("what is two plus two\nthe answer is four") / 10)
    assert "truncated" not in results[0].extra  # the server truncates, unseen


async def test_one_refused_row_does_not_fail_its_neighbours(
    fake_server: tuple[str, FakeModelServer],
) -> None:
    url, _ = fake_server
    rows = [*ROWS, Sample("rm", prompt="a", response="a bad reply")]
    results = await score_all(config(url, "tei"), rows)
    assert isinstance(results[3], HttpStatusError) and results[3].status == 400
    assert all(isinstance(r.score, float) for r in results[:3])


async def test_a_row_with_no_tokens_is_invalid_and_never_sent(
    fake_server: tuple[str, FakeModelServer], tmp_path: Any
) -> None:
    """An RM tokenizer that adds no special tokens renders an empty row to no ids: the row
    is invalid here, its neighbours are sent and scored."""
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    core = Tokenizer(models.WordLevel({"[PAD]": 0, "[UNK]": 1, "two": 2}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]"
    ).save_pretrained(tmp_path)
    url, fake = fake_server
    rows = [Sample("rm", prompt="two", response=" two"), Sample("rm", prompt="", response="")]
    results = await score_all(config(url, "vllm", model_path=str(tmp_path)), rows)
    assert isinstance(results[1], InvalidSampleError) and "no tokens" in str(results[1])
    assert isinstance(results[0].score, float)
    assert [body["input"] for _, body in fake.requests] == [[[2, 2]]]


@pytest.mark.parametrize("prefix", ["/garbage", "/badshape"])
@pytest.mark.parametrize("backend", ["vllm", "sglang", "tei"])
async def test_malformed_answers_are_remote_errors(
    fake_server: tuple[str, FakeModelServer], prefix: str, backend: str
) -> None:
    url, _ = fake_server
    results = await score_all(config(url + prefix, backend), ROWS[:2])
    assert all(isinstance(r, RemoteError) for r in results)


async def test_dead_server_fails_fast() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    results = await score_all(config(f"http://127.0.0.1:{port}", "vllm"), ROWS[:2])
    assert all(isinstance(r, RemoteError) and "2 attempts" in str(r) for r in results)


async def test_stalled_server_is_an_error_not_a_hang(
    fake_server: tuple[str, FakeModelServer],
) -> None:
    url, _ = fake_server
    cfg = config(url + "/stall", "sglang").model_copy(
        update={"http": FAST.model_copy(update={"timeout_s": 0.3})}
    )
    results = await asyncio.wait_for(score_all(cfg, ROWS), 3)
    assert all(isinstance(r, RemoteError) and "no answer within 0.3s" in str(r) for r in results)


async def test_replica_urls_skip_a_dead_one(fake_server: tuple[str, FakeModelServer]) -> None:
    import socket

    url, _ = fake_server
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    cfg = RewardModelConfig(enable=True, backend="sglang", urls=[dead, url], http=FAST)
    results = await score_all(cfg, ROWS * 3)
    assert all(isinstance(r.score, float) for r in results)
