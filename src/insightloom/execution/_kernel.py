"""Thin ctypes wrappers over the Linux calls the sandbox needs.

Why ctypes: Python 3.11 has no ``os.unshare`` and no Landlock bindings, and this module must stay stdlib-only
because the cold runner executes ``_sandbox.py`` as a plain file in a fresh interpreter (no package imports).
Every function returns ``None`` on success or a short human reason on failure, so callers can report what is
missing instead of pretending.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

PR_SET_PDEATHSIG = 1
PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
#: Capability numbers are below 64 (the kernel's last is ``/proc/sys/kernel/cap_last_cap``, about 40).
_CAP_NUMBERS = range(64)

# Landlock syscalls share one number on every architecture we care about (x86_64, aarch64).
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

# Filesystem rights that modify something; reads and execution are never "handled", so they stay allowed.
_FS_WRITE_FILE = 1 << 1
_FS_WRITE_V1 = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))  # write, remove, make-*
_FS_REFER = 1 << 13  # ABI 2: rename/link across directories
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_READ = (1 << 2) | (1 << 3)  # read files, read directories
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1

# Device files that ordinary programs open for writing (e.g. ``> /dev/null``).
_WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")

_libc_handle: ctypes.CDLL | None = None
_own_pidns_fd: int | None = None


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    """Load libc once; ``use_errno`` so failures can be explained."""
    global _libc_handle
    if _libc_handle is None:
        _libc_handle = ctypes.CDLL(None, use_errno=True)
        _libc_handle.syscall.restype = ctypes.c_long
    return _libc_handle


def _errno_text() -> str:
    err = ctypes.get_errno()
    return f"{os.strerror(err)} (errno {err})"


def unshare(flags: int) -> str | None:
    """Move the calling process into new namespaces (``unshare(2)``).

    Returns:
        None on success, otherwise why it failed (typically EPERM without CAP_SYS_ADMIN).
    """
    if _libc().unshare(ctypes.c_int(flags)) != 0:
        return _errno_text()
    return None


def enter_own_user_namespace() -> str | None:
    """Become root of a new user namespace that maps only our own uid and gid (no privilege on the host).

    An unprivileged sandbox (bubblewrap with every capability dropped) may still create user namespaces; inside
    one, the fork server gets the capabilities it needs to give each script its own pid and network namespace.
    """
    uid, gid = os.getuid(), os.getgid()
    error = unshare(CLONE_NEWUSER)
    if error:
        return error
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
    except OSError as exc:
        return f"cannot map ids in the new user namespace: {exc.strerror}"
    return None


def new_pid_namespace_for_next_child() -> str | None:
    """Put the *next* forked child in a brand-new pid namespace, even if earlier children got one.

    ``unshare(CLONE_NEWPID)`` only affects children and refuses to run twice, so first point our
    "pid namespace for children" back at our own namespace with ``setns`` (allowed for one's own namespace).
    This lets one long-lived fork server give every script its own namespace with a single fork.
    """
    error = reset_pid_namespace_for_children()
    return error or unshare(CLONE_NEWPID)


def reset_pid_namespace_for_children() -> str | None:
    """Make future children share our own pid namespace again (undo :func:`new_pid_namespace_for_next_child`)."""
    global _own_pidns_fd
    if _own_pidns_fd is None:
        try:
            _own_pidns_fd = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            return f"cannot open /proc/self/ns/pid: {exc.strerror}"
    if _libc().setns(ctypes.c_int(_own_pidns_fd), ctypes.c_int(CLONE_NEWPID)) != 0:
        return f"setns: {_errno_text()}"
    return None


def kill_me_with_parent(sig: int) -> str | None:
    """Have the kernel send ``sig`` to this process when its parent (the supervisor) dies."""
    if _libc().prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0:
        return _errno_text()
    return None


def drop_bounding_set() -> str | None:
    """Empty the capability bounding set, so nothing this process or its descendants run can ever gain one.

    Needs ``CAP_SETPCAP`` and leaves the effective and permitted sets alone, so it comes before the uid switch
    (which needs ``CAP_SETUID``) and the switch then empties those.
    """
    libc = _libc()
    for cap in _CAP_NUMBERS:
        held = libc.prctl(PR_CAPBSET_READ, cap, 0, 0, 0)
        if held < 0:
            break  # past the kernel's last capability
        if held and libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            return f"PR_CAPBSET_DROP({cap}): {_errno_text()}"
    return None


def clear_capabilities() -> str | None:
    """Empty the effective, permitted, inheritable and ambient capability sets (dropping is always allowed).

    After a switch from root to another uid the kernel has emptied all but the inheritable set; in a user namespace
    of our own (an unprivileged host) nothing was switched, so this is what takes the namespace's capabilities away.
    """
    libc = _libc()
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # fails only where ambient sets do not exist
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        return f"capset: {_errno_text()}"
    return None


def set_child_subreaper() -> str | None:
    """Make orphaned descendants (``setsid`` + double fork daemons) re-parent to this process, not to init."""
    if _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return _errno_text()
    return None


def landlock_abi() -> int:
    """Return the kernel's Landlock ABI version, 0 when Landlock is absent or disabled."""
    try:
        version = _libc().syscall(
            _SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), _LANDLOCK_CREATE_RULESET_VERSION
        )
    except (AttributeError, OSError):
        return 0
    return int(version) if version > 0 else 0


def _fs_write_rights(abi: int) -> int:
    rights = _FS_WRITE_V1
    if abi >= 2:
        rights |= _FS_REFER
    if abi >= 3:
        rights |= _FS_TRUNCATE
    return rights


def landlock_confine(
    writable_dirs: list[str], *, deny_tcp: bool, scope: bool, readable: list[str] | None = None
) -> tuple[list[str], str | None]:
    """Restrict this process and its future children with Landlock.

    Writes are allowed only beneath ``writable_dirs`` (plus writing to a few device files). With ``readable``
    (the no-sandbox fallback), reads are allowed only there and in ``writable_dirs``: the runtime, never
    ``/etc/shadow`` or another job. Optionally all TCP bind/connect is denied (the network fallback when no network
    namespace is possible) and signals/abstract sockets are scoped to the domain so a script cannot signal its
    supervisor or another job's processes.

    Returns:
        (features enabled, error or None). Nothing is restricted when an error is returned.
    """
    abi = landlock_abi()
    if abi < 1:
        return [], "Landlock is not available in this kernel"
    fs_rights = _fs_write_rights(abi)
    read_rights = _FS_READ if readable is not None else 0
    attr = _RulesetAttr(handled_access_fs=fs_rights | read_rights)
    features = ["fs-writes"] + (["fs-reads"] if readable is not None else [])
    if deny_tcp and abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        features.append("tcp-deny")
    if scope and abi >= 6:
        attr.scoped = _SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX
        features.append("signal-scope")
    libc = _libc()
    ruleset_fd = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0)
    if ruleset_fd < 0:
        return [], f"landlock_create_ruleset failed: {_errno_text()}"
    try:
        file_rights = _FS_WRITE_FILE | (_FS_TRUNCATE if abi >= 3 else 0)
        rules = [(path, fs_rights | read_rights) for path in writable_dirs]
        rules += [(dev, file_rights | (read_rights & (1 << 2))) for dev in _WRITABLE_DEVICES]
        rules += [(path, read_rights) for path in readable or [] if os.path.exists(path)]
        for path, rights in rules:
            error = _add_path_rule(int(ruleset_fd), path, rights)
            if error and path in writable_dirs:
                return [], error
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return [], f"PR_SET_NO_NEW_PRIVS failed: {_errno_text()}"
        if libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(int(ruleset_fd)), 0) != 0:
            return [], f"landlock_restrict_self failed: {_errno_text()}"
    finally:
        os.close(int(ruleset_fd))
    return features, None


def _add_path_rule(ruleset_fd: int, path: str, rights: int) -> str | None:
    """Allow ``rights`` beneath ``path``; a missing optional device is not an error worth stopping for."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError as exc:
        return f"cannot open {path} for a Landlock rule: {exc.strerror}"
    try:
        rule = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
        if (
            _libc().syscall(
                _SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset_fd), _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0
            )
            != 0
        ):
            return f"landlock_add_rule({path}) failed: {_errno_text()}"
    finally:
        os.close(fd)
    return None
