"""guards: the seccomp filter every sandboxed run starts under: what it denies, what it leaves working, and that a sandbox without it refuses to start."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rewardkit.sandbox import RunCodeRequest, RunStatus, Sandbox, SandboxOptions, seccomp_filter

pytestmark = pytest.mark.skipif(
    seccomp_filter.unavailable() is not None, reason=f"{seccomp_filter.unavailable()}"
)

# Each probe makes one call a run might use to reach beyond its sandbox and prints the
# errno it got (0: the call worked). The numbers are the kernel's (x86_64 and aarch64
# share the generic ones used through libc's named wrappers).
PROBES = r"""
import ctypes, errno, json, os, threading, subprocess
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": {"clone": 56, "bpf": 321, "keyctl": 250, "clone3": 435},
      "aarch64": {"clone": 220, "bpf": 280, "keyctl": 219, "clone3": 435}}[os.uname().machine]
def err(rc):
    return ctypes.get_errno() if rc == -1 else 0
out = {
    "unshare_user": err(libc.unshare(0x10000000)),
    "unshare_net": err(libc.unshare(0x40000000)),
    "unshare_mount": err(libc.unshare(0x00020000)),
    "setns": err(libc.setns(0, 0)),
    "clone_newuser": err(libc.syscall(NR["clone"], 0x10000000 | 17, 0, 0, 0, 0)),
    "clone3": err(libc.syscall(NR["clone3"], 0, 0)),
    "mount": err(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
    "umount": err(libc.umount2(b"/tmp", 2)),
    "ptrace": err(libc.ptrace(0, 0, 0, 0)),
    "bpf": err(libc.syscall(NR["bpf"], 0, 0, 0)),
    "keyctl": err(libc.syscall(NR["keyctl"], 0, 0, 0, 0, 0)),
}
box = []
thread = threading.Thread(target=lambda: box.append("thread"))
thread.start(); thread.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
out["fork_exit"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
out["thread"] = box == ["thread"]
out["subprocess"] = subprocess.run(["/bin/sh", "-c", "echo hi"], capture_output=True, text=True).stdout
print(json.dumps(out))
"""

DENIED = {
    "unshare_user", "unshare_net", "unshare_mount", "setns", "clone_newuser", "mount",
    "umount", "ptrace", "bpf", "keyctl",
}  # fmt: skip
EPERM, ENOSYS = 1, 38


def check_probe_output(out: dict) -> None:
    for name in DENIED:
        assert out[name] == EPERM, (name, out[name])
    assert out["clone3"] == ENOSYS  # glibc then falls back to clone, which the filter reads
    assert out["fork_exit"] == 7 and out["thread"] and out["subprocess"] == "hi\n"


def test_a_filtered_process_is_denied_namespaces_mounts_tracing_bpf_and_keys() -> None:
    """The filter on its own, in a fresh interpreter: any user, any isolation mode."""
    code = (
        f"import sys; sys.path.insert(0, {str(seccomp_filter.__file__.rpartition('/')[0])!r})\n"
        "import seccomp_filter; seccomp_filter.install()\n" + PROBES
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    check_probe_output(json.loads(done.stdout))


async def test_every_sandboxed_run_is_filtered() -> None:
    """Through the real sandbox: the run's program inherits the filter from its start."""
    async with Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=1)) as box:
        answer = await box.run_code(RunCodeRequest(code=PROBES, language="python", run_timeout=20))
        isolation = box.isolation
    assert answer.status == RunStatus.SUCCESS, answer
    check_probe_output(json.loads(answer.run_result.stdout))
    assert isolation["syscall_filter"] is not None


async def test_a_sandbox_that_cannot_filter_refuses_to_start_unless_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No libseccomp on the machine: the sandbox says so and names the switch."""
    monkeypatch.setattr(seccomp_filter, "_WHY_NOT", "libseccomp.so.2 not found")
    monkeypatch.setattr(seccomp_filter, "_LIB", None)
    with pytest.raises(RuntimeError, match=r"libseccomp.so.2 not found.*allow_unisolated=true"):
        async with Sandbox(SandboxOptions(max_concurrent=1)):
            pass
    async with Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=1)) as box:
        answer = await box.run_code(RunCodeRequest(code="print(1)", language="python"))
        isolation = box.isolation
    assert answer.status == RunStatus.SUCCESS
    assert isolation["syscall_filter"] is None
    assert any("no system call filter" in note for note in isolation["notes"])
