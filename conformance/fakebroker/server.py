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
retry with a version it shares.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from conformance.errors import DecodeError, KafkaError
from conformance.fakebroker.handlers import Handlers, Served
from conformance.host.lifetime import Service
from conformance.messages.protocol import FRAME_SIZE, frame_size, read_request, write_response

__all__ = ["MAX_REQUEST_BYTES", "FakeBroker"]

#: ``socket.request.max.bytes`` (Kafka's default, 100 MiB)
MAX_REQUEST_BYTES = 100 * 1024 * 1024
#: how long a stopped broker waits for its threads
_JOIN_SECONDS = 5.0


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
    ) -> None:
        self.served = served
        self.host = host
        self.on_request = on_request
        #: (api key, version) of every request read, in arrival order
        self.seen: list[tuple[int, int]] = []
        self.errors: list[str] = []
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
        for t in list(self._threads):
            if t is not threading.current_thread():
                t.join(_JOIN_SECONDS)

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._connections)

    # -- threads ------------------------------------------------------------------------------
    def _spawn(self, target: Callable[..., None], name: str, *args: object) -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._threads = [x for x in self._threads if x.is_alive()]
            self._threads.append(t)
        t.start()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self._stopping.is_set():
                    _close(conn)
                    return
                self._connections.add(conn)
            self._spawn(self._serve, "fakebroker-conn", conn)

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
                    self.errors.append(f"request size {size} refused")
                    return
                payload = _recv_exactly(conn, size)
                if payload is None:
                    return
                request = read_request(schemas, payload)
                with self._lock:
                    self.seen.append((request.api_key, request.api_version))
                if self.on_request is not None:
                    self.on_request(request.api_key, request.api_version, request.client_id)
                answer = self._handlers.answer(request)
                if answer is None:  # not answerable: the connection is closed
                    self.errors.append(f"no answer to {request.body_error or request.api_key}")
                    return
                api_version, body, cut = answer
                data = write_response(
                    schemas, request.api_key, api_version, request.correlation_id, body
                )
                if cut is not None:  # a fault: part of the response, then the connection drops
                    conn.sendall(data[:cut])
                    return
                conn.sendall(data)
        except (OSError, DecodeError, KafkaError) as e:
            if not self._stopping.is_set():
                self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            with self._lock:
                self._connections.discard(conn)
            _close(conn)


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
