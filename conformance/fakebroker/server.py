"""The fake broker's server: a Kafka protocol listener on 127.0.0.1 serving one partition.

One thread accepts, one thread per connection reads a request frame, answers it and reads the
next (a client's pipelined requests are answered in order, as a broker does per connection).
Every socket and thread it starts is closed and joined by :meth:`FakeBroker.stop` (also on
``with`` exit, errors and Ctrl-C). What each API answers is ``handlers.py``'s business; this
module only frames, dispatches and records what clients asked (:attr:`FakeBroker.seen`).

A request the broker cannot read (a size beyond :data:`MAX_REQUEST_BYTES`, a header or body
that does not parse, an API or version it does not claim) closes the connection, as Kafka's
``SocketServer`` does, except ApiVersions at a version it does not know: that is answered
with v0 and UNSUPPORTED_VERSION (``ApiVersionsRequest.getErrorResponse``), so the client can
retry with a version it shares. A request naming more than :data:`MAX_REQUEST_ENTRIES`
entries (``Handlers.entries``) closes the connection too.

The bounds (docs/fake-broker.md, "Bounds"): at most :data:`MAX_CONNECTIONS` connections (one
more is accepted and closed at once; so is one whose thread cannot start), each thread with a
stack of :data:`THREAD_STACK_BYTES`; at most :data:`PARSING_AT_ONCE` requests parsed at a
time (a request costs ~160 times its size while it is parsed); :attr:`FakeBroker.seen` and
:attr:`FakeBroker.errors` stop growing at :data:`SEEN_LIMIT` and :data:`ERRORS_LIMIT`.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

from conformance.errors import DecodeError, EncodeError, KafkaError
from conformance.fakebroker.handlers import Handlers, Served
from conformance.host.lifetime import Service
from conformance.messages.protocol import FRAME_SIZE, frame_size, read_request, write_response

__all__ = ["MAX_CONNECTIONS", "MAX_REQUEST_BYTES", "MAX_REQUEST_ENTRIES", "FakeBroker"]

#: the largest request frame (Kafka's ``socket.request.max.bytes`` is 100 MiB): a consumer's
#: requests to a one-partition broker take well under 10 KB, a Fetch naming the partition
#: 2,000 times (v12) 66 KB; a request costs ~160 times its size while it is parsed
MAX_REQUEST_BYTES = 128 * 1024
#: the most entries a request may name (``Handlers.entries``: distinct partitions of a Fetch)
MAX_REQUEST_ENTRIES = 1000
#: the most connections open at once (Kafka's ``max.connections`` is unbounded)
MAX_CONNECTIONS = 1024
#: the stack of a connection's thread (the platform's default, 8 MiB, let ~350 threads start
#: under a 4 GiB address space)
THREAD_STACK_BYTES = 512 * 1024
#: requests parsed at once (parsing holds the GIL: more at once only costs memory)
PARSING_AT_ONCE = 2
#: ``seen`` keeps every request up to this many, then only (api, version) pairs not yet seen
SEEN_LIMIT = 10_000
#: ``errors`` keeps this many, then counts the others (``errors_dropped``)
ERRORS_LIMIT = 1_000
#: how long a stopped broker waits for all its threads together
_JOIN_SECONDS = 5.0
#: ``threading.stack_size`` is process-wide: set and restored around each start
_STACK_LOCK = threading.Lock()


class FakeBroker(Service):
    """A fake broker for ``served`` (:class:`~conformance.fakebroker.handlers.Served`).

    ``with FakeBroker(served) as broker:`` starts it; ``broker.bootstrap`` is
    ``"127.0.0.1:<port>"``. ``on_request`` (optional) is called with each request's API key,
    version and client id (progress, logs)."""

    def __init__(
        self,
        served: Served,
        *,
        host: str = "127.0.0.1",
        on_request: Callable[[int, int, str | None], None] | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.served = served
        self.host = host
        self.on_request = on_request
        self.max_connections = max_connections
        #: (api key, version) of the requests read, in arrival order: every one of the first
        #: :data:`SEEN_LIMIT`, then each pair not seen before
        self.seen: list[tuple[int, int]] = []
        self._seen_pairs: set[tuple[int, int]] = set()
        #: what went wrong (the first :data:`ERRORS_LIMIT`; ``errors_dropped`` counts the rest)
        self.errors: list[str] = []
        self.errors_dropped = 0
        #: connections closed at once: over ``max_connections``, or no thread to serve them
        self.refused = 0
        self._parsing = threading.BoundedSemaphore(PARSING_AT_ONCE)
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.port = 0
        self._handlers: Handlers | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeBroker:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((self.host, 0))
            listener.listen(64)
        except OSError:
            listener.close()
            raise
        self._listener = listener
        self.port = listener.getsockname()[1]
        self._handlers = Handlers(self.served, self.host, self.port, self._stopping)
        self._spawn(self._accept_loop, "fakebroker-accept")
        return self

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def stop(self) -> None:
        """Close the listener and every connection, join every thread (idempotent)."""
        self._stopping.set()
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            _close(conn)
        deadline = time.monotonic() + _JOIN_SECONDS
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            if t is not threading.current_thread() and t.ident is not None:  # started
                t.join(max(0.0, deadline - time.monotonic()))

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._connections)

    # -- threads ------------------------------------------------------------------------------
    def _error(self, text: str) -> None:
        with self._lock:
            if len(self.errors) < ERRORS_LIMIT:
                self.errors.append(text)
            else:
                self.errors_dropped += 1

    def _spawn(self, target: Callable[..., None], name: str, *args: object) -> None:
        """Start a thread (``RuntimeError`` when none can start: it is not kept)."""
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._threads = [x for x in self._threads if x.is_alive() or x.ident is None]
            self._threads.append(t)
        try:
            with _STACK_LOCK:
                previous = threading.stack_size(THREAD_STACK_BYTES)
                try:
                    t.start()
                finally:
                    threading.stack_size(previous)
        except BaseException:
            with self._lock:
                self._threads.remove(t)
            raise

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError as e:
                if self._stopping.is_set():
                    return
                self._error(f"accept: {e}")  # e.g. out of file descriptors: try again
                self._stopping.wait(0.05)
                continue
            with self._lock:
                if self._stopping.is_set():
                    _close(conn)
                    return
                full = len(self._connections) >= self.max_connections
                if not full:
                    self._connections.add(conn)
            if full:
                self.refused += 1
                _close(conn)
                continue
            try:
                self._spawn(self._serve, "fakebroker-conn", conn)
            except (RuntimeError, MemoryError) as e:  # "can't start new thread"
                with self._lock:
                    self._connections.discard(conn)
                self.refused += 1
                self._error(f"connection refused: {e}")
                _close(conn)

    def _serve(self, conn: socket.socket) -> None:
        assert self._handlers is not None
        schemas = self.served.schemas
        try:
            while not self._stopping.is_set():
                prefix = _recv_exactly(conn, FRAME_SIZE)
                if prefix is None:
                    return
                size = frame_size(prefix)
                if size < 0 or size > MAX_REQUEST_BYTES:
                    self._error(f"request size {size} refused")
                    return
                payload = _recv_exactly(conn, size)
                if payload is None:
                    return
                with self._parsing:
                    request = read_request(schemas, payload)
                    del payload
                    entries = self._handlers.entries(request)
                if entries > MAX_REQUEST_ENTRIES:
                    self._error(f"a request naming {entries} entries refused")
                    return
                self._saw(request.api_key, request.api_version)
                if self.on_request is not None:
                    self.on_request(request.api_key, request.api_version, request.client_id)
                answer = self._handlers.answer(request)
                if answer is None:  # not answerable: the connection is closed
                    self._error(f"no answer to {request.body_error or request.api_key}")
                    return
                api_version, body, cut = answer
                data = write_response(
                    schemas, request.api_key, api_version, request.correlation_id, body
                )
                if cut is not None:  # a fault: part of the response, then the connection drops
                    conn.sendall(data[:cut])
                    return
                conn.sendall(data)
        except (OSError, DecodeError, EncodeError, KafkaError, MemoryError) as e:
            # EncodeError: an answer that cannot be written (the connection is closed)
            if not self._stopping.is_set():
                self._error(f"{type(e).__name__}: {e}")
        finally:
            with self._lock:
                self._connections.discard(conn)
            _close(conn)

    def _saw(self, api_key: int, version: int) -> None:
        pair = (api_key, version)
        with self._lock:
            if len(self.seen) < SEEN_LIMIT or pair not in self._seen_pairs:
                self.seen.append(pair)
            self._seen_pairs.add(pair)


def _recv_exactly(conn: socket.socket, n: int) -> bytes | None:
    """``n`` bytes, or None when the peer closes first."""
    chunks: list[bytes] = []
    left = n
    while left > 0:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _close(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()
