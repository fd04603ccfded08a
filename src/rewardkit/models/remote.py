"""A discriminative reward model behind a server (or several replicas): vLLM, SGLang or TEI.

| backend | request | score |
|---|---|---|
| vllm | ``POST /classify`` ``{"input": [...], "use_activation": false}`` | ``data[i].probs[-1]`` (the raw logit) |
| sglang | ``POST /v1/embeddings`` ``{"input": [...]}`` (server run with ``--is-embedding``) | ``data[i].embedding[-1]`` |
| tei | ``POST /predict`` ``{"inputs": [[text], ...], "raw_scores": true, "truncate": true}`` | ``[i][0].score`` |

With ``model_path`` pointing at the RM's tokenizer, rows are rendered with its chat
template and truncated here; vLLM and SGLang then get token ids (exact truncation, no
second BOS), TEI the rendered text (it tokenizes itself and truncates the end). Without
a tokenizer, vLLM gets the conversation (``messages``, one row per request: the server
applies the RM's template) and SGLang/TEI prompt and response concatenated (a newline between them when needed).
Concurrent rows are sent together, up to ``max_batch_size`` per request; with several
``urls`` each request goes to the least loaded healthy replica (rewardkit.balancer).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from rewardkit.balancer import BalancedHttpClient, make_http_client
from rewardkit.config import RewardModelConfig
from rewardkit.errors import (
    ConfigError,
    HttpStatusError,
    InvalidSampleError,
    RemoteError,
    RewardkitError,
    ScorerError,
)
from rewardkit.http import HttpClient
from rewardkit.models.base import ModelScore
from rewardkit.models.batching import Batcher, Emit, shutdown_thread
from rewardkit.models.discriminative import postprocess
from rewardkit.models.loading import load_tokenizer, texts_from_token_ids
from rewardkit.models.templates import as_messages, concatenate, encode_row, prompt_text, render_row
from rewardkit.types import Sample

__all__ = ["RemoteRewardModel"]

_ROUTES = {"vllm": "/classify", "sglang": "/v1/embeddings", "tei": "/predict"}


@dataclass(frozen=True, slots=True)
class _Prepared:
    """One row ready to send: token ids, text, or a conversation."""

    payload: Any
    tokens: int
    truncated: bool | None  # None: truncation happens on the server, unseen


class RemoteRewardModel:
    """``kind: discriminative`` with ``backend`` vllm, sglang or tei and a ``url``."""

    component = "rm"

    def __init__(self, cfg: RewardModelConfig, *, max_batch_wait_ms: float = 5.0) -> None:
        if cfg.backend not in _ROUTES:
            raise ConfigError(
                f"reward_model.backend '{cfg.backend}' is not a discriminative server backend"
            )
        if not (cfg.url or cfg.urls):
            raise ConfigError(
                f"reward_model.backend '{cfg.backend}' needs reward_model.url (or urls)"
            )
        self.cfg = cfg
        self._client: HttpClient | BalancedHttpClient | None = None
        self._tokenizer: Any = None
        self._policy_tokenizer: Any = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardkit-rm-encode")
        self._batcher: Batcher[Sample, ModelScore] = Batcher(
            self._process,
            max_wait_s=max_batch_wait_ms / 1000,
            max_round=cfg.max_batch_size * cfg.http.max_concurrent,
            max_inflight=cfg.http.max_concurrent,
            name=f"{cfg.backend} reward model",
        )

    @property
    def weight(self) -> float:
        return self.cfg.weight

    @property
    def _model_name(self) -> str | None:
        return self.cfg.model_name or self.cfg.model_path

    async def start(self) -> None:
        """Load the RM tokenizer (when model_path is set) and open the connection pool."""
        if self._client is not None:
            return
        await asyncio.get_running_loop().run_in_executor(self._executor, self._load)
        self._client = make_http_client(self.cfg)

    async def close(self) -> None:
        await self._batcher.close()
        if self._client is not None:
            await self._client.aclose()
        await shutdown_thread(self._executor)

    async def score(self, sample: Sample) -> ModelScore:
        if self._client is None:
            raise ScorerError("reward model client is not started")
        return await self._batcher.submit(sample)

    def _load(self) -> None:
        cfg = self.cfg
        if cfg.model_path:
            self._tokenizer = load_tokenizer(cfg.model_path, "reward_model.model_path")
        if cfg.input_tokenizer:
            self._policy_tokenizer = load_tokenizer(
                cfg.input_tokenizer, "reward_model.input_tokenizer"
            )
        else:
            self._policy_tokenizer = self._tokenizer

    # ------------------------------------------------------------------ a round

    async def _process(self, rows: list[Sample], emit: Emit[ModelScore]) -> None:
        loop = asyncio.get_running_loop()
        prepared = await loop.run_in_executor(
            self._executor, lambda: [self._prepare(r) for r in rows]
        )
        ready: list[tuple[int, _Prepared]] = []
        for i, item in enumerate(prepared):
            if isinstance(item, BaseException):
                emit(i, item)
            else:
                ready.append((i, item))
        per_request = 1 if self._sends_messages else self.cfg.max_batch_size
        chunks = [ready[k : k + per_request] for k in range(0, len(ready), per_request)]
        await asyncio.gather(*(self._send_isolated(chunk, emit) for chunk in chunks))

    @property
    def _sends_messages(self) -> bool:
        return self.cfg.backend == "vllm" and self._tokenizer is None

    def _prepare(self, row: Sample) -> _Prepared | BaseException:
        try:
            prompt: str | Sequence[Mapping[str, Any]] = row.prompt
            response = row.response_text
            if self._policy_tokenizer is not None:
                decoded = texts_from_token_ids(row.extra_info, prompt, self._policy_tokenizer)
                if decoded is not None:
                    prompt, response = decoded
            return self._payload(prompt, response)
        except RewardkitError as exc:
            return exc
        except Exception as exc:
            return ScorerError(f"cannot prepare the row: {type(exc).__name__}: {exc}")

    def _payload(self, prompt: Any, response: str) -> _Prepared:
        cfg, tok = self.cfg, self._tokenizer
        if self._sends_messages:
            messages = [*as_messages(prompt), {"role": "assistant", "content": response}]
            return _Prepared(messages, _estimate(prompt_text(prompt) + response), None)
        if tok is None:
            text, _ = concatenate(prompt, response)
            return _Prepared(text, _estimate(text), None)
        if cfg.backend == "tei":
            text, _, templated = render_row(tok, prompt, response)
            bos = getattr(tok, "bos_token", None)
            if templated and bos and text.startswith(bos):  # TEI adds its own special tokens
                text = text[len(bos) :]
            return _Prepared(text, _estimate(text), None)
        enc = encode_row(
            tok,
            prompt,
            response,
            prompt_length=cfg.prompt_length,
            response_length=cfg.response_length,
        )
        if not enc.ids:  # as in-process: no last token to score (a server would 400 on it)
            raise InvalidSampleError("the row renders to no tokens for the reward model")
        return _Prepared(enc.ids, len(enc.ids), enc.truncated)

    async def _send_isolated(
        self, chunk: list[tuple[int, _Prepared]], emit: Emit[ModelScore]
    ) -> None:
        """Send one request; a client error (4xx) on several rows is retried in halves so
        that one bad row does not fail its neighbours."""
        try:
            logits = await self._send([p for _, p in chunk])
        except HttpStatusError as exc:
            if len(chunk) > 1 and 400 <= exc.status < 500 and exc.status != 429:
                half = len(chunk) // 2
                await asyncio.gather(
                    self._send_isolated(chunk[:half], emit), self._send_isolated(chunk[half:], emit)
                )
                return
            for i, _ in chunk:
                emit(i, exc)
            return
        except RewardkitError as exc:
            for i, _ in chunk:
                emit(i, exc)
            return
        for (i, item), logit in zip(chunk, logits, strict=True):
            emit(i, self._result(logit, item))

    def _result(self, logit: float, item: _Prepared) -> ModelScore | BaseException:
        try:
            score = postprocess(logit, self.cfg)
        except ScorerError as exc:
            return exc
        extra: dict[str, Any] = {"rm_raw": logit}
        if item.truncated is not None:
            extra["truncated"] = item.truncated
        return ModelScore(score, extra)

    async def _send(self, items: list[_Prepared]) -> list[float]:
        assert self._client is not None
        backend, route = self.cfg.backend, _ROUTES[self.cfg.backend]
        body = self._body([it.payload for it in items])
        answer = await self._client.post_json(route, body, tokens=sum(it.tokens for it in items))
        try:
            scores = _PARSERS[backend](answer, len(items))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise RemoteError(
                f"{backend} {route}: unexpected answer ({exc}): {str(answer)[:300]}"
            ) from exc
        return scores

    def _body(self, payloads: list[Any]) -> dict[str, Any]:
        backend = self.cfg.backend
        if backend == "tei":
            return {"inputs": [[p] for p in payloads], "raw_scores": True, "truncate": True}
        body: dict[str, Any] = {}
        if self._model_name:
            body["model"] = self._model_name
        if self._sends_messages:
            (messages,) = payloads
            body.update(messages=messages, use_activation=False)
        elif backend == "vllm":
            body.update(input=payloads, use_activation=False, add_special_tokens=False)
        else:
            body["input"] = payloads
        return body


def _estimate(text: str) -> int:
    """Tokens in a text without a tokenizer (about four characters each)."""
    return max(1, len(text) // 4)


def _in_order(data: Sequence[Any], count: int) -> list[Any]:
    """Items of an OpenAI-style ``data`` list in input order (by ``index`` when given)."""
    if not isinstance(data, list) or len(data) != count:
        raise ValueError(
            f"expected {count} results, got {len(data) if isinstance(data, list) else type(data).__name__}"
        )
    if all(isinstance(d, dict) and isinstance(d.get("index"), int) for d in data):
        data = sorted(data, key=lambda d: d["index"])
    return list(data)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"score {value!r} is not a number")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"score {value} is not finite")
    return value


def _parse_vllm(answer: Any, count: int) -> list[float]:
    return [_number(d["probs"][-1]) for d in _in_order(answer["data"], count)]


def _parse_sglang(answer: Any, count: int) -> list[float]:
    return [_number(d["embedding"][-1]) for d in _in_order(answer["data"], count)]


def _parse_tei(answer: Any, count: int) -> list[float]:
    if not isinstance(answer, list) or len(answer) != count:
        raise ValueError(f"expected {count} results")
    scores = []
    for predictions in answer:
        if not isinstance(predictions, list) or len(predictions) != 1:
            raise ValueError(
                "a reward model has one label; TEI answered with another number of predictions"
            )
        scores.append(_number(predictions[0]["score"]))
    return scores


_PARSERS = {"vllm": _parse_vllm, "sglang": _parse_sglang, "tei": _parse_tei}
