"""The socket edge of the kit's client: one TCP connection to one broker, driving a sans-IO
:class:`~conformance.client.connection.Connection`, every wait bounded.

* connecting takes at most ``connect_timeout`` seconds; a refusal, a name that does not
  resolve and a timeout are each a :class:`ConnectError` with the reason in one line;
* a whole answer must arrive within ``timeout`` seconds of the request (not per read: a
  broker sending one byte a second ends in ``timeout``, a :class:`AnswerTimeoutError`);
* at most ``max_frame`` bytes of one answer are held (``Connection``'s bound);
* any failure closes the socket: the connection's state is then unknown, the next request
  opens a new one (and negotiates again).

:meth:`BrokerConnection.negotiate` runs ApiVersions as Java's ``NetworkClient`` does
(``client.negotiation``) on each new socket before the first other request.

:data:`WIRE_ERRORS` is every exception a broker can make the edge raise: a caller that
judges a broker catches them and gives the cases a verdict.
"""

from __future__ import annotations

import socket
import time

from conformance.client.connection import (
    CLOSED,
    DEFAULT_MAX_FRAME,
    NEED_DATA,
    Answer,
    Connection,
    ConnectionClosedError,
    ProtocolError,
    Sent,
)
from conformance.client.negotiation import (
    BrokerVersions,
    NegotiationError,
    Retry,
    api_versions_request,
    read_api_versions,
)
from conformance.client.protocol import Protocol
from conformance.host.lifetime import Closing
from conformance.messages.protocol import API_VERSIONS
from conformance.messages.value import Message

__all__ = [
    "WIRE_ERRORS",
    "AnswerTimeoutError",
    "BrokerConnection",
    "ConnectError",
    "WireError",
    "address_text",
    "answer_timeout",
    "one_line",
    "use_answer_timeout",
]

#: seconds to connect, and for a whole answer by default (Kafka's ``request.timeout.ms`` is
#: 30 s); a command may choose another answer timeout for the whole process
#: (:func:`use_answer_timeout`: ``check-broker --timeout``)
CONNECT_TIMEOUT = 10.0
ANSWER_TIMEOUT = 40.0
_answer_timeout = [ANSWER_TIMEOUT]


def answer_timeout() -> float:
    """The seconds a connection made without a timeout of its own waits for an answer."""
    return _answer_timeout[0]


def use_answer_timeout(seconds: float) -> None:
    """Every connection made from now on without a timeout of its own waits ``seconds``."""
    if not seconds > 0:
        raise ValueError(f"an answer timeout is a positive number of seconds, not {seconds!r}")
    _answer_timeout[0] = float(seconds)


#: the most bytes one ``recv`` asks for
_CHUNK = 1 << 20


class WireError(Exception):
    """The edge could not reach the broker or hear its answer (one-line reason)."""


class ConnectError(WireError):
    """No connection to the broker."""


class AnswerTimeoutError(WireError):
    """No whole answer in time."""


#: every exception a broker can cause at the edge (what a judging caller catches)
WIRE_ERRORS: tuple[type[Exception], ...] = (WireError, ProtocolError, NegotiationError)


def one_line(exc: BaseException) -> str:
    """An exception as one line of printable text: the edge's own errors by their message,
    others with their class (a control character or a newline of a broker's text escaped)."""
    text = str(exc) if isinstance(exc, WIRE_ERRORS) else f"{type(exc).__name__}: {exc}"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in first)[:500]


def address_text(address: tuple[str, int]) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class BrokerConnection(Closing):
    """One connection to the broker at ``address`` (opened on first use)."""

    def __init__(
        self,
        address: tuple[str, int],
        protocol: Protocol,
        *,
        client_id: str | None = "kafka-conformance",
        timeout: float | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        max_frame: int = DEFAULT_MAX_FRAME,
        negotiate: bool = True,
    ) -> None:
        self.address = (str(address[0]), int(address[1]))
        self.protocol = protocol
        self.client_id = client_id
        self.timeout = answer_timeout() if timeout is None else timeout
        self.connect_timeout = connect_timeout
        self.max_frame = max_frame
        self.negotiates = negotiate
        self.sock: socket.socket | None = None
        self.state: Connection | None = None
        #: what the broker said it speaks (after :meth:`negotiate`)
        self.versions: BrokerVersions | None = None
        self._next_id = 1

    # ------------------------------------------------------------------ the socket
    def _open(self) -> None:
        where = address_text(self.address)
        try:
            self.sock = socket.create_connection(self.address, timeout=self.connect_timeout)
        except ConnectionRefusedError:
            raise ConnectError(f"connection refused by {where}") from None
        except TimeoutError:
            raise ConnectError(
                f"no connection to {where} within {self.connect_timeout:g} s"
            ) from None
        except socket.gaierror as exc:
            raise ConnectError(f"cannot resolve {self.address[0]!r}: {exc.strerror}") from None
        except OSError as exc:
            raise ConnectError(f"cannot connect to {where}: {exc.strerror or exc}") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.state = Connection(
            self.protocol,
            self.client_id,
            max_frame=self.max_frame,
            first_correlation_id=self._next_id,
        )
        if self.negotiates:
            try:
                self.versions = self._negotiate()
            except BaseException:
                self.close()
                raise

    def close(self) -> None:
        if self.state is not None:
            self._next_id = self.state._next_id  # ids go on across reconnections
        sock, self.sock, self.state = self.sock, None, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    @property
    def is_open(self) -> bool:
        return self.sock is not None

    # ------------------------------------------------------------------ requests
    def negotiate(self) -> BrokerVersions:
        """The broker's versions (opening the connection, which negotiates, if needed)."""
        if self.sock is None:
            self._open()
        if self.versions is None:
            self.versions = self._negotiate()
        return self.versions

    def _negotiate(self) -> BrokerVersions:
        version, body = api_versions_request(self.protocol)
        for _ in range(3):
            answer = self._exchange(API_VERSIONS, version, body)
            if answer is None:
                raise NegotiationError(
                    f"{address_text(self.address)} closed the connection on ApiVersions v{version}"
                )
            got = read_api_versions(self.protocol, version, answer.read_version, answer.body)
            if isinstance(got, BrokerVersions):
                return got
            assert isinstance(got, Retry)
            version, body = api_versions_request(self.protocol, got.version)
        raise NegotiationError("ApiVersions asked to retry more than twice")

    def send(self, api: str | int, version: int, body: Message) -> tuple[Sent, Answer | None]:
        """Send one request and wait for its answer; (the request, its answer or None when
        the broker closed the connection before answering: how a broker refuses a request
        it cannot read). Any other failure raises one of :data:`WIRE_ERRORS` and closes the
        connection."""
        if self.sock is None:
            self._open()
        assert self.state is not None
        sent = self.state.send(api, version, body)
        return sent, self._complete(sent)

    def request(self, api: str | int, version: int, body: Message) -> Answer:
        """:meth:`send`, where a closed connection is an error too."""
        sent, answer = self.send(api, version, body)
        if answer is None:
            raise ConnectionClosedError(
                f"{address_text(self.address)} closed the connection on "
                f"{self.protocol.name(sent.api_key)} v{sent.version}"
            )
        return answer

    def _exchange(self, api: str | int, version: int, body: Message) -> Answer | None:
        assert self.state is not None
        return self._complete(self.state.send(api, version, body))

    def _complete(self, sent: Sent) -> Answer | None:
        assert self.sock is not None and self.state is not None
        deadline = time.monotonic() + self.timeout
        what = f"{self.protocol.name(sent.api_key)} v{sent.version}"
        try:
            self._write(sent.data, deadline, what)
            while True:
                try:
                    event = self.state.next_event()
                except ConnectionClosedError:
                    if not self._partial():  # closed before answering: a refusal
                        self.close()
                        return None
                    raise
                if isinstance(event, Answer):
                    return event
                if event is CLOSED:
                    raise ConnectionClosedError(
                        f"{address_text(self.address)} closed the connection on {what}"
                    )
                assert event is NEED_DATA
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AnswerTimeoutError(
                        f"no whole answer to {what} from {address_text(self.address)} "
                        f"within {self.timeout:g} s"
                    )
                self.sock.settimeout(left)
                try:
                    data = self.sock.recv(max(1, min(self.state.wanted, _CHUNK)))
                except TimeoutError:
                    continue
                except ConnectionResetError:
                    data = b""
                except OSError as exc:
                    raise WireError(
                        f"{address_text(self.address)}: {what}: {exc.strerror or exc}"
                    ) from None
                self.state.receive_data(data)
        except BaseException:
            self.close()
            raise

    def _partial(self) -> bool:
        """Whether part of an answer frame was received before the connection closed."""
        assert self.state is not None
        return bool(self.state._buffer)

    def _write(self, data: bytes, deadline: float, what: str) -> None:
        assert self.sock is not None
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AnswerTimeoutError(
                    f"{address_text(self.address)} did not take {what} within {self.timeout:g} s"
                )
            self.sock.settimeout(left)
            try:
                n = self.sock.send(view)
            except TimeoutError:
                continue
            except OSError as exc:
                if isinstance(exc, BrokenPipeError | ConnectionResetError):
                    # the broker closed the connection before reading it all: what it
                    # answers (nothing) is read below
                    if self.state is not None:
                        self.state.receive_data(b"")
                    return
                raise WireError(
                    f"{address_text(self.address)}: {what}: {exc.strerror or exc}"
                ) from None
            view = view[n:]
