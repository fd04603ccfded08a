"""A generative reward model: an LLM judge grades the response from a prompt template.

``backend: openai`` (or ``vllm``/``sglang``, which serve the same API) calls
``POST /v1/chat/completions`` on ``url``; ``backend: hf`` runs a local causal LM with
``generate`` on a dedicated thread, batching concurrent rows by token budget.

The judge's answer is parsed for a score (``Score: [[7]]``) or a verdict
(``Verdict: [[CORRECT]]``). An answer with no parsable score is *not* a reward of 0:
it raises :class:`JudgeParseError`, whose ``extra`` carries the judge's text so the row
ends with status ``error`` and the text in its ``extra``.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rewardkit.balancer import BalancedHttpClient, make_http_client
from rewardkit.config import JudgeConfig, RewardModelConfig
from rewardkit.errors import (  # JudgeParseError is re-exported from its old home
    JUDGE_TEXT_IN_EXTRA,
    ConfigError,
    JudgeParseError,
    RemoteError,
    RewardkitError,
    ScorerError,
)
from rewardkit.http import HttpClient
from rewardkit.models.base import ModelScore
from rewardkit.models.batching import (
    Batcher,
    Emit,
    ModelThread,
    pack_by_tokens,
    run_on_thread,
)
from rewardkit.models.loading import load_pretrained, load_tokenizer, resolve_device
from rewardkit.models.templates import JudgeTemplate, load_judge_template
from rewardkit.types import Sample

__all__ = [
    "Generator",
    "JudgeParseError",
    "LLMJudge",
    "clip",
    "conversation",
    "judgement",
    "make_generator",
    "normalized",
    "parse_judgement",
]

_CHARS_PER_TOKEN = 4  # to cut texts for a judge whose tokenizer is not here
_TEXT_IN_EXTRA = JUDGE_TEXT_IN_EXTRA

# Bounded patterns (no nested quantifiers): linear in the judge's text.
_BRACKET_NUMBER = re.compile(r"\[\[\s*([-+]?\d{1,6}(?:\.\d{1,6})?)\s*\]\]")
_LABELLED_NUMBER = re.compile(r"score\s*[:=]\s*\**\s*([-+]?\d{1,6}(?:\.\d{1,6})?)", re.IGNORECASE)
_BRACKET_VERDICT = re.compile(r"\[\[\s*(correct|incorrect)\s*\]\]", re.IGNORECASE)
_LABELLED_VERDICT = re.compile(r"verdict\s*[:=]\s*\**\s*(correct|incorrect)\b", re.IGNORECASE)


def parse_judgement(
    text: str, parser: str, score_min: float = 0.0, score_max: float = 10.0
) -> float | None:
    """The judge's score in ``text`` (the last one given), or None.

    ``score``: ``[[N]]`` or else ``Score: N``, which must lie in [score_min, score_max];
    ``verdict``: ``[[CORRECT]]``/``[[INCORRECT]]`` or else ``Verdict: ...``, as 1.0/0.0.
    """
    if parser == "verdict":
        found = _BRACKET_VERDICT.findall(text) or _LABELLED_VERDICT.findall(text)
        return None if not found else float(found[-1].lower() == "correct")
    found = _BRACKET_NUMBER.findall(text) or _LABELLED_NUMBER.findall(text)
    if not found:
        return None
    value = float(found[-1])
    return value if score_min <= value <= score_max else None


def aggregate(values: Sequence[float], how: str) -> float:
    """Mean, or the most frequent value (a tie: the mean of the tied values)."""
    if how == "mean":
        return statistics.fmean(values)
    counts = Counter(values).most_common()
    top = counts[0][1]
    return statistics.fmean(v for v, c in counts if c == top)


class LLMJudge:
    """``kind: generative``: asks an LLM to grade each row, ``n`` times, and parses its answer."""

    component = "judge"

    def __init__(self, cfg: RewardModelConfig, *, max_batch_wait_ms: float = 5.0) -> None:
        self.cfg = cfg
        self.judge: JudgeConfig = cfg.judge  # its score range was checked by JudgeConfig
        self.template: JudgeTemplate = load_judge_template(self.judge.template, self.judge.parser)
        self._generator = make_generator(cfg, max_batch_wait_ms)
        self.stats: dict[str, int] = {"tokens": 0}
        """``tokens``: what the judge's API calls cost (``usage``, else estimated)."""

    @property
    def weight(self) -> float:
        return self.cfg.weight

    async def start(self) -> None:
        await self._generator.start()

    async def close(self) -> None:
        await self._generator.close()

    async def score(self, sample: Sample) -> ModelScore:
        """Grade one row; JudgeParseError when no answer holds a score."""
        messages, truncated = self.messages(sample)
        texts, tokens = await self._generator.generate_counted(messages)
        if tokens is not None:
            self.stats["tokens"] += tokens
        judged = self._judgement(texts, truncated)
        return ModelScore(judged.score, judged.extra, tokens=tokens)

    def messages(self, sample: Sample) -> tuple[list[dict[str, str]], bool]:
        """The chat sent to the judge for ``sample``, and whether a field was cut."""
        cfg = self.cfg
        prompt, cut_prompt = clip(
            conversation(sample.prompt), cfg.prompt_length * _CHARS_PER_TOKEN, keep="end"
        )
        response, cut_response = clip(
            sample.response_text, cfg.response_length * _CHARS_PER_TOKEN, keep="start"
        )
        user = self.template.fill(prompt, response, sample.ground_truth)
        messages = [{"role": "user", "content": user}]
        if self.judge.system_prompt:
            messages.insert(0, {"role": "system", "content": self.judge.system_prompt})
        return messages, cut_prompt or cut_response

    def _judgement(self, texts: list[str], truncated: bool) -> ModelScore:
        return judgement(texts, self.template.parser, self.judge, truncated)


def judgement(texts: list[str], parser: str, judge: JudgeConfig, truncated: bool) -> ModelScore:
    """One row's score from the judge's ``texts`` (its ``n`` samples), parsed with
    ``parser`` and combined by ``judge.aggregate``; JudgeParseError when none holds one."""
    votes = [parse_judgement(t, parser, judge.score_min, judge.score_max) for t in texts]
    parsed = [v for v in votes if v is not None]
    joined = "\n-----\n".join(texts)
    if not parsed:
        snippet = " ".join(texts[0].split())[:200] if texts else ""
        raise JudgeParseError(f"judge answer holds no score: {snippet!r}", joined)
    raw = aggregate(parsed, judge.aggregate)
    extra = {
        "judge_raw": raw,
        "judge_votes": votes,
        "judge_text": texts[0][:_TEXT_IN_EXTRA],
        "truncated": truncated,
    }
    return ModelScore(normalized(raw, judge) if parser == "score" else raw, extra)


def normalized(raw: float, judge: JudgeConfig) -> float:
    """``raw`` mapped from [score_min, score_max] to [0, 1] when ``judge.normalize`` asks."""
    if not judge.normalize:
        return raw
    return (raw - judge.score_min) / (judge.score_max - judge.score_min)


def conversation(prompt: str | Sequence[Mapping[str, Any]]) -> str:
    """The prompt as the judge reads it: the text, or the turns as 'role: content'."""
    if isinstance(prompt, str):
        return prompt
    if len(prompt) == 1:
        return str(prompt[0].get("content", ""))
    return "\n\n".join(f"{m.get('role', 'user')}: {m.get('content', '')}" for m in prompt)


def clip(text: str, limit: int, *, keep: str) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters (its end or its start kept), and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return (text[-limit:] if keep == "end" else text[:limit]), True


# ---------------------------------------------------------------------- generators


class Generator:
    """Where a judge's prompt is answered: ``generate`` returns the judge's ``n`` texts."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def generate(self, messages: list[dict[str, str]]) -> list[str]:
        raise NotImplementedError

    async def generate_counted(
        self, messages: list[dict[str, str]]
    ) -> tuple[list[str], int | None]:
        """The texts, and the tokens they cost an API (None: not an API call)."""
        return await self.generate(messages), None


def make_generator(cfg: RewardModelConfig, max_batch_wait_ms: float = 5.0) -> Generator:
    """The generator ``reward_model.backend`` asks for: a local causal LM (hf) or an
    OpenAI-compatible server (openai, vllm, sglang)."""
    if cfg.backend == "hf":
        return _LocalGenerator(cfg, max_batch_wait_ms)
    if cfg.backend in ("openai", "vllm", "sglang"):
        return _ChatCompletions(cfg)
    raise ConfigError(f"reward_model.backend '{cfg.backend}' cannot serve a generative judge")


class _ChatCompletions(Generator):
    """Any OpenAI-compatible ``POST /v1/chat/completions`` (OpenAI, vLLM, SGLang, ...).

    One request per row asks for ``n`` samples; the server batches across requests, and
    the HTTP layer bounds how many are in flight.
    """

    def __init__(self, cfg: RewardModelConfig) -> None:
        if not (cfg.url or cfg.urls):
            raise ConfigError(
                f"reward_model.backend '{cfg.backend}' needs reward_model.url (or urls)"
            )
        self.cfg = cfg
        self._client: HttpClient | BalancedHttpClient | None = None

    async def start(self) -> None:
        if self._client is None:
            self._client = make_http_client(self.cfg)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def generate(self, messages: list[dict[str, str]]) -> list[str]:
        return (await self.generate_counted(messages))[0]

    async def generate_counted(self, messages: list[dict[str, str]]) -> tuple[list[str], int]:
        """The texts, and their tokens: the answer's ``usage`` (prompt + completion) when it
        has one, else the estimate the request was rate-limited by."""
        if self._client is None:
            raise ScorerError("judge client is not started")
        judge = self.cfg.judge
        body: dict[str, Any] = {
            "messages": messages,
            "temperature": judge.temperature,
            "top_p": judge.top_p,
            "max_tokens": judge.max_tokens,
            "n": judge.n,
        }
        name = self.cfg.model_name or self.cfg.model_path
        if name:
            body["model"] = name
        cost = self.cfg.http.estimated_tokens_per_request or (
            sum(len(m["content"]) for m in messages) // _CHARS_PER_TOKEN
            + judge.max_tokens * judge.n
        )
        answer = await self._client.post_json("/v1/chat/completions", body, tokens=cost)
        try:
            choices = answer["choices"]
            texts = [c["message"].get("content") or "" for c in choices]
        except (KeyError, TypeError, AttributeError) as exc:
            raise RemoteError(
                f"chat completions: unexpected answer ({exc!r}): {str(answer)[:300]}"
            ) from exc
        if not texts or not all(isinstance(t, str) for t in texts):
            raise RemoteError(f"chat completions: answer has no text choices: {str(answer)[:300]}")
        return texts, _used_tokens(answer.get("usage"), cost)


def _used_tokens(usage: Any, estimate: int) -> int:
    """prompt_tokens + completion_tokens of an OpenAI ``usage`` (else its total_tokens),
    or ``estimate`` when the server reports none (or nonsense)."""
    if isinstance(usage, Mapping):
        prompt, completion = (
            _count(usage.get("prompt_tokens")),
            _count(usage.get("completion_tokens")),
        )
        if prompt is not None and completion is not None:
            return prompt + completion
        total = _count(usage.get("total_tokens"))
        if total is not None:
            return total
    return estimate


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class _LocalGenerator(ModelThread, Generator):
    """A local causal LM (AutoModelForCausalLM) generating on a dedicated thread."""

    def __init__(self, cfg: RewardModelConfig, max_batch_wait_ms: float) -> None:
        self.cfg = cfg  # model_path: required by the config (RewardConfig) for backend hf
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardkit-judge")
        self._batcher: Batcher[list[dict[str, str]], list[str]] = Batcher(
            self._process, max_wait_s=max_batch_wait_ms / 1000, name="judge model"
        )
        self._model: Any = None
        self._tokenizer: Any = None
        self._device: Any = None

    async def generate(self, messages: list[dict[str, str]]) -> list[str]:
        if self._model is None:
            raise ScorerError("judge model is not started")
        return await self._batcher.submit(messages)

    def _load(self) -> None:
        from transformers import AutoModelForCausalLM

        path = self.cfg.model_path
        assert path is not None
        self._device, dtype = resolve_device(self.cfg)
        self._tokenizer = load_tokenizer(path, "reward_model.model_path")
        model = load_pretrained(AutoModelForCausalLM, path, "reward_model.model_path", dtype)
        self._model = model.to(self._device).eval()

    async def _process(self, rows: list[list[dict[str, str]]], emit: Emit[list[str]]) -> None:
        await run_on_thread(self._executor, self._work, rows, emit)

    def _work(
        self,
        rows: list[list[dict[str, str]]],
        emit: Callable[[int, list[str] | BaseException], None],
    ) -> None:
        prompts: dict[int, list[int]] = {}
        for i, messages in enumerate(rows):
            try:
                prompts[i] = self._encode(messages)
            except RewardkitError as exc:
                emit(i, exc)
            except Exception as exc:
                emit(i, ScorerError(f"cannot encode the judge prompt: {type(exc).__name__}: {exc}"))
        order = list(prompts)
        n = self._samples
        # Each row occupies n sequences of (prompt + new tokens) in the batch.
        lengths = [(len(prompts[i]) + self.cfg.judge.max_tokens) * n for i in order]
        for batch in pack_by_tokens(
            lengths, self.cfg.max_batch_tokens, max(1, self.cfg.max_batch_size // n)
        ):
            members = [order[j] for j in batch]
            try:
                outputs = self._generate([prompts[i] for i in members])
            except Exception as exc:
                failure = ScorerError(f"judge generation failed: {type(exc).__name__}: {exc}")
                for i in members:
                    emit(i, failure)
                continue
            for k, i in enumerate(members):
                emit(i, outputs[k * n : (k + 1) * n])

    @property
    def _samples(self) -> int:
        # Greedy decoding gives the same answer every time: one sample says it all.
        return self.cfg.judge.n if self.cfg.judge.temperature > 0 else 1

    def _encode(self, messages: list[dict[str, str]]) -> list[int]:
        tok = self._tokenizer
        if getattr(tok, "chat_template", None):
            text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            return list(tok(text, add_special_tokens=False)["input_ids"])
        text = "\n\n".join(m["content"] for m in messages) + "\n\n"
        return list(tok(text, add_special_tokens=True)["input_ids"])

    def _generate(self, prompts: list[list[int]]) -> list[str]:
        """Left-padded batch generation; n samples per prompt, in prompt order."""
        import torch

        tok, judge = self._tokenizer, self.cfg.judge
        pad = next(t for t in (tok.pad_token_id, tok.eos_token_id, 0) if t is not None)
        longest = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), longest), pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), longest), dtype=torch.long)
        for row, p in enumerate(prompts):
            ids[row, longest - len(p) :] = torch.tensor(p, dtype=torch.long)
            mask[row, longest - len(p) :] = 1
        sampling = judge.temperature > 0
        options: dict[str, Any] = {"do_sample": sampling, "num_return_sequences": self._samples}
        if sampling:
            options.update(temperature=judge.temperature, top_p=judge.top_p)
        with torch.inference_mode():
            out = self._model.generate(
                input_ids=ids.to(self._device),
                attention_mask=mask.to(self._device),
                max_new_tokens=judge.max_tokens,
                pad_token_id=pad,
                **options,
            )
        new = out[:, longest:]  # [B * n, new tokens]
        return tok.batch_decode(new, skip_special_tokens=True)
