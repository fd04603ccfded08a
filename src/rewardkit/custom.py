"""Loading a user's reward function: verl's ``custom_reward_function.path/name``.

``path`` is a ``.py`` file or an importable module name. The function has verl's
signature ``compute_score(data_source, solution_str, ground_truth, extra_info,
**reward_kwargs)``, may be sync or async, and returns a number or a dict with a
``score`` key (its other keys become the Result's ``extra``).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import math
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rewardkit.errors import ConfigError, ScorerError

__all__ = ["is_async_function", "load_function", "normalize_output"]


@functools.cache
def load_function(path: str, name: str) -> Callable[..., Any]:
    """Import ``name`` from a file or module; ConfigError naming the key if that fails."""
    module = _import(path)
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise ConfigError(
            f"reward.custom_reward_function.name: {path} has no callable named {name!r}"
            + _did_you_mean(module, name)
        )
    return fn


def _did_you_mean(module: Any, name: str) -> str:
    """`` (did you mean 'compute_score'?)``: the module's closest public callable, if any."""
    callables = [
        attr
        for attr, value in vars(module).items()
        if callable(value) and not attr.startswith("_") and not inspect.isclass(value)
    ]
    close = difflib.get_close_matches(name, callables, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def is_async_function(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - async callables
    )


def normalize_output(value: Any) -> tuple[float, dict[str, Any]]:
    """Turn a user function's return value into (score, extra); ScorerError if unusable."""
    extra: dict[str, Any] = {}
    if isinstance(value, Mapping):
        if "score" not in value:
            raise ScorerError(
                f"custom function returned a dict without 'score' (keys: {sorted(value)[:8]})"
            )
        extra = {str(k): v for k, v in value.items() if k != "score"}
        value = value["score"]
    if isinstance(value, str | bytes) or not hasattr(value, "__float__"):
        raise ScorerError(f"custom function returned {type(value).__name__}, expected a number")
    try:
        score = float(value)  # also takes bools and numpy/torch scalars
    except (TypeError, ValueError, OverflowError) as exc:  # an array, an int past 1e308
        raise ScorerError(
            f"custom function returned {type(value).__name__}, not usable as a number: {exc}"
        ) from None
    if not math.isfinite(score):
        raise ScorerError(f"custom function returned a non-finite score {score}")
    return score, extra


def _import(path: str) -> Any:
    file = Path(path)
    if path.endswith(".py") or file.is_file():
        if not file.is_file():
            raise ConfigError(f"reward.custom_reward_function.path: no such file {path}")
        # The same name in every process (str hashes differ between processes): a value
        # of a class from this file, pickled by a worker, is rebuilt by name in the parent.
        digest = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:16]
        module_name = f"rewardkit_custom_{digest}"
        if module_name in sys.modules:
            return sys.modules[module_name]
        spec = importlib.util.spec_from_file_location(module_name, file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise ConfigError(
                f"reward.custom_reward_function.path: importing {path} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return module
    try:
        return importlib.import_module(path)
    except Exception as exc:
        raise ConfigError(
            f"reward.custom_reward_function.path: cannot import module {path!r}: {exc}"
        ) from exc
