"""An embedded code sandbox that speaks SandboxFusion's ``/run_code`` protocol.

``await Sandbox().run_code(RunCodeRequest(code=..., language="python", stdin=...))`` runs
untrusted code (model generations) and answers exactly what SandboxFusion answers, so the
same request works here in-process, through :mod:`rewardkit.execution.sandbox_server`, or
against a real SandboxFusion deployment.

Isolation, from strongest to what always holds (``Sandbox.isolation`` reports what is on):

``namespaces`` (root with CAP_SYS_ADMIN on Linux, the default where available)
    Each run gets fresh PID, network, mount, IPC and UTS namespaces. The file system is a
    minimal read-only root: ``/usr``, ``/etc``, ``/bin``, ``/lib*`` (and the directory of
    a configured interpreter) bound read-only; ``/dev`` holding only null, zero, full,
    random and urandom; ``/proc`` of the run's own PID namespace; a private size-limited
    tmpfs on ``/tmp`` and ``/dev/shm``; and the run's fresh directory, the only disk it can
    write, at ``/workspace``. Nothing else of the host (home directories, datasets, the
    repository) is visible, so a policy cannot read its test answers off the disk. The
    network namespace has no interface up: no network at all, not even loopback. When the
    program's first process exits, the kernel kills every process left in its PID
    namespace, so nothing survives a run (a daemonising ``setsid`` + double fork too).
``basic`` (no CAP_SYS_ADMIN, e.g. Docker's default profile, or not Linux)
    A fresh temporary working directory, the process group killed at the end. As root the
    run still drops to an unprivileged uid and, after it ends, every process of that uid is
    killed, so ``setsid`` escapes die as well; the host file system stays visible (readable
    where its permissions allow) and the network is the host's. Orphans are left to init
    to reap: run the server under an init that reaps (tini) where pid 1 does not.

In both modes, when started as root, each concurrency slot runs as its own unprivileged uid
(a random block of high uids, no passwd entry, no groups, ``PR_SET_NO_NEW_PRIVS``), so the
program cannot signal the server (``os.kill(os.getppid(), 9)`` gets EPERM, and in its own
PID namespace it cannot even name the server) nor another run, and RLIMIT_NPROC bounds
its processes and threads (a fork bomb stops at ``max_processes``). Resource limits:
RLIMIT_CPU (the run timeout), RLIMIT_AS (``memory_limit_MB``; RLIMIT_DATA for JIT runtimes
that reserve huge address ranges: Java, Node), RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_NPROC,
RLIMIT_CORE 0. Output beyond ``max_output_bytes`` per stream kills the run. The wall-clock
``run_timeout`` kills the whole run (the PID namespace's init, or the process group).

Started as an ordinary user there is no uid to drop to: the program runs as the server's
own user and could signal it, and RLIMIT_NPROC is not set (it would count the user's other
processes); prefer root in a throwaway container or VM.

Concurrency: at most ``max_concurrent`` runs at once (default: the number of cores), up to
``max_queue`` more waiting at most ``queue_timeout_s``; a request beyond that is answered
``SandboxError`` at once. Everything is asyncio: no thread per run.

Languages: whatever of python, cpp, nodejs, java, go, rust, bash, perl, ruby, php, lua is
installed where the unprivileged user can execute it (``Sandbox.languages``). Python is
``python_executable`` if given, else the first interpreter the sandbox user can run
(``sys.executable``, then ``/usr/bin/python3``): point it at an interpreter that has the
packages the programs may import.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ctypes
import enum
import os
import platform
import re
import secrets
import shutil
import signal
import stat
import sys
import tempfile
import time
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CommandRunResult",
    "CommandRunStatus",
    "RunCodeRequest",
    "RunCodeResponse",
    "RunStatus",
    "Sandbox",
    "SandboxOptions",
    "run_code",
]

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]


# ---------------------------------------------------------------------- protocol

Language = Literal[
    "python", "python2", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash",
    "typescript", "sql", "rust", "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala", "julia",
    "pytest", "junit", "kotlin_script", "jest", "verilog", "python_gpu", "lean", "swift",
    "racket", "gtest", "react",
]  # fmt: skip
"""SandboxFusion's language names (an unknown name is a 422, as there)."""


class RunStatus(enum.StrEnum):
    """The outcome of a whole request, as SandboxFusion names it."""

    SUCCESS = "Success"  # every step finished with return code 0
    FAILED = "Failed"  # a step timed out or returned non-zero: the *program's* failure
    SANDBOX_ERROR = "SandboxError"  # the sandbox could not run it: an infrastructure failure


class CommandRunStatus(enum.StrEnum):
    """The outcome of one step (compile or run)."""

    FINISHED = "Finished"
    ERROR = "Error"
    TIME_LIMIT_EXCEEDED = "TimeLimitExceeded"


class RunCodeRequest(BaseModel):
    """SandboxFusion's ``POST /run_code`` body. Unknown fields are ignored, as there."""

    model_config = ConfigDict(extra="ignore")

    code: str
    language: Language
    compile_timeout: float = 10.0
    run_timeout: float = 10.0
    memory_limit_MB: int = -1
    """-1 (SandboxFusion's default): the sandbox's own default limit, not unlimited."""
    stdin: str | None = None
    files: dict[str, str | None] = Field(default_factory=dict)
    """Extra files for the working directory: relative path -> base64 content."""
    fetch_files: list[str] = Field(default_factory=list)
    """Files to send back (base64) after the run; missing ones are left out."""


class CommandRunResult(BaseModel):
    """One step's result. ``return_code`` is None when the step was killed at its timeout."""

    status: CommandRunStatus
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    """SandboxFusion's ``/run_code`` answer."""

    status: RunStatus
    message: str = ""
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)


# ---------------------------------------------------------------------- options


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
    max_memory_mb: int = 8192
    max_run_timeout_s: float = 300.0
    max_compile_timeout_s: float = 300.0
    compile_memory_mb: int = 2048
    """Address-space floor for compilers (g++ needs more than most programs)."""
    max_output_bytes: int = 8 * 1024 * 1024
    """Per stream; past it the run is killed and its output cut there."""
    max_file_mb: int = 64
    """RLIMIT_FSIZE: the largest file a run may write."""
    max_processes: int = 64
    """RLIMIT_NPROC per run (processes and threads), when running as a dedicated uid."""
    max_open_files: int = 256
    tmpfs_mb: int = 64
    """Size of each private tmpfs (/tmp, /dev/shm) in ``namespaces`` mode."""
    max_fetch_bytes: int = 16 * 1024 * 1024
    isolation: Literal["auto", "namespaces", "basic"] = "auto"
    """auto: namespaces where the machine allows, else basic (see the module docstring)."""
    python_executable: str | None = None
    uid_base: int | None = None
    """First of ``max_concurrent`` uids the runs use when started as root; None: random."""
    work_root: str | None = None
    """Directory under which run directories are made; None: the system temp directory."""
    extra_ro_paths: tuple[str, ...] = ()
    """More host directories made visible (read-only) in ``namespaces`` mode."""


# ---------------------------------------------------------------------- languages


@dataclass(frozen=True, slots=True)
class _LanguageSpec:
    """How to build and run one language. ``{python}`` and ``{mem}`` are filled in per run."""

    source: str
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    tools: tuple[str, ...] = ()
    jit: bool = False  # reserves large address ranges: limit RLIMIT_DATA, not RLIMIT_AS
    min_processes: int = 0
    env: tuple[tuple[str, str], ...] = ()


_LANGUAGES: dict[str, _LanguageSpec] = {
    "python": _LanguageSpec("main.py", ("{python}", "-E", "-s", "main.py"), tools=("{python}",)),
    "cpp": _LanguageSpec(
        "main.cpp",
        ("./main",),
        compile=("g++", "-std=c++17", "-O2", "-o", "main", "main.cpp", "-lpthread"),
        tools=("g++",),
    ),
    "nodejs": _LanguageSpec("main.js", ("node", "main.js"), tools=("node",), jit=True),
    "java": _LanguageSpec(
        "Main.java",
        ("java", "-Xmx{mem}m", "-Xss64m", "-XX:+UseSerialGC", "-cp", ".", "Main"),
        compile=("javac", "-J-Xmx512m", "-encoding", "UTF-8", "Main.java"),
        tools=("java", "javac"),
        jit=True,
        min_processes=512,
    ),
    "go": _LanguageSpec(
        "main.go",
        ("./main",),
        compile=("go", "build", "-o", "main", "main.go"),
        tools=("go",),
        jit=True,
        min_processes=256,
        env=(("GOCACHE", "/tmp/.gocache"), ("GOPATH", "/tmp/.go"), ("GO111MODULE", "off")),
    ),
    "rust": _LanguageSpec("main.rs", ("./main",), compile=("rustc", "-O", "-o", "main", "main.rs"), tools=("rustc",)),
    "bash": _LanguageSpec("main.sh", ("bash", "main.sh"), tools=("bash",)),
    "perl": _LanguageSpec("main.pl", ("perl", "main.pl"), tools=("perl",)),
    "ruby": _LanguageSpec("main.rb", ("ruby", "main.rb"), tools=("ruby",)),
    "php": _LanguageSpec("main.php", ("php", "main.php"), tools=("php",)),
    "lua": _LanguageSpec("main.lua", ("lua", "main.lua"), tools=("lua",)),
}

_JAVA_CLASS = re.compile(r"public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_$][\w$]*)")
_STANDARD_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


# ---------------------------------------------------------------------- the sandbox


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


class Sandbox:
    """Runs ``/run_code`` requests with isolation and a bounded number of runs at once.

    Use it on one event loop (its queue belongs to that loop). :meth:`start` is optional
    (the first run starts it); :meth:`close` removes its working directories.
    """

    def __init__(self, options: SandboxOptions | None = None) -> None:
        self.options = options or SandboxOptions()
        if self.options.max_concurrent is not None and self.options.max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        self.max_concurrent = self.options.max_concurrent or _cores()
        self._runtime: _Runtime | None = None
        self._start_lock: asyncio.Lock | None = None
        self._free: asyncio.Queue[_Slot] | None = None
        self._waiting = 0
        self._secret = secrets.token_hex(8).encode()

    # -------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Probe the machine once: isolation mode, interpreters, installed languages."""
        if self._runtime is not None:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._runtime is None:
                self._runtime = await self._probe()

    async def close(self) -> None:
        """Remove the sandbox's base directory. Runs still in flight are not waited for."""
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            shutil.rmtree(runtime.base, ignore_errors=True)

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def isolation(self) -> dict[str, Any]:
        """What protects the host here (after :meth:`start`): mode, uid drop, reasons for less."""
        runtime = self._require_runtime()
        return {
            "mode": runtime.mode,
            "drops_privileges": _is_root(),
            "network": "none" if runtime.mode == "namespaces" else "host",
            "python": runtime.python,
            "languages": list(runtime.languages),
            "notes": list(runtime.reasons),
        }

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages this machine can run (after :meth:`start`)."""
        return self._require_runtime().languages

    @property
    def uids(self) -> tuple[int, ...]:
        """The uids runs execute as (empty when not started as root)."""
        self._require_runtime()
        assert self._free is not None
        return tuple(s.uid for s in self._slots if s.uid is not None)

    # -------------------------------------------------------------- running

    async def run_code(self, request: RunCodeRequest | Mapping[str, Any]) -> RunCodeResponse:
        """Run one request. Never raises for the program's or the sandbox's failures."""
        if not isinstance(request, RunCodeRequest):
            request = RunCodeRequest.model_validate(request)
        try:
            await self.start()
            spec = self._language(request.language)
            async with self._slot() as slot:
                return await self._run_in_slot(slot, spec, request)
        except _SandboxFailure as exc:
            return RunCodeResponse(status=RunStatus.SANDBOX_ERROR, message=str(exc))

    async def _run_in_slot(self, slot: _Slot, spec: _LanguageSpec, request: RunCodeRequest) -> RunCodeResponse:
        runtime = self._require_runtime()
        slot.runs += 1
        workdir = os.path.join(runtime.base, f"run-{slot.index}-{slot.runs}")
        _make_workdir(workdir, slot.uid)
        try:
            source = _source_name(spec, request)
            _write_files(workdir, {source: request.code.encode()}, request.files, slot.uid)
            memory = _clamp_memory(request.memory_limit_MB, self.options)
            compile_result = None
            if spec.compile is not None:
                step = self._step(spec, spec.compile, source, request.compile_timeout, self.options.max_compile_timeout_s,
                                  max(memory, self.options.compile_memory_mb), None)  # fmt: skip
                compile_result = await self._execute(step, slot, workdir)
                if compile_result.status != CommandRunStatus.FINISHED or compile_result.return_code != 0:
                    return _response(compile_result, None, {})
            stdin = None if request.stdin is None else request.stdin.encode()
            step = self._step(spec, spec.run, source, request.run_timeout, self.options.max_run_timeout_s, memory, stdin)
            run_result = await self._execute(step, slot, workdir)
            files = _fetch_files(workdir, request.fetch_files, self.options.max_fetch_bytes)
            return _response(compile_result, run_result, files)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _step(self, spec: _LanguageSpec, template: tuple[str, ...], source: str, timeout: float,
              max_timeout: float, memory: int, stdin: bytes | None) -> _Step:  # fmt: skip
        runtime = self._require_runtime()
        stem = source.rsplit(".", 1)[0]
        fill = {"python": runtime.python or "python3", "mem": str(memory)}
        argv = []
        for part in template:
            part = part.format(**fill) if "{" in part else part
            part = part.replace("Main.java", source).replace("Main", stem) if spec.source == "Main.java" else part
            argv.append(runtime.tools.get(part, part))
        timeout = timeout if timeout > 0 else 10.0
        return _Step(
            argv=tuple(argv),
            timeout=min(timeout, max_timeout),
            memory_mb=memory,
            jit=spec.jit,
            max_processes=max(self.options.max_processes, spec.min_processes),
            stdin=stdin,
            env=spec.env,
        )

    async def _execute(self, step: _Step, slot: _Slot, workdir: str) -> CommandRunResult:
        outcome = await self._spawn_and_wait(step, slot, workdir)
        stderr = outcome.stderr
        if outcome.return_code == _SETUP_EXIT and stderr.startswith(_SETUP_MARKER + self._secret):
            reason = stderr[len(_SETUP_MARKER + self._secret) :].decode(errors="replace").strip()
            raise _SandboxFailure(f"sandbox setup failed: {reason}")
        if outcome.overflowed:
            stderr += f"\n[sandbox] output over {self.options.max_output_bytes} bytes: killed".encode()
        return CommandRunResult(
            status=CommandRunStatus.TIME_LIMIT_EXCEEDED if outcome.timed_out else CommandRunStatus.FINISHED,
            execution_time=round(outcome.elapsed, 6),
            return_code=None if outcome.timed_out else outcome.return_code,
            stdout=outcome.stdout.decode(errors="replace"),
            stderr=stderr.decode(errors="replace"),
        )

    async def _spawn_and_wait(self, step: _Step, slot: _Slot, workdir: str) -> _Outcome:
        runtime = self._require_runtime()
        if runtime.mode == "namespaces":
            preexec = _namespace_preexec(self._child_spec(step, slot, workdir))
            cwd = None
        else:
            preexec = _basic_preexec(self._child_spec(step, slot, workdir))
            cwd = workdir
        env = _environment(step, "/workspace" if cwd is None else workdir)
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                *step.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
                preexec_fn=preexec,
            )
        except (OSError, ValueError, _subprocess_error()) as exc:
            raise _SandboxFailure(f"cannot start {step.argv[0]}: {exc}") from exc
        watcher = _Watcher(proc, runtime.mode, self.options.max_output_bytes)
        try:
            outcome = await watcher.wait(step.stdin, step.timeout, started)
        finally:
            await watcher.cleanup()
            if runtime.mode == "basic" and slot.uid is not None:
                await _kill_uid(slot.uid)
        return outcome

    def _child_spec(self, step: _Step, slot: _Slot, workdir: str) -> _ChildSpec:
        runtime = self._require_runtime()
        opts = self.options
        mem = step.memory_mb * 1024 * 1024
        limits = [
            (resource.RLIMIT_CPU, int(step.timeout) + 1),
            (resource.RLIMIT_FSIZE, opts.max_file_mb * 1024 * 1024),
            (resource.RLIMIT_NOFILE, opts.max_open_files),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_DATA if step.jit else resource.RLIMIT_AS, mem + (512 << 20 if step.jit else 0)),
        ]
        if not step.jit:
            limits.append((resource.RLIMIT_STACK, min(mem // 2, 256 << 20)))
        if slot.uid is not None:
            limits.append((resource.RLIMIT_NPROC, step.max_processes))
        tmpfs = f"size={opts.tmpfs_mb}m,nr_inodes=8192,mode=1777".encode()
        return _ChildSpec(
            workdir=workdir.encode(),
            root=os.path.join(runtime.base, "root").encode(),
            ro_dirs=tuple(d.encode() for d in runtime.ro_dirs),
            symlinks=tuple((a.encode(), b.encode()) for a, b in runtime.symlinks),
            tmpfs_options=tmpfs,
            limits=tuple(limits),
            uid=slot.uid,
            marker=_SETUP_MARKER + self._secret,
        )

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[_Slot]:
        assert self._free is not None
        if self._free.empty() and self._waiting >= self.options.max_queue:
            raise _SandboxFailure(f"sandbox queue full ({self.options.max_queue} requests waiting)")
        self._waiting += 1
        try:
            slot = await asyncio.wait_for(self._free.get(), self.options.queue_timeout_s)
        except TimeoutError:
            raise _SandboxFailure(f"no free sandbox slot within {self.options.queue_timeout_s:g}s") from None
        finally:
            self._waiting -= 1
        try:
            yield slot
        finally:
            self._free.put_nowait(slot)

    def _language(self, name: str) -> _LanguageSpec:
        runtime = self._require_runtime()
        if name not in runtime.languages:
            have = ", ".join(runtime.languages)
            raise _SandboxFailure(f"language {name!r} is not available in this sandbox (available: {have})")
        return _LANGUAGES[name]

    def _require_runtime(self) -> _Runtime:
        if self._runtime is None:
            raise RuntimeError("the sandbox is not started (await sandbox.start())")
        return self._runtime

    # -------------------------------------------------------------- probing

    async def _probe(self) -> _Runtime:
        opts = self.options
        root_dir = opts.work_root or tempfile.gettempdir()
        base = tempfile.mkdtemp(prefix="rewardkit-sandbox-", dir=root_dir)
        os.chmod(base, 0o711)  # runs may traverse to their own directory, not list others
        os.mkdir(os.path.join(base, "root"), 0o755)
        self._slots = _make_slots(self.max_concurrent, opts.uid_base)
        self._free = asyncio.Queue()
        for slot in self._slots:
            self._free.put_nowait(slot)
        pythons = _python_candidates(opts.python_executable)
        tools = _resolve_tools(pythons)
        ro_dirs, symlinks = _visible_tree(tools.values(), opts.extra_ro_paths)
        runtime = _Runtime("basic", base, None, tools, (), ro_dirs, symlinks)
        wanted = opts.isolation
        if wanted in ("auto", "namespaces"):
            reason = _namespaces_unavailable()
            if reason is None:
                runtime.mode = "namespaces"
                self._runtime = runtime
                reason = await self._probe_run(("/bin/sh", "-c", "echo ok"))
            if reason is not None:
                if wanted == "namespaces":
                    shutil.rmtree(base, ignore_errors=True)
                    raise RuntimeError(f"namespace isolation unavailable: {reason}")
                runtime.mode = "basic"
                runtime.reasons.append(f"namespaces unavailable ({reason}): basic isolation")
        if not _is_root():
            runtime.reasons.append("not root: runs keep the server's uid, no RLIMIT_NPROC")
        self._runtime = runtime
        runtime.python = await self._pick_python(pythons)
        runtime.languages = _available_languages(runtime)
        return runtime

    async def _probe_run(self, argv: tuple[str, ...]) -> str | None:
        """Run a trivial command through the full isolation; None if it worked, else why not."""
        assert self._free is not None
        step = _Step(argv=argv, timeout=20.0, memory_mb=self.options.compile_memory_mb, jit=False,
                     max_processes=self.options.max_processes)  # fmt: skip
        slot = self._slots[0]
        workdir = os.path.join(self._require_runtime().base, "probe")
        _make_workdir(workdir, slot.uid)
        try:
            result = await self._execute(step, slot, workdir)
        except _SandboxFailure as exc:
            return str(exc)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        if result.return_code != 0 or "ok" not in (result.stdout or ""):
            return f"probe {argv[0]} exited {result.return_code}: {(result.stderr or '').strip()[:200]}"
        return None

    async def _pick_python(self, candidates: Sequence[str]) -> str | None:
        runtime = self._require_runtime()
        for path in candidates:
            reason = await self._probe_run((path, "-E", "-s", "-c", "print('ok')"))
            if reason is None:
                return path
            runtime.reasons.append(f"python {path} unusable: {reason}")
        return None


# ---------------------------------------------------------------------- process supervision


class _Watcher:
    """Feeds stdin, reads capped output, enforces the timeout and kills what is left."""

    def __init__(self, proc: asyncio.subprocess.Process, mode: str, cap: int) -> None:
        self.proc = proc
        self.mode = mode
        self.cap = cap
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.overflow = asyncio.Event()
        self.tasks: list[asyncio.Task[Any]] = []
        self.killed = False

    async def wait(self, stdin: bytes | None, timeout: float, started: float) -> _Outcome:
        proc = self.proc
        assert proc.stdout is not None and proc.stderr is not None
        self.tasks = [
            asyncio.ensure_future(self._feed(stdin)),
            asyncio.ensure_future(self._read(proc.stdout, self.stdout)),
            asyncio.ensure_future(self._read(proc.stderr, self.stderr)),
        ]
        exited = asyncio.ensure_future(proc.wait())
        overflow = asyncio.ensure_future(self.overflow.wait())
        self.tasks += [exited, overflow]
        done, _ = await asyncio.wait({exited, overflow}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        timed_out = not done
        if not exited.done():
            self.kill()
        await asyncio.wait({exited}, timeout=_KILL_GRACE_S)
        elapsed = time.monotonic() - started
        # The pipes close when the last process holding them dies; bound the wait anyway.
        await asyncio.wait(self.tasks[1:3], timeout=_KILL_GRACE_S)
        return _Outcome(
            return_code=proc.returncode,
            stdout=bytes(self.stdout),
            stderr=bytes(self.stderr),
            elapsed=min(elapsed, timeout) if timed_out else elapsed,
            timed_out=timed_out,
            overflowed=self.overflow.is_set() and not timed_out,
        )

    def kill(self) -> None:
        """Kill the run: the PID namespace's init (which takes the namespace down) or the group."""
        self.killed = True
        pid = self.proc.pid
        if self.mode == "namespaces":
            for child in _children(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(child, signal.SIGKILL)
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)

    async def cleanup(self) -> None:
        """Make sure nothing of the run is left: kill, reap, cancel the I/O tasks."""
        proc = self.proc
        try:
            if proc.returncode is None:
                self.kill()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(proc.wait()), _KILL_GRACE_S)
            if proc.returncode is None:  # the middle process did not exit: take the group down
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await asyncio.shield(proc.wait())
            elif self.mode == "basic":  # children left in the group
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
        finally:
            for task in self.tasks:
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _feed(self, data: bytes | None) -> None:
        stream = self.proc.stdin
        assert stream is not None
        try:
            if data:
                stream.write(data)
                await stream.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the program stopped reading: its business
        finally:
            stream.close()

    async def _read(self, stream: asyncio.StreamReader, into: bytearray) -> None:
        while chunk := await stream.read(_CHUNK):
            room = self.cap - len(into)
            into += chunk[: max(room, 0)]
            if len(chunk) > room:
                self.overflow.set()
                return


_CHUNK = 64 * 1024
_KILL_GRACE_S = 5.0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except (OSError, ValueError):
        return []


async def _kill_uid(uid: int) -> None:
    """Kill every process of ``uid`` (``kill -9 -1`` as that uid): catches setsid escapes."""
    kill = shutil.which("kill", path=_SEARCH_PATH)
    if kill is None:
        return
    with contextlib.suppress(OSError):
        proc = await asyncio.create_subprocess_exec(
            kill, "-9", "-1", user=uid, group=uid, extra_groups=[],
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        await proc.wait()


def _subprocess_error() -> type[Exception]:
    import subprocess

    return subprocess.SubprocessError


# ---------------------------------------------------------------------- the child side
#
# These functions run in the forked child between fork and exec. They only make system
# calls (no imports, no locks): everything they need is computed by the parent first.

_SETUP_MARKER = b"\x00rewardkit-sandbox-setup:"
_SETUP_EXIT = 126

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MNT_DETACH = 2
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}.get(platform.machine())
_DEVICES = (b"null", b"zero", b"full", b"random", b"urandom")
_DEV_LINKS = ((b"fd", b"/proc/self/fd"), (b"stdin", b"/proc/self/fd/0"),
              (b"stdout", b"/proc/self/fd/1"), (b"stderr", b"/proc/self/fd/2"))  # fmt: skip
_RO = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV


def _load_libc() -> Any:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.unshare.argtypes = [ctypes.c_int]
        libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        libc.syscall.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_char_p]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _load_libc() if sys.platform.startswith("linux") else None
_MAXFD = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1024


@dataclass(frozen=True, slots=True)
class _ChildSpec:
    workdir: bytes
    root: bytes
    ro_dirs: tuple[bytes, ...]
    symlinks: tuple[tuple[bytes, bytes], ...]
    tmpfs_options: bytes
    limits: tuple[tuple[int, int], ...]
    uid: int | None
    marker: bytes


def _namespace_preexec(spec: _ChildSpec) -> Callable[[], None]:
    """The child: build the namespaces, fork the run's init, stay behind as its reaper.

    The forked child (pid 1 of the new PID namespace) becomes the program. Its parent, the
    process the server spawned, stays root, closes every descriptor and waits for it, then
    exits the same way, so the server sees the program's own return code or signal.
    """

    def preexec() -> None:
        try:
            _enter_namespaces(spec)
            pid = os.fork()
        except BaseException as exc:
            _setup_failed(spec, "namespaces", exc)
        if pid:
            _reap_and_mirror(pid)
        try:
            _mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
            _apply_limits(spec.limits)
            _drop_privileges(spec.uid)
            os.chdir(b"/workspace")
        except BaseException as exc:
            _setup_failed(spec, "run init", exc)

    return preexec


def _basic_preexec(spec: _ChildSpec) -> Callable[[], None]:
    def preexec() -> None:
        try:
            _apply_limits(spec.limits)
            _drop_privileges(spec.uid)
        except BaseException as exc:
            _setup_failed(spec, "limits", exc)

    return preexec


def _enter_namespaces(spec: _ChildSpec) -> None:
    flags = _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS
    _check(_LIBC.unshare(flags), "unshare")
    _mount(None, b"/", None, _MS_REC | _MS_PRIVATE)
    root = spec.root
    _mount(b"tmpfs", root, b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m,nr_inodes=4096,mode=0755")
    for path in spec.ro_dirs:
        target = root + path
        os.makedirs(target, exist_ok=True)
        _mount(path, target, None, _MS_BIND | _MS_REC)
        _mount(None, target, None, _RO)
    for link, dest in spec.symlinks:
        os.symlink(dest, root + link)
    _make_dev(root + b"/dev", spec.tmpfs_options)
    os.mkdir(root + b"/tmp")
    _mount(b"tmpfs", root + b"/tmp", b"tmpfs", _MS_NOSUID | _MS_NODEV, spec.tmpfs_options)
    os.mkdir(root + b"/workspace")
    _mount(spec.workdir, root + b"/workspace", None, _MS_BIND)
    _mount(None, root + b"/workspace", None, _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _MS_NODEV)
    os.mkdir(root + b"/proc")
    os.mkdir(root + b"/.old")
    _check(_LIBC.syscall(_SYS_PIVOT_ROOT, root, root + b"/.old"), "pivot_root")
    os.chdir(b"/")
    _check(_LIBC.umount2(b"/.old", _MNT_DETACH), "umount old root")
    os.rmdir(b"/.old")
    _mount(None, b"/", None, _RO)


def _make_dev(dev: bytes, tmpfs_options: bytes) -> None:
    os.mkdir(dev)
    _mount(b"tmpfs", dev, b"tmpfs", _MS_NOSUID, b"size=64k,nr_inodes=64,mode=0755")
    for name in _DEVICES:
        target = dev + b"/" + name
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
        _mount(b"/dev/" + name, target, None, _MS_BIND)
    for name, dest in _DEV_LINKS:
        os.symlink(dest, dev + b"/" + name)
    os.mkdir(dev + b"/shm")
    _mount(b"tmpfs", dev + b"/shm", b"tmpfs", _MS_NOSUID | _MS_NODEV, tmpfs_options)


def _reap_and_mirror(pid: int) -> None:
    """The namespace's reaper: wait for the run's init, then exit exactly as it did."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the server died: so do we
    os.closerange(0, _MAXFD)  # hold no pipe open: EOF must mean the program is gone
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            os._exit(_SETUP_EXIT)
        except InterruptedError:  # pragma: no cover - PEP 475 retries for us
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if sig not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _apply_limits(limits: tuple[tuple[int, int], ...]) -> None:
    for which, value in limits:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)  # we may lower a hard limit, never raise it
        resource.setrlimit(which, (value, value))


def _drop_privileges(uid: int | None) -> None:
    if uid is None:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binary can give root back
        # Set after the uid change, which clears it: the reaper dies, so does the program.
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _setup_failed(spec: _ChildSpec, stage: str, exc: BaseException) -> None:
    with contextlib.suppress(OSError):
        os.write(2, spec.marker + f"{stage}: {type(exc).__name__}: {exc}".encode(errors="replace"))
    os._exit(_SETUP_EXIT)


def _mount(source: bytes | None, target: bytes, fstype: bytes | None, flags: int, data: bytes | None = None) -> None:
    _check(_LIBC.mount(source, target, fstype, flags, data), f"mount {target.decode(errors='replace')}")


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


# ---------------------------------------------------------------------- host-side helpers


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _namespaces_unavailable() -> str | None:
    if _LIBC is None or resource is None:
        return "not Linux"
    if not _is_root():
        return "not root"
    if _SYS_PIVOT_ROOT is None:
        return f"unknown pivot_root syscall on {platform.machine()}"
    return None


def _make_slots(count: int, uid_base: int | None) -> list[_Slot]:
    if not _is_root():
        return [_Slot(i, None) for i in range(count)]
    base = uid_base if uid_base is not None else _random_uid_base(count)
    return [_Slot(i, base + i) for i in range(count)]


def _random_uid_base(count: int) -> int:
    """A block of uids no one else uses, inside the uids this (user) namespace maps."""
    high = 0
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/uid_map") as fh:
            for line in fh:
                inside, _, length = (int(x) for x in line.split())
                high = max(high, inside + length)
    if high >= 1 << 31:
        return 1_000_000 + secrets.randbelow(1_000_000) * 1024
    return 65534 - count if high > 65534 else max(high - count - 1, 1000)


def _python_candidates(configured: str | None) -> list[str]:
    if configured:
        return [configured]
    found = [sys.executable, "/usr/bin/python3", shutil.which("python3", path=_SEARCH_PATH)]
    seen: list[str] = []
    for path in found:
        if path and path not in seen and _runnable_by_sandbox(path):
            seen.append(path)
    return seen


def _resolve_tools(pythons: Sequence[str]) -> dict[str, str]:
    """Absolute paths of the compilers/interpreters the sandbox user can execute."""
    names = {t for spec in _LANGUAGES.values() for t in spec.tools if t != "{python}"}
    tools = {}
    for name in sorted(names):
        path = shutil.which(name, path=os.environ.get("PATH", _SEARCH_PATH) + ":" + _SEARCH_PATH)
        if path and _runnable_by_sandbox(path):
            tools[name] = os.path.abspath(path)
    for i, path in enumerate(pythons):
        tools[f"python#{i}"] = path
    return tools


def _runnable_by_sandbox(path: str) -> bool:
    """Whether an unprivileged uid could execute ``path`` (every directory searchable)."""
    if not _is_root():
        return os.access(path, os.X_OK)
    try:
        real = os.path.realpath(path)
        for candidate in (path, real):
            parts = os.path.abspath(candidate).split("/")
            for i in range(1, len(parts)):
                st = os.stat("/".join(parts[:i]) or "/")
                if not st.st_mode & stat.S_IXOTH:
                    return False
        return bool(os.stat(real).st_mode & stat.S_IXOTH)
    except OSError:
        return False


def _visible_tree(tools: Any, extra: Sequence[str]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The host directories a namespaced run sees (read-only), and the symlinks among them."""
    dirs: list[str] = []
    links: list[tuple[str, str]] = []
    for path in _STANDARD_DIRS:
        if os.path.islink(path):
            links.append((path, os.readlink(path)))
        elif os.path.isdir(path):
            dirs.append(path)
    for tool in tools:
        for exe in {os.path.abspath(tool), os.path.realpath(tool)}:
            prefix = os.path.dirname(os.path.dirname(exe))  # .../bin/python -> ...
            if prefix not in ("", "/") and not _under(prefix, dirs):
                dirs.append(prefix)
    for path in extra:
        real = os.path.realpath(path)
        if os.path.isdir(real) and not _under(real, dirs):
            dirs.append(real)
    return tuple(dirs), tuple(links)


def _under(path: str, dirs: Sequence[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _available_languages(runtime: _Runtime) -> tuple[str, ...]:
    names = []
    for name, spec in _LANGUAGES.items():
        if name == "python":
            if runtime.python is not None:
                names.append(name)
        elif all(tool in runtime.tools for tool in spec.tools):
            names.append(name)
    return tuple(names)


def _environment(step: _Step, home: str) -> dict[str, str]:
    return {
        "PATH": _SEARCH_PATH,
        "HOME": home,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        **dict(step.env),
    }


def _clamp_memory(requested: int, opts: SandboxOptions) -> int:
    memory = requested if requested > 0 else opts.memory_limit_mb
    return max(16, min(memory, opts.max_memory_mb))


def _source_name(spec: _LanguageSpec, request: RunCodeRequest) -> str:
    if spec.source == "Main.java":
        match = _JAVA_CLASS.search(request.code)
        return f"{match.group(1) if match else 'Main'}.java"
    return spec.source


def _make_workdir(path: str, uid: int | None) -> None:
    os.mkdir(path, 0o700)
    if uid is not None:
        os.chown(path, uid, uid)


def _write_files(workdir: str, sources: Mapping[str, bytes], files: Mapping[str, str | None], uid: int | None) -> None:
    """Write the program and the request's extra files, owned by the run's uid."""
    contents = dict(sources)
    for name, encoded in files.items():
        if encoded is None:
            continue
        try:
            contents[name] = base64.b64decode(encoded, validate=True)
        except ValueError as exc:
            raise _SandboxFailure(f"file {name!r} is not valid base64") from exc
    for name, data in contents.items():
        target = _inside(workdir, name)
        parent = os.path.dirname(target)
        os.makedirs(parent, exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(data)
        if uid is not None:
            for path in _created_path(workdir, target):
                os.chown(path, uid, uid)


def _created_path(workdir: str, target: str) -> list[str]:
    rel = os.path.relpath(target, workdir).split(os.sep)
    return [os.path.join(workdir, *rel[: i + 1]) for i in range(len(rel))]


def _inside(workdir: str, name: str) -> str:
    if not name or "\x00" in name:
        raise _SandboxFailure(f"invalid file name {name!r}")
    target = os.path.normpath(os.path.join(workdir, name))
    if not target.startswith(workdir + os.sep):
        raise _SandboxFailure(f"file {name!r} is outside the working directory")
    return target


def _fetch_files(workdir: str, names: Sequence[str], limit: int) -> dict[str, str]:
    """Read back requested files. Symlinks and special files are skipped: the run made them."""
    out: dict[str, str] = {}
    real_workdir = os.path.realpath(workdir)
    for name in names:
        try:
            target = _inside(workdir, name)
        except _SandboxFailure:
            continue
        if not os.path.realpath(target).startswith(real_workdir + os.sep):
            continue
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            data = fh.read(limit + 1)
        if len(data) <= limit:
            out[name] = base64.b64encode(data).decode()
    return out


def _response(compile_result: CommandRunResult | None, run_result: CommandRunResult | None,
              files: dict[str, str]) -> RunCodeResponse:  # fmt: skip
    """The request's status from its steps, as SandboxFusion decides it."""
    steps = [r for r in (compile_result, run_result) if r is not None]
    if any(r.status == CommandRunStatus.ERROR for r in steps):
        status = RunStatus.SANDBOX_ERROR
    elif any(r.status == CommandRunStatus.TIME_LIMIT_EXCEEDED or r.return_code != 0 for r in steps):
        status = RunStatus.FAILED
    else:
        status = RunStatus.SUCCESS
    return RunCodeResponse(status=status, compile_result=compile_result, run_result=run_result, files=files)


# ---------------------------------------------------------------------- module-level API

_DEFAULT: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Sandbox] = weakref.WeakKeyDictionary()


async def run_code(request: RunCodeRequest | Mapping[str, Any], *, sandbox: Sandbox | None = None) -> RunCodeResponse:
    """Run one ``/run_code`` request on ``sandbox``, or on a default one for this event loop."""
    if sandbox is None:
        loop = asyncio.get_running_loop()
        sandbox = _DEFAULT.get(loop)
        if sandbox is None:
            sandbox = _DEFAULT[loop] = Sandbox()
    return await sandbox.run_code(request)
