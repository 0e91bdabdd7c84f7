"""The system-call filter of the bubblewrap sandbox: a classic-BPF program for ``bwrap --seccomp FD``.

Namespaces, mounts and the uid drop contain a service, but the kernel interfaces behind them stay reachable:
a service could create user and mount namespaces of its own (``unshare -Ur``) and reach code paths that only
root should, trace another process, load modules or BPF programs. The filter refuses those calls with EPERM,
as container engines' default profiles do for an unprivileged container; everything else a Python service
needs passes. ``clone`` is allowed unless it asks for a new namespace, and ``clone3`` (whose flags sit in
memory a filter cannot read) fails with ENOSYS, so the C library falls back to ``clone``. The filter checks the
architecture: x86-64 and AArch64 are known, the x32 ABI is refused and any other architecture (a 32-bit
compatibility call) kills the process.

No library builds it: the program is a few dozen fixed-size instructions assembled with ``struct``. Containers
get the same refusals as an OCI profile (:func:`container_profile`).
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import struct

#: ``seccomp_data``: the call's number, its architecture, then its six arguments (8 bytes each).
_NR, _ARCH, _ARG0 = 0, 4, 16
_AUDIT_ARCH_X86_64, _AUDIT_ARCH_AARCH64 = 0xC000003E, 0xC00000B7
_X32_BIT = 0x40000000
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|{JEQ,JGE,JSET}|K, BPF_RET|K
_ALLOW, _KILL_PROCESS, _ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
#: CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET.
NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

#: What a service may not call, and why: new namespaces, mounts, other processes' memory, the kernel's modules,
#: keyrings, BPF and performance counters, page-fault handling in user space, rebooting and swap, io_uring (a
#: large, often-patched surface), file handles that bypass paths, the accounting and logging calls.
REFUSED = (
    "unshare", "setns",
    "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
    "mount_setattr", "chroot",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
    "add_key", "request_key", "keyctl",
    "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "open_by_handle_at", "name_to_handle_at", "acct", "quotactl", "syslog", "lookup_dcookie",
)
#: The calls' numbers: x86-64's own table and the generic one AArch64 uses.
_NUMBERS = {
    "x86_64": {
        "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "move_mount": 429,
        "open_tree": 428, "fsopen": 430, "fsmount": 432, "fsconfig": 431, "fspick": 433, "mount_setattr": 442,
        "chroot": 161, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320,
        "reboot": 169, "swapon": 167, "swapoff": 168, "add_key": 248, "request_key": 249, "keyctl": 250,
        "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_by_handle_at": 304, "name_to_handle_at": 303, "acct": 163,
        "quotactl": 179, "syslog": 103, "lookup_dcookie": 212, "clone": 56, "clone3": 435,
    },
    "aarch64": {
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "move_mount": 429,
        "open_tree": 428, "fsopen": 430, "fsmount": 432, "fsconfig": 431, "fspick": 433, "mount_setattr": 442,
        "chroot": 51, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438,
        "init_module": 105, "finit_module": 273, "delete_module": 106, "kexec_load": 104, "kexec_file_load": 294,
        "reboot": 142, "swapon": 224, "swapoff": 225, "add_key": 217, "request_key": 218, "keyctl": 219,
        "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_by_handle_at": 265, "name_to_handle_at": 264, "acct": 89,
        "quotactl": 60, "syslog": 116, "lookup_dcookie": 18, "clone": 220, "clone3": 435,
    },
}
_ARCHITECTURES = {"x86_64": _AUDIT_ARCH_X86_64, "aarch64": _AUDIT_ARCH_AARCH64}
SUPPORTED = frozenset(_ARCHITECTURES)


def _statement(code: int, k: int, jt: int | str = 0, jf: int | str = 0) -> tuple:
    return code, jt, jf, k


def _architecture_block(machine: str) -> list:
    """Instructions (with symbolic jump targets) for calls made in ``machine``'s native ABI."""
    numbers = _NUMBERS[machine]
    block: list = [("label", machine), _statement(_LD_ABS, _NR)]
    if machine == "x86_64":
        block.append(_statement(_JGE, _X32_BIT, "refuse", 0))
    block += [_statement(_JEQ, numbers[name], "refuse", 0) for name in REFUSED]
    block += [_statement(_JEQ, numbers["clone3"], "no_clone3", 0), _statement(_JEQ, numbers["clone"], "clone", 0),
              _statement(_RET, _ALLOW)]
    return block


def _assemble(source: list) -> bytes:
    """Resolve jump labels to the relative offsets classic BPF uses, and pack each ``sock_filter``."""
    labels: dict[str, int] = {}
    instructions: list[tuple] = []
    for item in source:
        if item[0] == "label":
            labels[item[1]] = len(instructions)
        else:
            instructions.append(item)
    packed = []
    for index, (code, jt, jf, k) in enumerate(instructions):
        jt, jf = (labels[j] - index - 1 if isinstance(j, str) else j for j in (jt, jf))
        assert 0 <= jt < 256 and 0 <= jf < 256, "a jump too long for classic BPF"
        packed.append(struct.pack("=HBBI", code, jt, jf, k))
    return b"".join(packed)


@functools.cache
def program() -> bytes:
    """The filter, for both known architectures (a machine runs only its own calls through it)."""
    source: list = [_statement(_LD_ABS, _ARCH)]
    source += [_statement(_JEQ, audit, name, 0) for name, audit in _ARCHITECTURES.items()]
    source.append(_statement(_RET, _KILL_PROCESS))
    for machine in _ARCHITECTURES:
        source += _architecture_block(machine)
    source += [("label", "clone"), _statement(_LD_ABS, _ARG0), _statement(_JSET, NAMESPACE_FLAGS, "refuse", 0),
               _statement(_RET, _ALLOW),
               ("label", "refuse"), _statement(_RET, _ERRNO | errno.EPERM),
               ("label", "no_clone3"), _statement(_RET, _ERRNO | errno.ENOSYS)]
    return _assemble(source)


def container_profile() -> dict:
    """The same refusals as an OCI seccomp profile, for containers: podman's default profile lets an unprivileged
    container create user namespaces (``unshare -Ur`` works in it), so the runtime sets its own."""
    flags = [1 << bit for bit in range(32) if NAMESPACE_FLAGS & (1 << bit)]
    return {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
        {"names": list(REFUSED), "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS},
        # One rule a flag (rules are or-ed): ``flags & flag == flag`` refuses the clone.
        *({"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM,
           "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}]} for flag in flags),
    ]}


def supported() -> bool:
    """Whether this machine's architecture is one the filter knows (elsewhere it would kill every call)."""
    return platform.machine() in SUPPORTED


def program_fd() -> int:
    """A file descriptor, positioned at the start, from which bwrap reads the filter; the caller closes it."""
    fd = os.memfd_create("dagsmith-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
