"""Shared by the benchmark scripts: how a result lands in BENCHMARKS.md."""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_section"]


def write_section(heading: str, text: str, path: Path, *, parent: str | None = None) -> None:
    """Replace the section that starts with ``heading``, leaving the others.

    A section runs to the next heading of its level or above; a ``## `` section's text
    stops at its first ``### `` subsection too, so that rewriting it keeps the subsections
    other runs wrote (the GPU runs under the CPU ones). A missing section is appended, or,
    with ``parent`` (a ``## `` heading present in the file), put at the end of that one.
    """
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    start = old.find(heading)
    if start < 0:
        at = _section_end(old, old.find(parent), parent) if parent and parent in old else -1
        if at < 0:
            new = old.rstrip("\n") + "\n\n" + text
        else:
            new = (
                old[:at].rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n\n" + old[at:].lstrip("\n")
            )
    else:
        end = _section_end(old, start, heading, own_text_only=True)
        new = old[:start] + text + ("" if end < 0 else old[end:])
    path.write_text(new.rstrip("\n") + "\n")


def _section_end(text: str, start: int, heading: str, *, own_text_only: bool = False) -> int:
    """Where the section at ``start`` ends (-1: at the end of ``text``)."""
    level = len(heading) - len(heading.lstrip("#"))
    stops = ["\n" + "#" * n + " " for n in range(1, level + 1)]
    if own_text_only:
        stops.append("\n" + "#" * (level + 1) + " ")
    ends = [e for e in (text.find(s, start + len(heading)) for s in stops) if e >= 0]
    return min(ends) if ends else -1
