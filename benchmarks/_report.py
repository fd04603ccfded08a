"""Shared by the benchmark scripts: how a result lands in BENCHMARKS.md."""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_section"]


def write_section(heading: str, text: str, path: Path) -> None:
    """Replace the section that starts with ``heading`` (or append it), leaving the others."""
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    start = old.find(heading)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(heading))
        new = old[:start] + text + ("" if end < 0 else old[end:])
    path.write_text(new.rstrip("\n") + "\n")
