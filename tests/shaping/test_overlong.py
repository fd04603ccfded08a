"""guards: DAPO's overlong penalty: free up to max - buffer, then linear down to -factor."""

from __future__ import annotations

import pytest

from rewardkit.shaping.overlong import overlong_penalty


@pytest.mark.parametrize(
    ("length", "expected"),
    [(0, 0.0), (3000, 0.0), (3072, 0.0), (3073, -1 / 1024), (3584, -0.5), (4096, -1.0)],
)
def test_penalty_grows_linearly_in_the_buffer(length: int, expected: float) -> None:
    assert overlong_penalty(
        length, max_resp_len=4096, buffer_len=1024, penalty_factor=1.0
    ) == pytest.approx(expected)


def test_factor_scales_the_penalty() -> None:
    assert overlong_penalty(4096, 4096, 1024, 0.5) == pytest.approx(-0.5)
    assert overlong_penalty(4096, 4096, 1024, 0.0) == 0.0


def test_buffer_as_long_as_the_limit() -> None:
    assert overlong_penalty(50, 100, 100, 1.0) == pytest.approx(-0.5)


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((-1, 4096, 1024, 1.0), "response_length"),
        ((1.5, 4096, 1024, 1.0), "response_length"),
        ((True, 4096, 1024, 1.0), "response_length"),
        ((10, 0, 1024, 1.0), "max_resp_len"),
        ((10, 4096, 0, 1.0), "buffer_len"),
        ((10, 1024, 4096, 1.0), "buffer_len"),
        ((10, 4096, 1024, -1.0), "penalty_factor"),
        ((10, 4096, 1024, float("nan")), "penalty_factor"),
        ((10, 4096, 1024, "1"), "penalty_factor"),
    ],
)
def test_bad_arguments_are_named(args: tuple[object, ...], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        overlong_penalty(*args)  # type: ignore[arg-type]
