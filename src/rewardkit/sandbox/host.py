"""Host-side helpers: the machine's isolation, tools, uids, cgroups, work directories."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import platform
import secrets
import shutil
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rewardkit.sandbox.languages import (
    _JAVA_CLASS,
    _LANGUAGES,
    _SEARCH_PATH,
    _STANDARD_DIRS,
    _LanguageSpec,
)
from rewardkit.sandbox.options import SandboxOptions
from rewardkit.sandbox.protocol import (
    CommandRunResult,
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
)
from rewardkit.sandbox.runs import _Runtime, _SandboxFailure, _Slot, _Step

log = logging.getLogger(__name__)

_PIVOT_ARCHES = ("x86_64", "aarch64", "arm64")


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _namespaces_unavailable() -> str | None:
    if not sys.platform.startswith("linux"):
        return "not Linux"
    if not _is_root():
        return "not root"
    if platform.machine() not in _PIVOT_ARCHES:
        return f"no pivot_root syscall number known for {platform.machine()}"
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


def _visible_tree(
    tools: Any, extra: Sequence[str]
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
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
        # glibc reserves 64 MB of address space per thread arena: with RLIMIT_AS that
        # would stop a program at a dozen threads.
        "MALLOC_ARENA_MAX": "2",
        **dict(step.env),
    }


def _compiled_ok(result: CommandRunResult) -> bool:
    return result.status == CommandRunStatus.FINISHED and result.return_code == 0


def _compile_key(request: RunCodeRequest, source: str) -> str:
    digest = hashlib.sha256()
    for part in (request.language, source, request.code, *sorted(request.files.items())):
        digest.update(repr(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _install(artifacts: str, workdir: str, uid: int | None) -> None:
    """Copy a cached compile's outputs into a run's directory, owned by the run's uid."""
    for name in os.listdir(artifacts):
        target = os.path.join(workdir, name)
        shutil.copy2(os.path.join(artifacts, name), target)
        if uid is not None:
            os.chown(target, uid, uid)


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


def _write_files(
    workdir: str, sources: Mapping[str, bytes], files: Mapping[str, str | None], uid: int | None
) -> None:
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


def _fetch_files(
    workdir: str, names: Sequence[str], opts: SandboxOptions
) -> tuple[dict[str, str], str]:
    """Read back requested files, each once however it is spelled (``./a`` is ``a``), within
    ``max_fetch_files`` and ``max_fetch_bytes`` in total; the message says what was left out.
    Symlinks and special files are skipped: the run made them."""
    out: dict[str, str] = {}
    seen: set[str] = set()
    budget = opts.max_fetch_bytes
    left_out: list[str] = []
    for name in names:
        target = _fetchable(workdir, name)
        if target is None or target in seen:
            continue
        seen.add(target)
        data = _read_regular(target, budget) if len(seen) <= opts.max_fetch_files else None
        if data is None:
            left_out.append(name)
            continue
        budget -= len(data)
        out[name] = base64.b64encode(data).decode()
    if not left_out:
        return out, ""
    shown = ", ".join(repr(name[:_NAME_SHOWN]) for name in left_out[:_NAMES_SHOWN])
    more = f" and {len(left_out) - _NAMES_SHOWN} more" if len(left_out) > _NAMES_SHOWN else ""
    return out, (
        f"fetch_files: {len(left_out)} file(s) left out: {shown}{more} (at most "
        f"{opts.max_fetch_files} files and {opts.max_fetch_bytes} bytes in all)"
    )


# How many left-out files the message names, and how much of each name.
_NAMES_SHOWN = 20
_NAME_SHOWN = 200


def _fetchable(workdir: str, name: str) -> str | None:
    """The file's normalized path inside ``workdir``; None if outside or through a symlink.

    Not realpath: ``workdir`` may be reached through the spawner's ``/proc/<pid>/root``,
    which realpath would resolve to the host's view. The run is over: nothing moves now.
    """
    try:
        target = _inside(workdir, name)
    except _SandboxFailure:
        return None
    path = workdir
    for part in os.path.relpath(target, workdir).split(os.sep):
        path = os.path.join(path, part)
        if os.path.islink(path):
            return None
    return target


def _read_regular(path: str, limit: int) -> bytes | None:
    """A regular file's bytes if it holds at most ``limit``; None otherwise or if missing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = fh.read(limit + 1)
    return data if len(data) <= limit else None


def _slot_dir(runtime: _Runtime, slot: _Slot) -> str:
    return os.path.join(runtime.base, "slots", str(slot.index))


def _memory_mode(runtime: _Runtime) -> str:
    if runtime.cgroup is None:
        return "process tree measured every 50 ms"
    return f"cgroup v{runtime.cgroup[0]}"


def _cgroup_parent(base: str) -> tuple[tuple[int, str] | None, str]:
    """A fresh cgroup to hold this sandbox's run cgroups: (version, path), or None and why.

    cgroup v1's memory controller if this process is in one we may write, else cgroup v2
    where the memory controller can be delegated to a child of our own cgroup.
    """
    try:
        with open("/proc/self/cgroup") as fh:
            lines = [line.rstrip("\n").split(":", 2) for line in fh if line.count(":") >= 2]
    except OSError as exc:
        return None, f"cannot read /proc/self/cgroup: {exc}"
    name = f"rewardkit-{os.path.basename(base)}"
    reasons = []
    for _, controllers, path in lines:
        if "memory" in controllers.split(","):
            for root in (f"/sys/fs/cgroup/memory{path}", "/sys/fs/cgroup/memory"):
                made, why = _try_cgroup(1, os.path.join(root, name))
                if made:
                    return (1, made), ""
                reasons.append(why)
    for hierarchy, _, path in lines:
        if hierarchy == "0":
            made, why = _try_cgroup(2, os.path.join(f"/sys/fs/cgroup{path}", name))
            if made:
                return (2, made), ""
            reasons.append(why)
    return None, "; ".join(reasons) or "no cgroup memory controller"


def _try_cgroup(version: int, path: str) -> tuple[str | None, str]:
    """Make ``path`` and check a child of it takes a memory limit; remove it if not."""
    parent = os.path.dirname(path)
    try:
        if version == 2:
            with open(os.path.join(parent, "cgroup.subtree_control")) as fh:
                if "memory" not in fh.read().split():
                    return None, f"memory is not delegated to {parent} (cgroup v2)"
        os.mkdir(path)
    except OSError as exc:
        return None, f"cannot make {path}: {exc.strerror}"
    try:
        if version == 2:
            with open(os.path.join(path, "cgroup.subtree_control"), "w") as fh:
                fh.write("+memory")
        probe = os.path.join(path, "probe")
        os.mkdir(probe)
        try:
            limit = "memory.max" if version == 2 else "memory.limit_in_bytes"
            with open(os.path.join(probe, limit), "w") as fh:
                fh.write(str(64 << 20))
        finally:
            os.rmdir(probe)
    except OSError as exc:
        _remove_cgroups(path)
        return None, f"cannot limit memory under {path}: {exc.strerror}"
    return path, ""


def _remove_cgroups(path: str) -> None:
    """Remove a sandbox's cgroup and its run cgroups, waiting up to 1 s for killed runs'
    last processes to leave them; what is still busy after that stays."""
    for _ in range(20):
        with contextlib.suppress(OSError):
            for entry in os.scandir(path):
                if entry.is_dir(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.rmdir(entry.path)
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)


def _remove_tree(path: str) -> None:
    """Remove the directory ``path`` and everything in it, however deep; never raises.

    A run's directory is what its program left: ``shutil.rmtree`` recurses once per level
    (Python 3.11) and a program that made 1,100 nested directories made it raise
    RecursionError past ``ignore_errors``, losing the run's answer and leaving the tree on
    the slot's small file system (every later run there failed, out of space). Here each
    directory below ``path`` is first moved up to sit directly under it (renamed, under a
    fresh name), so nothing is ever more than one level deep: no recursion, two open
    descriptors, and each entry handled once. What cannot be removed stays and is logged."""
    try:
        root = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError as exc:
        log.warning("cannot remove %s: %s", path, exc)
        return
    try:
        pending = _empty_into(root, root)  # the top level's directories, to empty in turn
        while pending:
            name = pending.pop()
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root)
            except OSError:
                continue  # gone, or no directory after all: unlinked below
            try:
                pending.extend(_empty_into(inner, root))
            except OSError:
                pass  # unreadable: it stays (logged below), the rest is removed
            finally:
                os.close(inner)
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=root)
    except OSError as exc:
        log.warning("cannot empty %s: %s", path, exc)
    finally:
        os.close(root)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("cannot remove %s: %s", path, exc)


def _empty_into(directory: int, root: int) -> list[str]:
    """Unlink what ``directory`` holds but its directories, which are moved to ``root``
    (when it is not ``root`` itself) under fresh names; the names under ``root`` of the
    directories still to empty."""
    moved = []
    with os.scandir(directory) as entries:
        listed = list(entries)
    for entry in listed:
        if not entry.is_dir(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.unlink(entry.name, dir_fd=directory)
        elif directory == root:
            moved.append(entry.name)
        else:
            fresh = f".rewardkit-removing-{secrets.token_hex(8)}"
            with contextlib.suppress(OSError):
                os.rename(entry.name, fresh, src_dir_fd=directory, dst_dir_fd=root)
                moved.append(fresh)
    return moved


def _remove_all(base: str, cgroup: tuple[int, str] | None) -> None:
    _remove_tree(base)
    if cgroup is not None:
        _remove_cgroups(cgroup[1])


WORK_PREFIX = "rewardkit-sandbox-"
"""Name prefix of a sandbox's directory under its ``work_root``."""

_OWNER = "owner.json"  # in a sandbox's directory: the process that owns it, and its cgroup


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), or None if there is none."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat_line = fh.read()
    except OSError:
        return None
    return stat_line.rpartition(")")[2].split()[19]  # field 22, after the command name


def _claim(base: str, cgroup: tuple[int, str] | None) -> None:
    """Record that this process owns ``base`` (and its cgroup), for :func:`_remove_stale`."""
    owner = {"pid": os.getpid(), "start": _process_start(os.getpid()), "cgroup": cgroup}
    with open(os.path.join(base, _OWNER), "w") as fh:
        json.dump(owner, fh)
    os.chmod(os.path.join(base, _OWNER), 0o600)


def _remove_stale(root: str) -> list[str]:
    """Remove the directories and cgroups that sandboxes killed without closing (SIGKILL)
    left under ``root``: only those whose owner process is gone (pid dead, or reused by a
    process that started later). Directories without an owner record are left alone.
    Returns the directories removed."""
    removed: list[str] = []
    if _process_start(os.getpid()) is None:  # no /proc: liveness cannot be told
        return removed
    try:
        entries = [e for e in os.scandir(root) if e.name.startswith(WORK_PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            with open(os.path.join(entry.path, _OWNER)) as fh:
                owner = json.load(fh)
            pid, start = int(owner["pid"]), owner.get("start")
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if os.stat(entry.path).st_uid != os.geteuid():
            continue  # another user's sandbox: not ours to judge
        alive = _process_start(pid)
        if alive is not None and (start is None or alive == start):
            continue
        cgroup = owner.get("cgroup")
        cgroup_path = cgroup[1] if isinstance(cgroup, list) and len(cgroup) == 2 else None
        if cgroup_path is not None and not os.path.basename(cgroup_path).startswith(
            f"rewardkit-{WORK_PREFIX}"
        ):
            cgroup_path = None  # only ever a cgroup this module named
        _remove_all(entry.path, None if cgroup_path is None else (0, cgroup_path))
        removed.append(entry.path)
    return removed


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
    return RunCodeResponse(
        status=status, compile_result=compile_result, run_result=run_result, files=files
    )
