"""Loading local models and tokenizers: local files only, device and dtype chosen once.

torch and transformers are optional (the ``models`` extra), so they are imported here,
when a model is actually loaded, never when rewardkit is imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rewardkit.config import RewardModelConfig
from rewardkit.errors import ConfigError, InvalidSampleError

__all__ = ["load_tokenizer", "resolve_device", "texts_from_token_ids"]

_DTYPES = {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}


def resolve_device(cfg: RewardModelConfig) -> tuple[Any, Any]:
    """(torch.device, torch.dtype): cfg.device, else cuda when present, else cpu;
    bf16 on cuda and fp32 on cpu unless cfg.dtype says otherwise."""
    import torch

    name = cfg.device or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError as exc:
        raise ConfigError(f"reward_model.device: {exc}") from exc
    if cfg.dtype != "auto":
        return device, getattr(torch, _DTYPES[cfg.dtype])
    return device, torch.bfloat16 if device.type == "cuda" else torch.float32


def load_tokenizer(path: str, what: str) -> Any:
    """A tokenizer from a local directory (never the hub); ConfigError naming ``what``."""
    from transformers import AutoTokenizer

    _require_directory(path, what)
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{what}: cannot load a tokenizer from '{path}': {exc}") from exc


def load_pretrained(factory: Any, path: str, what: str, dtype: Any) -> Any:
    """``factory.from_pretrained`` from a local directory, mapping failures to ConfigError."""
    _require_directory(path, what)
    try:
        return factory.from_pretrained(path, local_files_only=True, dtype=dtype)
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"{what}: cannot load a model from '{path}': {exc}") from exc


def _require_directory(path: str, what: str) -> None:
    # transformers would read a missing path as a hub repo id and say so confusingly.
    if not Path(path).is_dir():
        raise ConfigError(
            f"{what}: '{path}' is not a directory (models load from local directories only)"
        )


def texts_from_token_ids(
    extra_info: Mapping[str, Any], prompt: str | Sequence[Mapping[str, Any]], tokenizer: Any
) -> tuple[str | Sequence[Mapping[str, Any]], str] | None:
    """Decode the policy's token ids carried in ``extra_info``, if any, to (prompt, response).

    Accepted: ``response_ids`` (+ optional ``prompt_ids``), or verl's layout ``input_ids``
    (+ ``attention_mask``) with ``prompt_length``, the number of leading positions that
    hold the (left-padded) prompt. The row's own ``prompt`` (chat messages) wins over
    decoded prompt ids, since re-rendering needs the turns, not the policy's text.
    """
    if "response_ids" in extra_info:
        response_ids = _ids(extra_info["response_ids"], "response_ids")
        prompt_ids = _ids(extra_info.get("prompt_ids") or [], "prompt_ids")
    elif "input_ids" in extra_info:
        prompt_ids, response_ids = _split_verl(extra_info)
    else:
        return None
    try:
        response = tokenizer.decode(response_ids, skip_special_tokens=True)
        if not prompt and prompt_ids:
            prompt = tokenizer.decode(prompt_ids, skip_special_tokens=True)
    except Exception as exc:  # ids outside the vocabulary: the tokenizer's error types vary
        raise InvalidSampleError(f"cannot decode the row's token ids: {exc}") from exc
    return prompt, response


def _split_verl(extra_info: Mapping[str, Any]) -> tuple[list[int], list[int]]:
    ids = _ids(extra_info["input_ids"], "input_ids")
    mask = _ids(extra_info.get("attention_mask") or [1] * len(ids), "attention_mask")
    if len(mask) != len(ids):
        raise InvalidSampleError(
            f"extra_info.attention_mask has {len(mask)} entries, input_ids has {len(ids)}"
        )
    split = extra_info.get("prompt_length")
    if not isinstance(split, int) or isinstance(split, bool) or not 0 <= split <= len(ids):
        raise InvalidSampleError(
            "extra_info.input_ids needs extra_info.prompt_length: how many leading positions "
            f"hold the prompt (an int from 0 to {len(ids)}), got {split!r}"
        )
    valid = [bool(m) for m in mask]
    prompt_ids = [t for t, keep in zip(ids[:split], valid[:split], strict=True) if keep]
    response_ids = [t for t, keep in zip(ids[split:], valid[split:], strict=True) if keep]
    return prompt_ids, response_ids


def _ids(value: Any, name: str) -> list[int]:
    if hasattr(value, "tolist"):  # numpy arrays and tensors from in-process callers
        value = value.tolist()
    if not isinstance(value, list | tuple) or not all(
        isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in value
    ):
        raise InvalidSampleError(f"extra_info.{name} must be a list of non-negative token ids")
    return list(value)
