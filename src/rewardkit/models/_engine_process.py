"""One replica's engine as a supervised process group, on whichever machine runs this.

The local fleet (rewardkit.models.managed) and each Ray replica actor
(rewardkit.models._fleet_ray) start, watch and stop their engine with these functions,
so a replica runs under the same supervisor wherever it is placed. A leaf of the models
package: it imports nothing of rewardkit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["EngineProcess", "SlotError", "free_port", "log_tail"]

LOG_TAIL_LINES = 20

# Run as `python -c SUPERVISE PARENT_PID ARGV...`, as the leader of the replica's own
# process group: it arms PR_SET_PDEATHSIG (SIGHUP when the thread that started it ends),
# starts the engine as its child, and waits. Its parent gone, it SIGKILLs the whole group
# (the engine and whatever the engine started), so a crash of rewardkit (or of the Ray
# actor that hosts the replica) leaves no orphan. A SIGTERM to the group (a normal stop)
# reaches the engine, which shuts down as it does; the wrapper ignores it and exits with
# the engine's exit status.
#
# A second child, the watchdog, does the same one level down: PR_SET_PDEATHSIG armed on
# the supervisor. Ray SIGKILLs a dead actor's direct children (the supervisor) before
# anything else can run there; the watchdog outlives it by design and takes the group
# down. It also does so when the supervisor exits normally, which reaps what the engine
# left behind in its group.
SUPERVISE = """
import ctypes, os, signal, sys
def down(*_):
    os.killpg(0, signal.SIGKILL)
def guard(parent):
    signal.signal(signal.SIGHUP, down)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGHUP, 0, 0, 0)
    if os.getppid() != parent:
        down()
guard(int(sys.argv[1]))
supervisor = os.getpid()
if os.fork() == 0:
    guard(supervisor)
    while True:
        signal.pause()
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.execvp(sys.argv[2], sys.argv[2:])
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


class SlotError(Exception):
    """A replica could not be placed or launched where it was to run (e.g. its Ray actor died)."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port of ``host`` that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def executable(name: str) -> str:
    """``name`` on PATH, else next to this Python (a venv's console scripts)."""
    found = shutil.which(name)
    if found:
        return found
    sibling = Path(sys.executable).parent / name
    return str(sibling) if sibling.exists() else name


class EngineProcess:
    """A replica's engine under the supervisor, in its own process group, logging to ``log_path``.

    Start it on a thread that lives as long as the replica should: the supervisor's
    PR_SET_PDEATHSIG fires when that thread ends.
    """

    def __init__(
        self, argv: list[str], extra_env: dict[str, str], log_path: Path, cwd: Path
    ) -> None:
        argv = list(argv)
        argv[0] = executable(argv[0])
        env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"), **extra_env}
        wrapper = [sys.executable, "-c", SUPERVISE, str(os.getpid())]
        self.argv = argv
        self.log_path = log_path
        with open(log_path, "ab") as log:
            log.write(f"--- rewardkit: starting {' '.join(argv)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                [*wrapper, *argv],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killpg reaches its children
                env=env,
                cwd=cwd,
            )

    @property
    def pid(self) -> int:
        """The supervisor's pid, which is also the process group's id."""
        return self.proc.pid

    def poll(self) -> int | None:
        """The exit code once the supervisor (and so the engine) has ended, else None."""
        return self.proc.poll()

    def signal(self, sig: int) -> None:
        """Signal the whole process group (the engine and what it started)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def stop(self, grace_s: float) -> None:
        """SIGTERM to the group, SIGKILL to what is left after ``grace_s``; reaped."""
        self.signal(signal.SIGTERM)
        end = time.monotonic() + grace_s
        while time.monotonic() < end and self.proc.poll() is None:
            time.sleep(0.05)
        self.signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)

    def tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last lines of the replica's log."""
        return log_tail(self.log_path, lines)


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of the log at ``path`` ("(no log)" when it cannot be read)."""
    try:
        text = path.read_bytes()[-16_384:].decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])
