"""Shared fixtures. Everything runs on loopback with small, locally built parts."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

# pyproject's addopts deselect slow and gpu tests (`-m "not slow and not gpu"`). On a
# machine with an NVIDIA GPU the gpu tests run too, unless the command line chose its own
# -m: CUDA code paths are tested wherever they can be.
_GPU_PRESENT = os.path.exists("/dev/nvidiactl")


def pytest_configure(config: pytest.Config) -> None:
    chose = any(arg == "-m" or arg.startswith("-m") for arg in config.invocation_params.args)
    if _GPU_PRESENT and not chose and config.option.markexpr == "not slow and not gpu":
        config.option.markexpr = "not slow"


@pytest.fixture
def write_module(tmp_path: Path) -> Callable[[str, str], str]:
    """Write a Python file of user code into tmp_path and return its path."""

    def write(name: str, source: str) -> str:
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        return str(path)

    return write


@pytest.fixture(scope="module")
def named_functions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """_support.user_functions.NAMED written once per test module, as a .py file."""
    from _support.user_functions import NAMED

    path = tmp_path_factory.mktemp("fns") / "named_functions.py"
    path.write_text(NAMED)
    return path


@pytest.fixture
def misbehaving(write_module: Callable[[str, str], str]) -> str:
    """_support.user_functions.MISBEHAVING as a .py file: its path."""
    from _support.user_functions import MISBEHAVING

    return write_module("misbehaving_reward", MISBEHAVING)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``-n``, ``--dist loadgroup``): a test module runs on one worker,
    so its module fixtures start once, and the Ray package, whose tests share one
    simulated cluster, is one group, handed out first."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        path = item.path.as_posix()
        group = "ray_backend" if _RAY in path else path
        item.add_marker(pytest.mark.xdist_group(group))
    # The Ray group is the longest: first, so that it never starts last (stable sort)
    items.sort(key=lambda item: _RAY not in item.path.as_posix())


_RAY = "/tests/ray_backend/"
