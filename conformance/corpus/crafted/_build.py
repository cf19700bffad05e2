"""Shared pieces of the crafted cases: the case record, the collector, deterministic data and the
byte builders the case modules use (v2 records/batches, legacy messages, control records)."""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from conformance import codecs
from conformance.primitives.crc import crc32, crc32c
from conformance.primitives.varint import encode_varint, encode_varlong
from conformance.wire.builder import seal_v2

TS = 1_700_000_000_000  # 2023-11-14T22:13:20Z, the spec's Appendix A timestamp
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
ATTR_LOG_APPEND_TIME = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40
AREAS = (
    "split-", "v2-", "rec-", "varint-", "hdr-", "ctl-", "legacy-",
    "gzip-", "snappy-", "lz4-", "zstd-", "codec-", "mixed-",
)
_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
BOTH = ("memory", "file")
MEMORY = ("memory",)


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    description: str
    data: bytes
    modes: tuple[str, ...]


def prand(n: int, seed: int = 0) -> bytes:
    """Deterministic incompressible bytes (sha256 in counter mode)."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(b"%d:%d" % (seed, i)).digest()
        i += 1
    return bytes(out[:n])


_WORDS = b"kafka record batch offset timestamp header value key snappy gzip lz4 zstd ".split()


def text(n: int, seed: int = 0) -> bytes:
    """Deterministic, compressible ASCII text."""
    r = prand(n // 4 + 1, seed)
    out = bytearray()
    i = 0
    while len(out) < n:
        out += _WORDS[r[i % len(r)] % len(_WORDS)] + b" "
        i += 1
    return bytes(out[:n])


def patch(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    """Overwrite ``struct.pack(fmt, value)`` at ``offset`` (no reseal)."""
    b = bytearray(data)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


def flip(data: bytes, offset: int, mask: int = 0x01) -> bytes:
    b = bytearray(data)
    b[offset] ^= mask
    return bytes(b)


def vbytes(b: bytes | None) -> bytes:
    """A varint-length-prefixed byte field; None -> length -1."""
    return encode_varint(-1) if b is None else encode_varint(len(b)) + b


def _hkey(k: str | bytes) -> bytes:
    return k.encode("utf-8") if isinstance(k, str) else k


def v2_record(
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    headers: Sequence[tuple[str | bytes, bytes | None]] = (),
    *,
    offset_delta: int = 0,
    timestamp_delta: int = 0,
    attributes: int = 0,
    header_count: int | None = None,
    length: int | bytes | None = None,
    body: bytes | None = None,
) -> bytes:
    """One v2 record (spec §3.4).

    ``length``: None = the true body length (minimal varint); an int = that value as a
    minimal varint; bytes = the raw length encoding. ``body``: raw bytes after the length
    (overrides every field argument).
    """
    if body is None:
        hs = b"".join(vbytes(_hkey(k)) + vbytes(v) for k, v in headers)
        body = (
            bytes([attributes & 0xFF])
            + encode_varlong(timestamp_delta)
            + encode_varint(offset_delta)
            + vbytes(key)
            + vbytes(value)
            + encode_varint(len(headers) if header_count is None else header_count)
            + hs
        )
    if length is None:
        prefix = encode_varint(len(body))
    elif isinstance(length, bytes):
        prefix = length
    else:
        prefix = encode_varint(length)
    return prefix + body


def v2_batch(
    records: Iterable[bytes] = (),
    *,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    magic: int = 2,
    attributes: int = 0,
    last_offset_delta: int | None = None,
    base_timestamp: int = TS,
    max_timestamp: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    count: int | None = None,
    payload: bytes | None = None,
    crc: int | None = None,
    batch_length: int | None = None,
) -> bytes:
    """One v2 batch (spec §3.1).

    The records are concatenated and, when ``attributes & 7`` is 1-4, compressed as Kafka's
    producer does (``codecs.compress``). ``payload`` replaces the record bytes verbatim (no
    compression). ``crc``: None = CRC-32C over [21, end); an int is stored as given (a wrong
    CRC). ``batch_length``: None = the true length; an int is stored as given.
    """
    recs = list(records)
    if count is None:
        count = len(recs)
    if last_offset_delta is None:
        last_offset_delta = max(count - 1, 0)
    if max_timestamp is None:
        max_timestamp = base_timestamp
    if payload is None:
        payload = b"".join(recs)
        codec = attributes & 7
        if 1 <= codec <= 4:
            payload = codecs.compress(codec, payload, 2)
    after_crc = (
        struct.pack(
            ">Hiqqqhii",
            attributes & 0xFFFF,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            count,
        )
        + payload
    )
    c = crc32c(after_crc) if crc is None else crc & 0xFFFFFFFF
    length = 9 + len(after_crc) if batch_length is None else batch_length
    return struct.pack(">qiiBI", base_offset, length, partition_leader_epoch, magic & 0xFF, c) + after_crc


def reseal(batch: bytes, *, length: bool = True, crc: bool = True) -> bytes:
    """Recompute batchLength (= len - 12) and/or the CRC-32C of a v2 batch after corruption."""
    if length and crc:
        return seal_v2(batch)
    b = bytearray(batch)
    if length:
        struct.pack_into(">i", b, 8, len(b) - 12)
    if crc:
        struct.pack_into(">I", b, 17, crc32c(bytes(b[21:])))
    return bytes(b)


def simple_records(n: int, *, tag: bytes = b"", ts_step: int = 1, value_size: int = 0) -> list[bytes]:
    """n ordinary records: key k<i>, value v<i> (or value_size bytes of text), deltas i."""
    out = []
    for i in range(n):
        value = (b"v%d" % i + tag) if not value_size else text(value_size, seed=i)
        out.append(v2_record(b"k%d" % i, value, offset_delta=i, timestamp_delta=i * ts_step))
    return out


def simple_batch(n: int = 3, *, value_size: int = 0, **kw: object) -> bytes:
    kw.setdefault("max_timestamp", TS + max(n - 1, 0))
    return v2_batch(simple_records(n, value_size=value_size), **kw)  # type: ignore[arg-type]


def one_record_batch(record: bytes, **kw: object) -> bytes:
    return v2_batch([record], **kw)  # type: ignore[arg-type]


def legacy_message(
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    *,
    magic: int = 1,
    attributes: int = 0,
    timestamp: int = TS,
    offset: int = 0,
    crc: int | None = None,
    trailing: bytes = b"",
    key_length: int | None = None,
    value_length: int | None = None,
    truncate: int | None = None,
) -> bytes:
    """One v0/v1 entry ``[offset int64][size int32][crc][magic][attributes][ts?][key][value]``.

    Any magic other than 0 gets the v1 layout (as ``LegacyRecord`` reads it). ``crc`` None =
    CRC-32 over [magic, end) recomputed; an int is stored as given. ``truncate`` cuts the
    message (after the size field) to that many bytes, CRC recomputed over what is left.
    """
    body = bytes([magic & 0xFF, attributes & 0xFF])
    if magic != 0:
        body += struct.pack(">q", timestamp)
    kl = (-1 if key is None else len(key)) if key_length is None else key_length
    vl = (-1 if value is None else len(value)) if value_length is None else value_length
    body += struct.pack(">i", kl) + (key or b"") + struct.pack(">i", vl) + (value or b"") + trailing
    if truncate is not None:
        body = body[: truncate - 4]
    c = crc32(body) & 0xFFFFFFFF if crc is None else crc & 0xFFFFFFFF
    msg = struct.pack(">I", c) + body
    return struct.pack(">qi", offset, len(msg)) + msg


def legacy_wrapper(
    inner: Sequence[bytes],
    *,
    magic: int = 1,
    codec: int = GZIP,
    offset: int = 0,
    timestamp: int = TS,
    extra_attributes: int = 0,
    payload: bytes | None = None,
    key: bytes | None = None,
    crc: int | None = None,
) -> bytes:
    """A compressed v0/v1 wrapper (spec §2.4) whose value is the compressed inner entries."""
    if payload is None:
        payload = codecs.compress(codec, b"".join(inner), magic)
    return legacy_message(
        key,
        payload,
        magic=magic,
        attributes=(codec & 7) | extra_attributes,
        timestamp=timestamp,
        offset=offset,
        crc=crc,
    )


def v1_inner(n: int, *, magic: int = 1, offsets: Sequence[int] | None = None, ts: int = TS) -> list[bytes]:
    """n inner messages with offsets 0..n-1 (or the given ones), timestamps ts+i."""
    offs = list(range(n)) if offsets is None else list(offsets)
    return [
        legacy_message(b"k%d" % i, b"v%d" % i, magic=magic, offset=o, timestamp=ts + i)
        for i, o in enumerate(offs)
    ]


def ctl_key(type_id: int, version: int = 0) -> bytes:
    return struct.pack(">hh", version, type_id)


def ctl_value(coordinator_epoch: int = 7, version: int = 0) -> bytes:
    return struct.pack(">hi", version, coordinator_epoch)


def control_batch(
    records: Sequence[bytes], *, attributes: int = ATTR_TRANSACTIONAL | ATTR_CONTROL, **kw: object
) -> bytes:
    kw.setdefault("producer_id", 4242)
    kw.setdefault("producer_epoch", 3)
    kw.setdefault("base_offset", 10)
    return v2_batch(records, attributes=attributes, **kw)  # type: ignore[arg-type]


def ctl_batch_kv(key: bytes | None, value: bytes | None, **kw: object) -> bytes:
    return control_batch([v2_record(key, value)], **kw)


class Collector:
    def __init__(self) -> None:
        self.items: list[Case] = []
        self.names: set[str] = set()

    def __call__(self, name: str, description: str, data: bytes, modes: Sequence[str] | None = None) -> None:
        if not _NAME_RE.match(name) or not name.startswith(AREAS):
            raise ValueError(f"bad case name {name!r}")
        if name in self.names:
            raise ValueError(f"duplicate case name {name!r}")
        if modes is None:
            modes = BOTH if name.startswith(("split-", "mixed-")) else MEMORY
        if len(data) >= 200 * 1024:
            raise ValueError(f"case {name} is too large: {len(data)} bytes")
        self.names.add(name)
        self.items.append(Case(name, description, bytes(data), tuple(modes)))
