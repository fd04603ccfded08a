"""Token-level placement: turning one score per response into a ``[B, R]`` reward tensor.

PPO/GRPO trainers (verl, OpenRLHF) want the sequence reward on the response's last
valid token and zeros elsewhere. The valid tokens are the ones of ``response_mask``
(``[B, R]``, nonzero = a real response token). The ones may be right-aligned (verl's
padding), left-aligned, or have holes (multi-turn masks that zero tool output): the
"last valid token" is always the last nonzero position of the row.

Lengths here come from the trainer's masks, never from a response's text: a trajectory
response (chat messages with tool calls and tool results) has no length rewardkit could
count, since which tokens are the policy's is the trainer's knowledge. The engine's
overlong penalty likewise takes a trajectory's ``extra_info.response_length`` and
refuses to tokenize it (``reward.overlong_buffer.tokenizer`` counts text only).

The incumbent recomputed ``attention_mask[prompt_length:].sum()`` inline at every use,
in two different ways; here :func:`valid_response_length` is the one helper for it,
and :func:`last_token_index` is the one for "where does the score go".
"""

from __future__ import annotations

import torch

from rewardkit.shaping.overlong import overlong_penalty

__all__ = [
    "last_token_index",
    "overlong_penalties",
    "overlong_token_penalties",
    "place_scores",
    "response_mask_from_attention",
    "valid_response_length",
]


def valid_response_length(response_mask: torch.Tensor) -> torch.Tensor:
    """The number of valid response tokens of each row: ``[B, R] -> [B]`` (int64)."""
    _check_mask(response_mask)
    return (response_mask != 0).sum(dim=-1)  # [B]


def response_mask_from_attention(attention_mask: torch.Tensor, response_width: int) -> torch.Tensor:
    """The response half of a prompt+response attention mask (verl's layout).

    verl concatenates ``prompts [B, P]`` and ``responses [B, R]``; the response mask is
    the last ``R`` columns of ``attention_mask [B, P + R]``.
    """
    _check_mask(attention_mask)
    if not 0 < response_width <= attention_mask.shape[-1]:
        raise ValueError(
            f"response_width {response_width} must be in 1..{attention_mask.shape[-1]} "
            "(the attention mask's width)"
        )
    return attention_mask[:, -response_width:]  # [B, R]


def last_token_index(response_mask: torch.Tensor) -> torch.Tensor:
    """The position of each row's last valid token: ``[B, R] -> [B]`` (int64).

    Raises ValueError naming the rows whose mask is empty: such a row has no token
    to carry its reward, and silently dropping the reward would hide the bug upstream.
    """
    _check_mask(response_mask)
    width = response_mask.shape[-1]
    if width == 0 and response_mask.shape[0] > 0:
        raise ValueError("response_mask has no columns: no row has a token to carry a score")
    positions = torch.arange(width, device=response_mask.device)  # [R]
    # Invalid positions become -1, so the row maximum is the last valid position.
    index = torch.where(response_mask != 0, positions, -1).amax(dim=-1)  # [B]
    empty = (index < 0).nonzero().flatten().tolist()
    if empty:
        raise ValueError(f"response_mask rows {_short(empty)} have no valid token to carry a score")
    return index


def place_scores(scores: torch.Tensor, response_mask: torch.Tensor) -> torch.Tensor:
    """Put ``scores [B]`` on each row's last valid response token: ``-> [B, R]`` float32.

    All other positions are zero. Non-finite scores are refused (naming the rows):
    a NaN on one token would turn every advantage of its group into NaN.
    """
    index = last_token_index(response_mask)  # [B]
    scores = torch.as_tensor(scores, device=response_mask.device)
    if scores.dim() != 1 or scores.shape[0] != response_mask.shape[0]:
        raise ValueError(
            f"scores must have shape [{response_mask.shape[0]}] (one per row of response_mask), "
            f"got {list(scores.shape)}"
        )
    scores = scores.to(torch.float32)  # [B]
    bad = (~torch.isfinite(scores)).nonzero().flatten().tolist()
    if bad:
        raise ValueError(f"scores of rows {_short(bad)} are not finite: {scores[bad[:8]].tolist()}")
    rows = torch.arange(scores.shape[0], device=scores.device)  # [B]
    token_scores = torch.zeros(
        response_mask.shape, dtype=torch.float32, device=scores.device
    )  # [B, R]
    token_scores[rows, index] = scores
    return token_scores


def overlong_penalties(
    response_lengths: torch.Tensor,
    max_resp_len: int,
    buffer_len: int,
    penalty_factor: float = 1.0,
) -> torch.Tensor:
    """DAPO's soft overlong penalty for each row: ``[B] -> [B]`` float32, all ``<= 0``.

    Within ``max_resp_len - buffer_len`` tokens there is no penalty; across the buffer
    it falls linearly to ``-penalty_factor`` at ``max_resp_len`` (verl's DAPO formula).
    Take ``response_lengths`` from :func:`valid_response_length`. Each row goes through
    :func:`rewardkit.shaping.overlong.overlong_penalty`, so the formula and its
    argument checks live in one place; a batch is a few thousand rows, microseconds each.
    """
    lengths = torch.as_tensor(response_lengths)  # [B]
    if lengths.dim() != 1:
        raise ValueError(f"response_lengths must have shape [B], got {list(lengths.shape)}")
    penalties = [
        overlong_penalty(int(length), max_resp_len, buffer_len, penalty_factor)
        for length in lengths.tolist()
    ]
    return torch.tensor(penalties, dtype=torch.float32, device=lengths.device)  # [B]


def overlong_token_penalties(
    response_mask: torch.Tensor,
    max_resp_len: int,
    buffer_len: int,
    penalty_factor: float = 1.0,
) -> torch.Tensor:
    """The overlong penalty at token level: ``[B, R] -> [B, R]``, on each last valid token.

    Add it to token scores that were computed without it. Rows scored by rewardkit with
    ``reward.overlong_buffer.enable`` already include it (as the ``overlong`` component):
    adding it again would count it twice.
    """
    lengths = valid_response_length(response_mask)  # [B]
    penalties = overlong_penalties(lengths, max_resp_len, buffer_len, penalty_factor)  # [B]
    return place_scores(penalties, response_mask)  # [B, R]


def _check_mask(mask: torch.Tensor) -> None:
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"expected a torch.Tensor mask, got {type(mask).__name__}")
    if mask.dim() != 2:
        raise ValueError(f"a mask must have shape [B, R], got {list(mask.shape)}")


def _short(rows: list[int]) -> str:
    """At most eight row numbers: an error message, not a dump."""
    more = f" (+{len(rows) - 8} more)" if len(rows) > 8 else ""
    return ", ".join(map(str, rows[:8])) + more
