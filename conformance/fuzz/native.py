"""The ``native`` fuzz target: the native fast path against the pure one and the reference.

The kit reads a v2 batch's records region three ways (``wire.batch.RecordBatchV2.read_records``):
the native extension ``kafka_conformance_native`` (``native/``, docs/native.md), the pure fast
loop (``wire._record_fast``), both only for inputs they are sure about, and the reference
reader (``wire.record``) for everything else. This target holds the first two to the third on
fuzzed input: whatever the native path accepts must be exactly what the reference hands out,
and a decode must give the same verdict whichever path ran.

An input is one selector byte, then a body whose form bit 0 of the selector picks:

=====  ========================================  =============================================
bits   stream form (bit 0 = 0)                   region form (bit 0 = 1)
=====  ========================================  =============================================
1      file mode (else memory)                   log-append time (``LogAppendTime`` batch)
2-4    max_records: default, or 0/1/2/7          codec of the batch the region is wrapped in
5-7    0-4: -; 5/6: also a ``keep`` pass (keep   bit 7: also a start past the buffer's end
       0 / 2); 7: also the strict profile        (must be declined)
=====  ========================================  =============================================

Stream form: the body is a record stream (mostly valid v2 batches of every codec, from the
structure-aware mutator, shape ``native``). Region form: the body is ``count`` (i32),
``base_offset``, ``base_timestamp``, ``log_append_time`` (i64 each), ``keep`` (u16), a pad
length (u8), that many pad bytes, then a records region; it is fed straight to
``read_records_v2(buf, start=pad, ...)`` with those fuzzed values, and also wrapped
(compressed with the selector's codec) into one sealed v2 batch that is decoded.

Checks, every input (a failed one raises a :class:`NativeDivergence`, filed as a crash):

* ``decode(...)`` three times, kafka profile: native on, native off (pure loop), fast path off
  (``batch.FAST_PATH = False``: the reference only); the canonical JSON (``to_dict()``), every
  field of every record (attributes, deltas, size too) and each batch's record total agree;
  selector bits 5-7 (one input in four): the same with ``StreamDecoder(keep=k)`` (native and
  reference), or the strict profile (native CRC-32C) native on and off;
* every v2 records region of the input (a batch's, decompressed when its codec reads without
  error or short read; or the region form's) goes to ``read_records_v2`` directly: a region it
  accepts must be read by the reference without error, to the same rows (all 11 fields; the
  rows read by iteration, index and slice alike) and, where the extension has a
  ``RecordMaker``, to the same ``Record`` objects from ``records()`` (every slot); the pure
  loop is asked too and, when it accepts, held to the same rows; the native CRC-32C of each
  batch equals the C/pure one;
* file-mode stream inputs: the replay's walk (``stream.scan``) with the plain lane
  (``scan_plain``) and without it gives the same regions;
* a ``pyo3_runtime.PanicException`` (a bug in the extension: it must decline, never panic) is
  re-raised as :class:`NativePanic` with the extension's traceback: a crash, never swallowed.

Counters (:func:`counters`: inputs, decodes compared, regions given to ``read_records_v2``,
accepted / declined, the pure loop's accepted / declined, regions the reference refuses, rows
compared, scans compared) go to the worker's stats file and from there into the run's
summary (``counters``).

Without the extension the target refuses to run (:func:`unavailable` says why; the runner and
the worker stop before fuzzing, :func:`t_native` raises :class:`NativeUnavailable`). It loads
the extension itself, so ``KAFKA_CONFORMANCE_PURE=1`` does not turn the comparison off.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter
from types import ModuleType
from typing import Any

from conformance import codecs
from conformance.errors import DecodeError
from conformance.primitives import native as _native
from conformance.primitives.crc import crc32c
from conformance.stream.compare import diff
from conformance.stream.decoder import DEFAULT_MAX_RECORDS, StreamDecoder, decode
from conformance.stream.scan import scan
from conformance.stream.splitter import Splitter
from conformance.wire import batch as _batch
from conformance.wire._record_fast import read_records_fast, record_maker
from conformance.wire.batch import RecordBatchV2, write_batch_v2
from conformance.wire.layout import ATTRIBUTES_OFFSET, RECORDS_OFFSET, TIMESTAMP_TYPE_MASK
from conformance.wire.record import (
    ROW_FIELDS,
    Record,
    read_region,
    read_stream_region,
    write_record_v2,
)

__all__ = [
    "COUNTERS",
    "NativeDivergence",
    "NativePanic",
    "NativeUnavailable",
    "RegionInput",
    "counters",
    "read_region_input",
    "region_stream",
    "seeds",
    "t_native",
    "unavailable",
    "write_region_input",
]

#: the decompressed bytes any one batch may produce (``targets.DECOMPRESSED_LIMIT``, restated:
#: ``targets`` imports this module)
DECOMPRESSED_LIMIT = 1024 * 1024
#: max_records by selector bits 2-4 (stream form)
MAX_RECORDS = (DEFAULT_MAX_RECORDS,) * 4 + (0, 1, 2, 7)
#: the extra pass by selector bits 5-7 (stream form): None, a keep value, or "strict"
EXTRA: tuple[int | str | None, ...] = (None,) * 5 + (0, 2, "strict")
_CODEC_IDS = tuple(codecs.CODECS)
_REGION_HEAD = struct.Struct(">iqqqHB")
_TS = 1_700_000_000_000

COUNTERS: dict[str, int] = dict.fromkeys(
    (
        "inputs",
        "stream_inputs",
        "region_inputs",
        "decodes_compared",
        "regions",
        "native_accepted",
        "native_declined",
        "pure_accepted",
        "pure_declined",
        "reference_refused",
        "rows_compared",
        "scans_compared",
    ),
    0,
)


def counters() -> dict[str, int]:
    """A copy of :data:`COUNTERS` (this process's totals since it started)."""
    return dict(COUNTERS)


class NativeUnavailable(RuntimeError):
    """The extension is not installed (or speaks another API): nothing to compare."""


class NativeDivergence(AssertionError):
    """The native path and the reference disagree (a finding; subclasses name the check)."""


class DecodeDiffers(NativeDivergence):
    """A decode's canonical JSON or records differ between native, pure and reference."""


class RowsDiffer(NativeDivergence):
    """``read_records_v2`` accepted a region and its rows are not the reference's."""


class AcceptedRefused(NativeDivergence):
    """``read_records_v2`` accepted a region the reference reader refuses."""


class PureRowsDiffer(NativeDivergence):
    """The pure fast loop accepted a region and its rows are not the reference's."""


class NativeApiBroken(NativeDivergence):
    """The extension broke its API: a wrong type, length, CRC or error for valid arguments."""


class NativePanic(Exception):  # noqa: N818 - named after pyo3's PanicException
    """``pyo3_runtime.PanicException`` from the extension (the traceback is the extension's)."""


# ------------------------------------------------------------------------------- the module


def _find_module() -> tuple[ModuleType | None, str]:
    if _native.NATIVE is not None:
        return _native.NATIVE, ""
    module, why = _native.choose(honour_pure=False)
    return module, why.removeprefix("pure (").removesuffix(")")


_MODULE, _WHY = _find_module()


def unavailable() -> str | None:
    """Why the target cannot run (None: it can)."""
    if _MODULE is None:
        return (
            f"the native target compares the native extension with the pure path, and {_WHY}: "
            "build it with scripts/build-native (needs cargo), then run again"
        )
    return None


def _module() -> ModuleType:
    if _MODULE is None:
        raise NativeUnavailable(unavailable())
    return _MODULE


def _is_panic(e: BaseException) -> bool:
    return type(e).__name__ == "PanicException"


# ------------------------------------------------------------------------------- the input


@dataclass
class RegionInput:
    """The region form's body (selector bit 0 set)."""

    selector: int
    count: int
    base_offset: int
    base_timestamp: int
    log_append_time: int
    keep: int
    pad: bytes
    region: bytes

    @property
    def codec(self) -> int:
        return _CODEC_IDS[((self.selector >> 2) & 7) % len(_CODEC_IDS)]

    @property
    def lat(self) -> int | None:
        return self.log_append_time if self.selector & 2 else None


def read_region_input(data: bytes) -> RegionInput:
    """The region form of ``data`` (missing header bytes read as zeros)."""
    head = data[1 : 1 + _REGION_HEAD.size].ljust(_REGION_HEAD.size, b"\x00")
    count, base_offset, base_ts, lat, keep, pad_len = _REGION_HEAD.unpack(head)
    body = data[1 + _REGION_HEAD.size :]
    return RegionInput(
        data[0] if data else 1, count, base_offset, base_ts, lat, keep, body[:pad_len],
        body[pad_len:],
    )  # fmt: skip


def write_region_input(r: RegionInput) -> bytes:
    head = _REGION_HEAD.pack(
        r.count, r.base_offset, r.base_timestamp, r.log_append_time, r.keep & 0xFFFF, len(r.pad)
    )
    return bytes([r.selector | 1]) + head + r.pad + r.region


def region_stream(r: RegionInput) -> bytes:
    """The region as the records of one sealed v2 batch (compressed with its codec)."""
    attributes = r.codec | (TIMESTAMP_TYPE_MASK if r.lat is not None else 0)
    payload = r.region if r.codec == codecs.NONE else codecs.write_stream(r.codec, r.region, 2)
    return write_batch_v2(
        base_offset=r.base_offset,
        partition_leader_epoch=0,
        attributes=attributes,
        last_offset_delta=max(0, min(r.count - 1, (1 << 31) - 1)),
        base_timestamp=r.base_timestamp,
        max_timestamp=r.log_append_time if r.lat is not None else r.base_timestamp,
        count=r.count,
        payload=payload,
    )


# ------------------------------------------------------------------------------- the target


def t_native(data: bytes) -> None:
    module = _module()
    if not data:
        return
    COUNTERS["inputs"] += 1
    saved = (_native.NATIVE, _batch.FAST_PATH)
    try:
        if data[0] & 1:
            COUNTERS["region_inputs"] += 1
            _region_form(module, read_region_input(data))
        else:
            COUNTERS["stream_inputs"] += 1
            _stream_form(module, data[0], data[1:])
    except BaseException as e:
        if _is_panic(e):
            raise NativePanic(f"{type(e).__name__}: {e}").with_traceback(e.__traceback__) from e
        raise
    finally:
        _native.NATIVE, _batch.FAST_PATH = saved


def _stream_form(module: ModuleType, selector: int, stream: bytes) -> None:
    mode = "file" if selector & 2 else "memory"
    max_records = MAX_RECORDS[(selector >> 2) & 7]
    _compare_decodes(module, stream, mode, max_records)
    extra = EXTRA[selector >> 5]
    if extra == "strict":
        _compare_strict(module, stream, mode)
    elif extra is not None:
        _compare_keep(module, stream, mode, extra)  # type: ignore[arg-type]
    _check_batches(module, stream)
    if mode == "file":
        _compare_scans(module, stream)


def _compare_scans(module: ModuleType, stream: bytes) -> None:
    """The replay's walk with the plain lane (``scan_plain``) and without it: the same
    regions (every field)."""
    _native.NATIVE, _batch.FAST_PATH = module, True
    with_lane = list(scan(stream))
    without = list(scan(stream, plain_lane=False))
    COUNTERS["scans_compared"] += 1
    if with_lane != without:
        raise NativeDivergence(f"scan regions differ with the plain lane: {with_lane} / {without}")


def _region_form(module: ModuleType, r: RegionInput) -> None:
    buf = r.pad + r.region
    start = len(r.pad)
    if r.selector & 0x80:  # past the end: declined, no exception
        _expect_none(module, buf, len(buf) + 1 + (r.keep & 7), r)
    _check_region(module, buf, start, r.count, r.base_offset, r.base_timestamp, r.lat, r.keep)
    _compare_decodes(module, region_stream(r), "memory", DEFAULT_MAX_RECORDS)


def _expect_none(module: ModuleType, buf: bytes, start: int, r: RegionInput) -> None:
    got = module.read_records_v2(
        buf, start, r.count, r.base_offset, r.base_timestamp, r.lat, r.keep
    )
    if got is not None:
        raise NativeApiBroken(f"start {start} past {len(buf)} bytes was accepted")


# ------------------------------------------------------------------------------- decodes


#: every field of a record (the control record's parsed key and value too)
_fields = attrgetter(*Record.__slots__)
_row = attrgetter(*ROW_FIELDS)


def _signature(result: Any) -> tuple[dict[str, Any], list[Any]]:
    doc = result.to_dict()
    rows = [
        (b.header.position, b.records.total, [_fields(r) for r in b.records])
        for b in result.batches
    ]
    return doc, rows


def _same(label: str, ref: tuple[dict[str, Any], list[Any]], got: tuple[Any, Any]) -> None:
    if got[0] != ref[0]:
        lines = diff(ref[0], got[0], parties=("reference", label))
        raise DecodeDiffers(f"canonical JSON, {label} vs reference: {'; '.join(lines[:4])}")
    if got[1] != ref[1]:
        for (pos, total, recs), (rpos, rtotal, rrecs) in zip(got[1], ref[1], strict=False):
            if (pos, total) != (rpos, rtotal):
                raise DecodeDiffers(f"{label}: batch @{pos} total {total}, reference {rtotal}")
            for i, (a, b) in enumerate(zip(recs, rrecs, strict=False)):
                if a != b:
                    raise DecodeDiffers(f"{label}: batch @{pos} record {i}: {a!r} != {b!r}")
        raise DecodeDiffers(f"{label}: records differ from the reference's")


def _decode_with(native: ModuleType | None, fast: bool, data: bytes, **kw: Any) -> Any:
    _native.NATIVE, _batch.FAST_PATH = native, fast
    return _signature(decode(data, decompressed_limit=DECOMPRESSED_LIMIT, **kw))


def _compare_decodes(module: ModuleType, data: bytes, mode: str, max_records: int) -> None:
    kw = {"mode": mode, "max_records": max_records}
    ref = _decode_with(None, False, data, **kw)
    _same("native", ref, _decode_with(module, True, data, **kw))
    _same("pure", ref, _decode_with(None, True, data, **kw))
    COUNTERS["decodes_compared"] += 1


def _keep_pass(native: ModuleType | None, fast: bool, data: bytes, mode: str, keep: int) -> Any:
    _native.NATIVE, _batch.FAST_PATH = native, fast
    sd = StreamDecoder(data, mode=mode, keep=keep, decompressed_limit=DECOMPRESSED_LIMIT)  # type: ignore[arg-type]
    batches = [
        (b.header.position, b.records.total, len(b.records), [_fields(r) for r in b.records])
        for b in sd
    ]
    return sd.outcome, sd.error.to_dict() if sd.error else None, batches


def _compare_keep(module: ModuleType, data: bytes, mode: str, keep: int) -> None:
    ref = _keep_pass(None, False, data, mode, keep)
    got = _keep_pass(module, True, data, mode, keep)
    if got != ref:
        raise DecodeDiffers(f"keep={keep}: native {got!r:.600} != reference {ref!r:.600}")


def _compare_strict(module: ModuleType, data: bytes, mode: str) -> None:
    ref = _decode_with(None, True, data, mode=mode, profile="strict")
    _same("native strict", ref, _decode_with(module, True, data, mode=mode, profile="strict"))


# ------------------------------------------------------------------------------- regions


def _check_batches(module: ModuleType, stream: bytes) -> None:
    """Every v2 batch of ``stream``: its CRC-32C, and its records region given directly."""
    _native.NATIVE, _batch.FAST_PATH = None, True
    try:
        for b in Splitter(stream):
            if isinstance(b, RecordBatchV2) and len(b.raw) >= RECORDS_OFFSET:
                _check_batch(module, b)
    except DecodeError:
        pass


def _check_batch(module: ModuleType, b: RecordBatchV2) -> None:
    raw = b.raw
    if type(raw) is not bytes:
        raw = bytes(raw)
    native_crc = module.crc32c(raw, ATTRIBUTES_OFFSET)
    if native_crc != crc32c(raw[ATTRIBUTES_OFFSET:]):
        raise NativeApiBroken(f"crc32c {native_crc:#x} != {crc32c(raw[ATTRIBUTES_OFFSET:]):#x}")
    try:
        module.crc32c(raw, len(raw) + 1)
    except ValueError:
        pass
    else:
        raise NativeApiBroken("crc32c past the end raised no ValueError")
    lat = b.max_timestamp if b.attributes_raw & TIMESTAMP_TYPE_MASK else None
    codec = b.attributes_raw & 7
    count = b.records_count
    if codec == codecs.NONE:
        _check_region(module, raw, RECORDS_OFFSET, count, b.base_offset, b.base_timestamp, lat)
        return
    if codec not in codecs.CODECS:
        return
    try:
        stream = codecs.read_stream(codec, raw[RECORDS_OFFSET:], 2, DECOMPRESSED_LIMIT)
    except DecodeError:
        return
    if stream.error is not None or not all(stream.pieces):
        return  # Java reads such a stream piece by piece: never the fast path's business
    data = stream.pieces[0] if len(stream.pieces) == 1 else stream.data
    _check_region(
        module, bytes(data), 0, count, b.base_offset, b.base_timestamp, lat, stream=stream
    )


def _check_region(
    module: ModuleType,
    buf: bytes,
    start: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    lat: int | None,
    keep: int | None = None,
    *,
    stream: Any = None,
) -> None:
    """``read_records_v2`` on one region: accepted rows are the reference's (all fields)."""
    keep = count if keep is None else keep
    COUNTERS["regions"] += 1
    args = (buf, start, count, base_offset, base_timestamp, lat, keep)
    maker = record_maker(module)
    rows = module.read_records_v2(*args, maker)
    if rows is None:
        COUNTERS["native_declined"] += 1
    else:
        COUNTERS["native_accepted"] += 1
    if count < 0 or count > len(buf):
        if rows is not None and count:
            raise AcceptedRefused(f"count {count} over {len(buf) - start} bytes was accepted")
        return  # a record takes at least 7 bytes: nothing for the reference to read
    ref: list[Record] = []
    try:
        if stream is None:
            read_region(buf[start:], count, base_offset, base_timestamp, lat, ref)
        else:
            read_stream_region(stream, count, base_offset, base_timestamp, lat, ref)
        refused: DecodeError | None = None
    except DecodeError as e:
        refused = e
        COUNTERS["reference_refused"] += 1
    pure: list[Record] = []
    _native.NATIVE = None
    if read_records_fast(buf, count, base_offset, base_timestamp, lat, pure, start):
        COUNTERS["pure_accepted"] += 1
        if refused is not None:
            raise PureRowsDiffer(f"pure loop accepted a region the reference refuses: {refused}")
        _same_rows(PureRowsDiffer, "pure", [_row(r) for r in pure], ref)
    else:
        COUNTERS["pure_declined"] += 1
    if rows is None:
        return
    if refused is not None:
        raise AcceptedRefused(
            f"read_records_v2 accepted {count} records the reference refuses: "
            f"{type(refused).__name__}: {refused}"
        )
    kept = min(keep, count)
    if len(rows) != kept:
        raise NativeApiBroken(f"len(rows) {len(rows)}, expected min(keep, count) = {kept}")
    got = list(rows)
    if got and (rows[-1] != got[-1] or rows[0 : len(got) : 2] != got[::2]):
        raise NativeApiBroken("indexing or slicing the rows differs from iterating them")
    _same_rows(RowsDiffer, "native", [tuple(row) for row in got], ref[:kept])
    # the same rows made as Record objects, slot by slot
    made = list(rows.records())
    if any(type(r) is not Record for r in made):
        raise NativeApiBroken(f"records() made {sorted({type(r).__name__ for r in made})}")
    want = [_fields(r) for r in ref[:kept]]
    if [_fields(r) for r in made] != want:
        raise RowsDiffer(f"native records(): {[_fields(r) for r in made]!r:.600} != {want!r:.600}")
    COUNTERS["rows_compared"] += kept


def _same_rows(
    error: type[NativeDivergence], label: str, got: list[tuple[Any, ...]], ref: list[Record]
) -> None:
    want = [_row(r) for r in ref]
    if len(got) != len(want):
        raise error(f"{label}: {len(got)} rows, reference {len(want)}")
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        if a != b:
            raise error(f"{label} row {i}: {a!r} != reference {b!r}")


# ------------------------------------------------------------------------------- seeds


def _record_variants() -> Iterator[list[bytes]]:
    """Records regions the native path accepts, and some it declines (deliberately)."""
    yield [write_record_v2(0, 0, None, b"v0"), write_record_v2(1, 5, b"k1", b"v1", [("h", b"x")])]
    yield [write_record_v2(i, i * 7, b"k%d" % i, b"value-%d" % i) for i in range(20)]
    yield [write_record_v2(0, 0, b"", b"", [("a", None), ("b", b""), ("é", b"\xff")])]
    yield [write_record_v2(0, 0, None, None)]
    yield [write_record_v2(0, 0, b"k" * 200, b"v" * 9000)]  # 2- and 3-byte lengths
    yield [write_record_v2(3, -(1 << 40), None, b"x"), write_record_v2(-2, 1 << 50, None, b"y")]
    yield [write_record_v2((1 << 31) - 1, (1 << 62) - 1, None, b"z", attributes=0xFF)]
    yield [write_record_v2(0, 0, None, b"v", [(f"h{i}", str(i).encode()) for i in range(40)])]
    yield [write_record_v2(0, 0, None, b"v", [(b"\xc3\x28", b"bad utf-8")])]  # declined
    yield [write_record_v2(0, 0, None, b"v", [("k" * 70, b"long key")])]  # declined
    yield [write_record_v2(0, b"\x80\x80\x80\x80\x00", None, b"v")]  # 5-byte varint: declined
    yield [write_record_v2(0, 0, None, b"v", trailing=b"\x00")]  # trailing byte: declined


def seeds() -> Iterator[bytes]:
    """Built-in seeds (no ``corpora/`` needed): every codec, both forms, every selector path."""
    for n, records in enumerate(_record_variants()):
        region = b"".join(records)
        for codec in _CODEC_IDS:
            for lat in (False, True):
                r = RegionInput(
                    1 | (2 if lat else 0) | (_CODEC_IDS.index(codec) << 2),
                    len(records), 1000 * n, _TS, _TS + 99, len(records), b"", region,
                )  # fmt: skip
                batch = region_stream(r)
                selector = (4 + n % 4) << 5 if n % 2 else 0
                selector |= 2 if lat else 0
                yield bytes([selector]) + batch + batch
                yield write_region_input(r)
        yield write_region_input(
            RegionInput(0x81, len(records), (1 << 62) - 1, -(1 << 62), 0, 1, b"\x00" * 5, region)
        )
        yield write_region_input(RegionInput(1, len(records) + 1, 0, 0, 0, 2, b"", region))
