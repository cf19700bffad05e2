"""The broker's answer to one partition of a Produce request, and its canonical JSON.

``response`` is what the client reads in the ProduceResponse for the partition; ``exception``
the Java exception behind an error; ``stored`` the bytes the broker appended (the batch with
its rewrites, or the rebuilt batch), so what the broker changed can be compared byte for
byte::

    {"format": "kafka-conformance/produce/1", "broker": "3.9.2", "produceVersion": 9,
     "scope": "partition" | "request",
     "response": {"errorCode": 87, "errorName": "INVALID_RECORD", "errorMessage": null,
                  "baseOffset": "-1", "logAppendTimeMs": "-1", "logStartOffset": "0",
                  "recordErrors": [{"batchIndex": 0, "batchIndexErrorMessage": "..."}]},
     "exception": {"class": "org.apache.kafka.common.InvalidRecordException",
                   "message": "..."} | null,
     "stored": "<base64>" | null,
     "rebuilt": null | "recompressed gzip -> zstd" | ...,
     "rewrites": [{"field": "baseOffset", "from": "0", "to": "3"}, ...]}

``rebuilt`` and ``rewrites`` describe ``stored`` (derived from it and the request, for
people: the broker oracle reports ``stored`` only): why a batch was rebuilt, or the header
fields an in-place append changed (``baseOffset``, ``partitionLeaderEpoch``,
``maxTimestamp``, ``timestampType``, ``attributes``, ``crc``).

``scope`` is ``request`` when the failure is not the partition's: an exception escaping the
request-level checks fails the whole Produce request (UNKNOWN_SERVER_ERROR), and a Produce
version the broker does not speak is refused (UNSUPPORTED_VERSION). 64-bit numbers are
decimal strings, as in docs/canonical-json.md; ``stored`` is standard base64.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from conformance.broker.codes import CODES, NONE
from conformance.errors import DecodeError
from conformance.jsondoc import JsonDocument

__all__ = ["FORMAT", "PartitionResponse", "ProduceVerdict"]

#: the ``format`` member of a produce verdict
FORMAT = "kafka-conformance/produce/1"


@dataclass(frozen=True)
class PartitionResponse(JsonDocument):
    """``ProduceResponse.PartitionResponse`` as the client receives it."""

    error: str = NONE
    error_message: str | None = None
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    #: ``(batch index, message)`` of every failing record (KIP-467)
    record_errors: tuple[tuple[int, str | None], ...] = ()

    @property
    def error_code(self) -> int:
        return CODES[self.error]

    def to_dict(self) -> dict[str, Any]:
        return {
            "errorCode": self.error_code,
            "errorName": self.error,
            "errorMessage": self.error_message,
            "baseOffset": str(self.base_offset),
            "logAppendTimeMs": str(self.log_append_time),
            "logStartOffset": str(self.log_start_offset),
            "recordErrors": [
                {"batchIndex": i, "batchIndexErrorMessage": m} for i, m in self.record_errors
            ],
        }


@dataclass(frozen=True)
class ProduceVerdict(JsonDocument):
    """What the broker answers, and what it stored (``stored``: None when nothing)."""

    broker: str
    produce_version: int
    response: PartitionResponse
    exception: DecodeError | None = None
    stored: bytes | None = None
    scope: str = "partition"
    #: the stored batch is a duplicate's original (an idempotent retry): nothing was appended
    duplicate: bool = field(default=False, compare=False)
    #: why the stored batch was rebuilt (None: stored in place, or nothing stored)
    rebuilt: str | None = None
    #: ``(field, before, after)`` of the header fields an in-place append rewrote
    rewrites: tuple[tuple[str, str, str], ...] = ()

    @property
    def accepted(self) -> bool:
        return self.response.error == NONE

    @property
    def error(self) -> str:
        return self.response.error

    def to_dict(self) -> dict[str, Any]:
        e = self.exception
        return {
            "format": FORMAT,
            "broker": self.broker,
            "produceVersion": self.produce_version,
            "scope": self.scope,
            "response": self.response.to_dict(),
            "exception": None if e is None else {"class": e.kafka_exception, "message": e.message},
            "stored": None if self.stored is None else base64.b64encode(self.stored).decode(),
            "rebuilt": self.rebuilt,
            "rewrites": [{"field": f, "from": a, "to": b} for f, a, b in self.rewrites],
        }
