"""Helpers for tests that need models: a tiny word-level tokenizer and fake model servers.

Servers are real HTTP servers on 127.0.0.1 (a free port) answering in vLLM, SGLang,
TEI and OpenAI shapes.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import transformers
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from tokenizers import Tokenizer, models, pre_tokenizers, processors

WORDS = (
    "what is two plus two the answer four five three how many apples are there i think it "
    "please explain step by step good bad yes no maybe a of and to in very long question reply "
    "final correct incorrect score grade this response 0 1 2 3 4 5 6 7 8 9 10 . , ? ! : = + - "
    "[ ] ( ) { } # $ % * /"
).split()
SPECIALS = ["[PAD]", "[UNK]", "<s>", "</s>", "[CLS]", "[SEP]"]
CHAT_TOKENS = ["<|system|>", "<|user|>", "<|assistant|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} </s> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
JUDGE_TOKEN = "[[7]]"


def build_tokenizer(
    style: str = "llama", *, chat_template: str | None = None, first: str | None = None
) -> Any:
    """A fast word-level tokenizer. ``style`` llama adds '<s>' in front; bert wraps in [CLS] .. [SEP].

    ``first`` puts a plain (non-special) token at id 0: with all-zero logits greedy
    decoding picks id 0, which is how the fake judge is made to answer.
    """
    head = [first] if first else []
    vocab = {w: i for i, w in enumerate(dict.fromkeys(head + SPECIALS + CHAT_TOKENS + WORDS))}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    if style == "bert":
        tk.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
        )
    else:
        tk.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", vocab["<s>"])]
        )
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tk,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        additional_special_tokens=CHAT_TOKENS,
    )
    if chat_template:
        tok.chat_template = chat_template
    return tok


# The size of every tiny model here: 2 layers, hidden 32, 4 heads (``extra`` overrides).
_SMALL = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 4, "max_position_embeddings": 512}  # fmt: skip


def llama_config(vocab: int, **extra: Any) -> Any:
    return transformers.LlamaConfig(
        **{"vocab_size": vocab, **_SMALL, "num_key_value_heads": 2, **extra}
    )


def bert_config(vocab: int, **extra: Any) -> Any:
    return transformers.BertConfig(**{"vocab_size": vocab, **_SMALL, **extra})


def save_model(path: Path, model: Any, tok: Any) -> str:
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


# ---------------------------------------------------------------------- servers


class ServerThread:
    """A uvicorn server for ``app`` on 127.0.0.1, a free port, in a daemon thread."""

    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.server.force_exit = True
        self.thread.join(timeout=5)


class FakeModelServer:
    """Answers like vLLM (/classify), SGLang (/v1/embeddings), TEI (/predict) and an
    OpenAI-compatible judge (/v1/chat/completions), and records every request body.

    The fake score of a row is a pure function of what was sent (see ``fake_score``), so
    a test can compute the expected value. A path prefix picks a misbehaviour:
    ``/stall`` never answers, ``/garbage`` answers 200 with non-JSON, ``/badshape`` JSON of the wrong shape.
    A row containing the word 'bad' (or token id 666) is refused with 400.
    """

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any]] = []
        self.app = Starlette(routes=[Route("/{path:path}", self.handle, methods=["GET", "POST"])])

    async def handle(self, request: Request) -> Response:
        path = "/" + request.path_params["path"]
        body = json.loads(await request.body() or b"null")
        self.requests.append((path, body))
        if path.startswith("/stall"):
            await asyncio.sleep(3600)
        if path.startswith("/garbage"):
            return PlainTextResponse("<html>oops</html>")
        if path.startswith("/badshape"):
            return JSONResponse({"data": "nope"})
        route = path.rsplit("/", 1)[-1]
        if route == "completions":
            return JSONResponse(self.chat(body))
        inputs = (
            body.get("inputs") if route == "predict" else body.get("input", [body.get("messages")])
        )
        if any(_is_bad(x) for x in inputs):
            return JSONResponse({"error": "bad row"}, status_code=400)
        scores = [fake_score(x) for x in inputs]
        if route == "classify":
            data = [
                {"index": i, "label": None, "probs": [0.0, s], "num_classes": 2}
                for i, s in enumerate(scores)
            ]
            return JSONResponse(
                {"id": "c", "object": "list", "model": body.get("model"), "data": data[::-1]}
            )
        if route == "embeddings":
            data = [
                {"object": "embedding", "index": i, "embedding": [9.0, s]}
                for i, s in enumerate(scores)
            ]
            return JSONResponse({"object": "list", "data": data, "model": body.get("model")})
        if route == "predict":
            raw = body.get("raw_scores", False)
            return JSONResponse(
                [[{"label": "LABEL_0", "score": s if raw else -1.0}] for s in scores]
            )
        return JSONResponse({"error": "no such route"}, status_code=404)

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """The judge's answer depends on the model name the test asked for."""
        model = body.get("model", "")
        n = body.get("n", 1)
        answers = {
            "judge-7": ["The reply is fine.\nScore: [[7]]"] * n,
            "judge-votes": ["Score: [[2]]", "Score: [[8]]", "Score: [[8]]"][:n],
            "judge-verdict": ["Same final answer.\nVerdict: [[CORRECT]]"] * n,
            "judge-garbage": ["I would rather not grade this."] * n,
            "judge-echo": [body["messages"][-1]["content"]] * n,
        }[model]
        choices = [
            {"index": i, "message": {"role": "assistant", "content": a}, "finish_reason": "stop"}
            for i, a in enumerate(answers)
        ]
        return {"id": "x", "object": "chat.completion", "model": model, "choices": choices}


def fake_score(x: Any) -> float:
    """Text: its length / 10; token ids: their sum / 100; messages: total content length / 10."""
    if isinstance(x, list) and x and isinstance(x[0], dict):
        return sum(len(m["content"]) for m in x) / 10
    if isinstance(x, list) and x and isinstance(x[0], str):  # TEI: [text]
        return len(x[0]) / 10
    if isinstance(x, list):
        return sum(x) / 100
    return len(x) / 10


def _is_bad(x: Any) -> bool:
    return "bad" in json.dumps(x) or (isinstance(x, list) and 666 in x)


async def scored_by(scorer: Any, rows: Iterable[Any]) -> list[Any]:
    """Start ``scorer``, score ``rows`` at once (an exception is its row's outcome), close."""
    await scorer.start()
    try:
        return await asyncio.gather(*(scorer.score(r) for r in rows), return_exceptions=True)
    finally:
        await scorer.close()
