"""guards: the sandbox HTTP server, for real on a free 127.0.0.1 port: protocol, clients, hostile code.

Every hostile program runs at once against one server; the server must answer each with
a typed result, keep serving, and leave no process behind. The fork bomb needs the runs
to drop to an unprivileged uid (RLIMIT_NPROC does not bind root): it is skipped when the
tests do not run as root.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
import sandbox_fusion
import uvicorn

from _support.serving import uvicorn_in_thread
from rewardkit.sandbox import Sandbox, SandboxOptions
from rewardkit.sandbox.server import create_sandbox_app

IS_ROOT = os.geteuid() == 0


@dataclass
class Server:
    url: str
    sandbox: Sandbox


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """The real app under uvicorn in a background thread, on an ephemeral port."""
    sandbox = Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=4, memory_limit_mb=256))
    config = uvicorn.Config(
        create_sandbox_app(sandbox), host="127.0.0.1", port=0, log_level="warning"
    )
    with uvicorn_in_thread(config) as port:
        yield Server(f"http://127.0.0.1:{port}", sandbox)


def post(server: Server, body: dict, timeout: float = 60) -> dict:
    response = httpx.post(f"{server.url}/run_code", json=body, timeout=timeout)
    assert response.status_code == 200, response.text
    return response.json()


def test_ping(server: Server) -> None:
    response = httpx.get(f"{server.url}/v1/ping")
    assert response.status_code == 200 and response.json() == "pong"


def test_verl_style_request_and_sandboxfusion_response_shape(server: Server) -> None:
    # Exactly what verl's sandbox_fusion/utils.py posts.
    body = {"compile_timeout": 10, "run_timeout": 10, "code": "print(input()[::-1])", "stdin": "abc",
            "language": "python", "files": {}, "fetch_files": []}  # fmt: skip
    answer = post(server, body)
    assert set(answer) == {
        "status",
        "message",
        "compile_result",
        "run_result",
        "executor_pod_name",
        "files",
    }
    assert answer["status"] == "Success" and answer["compile_result"] is None
    run = answer["run_result"]
    assert set(run) == {"status", "execution_time", "return_code", "stdout", "stderr"}
    assert (run["status"], run["return_code"], run["stdout"]) == ("Finished", 0, "cba\n")


def test_malformed_request_is_422(server: Server) -> None:
    response = httpx.post(
        f"{server.url}/run_code", json={"code": "print(1)", "language": "klingon"}
    )
    assert response.status_code == 422
    assert "language" in response.text


def test_sandbox_fusion_client_round_trip(server: Server) -> None:
    from sandbox_fusion import RunCodeRequest, RunStatus, SummaryMapping

    ok = sandbox_fusion.run_code(
        RunCodeRequest(code="print(6 * 7)", language="python"), endpoint=server.url
    )
    assert ok.status == RunStatus.Success and ok.run_result.stdout == "42\n"
    mapping = SummaryMapping(CompileFailed="CE", RunFailed="RE", RunTimeout="TLE")
    failed = sandbox_fusion.run_code(
        RunCodeRequest(code="1/0", language="python"), endpoint=server.url
    )
    assert sandbox_fusion.summary_run_code_result(failed, mapping) == "RE"
    slow = RunCodeRequest(code="while True: pass", language="python", run_timeout=0.5)
    assert (
        sandbox_fusion.summary_run_code_result(
            sandbox_fusion.run_code(slow, endpoint=server.url), mapping
        )
        == "TLE"
    )
    if "cpp" in server.sandbox.languages:
        bad = RunCodeRequest(code="int main( {", language="cpp")
        assert (
            sandbox_fusion.summary_run_code_result(
                sandbox_fusion.run_code(bad, endpoint=server.url), mapping
            )
            == "CE"
        )


def test_sandbox_fusion_async_client(server: Server) -> None:
    from sandbox_fusion import RunCodeRequest, run_code_async

    answer = asyncio.run(
        run_code_async(
            RunCodeRequest(code="print('async')", language="python"), endpoint=server.url
        )
    )
    assert answer.run_result.stdout == "async\n"


# ---------------------------------------------------------------------- hostile programs

HOSTILE = {
    "infinite_loop": "while True:\n    pass",
    "fork_bomb": "import os\nwhile True:\n    os.fork()",
    "persistent_fork_bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
    "memory_bomb": "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))",
    "kill_parent": "import os\nos.kill(os.getppid(), 9)\nprint('still here')",
    "kill_everything": "import os\nos.kill(-1, 9)\nprint('still here')",
    "print_gigabytes": "import sys\nchunk = 'x' * (1 << 20)\nwhile True:\n    sys.stdout.write(chunk)",
    "daemon_escape": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        time.sleep(300)\n    os._exit(0)\nprint('parent exits')"
    ),
    "write_outside": (
        "for path in {targets!r}:\n    try:\n        open(path, 'w').write('pwned')\n"
        "        print('WROTE', path)\n    except OSError as exc:\n        print('refused', path, type(exc).__name__)"
    ),
}


LOOPING = {"infinite_loop", "persistent_fork_bomb"}


@pytest.fixture(scope="module")
def hostile_results(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Run every hostile program at once; remember the answers and the server's health after."""
    outside = tmp_path_factory.mktemp("outside")
    targets = [str(outside / "pwned.txt"), "/etc/rewardkit-pwned", "../../pwned.txt"]
    programs = dict(HOSTILE, write_outside=HOSTILE["write_outside"].format(targets=targets))
    if not IS_ROOT:  # no uid to drop to: these would really hit the host
        for name in ("fork_bomb", "persistent_fork_bomb", "write_outside", "kill_everything"):
            programs.pop(name)
    # The fork bombs go last, alone: their spinning processes would starve the others.
    bombs = {
        name: programs.pop(name)
        for name in ("fork_bomb", "persistent_fork_bomb")
        if name in programs
    }

    async def run_all(batch: dict[str, str]) -> dict[str, dict]:
        async with httpx.AsyncClient(timeout=60) as client:

            async def one(name: str, code: str) -> tuple[str, dict]:
                # Only the programs that never end wait for their timeout; the others get
                # room to finish even on a loaded machine.
                body = {
                    "code": code,
                    "language": "python",
                    "run_timeout": 1.5 if name in LOOPING else 20,
                    "memory_limit_MB": 96 if name == "memory_bomb" else 256,
                }
                response = await client.post(f"{server.url}/run_code", json=body)
                assert response.status_code == 200, response.text
                return name, response.json()

            return dict(await asyncio.gather(*(one(n, c) for n, c in batch.items())))

    results = asyncio.run(run_all(programs))
    results.update(asyncio.run(run_all(bombs)))
    results["_outside"] = {"dir": str(outside)}
    return results


def _run(results: dict[str, dict], name: str) -> dict:
    if name not in results:
        pytest.skip("needs root: the runs must drop to an unprivileged uid")
    answer = results[name]
    assert answer["status"] == "Failed" or answer["status"] == "Success", answer
    return answer["run_result"]


def test_infinite_loop_times_out(hostile_results: dict) -> None:
    run = _run(hostile_results, "infinite_loop")
    assert run["status"] == "TimeLimitExceeded" and run["return_code"] is None


def test_fork_bomb_is_bounded_by_rlimit_nproc(hostile_results: dict) -> None:
    run = _run(hostile_results, "fork_bomb")
    assert run["status"] == "Finished" and run["return_code"] != 0
    assert "BlockingIOError" in run["stderr"]  # fork() failed with EAGAIN at the limit


def test_persistent_fork_bomb_is_killed_at_the_timeout(hostile_results: dict) -> None:
    run = _run(hostile_results, "persistent_fork_bomb")
    assert run["status"] == "TimeLimitExceeded"


def test_memory_bomb_hits_the_memory_limit(hostile_results: dict) -> None:
    run = _run(hostile_results, "memory_bomb")
    assert run["status"] == "Finished" and run["return_code"] != 0
    assert "MemoryError" in run["stderr"]


def test_killing_the_parent_never_reaches_the_server(hostile_results: dict, server: Server) -> None:
    answer = hostile_results["kill_parent"]
    if server.sandbox.isolation["mode"] == "namespaces":
        # The parent is the run's init: signals from inside its namespace do not reach it.
        assert answer["run_result"]["stdout"] == "still here\n"
    elif IS_ROOT:  # the parent is the spawner, root: refused
        assert "PermissionError" in answer["run_result"]["stderr"]
    # Not root, the spawner dies (and is restarted); the server lives on either way.
    assert httpx.get(f"{server.url}/v1/ping").json() == "pong"


def test_kill_minus_one_reaches_nothing_outside(hostile_results: dict) -> None:
    run = _run(hostile_results, "kill_everything")
    assert run["status"] == "Finished"


def test_printing_gigabytes_is_cut_and_killed(hostile_results: dict) -> None:
    run = _run(hostile_results, "print_gigabytes")
    assert run["status"] == "Finished" and run["return_code"] != 0
    assert len(run["stdout"]) == 8 * 1024 * 1024
    assert "output over" in run["stderr"]


def test_daemon_escape_does_not_outlive_the_run(hostile_results: dict, server: Server) -> None:
    run = _run(hostile_results, "daemon_escape")
    assert run["stdout"] == "parent exits\n"
    _assert_no_strays(server.sandbox)  # the setsid'd grandchild died with the run


def test_writing_outside_the_directory_fails(hostile_results: dict) -> None:
    run = _run(hostile_results, "write_outside")
    assert "WROTE" not in run["stdout"]
    assert run["stdout"].count("refused") == 3
    assert not (Path(hostile_results["_outside"]["dir"]) / "pwned.txt").exists()
    assert not Path("/etc/rewardkit-pwned").exists()


def test_server_survives_and_nothing_is_left(hostile_results: dict, server: Server) -> None:
    assert httpx.get(f"{server.url}/v1/ping").json() == "pong"
    assert (
        post(server, {"code": "print('alive')", "language": "python"})["run_result"]["stdout"]
        == "alive\n"
    )
    _assert_no_strays(server.sandbox)


def test_stress_200_runs_8_in_flight_leave_no_process(server: Server) -> None:
    async def stress() -> list[dict]:
        limit = asyncio.Semaphore(8)
        async with httpx.AsyncClient(timeout=120) as client:

            async def one(i: int) -> dict:
                async with limit:
                    body = {"code": f"print({i} * 2)", "language": "python", "run_timeout": 10}
                    return (await client.post(f"{server.url}/run_code", json=body)).json()

            return await asyncio.gather(*(one(i) for i in range(200)))

    answers = asyncio.run(stress())
    assert [a["run_result"]["stdout"] for a in answers] == [f"{i * 2}\n" for i in range(200)]
    assert all(a["status"] == "Success" for a in answers)
    _assert_no_strays(server.sandbox)


def _assert_no_strays(sandbox: Sandbox) -> None:
    spawner = psutil.Process(sandbox._spawner_client.proc.pid)
    deadline = time.monotonic() + 5
    while True:
        children = spawner.children(recursive=True)
        by_uid = [
            p
            for p in psutil.process_iter(["uids"])
            if p.info["uids"] and p.info["uids"].real in sandbox.uids
        ]
        if not children and not by_uid:
            return
        assert time.monotonic() < deadline, f"left behind: {children} {by_uid}"
        time.sleep(0.1)
