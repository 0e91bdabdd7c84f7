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
#: Each with its number on x86-64 (that architecture's own table) and on AArch64 (the generic table).
_REFUSED_NUMBERS = {
    "unshare": (272, 97), "setns": (308, 268),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "move_mount": (429, 429),
    "open_tree": (428, 428), "fsopen": (430, 430), "fsmount": (432, 432), "fsconfig": (431, 431), "fspick": (433, 433),
    "mount_setattr": (442, 442), "chroot": (161, 51),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "pidfd_getfd": (438, 438),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106), "kexec_load": (246, 104),
    "kexec_file_load": (320, 294), "reboot": (169, 142), "swapon": (167, 224), "swapoff": (168, 225),
    "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264), "acct": (163, 89), "quotactl": (179, 60),
    "syslog": (103, 116), "lookup_dcookie": (212, 18),
}
REFUSED = tuple(_REFUSED_NUMBERS)
#: clone and clone3, which the filter looks at apart (a namespace flag, and ENOSYS), with their numbers likewise.
_CLONE_NUMBERS = {"clone": (56, 220), "clone3": (435, 435)}
_NUMBERS = {machine: {name: pair[i] for name, pair in (_REFUSED_NUMBERS | _CLONE_NUMBERS).items()}
            for i, machine in enumerate(("x86_64", "aarch64"))}
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
