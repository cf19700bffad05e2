"""Running adapter processes so that a hostile one cannot stop the run.

Every adapter runs in its own session (so its process group is its pid), with a wall-clock
deadline and a limit on what it may print; past either, or on Ctrl-C, the whole group is
killed with SIGKILL. Stdin is written and stdout read in one ``selectors`` loop with
non-blocking descriptors, so an adapter that neither reads nor writes cannot block the runner;
stderr is drained by a thread that keeps its first and its last :data:`STDERR_KEEP` bytes (a
crash's reason is often at the start: a Go panic's message is followed by pages of stack).

A process that leaves its session (``setsid``, a daemon's double fork) escapes the group kill,
and one that also drops its environment (``env -i``) escapes any marker in it. On Linux every
adapter therefore runs under a supervisor of its own (``harness/reaper.py``, a child
subreaper): whatever the adapter starts and leaves behind becomes the supervisor's child, and
when the adapter exits, or the kit ends it (SIGTERM to the supervisor), the supervisor kills
the whole tree before it exits itself. Behind it, for a process that kills its supervisor (and
where there is none), every adapter process gets a marker in its environment (:data:`MARKER`,
unique per process), which its descendants inherit, and whatever still carries it when the
adapter ends is killed too (``host.sessions.marked_pids``), with the process group.

* :func:`run_once` - the one-shot mode: ``argv`` with the input on stdin, its stdout back;
* :class:`Server` - the persistent mode (``serve``): framed requests and responses;
* :class:`ProcessTable` - every live adapter process, killed together by :meth:`kill_all`.
"""

from __future__ import annotations

import itertools
import os
import re
import select
import selectors
import signal
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.host.sessions import marked_pids
from conformance.jsondoc import read_json

__all__ = [
    "Exchange",
    "MARKER",
    "ProcessTable",
    "REAPER",
    "Server",
    "STDERR_KEEP",
    "crash_line",
    "run_once",
]

#: the environment variable that marks an adapter process and everything it starts
MARKER = "KAFKA_CONFORMANCE_ADAPTER"
#: the supervisor each adapter runs under (Linux: it needs ``/proc`` and ``prctl``)
REAPER = Path(__file__).with_name("reaper.py")
#: how long the kit waits for a supervisor to kill its tree and exit before SIGKILL
REAPER_PATIENCE = 10.0

STDERR_KEEP = 4096
#: lines that state why a program died, in the order they are looked for: a Go panic or
#: runtime fatal error, a Rust panic or failed allocation, a JVM's uncaught exception, V8's
#: fatal error; else the
#: last line naming an exception or error class (Python's traceback ends with it, Node's and
#: Java's stacks start with it)
_CRASH_FIRST = re.compile(
    r"^(panic: |fatal error: |thread '.*' panicked at|Exception in thread |FATAL ERROR: "
    r"|memory allocation of \d+ bytes failed)"
)
_FRAME_LINE = re.compile(r"^(at |File |\.\.\.|[\w./-]*/[\w.-]+:\d+|goroutine |Traceback )")
_CRASH_LAST = re.compile(r"^([A-Za-z_$][\w$]*[.:])*[A-Za-z_$]*(Error|Exception|Panic)\b")
_FRAME = struct.Struct(">I")
_CHUNK = 1 << 16


@dataclass
class Exchange:
    """What one request to an adapter gave: its output, or the problem that replaced it."""

    output: bytes | None
    problem: str | None
    stderr: str
    seconds: float

    def failure(self) -> str | None:
        """Why there is no output to judge: the problem, with the crash line of stderr beside
        it (``exit code 2: panic: ...``), or "no output"; None when there is output."""
        if self.problem is None and self.output is not None:
            return None
        crash = crash_line(self.stderr) if self.problem else None
        return f"{self.problem}: {crash}" if crash else (self.problem or "no output")

    def document(self) -> tuple[Any, str | None]:
        """The JSON document the adapter printed, or why there is none (:meth:`failure`,
        output that is not UTF-8, invalid JSON)."""
        failure = self.failure()
        if failure is not None or self.output is None:
            return None, failure
        try:
            return read_json(self.output.decode("utf-8")), None
        except UnicodeDecodeError as exc:
            return None, f"output is not UTF-8: {exc}"
        except ValueError as exc:
            preview = self.output[:80].decode("utf-8", "replace")
            return None, f"invalid JSON ({exc}): {preview!r}"


class ProcessTable:
    """The live adapter processes; :meth:`kill_all` ends every one of their process groups."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[subprocess.Popen[bytes], str] = {}
        self._numbers = itertools.count(1)
        #: this table's marker value prefix (``MARKER=<run>.<n>`` in each process)
        self.run_id = uuid.uuid4().hex
        self.closed = False

    def start(self, argv: Sequence[str], env: Mapping[str, str] | None) -> subprocess.Popen[bytes]:
        """Start ``argv`` (under its supervisor where there is one, :data:`REAPER`); raises
        OSError when it cannot be started."""
        supervised = _supervised()
        report_r, report_w = os.pipe() if supervised else (-1, -1)
        try:
            with self._lock:
                if self.closed:
                    raise RuntimeError("the run is being stopped")
                mark = f"{self.run_id}.{next(self._numbers)}"
                command = list(argv)
                if supervised:
                    command = [sys.executable, "-I", "-S", str(REAPER), str(report_w), *command]
                proc = subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    env={**(os.environ if env is None else env), MARKER: mark},
                    pass_fds=(report_w,) if supervised else (),
                )
                self._live[proc] = mark
        except BaseException:
            if supervised:
                os.close(report_r)
            raise
        finally:
            if supervised:
                os.close(report_w)
        if supervised:
            report = _read_all(report_r)
            if report != b"ok":
                self.end(proc)
                code, _, reason = report.decode("utf-8", "replace").partition(" ")
                if not code.isdigit():
                    raise OSError("its supervisor ended before starting it")
                raise OSError(int(code), reason)
        return proc

    def end(self, proc: subprocess.Popen[bytes]) -> None:
        """Kill ``proc``'s process group and every process that escaped it (whatever is left
        of them) and reap ``proc``."""
        _stop_supervisor(proc, time.monotonic() + REAPER_PATIENCE)
        _kill_group(proc)
        with self._lock:
            mark = self._live.get(proc)
        if mark is not None:
            _kill_marked(f"{MARKER}={mark}".encode(), exact=True)
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
            pass
        with self._lock:
            self._live.pop(proc, None)

    def kill_all(self) -> None:
        """Kill every process group of the table, and every process any of them started."""
        with self._lock:
            self.closed = True
            live = list(self._live)
        for proc in live if _supervised() else ():  # each supervisor kills its tree, at once
            _signal(proc, signal.SIGTERM)
        deadline = time.monotonic() + REAPER_PATIENCE
        for proc in live:
            _stop_supervisor(proc, deadline)
            _kill_group(proc)
        _kill_marked(f"{MARKER}={self.run_id}.".encode(), exact=False)


def _supervised() -> bool:
    """Adapters run under :data:`REAPER` (Linux, with a Python to run it)."""
    return sys.platform == "linux" and bool(sys.executable) and REAPER.is_file()


def _read_all(fd: int) -> bytes:
    """What is written to ``fd`` until its end (then closed)."""
    got = bytearray()
    try:
        while chunk := os.read(fd, 256):
            got += chunk
    finally:
        os.close(fd)
    return bytes(got)


def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
    """``sig`` to ``proc`` while it is not reaped (its pid cannot be another's)."""
    if proc.returncode is None:
        try:
            os.kill(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _stop_supervisor(proc: subprocess.Popen[bytes], deadline: float) -> None:
    """SIGTERM ``proc`` (a supervisor: it kills the adapter's whole tree, then exits) and wait
    until ``deadline`` for its exit, without reaping it: its group id stays reserved for the
    group kill after it."""
    if proc.returncode is not None or not _supervised():
        return
    _signal(proc, signal.SIGTERM)
    exit_fd = _exit_fd(proc)
    if exit_fd is None:  # pragma: no cover - kernels before 5.3
        return
    try:
        select.select([exit_fd], [], [], max(0.0, deadline - time.monotonic()))
    finally:
        os.close(exit_fd)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_marked(entry: bytes, exact: bool) -> None:
    """SIGKILL every process whose environment has ``entry`` (``exact``) or an entry starting
    with it; twice, for one that forked while the first were killed."""
    for _ in range(2):
        pids = marked_pids(entry, exact)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if not pids:
            return


class _StderrTail(threading.Thread):
    """Reads a process's stderr to its end, keeping its first and its last
    :data:`STDERR_KEEP` bytes."""

    def __init__(self, pipe: object) -> None:
        super().__init__(daemon=True)
        self._pipe = pipe
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._lock = threading.Lock()
        self.start()

    def run(self) -> None:
        fd = self._pipe.fileno()  # type: ignore[attr-defined]
        try:
            while chunk := os.read(fd, _CHUNK):
                with self._lock:
                    room = STDERR_KEEP - len(self._head)
                    self._head += chunk[:room]
                    self._tail += chunk[room:] if room > 0 else chunk
                    del self._tail[:-STDERR_KEEP]
                    self._total += len(chunk)
        except OSError:
            pass

    def text(self) -> str:
        """The head, and the tail after a line saying how much was left out between them."""
        with self._lock:
            skipped = self._total - len(self._head) - len(self._tail)
            middle = f"\n[... {skipped} bytes of stderr left out ...]\n" if skipped else ""
            return (
                bytes(self._head).decode("utf-8", "replace")
                + middle
                + bytes(self._tail).decode("utf-8", "replace")
            )

    def clear(self) -> None:
        with self._lock:
            self._head.clear()
            self._tail.clear()
            self._total = 0


def crash_line(stderr: str) -> str | None:
    """The line of ``stderr`` that says why the program died (a panic, an uncaught
    exception, a runtime's fatal error), None if none does."""
    lines = [line.strip() for line in stderr.splitlines()]
    first = next((line for line in lines if _CRASH_FIRST.match(line)), None)
    if first is not None:
        return first
    last = next((line for line in reversed(lines) if _CRASH_LAST.match(line)), None)
    if last is not None:
        return last
    # else the first line that is no stack frame ("at f (file:3)", "File ...", "/src/x.go:3")
    return next((line for line in lines if line and not _FRAME_LINE.match(line)), None)


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _pump(
    proc: subprocess.Popen[bytes],
    send: bytes,
    close_stdin: bool,
    deadline: float,
    limit: int,
    framed: bool,
) -> tuple[bytes, str | None]:
    """Write ``send`` to the process and read its stdout until EOF (``framed``: until one
    complete response frame), the deadline or ``limit`` bytes. Returns (output, problem).

    The process's own exit also ends the read (what it wrote is drained first): a process it
    started in a session of its own may hold the pipe open long after, and EOF never comes."""
    assert proc.stdin is not None and proc.stdout is not None
    sel = selectors.DefaultSelector()
    out_fd, in_fd = proc.stdout.fileno(), proc.stdin.fileno()
    os.set_blocking(out_fd, False)
    os.set_blocking(in_fd, False)
    sel.register(out_fd, selectors.EVENT_READ)
    exit_fd = _exit_fd(proc)
    if exit_fd is not None:
        sel.register(exit_fd, selectors.EVENT_READ)
    view, sent = memoryview(send), 0
    if send:
        sel.register(in_fd, selectors.EVENT_WRITE)
    elif close_stdin:
        proc.stdin.close()
    out = bytearray()
    try:
        while True:
            if framed and len(out) >= _FRAME.size:
                (length,) = _FRAME.unpack_from(out)
                if length > limit:
                    return bytes(
                        out
                    ), f"response of {length} bytes announced, over the {limit}-byte limit"
                if len(out) > _FRAME.size + length:
                    return bytes(out), "output after the response frame"
                if len(out) == _FRAME.size + length:
                    return bytes(out[_FRAME.size :]), None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bytes(out), "timeout"
            for key, _ in sel.select(remaining):
                if key.fd == in_fd:
                    try:
                        sent += os.write(in_fd, view[sent : sent + _CHUNK])
                    except BrokenPipeError:
                        sent = len(send)  # it stopped reading: its output will tell
                    if sent >= len(send):
                        sel.unregister(in_fd)
                        if close_stdin:
                            proc.stdin.close()
                    continue
                exited = key.fd == exit_fd
                chunk = _drain(out_fd, limit + _FRAME.size + 1 - len(out)) if exited else None
                if chunk is None:
                    try:
                        chunk = os.read(out_fd, _CHUNK)
                    except BlockingIOError:
                        continue
                out += chunk
                if not framed and len(out) > limit:
                    return bytes(out), f"output over the {limit}-byte limit"
                if exited or not chunk:
                    if framed and not _whole_frame(out):
                        return (
                            bytes(out),
                            "closed its output in the middle of a response"
                            if out
                            else "closed its output instead of answering",
                        )
                    if not framed:
                        return bytes(out), None
                    break  # a whole frame: the check above returns it
    finally:
        sel.close()
        if exit_fd is not None:
            os.close(exit_fd)


def _exit_fd(proc: subprocess.Popen[bytes]) -> int | None:
    """A descriptor that becomes readable when ``proc`` exits (a pidfd), None where the
    kernel has none (then only EOF on its output ends a read)."""
    try:
        return os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return None


def _drain(fd: int, most: int) -> bytes:
    """What is readable on ``fd`` now (at most ``most`` bytes, at least one byte more than a
    caller allows, so an excess is seen)."""
    got = bytearray()
    while len(got) < most:
        try:
            chunk = os.read(fd, min(_CHUNK, most - len(got)))
        except BlockingIOError:
            break
        if not chunk:
            break
        got += chunk
    return bytes(got)


def _whole_frame(out: bytearray) -> bool:
    return len(out) >= _FRAME.size and len(out) >= _FRAME.size + _FRAME.unpack_from(out)[0]


def run_once(
    table: ProcessTable,
    argv: Sequence[str],
    data: bytes,
    *,
    env: Mapping[str, str] | None,
    timeout: float,
    limit: int,
) -> Exchange:
    """One-shot: start ``argv``, give it ``data`` on stdin, return what it printed (or why not:
    timeout, output over ``limit``, non-zero exit, a signal)."""
    start = time.monotonic()
    try:
        proc = table.start(argv, env)
    except OSError as exc:
        return Exchange(None, f"cannot start {argv[0]}: {exc.strerror or exc}", "", 0.0)
    tail = _StderrTail(proc.stderr)
    problem: str | None
    try:
        out, problem = _pump(proc, data, True, start + timeout, limit, framed=False)
        if problem is None:
            try:
                code = proc.wait(timeout=max(0.0, start + timeout - time.monotonic()))
            except subprocess.TimeoutExpired:
                problem = "timeout"
            else:
                if code != 0:
                    problem = _describe_exit(code)
        if problem == "timeout":
            problem = f"timeout: no result after {timeout:g} s (process group killed)"
    finally:
        table.end(proc)
        tail.join(timeout=2)
    return Exchange(None if problem else out, problem, tail.text(), time.monotonic() - start)


class Server:
    """A persistent adapter (``CMD serve``), started on first use and again after a failure.

    One thread uses one server; after any problem (timeout, a bad frame, an exit) the process
    group is killed and the next request starts a new server."""

    MODES = {"memory": 0, "file": 1}

    def __init__(
        self, table: ProcessTable, argv: Sequence[str], env: Mapping[str, str] | None
    ) -> None:
        self._table, self._argv, self._env = table, list(argv), env
        self._proc: subprocess.Popen[bytes] | None = None
        self._tail: _StderrTail | None = None
        self.starts = 0

    def request(self, mode: str, data: bytes, *, timeout: float, limit: int) -> Exchange:
        start = time.monotonic()
        if self._proc is not None and self._proc.poll() is not None:
            self._stop()  # it exited after its last answer: not this case's fault
        if self._proc is None:
            try:
                self._proc = self._table.start(self._argv, self._env)
            except OSError as exc:
                return Exchange(
                    None, f"cannot start {self._argv[0]}: {exc.strerror or exc}", "", 0.0
                )
            self._tail = _StderrTail(self._proc.stderr)
            self.starts += 1
        assert self._tail is not None
        self._tail.clear()
        frame = bytes([self.MODES[mode]]) + _FRAME.pack(len(data)) + data
        out, problem = _pump(self._proc, frame, False, start + timeout, limit, framed=True)
        if problem is not None:
            try:  # it may be exiting: a moment for its exit status, part of the reason
                code: int | None = self._proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                code = None
            if problem == "timeout":
                problem = f"timeout: no response after {timeout:g} s (process group killed)"
            elif code is not None:
                problem = f"{problem} ({_describe_exit(code)})"
            stderr = self._stop()
            return Exchange(None, problem, stderr, time.monotonic() - start)
        return Exchange(out, None, self._tail.text(), time.monotonic() - start)

    def _stop(self) -> str:
        proc, tail = self._proc, self._tail
        self._proc = self._tail = None
        if proc is None or tail is None:
            return ""
        self._table.end(proc)
        tail.join(timeout=2)
        return tail.text()

    def close(self) -> None:
        """End the server: EOF on its stdin, a moment to exit, then its group is killed."""
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._stop()
