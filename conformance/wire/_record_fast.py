"""Fast paths for the records of a magic-2 batch: well-formed input only.

Two implementations of one function, :func:`read_records_fast`, chosen at import as fastavro
chooses its Cython reader: the native extension ``kafka_conformance_native`` (Rust/PyO3,
``native/`` in the repository, docs/native.md) when it is installed, else the tight Python loop
of this module; ``KAFKA_CONFORMANCE_PURE=1`` forces the Python loop (the choice is
:mod:`conformance.primitives.native`'s). ``start`` is where the region begins in ``buf``, so a
batch's records are read without copying them out.

The reference reader is :mod:`conformance.wire.record` (``DefaultRecord.readFrom``, spec
``docs/format.md §3.4-3.5``); this module is an optimisation beside it, never mixed into it
(the model is fastavro's ``_read`` / ``_read_py``). :meth:`RecordBatchV2.records
<conformance.wire.batch.RecordBatchV2.records>` is the one API: it tries
:func:`read_records_fast` and falls back to the reference reader when it returns ``False``.
``tests/test_fast_path.py`` holds the two to identical verdicts (canonical JSON, findings,
error) on every crafted, golden and fuzz-corpus record stream.

Record layout (the same bytes the reference reads, ``DefaultRecord``):

==================  =======  ============================================================
field               type     what the fast path decides itself
==================  =======  ============================================================
length              varint   1 or 2 bytes, >= 6, record wholly inside the buffer
attributes          int8     any value
timestampDelta      varlong  any (|delta| < 2**62, so no int64 wrap-around can occur)
offsetDelta         varint   any
keyLength / key     varint   any (< 0 -> null)
valueLength / value varint   any (< 0 -> null)
headerCount         varint   one byte, even (0..63 headers, non-negative)
  headerKeyLength   varint   one byte, even (non-negative, < 64)
  headerKey         bytes    UTF-8 (Java's U+FFFD replacement via ``java_utf8``)
  headerValueLength varint   any (< 0 -> null)
  headerValue       bytes
==================  =======  ============================================================

What it defers to the reference (it returns ``False`` and has handed out nothing):

* a strict-profile read (anomalies are the reference's business; the caller never asks);
* base offset or base timestamp outside ``(-2**62, 2**62)`` (int64 wrap-around);
* any record whose fields do not end exactly at ``length``, a length varint over 2 bytes,
  a header count or header key length that is negative, odd-encoded or multi-byte;
* a records region that is not consumed exactly by ``count`` records;
* any read past the end of the buffer or any error of the varint readers.

For every input it accepts, Kafka's two readers (``readFrom(ByteBuffer)`` for uncompressed
batches and ``readFrom(InputStream)`` for a decompressed payload read without error or short
read, §3.5 a/b) agree with each other and with this loop, so one loop serves both.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from types import ModuleType
from typing import Any

from conformance.errors import DecodeError
from conformance.primitives import native as _native
from conformance.primitives.java import java_utf8
from conformance.primitives.varint import read_varint, read_varlong
from conformance.wire.record import (
    ROW_FIELDS,
    Header,
    Record,
    RecordList,
    RecordRow,
    RecordSink,
)

#: zig-zag decoding of every 1- and 2-byte varint payload (14 bits)
_ZZ = [(u >> 1) ^ -(u & 1) for u in range(1 << 14)]

_LIMIT = 1 << 62

#: records produced at a time (what the fast path holds beyond what the sink keeps)
CHUNK = 8192


class _Decline(Exception):
    """Internal to this module: the input is not one the fast path decides."""


def read_records_fast(
    buf: bytes,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    out: RecordSink,
    start: int = 0,
) -> bool:
    """Hand all ``count`` records of ``buf[start:]`` (a whole records region) to ``out``:
    ``True``; or ``False`` having handed out nothing: decode this region with the reference
    reader.

    ``True`` means the reference would have handed out the same records, without error.
    Records are produced :data:`CHUNK` at a time, so memory follows what ``out`` keeps
    (``RecordList(keep=...)``), not ``count``: a region declined half-way is rolled back, and a
    sink that cannot take records back (``visit``) gets the region decided before the first.
    """
    if not (-_LIMIT < base_offset < _LIMIT and -_LIMIT < base_timestamp < _LIMIT):
        return False  # base + delta could wrap around int64: the reference decides
    native = _native.NATIVE
    if native is not None:
        args_native = (buf, start, count, base_offset, base_timestamp, log_append_time)
        return _read_native(native, *args_native, out)
    if start:
        buf = buf[start:]
    args = (buf, count, base_offset, base_timestamp, log_append_time)
    if type(out) is list:
        rows: list[RecordRow] = []
        for chunk in _chunks_or_none(*args):
            if chunk is None:
                return False
            rows.extend(chunk)
        out.extend([Record(*row) for row in rows])
        return True
    if out.keep is None and out.limit is not None and out.total + count > out.limit:
        return False  # the reference reader raises the limit at the exact record
    if out.visit is not None and any(chunk is None for chunk in _chunks_or_none(*args)):
        return False
    mark = out.mark()
    for chunk in _chunks_or_none(*args):
        if chunk is None:
            out.rollback(mark)
            return False
        out.extend_rows(chunk)
    return True


#: the slots of :class:`Record` in the order of a :data:`RecordRow`, then ``control``: how the
#: native extension makes a ``Record`` without calling it (``Record.__init__`` only stores)
RECORD_SLOTS = (*ROW_FIELDS, "control")


@cache
def record_maker(native: ModuleType) -> Any:
    """The extension's ``RecordMaker`` for :class:`Record` (one per extension module)."""
    return native.RecordMaker(Record, list(RECORD_SLOTS))


def _read_native(
    native: ModuleType,
    buf: bytes,
    start: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    out: RecordSink,
) -> bool:
    """:func:`read_records_fast` by the native extension: it checks the whole region first
    and makes rows only for the records ``out`` keeps (none for a validate-only scan)."""
    if type(buf) is not bytes:
        buf = bytes(buf)  # the extension reads bytes objects only
    if type(out) is list:
        rows = native.read_records_v2(
            buf,
            start,
            count,
            base_offset,
            base_timestamp,
            log_append_time,
            count,
            record_maker(native),
        )
        if rows is None:
            return False
        out.extend(rows.records())
        return True
    if out.keep is None and out.limit is not None and out.total + count > out.limit:
        return False  # the reference reader raises the limit at the exact record
    keep = count
    if out.visit is None and type(out) is RecordList and out.keep is not None:
        keep = max(0, min(count, out.keep - len(out)))
    rows = native.read_records_v2(
        buf, start, count, base_offset, base_timestamp, log_append_time, keep, record_maker(native)
    )
    if rows is None:
        return False
    out.extend_rows(rows, total=count)
    return True


def read_legacy_fast(
    data: bytes,
    wrapper_magic: int,
    wrapper_offset: int,
    log_append_time: int | None,
    out: RecordSink,
) -> bool:
    """Hand the records of a compressed v0/v1 wrapper to ``out`` (``data``: its payload,
    decompressed without error or short read): ``True``; or ``False`` having handed out
    nothing: the reference reader decides (``LegacyBatch.read_messages``). Native only: the
    Python side has no fast loop for legacy messages."""
    native = _native.NATIVE
    if native is None:
        return False
    keep = None  # make every record, unless out keeps only some
    if type(out) is RecordList and out.visit is None and out.keep is not None:
        keep = max(0, out.keep - len(out))  # the others are checked and counted only
    result = native.read_legacy_records(
        data,
        0,
        wrapper_magic,
        wrapper_offset,
        log_append_time,
        1 << 62 if keep is None else keep,
        record_maker(native),
    )
    if result is None:
        return False
    count, records = result
    if type(out) is list:
        out.extend(records)
        return True
    if out.keep is None and out.limit is not None and out.total + count > out.limit:
        return False  # the reference reader raises the limit at the exact record
    for r in records:
        out.append(r)
    if keep is not None and count > len(records):
        out.skip(count - len(records))
    return True


def _chunks_or_none(*args: Any) -> Iterator[list[RecordRow] | None]:
    """The chunks of :func:`_loop`, ending with ``None`` where it declines."""
    try:
        yield from _loop(*args)
    except (_Decline, IndexError, DecodeError):
        yield None


def _loop(
    buf: bytes,
    count: int,
    base_offset: int,
    base_timestamp: int,
    lat: int | None,
) -> Iterator[list[RecordRow]]:
    n = len(buf)
    pos = 0
    out: list[RecordRow] = []
    append = out.append
    next_chunk = CHUNK
    rv = read_varint
    rvl = read_varlong
    utf8 = java_utf8
    zz = _ZZ
    keys: dict[bytes, str] = {}  # header keys repeat: decode each distinct one once
    for i in range(count):
        if i == next_chunk:
            yield out
            out = []
            append = out.append
            next_chunk += CHUNK
        b = buf[pos]
        if b < 0x80:
            length = zz[b]
            pos += 1
        else:
            b2 = buf[pos + 1]
            if b2 >= 0x80:
                raise _Decline
            length = zz[(b & 0x7F) | (b2 << 7)]
            pos += 2
        end = pos + length
        if length < 6 or end > n:
            raise _Decline
        attributes = buf[pos]
        b = buf[pos + 1]
        if b < 0x80:
            ts_delta = zz[b]
            pos += 2
        else:
            b2 = buf[pos + 2]
            if b2 < 0x80:
                ts_delta = zz[(b & 0x7F) | (b2 << 7)]
                pos += 3
            else:
                ts_delta, pos = rvl(buf, pos + 1, end)
                if not -_LIMIT < ts_delta < _LIMIT:
                    raise _Decline
        b = buf[pos]
        if b < 0x80:
            offset_delta = zz[b]
            pos += 1
        else:
            b2 = buf[pos + 1]
            if b2 < 0x80:
                offset_delta = zz[(b & 0x7F) | (b2 << 7)]
                pos += 2
            else:
                offset_delta, pos = rv(buf, pos, end)
        b = buf[pos]
        if b < 0x80:
            klen = zz[b]
            pos += 1
        else:
            b2 = buf[pos + 1]
            if b2 < 0x80:
                klen = zz[(b & 0x7F) | (b2 << 7)]
                pos += 2
            else:
                klen, pos = rv(buf, pos, end)
        if klen < 0:
            key = None
        else:
            key = buf[pos : pos + klen]
            pos += klen
        b = buf[pos]
        if b < 0x80:
            vlen = zz[b]
            pos += 1
        else:
            b2 = buf[pos + 1]
            if b2 < 0x80:
                vlen = zz[(b & 0x7F) | (b2 << 7)]
                pos += 2
            else:
                vlen, pos = rv(buf, pos, end)
        if vlen < 0:
            value = None
        else:
            value = buf[pos : pos + vlen]
            pos += vlen
        if pos >= end:
            raise _Decline
        hcount = buf[pos]
        pos += 1
        if hcount == 0:
            headers: tuple[Header, ...] = ()
        elif hcount == 2 and not (b := buf[pos]) & 0x81 and buf[pos + 1 + (b >> 1)] < 0x80:
            # the common single header with one-byte key and value lengths
            pos += 1
            raw_key = buf[pos : pos + (b >> 1)]
            pos += b >> 1
            hkey = keys.get(raw_key)
            if hkey is None:
                try:
                    hkey = raw_key.decode()
                except UnicodeDecodeError:
                    hkey = utf8(raw_key)
                keys[raw_key] = hkey
            hv = zz[buf[pos]]
            pos += 1
            if hv < 0:
                headers = ((hkey, None),)
            else:
                headers = ((hkey, buf[pos : pos + hv]),)
                pos += hv
        else:
            if hcount >= 0x80 or hcount & 1:
                raise _Decline
            hs = []
            for _h in range(hcount >> 1):
                b = buf[pos]
                if b >= 0x80 or b & 1:
                    raise _Decline
                pos += 1
                raw_key = buf[pos : pos + (b >> 1)]
                pos += b >> 1
                hkey = keys.get(raw_key)
                if hkey is None:
                    try:
                        hkey = raw_key.decode()
                    except UnicodeDecodeError:
                        hkey = utf8(raw_key)
                    keys[raw_key] = hkey
                b = buf[pos]
                if b < 0x80:
                    hv = zz[b]
                    pos += 1
                else:
                    hv, pos = rv(buf, pos, end)
                if hv < 0:
                    hs.append((hkey, None))
                else:
                    hs.append((hkey, buf[pos : pos + hv]))
                    pos += hv
            headers = tuple(hs)
        if pos != end:
            raise _Decline
        append(
            (
                base_offset + offset_delta,
                base_timestamp + ts_delta if lat is None else lat,
                key,
                value,
                headers,
                attributes,
                offset_delta,
                ts_delta,
                2,
                None,
                length,
            )
        )
    if pos != n:
        raise _Decline
    yield out
