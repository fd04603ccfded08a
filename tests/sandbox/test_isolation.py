"""guards: no silent unisolated sandbox, stale folders of killed sandboxes go, fetch_files names.

Where namespaces cannot be made (a container without CAP_SYS_ADMIN, reproduced by dropping
the capability with ``capsh``), ``auto`` used to pick ``basic`` silently, and a run read the
training set off the host's disk. A sandbox killed with SIGKILL left its directories and
cgroups for good.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewardkit import sandbox as sandbox_module
from rewardkit.sandbox import RunCodeRequest, RunStatus, Sandbox, SandboxOptions

IS_ROOT = os.geteuid() == 0
NAMESPACES = sandbox_module._namespaces_unavailable() is None
CAPSH = shutil.which("capsh")

READ_SECRET = """
import asyncio, sys
from rewardkit.sandbox import RunCodeRequest, Sandbox, SandboxOptions

async def main():
    options = SandboxOptions(max_concurrent=1, allow_unisolated=sys.argv[2] == "allow")
    try:
        async with Sandbox(options) as box:
            code = f"print(open({sys.argv[1]!r}).read())"
            answer = await box.run_code(RunCodeRequest(code=code, language="python"))
            print("mode", box.isolation["mode"])
            print("read", answer.run_result.stdout.strip(), answer.run_result.stderr[-300:])
    except RuntimeError as exc:
        print("refused", exc)

asyncio.run(main())
"""


@pytest.fixture
def dataset() -> Iterator[Path]:
    """A world-readable file on the host's disk, as training sets usually are."""
    folder = Path(tempfile.mkdtemp(prefix="rewardkit-test-dataset-"))
    folder.chmod(0o755)
    secret = folder / "answers.txt"
    secret.write_text("the-test-answers")
    secret.chmod(0o644)
    yield secret
    shutil.rmtree(folder)


def _without_cap_sys_admin(tmp_path: Path, secret: Path, allow: bool) -> str:
    """Run READ_SECRET where namespaces cannot be made; its output."""
    script = tmp_path / "read_secret.py"
    script.write_text(READ_SECRET)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = f"{sys.executable} {script} {secret} {'allow' if allow else 'deny'}"
    assert CAPSH is not None
    done = subprocess.run(
        [CAPSH, "--drop=cap_sys_admin", "--", "-c", command],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(not (IS_ROOT and NAMESPACES and CAPSH), reason="needs root, namespaces, capsh")
def test_auto_refuses_basic_where_namespaces_cannot_be_made(tmp_path: Path, dataset: Path) -> None:
    out = _without_cap_sys_admin(tmp_path, dataset, allow=False)
    assert out.startswith("refused "), out
    assert "the-test-answers" not in out
    assert "namespaces unavailable" in out
    assert "host's file system" in out and "host's network" in out
    assert "allow_unisolated=true" in out and "--allow-unisolated" in out


@pytest.mark.skipif(not (IS_ROOT and NAMESPACES and CAPSH), reason="needs root, namespaces, capsh")
def test_allow_unisolated_opts_into_basic_and_its_exposure(tmp_path: Path, dataset: Path) -> None:
    # What the refusal protects against: opted in, a run reads the host's files.
    out = _without_cap_sys_admin(tmp_path, dataset, allow=True)
    assert "mode basic" in out
    assert "read the-test-answers" in out


async def test_basic_asked_for_is_refused_without_allow_unisolated() -> None:
    with pytest.raises(RuntimeError) as refused:
        async with Sandbox(SandboxOptions(max_concurrent=1, isolation="basic")):
            pass
    message = str(refused.value)
    assert "isolation 'basic' was asked for" in message or not IS_ROOT
    assert "host's file system" in message
    assert "allow_unisolated=true" in message


async def test_fetch_files_names_the_files_it_left_out() -> None:
    options = SandboxOptions(
        allow_unisolated=True, max_concurrent=1, max_fetch_files=2, max_fetch_bytes=1 << 20
    )
    write = "for n in ['a', 'b', 'c', 'big']:\n    open(n, 'wb').write(b'x' * (300 if n != 'big' else 2 << 20))\n"
    async with Sandbox(options) as box:
        request = RunCodeRequest(
            code=write, language="python", fetch_files=["big", "a", "b", "c", "missing"]
        )
        answer = await box.run_code(request)
    assert answer.status == RunStatus.SUCCESS
    assert sorted(answer.files) == ["a"]
    assert base64.b64decode(answer.files["a"]) == b"x" * 300
    assert "4 file(s) left out: 'big', 'b', 'c', 'missing'" in answer.message


HOLD_OPEN = """
import asyncio, sys
from rewardkit.sandbox import Sandbox, SandboxOptions

async def main():
    box = Sandbox(SandboxOptions(max_concurrent=1, allow_unisolated=True, work_root=sys.argv[1]))
    await box.start()
    print(box.isolation["memory"], flush=True)
    await asyncio.sleep(120)

asyncio.run(main())
"""


def _cgroups_named(name: str) -> list[str]:
    found = []
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        found += [os.path.join(root, d) for d in dirs if d == f"rewardkit-{name}"]
        if root.count(os.sep) > 8:
            dirs[:] = []
    return found


async def test_a_sandbox_killed_with_sigkill_is_cleaned_at_the_next_start(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "hold_open.py"
    script.write_text(textwrap.dedent(HOLD_OPEN))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(work)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        memory = proc.stdout.readline()
        assert memory, "the sandbox did not start"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    (killed,) = [p for p in work.iterdir() if p.name.startswith("rewardkit-sandbox-")]
    cgroups = _cgroups_named(killed.name)
    assert memory.startswith("cgroup") == bool(cgroups), (memory, cgroups)
    # A live owner's directory and one without an owner record are left alone.
    live = work / "rewardkit-sandbox-live"
    live.mkdir()
    owner = {"pid": os.getpid(), "start": sandbox_module.host._process_start(os.getpid())}
    (live / "owner.json").write_text(json.dumps({**owner, "cgroup": None}))
    unknown = work / "rewardkit-sandbox-unknown"
    unknown.mkdir()
    started = time.monotonic()
    async with Sandbox(
        SandboxOptions(allow_unisolated=True, max_concurrent=1, work_root=str(work))
    ):
        assert time.monotonic() - started < 30
    assert not killed.exists()
    assert not any(os.path.exists(path) for path in cgroups), cgroups
    assert live.exists() and unknown.exists()
