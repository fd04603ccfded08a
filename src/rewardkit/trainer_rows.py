"""Trainer values as Sample rows: shared by the trainer adapters and the server.

:func:`plain` turns numpy/torch values into JSON-ready Python; :func:`rows_from_request`
turns OpenRLHF's ``query``/``prompts``/``labels`` into rows, for both
:mod:`rewardkit.integrations.openrlhf` and the server's ``/get_reward`` route, which
must read a request the same way (and neither depends on the other).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rewardkit.errors import QuerySplitError
from rewardkit.types import BadRow, Result

__all__ = [
    "QuerySplitError",
    "model_logs",
    "model_metrics",
    "plain",
    "rows_from_request",
    "split_response",
]

_LABEL_FIELDS = ("ground_truth", "data_source", "extra_info", "id")

# End-of-turn markers OpenRLHF leaves in ``queries`` (decoded with special tokens).
_TRAILING_SPECIAL = re.compile(
    r"(?:\s*(?:<\|[A-Za-z0-9_]{1,32}\|>|</s>|<eos>|<end_of_turn>))+\s*\Z"
)
_TAIL = 256  # the trailing-marker search looks at the end only: linear, bounded work


def plain(value: Any) -> Any:
    """Trainer values (numpy scalars and arrays, tensors) as plain JSON-ready Python.

    Rows travel to worker processes and servers; trainers hand us numpy object arrays.
    """
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    tolist = getattr(value, "tolist", None)  # numpy scalars/arrays, torch tensors
    if callable(tolist):
        return plain(tolist())
    return value


MIN_PROMPT_OVERLAP = 16
"""Characters of a left-truncated prompt that must remain at the query's start for the
split to be trusted (shorter overlaps match by chance)."""

# What a re-decode may put before the prompt: beginning-of-text tokens and whitespace.
_LEADING_SPECIAL = re.compile(r"(?:\s*(?:<\|[A-Za-z0-9_]{1,32}\|>|<s>|<bos>|\[BOS\]))*\s*\Z")


def split_response(query: str, prompt: str) -> str:
    """The response part of an OpenRLHF query (prompt + response), end-of-turn markers removed.

    Never the prompt: the split is taken only where it is certain, else QuerySplitError.

    * The query starts with the prompt (the usual case: it is a re-decode of the
      prompt's tokens), or with the prompt after beginning-of-text tokens the decode
      added (``<s> ``, ``<|begin_of_text|>``): the response is the rest.
    * OpenRLHF cut the prompt from the left to fit ``max_len`` (its single-turn
      executor keeps the prompt's last tokens): the query then starts with an end part
      of the prompt. The response is what follows the longest such part, provided it
      is at least :data:`MIN_PROMPT_OVERLAP` characters and no other end part of that
      length also starts the query (two would make the split ambiguous).
    * Otherwise (the query does not hold the prompt in either way) QuerySplitError.

    An empty prompt (none was sent) leaves the whole query as the response.
    """
    if not prompt:
        response = query
    elif query.startswith(prompt):
        response = query[len(prompt) :]
    elif (at := query.find(prompt)) > 0 and _LEADING_SPECIAL.match(query[:at]):
        response = query[at + len(prompt) :]
    else:
        response = query[_truncated_prompt_length(query, prompt) :]
    head, tail = response[:-_TAIL], response[-_TAIL:]
    return head + _TRAILING_SPECIAL.sub("", tail)


def _truncated_prompt_length(query: str, prompt: str) -> int:
    """Where a left-truncated prompt ends in ``query``; QuerySplitError if not certain.

    The candidates are every k with ``query[:k] == prompt[-k:]``, all found in linear
    time as the borders of ``query[:len(prompt)] + SEP + prompt`` (KMP's prefix function).
    """
    head = query[: len(prompt)]
    text: list[str | None] = [*head, None, *prompt]  # None: a separator no text contains
    border = [0] * len(text)
    for i in range(1, len(text)):
        k = border[i - 1]
        while k and text[i] != text[k]:
            k = border[k - 1]
        if text[i] == text[k]:
            k += 1
        border[i] = k
    candidates = []
    k = border[-1]
    while k:
        candidates.append(k)
        k = border[k - 1]
    long_enough = [k for k in candidates if k >= min(MIN_PROMPT_OVERLAP, len(prompt))]
    if len(long_enough) == 1:
        return long_enough[0]
    why = (
        "no end part of it of at least "
        f"{min(MIN_PROMPT_OVERLAP, len(prompt))} characters starts the query"
        if not long_enough
        else f"{len(long_enough)} end parts of it start the query, so the split is ambiguous"
    )
    raise QuerySplitError(
        "the prompt is not a prefix of the query (OpenRLHF cuts long prompts from the left), "
        f"and {why}: the response cannot be told apart from the prompt, so the row is not "
        "scored (raise OpenRLHF's max_len or shorten the prompt)"
    )


def rows_from_request(
    queries: Sequence[str], prompts: Sequence[Any] | None, labels: Sequence[Any] | None
) -> list[dict[str, Any] | BadRow]:
    """Sample rows from OpenRLHF's ``query``/``prompts``/``labels`` (the file adapter and ``/get_reward``).

    The response is each query after its prompt (:func:`split_response`); a query whose
    response cannot be told apart from its prompt is a :class:`~rewardkit.types.BadRow`
    (scored ``invalid`` with the reason). A label that is
    a mapping with ``ground_truth`` gives the row's ``ground_truth`` and, when present,
    ``data_source``, ``extra_info`` and ``id``; any other label is the ground truth
    itself. Missing prompts or labels (None) count as empty prompts and no ground truth.
    """
    n = len(queries)
    prompts = list(prompts) if prompts is not None else [""] * n
    labels = list(labels) if labels is not None else [None] * n
    if not len(prompts) == len(labels) == n:
        raise ValueError(
            f"queries, prompts and labels differ in length ({n}, {len(prompts)}, {len(labels)})"
        )
    rows: list[dict[str, Any] | BadRow] = []
    for query, prompt, label in zip(queries, prompts, labels, strict=True):
        prompt_text = prompt if isinstance(prompt, str) else ""
        try:
            response = split_response(str(query), prompt_text)
        except QuerySplitError as exc:
            rows.append(BadRow(str(exc)))
            continue
        row: dict[str, Any] = {"prompt": prompt, "response": response}
        label = plain(label)
        if isinstance(label, Mapping) and "ground_truth" in label:
            row.update({key: label[key] for key in _LABEL_FIELDS if key in label})
        else:
            row["ground_truth"] = label
        rows.append(row)
    return rows


# ---------------------------------------------------------------------- reward-model metrics


def _is_model(component: str) -> bool:
    """A reward model's component: the single section's ``rm`` or ``judge``, or ``rm/<name>``."""
    return component in ("rm", "judge") or component.startswith("rm/")


def _tokens(result: Result) -> dict[str, int]:
    return {
        key.removesuffix("/tokens"): value
        for key, value in result.extra.items()
        if key.endswith("/tokens") and isinstance(value, int) and not isinstance(value, bool)
    }


def model_metrics(results: Sequence[Result]) -> dict[str, float]:
    """A batch's numbers per reward model, for a trainer's metric hook (TRL's ``log_metric``):
    ``<component>/mean`` over the rows that have the component, ``<component>/tokens`` the
    API tokens the batch cost. Rule, format and overlong components are not models: none."""
    sums: dict[str, list[float]] = {}
    tokens: dict[str, float] = {}
    for result in results:
        for name, value in result.components.items():
            if _is_model(name) and value is not None:
                pair = sums.setdefault(name, [0.0, 0.0])
                pair[0] += value
                pair[1] += 1
        for name, count in _tokens(result).items():
            tokens[name] = tokens.get(name, 0.0) + count
    out = {f"{name}/mean": total / n for name, (total, n) in sums.items()}
    out.update({f"{name}/tokens": count for name, count in tokens.items()})
    return out


def model_logs(results: Sequence[Result]) -> dict[str, list[float]]:
    """Per-row numbers per reward model, for OpenRLHF's ``extra_logs`` (which it averages):
    ``rewardkit_<component>`` when every row has that component (a made-up value for a row
    without one would bias the mean), and ``rewardkit_<component>_tokens`` (0 for a row
    that cost none)."""
    names = dict.fromkeys(n for r in results for n in r.components if _is_model(n))
    logs = {
        f"rewardkit_{name}": [float(r.components[name]) for r in results]
        for name in names
        if all(r.components.get(name) is not None for r in results)
    }
    used = [_tokens(r) for r in results]
    for name in dict.fromkeys(n for row in used for n in row):
        logs[f"rewardkit_{name}_tokens"] = [float(row.get(name, 0)) for row in used]
    return logs
