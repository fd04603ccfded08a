"""The serving engines rewardkit can launch for a reward model, and how verl's keys map to them.

    argv, env = command_line("vllm", rollout_keys, model="/models/rm", port=8001, rank=0,
                             kind="generative")

One table (:data:`FLAGS`) maps each of verl's ``reward_model.rollout`` keys to each
engine's own command-line flag; a key an engine has no flag for is ``None`` there, and
:func:`refusals` names it (the config refuses it at load). A leaf module: plain values in,
plain values out, so that the config (which refuses) and the launcher (which builds the
command lines) read the same table without importing each other.

Sources of the flags (read for this table):

* vLLM: ``vllm serve --help`` and ``vllm/engine/arg_utils.py`` (``EngineArgs.add_cli_args``):
  ``--tensor-parallel-size``, ``--gpu-memory-utilization``, ``--max-num-seqs``,
  ``--max-num-batched-tokens``, ``--max-model-len``, ``--seed``, ``--dtype``,
  ``--runner pooling`` for a classifier (served at ``/classify``); batch invariance
  (determinism) is the ``VLLM_BATCH_INVARIANT=1`` environment variable
  (docs.vllm.ai, features/batch_invariance).
* SGLang: ``sglang/srt/server_args.py`` and docs/backend/server_arguments.md:
  ``--tp-size``, ``--mem-fraction-static``, ``--max-running-requests``,
  ``--max-prefill-tokens``, ``--context-length``, ``--random-seed``, ``--dtype``,
  ``--is-embedding`` for a reward model (served at ``/v1/embeddings``),
  ``--enable-deterministic-inference``. verl 0.9.1 maps the same keys the same way
  (verl/workers/rollout/sglang_rollout/async_sglang_server.py).
* transformers: ``transformers serve --help`` (transformers 5.x, ``transformers[serving]``):
  ``--device``, ``--dtype``, ``--default-seed``, ``--host``, ``--port``; it serves
  ``/v1/chat/completions`` and ``/health`` and has no flag for sharding, memory
  fraction, sequence or token budgets or context length. It serves no classifier: a
  discriminative model is served by ``rewardkit serve`` replicas (the model in-process),
  whose ``POST /classify`` answers as vLLM's does.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ENGINES",
    "FLAGS",
    "VERL_INERT",
    "client_backend",
    "command_line",
    "health_path",
    "refusals",
]

ENGINES = ("vllm", "sglang", "transformers")
"""What ``reward_model.rollout.name`` may be."""

FLAGS: dict[str, dict[str, str | None]] = {
    # verl key                      vLLM                         SGLang                    transformers serve
    "tensor_model_parallel_size": {"vllm": "--tensor-parallel-size", "sglang": "--tp-size", "transformers": None},
    "gpu_memory_utilization": {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static", "transformers": None},
    "max_num_seqs": {"vllm": "--max-num-seqs", "sglang": "--max-running-requests", "transformers": None},
    "max_num_batched_tokens": {"vllm": "--max-num-batched-tokens", "sglang": "--max-prefill-tokens", "transformers": None},
    "max_model_len": {"vllm": "--max-model-len", "sglang": "--context-length", "transformers": None},
    "seed": {"vllm": "--seed", "sglang": "--random-seed", "transformers": "--default-seed"},
    "dtype": {"vllm": "--dtype", "sglang": "--dtype", "transformers": "--dtype"},
    "full_determinism": {"vllm": "env:VLLM_BATCH_INVARIANT=1", "sglang": "--enable-deterministic-inference", "transformers": "seed"},
}  # fmt: skip
"""verl rollout key -> engine -> flag. ``env:NAME=V``: an environment variable instead of
a flag; ``seed`` (transformers): honoured by the seed and by its serving one request at a
time (no batch to vary); ``None``: the engine cannot honour the key, refused at load.
``full_determinism`` also makes the router route by the request (rewardkit.models.managed).
``prompt_length``/``response_length`` give ``max_model_len`` when it is not set (vLLM, SGLang).
"""

NEUTRAL: dict[str, Any] = {
    "tensor_model_parallel_size": 1,
    "gpu_memory_utilization": None,
    "max_num_seqs": None,
    "max_num_batched_tokens": None,
    "max_model_len": None,
    "seed": None,
    "dtype": None,
    "full_determinism": False,
}
"""The value of each mapped key that asks nothing of the engine (no flag is passed)."""

VERL_INERT: dict[str, Any] = {
    "enforce_eager": True,
    "cudagraph_capture_sizes": None,
    "free_cache_engine": True,
    "expert_parallel_size": 1,
    "pipeline_model_parallel_size": 1,
    "load_format": "auto",
    "layered_summon": False,
    "scheduling_policy": "fcfs",
    "multi_stage_wake_up": False,
    "limit_images": None,
    "enable_chunked_prefill": True,
    "enable_prefix_caching": True,
    "disable_log_stats": True,
    "skip_tokenizer_init": False,
    "ignore_eos": False,
    "temperature": 1.0,
    "top_k": -1,
    "top_p": 1.0,
    "do_sample": True,
    "n": 1,
    "quantization": None,
    "quantization_config_file": None,
    "mtp": None,
}
"""verl 0.9.1's other ``reward_model.rollout`` keys (verl/trainer/config/reward/reward.yaml),
accepted at these values (verl's defaults: the engine's own behaviour, or settings of the
policy's sampling that a reward server never reads) and refused otherwise, pointing at
``engine_kwargs``. ``disaggregation`` is accepted with ``enabled: false``."""


def refusals(engine: str, values: Mapping[str, Any]) -> list[str]:
    """One message per key in ``values`` that ``engine`` cannot honour (naming both)."""
    problems = []
    for key, per_engine in FLAGS.items():
        value = values.get(key, NEUTRAL[key])
        if value == NEUTRAL[key] or per_engine[engine] is not None:
            continue
        problems.append(
            f"rollout.{key}={value!r}: the {engine} engine has no setting for it "
            f"(`transformers serve` runs one process per replica on one device); "
            f"leave it at {NEUTRAL[key]!r} or use rollout.name vllm or sglang"
        )
    return problems


def client_backend(engine: str, kind: str) -> str:
    """How rewardkit calls a replica: the ``reward_model.backend`` the managed fleet implies.

    generative: the OpenAI chat API every engine serves; discriminative: vLLM's
    ``/classify`` or SGLang's ``/v1/embeddings``, read as verl reads them (for
    transformers: ``/classify`` of the ``rewardkit serve`` replicas, read as vLLM's).
    """
    if kind == "generative":
        return "openai"
    return "sglang" if engine == "sglang" else "vllm"


def command_line(
    engine: str,
    values: Mapping[str, Any],
    *,
    model: str,
    port: int,
    rank: int,
    kind: str,
    host: str = "127.0.0.1",
    served_name: str | None = None,
    device: str | None = None,
    engine_kwargs: Mapping[str, Any] | None = None,
    model_keys: Mapping[str, Any] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The argv and extra environment of replica ``rank`` of ``engine`` serving ``model``.

    Each replica gets seed ``seed + rank`` (as verl seeds its replicas). ``engine_kwargs``
    (verl's ``engine_kwargs.<engine>``) are appended as ``--key value`` (``_`` -> ``-``;
    true: the bare flag; false or null: left out; a mapping or list: JSON).
    ``model_keys``: the ``reward_model`` keys of a model run in-process (``dtype``,
    ``num_threads``, ``max_batch_tokens``, ``max_padding_tokens``), which the
    ``rewardkit serve`` replicas of a discriminative model get (``dtype``: the
    ``rollout.dtype`` when that is set).
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; one of {', '.join(ENGINES)}")
    if engine == "transformers" and kind == "discriminative":
        keys = dict(model_keys or {})
        if values.get("dtype"):
            keys["dtype"] = values["dtype"]
        return _rewardkit_serve(model, host, port, device, values, keys), {}
    argv = _base(engine, model, host, port, served_name or model, kind, device)
    env: dict[str, str] = {}
    merged = {**NEUTRAL, **{k: v for k, v in values.items() if k in FLAGS}}
    if merged["max_model_len"] is None and engine != "transformers":
        length = (values.get("prompt_length") or 0) + (values.get("response_length") or 0)
        merged["max_model_len"] = length or None
    for key, flag in ((k, FLAGS[k][engine]) for k in FLAGS):
        value = merged[key]
        if value == NEUTRAL[key] or flag is None or flag == "seed":
            continue
        if key == "seed":
            value = int(value) + rank
        if flag.startswith("env:"):
            name, _, setting = flag[4:].partition("=")
            env[name] = setting
        elif isinstance(value, bool):
            argv.append(flag)
        else:
            argv += [flag, str(value)]
    return argv + _pass_through(engine_kwargs or {}), env


def _base(
    engine: str, model: str, host: str, port: int, name: str, kind: str, device: str | None
) -> list[str]:
    where = ["--host", host, "--port", str(port)]
    if engine == "vllm":
        pooling = ["--runner", "pooling"] if kind == "discriminative" else []
        return ["vllm", "serve", model, *where, "--served-model-name", name, *pooling]
    if engine == "sglang":
        embedding = ["--is-embedding"] if kind == "discriminative" else []
        return [sys.executable, "-m", "sglang.launch_server", "--model-path", model, *where,
                "--served-model-name", name, *embedding]  # fmt: skip
    on = ["--device", device] if device else []
    return ["transformers", "serve", model, *where, *on]


def _rewardkit_serve(
    model: str,
    host: str,
    port: int,
    device: str | None,
    values: Mapping[str, Any],
    model_keys: Mapping[str, Any],
) -> list[str]:
    """``rewardkit serve`` with the model in-process: its ``/classify`` reads as vLLM's."""
    keys = {
        "enable": "true",
        "kind": "discriminative",
        "backend": "hf",
        "model_path": model,
        "prompt_length": values.get("prompt_length"),
        "response_length": values.get("response_length"),
        "device": device,
        **model_keys,
    }
    overrides = [f"reward.reward_model.{k}={v}" for k, v in keys.items() if v is not None]
    base = [sys.executable, "-m", "rewardkit.cli", "serve", "--host", host, "--port", str(port)]
    return [*base, "reward.num_workers=1", *overrides]


def health_path(engine: str, kind: str, default: str) -> str:
    """The route that says a replica can serve: ``rewardkit serve``'s ``/ready`` (its
    ``/health`` answers before the model is loaded), else ``default``."""
    return "/ready" if engine == "transformers" and kind == "discriminative" else default


def _pass_through(kwargs: Mapping[str, Any]) -> list[str]:
    argv: list[str] = []
    for key, value in kwargs.items():
        flag = "--" + str(key).replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, Mapping | list):
            argv += [flag, json.dumps(value)]
        else:
            argv += [flag, str(value)]
    return argv
