"""The server's end of the spawner (:mod:`rewardkit.sandbox.spawner_process`): start,
request a run, collect its exit report and output pipes."""

from __future__ import annotations

import array
import asyncio
import contextlib
import importlib.util
import json
import os
import socket
import sys
from collections.abc import Sequence
from typing import Any

from rewardkit.sandbox.runs import _SandboxFailure


class _SpawnerClient:
    """The server's side of the spawner: one socket, replies matched to runs by id."""

    def __init__(self, proc: asyncio.subprocess.Process, sock: socket.socket) -> None:
        self.proc = proc
        self.sock = sock
        self.loop = asyncio.get_running_loop()
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0
        self.alive = True
        self.prepared: asyncio.Future[str | None] | None = None
        self.namespaced = False
        self.loop.add_reader(sock.fileno(), self._on_readable)

    @classmethod
    async def start(cls, prepare: dict[str, Any] | None) -> _SpawnerClient:
        """Start a spawner; with ``prepare``, wait until it has built the runs' namespaces."""
        client = await cls._launch()
        if prepare is None:
            return client
        client.namespaced = True
        client.prepared = client.loop.create_future()
        client.sock.send(json.dumps(prepare).encode())
        try:
            async with asyncio.timeout(30):
                error = await client.prepared
        except BaseException:
            await client.close()
            raise
        if error:
            await client.close()
            raise _SandboxFailure(f"sandbox namespaces: {error}")
        return client

    @classmethod
    async def _launch(cls) -> _SpawnerClient:
        script = _spawner_file()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-S", "-E", "-s", script, str(theirs.fileno()), str(os.getpid()),
                pass_fds=(theirs.fileno(),), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            ours.close()
            raise _SandboxFailure(f"cannot start the sandbox spawner: {exc}") from exc
        finally:
            theirs.close()
        ours.setblocking(False)
        return cls(proc, ours)

    async def spawn(
        self, message: dict[str, Any], fds: Sequence[int]
    ) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        """Hand one run to the spawner; the future resolves with its exit report."""
        if not self.alive:
            raise _SandboxFailure("the sandbox spawner exited")
        self.next_id += 1
        run_id = self.next_id
        data = json.dumps({**message, "op": "spawn", "id": run_id}).encode()
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
        finished = self.pending[run_id] = self.loop.create_future()
        for _ in range(1000):
            try:
                self.sock.sendmsg([data], rights)
                return run_id, finished
            except BlockingIOError:  # the spawner is behind: its queue drains in microseconds
                await asyncio.sleep(0.001)
            except OSError as exc:
                self.pending.pop(run_id, None)
                raise _SandboxFailure(f"the sandbox spawner is unreachable: {exc}") from exc
        self.pending.pop(run_id, None)
        raise _SandboxFailure("the sandbox spawner does not accept requests")

    def view(self, path: str) -> str:
        """Where the server finds ``path`` as the spawner sees it: the slots' tmpfs live in
        the spawner's private mount namespace, reached through ``/proc/<pid>/root``."""
        return f"/proc/{self.proc.pid}/root{path}" if self.namespaced else path

    def kill(self, run_id: int) -> None:
        with contextlib.suppress(OSError):
            self.sock.send(json.dumps({"op": "kill", "id": run_id}).encode())

    async def close(self) -> None:
        """Close the socket: the spawner kills what still runs and exits."""
        self._dead("the sandbox was closed")
        try:
            await asyncio.wait_for(self.proc.wait(), _KILL_GRACE_S)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()

    def _on_readable(self) -> None:
        while True:
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if not data:
                self._dead("the sandbox spawner exited")
                return
            report = json.loads(data)
            if report["op"] == "prepared":
                if self.prepared is not None and not self.prepared.done():
                    self.prepared.set_result(report["error"])
                continue
            finished = self.pending.pop(report["id"], None)
            if finished is not None and not finished.done():
                finished.set_result(report)

    def _dead(self, reason: str) -> None:
        if not self.alive:
            return
        self.alive = False
        self.loop.remove_reader(self.sock.fileno())
        self.sock.close()
        waiting: list[asyncio.Future[Any]] = [*self.pending.values()]
        waiting += [self.prepared] if self.prepared is not None else []
        for finished in waiting:
            if not finished.done():
                finished.set_exception(_SandboxFailure(reason))
        self.pending.clear()


async def _await_exit(spawner: _SpawnerClient, run_id: int, finished: asyncio.Future[dict[str, Any]],
                      overflow: asyncio.Event, timeout: float) -> dict[str, Any]:  # fmt: skip
    """The run's exit report. The spawner enforces the timeout; we kill on overflow or cancel."""
    overflowed = asyncio.ensure_future(overflow.wait())
    try:
        # The margin only matters if the spawner itself is stuck.
        either: set[asyncio.Future[Any]] = {finished, overflowed}
        await asyncio.wait(either, timeout=timeout + 30.0, return_when=asyncio.FIRST_COMPLETED)
        if not finished.done():
            spawner.kill(run_id)
            async with asyncio.timeout(_KILL_GRACE_S):
                await asyncio.shield(finished)
        return finished.result()
    except TimeoutError:
        raise _SandboxFailure("the sandbox spawner did not report the run's end") from None
    except asyncio.CancelledError:
        spawner.kill(run_id)  # the caller went away: the run goes too
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(_KILL_GRACE_S):
                await asyncio.shield(finished)
        raise
    finally:
        overflowed.cancel()


class _Capture:
    """Reads one output pipe into memory up to ``cap`` bytes; past it, flags the overflow."""

    def __init__(self, fd: int, cap: int, overflow: asyncio.Event) -> None:
        self.fd = fd
        self.cap = cap
        self.overflow = overflow
        self.data = bytearray()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        os.set_blocking(self.fd, False)
        loop.add_reader(self.fd, self._readable, done)
        try:
            await done
        finally:
            loop.remove_reader(self.fd)
            os.close(self.fd)

    def _readable(self, done: asyncio.Future[None]) -> None:
        try:
            chunk = os.read(self.fd, _CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        room = self.cap - len(self.data)
        self.data += chunk[: max(room, 0)]
        if len(chunk) > room:
            self.overflow.set()
        if (not chunk or len(chunk) > room) and not done.done():
            done.set_result(None)


async def _feed(fd: int, data: bytes | None) -> None:
    """Write stdin without blocking the loop; a program that stops reading is its business."""
    loop = asyncio.get_running_loop()
    view = memoryview(data or b"")
    os.set_blocking(fd, False)
    try:
        while view:
            try:
                view = view[os.write(fd, view[:_CHUNK]) :]
            except BlockingIOError:
                writable = loop.create_future()
                loop.add_writer(fd, writable.set_result, None)
                try:
                    await writable
                finally:
                    loop.remove_writer(fd)
            except OSError:  # EPIPE: the program exited or closed its stdin
                return
    finally:
        os.close(fd)


def _pipes() -> tuple[list[int], list[int]]:
    """(ours, theirs): our stdin writer and output readers; the run's stdin, stdout, stderr."""
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    return [stdin_w, out_r, err_r], [stdin_r, out_w, err_w]


def _close_all(fds: Sequence[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


_CHUNK = 64 * 1024
_KILL_GRACE_S = 5.0


def _spawner_file() -> str:
    """The file of :mod:`rewardkit.sandbox.spawner_process`, found as a module.

    It runs by its file (``python -S -E -s FILE``), not ``-m``: ``-m`` would import
    ``rewardkit`` and this package into the spawner first, making every fork dearer, and
    without site packages (``-S``) an installed rewardkit is not on the path to import.
    """
    spec = importlib.util.find_spec("rewardkit.sandbox.spawner_process")
    if spec is None or spec.origin is None:  # a broken install: no spawner to run
        raise _SandboxFailure("cannot find rewardkit.sandbox.spawner_process")
    return spec.origin
