"""guards: rewardkit.tokens: token placement and the DAPO overlong penalty, by hand-computed tensors."""

from __future__ import annotations

import pytest
import torch

from rewardkit.tokens import (
    last_token_index,
    overlong_penalties,
    overlong_token_penalties,
    place_scores,
    response_mask_from_attention,
    valid_response_length,
)


def test_right_aligned_scores_land_on_the_last_valid_token():
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]])
    out = place_scores(torch.tensor([0.5, -1.0]), mask)
    expected = torch.tensor([[0, 0, 0.5, 0, 0], [-1.0, 0, 0, 0, 0]])
    assert out.dtype == torch.float32
    assert torch.equal(out, expected)


def test_left_aligned_and_holed_masks():
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 0, 1, 0]], dtype=torch.bool)
    assert last_token_index(mask).tolist() == [4, 3]
    out = place_scores(torch.tensor([2.0, 3.0]), mask)
    assert torch.equal(out, torch.tensor([[0, 0, 0, 0, 2.0], [0, 0, 0, 3.0, 0]]))


def test_float_mask_and_python_scores():
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    assert place_scores([1], mask).tolist() == [[0.0, 1.0, 0.0]]


def test_empty_row_is_an_error_naming_the_rows():
    mask = torch.tensor([[1, 0], [0, 0], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match=r"rows 1, 3 have no valid token"):
        place_scores(torch.zeros(4), mask)


def test_mask_without_columns_is_an_error():
    with pytest.raises(ValueError, match="no columns"):
        last_token_index(torch.zeros(2, 0))


def test_scores_must_pair_with_rows_and_be_finite():
    mask = torch.ones(2, 3)
    with pytest.raises(ValueError, match=r"shape \[2\]"):
        place_scores(torch.zeros(3), mask)
    with pytest.raises(ValueError, match=r"rows 1 are not finite"):
        place_scores(torch.tensor([0.0, float("nan")]), mask)
    with pytest.raises(ValueError, match=r"shape \[B, R\]"):
        place_scores(torch.zeros(2), torch.ones(2, 3, 1))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        valid_response_length([[1, 0]])


def test_valid_response_length_counts_nonzero_tokens():
    mask = torch.tensor([[1, 1, 1, 0, 0], [0, 0, 1, 1, 1], [0, 0, 0, 0, 0]])
    assert valid_response_length(mask).tolist() == [3, 3, 0]


def test_response_mask_from_verl_attention_layout():
    # prompts are left-padded to width 3, responses right-padded to width 4
    attention = torch.tensor([[0, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1]])
    mask = response_mask_from_attention(attention, 4)
    assert mask.tolist() == [[1, 1, 0, 0], [1, 1, 1, 1]]
    assert valid_response_length(mask).tolist() == [2, 4]
    with pytest.raises(ValueError, match="response_width 8"):
        response_mask_from_attention(attention, 8)


def test_overlong_penalty_matches_dapo_formula():
    # max 20, buffer 4: free up to 16 tokens, then -1/4 per token (times the factor)
    lengths = torch.tensor([10, 16, 17, 18, 20])
    assert overlong_penalties(lengths, 20, 4).tolist() == [0.0, 0.0, -0.25, -0.5, -1.0]
    assert overlong_penalties(torch.tensor([19]), 20, 4, 0.5).tolist() == [-0.375]


def test_overlong_penalty_from_a_mask():
    mask = torch.tensor([[1] * 6 + [0] * 2, [1] * 8])
    lengths = valid_response_length(mask)  # [6, 8]
    assert overlong_penalties(lengths, max_resp_len=8, buffer_len=4).tolist() == [-0.5, -1.0]


def test_overlong_penalty_on_tokens():
    mask = torch.tensor([[1] * 6 + [0] * 2, [1] * 8, [0, 0, 1, 1, 0, 0, 0, 0]])
    expected = torch.zeros(3, 8)
    expected[0, 5], expected[1, 7] = -0.5, -1.0  # lengths 6 and 8; the third (2) is free
    assert torch.equal(overlong_token_penalties(mask, max_resp_len=8, buffer_len=4), expected)


def test_overlong_penalty_past_the_limit_is_not_clamped_like_verl():
    assert overlong_penalties(torch.tensor([24]), 20, 4).tolist() == [-2.0]


def test_overlong_penalty_rejects_bad_buffers():
    with pytest.raises(ValueError, match="buffer_len"):
        overlong_penalties(torch.tensor([1]), 20, 0)
    with pytest.raises(ValueError, match="must not exceed max_resp_len"):
        overlong_penalties(torch.tensor([1]), 3, 4)
    with pytest.raises(ValueError, match=r"shape \[B\]"):
        overlong_penalties(torch.ones(2, 2), 20, 4)
