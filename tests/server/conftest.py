"""The reward server's tests start a real one with ``running_server`` (tests/_support/serving.py)."""

from __future__ import annotations

import pytest

from _support.serving import running_server


@pytest.fixture(scope="session")
def start_server():
    """The ``running_server`` context manager, as a fixture."""
    return running_server
