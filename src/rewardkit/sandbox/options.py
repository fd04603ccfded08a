"""How a :class:`~rewardkit.sandbox.Sandbox` runs: limits, concurrency, isolation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class SandboxOptions:
    """How a :class:`Sandbox` runs code. Request values are clamped to the ``max_*`` here."""

    max_concurrent: int | None = None
    """Runs at once; None: the number of cores this process may use."""
    max_queue: int = 10_000
    """Requests waiting for a slot beyond which new ones are refused (SandboxError)."""
    queue_timeout_s: float = 600.0
    """Longest wait for a slot before the request is answered SandboxError."""
    memory_limit_mb: int = 1024
    """Used when a request sends no positive ``memory_limit_MB``."""
    max_memory_mb: int = 4096
    """The most a request may ask for (larger requests are clamped to it). The limit is on
    the run's *total* memory: a memory cgroup where the host allows, else the sum of its
    processes' resident memory, measured every 50 ms."""
    memory_accounting: Literal["auto", "cgroup", "tree"] = "auto"
    """auto: a memory cgroup (v2, or v1's memory controller) where one can be made, else
    tree; cgroup: refuse to start without one; tree: always measure the process tree."""
    max_run_timeout_s: float = 300.0
    max_compile_timeout_s: float = 300.0
    compile_memory_mb: int = 2048
    """Address-space floor for compilers (g++ needs more than most programs)."""
    max_output_bytes: int = 8 * 1024 * 1024
    """Per stream; past it the run is killed and its output cut there."""
    max_file_mb: int = 64
    """RLIMIT_FSIZE: the largest file a run may write."""
    max_processes: int = 32
    """RLIMIT_NPROC per run (processes and threads), when running as a dedicated uid. It is
    also the most CPUs a run can keep busy at once: a fork bomb of spinning processes
    slows its concurrent neighbours."""
    nice: int = 0
    """Niceness of the programs. Each run is its own session, so where the kernel groups
    sessions (autogroup) a run, fork bomb included, gets one fair share of the CPU whatever
    its niceness; raising it mostly risks false timeouts on a busy host."""
    max_open_files: int = 256
    tmpfs_mb: int = 64
    """Size of each private tmpfs (/tmp, /dev/shm) in ``namespaces`` mode."""
    max_fetch_bytes: int = 16 * 1024 * 1024
    """Total bytes of the files one request gets back (``fetch_files``)."""
    max_fetch_files: int = 64
    """Files one request may fetch back, counted after resolving aliases (``./a`` is ``a``)."""
    workspace_mb: int = 256
    """Bytes a run may write into its directory: a tmpfs of this size in ``namespaces``
    mode; measured (with RLIMIT_FSIZE per file) and killed past it in ``basic`` mode."""
    allow_unisolated: bool = False
    """Start even where runs cannot be isolated from the server: not root (no uid of their
    own), or ``basic`` mode (asked for, or no namespaces: the host's files and network are
    visible). Off: such a sandbox refuses to start, saying why and what runs would reach."""
    isolation: Literal["auto", "namespaces", "basic"] = "auto"
    """auto: namespaces where the machine allows, else basic, which starts only with
    ``allow_unisolated`` (see the module docstring)."""
    python_executable: str | None = None
    uid_base: int | None = None
    """First of ``max_concurrent`` uids the runs use when started as root; None: random."""
    work_root: str | None = None
    """Directory under which run directories are made; None: the system temp directory."""
    extra_ro_paths: tuple[str, ...] = ()
    """More host directories made visible (read-only) in ``namespaces`` mode."""
    compile_cache: int = 256
    """Compiled programs kept (by language, code and files) for identical requests; 0: none."""
    compile_cache_mb: int = 256
    """Bytes the compile cache may hold on disk; the least recently used go first."""
