#!/usr/bin/env python3
"""A small, standalone decoder adapter with one bug planted on demand (the fuzzer must find it).

It decodes magic-2 uncompressed record batches in memory mode, following Kafka's
``ByteBufferLogInputStream``, ``DefaultRecordBatch`` and ``DefaultRecord`` (it uses nothing
of the kit), and speaks the adapter protocol (``capabilities``, ``decode --as``, ``serve``).
``--bug NAME`` plants one bug, of the kinds users have filed against real clients:

=================  ======================================================================
varlong32          a record's timestampDelta read as a 32-bit varint (kafka-protocol-rs
                   #158: a gap of more than 2^31 ms corrupts the timestamp)
unchecked-length   a key or value length past the end of the batch is not refused: the
                   bytes that are there are delivered (kafkajs #1793)
skip-abort         a control batch holding an ABORT marker is dropped (@platformatic/kafka
                   #391 crashed on one)
trust-count        the batch's record count is trusted over its length: records are read
                   until the count is reached, past the end of the batch and without the
                   "records still remaining" check
flaky              no bug in the decoding; every 97th answer says "ok" with no batch (as a
                   server under load might answer wrongly once): asked again, it is right,
                   so the hunt must report nothing
=================  ======================================================================
"""

from __future__ import annotations

import base64
import json
import struct
import sys

BUGS = ("varlong32", "unchecked-length", "skip-abort", "trust-count", "flaky")
CORRUPT = "org.apache.kafka.common.errors.CorruptRecordException"
INVALID = "org.apache.kafka.common.InvalidRecordException"
UNDERFLOW = "java.nio.BufferUnderflowException"
_CASTAGNOLI = None


class Refused(Exception):
    def __init__(self, cls: str, message: str) -> None:
        super().__init__(message)
        self.cls = cls


def crc32c(data: bytes) -> int:
    global _CASTAGNOLI
    if _CASTAGNOLI is None:
        table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
        _CASTAGNOLI = table
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CASTAGNOLI[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


class Reader:
    def __init__(self, data: bytes, pos: int, end: int, bug: str) -> None:
        self.data, self.pos, self.end, self.bug = data, pos, end, bug

    def byte(self) -> int:
        if self.pos >= self.end:
            raise Refused(UNDERFLOW, "underflow")
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self, most: int = 5) -> int:
        value, shift = 0, 0
        for _ in range(most):
            b = self.byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                bits = 32 if most == 5 else 64
                value &= (1 << bits) - 1
                return (value >> 1) ^ -(value & 1)
            shift += 7
        raise Refused("java.lang.IllegalArgumentException", "varint is too long")

    def varlong(self) -> int:
        if self.bug == "varlong32":
            value, shift = 0, 0
            while True:  # reads every byte of the varlong, keeps 32 bits of it
                b = self.byte()
                value |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80 or shift >= 70:
                    break
            value &= 0xFFFFFFFF
            return (value >> 1) ^ -(value & 1)
        return self.varint(10)

    def sized(self, size: int) -> bytes | None:
        if size < 0:
            return None
        if self.pos + size > self.end:
            if self.bug != "unchecked-length":
                raise Refused(INVALID, "Found invalid record structure")
            out = self.data[self.pos : self.end]
            self.pos = self.end
            return out
        self.pos += size
        return self.data[self.pos - size : self.pos]


def wrap64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def java_utf8(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode("ascii")


def read_record(r: Reader, base_offset: int, base_ts: int, log_append: int | None) -> dict:
    size = r.varint()
    if r.end - r.pos < size:
        raise Refused(INVALID, "Invalid record size")
    start = r.pos
    try:
        r.byte()  # attributes
        delta = r.varlong()
        ts = wrap64(base_ts + delta) if log_append is None else log_append
        offset = wrap64(base_offset + r.varint())
        key = r.sized(r.varint())
        value = r.sized(r.varint())
        count = r.varint()
        if count < 0 or count > r.end - r.pos:
            raise Refused(INVALID, f"Found invalid number of record headers {count}")
        headers = []
        for _ in range(count):
            ksize = r.varint()
            if ksize < 0:
                raise Refused(INVALID, f"Invalid negative header key size {ksize}")
            hkey = r.sized(ksize)
            headers.append({"key": java_utf8(hkey or b""), "value": b64(r.sized(r.varint()))})
    except Refused as e:
        if e.cls == INVALID:
            raise
        raise Refused(INVALID, "Found invalid record structure") from None
    if r.pos - start != size and r.bug != "unchecked-length":
        raise Refused(INVALID, "Invalid record size: expected to read more")
    return {
        "offset": str(offset),
        "timestamp": str(ts),
        "key": b64(key),
        "value": b64(value),
        "headers": headers,
    }


def control_type(rec: dict) -> int:
    """The type of a control record (``ControlRecordType.parse``; an ABORT or COMMIT marker's
    value checked as ``EndTransactionMarker`` does)."""
    raw_key, raw_value = rec["key"], rec["value"]
    if raw_key is None:
        raise Refused("java.lang.NullPointerException", "null control key")
    key = base64.b64decode(raw_key)
    if len(key) < 4:
        raise Refused(INVALID, "Invalid value size found for end control record key")
    version, kind = struct.unpack_from(">hh", key)
    if version < 0:
        raise Refused(INVALID, f"Invalid version found for control record: {version}")
    if kind in (0, 1):
        if raw_value is None:
            raise Refused("java.lang.NullPointerException", "null marker value")
        value = base64.b64decode(raw_value)
        if len(value) < 6:
            raise Refused(INVALID, "Invalid value size found for end transaction marker")
        if struct.unpack_from(">h", value)[0] < 0:
            raise Refused(INVALID, "Invalid version found for end transaction marker")
    return kind


def read_batch(data: bytes, pos: int, size: int, bug: str, out: list) -> None:
    """One v2 batch of ``size`` bytes at ``pos``, appended to ``out`` before its records."""
    end = pos + size
    if size < 61:
        raise Refused(CORRUPT, f"Record batch is corrupt (the size {size} is too small)")
    (base_offset, _, epoch, _, crc, attributes, last_delta, base_ts, max_ts, pid, pepoch,
     base_seq, count) = struct.unpack_from(">qiibIhiqqqhii", data, pos)  # fmt: skip
    if crc32c(data[pos + 21 : end]) != crc:
        raise Refused(CORRUPT, "Record is corrupt")
    control = bool(attributes & 0x20)
    log_append = max_ts if attributes & 0x08 else None
    batch = {
        "position": pos,
        "magic": 2,
        "baseOffset": str(base_offset),
        "lastOffset": str(wrap64(base_offset + last_delta)),
        "isControl": control,
        "records": [],
    }
    if attributes & 0x07 >= 5:
        out.append(batch)
        raise Refused("java.lang.IllegalArgumentException", "Unknown compression type id")
    if count < 0:
        out.append(batch)
        raise Refused(INVALID, f"Found invalid record count {count}")
    r = Reader(data, pos + 61, end if bug != "trust-count" else len(data), bug)
    records = []
    for i in range(count):
        rec = read_record(r, base_offset, base_ts, log_append)
        if control:
            try:
                marker = control_type(rec)
            except Refused:
                out.append(batch)
                batch["records"] = records
                raise
            if marker == 0 and bug == "skip-abort":
                return  # an ABORT marker: its batch is dropped
        records.append(rec)
        if i == count - 1 and r.pos != r.end and bug != "trust-count":
            out.append(batch)
            batch["records"] = records[:-1]
            raise Refused(INVALID, "Incorrect declared batch size, records still remaining")
    batch["records"] = records
    out.append(batch)


def decode(data: bytes) -> dict:
    bug = BUG
    batches: list = []
    error = None
    pos, index = 0, 0
    try:
        while len(data) - pos >= 12:
            (length,) = struct.unpack_from(">i", data, pos + 8)
            if length < 14:
                raise Refused(CORRUPT, f"Record size {length} is less than the minimum")
            if len(data) - pos < 17:
                break
            magic = data[pos + 16]
            if magic not in (0, 1, 2):
                raise Refused(CORRUPT, f"Invalid magic found in record: {magic}")
            if length + 12 > 0x7FFFFFFF:  # Java's int overflows: a negative slice limit
                raise Refused("java.lang.IllegalArgumentException", "newLimit < 0")
            if len(data) - pos < length + 12:
                break
            read_batch(data, pos, length + 12, bug, batches)
            pos += length + 12
            index += 1
    except Refused as e:
        error = {"kafka_exception": e.cls, "message": str(e), "batch_index": index, "position": pos}
    outcome = "error" if error else ("partial" if pos < len(data) else "ok")
    tail = {"position": pos, "bytes": len(data) - pos} if outcome == "partial" else None
    return {
        "format": "kafka-conformance/decode/1",
        "mode": "memory",
        "outcome": outcome,
        "error": error,
        "tail": tail,
        "batches": batches,
    }


OMITS = [
    "sizeInBytes", "crc", "attributes", "compression", "timestampType", "maxTimestamp",
    "lastOffsetDelta", "partitionLeaderEpoch", "baseTimestamp", "deleteHorizonMs",
    "isTransactional", "producerId", "producerEpoch", "baseSequence", "lastSequence",
    "recordsCount", "control", "headers",
]  # fmt: skip
CAPABILITIES = {
    "name": "planted",
    "version": "1",
    "magics": [2],
    "codecs": ["none"],
    "checks_crc": True,
    "error_semantics": "streaming",
    "file_semantics": False,
    "error_classes": "none",
    "omits": OMITS,
    "lists_failing_batch": False,
    "persistent": True,
}
BUG = ""


ANSWERS = [0]


def answer(data: bytes) -> bytes:
    doc = decode(data)
    ANSWERS[0] += 1
    if BUG == "flaky" and ANSWERS[0] % 97 == 0:
        doc |= {"outcome": "ok", "error": None, "tail": None, "batches": []}
    return json.dumps(doc, separators=(",", ":")).encode("ascii")


def main(argv: list[str]) -> int:
    global BUG
    if len(argv) >= 2 and argv[0] == "--bug":
        BUG = argv[1]
        if BUG not in BUGS:
            print(f"unknown bug {BUG!r} ({', '.join(BUGS)})", file=sys.stderr)
            return 2
        argv = argv[2:]
    if argv == ["capabilities"]:
        name = f"planted-{BUG}" if BUG else "planted"
        print(json.dumps(CAPABILITIES | {"name": name}))
        return 0
    if argv[:2] == ["decode", "--as"]:
        sys.stdout.buffer.write(answer(sys.stdin.buffer.read()) + b"\n")
        return 0
    if argv == ["serve"]:
        stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
        while True:
            head = stdin.read(5)
            if len(head) < 5:
                return 0
            (size,) = struct.unpack(">I", head[1:])
            body = answer(stdin.read(size))
            stdout.write(struct.pack(">I", len(body)) + body)
            stdout.flush()
    print("usage: adapter.py [--bug NAME] capabilities | decode --as MODE | serve", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
