"""guards: the public surface: one explicit, sorted ``__all__`` that names everything exported."""

import inspect

import rewardkit


def test_all_is_sorted() -> None:
    assert rewardkit.__all__ == sorted(rewardkit.__all__)


def test_all_is_complete_and_resolvable() -> None:
    exported = {
        name
        for name, value in vars(rewardkit).items()
        if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
    }
    assert exported == set(rewardkit.__all__) - {"__version__"}
    for name in rewardkit.__all__:
        assert getattr(rewardkit, name) is not None


def test_errors_share_one_root() -> None:
    errors = [getattr(rewardkit, n) for n in rewardkit.__all__ if n.endswith(("Error", "Crashed"))]
    assert errors and all(issubclass(e, rewardkit.RewardkitError) for e in errors)
    assert not issubclass(
        rewardkit.ScorerTimeout, Exception
    )  # `except Exception` cannot swallow it
