"""The sandbox's spawner: a small process that forks, isolates and reaps every run.

:class:`rewardkit.sandbox.Sandbox` starts one per instance, as a script with
no rewardkit imports (``python -S -E -s spawner_process.py SOCKET_FD PARENT_PID``), so
forking it costs little however large the server process grows (forking a process with
a model loaded takes tens of milliseconds). Requests arrive on a SOCK_SEQPACKET socket,
one JSON message each; a spawn carries the run's stdin, stdout and stderr as SCM_RIGHTS
descriptors. Replies are JSON messages too.

``namespaces`` mode. A ``prepare`` request makes the spawner enter its own mount, network
and UTS namespaces and build, once, the minimal read-only root that every run will see
(read-only binds of /usr, /etc, ..., a /dev of harmless devices). The network namespace
has no interface up, and all runs share it: no network, not even loopback. Each run is
then two processes::

    spawner ── init (pid 1 of the run's own PID namespace: builds the run's mount and
                     IPC namespaces, reaps, reports) ── program (posix_spawn'd)

The init builds the run's mounts as root, then becomes the run's unprivileged user with
its limits and starts the program with posix_spawn (vfork, no copy of itself). It reports
the program's wait status on a pipe and exits when the program exits, which makes the
kernel kill and reap whatever the program left in its namespace.

``basic`` mode: the program is the spawner's child, in a new session. The spawner is a
child subreaper, so orphans of such runs are reaped here, not left to an init that may
never reap them (this machine's pid 1, for one, does not).

Every run has a hard deadline enforced here, however busy the server's event loop is.

Requests: ``{"op": "prepare", "root", "ro_dirs", "symlinks"}``; ``{"op": "spawn", "id",
"argv", "env", "mode", "cwd", "workdir", "root", "tmpfs", "limits", "uid", "nice",
"timeout", "seccomp"}`` with three descriptors; ``{"op": "kill", "id"}``. Replies: ``{"op":
"prepared", "error"}``; ``{"op": "exit", "id", "status", "elapsed", "timed_out",
"error"}`` where ``status`` is the program's raw wait status (None when it was killed
before reporting) and ``error`` says why the sandbox itself could not run it.
"""

from __future__ import annotations

import array
import ctypes
import json
import os
import platform
import resource
import select
import signal
import socket
import struct
import sys
import time

if __package__:  # imported as rewardkit.sandbox.spawner_process (type checks, tests)
    from rewardkit.sandbox import seccomp_filter
else:  # run as a script (``python -S FILE``): this file's folder is sys.path[0]
    import seccomp_filter  # type: ignore[import-not-found,no-redef]

# Annotations only: never evaluated (the future import), and typing is not even imported
# when the spawner runs, to keep the process that every run is forked from small.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Message = dict[str, Any]  # a JSON request or reply

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MNT_DETACH = 2
_RO = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}.get(platform.machine())
_DEVICES = ("null", "zero", "full", "random", "urandom")
_DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
              ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"))  # fmt: skip
_STATUS = struct.Struct("<id")  # the program's wait status, its run time in seconds
_MAX_MESSAGE = 1 << 20
_RESET_SIGNALS = (signal.SIGCHLD, signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ)
_POLL_S = 0.05  # how often runs without a memory cgroup are measured
_MAX_ENTRIES = 20_000  # files a run's directory may hold (basic mode's accounting)
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _load_libc() -> Any:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.unshare.argtypes = [ctypes.c_int]
        libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.mount.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_ulong,
            ctypes.c_char_p,
        ]
        libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        libc.prctl.argtypes = [
            ctypes.c_int,
            ctypes.c_ulong,
            ctypes.c_ulong,
            ctypes.c_ulong,
            ctypes.c_ulong,
        ]
        libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        libc.syscall.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_char_p]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC: Any = _load_libc() if sys.platform.startswith("linux") else None
_MAXFD = os.sysconf("SC_OPEN_MAX")


class _Run:
    __slots__ = ("account", "cgroup", "deadline", "exceeded", "id", "mode", "pid", "started",
                 "status_r", "timed_out", "uid")  # fmt: skip

    def __init__(
        self, run_id: int, pid: int, mode: str, status_r: int, timeout: float, uid: int | None
    ) -> None:
        self.id = run_id
        self.pid = pid
        self.mode = mode
        self.status_r = status_r
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.timed_out = False
        self.uid = uid
        self.cgroup: str | None = None  # the run's memory cgroup directory, when there is one
        self.account: tuple[int | None, str, int | None] | None = (
            None  # (memory bytes | None, workdir, disk bytes | None): polled here
        )
        self.exceeded: str | None = None  # "memory" or "disk" when accounting killed the run


class Spawner:
    """The spawner's loop: requests from the socket, SIGCHLD, deadlines."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.runs: dict[int, _Run] = {}  # pid of the spawner's child -> _Run
        self.by_id: dict[int, _Run] = {}
        self.own_pid_ns: int | None = None  # set by prepare: where new children go after each run's
        self.stale_cgroups: list[str] = []  # run cgroups not yet empty when their run ended
        self.slot_netns: list[int] = []  # one network namespace per concurrency slot (prepare)
        self.next_poll = 0.0

    def serve(self) -> None:
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLIN)
        poller.register(wake_r, select.POLLIN)
        while True:
            for fd, _ in poller.poll(self._wait_ms()):
                if fd == wake_r:
                    _drain(wake_r)
                elif not self._receive():
                    self._shutdown()
                    return
            self._reap()
            self._enforce_deadlines()
            self._enforce_accounts()

    def _wait_ms(self) -> int | None:
        deadlines = [run.deadline for run in self.runs.values() if not run.timed_out]
        if any(run.account is not None for run in self.runs.values()) or self.stale_cgroups:
            deadlines.append(self.next_poll)
        if not deadlines:
            return None  # SIGCHLD or a request wakes us
        return max(0, int((min(deadlines) - time.monotonic()) * 1000) + 1)

    def _enforce_accounts(self) -> None:
        """Without a memory cgroup: sum the run's processes (and its files) and kill past it."""
        now = time.monotonic()
        if now < self.next_poll:
            return
        self.next_poll = now + _POLL_S
        self.stale_cgroups = [path for path in self.stale_cgroups if not _remove_cgroup(path)]
        for run in self.runs.values():
            if run.account is None or run.exceeded or run.timed_out:
                continue
            memory, workdir, disk = run.account
            if memory is not None and _tree_memory(run.pid) > memory:
                run.exceeded = "memory"
            elif disk is not None and _disk_usage(workdir, disk) > disk:
                run.exceeded = "disk"
            if run.exceeded:
                _kill_run(run)

    def _receive(self) -> bool:
        try:
            data, ancdata, _, _ = self.sock.recvmsg(_MAX_MESSAGE, socket.CMSG_SPACE(16 * 4))
        except InterruptedError:
            return True
        if not data:
            return False
        fds: list[int] = []
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(array.array("i", payload[: len(payload) - len(payload) % 4]))
        message = json.loads(data)
        op = message["op"]
        if op == "spawn":
            self._spawn(message, fds)
            return True
        for fd in fds:
            os.close(fd)
        if op == "kill" and message["id"] in self.by_id:
            _kill_run(self.by_id[message["id"]])
        elif op == "prepare":
            self._prepare(message)
        return True

    def _prepare(self, message: Message) -> None:
        try:
            _enter_own_namespaces(message)
            self.own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            self.slot_netns = _slot_network_namespaces(len(message.get("slots", ())))
            error = None
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
        self._send({"op": "prepared", "error": error})

    def _spawn(self, message: Message, fds: list[int]) -> None:
        status_r, status_w = os.pipe2(os.O_CLOEXEC)  # close-on-exec: a successful exec closes it
        namespaced = message["mode"] == "namespaces"
        cgroup = None
        try:
            cgroup = _make_cgroup(message.get("cgroup"), message["id"])
            message["cgroup_procs"] = cgroup and os.path.join(cgroup, "cgroup.procs")
            pid = self._fork(namespaced)
        except OSError as exc:
            for fd in (*fds, status_r, status_w):
                os.close(fd)
            if cgroup:
                _remove_cgroup(cgroup)
            self._reply(message["id"], None, 0.0, False, f"fork: {exc}")
            return
        if pid == 0:
            try:
                slot = message.get("slot")
                if slot is not None and slot < len(self.slot_netns):
                    # The slot's own network: runs at the same time never share one (so no
                    # abstract Unix socket between them); runs of a slot follow each other,
                    # and everything a run opened died with it. Made once: a namespace per
                    # run would cost milliseconds of each.
                    _check(_LIBC.setns(self.slot_netns[slot], _CLONE_NEWNET), "setns(net)")
                _child(message, fds, status_w)
            finally:
                os._exit(127)
        for fd in (*fds, status_w):
            os.close(fd)
        run = _Run(
            message["id"], pid, message["mode"], status_r, float(message["timeout"]), message["uid"]
        )
        run.cgroup = cgroup
        account = message.get("account")
        if account:
            run.account = (account["memory"], message["workdir"], account["disk"])
        self.runs[pid] = run
        self.by_id[run.id] = run

    def _fork(self, namespaced: bool) -> int:
        if not namespaced:
            return os.fork()
        # The next child is pid 1 of a new PID namespace; our later children go back to ours.
        _check(_LIBC.unshare(_CLONE_NEWPID), "unshare(CLONE_NEWPID)")
        try:
            pid = os.fork()
        except OSError:
            _LIBC.setns(self.own_pid_ns, _CLONE_NEWPID)
            raise
        if pid:
            _check(_LIBC.setns(self.own_pid_ns, _CLONE_NEWPID), "setns(own PID namespace)")
        return pid

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            run = self.runs.pop(pid, None)
            if run is not None:  # else an orphan of a basic run: reaped, nothing to report
                self._finish(run, status)

    def _finish(self, run: _Run, status: int) -> None:
        elapsed = time.monotonic() - run.started
        report = _read_all(run.status_r)
        os.close(run.status_r)
        self.by_id.pop(run.id, None)
        error: str | None = None
        program_status: int | None = status if run.mode == "basic" else None
        if report.startswith(b"E"):
            error = report[1:].decode(errors="replace")
        elif run.mode != "basic" and len(report) >= 1 + _STATUS.size and report[:1] == b"S":
            program_status, elapsed = _STATUS.unpack_from(report, 1)
        if run.mode == "basic":
            _kill_leftovers(run)
        exceeded = run.exceeded
        if run.cgroup is not None:
            if _oom_kills(run.cgroup):
                exceeded = "memory"
            if not _remove_cgroup(run.cgroup):
                self.stale_cgroups.append(run.cgroup)  # its last processes are still exiting
        self._reply(run.id, program_status, elapsed, run.timed_out, error, exceeded)

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for run in self.runs.values():
            if not run.timed_out and now >= run.deadline:
                run.timed_out = True
                _kill_run(run)

    def _reply(
        self,
        run_id: int,
        status: int | None,
        elapsed: float,
        timed_out: bool,
        error: str | None,
        exceeded: str | None = None,
    ) -> None:
        self._send({"op": "exit", "id": run_id, "status": status, "elapsed": elapsed,
                    "timed_out": timed_out, "error": error, "exceeded": exceeded})  # fmt: skip

    def _send(self, message: Message) -> None:
        try:
            self.sock.send(json.dumps(message).encode())
        except OSError:
            pass  # the server is gone; the loop ends at the next receive

    def _shutdown(self) -> None:
        for run in list(self.runs.values()):
            _kill_run(run)


def _kill_run(run: _Run) -> None:
    """Kill a run: its PID namespace's init (the namespace goes with it), or its group."""
    try:
        if run.mode == "basic":
            os.killpg(run.pid, signal.SIGKILL)
        else:
            os.kill(run.pid, signal.SIGKILL)  # not reaped yet: the pid is still the init's
    except OSError:
        pass


def _kill_leftovers(run: _Run) -> None:
    """After a basic run: its group, its orphans, then (as root) every process of its uid."""
    try:
        os.killpg(run.pid, signal.SIGKILL)
    except OSError:
        pass
    for orphan in _orphans_of_session(run.pid):  # reparented to us, the subreaper
        try:
            os.kill(orphan, signal.SIGKILL)
        except OSError:
            pass
    if run.uid is None:
        return
    try:
        pid = os.fork()
    except OSError:
        return
    if pid == 0:
        try:
            os.setresgid(run.uid, run.uid, run.uid)
            os.setresuid(run.uid, run.uid, run.uid)
            os.kill(-1, signal.SIGKILL)  # as that uid: all its processes (setsid escapes too)
        finally:
            os._exit(0)
    # Wait for it: the slot's next run gets the same uid, and a late sweep would kill it.
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _orphans_of_session(sid: int) -> list[int]:
    """Our children in session ``sid`` (a basic run's program made that session)."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as fh:
            children = [int(pid) for pid in fh.read().split()]
    except (OSError, ValueError):
        return []
    found = []
    for pid in children:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and int(fields[3]) == sid:  # state, ppid, pgrp, session
            found.append(pid)
    return found


# ---------------------------------------------------------------------- resource accounting


def _make_cgroup(spec: Message | None, run_id: int) -> str | None:
    """A memory cgroup for one run under ``spec["parent"]`` (v1 or v2), limit set."""
    if not spec:
        return None
    path = os.path.join(spec["parent"], f"run-{run_id}")
    os.mkdir(path)
    limit = str(spec["limit"])
    try:
        if spec["version"] == 2:
            _write(path, "memory.max", limit)
            _write(path, "memory.swap.max", "0", optional=True)
            _write(path, "memory.oom.group", "1", optional=True)  # an OOM kills the whole run
        else:
            _write(path, "memory.limit_in_bytes", limit)
            _write(path, "memory.memsw.limit_in_bytes", limit, optional=True)
    except OSError:
        _remove_cgroup(path)
        raise
    return path


def _write(directory: str, name: str, value: str, optional: bool = False) -> None:
    try:
        with open(os.path.join(directory, name), "w") as fh:
            fh.write(value)
    except OSError:
        if not optional:
            raise


def _oom_kills(path: str) -> int:
    """How many processes the kernel killed for the cgroup's limit (v2 events, v1 control)."""
    for name in ("memory.events", "memory.oom_control"):
        try:
            with open(os.path.join(path, name)) as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


def _remove_cgroup(path: str) -> bool:
    """Remove an empty cgroup; False while processes of the run are still exiting."""
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _tree_memory(pid: int) -> int:
    """Anonymous resident memory of ``pid`` and every descendant (orphans reparent to the
    run's init in ``namespaces`` mode, so they are counted too)."""
    total, todo, seen = 0, [pid], set[int]()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/statm") as fh:
                fields = fh.read().split()
            total += (int(fields[1]) - int(fields[2])) * _PAGE  # resident - file-backed/shared
            for tid in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{tid}/children") as fh:
                    todo.extend(int(child) for child in fh.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


def _disk_usage(workdir: str, limit: int) -> int:
    """Bytes under ``workdir`` (stopping once past ``limit``); too many files counts as past."""
    total, entries, todo = 0, 0, [workdir]
    while todo and total <= limit:
        try:
            with os.scandir(todo.pop()) as it:
                for entry in it:
                    entries += 1
                    if entries > _MAX_ENTRIES:
                        return limit + 1
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
                    else:
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
    return total


def _slot_network_namespaces(count: int) -> list[int]:
    """``count`` fresh network namespaces (no interface up), kept open by descriptor."""
    found = []
    for _ in range(count):
        _check(_LIBC.unshare(_CLONE_NEWNET), "unshare(CLONE_NEWNET)")
        found.append(os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC))
    return found


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except OSError:
        pass


def _read_all(fd: int) -> bytes:
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except OSError:
        pass
    return b"".join(chunks)


# ---------------------------------------------------------------------- the spawner's namespaces


def _enter_own_namespaces(message: Message) -> None:
    """Once, in the spawner: private mounts, an empty network, the runs' read-only root."""
    _check(_LIBC.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWUTS), "unshare")
    _mount(None, b"/", None, _MS_REC | _MS_PRIVATE)  # nothing we mount reaches the host
    _LIBC.sethostname(b"sandbox", 7)
    root = os.fsencode(message["root"])
    _mount(b"tmpfs", root, b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m,nr_inodes=4096,mode=0755")
    for path in map(os.fsencode, message["ro_dirs"]):
        target = root + path
        os.makedirs(target, exist_ok=True)
        _mount(path, target, None, _MS_BIND | _MS_REC)
        _mount(None, target, None, _RO)
    for link, dest in message["symlinks"]:
        os.symlink(dest, root + os.fsencode(link))
    dev = root + b"/dev"
    os.mkdir(dev)
    _mount(b"tmpfs", dev, b"tmpfs", _MS_NOSUID, b"size=64k,nr_inodes=64,mode=0755")
    for name in _DEVICES:
        target = dev + b"/" + name.encode()
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
        _mount(b"/dev/" + name.encode(), target, None, _MS_BIND)
    for name, dest in _DEV_LINKS:
        os.symlink(dest, dev + b"/" + name.encode())
    for mountpoint in (b"/dev/shm", b"/tmp", b"/workspace", b"/proc"):
        os.mkdir(root + mountpoint)
    # Each concurrency slot's runs write into a size-limited tmpfs seen only here (and by
    # the server through /proc/<our pid>/root): a run cannot fill the host's disk.
    for path in map(os.fsencode, message.get("slots", ())):
        os.makedirs(path, exist_ok=True)
        _mount(b"tmpfs", path, b"tmpfs", _MS_NOSUID | _MS_NODEV, message["workspace"].encode())


# ---------------------------------------------------------------------- in the forked child


def _child(message: Message, fds: list[int], status_w: int) -> None:
    signal.set_wakeup_fd(-1)
    for sig in _RESET_SIGNALS:  # an ignored signal stays ignored across exec
        signal.signal(sig, signal.SIG_DFL)
    _stdio(fds, status_w)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the spawner died: so do we
    if message.get("cgroup_procs"):  # first: everything the run starts is charged there
        try:
            with open(message["cgroup_procs"], "w") as fh:
                fh.write(str(os.getpid()))  # our pid in our (new) PID namespace: ourselves
        except BaseException as exc:
            _report_error(status_w, "cgroup", exc)
            os._exit(1)
    if message["mode"] == "basic":
        os.setsid()
        _exec_program(message, message["cwd"], status_w)
    _init(message, status_w)


def _stdio(fds: list[int], keep: int) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, keep)
    os.closerange(keep + 1, _MAXFD)


def _init(message: Message, status_w: int) -> None:
    """Pid 1 of the run's namespace: build its file system, start the program, reap, report.

    Root only while it builds the namespaces; then it drops to the run's uid and limits
    and starts the program with posix_spawn (vfork: no copy of this process), which
    inherits all of them. The program cannot signal it: signals from inside a PID
    namespace do not reach its init (it sets no handlers), SIGKILL included.
    """
    try:
        os.setsid()  # its own session: with autogroups, its own share of the CPU
        _enter_run_namespaces(message)
        program = _spawn_program(message, "/workspace")
    except BaseException as exc:
        _report_error(status_w, "start", exc)
        os._exit(1)
    started = time.monotonic()
    for fd in (0, 1, 2):  # hold no pipe open: EOF must mean the program is gone
        os.close(fd)
    status = 0
    while True:
        try:
            pid, status_any = os.wait()
        except ChildProcessError:
            break
        if pid == program:
            status = status_any
            break
    os.write(status_w, b"S" + _STATUS.pack(status, time.monotonic() - started))
    os._exit(0)


def _spawn_program(message: Message, cwd: str) -> int:
    """Become the run's user with its limits here, then start the program as a vfork child."""
    argv, env = message["argv"], message["env"]
    _become_the_run(message, cwd)
    return os.posix_spawn(argv[0], argv, env)


def _become_the_run(message: Message, cwd: str) -> None:
    os.nice(message.get("nice", 0))
    _drop_privileges(message["uid"])
    os.chdir(cwd)
    if message.get("seccomp"):  # fails closed: a run that cannot be filtered does not start
        seccomp_filter.install()
    _apply_limits([tuple(pair) for pair in message["limits"]])  # last: allocating may fail after


def _enter_run_namespaces(message: Message) -> None:
    """The run's own mounts and IPC: fresh /tmp, /dev/shm and /proc, its directory, the root."""
    _check(_LIBC.unshare(_CLONE_NEWNS | _CLONE_NEWIPC), "unshare")
    root = os.fsencode(message["root"])
    tmpfs = message["tmpfs"].encode()
    _mount(b"tmpfs", root + b"/tmp", b"tmpfs", _MS_NOSUID | _MS_NODEV, tmpfs)
    _mount(b"tmpfs", root + b"/dev/shm", b"tmpfs", _MS_NOSUID | _MS_NODEV, tmpfs)
    _mount(os.fsencode(message["workdir"]), root + b"/workspace", None, _MS_BIND)
    _mount(None, root + b"/workspace", None, _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _MS_NODEV)
    os.chdir(root)
    # pivot_root(".", "."): the old root lands on top of the new one, and is then detached.
    _check(_LIBC.syscall(_SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    _check(_LIBC.umount2(b".", _MNT_DETACH), "umount old root")
    os.chdir(b"/")
    _mount(None, b"/", None, _RO)
    _mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)


def _exec_program(message: Message, cwd: str, status_w: int) -> None:
    """A basic run: this process becomes the program."""
    argv = message["argv"]
    fallback = b"E" + f"cannot start {argv[0]}".encode()
    try:
        _become_the_run(message, cwd)
        os.execve(argv[0], argv, message["env"])
    except BaseException as exc:
        try:
            os.write(status_w, b"E" + f"cannot start {argv[0]}: {exc}".encode(errors="replace"))
        except BaseException:
            os.write(status_w, fallback)
    os._exit(127)


def _drop_privileges(uid: int | None) -> None:
    if uid is None:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)  # no setuid binary can give root back
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the uid change cleared it


def _apply_limits(limits: list[tuple[int, int]]) -> None:
    for which, value in limits:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)  # a hard limit may be lowered, never raised
        resource.setrlimit(which, (value, value))


def _report_error(status_w: int, stage: str, exc: BaseException) -> None:
    try:
        os.write(status_w, b"E" + f"{stage}: {type(exc).__name__}: {exc}".encode(errors="replace"))
    except OSError:
        pass


def _prctl(option: int, value: int) -> None:
    if _LIBC is not None:
        _LIBC.prctl(option, value, 0, 0, 0)


def _mount(
    source: bytes | None,
    target: bytes,
    fstype: bytes | None,
    flags: int,
    data: bytes | None = None,
) -> None:
    _check(
        _LIBC.mount(source, target, fstype, flags, data), f"mount {target.decode(errors='replace')}"
    )


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def main(argv: list[str]) -> int:
    fd, parent = int(argv[1]), int(argv[2])
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the server died before we could tie ourselves to it
        return 1
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    Spawner(socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=fd)).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
