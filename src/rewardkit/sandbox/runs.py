"""What the scheduler, the spawner client and the host helpers pass between them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


class _SandboxFailure(Exception):
    """The sandbox, not the program, failed: answered as status SandboxError."""


@dataclass(frozen=True, slots=True)
class _Step:
    """One process to run: argv, limits and the knobs of its isolation."""

    argv: tuple[str, ...]
    timeout: float
    memory_mb: int
    jit: bool
    max_processes: int
    stack_mb: int | None = None
    stdin: bytes | None = None
    env: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class _Outcome:
    """What happened to one process."""

    return_code: int | None
    stdout: bytes
    stderr: bytes
    elapsed: float
    timed_out: bool = False
    overflowed: bool = False
    exceeded: str | None = None  # "memory" or "disk": the run was killed for its total


@dataclass(slots=True)
class _Slot:
    index: int
    uid: int | None  # None: run as the server's own user
    runs: int = 0


@dataclass(slots=True)
class _Runtime:
    """What :meth:`Sandbox.start` found out about the machine."""

    mode: Literal["namespaces", "basic"]
    base: str
    python: str | None
    tools: dict[str, str]
    languages: tuple[str, ...]
    ro_dirs: tuple[str, ...] = ()
    symlinks: tuple[tuple[str, str], ...] = ()
    reasons: list[str] = field(default_factory=list)
    cgroup: tuple[int, str] | None = None  # (version, parent of the runs' memory cgroups)
    seccomp: bool = False  # each run installs seccomp_filter's filter before it starts
