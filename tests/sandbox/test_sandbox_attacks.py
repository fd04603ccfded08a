"""guards: the sandbox's resource limits under attack, each reproduced against the real sandbox.

Sizes are small on purpose (the machine is shared): a 64 MiB limit against children that
touch 40 MiB each, a 16 MiB workspace against a 200 MiB write.
"""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from _support.serving import running_app
from rewardkit import sandbox as sandbox_module
from rewardkit.sandbox import (
    RunCodeRequest,
    RunStatus,
    Sandbox,
    SandboxOptions,
)
from rewardkit.sandbox.server import create_sandbox_app

IS_ROOT = os.geteuid() == 0
NAMESPACES = sandbox_module._namespaces_unavailable() is None


def request(code: str, language: str = "python", **kw) -> RunCodeRequest:
    kw.setdefault("run_timeout", 10)
    return RunCodeRequest(code=code, language=language, **kw)


FOUR_CHILDREN_40_MIB = """
import os, time
pids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(40 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(3)
        os._exit(0)
    pids.append(pid)
print([os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids])
"""


@pytest.mark.parametrize("accounting", ["auto", "tree"])
async def test_a_runs_total_memory_is_limited(accounting: str) -> None:
    """4 children x 40 MiB under a 64 MiB limit: each is under it, together they are not."""
    options = SandboxOptions(allow_unisolated=True, max_concurrent=1, memory_accounting=accounting)  # type: ignore[arg-type]
    async with Sandbox(options) as box:
        started = time.monotonic()
        answer = await box.run_code(request(FOUR_CHILDREN_40_MIB, memory_limit_MB=64))
        elapsed = time.monotonic() - started
        alone = await box.run_code(request("x = bytearray(40 << 20)", memory_limit_MB=64))
        mode = box.isolation["memory"]
    run = answer.run_result
    assert answer.status == RunStatus.FAILED and run.return_code != 0
    assert "together used over 64 MiB" in run.stderr
    assert elapsed < 8  # stopped, not left to the 10 s timeout
    assert alone.status == RunStatus.SUCCESS  # one 40 MiB process is within the limit
    assert ("process tree" in mode) == (accounting == "tree" or not mode.startswith("cgroup"))


async def test_a_request_cannot_ask_for_more_than_the_cap() -> None:
    async with Sandbox(
        SandboxOptions(allow_unisolated=True, max_concurrent=1, max_memory_mb=128)
    ) as box:
        code = "import resource; print(resource.getrlimit(resource.RLIMIT_AS)[0] >> 20)"
        answer = await box.run_code(request(code, memory_limit_MB=8192))
    assert int(answer.run_result.stdout) <= 128


async def test_fetch_files_counts_aliases_once_and_is_bounded() -> None:
    options = SandboxOptions(
        allow_unisolated=True, max_concurrent=1, max_fetch_bytes=3 << 20, max_fetch_files=4
    )
    write = "for n in 'abcdef':\n    open(n, 'wb').write(b'x' * (1 << 20))\n"
    async with Sandbox(options) as box:
        aliases = ["a", "./a", "././a", "x/../a", "a/."][:4] * 8
        answer = await box.run_code(request(write, fetch_files=aliases))
        assert list(answer.files) == ["a"]  # 32 spellings of one file: sent once
        answer = await box.run_code(request(write, fetch_files=list("abcdef")))
    assert sorted(answer.files) == ["a", "b", "c"]  # 3 MiB in all
    assert "3 file(s) left out" in answer.message
    assert sum(len(base64.b64decode(v)) for v in answer.files.values()) <= 3 << 20


@pytest.mark.skipif(not NAMESPACES, reason="the workspace tmpfs needs namespaces")
async def test_a_run_cannot_fill_the_disk_in_namespaces_mode() -> None:
    code = (
        "import os\nwritten = 0\ntry:\n    with open('big', 'wb') as fh:\n"
        "        for _ in range(200):\n            fh.write(b'x' * (1 << 20)); written += 1\n"
        "except OSError as exc:\n    print(exc.errno, written)\n"
    )
    async with Sandbox(
        SandboxOptions(allow_unisolated=True, max_concurrent=1, workspace_mb=16)
    ) as box:
        answer = await box.run_code(request(code))
        base = box._require_runtime().base
        assert _tree_bytes(base) < 1 << 20  # nothing reached the host's disk
    errno, written = answer.run_result.stdout.split()
    assert int(errno) == 28 and int(written) <= 16  # ENOSPC at the workspace's size


DEEP_TREE = """
import os
for _ in range(1100):  # deeper than the server's recursion limit
    os.mkdir("d" * 200)
    os.chdir("d" * 200)  # 220,000 characters of path: past PATH_MAX from the host too
open("leaf", "w").close()
print("built")
"""


async def test_a_run_that_leaves_a_deep_tree_keeps_its_answer_and_its_slot() -> None:
    # shutil.rmtree recursed once per level: RecursionError escaped run_code (the row was
    # an error, not its program's verdict) and the tree stayed on the slot's workspace.
    async with Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=1)) as box:
        answer = await box.run_code(request(DEEP_TREE, run_timeout=30))
        assert answer.status == RunStatus.SUCCESS, answer.message
        assert answer.run_result.stdout.strip() == "built"
        slots = os.path.join(box._require_runtime().base, "slots")
        after = await box.run_code(request("import os\nprint(sorted(os.listdir('..')))"))
        assert after.status == RunStatus.SUCCESS, after.message
        if os.path.isdir(slots):  # the runs' directories as the host sees them (basic mode)
            assert _tree_bytes(slots) < 1 << 20


def test_removing_a_tree_of_any_depth_keeps_what_its_links_point_to(tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    top = tmp_path / "run"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth in range(1500):  # made through descriptors: the path is past PATH_MAX
            os.mkdir("n" * 100, dir_fd=fd)
            inner = os.open("n" * 100, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
            if depth % 300 == 0:
                os.symlink(outside, "link", dir_fd=fd)
                with open(os.open("file", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as fh:
                    fh.write("data")
    finally:
        os.close(fd)
    sandbox_module.host._remove_tree(str(top))
    assert not top.exists()
    assert (outside / "keep").read_text() == "x"
    sandbox_module.host._remove_tree(str(top))  # already gone: nothing to do, no error


async def test_a_run_writing_too_much_is_killed_in_basic_mode() -> None:
    code = (
        "import time\nfor i in range(40):\n    open(f'f{i}', 'wb').write(b'x' * (4 << 20))\n"
        "    time.sleep(0.05)\nprint('wrote everything')\n"
    )
    options = SandboxOptions(
        allow_unisolated=True, max_concurrent=1, workspace_mb=16, isolation="basic"
    )
    async with Sandbox(options) as box:
        answer = await box.run_code(request(code))
    assert "wrote everything" not in answer.run_result.stdout
    assert "wrote over 16 MiB" in answer.run_result.stderr


async def test_the_compile_cache_is_bounded_in_bytes() -> None:
    async with Sandbox(
        SandboxOptions(allow_unisolated=True, max_concurrent=1, compile_cache_mb=1)
    ) as box:
        if "cpp" not in box.languages:
            pytest.skip("g++ is not installed")
        for i in range(3):  # each binary holds a 400 KB initialised array
            code = f"int big[100000] = {{{i + 1}}};\nint main() {{ return big[0] - {i + 1}; }}"
            answer = await box.run_code(request(code, "cpp"))
            assert answer.status == RunStatus.SUCCESS
        compiled = os.path.join(box._require_runtime().base, "compiled")
        assert 0 < box.compile_cache_bytes <= 1 << 20
        assert _tree_bytes(compiled) <= 1 << 20
        assert len(os.listdir(compiled)) < 3  # the oldest was evicted


@pytest.mark.skipif(not NAMESPACES, reason="needs namespaces (root with CAP_SYS_ADMIN)")
async def test_concurrent_runs_cannot_talk_through_an_abstract_socket() -> None:
    listen = (
        "import socket, time\ns = socket.socket(socket.AF_UNIX)\ns.bind('\\0rewardkit-chat')\n"
        "s.listen()\nprint('listening', flush=True)\ns.settimeout(3)\n"
        "try:\n    s.accept(); print('accepted')\nexcept OSError:\n    print('alone')\n"
    )
    connect = (  # keeps trying for 2.5 s, while the other run listens for 3 s
        "import socket, time\nfor _ in range(50):\n    c = socket.socket(socket.AF_UNIX)\n"
        "    try:\n        c.connect('\\0rewardkit-chat'); print('connected'); break\n"
        "    except OSError as exc:\n        error = type(exc).__name__\n    time.sleep(0.05)\n"
        "else:\n    print(error)\n"
    )
    async with Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=2)) as box:
        first, second = await asyncio.gather(
            box.run_code(request(listen)), box.run_code(request(connect))
        )
    assert first.run_result.stdout == "listening\nalone\n"
    assert second.run_result.stdout == "ConnectionRefusedError\n"
    async with Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=1)) as box:
        squat = "import socket, os\ns = socket.socket(socket.AF_UNIX)\ns.bind('\\0rk-squat')\n"
        daemon = squat + "if os.fork() == 0:\n    os.setsid(); import time; time.sleep(30)\n"
        left = await box.run_code(request(daemon))  # its daemon holds the name... until killed
        again = await box.run_code(request(squat + "print('bound')"))  # same slot, next run
    assert left.status == RunStatus.SUCCESS and again.run_result.stdout == "bound\n"


@pytest.mark.skipif(not IS_ROOT, reason="drops to an unprivileged uid to show the refusal")
def test_an_unprivileged_sandbox_refuses_to_start_unless_allowed() -> None:
    """As a plain user there is no isolation: the sandbox says so instead of running code."""
    script = (
        "import asyncio, os, sys\n"
        "os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)\n"
        "from rewardkit.sandbox import Sandbox, SandboxOptions\n"
        "async def main():\n"
        "    box = Sandbox(SandboxOptions(max_concurrent=1, work_root='/tmp'))\n"
        "    answer = await box.run_code({'code': 'print(1)', 'language': 'python'})\n"
        "    print(answer.status, answer.message)\n"
        "asyncio.run(main())\n"
    )
    # Forked from this interpreter (already loaded): the user could not exec it from /root.
    out = _forked(script)
    assert out.startswith("SandboxError the sandbox cannot isolate runs here"), out
    assert "reward.sandbox_fusion.allow_unisolated=true" in out
    assert "--allow-unisolated" in out


def _forked(script: str) -> str:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        sys.stdout = sys.stderr = os.fdopen(write, "w")  # not pytest's capture
        try:
            exec(compile(script, "<child>", "exec"), {"__name__": "__child__"})
        finally:
            sys.stdout.flush()
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as fh:
        out = fh.read()
    os.waitpid(pid, 0)
    return out


def test_the_cli_prints_its_address_and_isolation_mode() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "REWARDKIT_SANDBOX_API_KEY": "k"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rewardkit.cli", "sandbox", "--port", "0", "--max-concurrent", "1",
         *([] if IS_ROOT else ["--allow-unisolated"])],
        stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        line = proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert line.startswith("rewardkit sandbox on http://127.0.0.1:"), line
    assert "isolation: " in line and "auth: bearer key" in line
    if NAMESPACES:
        assert "isolation: namespaces" in line


def test_the_cli_refuses_an_empty_api_key() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "REWARDKIT_SANDBOX_API_KEY": ""}
    done = subprocess.run(
        [sys.executable, "-m", "rewardkit.cli", "sandbox", "--port", "0"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0
    assert "REWARDKIT_SANDBOX_API_KEY is set but empty" in done.stderr


@pytest.fixture(scope="module")
def guarded() -> Iterator[str]:
    """The real app with a key and a 1 MiB body limit, under uvicorn on a free port."""
    app = create_sandbox_app(
        Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=1)),
        api_key="s3cret",
        max_body_bytes=1 << 20,
    )
    with running_app(app, wait_ready=False) as base:
        yield base


def test_the_api_key_is_required_except_for_ping(guarded: str) -> None:
    body = {"code": "print(1)", "language": "python"}
    assert httpx.get(f"{guarded}/v1/ping").json() == "pong"
    assert httpx.post(f"{guarded}/run_code", json=body).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert httpx.post(f"{guarded}/run_code", json=body, headers=wrong).status_code == 401
    assert httpx.get(f"{guarded}/v1/isolation").status_code == 401
    right = {"Authorization": "Bearer s3cret"}
    answer = httpx.post(f"{guarded}/run_code", json=body, headers=right, timeout=60)
    assert answer.status_code == 200 and answer.json()["run_result"]["stdout"] == "1\n"


def test_a_body_over_the_limit_is_413_declared_or_streamed(guarded: str) -> None:
    right = {"Authorization": "Bearer s3cret"}
    big = {"code": "x" * (2 << 20), "language": "python"}
    assert httpx.post(f"{guarded}/run_code", json=big, headers=right).status_code == 413

    def chunks() -> Iterator[bytes]:
        yield b'{"language": "python", "code": "'
        for _ in range(18):  # 1.1 MiB: over the limit, yet small enough to be sent whole
            yield b"x" * 65536

    streamed = httpx.post(f"{guarded}/run_code", content=chunks(), headers=right, timeout=60)
    assert streamed.status_code == 413
    ok = httpx.post(f"{guarded}/run_code", json={"code": "print(2)", "language": "python"},
                    headers=right, timeout=60)  # fmt: skip
    assert ok.json()["run_result"]["stdout"] == "2\n"  # the server is fine after both


def _tree_bytes(path: str) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total
