"""Tiny reward models and a fake model server, built once per test session.

Models are random-init (2 layers, hidden 32) with a word-level tokenizer whose
vocabulary is the words these tests use (see _support/model_fakes.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import transformers

from _support.judge_server import CountingJudge
from _support.model_fakes import (
    CHAT_TEMPLATE,
    JUDGE_TOKEN,
    FakeModelServer,
    ServerThread,
    bert_config,
    build_tokenizer,
    llama_config,
    save_model,
)


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tiny-models")


@pytest.fixture(scope="session")
def llama_rm(tiny_dir: Path) -> str:
    """A random 2-layer LlamaForSequenceClassification, one label, no chat template."""
    tok = build_tokenizer("llama")
    torch.manual_seed(0)
    model = transformers.LlamaForSequenceClassification(
        llama_config(len(tok), num_labels=1, pad_token_id=tok.pad_token_id)
    )
    return save_model(tiny_dir / "llama-rm", model, tok)


@pytest.fixture(scope="session")
def llama_chat_rm(tiny_dir: Path, llama_rm: str) -> str:
    """The same weights as llama_rm, with a chat template in its tokenizer."""
    tok = build_tokenizer("llama", chat_template=CHAT_TEMPLATE)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        llama_rm, local_files_only=True
    )
    return save_model(tiny_dir / "llama-chat-rm", model, tok)


@pytest.fixture(scope="session")
def llama_eos_pad_rm(tiny_dir: Path, llama_rm: str) -> str:
    """llama_rm's weights with a chat template whose turns end in '</s>', and pad = eos
    (as in many Llama reward models): a padded row's last real token is a pad id."""
    tok = build_tokenizer("llama", chat_template=CHAT_TEMPLATE)
    tok.pad_token = tok.eos_token
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        llama_rm, local_files_only=True
    )
    model.config.pad_token_id = tok.eos_token_id
    return save_model(tiny_dir / "llama-eos-pad-rm", model, tok)


@pytest.fixture(scope="session")
def bert_rm(tiny_dir: Path) -> str:
    """A random 2-layer BertForSequenceClassification (pools its [CLS] token)."""
    tok = build_tokenizer("bert")
    torch.manual_seed(1)
    config = bert_config(len(tok), num_labels=1, pad_token_id=tok.pad_token_id)
    return save_model(tiny_dir / "bert-rm", transformers.BertForSequenceClassification(config), tok)


@pytest.fixture(scope="session")
def judge_lm(tiny_dir: Path) -> str:
    """A causal LM rigged to always write '[[7]]': its output layer is all zeros, so every
    step's logits tie and greedy decoding picks id 0, which is that token."""
    tok = build_tokenizer("llama", chat_template=CHAT_TEMPLATE, first=JUDGE_TOKEN)
    assert tok.convert_ids_to_tokens(0) == JUDGE_TOKEN
    torch.manual_seed(2)
    model = transformers.LlamaForCausalLM(
        llama_config(len(tok), pad_token_id=tok.pad_token_id, tie_word_embeddings=False)
    )
    with torch.no_grad():
        model.lm_head.weight.zero_()
    return save_model(tiny_dir / "judge-lm", model, tok)


@pytest.fixture(scope="session")
def model_server() -> Iterator[tuple[str, FakeModelServer]]:
    fake = FakeModelServer()
    with ServerThread(fake.app) as url:
        yield url, fake


@pytest.fixture
def fake_server(model_server: tuple[str, FakeModelServer]) -> tuple[str, FakeModelServer]:
    """The session's fake model server with its request log cleared."""
    url, fake = model_server
    fake.requests.clear()
    return url, fake


@pytest.fixture(scope="module")
def judge_server() -> Iterator[tuple[str, CountingJudge]]:
    """A judge API on 127.0.0.1 that counts requests and reports ``usage``."""
    judge = CountingJudge()
    with ServerThread(judge.app) as url:
        yield url, judge


@pytest.fixture
def judge(judge_server: tuple[str, CountingJudge]) -> tuple[str, CountingJudge]:
    """The module's judge server, its counts reset."""
    url, server = judge_server
    server.reset()
    return url, server
