"""The system calls a sandboxed run may not make, enforced by a seccomp filter.

Namespaces, uids and rlimits bound what a run can reach; they do not stop it from asking
the kernel for more. A run could create a user namespace (and be root inside it), a
network namespace, mount file systems, trace another process, load BPF programs or use
the kernel keyring: each is kernel attack surface that no test program needs. This
module installs a filter, inherited across ``fork`` and ``execve`` and never removable,
that answers those calls with an error:

- ``EPERM`` for everything in :data:`DENIED`, and for ``clone`` with any of the
  ``CLONE_NEW*`` flags (threads and ``fork`` stay allowed);
- ``ENOSYS`` for ``clone3``, whose flags sit in memory a filter cannot read: glibc then
  falls back to ``clone``, which the filter can check (what container runtimes do).

The filter is compiled by libseccomp (``libseccomp.so.2``, which every Debian and Ubuntu
system has: apt and systemd depend on it) through a few ``ctypes`` calls; there is no
maintained binding on PyPI, and a hand-written BPF program would have to track syscall
numbers per architecture, which is libseccomp's job.

Stdlib only: the spawner process (``python -S``) imports this file from its own folder.
"""

from __future__ import annotations

import ctypes
import errno
import sys

TYPE_CHECKING = False  # typing is not imported where the spawner runs
if TYPE_CHECKING:
    from typing import Any

__all__ = ["DENIED", "NAMESPACE_FLAGS", "install", "unavailable"]

DENIED = (
    # namespaces: a run must not build itself a new world (root in a user namespace)
    "unshare", "setns",
    # other processes' memory and control
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # kernel programs, keys and modules
    "bpf", "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    # mounts and roots
    "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr",
    # file handles that bypass the mount view; performance and fault hooks into the kernel
    "open_by_handle_at", "perf_event_open", "userfaultfd",
)  # fmt: skip
"""Answered ``EPERM``. Names unknown on this architecture are skipped."""

NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
"""``clone`` with any of these flags is answered ``EPERM``."""

_ALLOW = 0x7FFF0000  # SCMP_ACT_ALLOW
_CMP_MASKED_EQ = 7  # SCMP_CMP_MASKED_EQ: (arg & datum_a) == datum_b
_LIBRARY = "libseccomp.so.2"


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)  # SCMP_ACT_ERRNO(code)


class _ArgCmp(ctypes.Structure):
    """``struct scmp_arg_cmp``: compare system call argument ``arg`` by ``op``."""

    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


def _load() -> tuple[Any, str | None]:
    if not sys.platform.startswith("linux"):
        return None, "seccomp is Linux only"
    try:
        lib = ctypes.CDLL(_LIBRARY, use_errno=True)
    except OSError as exc:
        return None, f"{_LIBRARY} not found ({exc}); install libseccomp2"
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_load.restype = ctypes.c_int
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.restype = None
    return lib, None


_LIB, _WHY_NOT = _load()


def unavailable() -> str | None:
    """None where :func:`install` can work, else why not (for the sandbox's report)."""
    return _WHY_NOT


def install() -> None:
    """Filter this process and everything it starts from now on; raises OSError on failure.

    libseccomp sets ``PR_SET_NO_NEW_PRIVS`` first (the kernel requires it of a process
    without CAP_SYS_ADMIN), so no setuid program run later can drop the filter.
    """
    if _LIB is None:
        raise OSError(errno.ENOSYS, f"no seccomp filter: {_WHY_NOT}")
    ctx = _LIB.seccomp_init(_ALLOW)
    if not ctx:
        raise OSError(errno.ENOMEM, "seccomp_init failed")
    try:
        for name in DENIED:
            _deny(ctx, name, errno.EPERM)
        _deny(ctx, "clone3", errno.ENOSYS)
        for flag in NAMESPACE_FLAGS.values():
            _deny(ctx, "clone", errno.EPERM, _ArgCmp(0, _CMP_MASKED_EQ, flag, flag))
        _checked(_LIB.seccomp_load(ctx), "seccomp_load")
    finally:
        _LIB.seccomp_release(ctx)


def _deny(ctx: int, name: str, code: int, *conditions: _ArgCmp) -> None:
    number = _LIB.seccomp_syscall_resolve_name(name.encode())
    if number < 0:  # __NR_SCMP_ERROR: no such call on this architecture
        return
    array = (_ArgCmp * len(conditions))(*conditions) if conditions else None
    rc = _LIB.seccomp_rule_add_array(ctx, _errno_action(code), number, len(conditions), array)
    _checked(rc, f"seccomp_rule_add({name})")


def _checked(rc: int, what: str) -> None:
    if rc < 0:
        raise OSError(-rc, f"{what}: {errno.errorcode.get(-rc, -rc)}")
