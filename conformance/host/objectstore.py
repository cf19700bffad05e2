"""A real S3-compatible object store on 127.0.0.1, for reading Kafka segments from ``s3://``.

``replay`` reads log segments through ``pyarrow.fs`` (``s3://bucket/prefix`` URIs). Its tests
and benchmarks need an S3 endpoint that behaves like one: SigV4 signatures checked against a
configured key pair, ranged GETs answered with ``206 Partial Content``, missing buckets
refused. :func:`object_store` runs one on this machine, for the length of a ``with`` block.

* **The server** is the Versity S3 Gateway (``versitygw``, Apache-2.0), built from the Go
  module proxy by ``scripts/fetch-s3-server`` (which prints the binary's path; pass it as
  ``binary``). It translates S3 to a POSIX directory: every directory under ``root`` is a
  bucket, every file below it an object (the file system must support extended attributes).
  It is started as ``versitygw --region us-east-1 --port 127.0.0.1:PORT --health /health posix
  ROOT`` with the root key pair in its environment (``ROOT_ACCESS_KEY_ID``,
  ``ROOT_SECRET_ACCESS_KEY``: not in the command line). Its environment is otherwise only
  ``PATH`` and ``HOME``: the gateway reads many variables (``VGW_*``, ``LOGFILE``,
  ``WEBHOOK``) that must not leak in from the caller. It closes each connection after one
  request (its default): with ``--keep-alive`` it logs a phantom ``GET /`` after each
  streamed (``aws-chunked``) upload part, failing to parse what follows the chunks.
* **Buckets** are made by the caller through the S3 API, e.g. ``pyarrow.fs.S3FileSystem(...,
  allow_bucket_creation=True).create_dir("bucket")`` (pyarrow refuses to create buckets
  without that option). Directories made by hand in ``root`` would show up as buckets too,
  but without the owner and ACL the gateway stores with a bucket it creates.
* **Process** (``host.sessions``): a :class:`~conformance.host.sessions.Child` in a session of
  its own, stdout and stderr appended to ``workdir/versitygw.log``; stopped by
  ``sessions.terminate`` (SIGTERM, a grace period, SIGKILL) on every exit of the ``with``
  block, exceptions, Ctrl-C and (in the main thread) SIGTERM included; a signal during the
  stop does not cut it short.
* **Ready** when the port accepts a TCP connection and an unsigned ``GET /health`` answers 200
  from a server that names itself ``VERSITYGW``. A server that exits first, or is not ready
  within ``ready_timeout`` seconds, raises :class:`ObjectStoreError` with the tail of its log;
  one that lost the race for its free port (``host.ports``) is started again on a fresh one.
* **Requests.** The gateway logs one line per request (``HH:MM:SS | vgw | STATUS | LATENCY |
  IP | METHOD | PATH | ERROR | QUERY``), written before the response is sent.
  :func:`read_requests` parses them; :func:`split_gets` sorts GETs into ranged ones (status
  206: the gateway answers 206 exactly when it served the ``Range`` header of the request)
  and the rest (whole objects, listings, errors). The log has no request headers: the
  gateway prints those only at ``--log-level debug``, as boxes of separate lines that
  interleave when requests overlap, so that mode is not used.

Clients: ``endpoint_override=store.address`` (or ``store.endpoint``) with ``scheme="http"``
and ``region="us-east-1"``; :meth:`ObjectStore.uri` gives the ``s3://`` URI form for
``pyarrow.fs.FileSystem.from_uri`` with the key pair in :meth:`ObjectStore.client_env`.

Linux only (``host.sessions``). Stdlib only: this is the ``host`` layer.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from conformance.host import ports, sessions

__all__ = [
    "DEFAULT_ACCESS_KEY",
    "DEFAULT_SECRET_KEY",
    "HEALTH_PATH",
    "HOST",
    "REGION",
    "Gets",
    "ObjectStore",
    "ObjectStoreError",
    "Request",
    "object_store",
    "read_requests",
    "split_gets",
]

HOST = "127.0.0.1"
REGION = "us-east-1"
HEALTH_PATH = "/health"
DEFAULT_ACCESS_KEY = "conformance"
DEFAULT_SECRET_KEY = "conformance-secret-key"
#: SIGTERM grace before SIGKILL when the store stops, in seconds
STOP_GRACE = 5.0
#: how many times the server is started on a fresh port after losing a port race
PORT_ATTEMPTS = 3
#: lines of the server's log quoted in errors
_LOG_LINES = 40
_BIND_FAILURE = re.compile(r"address already in use", re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_REQUEST_LINE = re.compile(
    r"^(?P<time>\d\d:\d\d:\d\d) \| vgw \| (?P<status>\d{3}) \| [^|]* \| [^|]* \| "
    r"(?P<method>[A-Z]+) \| (?P<path>.*) \| (?P<error>.*?) \| (?P<query>.*?)\s*$"
)


class ObjectStoreError(RuntimeError):
    """The object store exited or did not become ready; the message holds its log's tail."""


@dataclass(frozen=True)
class Request:
    """One request as the server logged it."""

    time: str  # HH:MM:SS, the server's clock
    status: int
    method: str
    path: str  # "/bucket/key"
    error: str  # "-" when none
    query: str  # "" when none

    @property
    def ranged(self) -> bool:
        """A GET answered with part of an object (206: the request's ``Range`` was served)."""
        return self.method == "GET" and self.status == 206


@dataclass(frozen=True)
class Gets:
    """GET requests split by :func:`split_gets`."""

    ranged: tuple[Request, ...]  # answered 206 Partial Content
    whole: tuple[Request, ...]  # every other GET: whole objects, listings, errors


def read_requests(log: Path, start: int = 0) -> list[Request]:
    """The requests logged in ``log`` from byte ``start`` on, in order."""
    try:
        with open(log, "rb") as f:
            f.seek(start)
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    found: list[Request] = []
    for line in text.splitlines():
        m = _REQUEST_LINE.match(_ANSI.sub("", line))
        if m is not None:
            found.append(
                Request(
                    time=m["time"],
                    status=int(m["status"]),
                    method=m["method"],
                    path=m["path"],
                    error=m["error"],
                    query=m["query"],
                )
            )
    return found


def split_gets(requests: Iterable[Request], path: str | None = None) -> Gets:
    """The GETs among ``requests`` (only those of ``path``, "/bucket/key", if given), ranged
    and not."""
    selected = [r for r in requests if r.method == "GET" and (path is None or r.path == path)]
    return Gets(
        ranged=tuple(r for r in selected if r.ranged),
        whole=tuple(r for r in selected if not r.ranged),
    )


@dataclass(frozen=True)
class ObjectStore:
    """A running store: where it listens, its key pair, its data directory and log."""

    endpoint: str  # "http://127.0.0.1:PORT"
    access_key: str
    secret_key: str
    root: Path  # the server's data directory: one directory per bucket
    log: Path  # its stdout and stderr
    pid: int  # the server's process (the leader of its session)
    log_start: int = 0  # where this run's output begins in ``log``
    region: str = REGION

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``, for ``endpoint_override`` together with ``scheme="http"``."""
        return self.endpoint.removeprefix("http://")

    def uri(self, path: str) -> str:
        """``s3://path`` (``bucket/key``) for ``pyarrow.fs.FileSystem.from_uri``, pointed at
        this store; the key pair comes from the environment (:meth:`client_env`)."""
        override = quote(self.address, safe="")
        return f"s3://{path}?endpoint_override={override}&scheme=http&region={self.region}"

    def client_env(self) -> dict[str, str]:
        """Environment variables under which AWS clients (pyarrow's) use this store's key pair
        and region, and never ask the EC2 instance metadata service for either."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def requests(self) -> list[Request]:
        """The requests this run of the server has logged so far."""
        return read_requests(self.log, self.log_start)

    def gets(self, path: str | None = None) -> Gets:
        """:func:`split_gets` of :meth:`requests`."""
        return split_gets(self.requests(), path)


def _answers(port: int) -> bool:
    """Whether a versitygw answers ``GET /health`` with 200 on ``port``."""
    if not ports.accepts(HOST, port):
        return False
    conn = http.client.HTTPConnection(HOST, port, timeout=2.0)
    try:
        conn.request("GET", HEALTH_PATH)
        response = conn.getresponse()
        response.read()
        server = response.getheader("Server") or ""
        return response.status == 200 and server.upper() == "VERSITYGW"
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def _failure(child: sessions.Child, what: str) -> ObjectStoreError:
    tail = sessions.last_lines(child.new_output(), _LOG_LINES)
    return ObjectStoreError(f"{what} (log: {child.log}):\n{tail}")


def _await_ready(child: sessions.Child, port: int, deadline: float) -> bool:
    """True once the server answers; False if it lost its port; raises if it exits otherwise
    or the deadline passes."""
    return child.await_ready(
        lambda: _answers(port),
        deadline=deadline,
        lost_port=_BIND_FAILURE,
        fail=lambda what: _failure(child, what),
        silence=f"answer on {HOST}:{port}",
        poll=0.05,
    )


@contextlib.contextmanager
def object_store(
    binary: Path,
    workdir: Path,
    *,
    access_key: str = DEFAULT_ACCESS_KEY,
    secret_key: str = DEFAULT_SECRET_KEY,
    ready_timeout: float = 30.0,
) -> Iterator[ObjectStore]:
    """Run versitygw (``binary``) over ``workdir/data``, logging to
    ``workdir/versitygw.log``, until the block ends; yields the running store."""
    binary, workdir = Path(os.path.abspath(binary)), Path(os.path.abspath(workdir))
    root = workdir / "data"
    root.mkdir(parents=True, exist_ok=True)
    log = workdir / "versitygw.log"
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(workdir),
        "ROOT_ACCESS_KEY_ID": access_key,
        "ROOT_SECRET_ACCESS_KEY": secret_key,
    }
    started: list[sessions.Child] = []
    with sessions.sigterm_guarded():
        try:
            deadline = time.monotonic() + ready_timeout
            for attempt in range(1, PORT_ATTEMPTS + 1):
                port = ports.free_port(HOST)
                cmd = [
                    str(binary),
                    "--region",
                    REGION,
                    "--port",
                    f"{HOST}:{port}",
                    "--health",
                    HEALTH_PATH,
                    "posix",
                    str(root),
                ]
                child = sessions.Child("versitygw", cmd, env, log, cwd=workdir)
                started.append(child)
                if _await_ready(child, port, deadline):
                    break
                if attempt == PORT_ATTEMPTS:
                    raise _failure(child, f"versitygw lost {PORT_ATTEMPTS} port races")
            yield ObjectStore(
                endpoint=f"http://{HOST}:{port}",
                access_key=access_key,
                secret_key=secret_key,
                root=root,
                log=log,
                pid=child.pid,
                log_start=child.log_start,
            )
        finally:
            sessions.uninterrupted(lambda: sessions.terminate(started, grace=STOP_GRACE))
