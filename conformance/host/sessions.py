"""Child processes that leave nothing behind: each in a session of its own, stopped as a whole.

The supervision of daemons the kit starts (Spark's master and workers, ``spark-submit``),
generic: nothing here knows what the children run.

* **A session per child.** :class:`Child` starts its command with ``start_new_session=True``:
  the child leads a new session and process group, which everything it spawns inherits
  unless it asks otherwise (a process that makes a group of its own with ``setpgid`` stays in
  the session). Its stdout and stderr are appended to a log file; :meth:`Child.new_output`
  reads what it wrote since it started (the tail, at most ``limit`` bytes);
  :meth:`Child.await_ready` waits for a server child to answer on the port it was given.
* **Reaping last.** :meth:`Child.exit_code` reads the leader's state with
  ``waitid(WNOWAIT)``, without reaping it: an unreaped leader keeps its pid, so its group
  and session ids cannot be reused by an unrelated process while we still signal them.
* **Stopping** (:func:`terminate`): SIGTERM to each group, up to ``grace`` seconds for the
  sessions to empty, then SIGKILL to each group and to every live process still in one of
  the sessions (read from ``/proc``), plus the escaped processes a caller names
  (:class:`Escaped`: a program naming something in its command line, or working in a
  directory); the leaders are reaped only once their sessions are empty.
* **Signals.** While :func:`guard_sigterm` holds (it nests; main thread only), SIGTERM raises
  :class:`TerminatedBySignal` (a ``SystemExit`` with status 143), so ``finally`` blocks and
  context managers stop what they started; :func:`unguard_sigterm` restores the previous
  handler when the last guard ends. :func:`uninterrupted` runs a stop step to its end even when
  Ctrl-C or SIGTERM interrupts it, and raises the interruption afterwards.
* **End of input.** :func:`end_input` stops a child that serves requests on its stdin (the
  oracle JVMs): stdin closed, a wait, then SIGKILL.

Linux only (``/proc``, ``waitid``). Stdlib only: this is the ``host`` layer.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = [
    "OUTPUT_LIMIT",
    "STOP_GRACE",
    "Child",
    "Escaped",
    "TerminatedBySignal",
    "end_input",
    "uninterrupted",
    "guard_sigterm",
    "last_lines",
    "marked_pids",
    "read_tail",
    "sigterm_guarded",
    "stray_pids",
    "terminate",
    "unguard_sigterm",
]

#: SIGTERM grace before SIGKILL, in seconds
STOP_GRACE = 10.0
#: bytes of a log shown by default (:meth:`Child.new_output`, :func:`read_tail`)
OUTPUT_LIMIT = 1 << 20
#: how long :func:`terminate` keeps killing processes that are still there after SIGKILL
_KILL_PATIENCE = 30.0


class TerminatedBySignal(SystemExit):
    """SIGTERM arrived while :func:`guard_sigterm` held (exit status 128 + signal: 143)."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


# --------------------------------------------------------------------------------------------
# SIGTERM as an exception, and stop steps that run to their end

_guard_lock = threading.Lock()
_guard_depth = 0
_guard_previous: Any = None


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise TerminatedBySignal(signum)


def guard_sigterm() -> bool:
    """Turn SIGTERM into :class:`TerminatedBySignal` until the matching
    :func:`unguard_sigterm`; nests. False (nothing installed) outside the main thread. A
    SIGTERM ignored on purpose (``SIG_IGN``) stays ignored."""
    global _guard_depth, _guard_previous
    if threading.current_thread() is not threading.main_thread():
        return False
    with _guard_lock:
        if _guard_depth == 0:
            _guard_previous = signal.getsignal(signal.SIGTERM)
            if _guard_previous is not signal.SIG_IGN:
                signal.signal(signal.SIGTERM, _raise_terminated)
        _guard_depth += 1
    return True


def unguard_sigterm() -> None:
    """End one :func:`guard_sigterm` (that returned True); the last restores the handler."""
    global _guard_depth, _guard_previous
    with _guard_lock:
        _guard_depth -= 1
        if _guard_depth == 0:
            previous = _guard_previous
            _guard_previous = None
            with contextlib.suppress(ValueError):  # stopped from another thread: left as is
                signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@contextlib.contextmanager
def sigterm_guarded() -> Iterator[None]:
    """:func:`guard_sigterm` for the ``with`` block."""
    guarded = guard_sigterm()
    try:
        yield
    finally:
        if guarded:
            unguard_sigterm()


def uninterrupted(step: Callable[[], None], *, again: int | None = None) -> None:
    """Run ``step`` (idempotent) to its end even if Ctrl-C or SIGTERM interrupts it: it runs
    again (at most ``again`` more times, None: until it ends; an interruption beyond them ends
    it); the first interruption is raised once it is done."""
    pending: BaseException | None = None
    tries = 0
    while True:
        try:
            step()
            break
        except (KeyboardInterrupt, SystemExit) as exc:
            if again is not None and tries >= again:
                raise
            pending, tries = pending or exc, tries + 1
    if pending is not None:
        raise pending


# --------------------------------------------------------------------------------------------
# logs


def read_tail(path: Path, limit: int = OUTPUT_LIMIT, start: int = 0) -> str:
    """The text of ``path`` from byte ``start`` on, at most its last ``limit`` bytes (a note
    says how much was left out); "" if it cannot be read."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            begin = max(start, size - limit)
            f.seek(begin)
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    if begin > start:
        text = f"[... {begin - start} bytes not shown ...]\n" + text.partition("\n")[2]
    return text


def last_lines(text: str, lines: int) -> str:
    return "\n".join(text.splitlines()[-lines:])


# --------------------------------------------------------------------------------------------
# a child in a session of its own


class Child:
    """One process started in a session of its own, its output appended to a log."""

    def __init__(
        self,
        name: str,
        cmd: Sequence[str],
        env: Mapping[str, str],
        log: Path,
        cwd: Path | None = None,
        stdout: Path | None = None,
    ) -> None:
        """stdout and stderr are appended to ``log``; stdout to ``stdout`` instead if given."""
        self.name = name
        self.cmd = list(cmd)
        self.log = log
        self.log_start = log.stat().st_size if log.exists() else 0
        with open(log, "ab") as err, open(stdout or os.devnull, "ab") as out:
            self.popen = subprocess.Popen(
                self.cmd,
                stdin=subprocess.DEVNULL,
                stdout=err if stdout is None else out,
                stderr=err,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
            )
        self.pid = self.popen.pid

    @property
    def reaped(self) -> bool:
        return self.popen.returncode is not None

    def exited(self) -> bool:
        return self.exit_code() is not None

    def exit_code(self) -> int | None:
        """The leader's exit status (-signal if killed), None while it runs; read without
        reaping it, so its pid (and group and session ids) stays reserved."""
        if self.reaped:
            return self.popen.returncode
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped behind our back
            return -1
        if info is None:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def signal_group(self, sig: int) -> None:
        if not self.reaped:  # an unreaped leader keeps its group id from being reused
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)

    def new_output(self, limit: int = OUTPUT_LIMIT) -> str:
        """What the process wrote to its log since it was started (the last ``limit`` bytes)."""
        return read_tail(self.log, limit, start=self.log_start)

    def await_ready(
        self,
        answers: Callable[[], bool],
        *,
        deadline: float,
        lost_port: re.Pattern[str],
        fail: Callable[[str], Exception],
        silence: str,
        poll: float,
    ) -> bool:
        """A server on the port it was given: True once ``answers()`` while this process runs
        (the answer is its own, not a port thief's); False if it exited having lost the port (its
        output matches ``lost_port``); ``fail(what)`` raised if it exits otherwise or
        ``deadline`` (monotonic) passes (``<name> did not <silence> in time``)."""
        while True:
            code = self.exit_code()
            if code is not None:
                if lost_port.search(self.new_output()):
                    return False
                raise fail(f"{self.name} exited with status {code} before it was ready")
            if answers():
                if self.exit_code() is None:
                    return True
                continue
            if time.monotonic() > deadline:
                raise fail(f"{self.name} did not {silence} in time")
            time.sleep(poll)


# --------------------------------------------------------------------------------------------
# /proc


@dataclass(frozen=True, slots=True)
class Escaped:
    """Processes that left the children's sessions but still belong to them: ``program``
    (the base name of ``argv[0]``) processes with one of ``names`` in their command line or
    working in one of ``dirs`` (or below)."""

    program: str
    names: Sequence[str] = ()
    dirs: Sequence[str] = ()

    def match(self, pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
            if not argv or os.path.basename(argv[0]) != self.program:
                return False
            if any(name in arg for name in self.names for arg in argv):
                return True
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            return False
        return any(cwd == d or cwd.startswith(d + os.sep) for d in self.dirs)


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, process group, session) of ``pid``, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw.rpartition(")")[2].split()
    return fields[0], int(fields[2]), int(fields[3])


def stray_pids(sessions: set[int], escaped: Escaped | None = None) -> list[int]:
    """Live processes (zombies are dead) in one of ``sessions``, or matched by ``escaped``;
    never this process."""
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        stat = _proc_stat(pid)
        if stat is None or stat[0] in ("Z", "X"):
            continue
        if stat[2] in sessions or (escaped is not None and escaped.match(pid)):
            found.append(pid)
    return found


def marked_pids(entry: bytes, exact: bool = True) -> list[int]:
    """Live processes whose environment holds ``entry`` (``NAME=value``; not ``exact``: an
    entry starting with it): what a child started, wherever it went (another session, another
    parent), carries the environment it inherited. Never this process; processes whose
    environment cannot be read (another user's) are not seen."""
    found: list[int] = []
    for dirent in os.scandir("/proc"):
        if not dirent.name.isdigit() or int(dirent.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{dirent.name}/environ", "rb") as f:
                entries = f.read().split(b"\0")
        except OSError:
            continue
        if any(e == entry if exact else e.startswith(entry) for e in entries):
            stat = _proc_stat(int(dirent.name))
            if stat is not None and stat[0] not in ("Z", "X"):
                found.append(int(dirent.name))
    return found


def terminate(
    children: Sequence[Child], grace: float = STOP_GRACE, escaped: Escaped | None = None
) -> None:
    """SIGTERM the groups of ``children``, wait up to ``grace`` s for their sessions to empty,
    SIGKILL the groups and whatever is left in the sessions (and the ``escaped``), then reap
    the leaders. Children already reaped are skipped."""
    live = [c for c in children if not c.reaped]
    sessions = {c.pid for c in live}
    for child in live:
        child.signal_group(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and stray_pids(sessions):
        time.sleep(0.1)
    kill_deadline = time.monotonic() + _KILL_PATIENCE
    while True:
        for child in live:
            child.signal_group(signal.SIGKILL)
        strays = stray_pids(sessions, escaped)
        for pid in strays:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if not strays or time.monotonic() > kill_deadline:
            break
        time.sleep(0.05)
    for child in live:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.popen.wait(timeout=30)


def end_input(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Stop a child that exits at the end of its input (a JVM serving requests on stdin):
    close its stdin, wait up to ``timeout`` seconds, else kill it; close its stdout."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
