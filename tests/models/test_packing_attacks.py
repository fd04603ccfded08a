"""guards: packed reward-model scoring (reward_model.use_remove_padding) against hostile
models and rows: a model whose packed rows leak into each other is refused in every
precision, one that is accepted scores each packed row as it scores alone (sliding windows
shorter than the rows, 1-token rows, pad and eos ids, tight budgets), a decoder made
bidirectional keeps its mask, and a RoPE whose frequencies follow the forward's length
never lets a row's score follow its neighbours'.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers
from hypothesis import given, settings
from hypothesis import strategies as st

from _support.model_fakes import build_tokenizer, save_model
from _support.rm_checks import PRECISIONS, direct_logit, on_device, tolerance
from rewardkit.config import RewardModelConfig
from rewardkit.errors import ConfigError, ScorerError
from rewardkit.models.discriminative import LocalRewardModel, _LengthRope
from rewardkit.models.packing import pack_rows
from rewardkit.types import Sample

# ---------------------------------------------------------------------- the layout


@settings(max_examples=300, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 300), max_size=60),
    max_tokens=st.integers(1, 2000),
    max_rows=st.integers(1, 20),
)
def test_pack_rows_holds_for_any_lengths_and_budget(
    lengths: list[int], max_tokens: int, max_rows: int
) -> None:
    batches = pack_rows(lengths, max_tokens, max_rows)
    assert sorted(batch_row for b in batches for batch_row in b.rows) == list(range(len(lengths)))
    for batch in batches:
        assert 1 <= len(batch.rows) <= max_rows
        assert batch.width == max(lengths[i] for i in batch.rows)
        # Over budget only as a row too long for it, alone.
        assert batch.padded_tokens <= max_tokens or len(batch.rows) == 1
        for members, used in zip(batch.bins, batch.used, strict=True):
            assert members and used == sum(lengths[i] for i in members) <= batch.width


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 300), max_size=40),
    limit=st.integers(1, 300),
    alone=st.booleans(),
    packed=st.booleans(),
)
def test_rows_either_side_of_a_rope_limit_never_share_a_forward(
    lengths: list[int], limit: int, alone: bool, packed: bool
) -> None:
    scorer = LocalRewardModel(RewardModelConfig(enable=True, model_path="m", max_batch_tokens=900))
    scorer._packed = packed
    scorer._rope = _LengthRope(limit, alone, [])
    batches = scorer.layout(lengths)
    members = [b.rows if packed else b for b in batches]
    assert sorted(i for rows in members for i in rows) == list(range(len(lengths)))
    for rows in members:
        assert len({lengths[i] <= limit for i in rows}) == 1
        if alone and lengths[rows[0]] > limit:
            assert len(rows) == 1
    if packed:  # renumbered bins still add up
        for batch in batches:
            assert batch.used == [sum(lengths[i] for i in b) for b in batch.bins]


# ---------------------------------------------------------------------- models

_SIZE = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}
_HEADS = {"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8}


def _configs(vocab: int, pad: int) -> dict[str, Callable[[], Any]]:
    base = {**_SIZE, **_HEADS, "vocab_size": vocab, "num_labels": 1, "pad_token_id": pad}

    def gpt2(positions: int) -> Any:  # a learned position table of this size
        return transformers.GPT2Config(
            n_embd=32, n_layer=2, n_head=4, n_positions=positions,
            vocab_size=vocab, num_labels=1, pad_token_id=pad,
        )  # fmt: skip

    return {
        # Leaky when packed: attention or state crosses row bounds.
        "opt": lambda: transformers.OPTConfig(  # positions and mask from the attention mask
            hidden_size=32,
            ffn_dim=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            word_embed_proj_dim=32,
            vocab_size=vocab,
            num_labels=1,
            pad_token_id=pad,
        ),
        "minimax": lambda: transformers.MiniMaxConfig(**base),  # lightning (linear) attention
        "qwen3_next": lambda: transformers.Qwen3NextConfig(  # gated delta-net layers
            **base,
            linear_num_value_heads=4,
            linear_num_key_heads=2,
            linear_key_head_dim=8,
            linear_value_head_dim=8,
            num_experts=2,
            num_experts_per_tok=1,
            moe_intermediate_size=16,
            shared_expert_intermediate_size=16,
            layer_types=["linear_attention", "full_attention"],
        ),
        "gpt_oss": lambda: transformers.GptOssConfig(
            **base, num_local_experts=2, num_experts_per_tok=1, sliding_window=128
        ),
        "biogpt": lambda: transformers.BioGptConfig(
            **_SIZE, num_attention_heads=4, vocab_size=vocab, num_labels=1, pad_token_id=pad
        ),
        # Packable: each keeps packed rows apart, sliding windows far shorter than rows.
        "llama": lambda: transformers.LlamaConfig(**base),
        "mixtral": lambda: transformers.MixtralConfig(  # experts: GEMM shapes vary with content
            **base, num_local_experts=4, num_experts_per_tok=2
        ),
        "mistral-window4": lambda: transformers.MistralConfig(**base, sliding_window=4),
        "gemma2-window4": lambda: transformers.Gemma2Config(**base, sliding_window=4),
        "gpt_neo-local4": lambda: transformers.GPTNeoConfig(
            hidden_size=32,
            num_layers=2,
            num_heads=4,
            window_size=4,
            attention_types=[[["global", "local"], 1]],
            vocab_size=vocab,
            num_labels=1,
            pad_token_id=pad,
        ),
        # A decoder made bidirectional by its config (embedding and reward models built on
        # decoders): the layers still say is_causal, transformers builds a two-way mask.
        "llama-bidirectional": lambda: transformers.LlamaConfig(**base, is_causal=False),
        "gpt2-16positions": lambda: gpt2(16),
        "gpt2-8positions": lambda: gpt2(8),
    }


LEAKY = ["opt", "minimax", "qwen3_next", "gpt_oss", "biogpt"]
PACKABLE = ["llama", "mixtral", "mistral-window4", "gemma2-window4", "gpt_neo-local4"]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """A saved tiny model of each kind, built on first use (seed 0, the llama tokenizer)."""
    root = tmp_path_factory.mktemp("packing-attacks")
    tok = build_tokenizer("llama")
    configs = _configs(len(tok), tok.pad_token_id)
    saved: dict[str, str] = {}

    def get(kind: str) -> str:
        if kind not in saved:
            torch.manual_seed(0)
            model = transformers.AutoModelForSequenceClassification.from_config(configs[kind]())
            saved[kind] = save_model(Path(root / kind), model, tok)
        return saved[kind]

    return get


async def started(cfg: RewardModelConfig) -> LocalRewardModel:
    scorer = LocalRewardModel(cfg)
    await scorer.start()
    return scorer


def hostile_rows(vocab: int, pad: int, eos: int, seed: int = 0) -> list[list[int]]:
    """Token rows a packed batch must keep apart: far longer than a sliding window of 4,
    single tokens (several of them side by side), rows of pad and eos ids, one as wide
    as the longest."""
    rng = random.Random(seed)

    def words(n: int) -> list[int]:
        return [2] + [rng.randrange(6, vocab) for _ in range(n - 1)]

    return [
        words(40),
        words(40),  # exactly the bin width
        words(13),
        [2],
        [rng.randrange(6, vocab)],
        [pad],
        [2, pad, pad, pad],
        [2, *words(6)[1:], eos, pad, eos],
        [eos] * 5,
        words(27),
        words(2),
    ]


# ---------------------------------------------------------------------- leaky models


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("kind", LEAKY)
async def test_a_model_whose_packed_rows_leak_is_refused_in_every_precision(
    zoo: Callable[[str], str], kind: str, dtype: str
) -> None:
    """The load-time check once compared packed and padded probe scores within 1e-3 (fp32)
    or 0.05 (bf16) of max(1, |score|): small logits or bf16 hid the leak, and OPT in bf16,
    MiniMax in both precisions were packed, their rows scored with their neighbours'."""
    with pytest.raises(ConfigError, match="use_remove_padding=True") as err:
        await started(on_device(zoo(kind), "cpu", dtype, use_remove_padding=True))
    assert "packed" in str(err.value)
    # auto leaves them padded (and on a CPU does not ask); false never packs.
    scorer = await started(on_device(zoo(kind), "cpu", dtype, use_remove_padding=False))
    try:
        assert not scorer._packed
        rows = hostile_rows(len(scorer._tokenizer), scorer._pad_id, 3)
        row, neighbours, filler = rows[10], (rows[1][:13], rows[2]), rows[0]
        # The same row at the same place in the same shape of batch, behind two neighbours.
        behind = [scorer.forward_packed([filler, x, row])[2] for x in neighbours]
        packed = scorer.forward_packed(rows)  # what packing would have scored
        direct = [direct_logit(scorer, ids) for ids in rows]
    finally:
        await scorer.close()
    # The refusal is earned: packed, a row's score is not its own.
    assert behind[0] != behind[1]
    if dtype == "float32":  # in bf16 a leak can hide within the precision's tolerance
        assert packed != pytest.approx(direct, abs=tolerance(dtype, direct))


# ---------------------------------------------------------------------- packable models


@pytest.mark.parametrize(("device", "dtype"), PRECISIONS)
@pytest.mark.parametrize("kind", PACKABLE)
async def test_an_accepted_model_scores_hostile_packed_rows_as_alone(
    zoo: Callable[[str], str], kind: str, device: str, dtype: str
) -> None:
    """The check asks that a row's packed score not move at all with its neighbour's
    content: on CUDA (-m gpu) this is where a kernel whose rounding depends on the data
    (experts' GEMMs sized by routing) would show as a refusal."""
    scorer = await started(on_device(zoo(kind), device, dtype, use_remove_padding=True))
    try:
        assert scorer._packed
        rows = hostile_rows(len(scorer._tokenizer), scorer._pad_id, 3)
        direct = [direct_logit(scorer, ids) for ids in rows]
        packed = scorer.forward_packed(rows)
        reversed_ = scorer.forward_packed(rows[::-1])[::-1]
        isolated = scorer._forward_isolated(rows)
    finally:
        await scorer.close()
    tol = tolerance(dtype, direct)
    assert packed == pytest.approx(direct, abs=tol)
    assert reversed_ == pytest.approx(direct, abs=tol)
    assert isolated == pytest.approx(direct, abs=tol)


@pytest.mark.parametrize(
    ("budget", "why"),
    [
        ({"max_batch_size": 1}, "a row a forward"),
        ({"max_batch_tokens": 8}, "most rows longer than the token budget"),
        ({"max_batch_tokens": 60, "max_batch_size": 3}, "bins and rows both bounded"),
    ],
)
async def test_packed_scores_survive_tight_batch_budgets(
    zoo: Callable[[str], str], budget: dict[str, int], why: str
) -> None:
    path = zoo("llama")
    scorer = await started(on_device(path, "cpu", "float32", use_remove_padding=True, **budget))
    words = "what is two plus two the answer four five three how many apples".split()
    rng = random.Random(4)
    rows = [
        Sample("rm", prompt=" ".join(rng.choices(words, k=rng.randint(0, 30))), response="four")
        for _ in range(20)
    ]
    try:
        scored = [r.score for r in await asyncio.gather(*(scorer.score(r) for r in rows))]
        direct = [direct_logit(scorer, scorer.encode(r).ids) for r in rows]
        stats = dict(scorer.stats)
    finally:
        await scorer.close()
    assert scored == pytest.approx(direct, abs=tolerance("float32", direct)), why
    assert stats["rows"] == 20


async def test_a_row_past_learned_positions_fails_alone_when_packed(
    zoo: Callable[[str], str],
) -> None:
    """GPT-2 with 16 learned positions: a 20-token row has no position embedding. Packed, it
    fails on its own (split out of its batch) and its neighbours keep their scores."""
    scorer = await started(
        on_device(zoo("gpt2-16positions"), "cpu", "float32", use_remove_padding=True)
    )
    rng = random.Random(1)
    rows = [[2] + [rng.randrange(6, 80) for _ in range(n)] for n in (19, 6, 3, 9, 1)]
    try:
        assert scorer._packed
        results = scorer._forward_isolated(rows)
        direct = [direct_logit(scorer, ids) for ids in rows[1:]]
    finally:
        await scorer.close()
    assert isinstance(results[0], ScorerError) and "IndexError" in str(results[0])
    assert results[1:] == pytest.approx(direct, abs=tolerance("float32", direct))


async def test_a_model_that_cannot_run_the_packing_probes_is_refused_not_crashed(
    zoo: Callable[[str], str],
) -> None:
    """GPT-2 with 8 learned positions cannot forward the check's 11-token probe: packing is
    refused with a ConfigError naming the key (it was a bare IndexError out of start), and
    padded scoring of short rows still works."""
    with pytest.raises(ConfigError, match=r"use_remove_padding=True.*probes.*IndexError"):
        await started(on_device(zoo("gpt2-8positions"), "cpu", "float32", use_remove_padding=True))
    scorer = await started(on_device(zoo("gpt2-8positions"), "cpu", "float32"))
    try:
        assert not scorer._packed
        assert isinstance(
            (await scorer.score(Sample("rm", prompt="two", response="four"))).score, float
        )
    finally:
        await scorer.close()


async def test_a_decoder_made_bidirectional_keeps_its_mask_and_is_not_packed(
    zoo: Callable[[str], str],
) -> None:
    """A Llama with is_causal: false in its config attends both ways. Read as a causal
    decoder, its padded forwards dropped the mask and its rows attended to their padding
    (scores 0.03 to 0.07 off on rows of 0.1); packing it must be refused too."""
    path = zoo("llama-bidirectional")
    with pytest.raises(ConfigError, match="not a causal decoder"):
        await started(on_device(path, "cpu", "float32", use_remove_padding=True))
    scorer = await started(on_device(path, "cpu", "float32", max_padding_tokens=1e9))
    rows = hostile_rows(len(scorer._tokenizer), scorer._pad_id, 3)
    rows = [r for r in rows if scorer._pad_id not in r]  # two-way: a pad id in a row is masked
    try:
        padded = scorer.forward(rows)
        direct = [direct_logit(scorer, ids) for ids in rows]
    finally:
        await scorer.close()
    assert padded == pytest.approx(direct, abs=tolerance("float32", direct))


async def test_a_model_whose_probe_scores_are_not_finite_is_not_packed(tmp_path: Path) -> None:
    """NaN differs from nothing within any tolerance: the check must not read it as a pass."""
    tok = build_tokenizer("llama")
    torch.manual_seed(0)
    base = {**_SIZE, **_HEADS, "vocab_size": len(tok), "num_labels": 1}
    model = transformers.AutoModelForSequenceClassification.from_config(
        transformers.LlamaConfig(**base, pad_token_id=tok.pad_token_id)
    )
    with torch.no_grad():
        model.score.weight.fill_(float("nan"))
    path = save_model(tmp_path / "nan", model, tok)
    with pytest.raises(ConfigError, match="not all finite"):
        await started(on_device(path, "cpu", "float32", use_remove_padding=True))


# ---------------------------------------------------------------------- length-dependent RoPE


def _rope_model(kind: str, vocab: int, pad: int) -> Any:
    """RoPE whose frequencies transformers picks from the longest position in the forward:
    longrope (Phi-3's long-context variants) switches to its long factors past
    original_max_position_embeddings, dynamic NTK rescales past it (and caches the scale)."""
    base = {**_SIZE, **_HEADS, "vocab_size": vocab, "num_labels": 1, "pad_token_id": pad}
    if kind == "longrope":
        rope = {"rope_type": "longrope", "rope_theta": 10000.0, "original_max_position_embeddings": 16,
                "short_factor": [1.0] * 4, "long_factor": [8.0] * 4}  # fmt: skip
        config = transformers.Phi3Config(
            **base, max_position_embeddings=128, original_max_position_embeddings=16,
            rope_parameters=rope,
        )  # fmt: skip
    else:
        rope = {"rope_type": "dynamic", "factor": 8.0, "rope_theta": 10000.0}
        config = transformers.LlamaConfig(**base, max_position_embeddings=16, rope_parameters=rope)
    torch.manual_seed(0)
    return transformers.AutoModelForSequenceClassification.from_config(config)


@pytest.mark.parametrize("packing", [True, False])
@pytest.mark.parametrize("kind", ["longrope", "dynamic"])
async def test_a_rows_score_does_not_follow_the_longest_row_of_its_forward(
    tmp_path: Path, kind: str, packing: bool
) -> None:
    """Short rows beside rows past the RoPE's original length (16 tokens here), and long rows
    of two lengths after a longer one: each row scores as it does alone on a fresh model.
    Batched together, the short rows took the long rows' frequencies (longrope 14% off) and
    dynamic NTK kept the scale of the longest forward it had seen."""
    tok = build_tokenizer("llama")
    path = save_model(tmp_path / kind, _rope_model(kind, len(tok), tok.pad_token_id), tok)
    cfg = on_device(path, "cpu", "float32", use_remove_padding=packing, max_padding_tokens=1e9)
    scorer = await started(cfg)
    rng = random.Random(2)
    words = "what is two plus two the answer four five three how many apples".split()
    rows = [
        Sample("rm", prompt=" ".join(rng.choices(words, k=n)), response="four")
        for n in (120, 9, 60, 3, 14, 90)
    ]
    try:
        assert scorer._packed == packing
        ids = [scorer.encode(r).ids for r in rows]
        # Fresh-model references: rising lengths, so a dynamic scale only ever grows to each.
        direct = {
            i: direct_logit(scorer, ids[i]) for i in sorted(range(6), key=lambda i: len(ids[i]))
        }
        first = await scorer.score(rows[0])  # the longest forward first: dynamic caches it
        rest = await asyncio.gather(*(scorer.score(r) for r in rows[1:]))
    finally:
        await scorer.close()
    scored = [first.score] + [r.score for r in rest]
    expected = [direct[i] for i in range(6)]
    assert scored == pytest.approx(expected, abs=tolerance("float32", expected))
