"""guards: the embedded sandbox in-process: protocol shapes, languages, limits, queueing, cleanup.

Hostile programs against the real HTTP server are in test_sandbox_server.py.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import os

import psutil
import pytest

from rewardkit import sandbox as sandbox_module
from rewardkit.sandbox import (
    CommandRunStatus,
    RunCodeRequest,
    RunStatus,
    Sandbox,
    SandboxOptions,
    run_code,
)

IS_ROOT = os.geteuid() == 0


@pytest.fixture
async def sandbox():
    box = Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=2, memory_limit_mb=256))
    await box.start()
    yield box
    await box.close()


def request(code: str, language: str = "python", **kw) -> RunCodeRequest:
    kw.setdefault("run_timeout", 5)
    return RunCodeRequest(code=code, language=language, **kw)


async def test_python_reads_stdin_and_reports_success(sandbox: Sandbox) -> None:
    answer = await sandbox.run_code(
        request("print(sum(map(int, input().split())))", stdin="2 40\n")
    )
    assert answer.status == RunStatus.SUCCESS
    assert answer.compile_result is None
    run = answer.run_result
    assert run is not None and run.status == CommandRunStatus.FINISHED
    assert (run.return_code, run.stdout, run.stderr) == (0, "42\n", "")
    assert 0 < run.execution_time < 5


async def test_a_raising_program_is_failed_with_its_traceback(sandbox: Sandbox) -> None:
    answer = await sandbox.run_code(request("raise ValueError('boom')"))
    assert answer.status == RunStatus.FAILED
    assert answer.run_result.return_code == 1
    assert "ValueError: boom" in answer.run_result.stderr


async def test_a_signal_is_a_negative_return_code(sandbox: Sandbox) -> None:
    answer = await sandbox.run_code(
        request("import os, signal; os.kill(os.getpid(), signal.SIGABRT)")
    )
    assert answer.status == RunStatus.FAILED
    assert answer.run_result.return_code == -6


async def test_timeout_is_time_limit_exceeded_without_return_code(sandbox: Sandbox) -> None:
    answer = await sandbox.run_code(
        request("print('started', flush=True)\nwhile True: pass", run_timeout=1.5)
    )
    assert answer.status == RunStatus.FAILED
    run = answer.run_result
    assert run.status == CommandRunStatus.TIME_LIMIT_EXCEEDED
    assert run.return_code is None
    assert run.stdout == "started\n"  # what it printed before the kill comes back
    assert 1.4 < run.execution_time < 10


async def test_cpp_is_compiled_then_run(sandbox: Sandbox) -> None:
    if "cpp" not in sandbox.languages:
        pytest.skip("g++ is not installed")
    code = "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a*b<<std::endl;}"
    answer = await sandbox.run_code(request(code, "cpp", stdin="6 7"))
    assert answer.status == RunStatus.SUCCESS
    assert answer.compile_result.status == CommandRunStatus.FINISHED
    assert answer.compile_result.return_code == 0
    assert answer.run_result.stdout == "42\n"


async def test_cpp_compile_error_has_no_run_result(sandbox: Sandbox) -> None:
    if "cpp" not in sandbox.languages:
        pytest.skip("g++ is not installed")
    answer = await sandbox.run_code(request("int main() { return undefined_name; }", "cpp"))
    assert answer.status == RunStatus.FAILED
    assert answer.run_result is None
    assert answer.compile_result.return_code != 0
    assert "undefined_name" in answer.compile_result.stderr


@pytest.mark.parametrize(
    ("language", "code", "expected"),
    [
        ("bash", "read x; echo $((x * 2))", "42\n"),
        (
            "nodejs",
            "const x = require('fs').readFileSync(0, 'utf8'); console.log(Number(x) * 2)",
            "42\n",
        ),
        ("perl", 'my $x = <STDIN>; print $x * 2, "\\n";', "42\n"),
    ],
)
async def test_other_installed_languages(
    sandbox: Sandbox, language: str, code: str, expected: str
) -> None:
    if language not in sandbox.languages:
        pytest.skip(f"{language} is not installed")
    answer = await sandbox.run_code(request(code, language, stdin="21\n"))
    assert answer.status == RunStatus.SUCCESS, answer
    assert answer.run_result.stdout == expected


async def test_missing_language_is_a_sandbox_error(sandbox: Sandbox) -> None:
    missing = next(
        lang for lang in ("lean", "julia", "swift", "racket") if lang not in sandbox.languages
    )
    answer = await sandbox.run_code(request("x", missing))
    assert answer.status == RunStatus.SANDBOX_ERROR
    assert "not available" in answer.message and answer.run_result is None


async def test_files_in_and_out(sandbox: Sandbox) -> None:
    files = {"data/in.txt": base64.b64encode(b"hello").decode()}
    code = "print(open('data/in.txt').read()); open('out.bin', 'wb').write(bytes(range(5)))"
    answer = await sandbox.run_code(
        request(code, files=files, fetch_files=["out.bin", "missing.txt"])
    )
    assert answer.run_result.stdout == "hello\n"
    assert answer.files == {"out.bin": base64.b64encode(bytes(range(5))).decode()}


async def test_fetch_files_does_not_follow_links_out(sandbox: Sandbox) -> None:
    code = "import os; os.symlink('/etc/hostname', 'leak'); os.mkfifo('fifo')"
    answer = await sandbox.run_code(
        request(code, fetch_files=["leak", "fifo", "../../etc/hostname"])
    )
    assert answer.status == RunStatus.SUCCESS
    assert answer.files == {}


async def test_request_files_cannot_escape_the_directory(sandbox: Sandbox) -> None:
    answer = await sandbox.run_code(
        request("pass", files={"../escape.txt": base64.b64encode(b"x").decode()})
    )
    assert answer.status == RunStatus.SANDBOX_ERROR
    assert "outside the working directory" in answer.message


async def test_memory_limit_is_enforced(sandbox: Sandbox) -> None:
    answer = await sandbox.run_code(
        request("x = bytearray(300 * 1024 * 1024)", memory_limit_MB=128)
    )
    assert answer.status == RunStatus.FAILED
    assert "MemoryError" in answer.run_result.stderr
    small = await sandbox.run_code(
        request("x = bytearray(50 * 1024 * 1024); print(len(x))", memory_limit_MB=128)
    )
    assert small.status == RunStatus.SUCCESS


async def test_output_is_capped_and_the_run_killed() -> None:
    async with Sandbox(
        SandboxOptions(allow_unisolated=True, max_concurrent=1, max_output_bytes=100_000)
    ) as box:
        answer = await box.run_code(
            request("import sys\nwhile True: sys.stdout.write('x' * 65536)")
        )
    run = answer.run_result
    assert answer.status == RunStatus.FAILED
    assert len(run.stdout) == 100_000
    assert "output over 100000 bytes" in run.stderr


async def test_runs_beyond_max_concurrent_queue() -> None:
    async with Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=2)) as box:
        code = "import time; time.sleep(0.4)"
        started = asyncio.get_running_loop().time()
        answers = await asyncio.gather(*(box.run_code(request(code)) for _ in range(4)))
        elapsed = asyncio.get_running_loop().time() - started
    assert all(a.status == RunStatus.SUCCESS for a in answers)
    assert elapsed >= 0.8  # two waves of two


async def test_full_queue_and_queue_timeout_are_sandbox_errors() -> None:
    options = SandboxOptions(
        allow_unisolated=True, max_concurrent=1, max_queue=1, queue_timeout_s=1.0
    )  # the queued request waits 1 s: the third must arrive while it waits, even when loaded
    async with Sandbox(options) as box:
        slow = asyncio.ensure_future(box.run_code(request("import time; time.sleep(3)")))
        await asyncio.sleep(0.2)
        waiting = asyncio.ensure_future(box.run_code(request("pass")))
        await asyncio.sleep(0.05)
        refused = await box.run_code(request("pass"))
        assert refused.status == RunStatus.SANDBOX_ERROR and "queue full" in refused.message
        timed_out = await waiting
        assert (
            timed_out.status == RunStatus.SANDBOX_ERROR
            and "no free sandbox slot" in timed_out.message
        )
        assert (await slow).status == RunStatus.SUCCESS


async def test_cancelling_a_request_kills_its_run() -> None:
    async with Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=1)) as box:
        task = asyncio.ensure_future(
            box.run_code(request("import time; time.sleep(30)", run_timeout=60))
        )
        spawner = await _running(box)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not _live(spawner.children(recursive=True))
        assert (await box.run_code(request("print(1)"))).run_result.stdout == "1\n"


async def test_a_dead_spawner_fails_its_runs_and_is_restarted() -> None:
    async with Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=1)) as box:
        task = asyncio.ensure_future(
            box.run_code(request("import time; time.sleep(30)", run_timeout=60))
        )
        await _running(box)
        box._spawner_client.proc.kill()
        answer = await task
        assert answer.status == RunStatus.SANDBOX_ERROR and "spawner" in answer.message
        assert (await box.run_code(request("print(2)"))).run_result.stdout == "2\n"


async def test_basic_isolation_still_limits_and_cleans_up() -> None:
    async with Sandbox(
        SandboxOptions(allow_unisolated=True, max_concurrent=1, isolation="basic")
    ) as box:
        assert box.isolation["mode"] == "basic"
        ok = await box.run_code(request("import os; print(os.getuid() != 0)"))
        assert ok.run_result.stdout == ("True\n" if IS_ROOT else "False\n")
        daemon = (
            "import os, time\nif os.fork() == 0:\n    os.setsid(); time.sleep(60)\nprint('left')"
        )
        answer = await box.run_code(request(daemon))
        assert answer.run_result.stdout == "left\n"
        await asyncio.sleep(0.2)
        if IS_ROOT:  # the setsid escape is killed with every other process of the run's uid
            assert not [p for p in psutil.process_iter(["uids"]) if p.info["uids"].real in box.uids]
        looping = await box.run_code(request("while True: pass", run_timeout=0.5))
        assert looping.run_result.status == CommandRunStatus.TIME_LIMIT_EXCEEDED


async def test_module_level_run_code_uses_a_default_sandbox() -> None:
    answer = await run_code({"code": "print('hi')", "language": "python"})
    assert answer.run_result.stdout == "hi\n"
    await sandbox_module._DEFAULT.pop(asyncio.get_running_loop()).close()


async def test_isolation_report(sandbox: Sandbox) -> None:
    report = sandbox.isolation
    assert report["mode"] in ("namespaces", "basic")
    assert "python" in report["languages"]
    if IS_ROOT:
        assert report["drops_privileges"] and len(set(sandbox.uids)) == 2


async def _running(box: Sandbox) -> psutil.Process:
    """The spawner, once the one run in flight is up (its init and its program)."""
    for _ in range(400):
        await asyncio.sleep(0.025)
        if box._spawner_client is not None:
            spawner = psutil.Process(box._spawner_client.proc.pid)
            if len(_live(spawner.children(recursive=True))) >= 1:
                return spawner
    raise AssertionError("the run did not start within 10 s")


def _live(processes: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for proc in processes:
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except psutil.NoSuchProcess:
            pass
    return out


async def test_identical_compiles_run_once(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "cpp" not in sandbox.languages:
        pytest.skip("g++ is not installed")
    compiles = []
    execute = sandbox._execute

    async def counting(step, slot, workdir):  # a transparent spy
        if "g++" in step.argv[0]:
            compiles.append(step.argv)
        return await execute(step, slot, workdir)

    monkeypatch.setattr(sandbox, "_execute", counting)
    code = "#include <iostream>\nint main(){int x;std::cin>>x;std::cout<<x*x<<std::endl;}"
    answers = await asyncio.gather(
        *(sandbox.run_code(request(code, "cpp", stdin=str(i))) for i in range(5))
    )
    assert [a.run_result.stdout for a in answers] == [f"{i * i}\n" for i in range(5)]
    assert all(a.compile_result.return_code == 0 for a in answers)
    broken = [await sandbox.run_code(request("int main() { oops }", "cpp")) for _ in range(2)]
    assert all(b.compile_result.return_code != 0 and b.run_result is None for b in broken)
    other_file = await sandbox.run_code(request(code, "cpp", stdin="3", files={"x.h": "eA=="}))
    assert other_file.run_result.stdout == "9\n"
    assert len(compiles) == 3  # one per distinct (code, files): the rest reuse the binary


async def test_namespaced_run_sees_only_its_own_world(sandbox: Sandbox, tmp_path) -> None:
    if sandbox.isolation["mode"] != "namespaces":
        pytest.skip("needs namespaces (root with CAP_SYS_ADMIN)")
    secret = tmp_path / "answers.txt"
    secret.write_text("42")
    secret.chmod(0o644)
    code = f"""
import os, socket
print(sorted(os.listdir('/')))
print(socket.gethostname())
print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
print(os.path.exists({str(secret)!r}), os.path.exists('/root'), os.path.exists('/home'))
try:
    socket.create_connection(('127.0.0.1', 22), timeout=1)
except OSError as exc:
    print(type(exc).__name__)
"""
    answer = await sandbox.run_code(request(code))
    lines = answer.run_result.stdout.splitlines()
    assert set(ast.literal_eval(lines[0])) <= {
        "bin",
        "dev",
        "etc",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "proc",
        "sbin",
        "tmp",
        "usr",
        "workspace",
    }
    assert lines[1] == "sandbox"
    assert lines[2] == "[1, 2]"  # its init and itself
    assert lines[3] == "False False False"  # no dataset, no home directories
    assert lines[4] == "OSError"  # no network, not even loopback
