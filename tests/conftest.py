"""Shared fixtures. Everything runs on loopback with small, locally built parts."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def write_module(tmp_path: Path) -> Callable[[str, str], str]:
    """Write a Python file of user code into tmp_path and return its path."""

    def write(name: str, source: str) -> str:
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        return str(path)

    return write
