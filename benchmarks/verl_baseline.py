"""Time verl 0.9.1's reward managers on a JSONL batch, inside verl's own virtual env.

Run by ``benchmarks/bench_scoring.py`` with ``.bench/verl-venv/bin/python`` (verl pins
an older transformers, so it stays out of rewardkit's environment)::

    .bench/verl-venv/bin/python benchmarks/verl_baseline.py --manager naive \\
        --rows .bench/scoring/clean.jsonl --warm .bench/scoring/warm.jsonl --out naive.json

It builds a DataProto the way verl's rollout hands one to the reward manager
(left-padded prompt ids, right-padded response ids, an attention mask over both,
``data_source``, ``reward_model.ground_truth`` and ``extra_info`` as object arrays),
tokenized with a tiny byte-level BPE tokenizer trained here, offline. The scorer is
verl's ``verl.utils.reward_score.math_verify.compute_score`` wired in as a
``custom_reward_function`` would be. Writes ``{"seconds", "scores", ...}`` as JSON.

Module-level imports stay light on purpose: verl's math_verify scorer runs in
``spawn`` worker processes, which re-import this file as ``__mp_main__``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: Any = None):
    """The custom_reward_function a verl user writes to use verl's math_verify scorer."""
    from verl.utils.reward_score import math_verify

    return math_verify.compute_score(solution_str, ground_truth)


def _log(message: str) -> None:
    print(f"[verl_baseline {time.strftime('%H:%M:%S')}] {message}", flush=True)


def _read_rows(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _prompt_text(row: dict[str, Any]) -> str:
    prompt = row.get("prompt", "")
    if isinstance(prompt, list):
        return "\n".join(str(m.get("content", "")) for m in prompt)
    return str(prompt)


def build_tokenizer(texts: list[str]):
    """A byte-level BPE tokenizer trained on the batch itself: exact round trips, no hub."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4000,
        special_tokens=["<pad>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        eos_token="</s>",
        clean_up_tokenization_spaces=False,
    )


def build_dataproto(rows: list[dict[str, Any]], tokenizer):
    """The DataProto a verl rollout hands the reward manager for these rows."""
    import numpy as np
    import torch
    from verl import DataProto

    pad = tokenizer.pad_token_id
    prompts = [tokenizer.encode(_prompt_text(r), add_special_tokens=False) for r in rows]
    responses = [tokenizer.encode(r["response"], add_special_tokens=False) or [pad] for r in rows]
    plen = max(len(p) for p in prompts)
    rlen = max(len(r) for r in responses)
    prompt_ids = torch.full((len(rows), plen), pad, dtype=torch.long)  # [B, P] left-padded
    response_ids = torch.full((len(rows), rlen), pad, dtype=torch.long)  # [B, R] right-padded
    mask = torch.zeros((len(rows), plen + rlen), dtype=torch.long)  # [B, P+R]
    for i, (p, r) in enumerate(zip(prompts, responses, strict=True)):
        prompt_ids[i, plen - len(p) :] = torch.tensor(p)
        response_ids[i, : len(r)] = torch.tensor(r)
        mask[i, plen - len(p) : plen + len(r)] = 1
    tensors = {
        "prompts": prompt_ids,
        "responses": response_ids,
        "input_ids": torch.cat([prompt_ids, response_ids], dim=-1),
        "attention_mask": mask,
    }
    non_tensors = {
        "data_source": np.array([r["data_source"] for r in rows], dtype=object),
        "reward_model": np.array(
            [{"ground_truth": r["ground_truth"], "style": "rule"} for r in rows], dtype=object
        ),
        "extra_info": np.array([dict(r.get("extra_info") or {}) for r in rows], dtype=object),
    }
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)


def _manager(name: str, tokenizer):
    from verl.workers.reward_manager.naive import NaiveRewardManager
    from verl.workers.reward_manager.prime import PrimeRewardManager

    # verl 0.9.1: NaiveRewardManager(tokenizer, num_examine, compute_score=None,
    # reward_fn_key="data_source", compute_score_timeout=None);
    # PrimeRewardManager(tokenizer, num_examine, compute_score=None, reward_fn_key="data_source").
    cls = {"naive": NaiveRewardManager, "prime": PrimeRewardManager}[name]
    return cls(tokenizer=tokenizer, num_examine=0, compute_score=compute_score)


def _scores(manager, data) -> list[float]:
    reward_tensor = manager(data)  # [B, R]: the score sits at the last valid response token
    return [float(v) for v in reward_tensor.sum(dim=-1).tolist()]


def _decode_mismatches(rows: list[dict[str, Any]], tokenizer) -> int:
    """Rows whose response does not survive encode+decode unchanged (should be 0)."""
    bad = 0
    for row in rows:
        ids = tokenizer.encode(row["response"], add_special_tokens=False)
        if tokenizer.decode(ids, skip_special_tokens=True) != row["response"]:
            bad += 1
    return bad


def run(manager_name: str, rows_path: str, warm_path: str | None) -> dict[str, Any]:
    """Score the warm batch (unless none), then time one call on the measured batch."""
    import verl

    rows = _read_rows(rows_path)
    warm = _read_rows(warm_path) if warm_path else []
    texts = [_prompt_text(r) for r in rows + warm] + [r["response"] for r in rows + warm]
    tokenizer = build_tokenizer(texts)
    manager = _manager(manager_name, tokenizer)
    warm_seconds = None
    if warm:
        start = time.perf_counter()
        _scores(manager, build_dataproto(warm, tokenizer))
        warm_seconds = time.perf_counter() - start
        _log(f"warm-up call: {len(warm)} rows in {warm_seconds:.2f} s")
    data = build_dataproto(rows, tokenizer)
    start = time.perf_counter()
    scores = _scores(manager, data)
    seconds = time.perf_counter() - start
    _log(f"measured call: {len(rows)} rows in {seconds:.2f} s")
    return {
        "manager": manager_name,
        "verl_version": verl.__version__,
        "rows": len(rows),
        "seconds": seconds,
        "warm_seconds": warm_seconds,
        "scores": scores,
        "decode_mismatches": _decode_mismatches(rows, tokenizer),
        "pid": os.getpid(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manager", choices=["naive", "prime"], required=True)
    parser.add_argument("--rows", required=True, help="the measured batch (.jsonl)")
    parser.add_argument("--warm", help="a different batch scored first, untimed (.jsonl)")
    parser.add_argument("--out", required=True, help="where to write the JSON figures")
    args = parser.parse_args(argv)
    result = run(args.manager, args.rows, args.warm)
    Path(args.out).write_text(json.dumps(result))
    _stop_verl_pool()
    # Exit now rather than wait at interpreter shutdown for pool workers that may still
    # be stuck on a pathological row (they were just killed).
    os._exit(0)


def _stop_verl_pool() -> None:
    """Kill the workers of verl's module-level math_verify spawn pool, if it was started."""
    import signal
    import sys

    module = sys.modules.get("verl.utils.reward_score.math_verify")
    pool = getattr(module, "_pool", None)
    for pid in list(getattr(pool, "_processes", None) or {}):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


if __name__ == "__main__":
    main()
