"""A discriminative reward model run in-process: any one-label sequence classifier.

Rows are rendered with the RM's chat template, truncated, gathered into token-budget
batches and scored on a dedicated thread, so the event loop stays free while torch
computes (it releases the GIL). A batch is either padded (rows of similar length
together, each padded to the longest) or, for a causal decoder with
``use_remove_padding``, packed (rows laid end to end, each with its own positions:
:mod:`rewardkit.models.packing`). The score is the raw logit at each row's last real
token, the same whether the row is scored alone, padded or packed with others.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rewardkit.config import RewardModelConfig
from rewardkit.errors import ConfigError, InvalidSampleError, RewardkitError, ScorerError
from rewardkit.models.base import ModelScore
from rewardkit.models.batching import (
    DEFAULT_COST,
    Batcher,
    CostModel,
    Emit,
    ForwardCost,
    ModelThread,
    pack_by_tokens,
    run_on_thread,
)
from rewardkit.models.loading import (
    load_pretrained,
    load_tokenizer,
    resolve_device,
    texts_from_token_ids,
)
from rewardkit.models.packing import PackedBatch, pack_rows
from rewardkit.models.templates import Encoded, encode_row
from rewardkit.types import Sample

__all__ = ["LocalRewardModel", "postprocess"]


def postprocess(logit: float, cfg: RewardModelConfig) -> float:
    """Normalise and clip a raw logit as configured; a non-finite one is an error."""
    if not math.isfinite(logit):
        raise ScorerError(f"reward model produced a non-finite score ({logit})")
    score = (logit - cfg.normalize_mean) / cfg.normalize_std
    if cfg.clip is not None:
        score = max(-cfg.clip, min(cfg.clip, score))
    return score


class LocalRewardModel(ModelThread):
    """``backend: hf``, ``kind: discriminative``: an AutoModelForSequenceClassification."""

    component = "rm"

    def __init__(self, cfg: RewardModelConfig, *, max_batch_wait_ms: float = 5.0) -> None:
        self.cfg = cfg  # model_path: required by the config (RewardConfig) for backend hf
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardkit-rm")
        self._batcher: Batcher[Sample, ModelScore] = Batcher(
            self._process, max_wait_s=max_batch_wait_ms / 1000, name="reward model"
        )
        self._model: Any = None
        self._tokenizer: Any = None
        self._policy_tokenizer: Any = None
        self._device: Any = None
        self._pad_id = 0
        self._head: Any = None
        self._mask_free = False  # see _load
        self._packed = False  # see _packing
        self._max_positions: int | None = None  # see _learned_positions
        self._rope: _LengthRope | None = None  # see _LengthRope
        self._forward_kwargs: dict[str, Any] = {}
        # Read by the server's /metrics: mean batch = rows / batches, tokens/s = tokens /
        # forward_seconds; busy_seconds is the model thread's time in rounds (forwards,
        # encode_seconds of tokenizing, and the rest), so wall time minus it is idle.
        self.stats: dict[str, float] = dict.fromkeys(
            (
                "rounds",
                "batches",
                "rows",
                "tokens",
                "padded_tokens",
                "forward_seconds",
                "encode_seconds",
                "busy_seconds",
            ),
            0,
        )
        fixed = cfg.max_padding_tokens
        self._cost = ForwardCost(DEFAULT_COST if fixed == "auto" else CostModel(fixed))

    @property
    def weight(self) -> float:
        return self.cfg.weight

    async def score(self, sample: Sample) -> ModelScore:
        """Score one row (batched with whatever else is being scored right now)."""
        if self._model is None:
            raise ScorerError("reward model is not started")
        return await self._batcher.submit(sample)

    async def score_token_ids(
        self,
        response_ids: Sequence[int],
        prompt_ids: Sequence[int] = (),
        *,
        prompt: str | Sequence[Mapping[str, Any]] = "",
    ) -> ModelScore:
        """Score the policy's token ids: decoded with ``input_tokenizer``, re-rendered for the RM."""
        extra = {"response_ids": list(response_ids), "prompt_ids": list(prompt_ids)}
        sample = Sample(
            data_source="token_ids",
            response="",
            prompt=list(prompt) if not isinstance(prompt, str) else prompt,
            extra_info=extra,
        )
        return await self.score(sample)

    # ------------------------------------------------------------------ model thread

    def _load(self) -> None:
        from transformers import AutoModelForSequenceClassification

        cfg = self.cfg
        assert cfg.model_path is not None
        self._device, dtype = resolve_device(cfg)
        if cfg.num_threads:
            import torch

            torch.set_num_threads(cfg.num_threads)  # on the model thread, where the forwards run
        self._tokenizer = load_tokenizer(cfg.model_path, "reward_model.model_path")
        self._policy_tokenizer = (
            load_tokenizer(cfg.input_tokenizer, "reward_model.input_tokenizer")
            if cfg.input_tokenizer
            else self._tokenizer
        )
        model = load_pretrained(
            AutoModelForSequenceClassification, cfg.model_path, "reward_model.model_path", dtype
        )
        model.to(self._device).eval()
        tok = self._tokenizer
        self._pad_id = next(t for t in (tok.pad_token_id, tok.eos_token_id, 0) if t is not None)
        if getattr(model.config, "pad_token_id", None) is None:
            # transformers refuses batches without one; the score is gathered below anyway.
            model.config.pad_token_id = self._pad_id
        self._head = _token_head(model)
        # A causal decoder's real tokens never attend to the right padding after them, so
        # its forwards need no mask; without one, attention is plain causal, which lets
        # SDPA take its flash path. Encoders (BERT) attend both ways and keep the mask.
        self._mask_free = self._head is not None and _is_causal(model)
        if "use_cache" in inspect.signature(model.forward).parameters:
            self._forward_kwargs["use_cache"] = False
        self._model = model
        self._rope = _LengthRope.of(model)
        self._max_positions = _learned_positions(model)
        self._packed = self._packing()

    def _packing(self) -> bool:
        """Whether batches are packed: as ``use_remove_padding`` asks, where the model can be.

        Packing relies on transformers reading a sequence's position ids as the bounds of
        the rows in it (several rows when the ids restart at 0), which holds for the
        decoders whose attention masks transformers builds itself. Rather than trust a list
        of architectures, the model is asked: a few rows scored packed must score as they
        do padded. auto packs on CUDA only: on a CPU, padded batches already hold rows of
        one length (a forward's fixed cost is small there), and packed ones would trade
        that for attention over a whole bin (measured slower: docs/models.md)."""
        wanted = self.cfg.use_remove_padding
        if wanted is False or (wanted == "auto" and self._device.type != "cuda"):
            return False
        why = self._why_not_packable()
        if why is None:
            return True
        if wanted is True:
            raise ConfigError(
                f"reward_model.use_remove_padding=True: {why}; set it to auto or false"
            )
        return False

    def _why_not_packable(self) -> str | None:
        """Why the model cannot be packed (None when it can), asked of the model itself.

        Two questions, on short probe rows. Does a row's score depend on the content of the
        row packed before it? With attention kept to each row, the row's own computation
        is the same operations on the same numbers whatever that content is (the masked
        keys contribute exact zeros), so its score is the same to the last bit; any leak
        (attention across rows, a linear-attention or recurrent state carried along the
        sequence) changes it. Asked with a tolerance instead, a leak hides below it when
        logits are small or the dtype is bf16 (OPT, MiniMax, Qwen3-Next passed that way).
        And is a row packed behind another scored as it is alone, padded, within the
        dtype's precision? That catches positions not read from the position ids (OPT's
        come from the mask), where the offset of a row in its bin shifts them."""
        params = inspect.signature(self._model.forward).parameters
        if not self._mask_free:
            return "the model is not a causal decoder with a per-token score head"
        if "position_ids" not in params:
            return "the model's forward takes no position_ids"
        probes = [self._tokenizer(text)["input_ids"] for text in _PACKING_PROBES]
        row, before = probes[1], probes[2]  # before: longer than the row, so shifts show
        try:
            vocab = self._model.get_input_embeddings().num_embeddings
            other = [(t + 1) % vocab for t in before]  # same length, every token different
            padded = [self.forward([ids])[0] for ids in probes]
            packed = self.forward_packed(probes)
            # [filler] [before, row]: the row ends its bin, behind a neighbour of each content.
            behind = [self.forward_packed([before + row, x, row])[2] for x in (before, other)]
        except Exception as exc:  # a model that cannot run the probes is not asked to pack
            return f"its forward failed on the packing check's probes ({type(exc).__name__}: {exc})"
        if not all(math.isfinite(x) for x in [*padded, *packed, *behind]):
            # NaN compares false to any tolerance: not knowing is no pass.
            return f"its scores of the packing check's probes are not all finite ({padded})"
        scale = max(abs(x) for x in padded)
        if abs(behind[0] - behind[1]) > 4 * _FP32_EPS * scale:
            return (
                f"a row's packed score differs with the content of the row before it "
                f"({behind[0]:.6g} against {behind[1]:.6g}): its attention or state does not "
                "keep packed rows apart"
            )
        dtype = next(self._model.parameters()).dtype
        tol = (1e-3 if dtype.itemsize >= 4 else 0.05) * scale  # fp32, else bf16/fp16
        pairs = [*zip(padded, packed, strict=True), (padded[1], behind[0])]
        for alone, together in pairs:
            if abs(alone - together) > tol:
                return (
                    f"its rows scored packed differ from their scores padded ({together:.4g} "
                    f"against {alone:.4g}): its attention does not keep packed rows apart"
                )
        return None

    async def _process(self, rows: list[Sample], emit: Emit[ModelScore]) -> None:
        await run_on_thread(self._executor, self._work, rows, emit)

    def _work(
        self, rows: list[Sample], emit: Callable[[int, ModelScore | BaseException], None]
    ) -> None:
        start = time.perf_counter()
        try:
            self._round(rows, emit)
        finally:
            self.stats["busy_seconds"] += time.perf_counter() - start

    def _round(
        self, rows: list[Sample], emit: Callable[[int, ModelScore | BaseException], None]
    ) -> None:
        encoding = time.perf_counter()
        encoded: dict[int, Encoded] = {}
        for i, row in enumerate(rows):
            try:
                encoded[i] = self.encode(row)
            except RewardkitError as exc:  # InvalidSampleError stays itself: status 'invalid'
                emit(i, exc)
            except Exception as exc:
                emit(i, ScorerError(f"cannot encode the row: {type(exc).__name__}: {exc}"))
        self.stats["encode_seconds"] += time.perf_counter() - encoding
        order = list(encoded)
        lengths = [len(encoded[i].ids) for i in order]
        self.stats["rounds"] += 1
        for layout in self.layout(lengths):
            members = [order[j] for j in (layout.rows if self._packed else layout)]
            wall, cpu = time.perf_counter(), time.thread_time()
            logits = self._forward_isolated([encoded[i].ids for i in members])
            wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
            self._count(members, encoded, logits, wall, cpu, layout)
            for i, logit in zip(members, logits, strict=True):
                emit(i, self._result(logit, encoded[i]))

    def layout(self, lengths: Sequence[int]) -> list[Any]:
        """The forward passes for rows of these lengths: a :class:`PackedBatch` each when
        packing, else a list of row indices each (padded to the longest). Where the
        model's RoPE depends on the forward's length (:class:`_LengthRope`), rows on either
        side of its limit never share a forward."""
        if self._rope is None:
            return self._layout(lengths)
        batches: list[Any] = []
        for group in self._rope.groups(lengths):
            for batch in self._layout([lengths[i] for i in group]):
                batches.append(_renumber(batch, group))
        return batches

    def _layout(self, lengths: Sequence[int]) -> list[Any]:
        cfg = self.cfg
        if self._packed:
            return pack_rows(lengths, cfg.max_batch_tokens, cfg.max_batch_size)
        return pack_by_tokens(lengths, cfg.max_batch_tokens, cfg.max_batch_size, self._cost.model)

    @property
    def cost(self) -> CostModel:
        """How batches are packed now: from ``max_padding_tokens``, or measured when auto."""
        return self._cost.model

    def _count(
        self,
        members: list[int],
        encoded: dict[int, Encoded],
        logits: list[float | BaseException],
        seconds: float,
        cpu_seconds: float,
        layout: Any = None,
    ) -> None:
        lengths = [len(encoded[i].ids) for i in members]
        self.stats["batches"] += 1
        self.stats["rows"] += len(members)
        self.stats["tokens"] += sum(lengths)
        packed = isinstance(layout, PackedBatch)
        self.stats["padded_tokens"] += (
            layout.padded_tokens if packed else len(members) * max(lengths)
        )
        self.stats["forward_seconds"] += seconds
        # The first forward pays for warm-up (allocations, kernel choice) and a failed one
        # was split and retried: neither says what a forward costs. A packed forward is
        # not a padded one: the cost model decides padded batches only.
        clean = not any(isinstance(x, BaseException) for x in logits)
        auto = self.cfg.max_padding_tokens == "auto"
        if auto and clean and not packed and self.stats["batches"] > 1:
            # On a CPU, this thread's CPU time: wall time would also count the waits for the
            # GIL while a busy event loop holds it (in a server), noise that is not the
            # forward's cost. On a GPU the forward's cost is wall time (the thread waits on
            # the device).
            spent = cpu_seconds if self._device.type == "cpu" else seconds
            self._cost.observe(len(members), max(lengths), spent)

    def encode(self, row: Sample) -> Encoded:
        """The row as RM token ids (decoding the policy's token ids when the row has them)."""
        prompt: str | Sequence[Mapping[str, Any]] = row.prompt
        response = row.response_text
        decoded = texts_from_token_ids(row.extra_info, prompt, self._policy_tokenizer)
        if decoded is not None:
            prompt, response = decoded
        encoded = encode_row(
            self._tokenizer,
            prompt,
            response,
            prompt_length=self.cfg.prompt_length,
            response_length=self.cfg.response_length,
        )
        if not encoded.ids:
            # There is no last token to read a score at: padded, the read would land on
            # padding (a made-up score); packed, on the row before it (its neighbour's).
            raise InvalidSampleError(
                "the row renders to no tokens for the reward model (an empty prompt and "
                "response, and a tokenizer that adds no special tokens): nothing to score"
            )
        limit = self._max_positions
        if limit is not None and len(encoded.ids) > limit:
            # A learned position table has no row for a later position: on a CPU the
            # forward raises, on CUDA the out-of-range index is a device-side assert that
            # poisons the process's CUDA context, and every later forward fails with it.
            raise InvalidSampleError(
                f"the row has {len(encoded.ids)} tokens, more than the reward model's "
                f"{limit} positions: lower reward_model.prompt_length/response_length "
                f"(now {self.cfg.prompt_length}/{self.cfg.response_length}) to fit them"
            )
        return encoded

    def _result(self, logit: float | BaseException, enc: Encoded) -> ModelScore | BaseException:
        if isinstance(logit, BaseException):
            return logit
        try:
            score = postprocess(logit, self.cfg)
        except ScorerError as exc:
            return exc
        return ModelScore(score, {"rm_raw": logit, "truncated": enc.truncated})

    def _forward_isolated(self, seqs: list[list[int]]) -> list[float | BaseException]:
        """Forward a batch; if it fails (out of memory, a bad row), split it so only the
        rows that fail on their own get an error."""
        try:
            return list(self.forward_packed(seqs) if self._packed else self.forward(seqs))
        except Exception as exc:
            _release_cache()
            if len(seqs) == 1:
                return [ScorerError(f"reward model forward failed: {type(exc).__name__}: {exc}")]
            half = len(seqs) // 2
            return self._forward_isolated(seqs[:half]) + self._forward_isolated(seqs[half:])

    def forward(self, seqs: list[list[int]]) -> list[float]:
        """Raw logits (last label) of right-padded sequences, read at each last real token."""
        import torch

        longest = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), longest), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), longest), dtype=torch.long)
        for row, seq in enumerate(seqs):
            ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[row, : len(seq)] = 1
        inputs = {"input_ids": ids}
        if not self._mask_free:
            inputs["attention_mask"] = mask
        per_token, out = self._run(inputs)
        if per_token is not None and per_token.dim() == 3:  # [B, T, labels]: a decoder head
            last = mask.sum(dim=1).to(per_token.device) - 1  # [B]
            logits = per_token[torch.arange(len(seqs), device=per_token.device), last, -1]  # [B]
        else:  # the model pooled itself (an encoder's [CLS] head): [B, labels]
            logits = out.logits[:, -1]
        return logits.float().cpu().tolist()

    def forward_packed(self, seqs: list[list[int]]) -> list[float]:
        """Raw logits (last label) of sequences packed end to end (a causal decoder's).

        Each row's position ids run from 0, which is how transformers tells the rows of a
        sequence apart (its attention mask then keeps each row to itself); the padding at
        a bin's end is a row of its own, so no real row attends to it.
        """
        import torch

        lengths = [len(s) for s in seqs]
        (layout,) = pack_rows(lengths, max(lengths) * len(seqs), len(seqs))
        ids = torch.full((len(layout.bins), layout.width), self._pad_id, dtype=torch.long)
        positions = torch.zeros_like(ids)
        ends: list[tuple[int, int]] = [(0, 0)] * len(seqs)  # row -> (bin, its last token)
        for b, members in enumerate(layout.bins):
            start = 0
            for i in members:
                n = lengths[i]
                ids[b, start : start + n] = torch.tensor(seqs[i], dtype=torch.long)
                positions[b, start : start + n] = torch.arange(n)
                ends[i] = (b, start + n - 1)
                start += n
            positions[b, start:] = torch.arange(layout.width - start)
        per_token, _ = self._run({"input_ids": ids, "position_ids": positions})
        where = torch.tensor(ends, dtype=torch.long, device=per_token.device)  # [rows, 2]
        return per_token[where[:, 0], where[:, 1], -1].float().cpu().tolist()

    def _run(self, inputs: dict[str, Any]) -> tuple[Any, Any]:
        """The model's forward on ``inputs`` (moved to its device): the per-token logits of
        its score head (None for a pooled head) and the model's own output."""
        import torch

        captured: list[Any] = []
        hook = (
            self._head.register_forward_hook(lambda _m, _i, out: captured.append(out))
            if self._head
            else None
        )
        try:
            inputs = {k: v.to(self._device) for k, v in inputs.items()}
            if self._rope is not None:
                self._rope.reset()
            with torch.inference_mode(), _attention_kernels(self._device):
                out = self._model(**inputs, **self._forward_kwargs)
        finally:
            if hook is not None:
                hook.remove()
        return (captured[-1] if captured else None), out


_PACKING_PROBES = (
    "one two three four five six seven",
    "a b",
    "the answer is four because two and two make four",
)
"""Texts the packing check scores packed and padded (any tokens will do)."""

_FP32_EPS = 2**-23


class _LengthRope:
    """A RoPE whose frequencies transformers picks from the longest position in the whole
    forward, so that a row's score would follow the longest row batched with it.

    ``longrope`` (Phi-3's long-context models) switches every row to its long factors once
    any position passes ``original_max_position_embeddings``; dynamic NTK rescales for the
    forward's length past ``max_position_embeddings``, and caches the scale for later
    forwards. Rows up to the ``limit`` are therefore batched only with each other, and
    longer ones together (longrope: one set of long factors) or each alone (dynamic: a
    scale from its own length); a dynamic RoPE's cache is reset before every forward.
    """

    def __init__(self, limit: int, alone: bool, dynamic: list[tuple[Any, str]]) -> None:
        self.limit = limit
        self.alone = alone
        self.dynamic = dynamic  # (rotary module, attribute prefix of its layer type)

    @classmethod
    def of(cls, model: Any) -> _LengthRope | None:
        limits: list[int] = []
        dynamic: list[tuple[Any, str]] = []
        for module in model.modules():
            kinds = getattr(module, "rope_type", None)
            if isinstance(kinds, str):
                kinds = {None: kinds}
            if not isinstance(kinds, dict):
                continue
            for layer_type, kind in kinds.items():
                prefix = "" if layer_type is None else f"{layer_type}_"
                if not hasattr(module, f"{prefix}original_inv_freq"):
                    continue  # not transformers' rotary embedding
                if "dynamic" in kind:
                    limits.append(module.original_max_seq_len)
                    dynamic.append((module, prefix))
                elif kind == "longrope":
                    params = module.config.rope_parameters
                    params = params if layer_type is None else params[layer_type]
                    limits.append(params["original_max_position_embeddings"])
        return cls(min(limits), bool(dynamic), dynamic) if limits else None

    def groups(self, lengths: Sequence[int]) -> list[list[int]]:
        """Row indices that may share forwards: those up to the limit, then the longer
        (together, or one group each)."""
        short = [i for i, n in enumerate(lengths) if n <= self.limit]
        long = [i for i, n in enumerate(lengths) if n > self.limit]
        groups = [short, *([i] for i in long)] if self.alone else [short, long]
        return [group for group in groups if group]

    def reset(self) -> None:
        """Forget the scale a dynamic RoPE cached from an earlier, longer forward."""
        for module, prefix in self.dynamic:
            module.register_buffer(
                f"{prefix}inv_freq", getattr(module, f"{prefix}original_inv_freq"), persistent=False
            )
            setattr(module, f"{prefix}max_seq_len_cached", module.original_max_seq_len)


def _renumber(batch: Any, rows: list[int]) -> Any:
    """A layout of a subset of rows (``rows[j]`` is the j-th), in the full set's numbers."""
    if isinstance(batch, PackedBatch):
        bins = [[rows[j] for j in members] for members in batch.bins]
        return PackedBatch(width=batch.width, bins=bins, used=list(batch.used))
    return [rows[j] for j in batch]


AVOID_CUDNN_ATTENTION = True
"""On CUDA, run attention without cuDNN's kernel (see :func:`_attention_kernels`)."""


def _attention_kernels(device: Any) -> contextlib.AbstractContextManager[Any]:
    """Scaled-dot-product attention on CUDA without cuDNN's kernel, for this forward only.

    cuDNN's attention builds an execution plan for every new (rows, width) shape on every
    thread, and batches of an RM's varied rows rarely repeat a shape: on an H100 (torch
    2.11, a 1B Llama, 16 to 18 padded rows of 150 to 226 tokens) a forward of a new shape
    took 67 to 1,024 ms against 24 to 31 ms once its plan was built
    (benchmarks/rm_attention_shapes.py). The flash and memory-efficient kernels need no
    plan; a causal decoder's forwards carry no mask (``_mask_free``), so flash can run. torch keeps the choice
    in process-wide flags: they are set for the forward and restored after it.
    """
    if device.type != "cuda" or not AVOID_CUDNN_ATTENTION:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    return sdpa_kernel(backends)


def _is_causal(model: Any) -> bool:
    """Whether the model's attention layers all say they are causal (transformers sets
    ``is_causal`` on them: True in decoders, False in encoders), and its config does not
    turn them bidirectional: ``is_causal: false`` in a decoder's config makes transformers
    build a bidirectional mask while the layers keep saying True (a Llama or Qwen3 made
    bidirectional, as embedding and reward models built on decoders do). Such a model
    attends to the padding after a row, so it keeps its mask and is never packed."""
    config = model.config
    if getattr(config, "is_causal", True) is False or getattr(
        config, "use_bidirectional_attention", False
    ):
        return False
    flags = [
        m.is_causal for m in model.modules() if isinstance(getattr(m, "is_causal", None), bool)
    ]
    return bool(flags) and all(flags)


def _learned_positions(model: Any) -> int | None:
    """How many positions a model with a learned position table can read (BERT, GPT-2,
    OPT: an embedding named for positions), else None (rotary or relative positions run
    past ``max_position_embeddings``, if less well)."""
    import torch

    tables = [
        module.num_embeddings
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Embedding)
        and ("position" in name.rsplit(".", 1)[-1] or name.endswith(("wpe", "embed_positions")))
    ]
    if not tables:
        return None
    declared = getattr(model.config, "max_position_embeddings", None)
    # OPT's table holds 2 more rows than it reads (an offset): the config says what it reads
    return min(tables[0], declared) if isinstance(declared, int) and declared > 0 else tables[0]


def _token_head(model: Any) -> Any:
    """The module that maps hidden states to label logits for every token, if the model has
    one (transformers' decoder classifiers call it ``score``); None for pooled heads."""
    import torch

    head = getattr(model, "score", None)
    return head if isinstance(head, torch.nn.Module) else None


def _release_cache() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()
