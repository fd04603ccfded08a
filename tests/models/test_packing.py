"""guards: rewardkit.models.packing and the packed forward (reward_model.use_remove_padding):
rows laid end to end score as they do alone, on real transformers decoders, and a model
whose attention cannot keep packed rows apart is refused.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers

from _support.model_fakes import build_tokenizer, save_model
from _support.rm_checks import PRECISIONS, direct_logit, failing_on, on_device, tolerance
from rewardkit.config import RewardModelConfig
from rewardkit.errors import ConfigError, InvalidSampleError, ScorerError
from rewardkit.models.discriminative import LocalRewardModel
from rewardkit.models.packing import pack_rows
from rewardkit.types import Sample

# ---------------------------------------------------------------------- the layout


def check_layout(lengths: list[int], max_tokens: int, max_rows: int) -> None:
    batches = pack_rows(lengths, max_tokens, max_rows)
    assert sorted(i for b in batches for i in b.rows) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch.rows) <= max_rows
        assert batch.width == max(lengths[i] for i in batch.rows)  # as wide as its longest
        if len(batch.rows) > 1:
            assert batch.padded_tokens <= max_tokens
        for members, used in zip(batch.bins, batch.used, strict=True):
            assert used == sum(lengths[i] for i in members) <= batch.width


@pytest.mark.parametrize("seed", range(5))
def test_pack_rows_lays_every_row_once_within_the_budget(seed: int) -> None:
    rng = random.Random(seed)
    lengths = [min(2048, max(8, int(rng.lognormvariate(5.2, 1.0)))) for _ in range(400)]
    check_layout(lengths, max_tokens=4096, max_rows=64)
    check_layout(lengths, max_tokens=16384, max_rows=256)


def test_pack_rows_fills_bins_first_fit_longest_first() -> None:
    (batch,) = pack_rows([100, 30, 60, 40, 70], max_tokens=1000, max_rows=8)
    assert batch.width == 100
    assert batch.bins == [[0], [4, 1], [2, 3]]  # 100 | 70+30 | 60+40: no padding at all
    assert batch.padded_tokens == 300
    # The padded way: 5 rows x 100 tokens.
    assert sum(batch.used) == 300 < 5 * 100


def test_pack_rows_edges() -> None:
    assert pack_rows([], 100, 8) == []
    alone, rest = pack_rows([500, 3], 100, 8)  # longer than the budget: a batch of its own
    assert alone.rows == [0] and rest.rows == [1]
    assert [b.rows for b in pack_rows([1] * 5, 100, 2)] == [[0, 1], [2, 3], [4]]
    # a new bin would pass the budget: a new batch
    assert [b.rows for b in pack_rows([60, 60, 60], 120, 8)] == [[0, 1], [2]]


# ---------------------------------------------------------------------- real decoders


def _tiny(kind: str, vocab: int, pad: int) -> Any:
    """A 2-layer random decoder of a real transformers architecture, one label."""
    common = {"vocab_size": vocab, "num_labels": 1, "pad_token_id": pad}
    layers = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}
    configs = {
        "llama": lambda: transformers.LlamaConfig(
            **layers, num_attention_heads=4, num_key_value_heads=2, **common
        ),
        "qwen2": lambda: transformers.Qwen2Config(
            **layers, num_attention_heads=4, num_key_value_heads=2, **common
        ),
        "gpt2": lambda: transformers.GPT2Config(
            n_embd=32, n_layer=2, n_head=4, bos_token_id=2, eos_token_id=3, **common
        ),
        # OPT's positions come from the attention mask, not position ids: packing is wrong.
        "opt": lambda: transformers.OPTConfig(
            hidden_size=32,
            ffn_dim=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            word_embed_proj_dim=32,
            **common,
        ),
    }
    torch.manual_seed(0)
    return transformers.AutoModelForSequenceClassification.from_config(configs[kind]())


@pytest.fixture(scope="module")
def decoders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tok = build_tokenizer("llama")
    root = tmp_path_factory.mktemp("packing")
    return {
        kind: save_model(Path(root / kind), _tiny(kind, len(tok), tok.pad_token_id), tok)
        for kind in ("llama", "qwen2", "gpt2", "opt")
    }


def long_tailed_rows(n: int, seed: int = 0) -> list[Sample]:
    rng = random.Random(seed)
    words = "what is two plus two the answer four five three how many apples".split()
    rows = []
    for _ in range(n):
        size = min(60, max(2, int(rng.lognormvariate(2.3, 0.8))))
        rows.append(
            Sample("rm", prompt=" ".join(rng.choices(words, k=size)), response=" four" * (size % 5))
        )
    return rows


async def started(cfg: RewardModelConfig) -> LocalRewardModel:
    scorer = LocalRewardModel(cfg)
    await scorer.start()
    return scorer


@pytest.mark.parametrize(("device", "dtype"), PRECISIONS)
@pytest.mark.parametrize("kind", ["llama", "qwen2", "gpt2"])
async def test_packed_scores_equal_each_rows_direct_forward(
    decoders: dict[str, str], kind: str, device: str, dtype: str
) -> None:
    """score() with packing, a forced packing of every row into one batch, and the padded
    forward all give each row the logit of its own unpadded forward."""
    rows = long_tailed_rows(24)
    scorer = await started(on_device(decoders[kind], device, dtype, use_remove_padding=True))
    try:
        assert scorer._packed
        scored = [r.score for r in await asyncio.gather(*(scorer.score(r) for r in rows))]
        ids = [scorer.encode(r).ids for r in rows]
        direct = [direct_logit(scorer, x) for x in ids]
        packed_all = scorer.forward_packed(ids)
        padded_all = scorer.forward(ids)
        stats = dict(scorer.stats)
    finally:
        await scorer.close()
    tol = tolerance(dtype, direct)
    assert scored == pytest.approx(direct, abs=tol)
    assert packed_all == pytest.approx(direct, abs=tol)
    assert padded_all == pytest.approx(packed_all, abs=tol)
    assert stats["rows"] == 24 and stats["tokens"] <= stats["padded_tokens"]


async def test_a_rows_score_does_not_change_with_what_it_is_packed_with(
    decoders: dict[str, str],
) -> None:
    scorer = await started(on_device(decoders["llama"], "cpu", "float32", use_remove_padding=True))
    try:
        ids = [scorer.encode(r).ids for r in long_tailed_rows(16, seed=3)]
        alone = scorer.forward_packed([ids[0]])[0]
        beside = [scorer.forward_packed([ids[0], *ids[1:k]])[0] for k in (2, 5, 16)] + [
            scorer.forward_packed([*ids[1:], ids[0]])[-1]
        ]
    finally:
        await scorer.close()
    assert beside == pytest.approx([alone] * 4, abs=tolerance("float32", [alone]))


async def test_packing_removes_the_padding_of_long_tailed_rows(decoders: dict[str, str]) -> None:
    rows = long_tailed_rows(64, seed=1)
    stats = {}
    for packing in (False, True):
        cfg = on_device(
            decoders["llama"], "cpu", "float32", use_remove_padding=packing, max_padding_tokens=1e9
        )
        scorer = await started(cfg)
        try:
            await asyncio.gather(*(scorer.score(r) for r in rows))
            stats[packing] = dict(scorer.stats)
        finally:
            await scorer.close()
    assert stats[True]["tokens"] == stats[False]["tokens"]
    # Padded: every row padded to the longest of one budget-filling batch.
    assert stats[True]["padded_tokens"] < 0.6 * stats[False]["padded_tokens"]
    assert stats[True]["padded_tokens"] < 1.3 * stats[True]["tokens"]


async def test_a_model_whose_attention_cannot_keep_packed_rows_apart_is_refused(
    decoders: dict[str, str], bert_rm: str
) -> None:
    """Asked for (true), packing is checked on the model at start: OPT (positions from its
    mask) scores packed rows wrongly, BERT is no decoder. auto (on a CPU) and the default
    leave every model padded."""
    for path, why in ((decoders["opt"], "differ"), (bert_rm, "not a causal decoder")):
        with pytest.raises(ConfigError, match="use_remove_padding=True") as err:
            await started(on_device(path, "cpu", "float32", use_remove_padding=True))
        assert why in str(err.value)
    for path, packing in [
        (p, v) for p in (decoders["opt"], decoders["llama"]) for v in ("auto", False)
    ]:
        # auto packs on CUDA only; off by default
        scorer = await started(on_device(path, "cpu", "float32", use_remove_padding=packing))
        try:
            assert not scorer._packed
            assert (await scorer.score(Sample("rm", prompt="two", response="four"))).score
        finally:
            await scorer.close()


async def test_a_failing_packed_forward_only_fails_the_rows_that_fail_alone(
    decoders: dict[str, str],
) -> None:
    rows = long_tailed_rows(8, seed=2)
    scorer = await started(on_device(decoders["llama"], "cpu", "float32", use_remove_padding=True))
    poison = len(scorer.encode(rows[3]).ids)
    scorer.forward_packed = failing_on(scorer.forward_packed, poison)  # type: ignore[method-assign]
    try:
        results = await asyncio.gather(*(scorer.score(r) for r in rows), return_exceptions=True)
    finally:
        await scorer.close()
    failed = [i for i, r in enumerate(results) if isinstance(r, ScorerError)]
    assert 3 in failed
    assert all(len(scorer.encode(rows[i]).ids) == poison for i in failed)
    assert all(isinstance(r.score, float) for r in results if not isinstance(r, BaseException))


@pytest.mark.parametrize("packing", [False, True])
async def test_a_row_with_no_tokens_is_invalid_not_scored(tmp_path: Path, packing: bool) -> None:
    """A tokenizer that adds no special tokens renders an empty row to no ids: no last
    token to score. It is refused alone; its neighbours keep their own scores (packed, the
    read would have landed on the row before it)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    core = Tokenizer(models.WordLevel({"[PAD]": 0, "[UNK]": 1, "two": 2}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]"
    )
    path = save_model(tmp_path / "no-specials", _tiny("llama", 3, 0), tok)
    cfg = on_device(path, "cpu", "float32", use_remove_padding=packing)
    scorer = await started(cfg)
    rows = [Sample("rm", prompt="two two", response=" two"), Sample("rm", prompt="", response="")]
    try:
        together = await asyncio.gather(*(scorer.score(r) for r in rows), return_exceptions=True)
        alone = await scorer.score(rows[0])
    finally:
        await scorer.close()
    assert isinstance(together[1], InvalidSampleError) and "no tokens" in str(together[1])
    assert together[0].score == pytest.approx(alone.score, abs=1e-6)


@pytest.mark.parametrize(
    "overrides",
    [
        {"backend": "vllm", "url": "http://127.0.0.1:1"},
        {"kind": "generative"},
        {"rollout": {"name": "vllm"}},
    ],
)
def test_packing_is_refused_where_no_local_model_pads(overrides: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="use_remove_padding=True"):
        RewardModelConfig(enable=True, model_path="m", use_remove_padding=True, **overrides)
