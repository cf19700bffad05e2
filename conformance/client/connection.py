"""One client connection to a broker, sans-IO (h11's shape): requests in, bytes out; bytes in,
answers out. The socket is the caller's (``host.broker_socket``).

======================  ===========================================================
request frame           ``int32 size`` + request header (v1, or v2 for a flexible
                        version: + tagged fields) + body
answer frame            ``int32 size`` + response header (v0, or v1 for a flexible
                        version: + tagged fields; ApiVersions always v0) + body
======================  ===========================================================

A broker answers the requests of one connection in the order it received them, so an answer
must carry the correlation id of the oldest request in flight; anything else is a
:class:`CorrelationError`. Every read is bounded: a frame size outside ``0..max_frame`` is a
:class:`FrameSizeError` as soon as its 4 bytes are in (nothing of it is buffered), so a
``2**31-1`` size costs nothing; bytes that do not read as the answer's definition are a
:class:`MalformedAnswerError` (the reason in one line). An ApiVersions answer that does not
read at the version asked is read at v0, as Java's ``ApiVersionsResponse.parse`` does: a
broker answers an ApiVersions version it does not know with v0 and UNSUPPORTED_VERSION.

Events of :meth:`Connection.next_event`: an :class:`Answer`, :data:`NEED_DATA` (feed more with
:meth:`Connection.receive_data`), or :data:`CLOSED` (the broker closed the connection with
nothing in flight); the broker closing it with a request in flight is a
:class:`ConnectionClosedError`.
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass
from typing import Final

from conformance.client.protocol import Protocol, UnknownApiError, build
from conformance.errors import DecodeError, EncodeError
from conformance.messages.message import read_message_at, write_message
from conformance.messages.protocol import (
    API_VERSIONS,
    FRAME_SIZE,
    request_header_version,
    response_header_version,
)
from conformance.messages.value import Message

__all__ = [
    "CLOSED",
    "DEFAULT_MAX_FRAME",
    "NEED_DATA",
    "Answer",
    "ConnectionClosedError",
    "Connection",
    "CorrelationError",
    "FrameSizeError",
    "MalformedAnswerError",
    "ProtocolError",
    "RequestFrame",
    "Sent",
    "read_answer_at",
    "read_answer_body",
    "read_answer_frame",
    "read_request_frame",
]

#: the largest answer frame a connection takes by default (a Fetch of 1 MiB per partition
#: and in all, with headroom; Kafka's own ``socket.request.max.bytes`` is 100 MiB)
DEFAULT_MAX_FRAME = 64 << 20
_SIZE = struct.Struct(">i")


class ProtocolError(Exception):
    """The broker's bytes are not an answer the connection can take (one-line reason)."""


class FrameSizeError(ProtocolError):
    """An answer frame announced a size outside ``0..max_frame``."""


class CorrelationError(ProtocolError):
    """An answer whose correlation id is not the oldest request's in flight."""


class MalformedAnswerError(ProtocolError):
    """An answer frame that does not read as its definition."""


class ConnectionClosedError(ProtocolError):
    """The broker closed the connection with a request in flight."""


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NEED_DATA: Final = _Marker("NEED_DATA")
CLOSED: Final = _Marker("CLOSED")


@dataclass(frozen=True)
class Sent:
    """A request written (:meth:`Connection.send`): what it asked and the bytes to send."""

    api_key: int
    version: int
    correlation_id: int
    #: the whole frame, size prefix included
    data: bytes
    expects_answer: bool = True

    @property
    def frame(self) -> bytes:
        """The request frame without its size prefix (as a recording proxy keeps it)."""
        return self.data[FRAME_SIZE:]


@dataclass(frozen=True)
class Answer:
    """One answer: the request it answers, the body read, the frame as received."""

    request: Sent
    body: Message
    #: the answer frame without its size prefix
    frame: bytes
    #: the version the body was read at (v0 for an ApiVersions fallback)
    read_version: int

    @property
    def api_key(self) -> int:
        return self.request.api_key

    @property
    def version(self) -> int:
        return self.request.version


class Connection:
    """The state of one connection: the requests in flight and the bytes received."""

    def __init__(
        self,
        protocol: Protocol,
        client_id: str | None = "kafka-conformance",
        *,
        max_frame: int = DEFAULT_MAX_FRAME,
        first_correlation_id: int = 1,
    ) -> None:
        self.protocol = protocol
        self.client_id = client_id
        self.max_frame = max_frame
        self._next_id = first_correlation_id
        self._in_flight: deque[Sent] = deque()
        self._buffer = bytearray()
        self._eof = False

    def send(
        self, api: str | int, version: int, body: Message, *, expects_answer: bool = True
    ) -> Sent:
        """The frame of a request of ``api`` at ``version`` (the next correlation id);
        ``expects_answer`` False for a Produce with acks 0. Raises :class:`UnknownApiError`
        or :class:`~conformance.errors.EncodeError` for a request the definitions cannot
        write."""
        key = self.protocol.key(api)
        schema = self.protocol.request(key, version)
        header_schema = self.protocol.header[0]
        corr = self._next_id
        self._next_id = (self._next_id + 1) & 0x7FFFFFFF
        header = build(
            header_schema.struct,
            request_header_version(schema, version),
            {
                "RequestApiKey": key,
                "RequestApiVersion": version,
                "CorrelationId": corr,
                "ClientId": self.client_id,
            },
        )
        try:
            head = write_message(header_schema, request_header_version(schema, version), header)
            payload = head + write_message(schema, version, body)
        except DecodeError as exc:  # addSize/write's own exceptions (a null where none fits)
            raise EncodeError(f"{schema.name} v{version}: {exc}") from None
        sent = Sent(key, version, corr, _SIZE.pack(len(payload)) + payload, expects_answer)
        if expects_answer:
            self._in_flight.append(sent)
        return sent

    def receive_data(self, data: bytes) -> None:
        """Bytes read from the socket; ``b""`` is the end of the connection."""
        if not data:
            self._eof = True
        else:
            self._buffer += data

    @property
    def wanted(self) -> int:
        """How many more bytes the next event needs at least (0: it can be made now)."""
        if len(self._buffer) < FRAME_SIZE:
            return FRAME_SIZE - len(self._buffer)
        (size,) = _SIZE.unpack_from(self._buffer)
        return max(0, FRAME_SIZE + size - len(self._buffer))

    def next_event(self) -> Answer | _Marker:
        """The next answer, :data:`NEED_DATA` or :data:`CLOSED` (see the module docstring)."""
        if len(self._buffer) >= FRAME_SIZE:
            (size,) = _SIZE.unpack_from(self._buffer)
            if size < 0 or size > self.max_frame:
                raise FrameSizeError(
                    f"the broker announced an answer of {size} bytes "
                    f"(the connection takes 0..{self.max_frame})"
                )
            if len(self._buffer) >= FRAME_SIZE + size:
                frame = bytes(self._buffer[FRAME_SIZE : FRAME_SIZE + size])
                del self._buffer[: FRAME_SIZE + size]
                return self._answer(frame)
        if not self._eof:
            return NEED_DATA
        if self._in_flight:
            where = "inside an answer" if self._buffer else "before answering"
            sent = self._in_flight[0]
            raise ConnectionClosedError(
                f"the broker closed the connection {where} "
                f"({self.protocol.name(sent.api_key)} v{sent.version})"
            )
        if self._buffer:
            raise ConnectionClosedError(
                f"the broker closed the connection after {len(self._buffer)} stray bytes"
            )
        return CLOSED

    def _answer(self, frame: bytes) -> Answer:
        if len(frame) < 4:
            raise MalformedAnswerError(f"an answer frame of {len(frame)} bytes has no header")
        (corr,) = _SIZE.unpack_from(frame)
        if not self._in_flight:
            raise CorrelationError(f"an answer (correlation id {corr}) to no request")
        sent = self._in_flight[0]
        if corr != sent.correlation_id:
            raise CorrelationError(
                f"an answer with correlation id {corr} where {sent.correlation_id} "
                f"({self.protocol.name(sent.api_key)} v{sent.version}) was due"
            )
        self._in_flight.popleft()
        try:
            body, version = self._read(sent, frame)
        except (DecodeError, UnknownApiError, ValueError) as exc:
            what = f"{self.protocol.name(sent.api_key)} v{sent.version}"
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise MalformedAnswerError(f"the answer to {what} does not read: {reason}") from None
        return Answer(sent, body, frame, version)

    def _read(self, sent: Sent, frame: bytes) -> tuple[Message, int]:
        return read_answer_at(self.protocol, sent.api_key, sent.version, frame)


def read_answer_at(
    protocol: Protocol, api_key: int, version: int, frame: bytes
) -> tuple[Message, int]:
    """(body, the version it was read at) of an answer frame (without its size prefix) to a
    request of ``api_key`` at ``version``: an ApiVersions answer that does not read at that
    version is read at v0 (see the module docstring). Raises
    :class:`~conformance.errors.DecodeError` for bytes that do not read."""
    schema = protocol.response(api_key, version)
    header_schema = protocol.header[1]
    _, pos = read_message_at(header_schema, response_header_version(schema, version), frame, 0)
    try:
        body, _ = read_message_at(schema, version, frame, pos)
        return body, version
    except DecodeError:
        if api_key != API_VERSIONS or version == 0:
            raise
    body, _ = read_message_at(protocol.response(API_VERSIONS, 0), 0, frame, pos)
    return body, 0


def read_answer_body(
    protocol: Protocol, api_key: int, version: int, frame: bytes
) -> tuple[Message, int]:
    """(body, where the body starts: the header's size) of an answer frame read at
    ``version`` exactly (no fallback): what a rewriting proxy writes back."""
    schema = protocol.response(api_key, version)
    header_schema = protocol.header[1]
    _, pos = read_message_at(header_schema, response_header_version(schema, version), frame, 0)
    body, _ = read_message_at(schema, version, frame, pos)
    return body, pos


def read_answer_frame(protocol: Protocol, api_key: int, version: int, frame: bytes) -> Message:
    """The body of an answer frame (a recorded one: ``frame`` without its size prefix)."""
    return read_answer_at(protocol, api_key, version, frame)[0]


@dataclass(frozen=True)
class RequestFrame:
    """A request frame as read back (a recording proxy's)."""

    api_key: int
    version: int
    correlation_id: int
    client_id: str | None
    body: Message


def read_request_frame(protocol: Protocol, frame: bytes) -> RequestFrame:
    """A request frame (without its size prefix) read with the definitions; raises
    :class:`~conformance.errors.DecodeError` or :class:`UnknownApiError`."""
    if len(frame) < 8:
        raise DecodeError(f"a request header needs 8 bytes, got {len(frame)}")
    api_key, version = struct.unpack_from(">hh", frame)
    schema = protocol.request(api_key, version)
    header_schema = protocol.header[0]
    header, pos = read_message_at(header_schema, request_header_version(schema, version), frame, 0)
    body, _ = read_message_at(schema, version, frame, pos)
    return RequestFrame(api_key, version, int(header["CorrelationId"]), header["ClientId"], body)
