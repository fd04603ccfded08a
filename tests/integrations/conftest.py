"""Shared parts for the trainer-adapter tests: one warm scoring loop, a tiny tokenizer.

Every adapter test scores through the same configuration, so the process-wide loop
(``rewardkit.integrations._backend``) starts once for the whole package of tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rewardkit.integrations._backend import close_backends

CONFIG: dict[str, Any] = {"reward": {"num_workers": 1, "timeout_s": 10}}
"""The rewardkit config the adapter tests score with (gsm8k is built in)."""

WORDS = [
    "<pad>", "<eos>", "<unk>", "####", "72", "7", "Q:", "A:", "what", "is", "36", "+",
    "?", "so", "the", "answer", "Natalia", "sold", "clips",
]  # fmt: skip


@pytest.fixture(scope="session")
def rk_config() -> dict[str, Any]:
    """CONFIG, as a fixture (test modules do not import conftest)."""
    return CONFIG


@pytest.fixture(scope="package", autouse=True)
def _close_scorers() -> Iterator[None]:
    """Stop the loops the adapters started once this package's tests are done."""
    yield
    close_backends()


@pytest.fixture(scope="session")
def tiny_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A word-level tokenizer over a few GSM8K-ish words, saved like a hub tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()  # decodes by joining with spaces
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )
    path = tmp_path_factory.mktemp("tiny-tokenizer")
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_tokenizer_dir: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_tokenizer_dir)
