"""An embedded code sandbox that speaks SandboxFusion's ``/run_code`` protocol.

``await Sandbox().run_code(RunCodeRequest(code=..., language="python", stdin=...))`` runs
untrusted code (model generations) and answers what SandboxFusion answers, so the same
request works here in-process, through :mod:`rewardkit.sandbox.server`, or against a
real SandboxFusion deployment.

How a run is started. The server never forks: a small spawner process per sandbox
(:mod:`rewardkit.sandbox.spawner_process`, stdlib only) does, so a run costs the same
however large the process holding the sandbox grows (forking a process with a model
loaded takes tens of milliseconds), and orphans are reaped by the spawner, not left to
an init that may not reap. The server feeds stdin and reads the output pipes on its
event loop; the spawner enforces the deadline.

Isolation, strongest first (``Sandbox.isolation`` reports what is on):

``namespaces`` (root with CAP_SYS_ADMIN on Linux; the default where available)
    Each run has its own PID, mount and IPC namespaces, and its concurrency slot's own
    network namespace (no interface up: no network at all, not even loopback, and no
    abstract Unix socket shared with a run in flight at the same time; a slot's runs follow
    each other and everything a run opened dies with it); all runs share one UTS
    namespace (hostname ``sandbox``). The file system is a minimal read-only root:
    ``/usr``, ``/etc``, ``/bin``, ``/lib*`` (and the directory of a configured
    interpreter) bound read-only; ``/dev`` with only null, zero, full, random and
    urandom; ``/proc`` of the run's PID namespace; fresh size-limited tmpfs on ``/tmp`` and
    ``/dev/shm``; and the run's fresh directory at ``/workspace``, the only place it can
    write, on its slot's tmpfs of ``workspace_mb`` (mounted in the spawner's namespace; the
    server reaches it through ``/proc/<spawner>/root``). Nothing else of the host (home directories, datasets, the repository) is
    visible, so a policy cannot read test answers off the disk. The program runs under a
    tiny init (pid 1 of its namespace); when the program exits, the init exits and the
    kernel kills every process left in the namespace, so nothing outlives a run, not even
    a daemon that double-forked into its own session. None of this touches the host's
    mount table: the mounts live in the spawner's private mount namespace.
``basic`` (no CAP_SYS_ADMIN, e.g. Docker's default seccomp profile, or not Linux)
    A fresh temporary working directory and a new session whose group is killed at the
    end. As root the run still drops to an unprivileged uid, and after it ends every
    process of that uid is killed, so ``setsid`` escapes die too; the host file system is
    visible (readable as its permissions allow) and the network is the host's. A sandbox
    in this mode (asked for, or what ``auto`` finds) refuses to start unless
    ``allow_unisolated`` is set, and its message names what runs would reach.

In both modes every run starts under a seccomp filter (:mod:`.seccomp_filter`): no new
namespaces, mounts, ptrace, BPF, kernel keys or modules. Without libseccomp on the
machine, the sandbox refuses to start unless ``allow_unisolated`` is set.

In both modes, when started as root, each concurrency slot runs as its own unprivileged
uid (from a random block of high uids: no passwd entry, no groups, no capabilities,
``PR_SET_NO_NEW_PRIVS``), so the program cannot signal the server
(``os.kill(os.getppid(), 9)`` gets EPERM) nor another run, and RLIMIT_NPROC bounds its
processes and threads (a fork bomb stops at ``max_processes``). Resource limits:
RLIMIT_CPU (the run timeout), RLIMIT_AS from ``memory_limit_MB`` (RLIMIT_DATA for
runtimes that reserve huge address ranges: Java, Node, Go), RLIMIT_FSIZE,
RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_CORE 0. Each run is its own session (with the
kernel's autogroup scheduling, its own share of the CPU, so a fork bomb slows mostly
itself). Output past ``max_output_bytes`` per stream kills the run. The wall-clock
``run_timeout`` kills the whole run. The run's *total* memory is bounded too: each run
gets a memory cgroup (v2 where the memory controller is delegated to us, else v1's
memory controller) where one can be made, else the spawner sums the anonymous resident
memory of the run's process tree every 50 ms and kills the run past the limit. In
``basic`` mode the run's directory is measured the same way against ``workspace_mb``.

Started as an ordinary user there is no uid to drop to: the program would run as the
server's user and could signal it, read its files. Such a
sandbox refuses to start unless ``allow_unisolated`` is set.

Concurrency: at most ``max_concurrent`` runs at once (default: the cores this process may
use), up to ``max_queue`` more waiting at most ``queue_timeout_s``; beyond that a request
is answered ``SandboxError`` at once. A freed slot goes to the requester holding the
fewest (:func:`rewardkit._fair.fair_share`; in the reward engine, one per request), not
to the oldest request. All asyncio, no thread per run.

Languages: those of python, cpp, nodejs, java, go, rust, bash, perl, ruby, php, lua that
are installed where the unprivileged uid can execute them (``Sandbox.languages``; as root,
nothing under ``/root``). Python is ``python_executable`` if given, else the first
interpreter the sandbox user can run (``sys.executable``, then ``/usr/bin/python3``):
point it at an interpreter with the packages the programs may import.

The package, by layer: :mod:`.protocol` (the wire types), :mod:`.options`,
:mod:`.languages`, :mod:`.runs` (what the layers below pass around), :mod:`.host` (the
machine: isolation, tools, uids, cgroups, files), :mod:`.spawner` (the client of the
spawner process, :mod:`.spawner_process`, which runs as a stdlib-only script),
:mod:`.core` (the scheduler, :class:`Sandbox`) and :mod:`.server` (the HTTP front).
Importing the wire types (``rewardkit.sandbox.protocol``) loads none of the rest: the
scheduler is imported on first use of :class:`Sandbox` or :func:`run_code`. The package
imports nothing of rewardkit but its own modules and the leaf helpers (``_system``,
``errors``): verifiers use it, it uses no verifier.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from rewardkit.sandbox.options import SandboxOptions
from rewardkit.sandbox.protocol import (
    CommandRunResult,
    CommandRunStatus,
    Language,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
)

if TYPE_CHECKING:
    from rewardkit.sandbox.core import Sandbox, run_code

__all__ = [
    "CommandRunResult",
    "CommandRunStatus",
    "Language",
    "RunCodeRequest",
    "RunCodeResponse",
    "RunStatus",
    "Sandbox",
    "SandboxOptions",
    "run_code",
]

_LAZY = {
    "Sandbox": "core",
    "run_code": "core",
    "_DEFAULT": "core",  # the per-event-loop default sandbox of run_code
    "_namespaces_unavailable": "host",  # why isolation is basic on this machine, if it is
}


def __getattr__(name: str) -> object:
    """The scheduler and host helpers, imported on first use (the wire types need neither)."""
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
