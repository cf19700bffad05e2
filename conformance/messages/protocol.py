"""Kafka's request/response framing: size-prefixed frames, request and response headers, the
header version of each API version (sans-IO; the definitions come from the caller).

=================  ================================================================
frame              ``int32 size`` + ``size`` bytes (header, then body)
request header v0  ``int16 api_key, int16 api_version, int32 correlation_id``
request header v1  + ``nullable string client_id`` (never compact)
request header v2  + tagged fields (a flexible request version)
response header 0  ``int32 correlation_id``
response header 1  + tagged fields (a flexible response version; never ApiVersions)
=================  ================================================================

Header versions as ``ApiKeys.requestHeaderVersion`` / ``responseHeaderVersion`` decide them:
a flexible version (the definition's ``flexibleVersions``) uses request header 2 and response
header 1, other versions 1 and 0; ControlledShutdown v0 uses request header 0; an
ApiVersions response is always header 0 (a client reads it before it knows the broker's
versions).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from conformance.errors import DecodeError
from conformance.messages.message import read_message_at, write_message
from conformance.messages.schema import MessageSchema, Schemas
from conformance.messages.value import Message

__all__ = [
    "API_VERSIONS",
    "CONTROLLED_SHUTDOWN",
    "FRAME_SIZE",
    "Request",
    "Response",
    "frame",
    "frame_size",
    "read_request",
    "read_response",
    "request_header_version",
    "response_header_version",
    "write_request",
    "write_response",
]

API_VERSIONS = 18
CONTROLLED_SHUTDOWN = 7
#: bytes of the size prefix of a frame
FRAME_SIZE = 4
_HEAD = struct.Struct(">hhi")


def request_header_version(request: MessageSchema, version: int) -> int:
    """``ApiKeys.requestHeaderVersion``."""
    if request.api_key == CONTROLLED_SHUTDOWN and version == 0:
        return 0
    return 2 if version in request.flexible_versions else 1


def response_header_version(response: MessageSchema, version: int) -> int:
    """``ApiKeys.responseHeaderVersion``."""
    if response.api_key == API_VERSIONS:
        return 0
    return 1 if version in response.flexible_versions else 0


def frame(payload: bytes) -> bytes:
    """``payload`` with its size prefix."""
    return struct.pack(">i", len(payload)) + payload


def frame_size(prefix: bytes) -> int:
    """The size a frame's 4-byte prefix announces (may be negative: the caller refuses it)."""
    if len(prefix) != FRAME_SIZE:
        raise DecodeError(f"a frame size is {FRAME_SIZE} bytes, not {len(prefix)}")
    return int(struct.unpack(">i", prefix)[0])


@dataclass
class Request:
    """One request: its header fields, the definition and version, and the body (None when
    the broker does not know the API or the version: ``body_error`` says why)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    schema: MessageSchema | None
    body: Message | None
    body_error: str | None = None


@dataclass
class Response:
    correlation_id: int
    body: Message


def read_request(schemas: Schemas, payload: bytes) -> Request:
    """A request frame's payload (without the size prefix) -> :class:`Request`.

    The header's first 8 bytes are always read (``DecodeError`` when shorter); an API key or
    version the definitions do not have leaves ``body`` None (a broker answers an unknown
    ApiVersions version with v0 and UNSUPPORTED_VERSION, and closes the connection for
    others); a body that does not read raises ``DecodeError``."""
    if len(payload) < _HEAD.size:
        raise DecodeError(f"a request header needs {_HEAD.size} bytes, got {len(payload)}")
    api_key, version, correlation_id = _HEAD.unpack_from(payload)
    found = schemas.find_all(api_key, "request")
    schema = found[0] if len(found) == 1 else None
    if schema is None or version not in schema.valid_versions:
        what = f"API key {api_key}" if schema is None else f"{schema.name} v{version}"
        client_id = _client_id(payload)
        return Request(api_key, version, correlation_id, client_id, schema, None, f"no {what}")
    header_schema = schemas["RequestHeader"]
    header, pos = read_message_at(
        header_schema, request_header_version(schema, version), payload, 0
    )
    client_id = header["ClientId"] if "ClientId" in header.values else None
    body, _ = read_message_at(schema, version, payload, pos)
    return Request(api_key, version, correlation_id, client_id, schema, body)


def _client_id(payload: bytes) -> str | None:
    """The client id of a v1+ header that could not be read with its definition, if any."""
    if len(payload) < _HEAD.size + 2:
        return None
    (n,) = struct.unpack_from(">h", payload, _HEAD.size)
    raw = payload[_HEAD.size + 2 : _HEAD.size + 2 + n] if n >= 0 else None
    return raw.decode("utf-8", "replace") if raw is not None else None


def write_response(
    schemas: Schemas, api_key: int, version: int, correlation_id: int, body: Message
) -> bytes:
    """A whole response frame (size prefix, header, body) for a request of ``api_key`` at
    ``version``."""
    schema = schemas.response(api_key)
    header_schema = schemas["ResponseHeader"]
    header = Message(header_schema.struct, CorrelationId=correlation_id)
    head = write_message(header_schema, response_header_version(schema, version), header)
    return frame(head + write_message(schema, version, body))


def write_request(
    schemas: Schemas,
    api_key: int,
    version: int,
    correlation_id: int,
    body: Message,
    client_id: str | None = "kafka-conformance",
) -> bytes:
    """A whole request frame (the client side: tests and probes)."""
    schema = schemas.request(api_key)
    header_schema = schemas["RequestHeader"]
    header = Message(
        header_schema.struct,
        RequestApiKey=api_key,
        RequestApiVersion=version,
        CorrelationId=correlation_id,
        ClientId=client_id,
    )
    head = write_message(header_schema, request_header_version(schema, version), header)
    return frame(head + write_message(schema, version, body))


def read_response(schemas: Schemas, api_key: int, version: int, payload: bytes) -> Response:
    """A response frame's payload (without the size prefix) for a request of ``api_key`` at
    ``version``."""
    schema = schemas.response(api_key)
    header_schema = schemas["ResponseHeader"]
    header, pos = read_message_at(
        header_schema, response_header_version(schema, version), payload, 0
    )
    body, _ = read_message_at(schema, version, payload, pos)
    return Response(header["CorrelationId"], body)
