"""The supervisor every adapter process runs under on Linux: a child subreaper.

``python -I -S reaper.py FD ARGV...`` (started by :class:`harness.process.ProcessTable`):

* marks itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), so every process the
  adapter starts that outlives its parent becomes this process's child, wherever it went: into
  a session of its own (``setsid``), another process group, an empty environment (``env -i``),
  through a daemon's double fork. The adapter's whole tree stays below this process;
* starts ``ARGV`` (the adapter) with this process's stdin, stdout, stderr, environment and
  session, writes ``ok`` to descriptor ``FD`` (or ``ERRNO STRERROR``: why ``ARGV`` could not
  be started, then exits 127), closes ``FD`` and its own copies of the three, so the adapter
  alone holds them;
* when the adapter exits, SIGKILLs every descendant left and reaps it, until it has no child
  at all, then exits as the adapter did (its exit code, or the signal that killed it);
* on SIGTERM (the kit ending the adapter: a deadline, a finished case, Ctrl-C) does the same
  at once, the adapter included.

A process that kills this supervisor itself escapes it; the kit's process-group kill and
environment marker remain behind it. Standard library only, imports nothing of the kit: it runs
by path, before anything else.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

__all__ = ["main"]

_PR_SET_CHILD_SUBREAPER = 36


#: the adapter's pid once started (SIGTERM kills it; the loop then ends everything)
_child: list[int] = []


def _stop(signum: int, frame: object) -> None:
    for pid in _child:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _descendants(me: int) -> list[int]:
    """Every live process below ``me`` (by the parent pids in ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if fields and fields[0] not in (b"Z", b"X"):
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], list(children.get(me, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, ())
    return found


def _kill_all(me: int) -> None:
    """SIGKILL every descendant and reap until no child is left (the children of a killed
    process become this one's: it is their subreaper)."""
    while True:
        for pid in _descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _exit_as(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the adapter's core, not ours
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> None:
    report, command = int(argv[0]), argv[1:]
    os.set_inheritable(report, False)
    signal.signal(signal.SIGTERM, _stop)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # failing: the kit's fallbacks remain
    except (OSError, AttributeError):
        pass
    me = os.getpid()
    try:
        child = os.posix_spawnp(
            command[0],
            command,
            os.environ,
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM),  # as subprocess does
        )
    except (OSError, IndexError) as exc:
        errno = getattr(exc, "errno", None) or 2
        os.write(report, f"{errno} {getattr(exc, 'strerror', None) or exc}".encode())
        os._exit(127)
    _child.append(child)
    os.write(report, b"ok")
    os.close(report)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    status = None
    while status is None:  # reaping the orphans it adopts meanwhile
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:  # pragma: no cover - the adapter is our child
            break
        if pid == child:
            status = st
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _kill_all(me)
    _exit_as(status if status is not None else signal.SIGKILL)


if __name__ == "__main__":
    main(sys.argv[1:])
