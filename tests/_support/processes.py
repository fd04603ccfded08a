"""Whether processes are gone: shared by the tests that kill workers and what they started."""

from __future__ import annotations

import time

__all__ = ["gone", "wait_gone"]


def gone(pid: int) -> bool:
    """No such process, or a zombie (dead, waiting for a parent that may never reap it):
    what a stray process must be after rewardkit killed it."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def wait_gone(pids: list[int], within_s: float = 10) -> list[int]:
    """The pids still running after ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and not all(gone(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if not gone(p)]
