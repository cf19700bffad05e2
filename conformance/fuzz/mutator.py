"""Structure-aware mutation: decode a valid input, change one thing, re-seal it.

Byte flips alone almost never get past a batch's CRC-32C; this mutator gets mutated inputs to
the deep parsing code. It reads the input with the kit's own layers (``Splitter``,
``RecordBatchV2``, ``read_uncompressed``, ``LegacyBatch``, ``codecs.read_stream``), changes a
field, a record, a header or the compressed payload, then re-seals what Kafka checks first:
``batchLength``, ``recordsCount`` / ``lastOffsetDelta``, CRC-32C (v2) or CRC-32 (v0/v1), and
recompresses with one of the framings Kafka's readers accept. With a small probability a
seal is deliberately left stale so the checksum paths stay covered too.

==============  ==============================================================================
shape           operations
==============  ==============================================================================
stream          entry: drop / duplicate / swap / truncate; v2 header field := interesting value;
                records: drop / duplicate / swap / edit a field / non-minimal varint / bytes;
                body bytes (decompressed) then recompress; compressed bytes; change codec;
                legacy: field edit, inner message set edit (wrappers), value bytes
codec           the decompressed content (v2 records or inner messages) edited as above, then
                recompressed in a framing variant; or payload bytes; or framing / count
headers         header list edit (add, drop, null key bytes, null value, invalid UTF-8)
native          a selector byte (flipped now and then), then: a stream, mutated as ``stream``;
                or a records region (``fuzz.native``): a count / base / keep / pad field :=
                interesting value, or its records edited as above; now and then one form
                turned into the other (a batch's region out, or the region wrapped in a batch)
==============  ==============================================================================

``byte_mutate(data, max_size) -> bytes`` is libFuzzer's own mutator under atheris
(``atheris.Mutate``), so dictionary entries and comparison hints still apply.
"""

from __future__ import annotations

import random
import struct
import zlib
from collections.abc import Callable

from conformance import codecs
from conformance.errors import DecodeError
from conformance.fuzz import native as native_target
from conformance.fuzz.produce import mutate_selector
from conformance.fuzz.targets import CODEC_OF, codec_input, wrap_headers
from conformance.stream.splitter import Splitter
from conformance.wire.batch import RecordBatchV2, seal_v2
from conformance.wire.layout import (
    ATTRIBUTES_OFFSET,
    BASE_OFFSET_OFFSET,
    BASE_SEQUENCE_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    COMPRESSION_CODEC_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LAST_OFFSET_DELTA_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V2,
    MAX_TIMESTAMP_OFFSET,
    MESSAGE_MAGIC_OFFSET,
    PARTITION_LEADER_EPOCH_OFFSET,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    RECORDS_COUNT_OFFSET,
    RECORDS_OFFSET,
)
from conformance.wire.legacy import LegacyBatch, seal_legacy, write_legacy_message
from conformance.wire.record import Record, read_uncompressed, write_headers_v2, write_record_v2

ByteMutate = Callable[[bytes, int], bytes]

INTERESTING = (
    0,
    1,
    -1,
    2,
    7,
    127,
    128,
    255,
    256,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x10000,
    (1 << 31) - 1,
    -(1 << 31),
    (1 << 32) - 1,
    (1 << 63) - 1,
    -(1 << 63),
)
#: v2 attribute values worth trying (codec x timestamp type x transactional x control x horizon)
ATTRIBUTES = (
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    0x08,
    0x10,
    0x20,
    0x30,
    0x40,
    0x11,
    0x24,
    0x7F,
    0xFF,
    0x100,
    -1,
)
#: (offset, struct format) of the v2 header fields after the length
V2_FIELDS = (
    (BASE_OFFSET_OFFSET, ">q"),
    (PARTITION_LEADER_EPOCH_OFFSET, ">i"),
    (MAGIC_OFFSET, ">b"),
    (ATTRIBUTES_OFFSET, ">h"),
    (LAST_OFFSET_DELTA_OFFSET, ">i"),
    (BASE_TIMESTAMP_OFFSET, ">q"),
    (MAX_TIMESTAMP_OFFSET, ">q"),
    (PRODUCER_ID_OFFSET, ">q"),
    (PRODUCER_EPOCH_OFFSET, ">h"),
    (BASE_SEQUENCE_OFFSET, ">i"),
    (RECORDS_COUNT_OFFSET, ">i"),
)
_LIMIT = 1 << 20  # decompression while mutating: small inputs only
_STALE = 0.03  # probability of leaving a seal stale


def _fits(fmt: str, v: int) -> int:
    bits = struct.calcsize(fmt) * 8
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def interesting(rng: random.Random, current: int = 0) -> int:
    if rng.random() < 0.3:
        return current + rng.choice((-1, 1, -2, 2, 1 << 31))
    return rng.choice(INTERESTING)


class Mutator:
    """One mutator per input shape; ``__call__`` has atheris' custom-mutator signature."""

    def __init__(
        self, shape: str, byte_mutate: ByteMutate | None = None, target: str | None = None
    ) -> None:
        self.shape = shape
        self.byte_mutate = byte_mutate or random_byte_mutate
        self.codec = CODEC_OF.get(target or "", None)

    def __call__(self, data: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        try:
            if self.shape == "stream":
                out = self.stream(data, rng, max_size)
            elif self.shape == "codec":
                out = self.codec_payload(data, rng, max_size)
            elif self.shape == "headers":
                out = self.headers(data, rng, max_size)
            elif self.shape == "native":
                out = self.native(data, rng, max_size)
            elif self.shape == "produce":  # a selector byte, then a record stream
                if data and rng.random() < 0.1:
                    out = mutate_selector(data, rng)
                else:
                    out = data[:1] + self.stream(data[1:], rng, max(max_size - 1, 1))
            else:
                out = self.byte_mutate(data, max_size)
        except DecodeError:
            out = self.byte_mutate(data, max_size)
        if len(out) > max_size:
            out = out[:max_size]
        return out

    # ------------------------------------------------------------------------------- bytes
    def bytes_of(self, data: bytes, rng: random.Random, max_size: int) -> bytes:
        return self.byte_mutate(data, max(max_size, len(data) + 16))

    # ------------------------------------------------------------------------------ streams
    def stream(self, data: bytes, rng: random.Random, max_size: int) -> bytes:
        entries, tail = split(data)
        if not entries or rng.random() < 0.2:
            return reseal_stream(self.bytes_of(data, rng, max_size), rng)
        roll = rng.random()
        if roll < 0.12 and len(entries) >= 1:
            i = rng.randrange(len(entries))
            op = rng.randrange(4)
            if not reorder(entries, i, op, rng):
                tail = entries[i][: rng.randrange(len(entries[i]))] if entries[i] else b""
                del entries[i:]
            return b"".join(entries) + tail
        i = rng.randrange(len(entries))
        entries[i] = self.entry(entries[i], rng, max_size)
        return b"".join(entries) + tail

    def entry(self, raw: bytes, rng: random.Random, max_size: int) -> bytes:
        magic = raw[MAGIC_OFFSET] if len(raw) > MAGIC_OFFSET else MAGIC_VALUE_V2
        if magic == MAGIC_VALUE_V2 and len(raw) >= RECORD_BATCH_OVERHEAD:
            return self.v2(raw, rng, max_size)
        if magic in (0, 1):
            return self.legacy(raw, rng, max_size)
        return self.bytes_of(raw, rng, max_size)

    # ------------------------------------------------------------------------------ v2
    def v2(self, raw: bytes, rng: random.Random, max_size: int) -> bytes:
        batch = RecordBatchV2(raw)
        codec = batch.attributes_raw & COMPRESSION_CODEC_MASK
        roll = rng.random()
        if roll < 0.25:  # one header field
            off, fmt = rng.choice(V2_FIELDS)
            out = bytearray(raw)
            current = struct.unpack_from(fmt, raw, off)[0]
            value = (
                rng.choice(ATTRIBUTES) if off == ATTRIBUTES_OFFSET else interesting(rng, current)
            )
            struct.pack_into(fmt, out, off, _fits(fmt, value))
            return self.seal(bytes(out), rng)
        if roll < 0.35 and codec:  # the compressed bytes themselves
            payload = self.bytes_of(raw[RECORDS_OFFSET:], rng, max_size)
            return self.seal(raw[:RECORDS_OFFSET] + payload, rng)
        body = read_payload(codec, raw[RECORDS_OFFSET:], MAGIC_VALUE_V2)
        if body is None:
            return self.seal(
                raw[:RECORDS_OFFSET] + self.bytes_of(raw[RECORDS_OFFSET:], rng, max_size), rng
            )
        new_codec = codec
        if roll < 0.45:  # another codec (or none)
            new_codec = rng.choice(tuple(codecs.CODECS))
        chunks, trailing = split_records(
            body, batch.base_offset, batch.base_timestamp, batch.records_count
        )
        if roll >= 0.45:
            chunks, trailing = self.mutate_records(chunks, trailing, rng, max_size)
        new_body = b"".join(c for c, _ in chunks) + trailing
        header = bytearray(raw[:RECORDS_OFFSET])
        low = ATTRIBUTES_OFFSET + 1  # the attributes' low byte holds the codec
        header[low] = (header[low] & ~COMPRESSION_CODEC_MASK & 0xFF) | new_codec
        if rng.random() < 0.9:
            struct.pack_into(">i", header, RECORDS_COUNT_OFFSET, len(chunks))
        deltas = [r.offset_delta for _, r in chunks if r is not None]
        if deltas and rng.random() < 0.9:
            struct.pack_into(">i", header, LAST_OFFSET_DELTA_OFFSET, _fits(">i", max(deltas)))
        payload = write_payload(new_codec, new_body, MAGIC_VALUE_V2, rng)
        return self.seal(bytes(header) + payload, rng)

    def seal(self, raw: bytes, rng: random.Random) -> bytes:
        if len(raw) < RECORD_BATCH_OVERHEAD or rng.random() < _STALE:
            return raw
        return seal_v2(raw)

    def mutate_records(
        self,
        chunks: list[tuple[bytes, Record | None]],
        trailing: bytes,
        rng: random.Random,
        max_size: int,
    ) -> tuple[list[tuple[bytes, Record | None]], bytes]:
        op = rng.randrange(8)
        if not chunks or op == 7:
            joined = b"".join(c for c, _ in chunks) + trailing
            return [], self.bytes_of(joined, rng, max_size)
        i = rng.randrange(len(chunks))
        if reorder(chunks, i, op, rng):
            pass
        elif op == 3:  # a non-minimal (but valid) length varint
            chunk = chunks[i][0]
            n = 1
            while chunk[n - 1] & 0x80 and n < len(chunk):
                n += 1
            prefix = chunk[:n]
            longer = prefix[:-1] + bytes([prefix[-1] | 0x80, 0x00])
            chunks[i] = (longer + chunk[n:], chunks[i][1])
        elif op == 4:
            chunks[i] = (self.bytes_of(chunks[i][0], rng, max_size), None)
        else:
            r = chunks[i][1]
            if r is not None:
                chunks[i] = (edit_record(r, rng), r)
        return chunks, trailing

    # ------------------------------------------------------------------------------ legacy
    def legacy(self, raw: bytes, rng: random.Random, max_size: int) -> bytes:
        if len(raw) < 26:
            return self.bytes_of(raw, rng, max_size)
        entry = LegacyBatch(raw)
        m = entry.message
        try:
            fields = dict(
                magic=m.magic,
                offset=entry.offset,
                timestamp=m.timestamp if m.magic else 0,
                key=m.key,
                value=m.value,
                attributes=m.attributes,
            )
        except DecodeError:
            return self.bytes_of(raw, rng, max_size)
        except struct.error:  # a length past the end: only bytes are left to mutate
            return self.bytes_of(raw, rng, max_size)
        codec = fields["attributes"] & 7
        op = rng.randrange(6)
        if op == 0:
            fields["magic"] = rng.choice((0, 1))
        elif op == 1:
            fields["attributes"] = rng.choice((0, 1, 2, 3, 4, 8, 9, 10, 11, 0x10, 0xFF))
        elif op == 2:
            fields["timestamp"] = _fits(">q", interesting(rng, fields["timestamp"]))
            fields["offset"] = _fits(">q", interesting(rng, fields["offset"]))
        elif op == 3:
            target = rng.choice(("key", "value"))
            fields[target] = rng.choice(
                (None, b"", self.bytes_of(fields[target] or b"x", rng, max_size))
            )
        elif op == 4 and codec and fields["value"] is not None:
            inner = read_payload(codec, fields["value"], fields["magic"])
            if inner is not None:
                inner = self.stream(inner, rng, max_size)
                fields["value"] = write_payload(codec, inner, fields["magic"], rng)
        elif fields["value"] is not None:
            fields["value"] = self.bytes_of(fields["value"], rng, max_size)
        out = write_legacy_message(
            fields["magic"],
            fields["offset"],
            fields["timestamp"],
            fields["key"],
            fields["value"],
            fields["attributes"],
        )
        if rng.random() < _STALE:
            crc_end = LOG_OVERHEAD + MESSAGE_MAGIC_OFFSET  # keep the old, stale CRC
            out = out[:LOG_OVERHEAD] + raw[LOG_OVERHEAD:crc_end] + out[crc_end:]
        return out

    # ------------------------------------------------------------------------------ codec
    def codec_payload(self, data: bytes, rng: random.Random, max_size: int) -> bytes:
        if len(data) < 5 or self.codec is None:
            return self.bytes_of(data, rng, max_size)
        framing, count, payload = data[0] & 3, struct.unpack(">i", data[1:5])[0], data[5:]
        roll = rng.random()
        if roll < 0.35:
            return data[:5] + self.bytes_of(payload, rng, max_size)
        if roll < 0.45:
            if rng.random() < 0.5:
                framing = rng.randrange(4)
            else:
                count = _fits(">i", interesting(rng, count))
            return codec_input(framing, count, payload)
        magic = 2 if framing < 2 else (1 if framing == 2 else 0)
        content = read_payload(self.codec, payload, magic)
        if content is None:
            return data[:5] + self.bytes_of(payload, rng, max_size)
        if magic == 2:
            chunks, trailing = split_records(content, 0, 0, count)
            chunks, trailing = self.mutate_records(chunks, trailing, rng, max_size)
            content = b"".join(c for c, _ in chunks) + trailing
            if rng.random() < 0.9:
                count = len(chunks)
        else:
            content = self.stream(content, rng, max_size)
        return codec_input(framing, count, write_payload(self.codec, content, magic, rng))

    # ------------------------------------------------------------------------------ headers
    def headers(self, data: bytes, rng: random.Random, max_size: int) -> bytes:
        if rng.random() < 0.4:
            return self.bytes_of(data, rng, max_size)
        try:
            batch = next(iter(Splitter(wrap_headers(data))))
            out: list[Record] = []
            batch.read_records(out)
        except (DecodeError, StopIteration):
            return self.bytes_of(data, rng, max_size)
        headers = [(k.encode("utf-8"), v) for k, v in out[0].headers]
        return write_headers_v2(edit_headers(headers, rng))

    # ------------------------------------------------------------------------------ native
    def native(self, data: bytes, rng: random.Random, max_size: int) -> bytes:
        if not data:
            return self.bytes_of(data, rng, max_size)
        roll = rng.random()
        if roll < 0.08:  # another decode mode / codec / extra pass, same form
            return bytes([data[0] ^ (2 << rng.randrange(7))]) + data[1:]
        if roll < 0.12:
            return self.native_convert(data, rng)
        if not data[0] & 1:
            return data[:1] + self.stream(data[1:], rng, max(max_size - 1, 1))
        r = native_target.read_region_input(data)
        if roll < 0.35:
            field = rng.choice(
                ("count", "base_offset", "base_timestamp", "log_append_time", "keep")
            )
            value = interesting(rng, getattr(r, field))
            if field == "base_offset" or field == "base_timestamp":
                value = rng.choice((value, (1 << 62) - 1 - rng.randrange(3), 1 - (1 << 62)))
            setattr(
                r,
                field,
                _fits(">H" if field == "keep" else ">i" if field == "count" else ">q", value),
            )
        elif roll < 0.4:
            r.pad = bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 7, 255))))
        else:
            chunks, trailing = split_records(r.region, r.base_offset, r.base_timestamp, r.count)
            chunks, trailing = self.mutate_records(chunks, trailing, rng, max_size)
            r.region = b"".join(c for c, _ in chunks) + trailing
            if rng.random() < 0.9:
                r.count = len(chunks)
            if rng.random() < 0.8:
                r.keep = r.count if rng.random() < 0.7 else rng.randrange(max(r.count, 0) + 2)
        return native_target.write_region_input(r)

    def native_convert(self, data: bytes, rng: random.Random) -> bytes:
        """Stream form -> region form (one v2 batch's records, decompressed), or back."""
        if data[0] & 1:
            r = native_target.read_region_input(data)
            if not 0 <= r.count < 1 << 31:
                r.count = 0
            return bytes([data[0] & 0x82]) + native_target.region_stream(r)
        entries, _ = split(data[1:])
        v2 = [e for e in entries if len(e) >= RECORD_BATCH_OVERHEAD and e[MAGIC_OFFSET] == 2]
        if not v2:
            return data
        batch = RecordBatchV2(rng.choice(v2))
        codec = batch.attributes_raw & COMPRESSION_CODEC_MASK
        body = read_payload(codec, batch.raw[RECORDS_OFFSET:], MAGIC_VALUE_V2)
        if body is None:
            return data
        selector = 1 | (data[0] & 0x80) | (2 if batch.attributes_raw & 8 else 0)
        selector |= (codec % 8) << 2
        return native_target.write_region_input(
            native_target.RegionInput(
                selector, batch.records_count, batch.base_offset, batch.base_timestamp,
                batch.max_timestamp, batch.records_count, b"", body,
            )
        )  # fmt: skip


# ---------------------------------------------------------------------------------- helpers


def random_byte_mutate(data: bytes, max_size: int, _rng: random.Random | None = None) -> bytes:
    """A plain byte mutator (tests, and runs without atheris): flip, set, insert, erase."""
    rng = _rng or random.Random(zlib.crc32(data))
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        if op == 0 and out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        elif op == 1 and out:
            out[rng.randrange(len(out))] = rng.choice((0, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        elif op == 2 and len(out) < max_size:
            out.insert(rng.randrange(len(out) + 1), rng.randrange(256))
        elif out:
            del out[rng.randrange(len(out))]
    return bytes(out[:max_size])


def reorder(items: list, i: int, op: int, rng: random.Random) -> bool:  # type: ignore[type-arg]
    """``op`` 0: drop item ``i`` (never the last one), 1: duplicate it, 2: swap it with
    another. False when ``op`` is none of these (or nothing could be dropped)."""
    if op == 0 and len(items) > 1:
        del items[i]
    elif op == 1:
        items.insert(i, items[i])
    elif op == 2:
        j = rng.randrange(len(items))
        items[i], items[j] = items[j], items[i]
    else:
        return False
    return True


def split(data: bytes) -> tuple[list[bytes], bytes]:
    """Entries (raw bytes) the memory splitter finds, and the bytes after the last one."""
    entries: list[bytes] = []
    end = 0
    try:
        for b in Splitter(data):
            entries.append(b.raw)
            end = b.position + len(b.raw)
    except DecodeError:
        pass
    return entries, data[end:]


def split_records(
    body: bytes, base_offset: int, base_timestamp: int, count: int
) -> tuple[list[tuple[bytes, Record | None]], bytes]:
    """Record chunks of an uncompressed v2 records region, and what could not be parsed."""
    chunks: list[tuple[bytes, Record | None]] = []
    pos = 0
    for _ in range(max(0, min(count, 10_000))):
        try:
            record, end = read_uncompressed(body, pos, base_offset, base_timestamp, None)
        except DecodeError:
            break
        chunks.append((body[pos:end], record))
        pos = end
    return chunks, body[pos:]


def read_payload(codec: int, payload: bytes, magic: int) -> bytes | None:
    if codec == codecs.NONE:
        return payload
    if codec not in codecs.CODECS:
        return None
    try:
        stream = codecs.read_stream(codec, payload, magic, _LIMIT)
    except DecodeError:
        return None
    if stream.error is not None:
        return None
    return stream.data


def write_payload(codec: int, data: bytes, magic: int, rng: random.Random) -> bytes:
    """``data`` compressed in one of the framings Kafka's readers accept."""
    if codec == codecs.SNAPPY and rng.random() < 0.3:
        return codecs.snappy.write_raw(data)
    if codec == codecs.SNAPPY and rng.random() < 0.3:
        return codecs.snappy.write_xerial(data, block=rng.choice((16, 1024, 32 * 1024)))
    if codec == codecs.LZ4 and rng.random() < 0.4:
        size = rng.choice((16, 4096, 65536))
        blocks = [data[i : i + size] for i in range(0, len(data), size)] or [b""]
        return codecs.lz4.write_frame(
            blocks,
            magic=magic,
            block_checksum=rng.random() < 0.5,
            content_checksum=rng.random() < 0.5,
        )
    if codec == codecs.GZIP and rng.random() < 0.3:
        return codecs.gzip.write_member(
            data,
            fname=b"x" if rng.random() < 0.5 else b"",
            extra=b"ab" if rng.random() < 0.5 else b"",
            level=rng.choice((0, 1, 9)),
        )
    if codec in codecs.CODECS:
        return codecs.write_stream(codec, data, magic if magic < 2 else 2)
    return data


def edit_record(r: Record, rng: random.Random) -> bytes:
    key, value = r.key, r.value
    headers: list[tuple[bytes, bytes | None]] = [(k.encode("utf-8"), v) for k, v in r.headers]
    attributes, offset_delta, ts_delta = r.attributes, r.offset_delta, r.timestamp_delta
    op = rng.randrange(6)
    if op == 0:
        key = rng.choice((None, b"", (key or b"k") * 2, b"\x00"))
    elif op == 1:
        value = rng.choice((None, b"", (value or b"v") * 3, b"\xff" * 40))
    elif op == 2:
        headers = edit_headers(headers, rng)
    elif op == 3:
        attributes = rng.choice((0, 1, 0x7F, 0x80, 0xFF))
    elif op == 4:
        offset_delta = _fits(">i", interesting(rng, offset_delta))
    else:
        ts_delta = _fits(">q", interesting(rng, ts_delta))
    return write_record_v2(offset_delta, ts_delta, key, value, headers, attributes)


def edit_headers(
    headers: list[tuple[bytes, bytes | None]], rng: random.Random
) -> list[tuple[bytes, bytes | None]]:
    headers = list(headers)
    op = rng.randrange(5)
    if op == 0 or not headers:
        headers.append(
            (
                rng.choice((b"h", b"", b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", "é".encode())),
                rng.choice((None, b"", b"v")),
            )
        )
    elif op == 1:
        del headers[rng.randrange(len(headers))]
    elif op == 2:
        i = rng.randrange(len(headers))
        headers[i] = (headers[i][0], None)
    elif op == 3:
        headers.extend(headers[: rng.randint(1, 3)])
    else:
        i = rng.randrange(len(headers))
        headers[i] = (headers[i][0] + b"\x80", headers[i][1])
    return headers


def reseal_stream(data: bytes, rng: random.Random) -> bytes:
    """After a byte-level mutation: re-seal every v2 batch (and v0/v1 CRC) the splitter finds."""
    entries, tail = split(data)
    out = []
    for raw in entries:
        if rng.random() < _STALE:
            out.append(raw)
        elif len(raw) >= RECORD_BATCH_OVERHEAD and raw[MAGIC_OFFSET] == MAGIC_VALUE_V2:
            out.append(seal_v2(raw))
        elif len(raw) >= HEADER_SIZE_UP_TO_MAGIC and raw[MAGIC_OFFSET] in (0, 1):
            out.append(seal_legacy(raw))
        else:
            out.append(raw)
    return b"".join(out) + tail


__all__ = [
    "Mutator",
    "ATTRIBUTES",
    "INTERESTING",
    "random_byte_mutate",
    "split",
    "split_records",
    "read_payload",
    "write_payload",
    "reseal_stream",
]
