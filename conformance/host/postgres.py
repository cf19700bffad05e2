"""A throwaway PostgreSQL server on 127.0.0.1, for brokers whose storage is PostgreSQL.

``check-broker`` judges brokers that keep their data in PostgreSQL (tansu with its
``postgres://`` storage engine). :class:`PostgresServer` runs one for the length of a ``with``
block, in a temporary directory of its own that is removed at the end; its :attr:`url` is what
such a broker is given.

* **The programs** come from Debian's packages, unpacked but not installed:
  ``scripts/fetch-postgres`` downloads ``postgresql-NN``, ``postgresql-client-NN`` and
  ``libpq5`` (``apt-get download``) into ``.cache/tools/postgres/debs`` and unpacks them
  (``dpkg-deb -x``) under ``.cache/tools/postgres/root``. :func:`binaries` finds them there
  (running the script when they are missing) and gives the directory of ``initdb``,
  ``postgres``, ``pg_isready`` and ``psql`` and the directory of the unpacked shared libraries
  (libpq, and any library the script had to fetch), which the programs get as
  ``LD_LIBRARY_PATH``. PostgreSQL finds its ``share/`` and ``lib/`` directories relative to
  its own program, so the unpacked tree works where it lies.
* **Root.** ``postgres`` and ``initdb`` refuse to run as root. When this process is root they
  run as ``nobody`` (``run_as``): the command is started through a tiny trampoline, this
  Python with ``-I -S -c``, that drops the supplementary groups, sets the group and user ids
  (real, effective and saved: no way back) and ``exec``s the program, so the process the kit
  supervises is the server itself (no ``su``/``runuser`` in between, nothing from PAM, no
  tool beyond the standard library). The temporary directory is given to that user, and it
  must be able to reach it and the programs: every directory above them must let it pass
  (``.cache`` is ``0755`` as made under ``umask 022``; a directory made by ``mkdtemp`` is
  ``0700``, which is why the data never goes into a caller's work directory). When the
  programs are out of its reach (a checkout inside such a directory), the server runs a copy
  of the unpacked tree made in its own temporary directory (84 MB, removed with it). This is
  checked before ``initdb`` runs; the temporary directory's parent is ``tmp_parent``, else
  the system's temporary directory, else ``/tmp``. The clients (``pg_isready``, ``psql``)
  stay root: only the server minds. Not root: all run as this user.
* **The cluster** is made by ``initdb`` in ``WORKDIR/data`` (superuser ``postgres``, ``trust``
  authentication, encoding UTF8, locale C, no fsync). The server listens on ``127.0.0.1`` only,
  on a free port (``host.ports``; one that lost the race for it is started again on a fresh
  one), and on a unix socket in ``WORKDIR``; it runs without fsync, synchronous commit, full
  page writes and JIT (``libllvm`` is not fetched): fast, and nothing survives it anyway.
  Trust authentication means any local user can connect as ``postgres`` while it runs.
* **Ready** when ``pg_isready`` says the server accepts connections and the server is still
  the live child started (not a thief of its port); a server that exits first, or is not
  ready within ``ready_timeout`` seconds, raises :class:`PostgresError` with the tail of its
  log.
* **Databases.** ``database`` (``tansu`` by default; None: only ``postgres``) is created at
  start, then each file of ``init_sql`` is applied to it by ``psql`` (``ON_ERROR_STOP``):
  a broker whose PostgreSQL engine does not create its own tables needs its schema applied
  this way. :meth:`PostgresServer.create_database` makes more (a fresh database per broker
  run) and gives their URLs.
* **Process** (``host.sessions``): each program is a :class:`~conformance.host.sessions.Child`
  in a session of its own, output appended to ``WORKDIR/postgres.log``. On every exit of the
  ``with`` block (exceptions, Ctrl-C and, in the main thread, SIGTERM included) the server
  gets SIGINT (PostgreSQL's fast shutdown: clients disconnected, a checkpoint, exit), up to
  ``stop_grace`` seconds, then ``sessions.terminate`` (SIGTERM, SIGKILL to the process group
  and whatever is left in its session), then SIGKILL to any process still working in
  ``WORKDIR`` (PostgreSQL puts each of its children in a session of its own: they are found
  by their working directory, the data directory); the temporary directory is removed after
  that. A signal during the stop does not cut it short. A failed ``start()`` stops what it
  started before it raises.

:func:`postgres_server` is the short form: ``with postgres_server(repo_root, workdir) as pg:``
fetches the programs when needed, starts the server with its log in ``workdir`` and gives it.

Linux only (``host.sessions``; Debian's packages). Stdlib only: this is the ``host`` layer.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.host import lifetime, ports, sessions

__all__ = [
    "DEFAULT_DATABASE",
    "FETCH_SCRIPT",
    "HOST",
    "SUPERUSER",
    "Binaries",
    "PostgresError",
    "PostgresServer",
    "binaries",
    "postgres_server",
]

HOST = "127.0.0.1"
SUPERUSER = "postgres"
DEFAULT_DATABASE = "tansu"
#: the script that fetches the programs, relative to the repository's root
FETCH_SCRIPT = Path("scripts") / "fetch-postgres"
#: where it unpacks them, relative to the repository's root
TOOLS_ROOT = Path(".cache") / "tools" / "postgres" / "root"
#: the user the server runs as when this process is root
RUN_AS_WHEN_ROOT = "nobody"
#: seconds a fast shutdown may take before the process group is killed
STOP_GRACE = 10.0
#: how many times the server is started on a fresh port after losing a port race
PORT_ATTEMPTS = 3
#: seconds ``initdb`` and a ``psql`` run may take
COMMAND_TIMEOUT = 120.0
#: lines of the log quoted in errors
_LOG_LINES = 40
_BIND_FAILURE = re.compile(
    r"could not bind IPv4 address|could not create any TCP/IP sockets", re.IGNORECASE
)
_DATABASE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
# exec a program as another user: argv is -c UID GID PROGRAM ARGS...
_DROP_PRIVILEGES = (
    "import os, sys\n"
    "uid, gid = int(sys.argv[1]), int(sys.argv[2])\n"
    "os.setgroups([])\n"
    "os.setresgid(gid, gid, gid)\n"
    "os.setresuid(uid, uid, uid)\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)
# the server's settings beyond initdb's: loopback only, fast, no JIT (libllvm not fetched)
_SERVER_SETTINGS = {
    "listen_addresses": HOST,
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "jit": "off",
    "logging_collector": "off",
    "log_destination": "stderr",
}


class PostgresError(RuntimeError):
    """PostgreSQL could not be fetched, set up or started; the message says why (and holds
    the tail of the server's log when it ran)."""


# --------------------------------------------------------------------------------------------
# the programs


@dataclass(frozen=True)
class Binaries:
    """The unpacked PostgreSQL: its programs and the shared libraries they need."""

    bin_dir: Path  # .../usr/lib/postgresql/NN/bin
    lib_dir: Path | None  # .../usr/lib/<multiarch> (libpq), for LD_LIBRARY_PATH
    version: str = ""  # "postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)"
    root: Path | None = None  # the unpacked tree holding both (None: not relocatable)

    def program(self, name: str) -> Path:
        return self.bin_dir / name

    def copied_to(self, target: Path) -> Binaries:
        """The same programs copied, whole tree and symlinks as they are, to ``target`` (it
        must not exist): PostgreSQL finds its files relative to its program, so the copy
        runs where it lies."""
        source = self.root
        if source is None:
            raise PostgresError(f"the PostgreSQL programs in {self.bin_dir} cannot be copied")
        try:
            shutil.copytree(source, target, symlinks=True)
        except (OSError, shutil.Error) as exc:
            raise PostgresError(f"copying the PostgreSQL programs to {target}: {exc}") from exc

        def moved(path: Path) -> Path:
            return target / path.relative_to(source)

        return Binaries(
            bin_dir=moved(self.bin_dir),
            lib_dir=moved(self.lib_dir) if self.lib_dir is not None else None,
            version=self.version,
            root=target,
        )

    def env(self, home: Path) -> dict[str, str]:
        """The whole environment of the programs: nothing of the caller's ``PG*`` variables
        (``PGHOST``, ``PGDATABASE``, ...) or locale leaks in."""
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(home),
            "LC_ALL": "C",
            "LANG": "C",
            "TZ": "UTC",
        }
        if self.lib_dir is not None:
            env["LD_LIBRARY_PATH"] = str(self.lib_dir)
        return env


def _stamp(tools_root: Path) -> dict[str, str]:
    """The ``key=value`` lines of the fetch script's completion stamp ({} if absent)."""
    try:
        text = (tools_root / ".complete").read_text(encoding="utf-8")
    except OSError:
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            found[key.strip()] = value.strip()
    return found


def _installed(tools_root: Path) -> Binaries | None:
    stamp = _stamp(tools_root)
    major = stamp.get("major", "")
    if not major.isdigit():
        return None
    bin_dir = tools_root / "usr" / "lib" / "postgresql" / major / "bin"
    if not all(os.access(bin_dir / p, os.X_OK) for p in ("initdb", "postgres", "psql")):
        return None
    libdir = stamp.get("libdir")
    lib_dir = tools_root / libdir if libdir else None
    return Binaries(
        bin_dir=bin_dir, lib_dir=lib_dir, version=stamp.get("version", ""), root=tools_root
    )


def _output(cmd: list[str], what: str, env: dict[str, str] | None, timeout: float) -> str:
    """The standard output of ``cmd`` (``what`` names it in errors); :class:`PostgresError`
    if it cannot run, times out or fails (with the tail of its stderr)."""
    try:
        proc = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PostgresError(f"{what}: {exc}") from exc
    if proc.returncode != 0:
        tail = sessions.last_lines(proc.stderr, _LOG_LINES)
        raise PostgresError(f"{what} exited with status {proc.returncode}:\n{tail}")
    return proc.stdout


def binaries(root: Path, *, fetch: bool = True, timeout: float = 900.0) -> Binaries:
    """The PostgreSQL programs unpacked under ``root/.cache/tools/postgres/root`` (``root``:
    the repository), running ``root/scripts/fetch-postgres`` first when they are not there
    (unless ``fetch`` is False: then :class:`PostgresError`)."""
    root = Path(os.path.abspath(root))
    tools_root = root / TOOLS_ROOT
    found = _installed(tools_root)
    if found is not None or not fetch:
        if found is None:
            raise PostgresError(f"no PostgreSQL under {tools_root} (run {FETCH_SCRIPT})")
        return found
    script = root / FETCH_SCRIPT
    _output([str(script)], str(script), None, timeout)
    found = _installed(tools_root)
    if found is None:
        raise PostgresError(f"{script} succeeded but left no PostgreSQL under {tools_root}")
    return found


# --------------------------------------------------------------------------------------------
# the server


def _run_as_ids(run_as: str | None) -> tuple[int, int] | None:
    """(uid, gid) the server runs as; None: as this process."""
    name = run_as if run_as is not None else (RUN_AS_WHEN_ROOT if os.geteuid() == 0 else None)
    if name is None:
        return None
    try:
        entry = pwd.getpwnam(name)
    except KeyError as exc:
        raise PostgresError(f"no user {name!r} to run PostgreSQL as") from exc
    if entry.pw_uid == 0:
        raise PostgresError(f"PostgreSQL cannot run as {name!r}: uid 0")
    return entry.pw_uid, entry.pw_gid


def _working_in(directory: Path) -> list[int]:
    """Live processes whose working directory is ``directory`` or below it; never this one."""
    top = str(directory)
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry.name}/cwd")  # a zombie has none
        except OSError:
            continue
        if cwd == top or cwd.startswith(top + os.sep):
            found.append(int(entry.name))
    return found


def _kill_working_in(directory: Path, patience: float = 10.0) -> None:
    """SIGKILL every process working in ``directory`` (or below) until none is left, for up
    to ``patience`` seconds: the postmaster's children (they work in the data directory) are
    each in a session of their own (PostgreSQL calls ``setsid`` in every child), out of reach
    of ``sessions.terminate``; they normally leave with the postmaster's fast shutdown, and
    on their own soon after a postmaster killed outright."""
    deadline = time.monotonic() + patience
    while strays := _working_in(directory):
        for pid in strays:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)


def _passable(path: Path, ids: tuple[int, int]) -> bool:
    """Whether the user ``ids`` (uid, gid; no supplementary groups) may enter ``path`` and
    every directory above it (the execute bit for it as owner, group or other)."""
    uid, gid = ids
    current = Path(os.path.abspath(path))
    for directory in (current, *current.parents):
        try:
            st = directory.stat()
        except OSError:
            return False
        if st.st_uid == uid:
            bit = 0o100
        elif st.st_gid == gid:
            bit = 0o010
        else:
            bit = 0o001
        if not st.st_mode & bit:
            return False
    return True


def _check_passable(path: Path, ids: tuple[int, int], what: str) -> None:
    if not _passable(path, ids):
        user = pwd.getpwuid(ids[0]).pw_name
        raise PostgresError(f"{what} in {path} are out of reach of {user!r}, who runs the server")


def _parent_for(ids: tuple[int, int] | None, wanted: Path | None) -> Path | None:
    """Where the temporary directory is made: ``wanted`` (it must be passable by the server's
    user), else the system's temporary directory, else ``/tmp`` when that one is not."""
    if ids is None:
        return wanted
    if wanted is not None:
        _check_passable(wanted, ids, "the directory for the server's data")
        return wanted
    for candidate in (Path(tempfile.gettempdir()), Path("/tmp")):
        if _passable(candidate, ids):
            return candidate
    raise PostgresError("no temporary directory the PostgreSQL server's user can enter")


def _check_name(name: str) -> str:
    if not _DATABASE_NAME.fullmatch(name):
        raise PostgresError(f"not a plain database name: {name!r}")
    return name


class PostgresServer(lifetime.Service):
    """A PostgreSQL server on 127.0.0.1 in a temporary directory, for a ``with`` block.

    ``with PostgresServer(binaries(root)) as pg:`` starts it (``initdb``, the server, the
    database ``database`` with ``init_sql`` applied) and gives it; :attr:`url` is
    ``postgres://postgres@127.0.0.1:PORT/DATABASE``. The block's end stops the server and
    removes the directory, however it ends."""

    def __init__(
        self,
        programs: Binaries,
        *,
        database: str | None = DEFAULT_DATABASE,
        init_sql: Sequence[Path] = (),
        settings: Mapping[str, str] | None = None,
        run_as: str | None = None,
        tmp_parent: Path | None = None,
        log: Path | None = None,
        ready_timeout: float = 60.0,
        stop_grace: float = STOP_GRACE,
    ) -> None:
        """``run_as``: the user the server runs as (default: ``nobody`` when this process is
        root, else this user); ``settings``: more ``-c NAME=VALUE`` for the server;
        ``tmp_parent``: where the temporary directory is made (by default the system's
        temporary directory, else ``/tmp`` if the server's user cannot pass the former);
        ``log``: where the output of ``initdb`` and the server is appended (by default
        ``postgres.log`` in the temporary directory, gone with it)."""
        self.programs = programs
        self._installed = programs  # self.programs may become a copy for one run
        self.database = _check_name(database) if database is not None else None
        self.init_sql = tuple(Path(os.path.abspath(p)) for p in init_sql)
        self.settings = dict(settings or {})
        self.run_as = run_as
        self.tmp_parent = tmp_parent
        self._log = Path(os.path.abspath(log)) if log is not None else None
        self.ready_timeout = ready_timeout
        self.stop_grace = stop_grace
        self.workdir: Path | None = None
        self.port: int | None = None
        self._children: list[sessions.Child] = []
        self._server: sessions.Child | None = None
        self._guarded = False

    # -- what it gives

    @property
    def log(self) -> Path:
        """The output of ``initdb`` and the server."""
        return self._log if self._log is not None else self._dir / "postgres.log"

    @property
    def pid(self) -> int:
        """The server's process (the postmaster, leader of its session)."""
        if self._server is None:
            raise PostgresError("PostgreSQL is not running")
        return self._server.pid

    @property
    def url(self) -> str:
        """``postgres://postgres@127.0.0.1:PORT/DATABASE`` (``postgres`` if no database)."""
        return self.url_of(self.database or "postgres")

    def url_of(self, database: str) -> str:
        if self.port is None:
            raise PostgresError("PostgreSQL is not running")
        return f"postgres://{SUPERUSER}@{HOST}:{self.port}/{_check_name(database)}"

    @property
    def _dir(self) -> Path:
        if self.workdir is None:
            raise PostgresError("PostgreSQL is not started")
        return self.workdir

    # -- start and stop

    def start(self) -> PostgresServer:
        if self.workdir is not None:
            raise PostgresError("PostgreSQL is already started")
        ids = _run_as_ids(self.run_as)
        self._guarded = sessions.guard_sigterm()
        try:
            parent = _parent_for(ids, self.tmp_parent)
            self.workdir = Path(tempfile.mkdtemp(prefix="kafka-conformance-pg-", dir=parent))
            self.programs = self._installed
            if ids is not None:
                os.chown(self.workdir, *ids)
                if not _passable(self.programs.bin_dir, ids):
                    # a checkout in a directory only its owner may enter (mkdtemp's 0700):
                    # the server runs a copy in its own directory, removed with it
                    self.programs = self.programs.copied_to(self.workdir / "programs")
                _check_passable(self.programs.bin_dir, ids, "the PostgreSQL programs")
            if self._log is not None:
                self._log.parent.mkdir(parents=True, exist_ok=True)
            self._initdb(ids)
            self._start_server(ids)
            if self.database is not None:
                self.create_database(self.database, self.init_sql)
        except BaseException:
            sessions.uninterrupted(self._stop)
            raise
        return self

    def stop(self) -> None:
        sessions.uninterrupted(self._stop)

    def _stop(self) -> None:
        """Idempotent: fast shutdown, the group killed, the directory removed."""
        server = self._server
        if server is not None and server.exit_code() is None:
            # fast shutdown, asked of the postmaster alone (its unreaped leader keeps the pid)
            os.kill(server.pid, signal.SIGINT)
            deadline = time.monotonic() + self.stop_grace
            while server.exit_code() is None and time.monotonic() < deadline:
                time.sleep(0.05)
        sessions.terminate(self._children, grace=2.0)
        if self.workdir is not None:  # the server's children, each in a session of its own
            _kill_working_in(self.workdir)
        self._server = None
        self.port = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            if not self.workdir.exists():
                self.workdir = None
            self.programs = self._installed
        if self._guarded:
            self._guarded = False
            sessions.unguard_sigterm()

    # -- the steps

    def _command(self, ids: tuple[int, int] | None, program: str, *args: str) -> list[str]:
        cmd = [str(self.programs.program(program)), *args]
        if ids is None:
            return cmd
        uid, gid = ids
        return [sys.executable, "-I", "-S", "-c", _DROP_PRIVILEGES, str(uid), str(gid), *cmd]

    def _failure(self, child: sessions.Child, what: str) -> PostgresError:
        tail = sessions.last_lines(child.new_output(), _LOG_LINES)
        hint = ""
        if os.geteuid() == 0 and re.search(r"permission denied", tail, re.IGNORECASE):
            hint = (
                f"\n(the server runs as {self.run_as or RUN_AS_WHEN_ROOT!r}: it must be able to"
                f" read {self.programs.bin_dir} and enter {self.workdir})"
            )
        return PostgresError(f"{what} (log: {child.log}):\n{tail}{hint}")

    def _initdb(self, ids: tuple[int, int] | None) -> None:
        cmd = self._command(
            ids,
            "initdb",
            "--pgdata",
            str(self._dir / "data"),
            "--username",
            SUPERUSER,
            "--auth",
            "trust",
            "--encoding",
            "UTF8",
            "--locale",
            "C",
            "--no-sync",
            "--no-instructions",
        )
        child = sessions.Child("initdb", cmd, self.programs.env(self._dir), self.log, self._dir)
        self._children.append(child)
        deadline = time.monotonic() + COMMAND_TIMEOUT
        while (code := child.exit_code()) is None:
            if time.monotonic() > deadline:
                raise self._failure(child, "initdb did not finish in time")
            time.sleep(0.05)
        sessions.terminate([child], grace=0.0)  # reaps it
        if code != 0:
            raise self._failure(child, f"initdb exited with status {code}")

    def _start_server(self, ids: tuple[int, int] | None) -> None:
        deadline = time.monotonic() + self.ready_timeout
        for attempt in range(1, PORT_ATTEMPTS + 1):
            port = ports.free_port(HOST)
            settings = {
                **_SERVER_SETTINGS,
                **self.settings,
                "port": str(port),
                "unix_socket_directories": str(self._dir),
            }
            args = ["-D", str(self._dir / "data")]
            for name, value in settings.items():
                args += ["-c", f"{name}={value}"]
            child = sessions.Child(
                "postgres",
                self._command(ids, "postgres", *args),
                self.programs.env(self._dir),
                self.log,
                self._dir,
            )
            self._children.append(child)
            self._server = child
            if self._await_ready(child, port, deadline):
                self.port = port
                return
            sessions.terminate([child], grace=0.0)
            if attempt == PORT_ATTEMPTS:
                raise self._failure(child, f"PostgreSQL lost {PORT_ATTEMPTS} port races")

    def _accepts(self, port: int) -> bool:
        """Whether a PostgreSQL server on ``port`` accepts connections (``pg_isready``)."""
        cmd = [
            str(self.programs.program("pg_isready")),
            "--host",
            HOST,
            "--port",
            str(port),
            "--username",
            SUPERUSER,
            "--dbname",
            "postgres",
            "--timeout",
            "2",
            "--quiet",
        ]
        try:
            proc = subprocess.run(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=self.programs.env(self._dir),
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        return proc.returncode == 0

    def _await_ready(self, child: sessions.Child, port: int, deadline: float) -> bool:
        """True once the server accepts connections; False if it lost its port; raises if it
        exits otherwise or the deadline passes."""
        return child.await_ready(
            lambda: ports.accepts(HOST, port, timeout=0.2) and self._accepts(port),
            deadline=deadline,
            lost_port=_BIND_FAILURE,
            fail=lambda what: self._failure(child, what),
            silence=f"accept connections on {HOST}:{port}",
            poll=0.1,
        )

    # -- clients

    def psql(self, database: str, *args: str, timeout: float = COMMAND_TIMEOUT) -> str:
        """Run ``psql`` (no ``.psqlrc``, stop on the first error) against ``database`` as the
        superuser with ``args``; its standard output. :class:`PostgresError` if it fails."""
        if self.port is None:
            raise PostgresError("PostgreSQL is not running")
        cmd = [
            str(self.programs.program("psql")),
            "--no-psqlrc",
            "--quiet",
            "--set",
            "ON_ERROR_STOP=1",
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--username",
            SUPERUSER,
            "--dbname",
            _check_name(database),
            *args,
        ]
        return _output(cmd, f"psql {' '.join(args)}", self.programs.env(self._dir), timeout)

    def create_database(self, name: str, init_sql: Iterable[Path] = ()) -> str:
        """Create the database ``name`` and apply each SQL file of ``init_sql`` to it, in
        order; its URL."""
        self.psql("postgres", "--command", f'CREATE DATABASE "{_check_name(name)}"')
        for path in init_sql:
            self.psql(name, "--file", str(os.path.abspath(path)))
        return self.url_of(name)


@contextlib.contextmanager
def postgres_server(
    root: Path,
    workdir: Path | None = None,
    *,
    database: str | None = DEFAULT_DATABASE,
    init_sql: Sequence[Path] = (),
    ready_timeout: float = 60.0,
) -> Iterator[PostgresServer]:
    """A running :class:`PostgresServer` for the ``with`` block, from the programs of the
    repository ``root`` (:func:`binaries`: fetched when missing); its output is appended to
    ``workdir/postgres.log`` when ``workdir`` is given. The data directory is never in
    ``workdir``: as root the server runs as ``nobody``, who may not be able to enter it."""
    log = Path(workdir) / "postgres.log" if workdir is not None else None
    server = PostgresServer(
        binaries(root),
        database=database,
        init_sql=init_sql,
        log=log,
        ready_timeout=ready_timeout,
    )
    with server:
        yield server
