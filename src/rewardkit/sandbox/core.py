"""The scheduler: :class:`Sandbox` queues, compiles and runs ``/run_code`` requests.

Its slots are shared fairly between requesters (:class:`~rewardkit._fair.FairSlots`):
inside the reward engine one requester is one ``score_many`` call (an HTTP request to
``rewardkit serve``), so a request's row waits for the first free slot, not behind
another request's queue. The wait for a slot, and for the sandbox to start, is reported
to the row's clock (:mod:`rewardkit._fair`): a row's time limit counts its runs only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import shutil
import signal
import tempfile
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from rewardkit._fair import FairSlots, holding, requester, waiting
from rewardkit._system import usable_cores
from rewardkit.sandbox import seccomp_filter
from rewardkit.sandbox.host import (
    WORK_PREFIX,
    _available_languages,
    _cgroup_parent,
    _claim,
    _clamp_memory,
    _compile_key,
    _compiled_ok,
    _environment,
    _fetch_files,
    _install,
    _is_root,
    _make_slots,
    _make_workdir,
    _memory_mode,
    _namespaces_unavailable,
    _python_candidates,
    _remove_all,
    _remove_stale,
    _remove_tree,
    _resolve_tools,
    _response,
    _slot_dir,
    _source_name,
    _visible_tree,
    _write_files,
)
from rewardkit.sandbox.languages import _LANGUAGES, _LanguageSpec
from rewardkit.sandbox.options import SandboxOptions
from rewardkit.sandbox.protocol import (
    CommandRunResult,
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
)
from rewardkit.sandbox.runs import _Outcome, _Runtime, _SandboxFailure, _Slot, _Step
from rewardkit.sandbox.spawner import (
    _KILL_GRACE_S,
    _await_exit,
    _Capture,
    _close_all,
    _feed,
    _pipes,
    _SpawnerClient,
)

log = logging.getLogger(__name__)


class Sandbox:
    """Runs ``/run_code`` requests with isolation and a bounded number of runs at once.

    Use it on one event loop (its queue belongs to that loop). :meth:`start` is optional
    (the first run starts it); :meth:`close` removes its working directories.
    """

    def __init__(self, options: SandboxOptions | None = None) -> None:
        self.options = options or SandboxOptions()
        if self.options.max_concurrent is not None and self.options.max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        self.max_concurrent = self.options.max_concurrent or usable_cores()
        self._runtime: _Runtime | None = None
        self._start_lock: asyncio.Lock | None = None
        self._free: FairSlots[_Slot] | None = None
        self._slots: list[_Slot] = []
        self._ready = False
        self._spawner_client: _SpawnerClient | None = None
        self._spawner_lock: asyncio.Lock | None = None
        self._compile_cache: OrderedDict[str, tuple[CommandRunResult, str, int]] = OrderedDict()
        self._compiling: dict[str, asyncio.Future[None]] = {}
        self._remove_base: weakref.finalize | None = None
        self._refused: str | None = None

    # -------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Probe the machine once: isolation mode, interpreters, installed languages."""
        if self._ready:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        # The probes are not a row's run: the clock of a row that waits here stands still.
        with waiting():
            async with self._start_lock:
                if not self._ready:
                    self._runtime = await self._probe()
                    self._ready = True
                    log.info("code sandbox started: %s", self.describe())

    async def _start_or_refuse(self) -> None:
        """Start once; a sandbox that refused to start (no isolation) keeps refusing."""
        if self._refused is not None:
            raise _SandboxFailure(self._refused)
        try:
            await self.start()
        except RuntimeError as exc:
            self._refused = str(exc)
            raise _SandboxFailure(self._refused) from None

    async def close(self) -> None:
        """Stop the spawner (killing runs in flight) and remove the working directories."""
        self._runtime, self._ready = None, False
        spawner, self._spawner_client = self._spawner_client, None
        if spawner is not None:
            await spawner.close()
        if self._remove_base is not None:
            self._remove_base()

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def isolation(self) -> dict[str, Any]:
        """What protects the host here (after :meth:`start`): mode, uid drop, reasons for less."""
        runtime = self._require_runtime()
        namespaced = runtime.mode == "namespaces"
        return {
            "mode": runtime.mode,
            "drops_privileges": _is_root(),
            "network": "none (a namespace per slot)" if namespaced else "host",
            "host_files_visible": not namespaced,
            "memory": _memory_mode(runtime),
            "syscall_filter": "seccomp (seccomp_filter.DENIED)" if runtime.seccomp else None,
            "workspace": "tmpfs" if namespaced else "measured",
            "python": runtime.python,
            "languages": list(runtime.languages),
            "notes": list(runtime.reasons),
        }

    def describe(self) -> str:
        """One line for logs: the isolation mode, how memory is bounded, what is missing."""
        info = self.isolation
        uid = "own uid per slot" if info["drops_privileges"] else "the server's uid"
        line = f"isolation: {info['mode']} ({uid}, memory: {info['memory']}"
        line += f", network: {info['network']})"
        return line + "".join(f"; {note}" for note in info["notes"])

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages this machine can run (after :meth:`start`)."""
        return self._require_runtime().languages

    @property
    def uids(self) -> tuple[int, ...]:
        """The uids runs execute as (empty when not started as root)."""
        self._require_runtime()
        return tuple(s.uid for s in self._slots if s.uid is not None)

    # -------------------------------------------------------------- running

    async def run_code(self, request: RunCodeRequest | Mapping[str, Any]) -> RunCodeResponse:
        """Run one request. Never raises for the program's or the sandbox's failures."""
        if not isinstance(request, RunCodeRequest):
            request = RunCodeRequest.model_validate(request)
        try:
            await self._start_or_refuse()
            spec = self._language(request.language)
            async with self._slot() as slot:
                return await self._run_in_slot(slot, spec, request)
        except _SandboxFailure as exc:
            return RunCodeResponse(status=RunStatus.SANDBOX_ERROR, message=str(exc))
        except OSError as exc:  # the host side: the working directory could not be made or written
            return RunCodeResponse(
                status=RunStatus.SANDBOX_ERROR, message=f"sandbox host error: {exc}"
            )

    async def _run_in_slot(
        self, slot: _Slot, spec: _LanguageSpec, request: RunCodeRequest
    ) -> RunCodeResponse:
        runtime = self._require_runtime()
        slot.runs += 1
        spawner = await self._spawner()
        run_dir = os.path.join(runtime.base, "slots", str(slot.index), f"run-{slot.runs}")
        workdir = spawner.view(run_dir)  # where the server reads and writes it
        _make_workdir(workdir, slot.uid)
        try:
            source = _source_name(spec, request)
            _write_files(workdir, {source: request.code.encode()}, request.files, slot.uid)
            memory = _clamp_memory(request.memory_limit_MB, self.options)
            compile_result = None
            if spec.compile is not None:
                compile_result = await self._compile(spec, request, source, memory, slot, run_dir)
                if not _compiled_ok(compile_result):
                    return _response(compile_result, None, {})
            stdin = None if request.stdin is None else request.stdin.encode()
            step = self._step(
                spec,
                spec.run,
                source,
                request.run_timeout,
                self.options.max_run_timeout_s,
                memory,
                stdin,
            )
            run_result = await self._execute(step, slot, run_dir)
            files, note = _fetch_files(workdir, request.fetch_files, self.options)
            response = _response(compile_result, run_result, files)
            response.message = note
            return response
        finally:
            _remove_tree(workdir)  # whatever the program left, however deep

    async def _compile(
        self,
        spec: _LanguageSpec,
        request: RunCodeRequest,
        source: str,
        memory: int,
        slot: _Slot,
        workdir: str,
    ) -> CommandRunResult:
        """Compile in ``workdir``, or copy in what an identical compile already produced.

        verl sends one request per test case, each with the same code: compiling once and
        reusing the binary saves most of the work of a compiled-language problem. The
        cache key covers everything the compiler sees (language, code, files, file name).
        """
        key = _compile_key(request, source)
        view = (await self._spawner()).view(workdir)
        if key not in self._compile_cache and key in self._compiling:
            await asyncio.shield(self._compiling[key])  # an identical compile is running
        cached = self._compile_cache.get(key)
        if cached is not None:
            result, artifacts, _ = cached
            self._compile_cache.move_to_end(key)
            _install(artifacts, view, slot.uid)
            return result
        future = self._compiling[key] = asyncio.get_running_loop().create_future()
        try:
            before = set(os.listdir(view))
            limit = max(memory, self.options.compile_memory_mb)
            step = self._step(spec, spec.compile or (), source, request.compile_timeout,
                              self.options.max_compile_timeout_s, limit, None)  # fmt: skip
            result = await self._execute(step, slot, workdir)
            if result.status == CommandRunStatus.FINISHED:  # a timeout may be the machine's load
                self._remember_compile(key, result, view, before)
            return result
        finally:
            self._compiling.pop(key, None)
            future.set_result(None)

    def _remember_compile(
        self, key: str, result: CommandRunResult, workdir: str, before: set[str]
    ) -> None:
        if self.options.compile_cache <= 0:
            return
        budget = self.options.compile_cache_mb << 20
        outputs = []
        if result.return_code == 0:
            for name in sorted(set(os.listdir(workdir)) - before):
                path = os.path.join(workdir, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    outputs.append((name, path, os.path.getsize(path)))
        size = sum(entry[2] for entry in outputs)
        if size > budget:
            return  # larger than the whole cache: not worth evicting everything for
        target = os.path.join(self._require_runtime().base, "compiled", key)
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target, 0o700)
        for name, path, _ in outputs:
            shutil.copy2(path, os.path.join(target, name))
        self._compile_cache[key] = (result, target, size)
        self._evict_compiles(budget)

    def _evict_compiles(self, budget: int) -> None:
        """Drop the least recently used compiles past the entry count or the byte budget."""
        total = sum(entry[2] for entry in self._compile_cache.values())
        while self._compile_cache and (
            len(self._compile_cache) > self.options.compile_cache or total > budget
        ):
            _, (_, old, size) = self._compile_cache.popitem(last=False)
            total -= size
            shutil.rmtree(old, ignore_errors=True)

    @property
    def compile_cache_bytes(self) -> int:
        """Bytes the compile cache holds now."""
        return sum(entry[2] for entry in self._compile_cache.values())

    def _step(self, spec: _LanguageSpec, template: tuple[str, ...], source: str, timeout: float,
              max_timeout: float, memory: int, stdin: bytes | None) -> _Step:  # fmt: skip
        runtime = self._require_runtime()
        fill = {
            "python": runtime.python or "python3",
            "mem": memory,
            "source": source,
            "stem": source.rsplit(".", 1)[0],
        }
        argv = [runtime.tools.get(part, part.format(**fill)) for part in template]
        timeout = timeout if timeout > 0 else 10.0
        return _Step(
            argv=tuple(argv),
            timeout=min(timeout, max_timeout),
            memory_mb=memory,
            jit=spec.jit,
            max_processes=max(self.options.max_processes, spec.min_processes),
            stack_mb=spec.stack_mb,
            stdin=stdin,
            env=spec.env,
        )

    async def _execute(self, step: _Step, slot: _Slot, workdir: str) -> CommandRunResult:
        outcome = await self._run_process(step, slot, workdir)
        stderr = outcome.stderr
        if outcome.overflowed:
            stderr += (
                f"\n[sandbox] output over {self.options.max_output_bytes} bytes: killed".encode()
            )
        if outcome.exceeded == "memory":
            stderr += f"\n[sandbox] the run's processes together used over {step.memory_mb} MiB: killed".encode()
        elif outcome.exceeded == "disk":
            stderr += (
                f"\n[sandbox] the run wrote over {self.options.workspace_mb} MiB: killed".encode()
            )
        return CommandRunResult(
            status=CommandRunStatus.TIME_LIMIT_EXCEEDED
            if outcome.timed_out
            else CommandRunStatus.FINISHED,
            execution_time=round(outcome.elapsed, 6),
            return_code=None if outcome.timed_out else outcome.return_code,
            stdout=outcome.stdout.decode(errors="replace"),
            stderr=stderr.decode(errors="replace"),
        )

    async def _run_process(self, step: _Step, slot: _Slot, workdir: str) -> _Outcome:
        """One process through the spawner: feed stdin, capture capped output, await its end."""
        spawner = await self._spawner()
        ours, theirs = _pipes()  # ours: stdin writer, stdout and stderr readers
        try:
            run_id, finished = await spawner.spawn(self._spawn_message(step, slot, workdir), theirs)
        except BaseException:
            _close_all(ours)
            raise
        finally:
            _close_all(theirs)
        overflow = asyncio.Event()
        cap = self.options.max_output_bytes
        out, err = _Capture(ours[1], cap, overflow), _Capture(ours[2], cap, overflow)
        io_tasks = [asyncio.ensure_future(_feed(ours[0], step.stdin)), asyncio.ensure_future(out.run()),
                    asyncio.ensure_future(err.run())]  # fmt: skip
        try:
            report = await _await_exit(spawner, run_id, finished, overflow, step.timeout)
            # The pipes close when the program and everything it started are gone.
            await asyncio.wait(io_tasks[1:], timeout=_KILL_GRACE_S)
        finally:
            for task in io_tasks:
                task.cancel()
            await asyncio.gather(*io_tasks, return_exceptions=True)
        if report.get("error"):
            raise _SandboxFailure(f"the sandbox could not run {step.argv[0]}: {report['error']}")
        status = report.get("status")
        if report.get("exceeded"):
            status = None  # over its total: the run failed, whatever its main process said
        return _Outcome(
            return_code=-signal.SIGKILL if status is None else os.waitstatus_to_exitcode(status),
            stdout=bytes(out.data),
            stderr=bytes(err.data),
            elapsed=float(report.get("elapsed") or 0.0),
            timed_out=bool(report.get("timed_out")),
            overflowed=overflow.is_set(),
            exceeded=report.get("exceeded"),
        )

    def _spawn_message(self, step: _Step, slot: _Slot, workdir: str) -> dict[str, Any]:
        runtime = self._require_runtime()
        opts = self.options
        mem = step.memory_mb << 20
        limits = [
            (resource.RLIMIT_CPU, int(step.timeout) + 1),
            (resource.RLIMIT_FSIZE, opts.max_file_mb << 20),
            (resource.RLIMIT_NOFILE, opts.max_open_files),
            (resource.RLIMIT_CORE, 0),
        ]
        if step.stack_mb is not None:
            limits.append((resource.RLIMIT_STACK, min(mem // 2, step.stack_mb << 20)))
        if slot.uid is not None:
            limits.append((resource.RLIMIT_NPROC, step.max_processes))
        # Last: once the address space is capped the child must not allocate any more.
        limits.append(
            (resource.RLIMIT_DATA, mem + (512 << 20)) if step.jit else (resource.RLIMIT_AS, mem)
        )
        namespaced = runtime.mode == "namespaces"
        cwd = "/workspace" if namespaced else workdir
        total = mem + (512 << 20) if step.jit else mem  # the JIT runtimes' own overhead
        cgroup = None
        if runtime.cgroup is not None:
            cgroup = {"version": runtime.cgroup[0], "parent": runtime.cgroup[1], "limit": total}
        account = None
        if cgroup is None or not namespaced:
            account = {
                "memory": None if cgroup else total,
                "disk": None if namespaced else opts.workspace_mb << 20,
            }
        return {
            "cgroup": cgroup,
            "account": account,
            "argv": list(step.argv),
            "env": _environment(step, cwd),
            "mode": runtime.mode,
            "cwd": cwd,
            "workdir": workdir,
            "root": os.path.join(runtime.base, "root"),
            "tmpfs": f"size={opts.tmpfs_mb}m,nr_inodes=8192,mode=1777",
            "limits": limits,
            "uid": slot.uid,
            "slot": slot.index,
            "nice": opts.nice,
            "timeout": step.timeout,
            "seccomp": runtime.seccomp,
        }

    async def _spawner(self) -> _SpawnerClient:
        """The spawner process, (re)started on demand: a crashed one costs only its runs."""
        if self._spawner_lock is None:
            self._spawner_lock = asyncio.Lock()
        async with self._spawner_lock:  # concurrent runs must not each start one
            if self._spawner_client is None or not self._spawner_client.alive:
                self._spawner_client = await _SpawnerClient.start(self._prepare_message())
            return self._spawner_client

    def _prepare_message(self) -> dict[str, Any] | None:
        """What the spawner builds once in ``namespaces`` mode: the runs' read-only root."""
        runtime = self._require_runtime()
        if runtime.mode != "namespaces":
            return None
        return {
            "op": "prepare",
            "root": os.path.join(runtime.base, "root"),
            "ro_dirs": list(runtime.ro_dirs),
            "symlinks": [list(pair) for pair in runtime.symlinks],
            "slots": [_slot_dir(runtime, slot) for slot in self._slots],
            "workspace": f"size={self.options.workspace_mb}m,nr_inodes=16384,mode=0711",
        }

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[_Slot]:
        """A slot, in fair turn between requesters (see the module)."""
        free = self._free
        assert free is not None
        if not free.idle and free.waiting >= self.options.max_queue:
            raise _SandboxFailure(f"sandbox queue full ({self.options.max_queue} requests waiting)")
        owner = requester()
        try:
            with waiting():
                slot = await free.acquire(owner, self.options.queue_timeout_s)
        except TimeoutError:
            raise _SandboxFailure(
                f"no free sandbox slot within {self.options.queue_timeout_s:g}s "
                "(waited that long in the sandbox's queue)"
            ) from None
        try:
            with holding():
                yield slot
        finally:
            free.release(owner, slot)

    def _language(self, name: str) -> _LanguageSpec:
        runtime = self._require_runtime()
        if name not in runtime.languages:
            have = ", ".join(runtime.languages)
            raise _SandboxFailure(
                f"language {name!r} is not available in this sandbox (available: {have})"
            )
        return _LANGUAGES[name]

    def _require_runtime(self) -> _Runtime:
        if self._runtime is None:
            raise RuntimeError("the sandbox is not started (await sandbox.start())")
        return self._runtime

    # -------------------------------------------------------------- probing

    async def _probe(self) -> _Runtime:
        opts = self.options
        root = opts.work_root or tempfile.gettempdir()
        for stale in _remove_stale(root):  # left by a sandbox killed with SIGKILL
            log.info("removed %s, left by a sandbox that did not close", stale)
        base = tempfile.mkdtemp(prefix=WORK_PREFIX, dir=root)
        os.chmod(base, 0o711)  # runs may traverse to their own directory, not list others
        os.mkdir(os.path.join(base, "root"), 0o755)  # where the spawner mounts the runs' root
        os.mkdir(os.path.join(base, "compiled"), 0o700)  # the compile cache: the server's only
        cgroup, why_not = _cgroup_parent(base) if opts.memory_accounting != "tree" else (None, "")
        if cgroup is None and opts.memory_accounting == "cgroup":
            shutil.rmtree(base, ignore_errors=True)
            raise RuntimeError(f"no memory cgroup can be made here: {why_not}")
        # Never closed (a crash, a forgotten close): still gone when the sandbox is, or at exit.
        self._remove_base = weakref.finalize(self, _remove_all, base, cgroup)
        _claim(base, cgroup)  # killed before that: the next sandbox removes both
        self._slots = _make_slots(self.max_concurrent, opts.uid_base)
        for slot in self._slots:
            os.makedirs(os.path.join(base, "slots", str(slot.index)), 0o711)
        self._free = FairSlots(self._slots)
        pythons = _python_candidates(opts.python_executable)
        tools = _resolve_tools(pythons)
        ro_dirs, symlinks = _visible_tree(tools.values(), opts.extra_ro_paths)
        runtime = self._runtime = _Runtime("basic", base, None, tools, (), ro_dirs, symlinks)
        runtime.cgroup = cgroup
        no_filter = seccomp_filter.unavailable()
        runtime.seccomp = no_filter is None
        if no_filter is not None:
            runtime.reasons.append(f"no system call filter ({no_filter})")
        if cgroup is None and why_not:
            runtime.reasons.append(f"no memory cgroup ({why_not}): process tree measured")
        try:
            await self._choose_mode(runtime)
            if (runtime.mode == "basic" or not runtime.seccomp) and not opts.allow_unisolated:
                raise RuntimeError(_unisolated(runtime, opts.isolation))
        except BaseException:
            if self._spawner_client is not None:
                await self._spawner_client.close()
                self._spawner_client = None
            self._remove_base()
            raise
        if not _is_root():
            runtime.reasons.append("not root: runs keep the server's uid, no RLIMIT_NPROC")
        runtime.python = await self._pick_python(pythons)
        runtime.languages = _available_languages(runtime)
        return runtime

    async def _choose_mode(self, runtime: _Runtime) -> None:
        """``namespaces`` if a probe run works that way, else ``basic`` (or raise, if asked for)."""
        wanted = self.options.isolation
        if wanted == "basic":
            return
        reason = _namespaces_unavailable()
        if reason is None:
            runtime.mode = "namespaces"
            reason = await self._probe_run(("/bin/sh", "-c", "echo ok"))
        if reason is None:
            return
        runtime.mode = "basic"
        if self._spawner_client is not None:  # it may have half entered its namespaces
            await self._spawner_client.close()
            self._spawner_client = None
        if wanted == "namespaces":
            raise RuntimeError(f"namespace isolation unavailable: {reason}")
        runtime.reasons.append(f"namespaces unavailable ({reason}): basic isolation")

    async def _probe_run(self, argv: tuple[str, ...]) -> str | None:
        """Run a trivial command through the full isolation; None if it worked, else why not."""
        assert self._free is not None
        step = _Step(argv=argv, timeout=20.0, memory_mb=self.options.compile_memory_mb, jit=False,
                     max_processes=self.options.max_processes)  # fmt: skip
        slot = self._slots[0]
        run_dir = os.path.join(_slot_dir(self._require_runtime(), slot), "probe")
        try:
            workdir = (await self._spawner()).view(run_dir)
            _make_workdir(workdir, slot.uid)
            try:
                result = await self._execute(step, slot, run_dir)
            finally:
                _remove_tree(workdir)
        except _SandboxFailure as exc:
            return str(exc)
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


# ---------------------------------------------------------------------- module-level API

_DEFAULT: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Sandbox] = (
    weakref.WeakKeyDictionary()
)


def _unisolated(runtime: _Runtime, wanted: str) -> str:
    """Why a sandbox refuses to start unisolated, naming what runs would reach."""
    allow = "reward.sandbox_fusion.allow_unisolated=true, rewardkit sandbox --allow-unisolated"
    if runtime.mode == "namespaces":  # isolated, but nothing stops a run asking the kernel
        return (
            f"the sandbox cannot filter system calls here ({seccomp_filter.unavailable()}): "
            "runs could create user and network namespaces, mount, ptrace and load BPF "
            f"programs. Install libseccomp2, or allow it: {allow}"
        )
    found = [r for r in runtime.reasons if r.startswith("namespaces")]
    why = "isolation 'basic' was asked for" if wanted == "basic" else "; ".join(found)
    if _is_root():
        exposed = (
            "code would see the host's file system (all an unprivileged uid may read: "
            "datasets, test answers) and the host's network"
        )
    else:
        exposed = (
            "not root: code would run as this user, read its files and signal it, and see "
            "the host's file system and network"
        )
    return (
        f"the sandbox cannot isolate runs here ({why}): {exposed}. Run as root where "
        f"namespaces can be made (CAP_SYS_ADMIN in a container or VM), or allow it: {allow}"
    )


async def run_code(
    request: RunCodeRequest | Mapping[str, Any], *, sandbox: Sandbox | None = None
) -> RunCodeResponse:
    """Run one ``/run_code`` request on ``sandbox``, or on a default one for this event loop."""
    if sandbox is None:
        loop = asyncio.get_running_loop()
        sandbox = _DEFAULT.get(loop)
        if sandbox is None:
            sandbox = _DEFAULT[loop] = Sandbox()
    return await sandbox.run_code(request)
