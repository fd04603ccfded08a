"""guards: rewardkit.models.discriminative: the in-process reward model, on tiny random Llama
and BERT classifiers.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import torch
import transformers

from _support.rm_checks import PRECISIONS, direct_logit, failing_on, on_device, tolerance
from rewardkit.config import RewardModelConfig
from rewardkit.errors import ConfigError, InvalidSampleError, ScorerError
from rewardkit.models.batching import DEFAULT_COST, CostModel
from rewardkit.models.discriminative import LocalRewardModel
from rewardkit.types import Sample

SHORT = Sample("rm", prompt="what is two plus two", response="the answer is four")
LONG = Sample(
    "rm",
    prompt="please explain step by step how many apples are there " * 6,
    response="i think there are three apples and the final answer is three " * 8,
)
MIDDLE = Sample(
    "rm", prompt=[{"role": "user", "content": "how many apples"}], response="five apples " * 5
)


def config(path: str, **overrides: Any) -> RewardModelConfig:
    return RewardModelConfig(enable=True, model_path=path, device="cpu", **overrides)


async def started(cfg: RewardModelConfig) -> LocalRewardModel:
    scorer = LocalRewardModel(cfg)
    await scorer.start()
    return scorer


def reference_logit(path: str, ids: list[int]) -> float:
    """What transformers itself says for one unpadded row."""
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        path, local_files_only=True
    )
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits[0, -1].item()


@pytest.mark.parametrize("fixture", ["llama_rm", "bert_rm"])
async def test_score_is_the_raw_logit_alone_or_in_a_mixed_batch(
    request: pytest.FixtureRequest, fixture: str
) -> None:
    path = request.getfixturevalue(fixture)
    scorer = await started(config(path))
    try:
        alone = await scorer.score(SHORT)
        together = await asyncio.gather(*(scorer.score(s) for s in (LONG, SHORT, MIDDLE, LONG)))
        # Packing keeps SHORT apart from LONG (too much padding); force them together.
        direct = scorer.forward([scorer.encode(LONG).ids, scorer.encode(SHORT).ids])
        ids = scorer.encode(SHORT).ids
    finally:
        await scorer.close()
    assert together[1].score == pytest.approx(alone.score, abs=1e-5)
    assert direct[1] == pytest.approx(alone.score, abs=1e-5)
    assert alone.score == pytest.approx(reference_logit(path, ids), abs=1e-5)
    assert together[0].score == pytest.approx(together[3].score, abs=1e-6)
    assert alone.extra == {"rm_raw": alone.score, "truncated": False}


async def test_tokenizer_padding_side_does_not_matter(llama_rm: str) -> None:
    scorer = await started(config(llama_rm))
    try:
        right = [r.score for r in await asyncio.gather(scorer.score(SHORT), scorer.score(LONG))]
        scorer._tokenizer.padding_side = "left"
        left = [r.score for r in await asyncio.gather(scorer.score(SHORT), scorer.score(LONG))]
    finally:
        await scorer.close()
    assert left == pytest.approx(right, abs=1e-6)


async def test_chat_template_renders_the_response_as_assistant_turn_with_one_bos(
    llama_chat_rm: str,
) -> None:
    scorer = await started(config(llama_chat_rm))
    try:
        tok = scorer._tokenizer
        encoded = scorer.encode(MIDDLE)
        expected = tok.apply_chat_template(
            [*MIDDLE.prompt, {"role": "assistant", "content": MIDDLE.response}], tokenize=False
        )
        result = await scorer.score(MIDDLE)
    finally:
        await scorer.close()
    assert encoded.ids == tok(expected, add_special_tokens=False)["input_ids"]
    assert encoded.ids[0] == tok.bos_token_id and encoded.ids[1] != tok.bos_token_id
    assert tok.convert_ids_to_tokens(encoded.ids[encoded.prompt_tokens - 1]) == "<|assistant|>"
    assert tok.decode(encoded.ids[encoded.prompt_tokens :], skip_special_tokens=True).startswith(
        "five apples"
    )
    assert result.score == pytest.approx(reference_logit(llama_chat_rm, encoded.ids), abs=1e-5)


async def test_long_rows_keep_the_prompt_end_and_the_response_start(llama_chat_rm: str) -> None:
    prompt = "a " * 50 + "how many apples are there"
    response = "three apples " + "and " * 80
    row = Sample("rm", prompt=prompt, response=response)
    scorer = await started(config(llama_chat_rm, prompt_length=8, response_length=6))
    try:
        encoded = scorer.encode(row)
        result = await scorer.score(row)
        short = await scorer.score(Sample("rm", prompt="two", response="four"))
    finally:
        await scorer.close()
    tok = scorer._tokenizer
    tokens = tok.convert_ids_to_tokens(encoded.ids)
    assert len(encoded.ids) == 8 + 6 and encoded.truncated
    # The BOS survives cutting the prompt's start; the question's end is kept.
    assert tokens[:8] == ["<s>", "how", "many", "apples", "are", "there", "</s>", "<|assistant|>"]
    assert tokens[8:] == ["three", "apples", "and", "and", "and", "and"]
    assert result.extra["truncated"] is True
    assert short.extra["truncated"] is False


async def test_policy_token_ids_are_decoded_and_rerendered(
    llama_chat_rm: str, bert_rm: str
) -> None:
    """Rows carrying the policy's ids (its tokenizer differs from the RM's) score like the text."""
    policy = transformers.AutoTokenizer.from_pretrained(bert_rm, local_files_only=True)
    prompt_ids = policy("how many apples", add_special_tokens=False)["input_ids"]
    response_ids = policy("five apples", add_special_tokens=True)[
        "input_ids"
    ]  # [CLS] .. [SEP] dropped on decode
    pad = policy.pad_token_id
    verl_ids = [pad, pad, *prompt_ids, *response_ids, pad]
    verl_mask = [0, 0] + [1] * (len(prompt_ids) + len(response_ids)) + [0]
    rows = [
        Sample("rm", prompt="how many apples", response="five apples"),
        Sample(
            "rm", prompt="how many apples", response="", extra_info={"response_ids": response_ids}
        ),
        Sample(
            "rm", response="", extra_info={"response_ids": response_ids, "prompt_ids": prompt_ids}
        ),
        Sample(
            "rm",
            response="",
            extra_info={
                "input_ids": verl_ids,
                "attention_mask": verl_mask,
                "prompt_length": 2 + len(prompt_ids),
            },
        ),
    ]
    scorer = await started(config(llama_chat_rm, input_tokenizer=bert_rm))
    try:
        scores = [r.score for r in await asyncio.gather(*(scorer.score(r) for r in rows))]
        api = await scorer.score_token_ids(response_ids, prompt_ids)
    finally:
        await scorer.close()
    assert scores[1:] == pytest.approx([scores[0]] * 3, abs=1e-5)
    assert api.score == pytest.approx(scores[0], abs=1e-5)


@pytest.mark.parametrize(
    ("extra_info", "message"),
    [
        ({"response_ids": "12 13"}, "list of non-negative token ids"),
        ({"response_ids": [1, -5]}, "list of non-negative token ids"),
        ({"input_ids": [1, 2, 3]}, "needs extra_info.prompt_length"),
        (
            {"input_ids": [1, 2], "attention_mask": [1], "prompt_length": 1},
            "attention_mask has 1 entries",
        ),
    ],
)
async def test_malformed_token_ids_make_only_that_row_invalid(
    llama_rm: str, extra_info: dict, message: str
) -> None:
    scorer = await started(config(llama_rm))
    try:
        bad, good = await asyncio.gather(
            scorer.score(Sample("rm", response="", extra_info=extra_info)),
            scorer.score(SHORT),
            return_exceptions=True,
        )
    finally:
        await scorer.close()
    assert isinstance(bad, InvalidSampleError) and message in str(bad)
    assert isinstance(good.score, float)


async def test_normalisation_and_clip(llama_rm: str) -> None:
    raw = await started(config(llama_rm))
    shifted = await started(config(llama_rm, normalize_mean=1.0, normalize_std=0.5))
    clipped = await started(config(llama_rm, normalize_mean=-1000.0, clip=2.0))
    try:
        logit = (await raw.score(SHORT)).score
        assert (await shifted.score(SHORT)).score == pytest.approx((logit - 1.0) / 0.5, abs=1e-5)
        result = await clipped.score(SHORT)
        assert result.score == 2.0 and result.extra["rm_raw"] == pytest.approx(logit, abs=1e-5)
    finally:
        for scorer in (raw, shifted, clipped):
            await scorer.close()


async def test_token_budget_packs_similar_lengths_together(llama_rm: str) -> None:
    """Forwards are called with batches whose padded size stays within the budget."""
    scorer = await started(config(llama_rm, max_batch_tokens=120))
    shapes: list[tuple[int, int]] = []
    forward = scorer.forward

    def recording(seqs: list[list[int]]) -> list[float]:
        shapes.append((len(seqs), max(len(s) for s in seqs)))
        return forward(seqs)

    scorer.forward = recording  # type: ignore[method-assign]
    rows = [SHORT] * 6 + [LONG] * 2
    try:
        results = await asyncio.gather(*(scorer.score(r) for r in rows))
    finally:
        await scorer.close()
    long_len = len(scorer.encode(LONG).ids)
    assert len(results) == 8
    assert all(rows * width <= 120 or rows == 1 for rows, width in shapes)
    assert (1, long_len) in shapes  # a row longer than the budget is batched alone
    assert sum(n for n, _ in shapes) == 8
    assert results[0].score == pytest.approx(results[5].score, abs=1e-5)
    assert results[6].score == pytest.approx(results[7].score, abs=1e-5)
    stats = scorer.stats  # what /metrics exports: batch sizes and tokens per second
    assert stats["rows"] == 8 and stats["batches"] == len(shapes)
    assert stats["tokens"] <= stats["padded_tokens"] == sum(n * w for n, w in shapes)
    assert stats["forward_seconds"] > 0 and stats["encode_seconds"] > 0
    # the model thread's time in rounds: forwards, tokenizing and the rest (a server's
    # wall time minus it is the thread's idle time: bench_server.py reports the split)
    assert stats["busy_seconds"] >= stats["forward_seconds"] + stats["encode_seconds"]


async def test_auto_padding_is_fitted_to_the_models_own_forwards(llama_rm: str) -> None:
    """``max_padding_tokens: auto`` replaces the prior with a cost fitted to timed forwards;
    a number stays what it says."""
    auto = await started(config(llama_rm))
    fixed = await started(config(llama_rm, max_padding_tokens=7))
    # 20 forwards of 1 row, 40 to 1,600 tokens: long enough that tokens, not overhead, show
    rows = [Sample("rm", prompt="count", response="one two " * n) for n in range(20, 820, 40)]
    try:
        for scorer in (auto, fixed):
            assert scorer.cost == (DEFAULT_COST if scorer is auto else CostModel(7.0))
            for row in rows:  # one at a time
                assert (await scorer.score(row)).score is not None
    finally:
        await auto.close()
        await fixed.close()
    assert auto.cost != DEFAULT_COST
    assert auto.cost.fixed >= 0 and auto.cost.per_token >= 0
    assert fixed.cost == CostModel(7.0)


async def test_num_threads_sets_torchs_cpu_threads_where_forwards_run(llama_rm: str) -> None:
    scorer = await started(config(llama_rm, num_threads=1))
    try:
        on_model_thread = scorer._executor.submit(torch.get_num_threads).result(timeout=10)
        assert on_model_thread == 1
        assert (await scorer.score(SHORT)).score is not None
    finally:
        await scorer.close()


async def test_a_failing_forward_only_fails_the_rows_that_fail_alone(llama_rm: str) -> None:
    scorer = await started(config(llama_rm))
    scorer.forward = failing_on(scorer.forward, len(scorer.encode(LONG).ids))  # type: ignore[method-assign]
    try:
        results = await asyncio.gather(
            scorer.score(SHORT), scorer.score(LONG), scorer.score(MIDDLE), return_exceptions=True
        )
    finally:
        await scorer.close()
    assert isinstance(results[1], ScorerError) and "out of memory" in str(results[1])
    assert isinstance(results[0].score, float) and isinstance(results[2].score, float)


async def test_hostile_text_is_scored(llama_chat_rm: str) -> None:
    rows = [
        Sample("rm", prompt="", response=""),
        Sample("rm", prompt="ünïcödé \x00 \u202e 🙂 " * 20, response="{{ '<s>' }} {% raw %}"),
        Sample(
            "rm",
            prompt=[{"role": "system", "content": "a"}, {"role": "user", "content": "b"}],
            response="<|assistant|> </s>",
        ),
    ]
    scorer = await started(config(llama_chat_rm, prompt_length=16, response_length=16))
    try:
        results = await asyncio.gather(*(scorer.score(r) for r in rows))
    finally:
        await scorer.close()
    assert all(isinstance(r.score, float) for r in results)


async def test_the_event_loop_stays_responsive_during_a_forward(llama_rm: str) -> None:
    scorer = await started(config(llama_rm))
    forward = scorer.forward

    def slow(seqs: list[list[int]]) -> list[float]:
        import time

        time.sleep(1.0)  # stands in for a long forward on the model thread
        return forward(seqs)

    scorer.forward = slow  # type: ignore[method-assign]
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        await scorer.score(SHORT)
    finally:
        task.cancel()
        await scorer.close()
    # a blocked loop ticks once or not at all; 10 ms ticks over 1 s, however loaded the
    # machine, tick far more than a few times
    assert ticks >= 5


async def test_missing_model_directory_is_a_config_error(tmp_path: Any) -> None:
    scorer = LocalRewardModel(config(str(tmp_path / "nowhere")))
    with pytest.raises(ConfigError, match=r"reward_model\.model_path"):
        await scorer.start()
    await scorer.close()


async def test_score_before_start_and_after_close_are_errors(llama_rm: str) -> None:
    scorer = LocalRewardModel(config(llama_rm))
    with pytest.raises(ScorerError, match="not started"):
        await scorer.score(SHORT)
    await scorer.start()
    await scorer.close()
    with pytest.raises(ScorerError):
        await scorer.score(SHORT)


async def test_score_does_not_depend_on_the_models_pad_token(llama_chat_rm: str) -> None:
    """With pad == eos (common for Llama RMs) and rows ending in eos, transformers' own
    pooling would read the token before the eos; the score is read at the last real token."""
    scorer = await started(config(llama_chat_rm))
    try:
        before = [r.score for r in await asyncio.gather(scorer.score(SHORT), scorer.score(LONG))]
        scorer._model.config.pad_token_id = scorer._tokenizer.eos_token_id
        after = [r.score for r in await asyncio.gather(scorer.score(SHORT), scorer.score(LONG))]
        ids = scorer.encode(SHORT).ids
    finally:
        await scorer.close()
    assert scorer._tokenizer.convert_ids_to_tokens(ids[-1]) == "</s>"
    assert after == pytest.approx(before, abs=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("fixture", ["llama_rm", "bert_rm"])
async def test_the_cuda_path_scores_as_the_cpu_path_does(
    request: pytest.FixtureRequest, fixture: str
) -> None:
    """No device set: the model goes to CUDA (bf16 by default). fp32 on CUDA matches the
    CPU's logits; bf16 stays within its precision. Deselected unless ``-m gpu``."""
    assert torch.cuda.is_available(), "a gpu test: run it (-m gpu) where CUDA is present"
    path = request.getfixturevalue(fixture)
    rows = (SHORT, LONG, MIDDLE)
    scores = {}
    for name, cfg in {
        "cpu": config(path),
        "cuda fp32": RewardModelConfig(enable=True, model_path=path, dtype="float32"),
        "cuda bf16": RewardModelConfig(enable=True, model_path=path),
    }.items():
        scorer = await started(cfg)
        try:
            scores[name] = [s.score for s in await asyncio.gather(*map(scorer.score, rows))]
        finally:
            await scorer.close()
    assert scores["cuda fp32"] == pytest.approx(scores["cpu"], abs=1e-3)
    assert scores["cuda bf16"] == pytest.approx(scores["cpu"], abs=0.05)


@pytest.mark.parametrize(("device", "dtype"), PRECISIONS)
@pytest.mark.parametrize("fixture", ["llama_rm", "bert_rm"])
async def test_batched_scores_match_a_direct_forward_whatever_the_batch(
    request: pytest.FixtureRequest, fixture: str, device: str, dtype: str
) -> None:
    """Scores through score() (batched as packing decides) and through forced batches
    (alone, padded behind a longer row, beside copies of itself) all equal transformers'
    forward of the unpadded row, within the dtype's precision."""
    path = request.getfixturevalue(fixture)
    rows = (SHORT, LONG, MIDDLE, LONG, SHORT)
    scorer = await started(on_device(path, device, dtype))
    try:
        batched = [r.score for r in await asyncio.gather(*(scorer.score(r) for r in rows))]
        ids = [scorer.encode(r).ids for r in rows]
        direct = [direct_logit(scorer, x) for x in ids]
        alone = [scorer.forward([x])[0] for x in ids]
        padded = scorer.forward([ids[1], ids[0], ids[2]])  # SHORT and MIDDLE padded to LONG
        copies = scorer.forward([ids[0]] * 4)
    finally:
        await scorer.close()
    tol = tolerance(dtype, direct)
    assert batched == pytest.approx(direct, abs=tol)
    assert alone == pytest.approx(direct, abs=tol)
    assert padded == pytest.approx([direct[1], direct[0], direct[2]], abs=tol)
    assert copies == pytest.approx([alone[0]] * 4, abs=tol)
    assert batched[4] == pytest.approx(batched[0], abs=tol)  # copies in one round
    assert batched[3] == pytest.approx(batched[1], abs=tol)


@pytest.mark.parametrize(("device", "dtype"), PRECISIONS)
async def test_truncated_rows_score_their_kept_tokens(
    llama_chat_rm: str, device: str, dtype: str
) -> None:
    """A row cut to prompt_length + response_length scores as a direct forward of the kept
    tokens, alone or batched with a short row."""
    row = Sample("rm", prompt="a " * 50 + "how many apples", response="three apples " * 20)
    short = Sample("rm", prompt="two", response="four")
    cfg = on_device(llama_chat_rm, device, dtype, prompt_length=8, response_length=6)
    scorer = await started(cfg)
    try:
        encoded = scorer.encode(row)
        long_result, short_result = await asyncio.gather(scorer.score(row), scorer.score(short))
        direct = [direct_logit(scorer, encoded.ids), direct_logit(scorer, scorer.encode(short).ids)]
    finally:
        await scorer.close()
    assert encoded.truncated and len(encoded.ids) == 8 + 6
    assert long_result.extra["truncated"] is True and short_result.extra["truncated"] is False
    tol = tolerance(dtype, direct)
    assert [long_result.score, short_result.score] == pytest.approx(direct, abs=tol)


@pytest.mark.parametrize(("device", "dtype"), PRECISIONS)
async def test_pad_id_equal_to_eos_id_reads_the_last_real_token(
    llama_eos_pad_rm: str, device: str, dtype: str
) -> None:
    """pad = eos and every row ends in eos: a short row padded (with eos ids) behind a long
    one still scores as its unpadded direct forward, i.e. at its own final eos."""
    scorer = await started(on_device(llama_eos_pad_rm, device, dtype))
    try:
        eos = scorer._tokenizer.eos_token_id
        ids = [scorer.encode(r).ids for r in (LONG, SHORT, MIDDLE)]
        padded = scorer.forward(ids)
        scored = [r.score for r in await asyncio.gather(*map(scorer.score, (LONG, SHORT, MIDDLE)))]
        direct = [direct_logit(scorer, x) for x in ids]
    finally:
        await scorer.close()
    assert scorer._pad_id == eos and all(x[-1] == eos for x in ids)
    tol = tolerance(dtype, direct)
    assert padded == pytest.approx(direct, abs=tol)
    assert scored == pytest.approx(direct, abs=tol)


async def test_only_a_causal_decoder_skips_the_padding_mask(llama_rm: str, bert_rm: str) -> None:
    """A decoder's right padding sits after every real token, where causal attention never
    looks: its forwards run without a mask (attention's fast path). BERT attends both ways
    and keeps the mask; so does a decoder whose attention is made bidirectional."""
    from rewardkit.models.discriminative import _is_causal

    decoder, encoder = await started(config(llama_rm)), await started(config(bert_rm))
    try:
        assert decoder._mask_free and not encoder._mask_free
        model = decoder._model
        assert _is_causal(model)
        for module in model.modules():
            if hasattr(module, "is_causal"):
                module.is_causal = False
        assert not _is_causal(model)
    finally:
        await decoder.close()
        await encoder.close()


@pytest.mark.parametrize("kind", ["gpt2", "bert"])
async def test_a_row_past_a_learned_position_table_is_invalid(tmp_path: Any, kind: str) -> None:
    """GPT-2 and BERT read positions from a table: a row longer than it cannot be scored
    (on CUDA its forward would poison the process's CUDA context). It is invalid before
    any forward, with the keys that fit it; a row that fits is scored beside it."""
    from _support.model_fakes import bert_config, build_tokenizer, save_model

    tok = build_tokenizer("bert" if kind == "bert" else "llama")
    common = {"num_labels": 1, "pad_token_id": tok.pad_token_id}
    if kind == "gpt2":
        shape = transformers.GPT2Config(
            vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=16, **common
        )
    else:
        shape = bert_config(len(tok), max_position_embeddings=16, **common)
    torch.manual_seed(0)
    model = transformers.AutoModelForSequenceClassification.from_config(shape)
    scorer = await started(config(save_model(tmp_path / kind, model, tok)))
    try:
        results = await asyncio.gather(
            scorer.score(SHORT), scorer.score(LONG), return_exceptions=True
        )
    finally:
        await scorer.close()
    assert isinstance(results[1], InvalidSampleError)
    assert "16 positions" in str(results[1]) and "prompt_length/response_length" in str(results[1])
    assert isinstance(results[0].score, float)
