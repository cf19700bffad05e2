"""The crafted edge-case corpus: hand-built inputs for every rule of the spec and the bug list.

Every case is written from ``spec/kafka-record-format.md`` (sections 1-5, Appendix A) or from a
bug of ``research/third-party-implementations.md`` section 2 (ids ``C1``..``C69``; a case built
from a bug carries the id in its name, e.g. ``snappy-raw-c11``). Expectations are **never**
written here: ``scripts/make-crafted-corpus`` runs the Java oracle (Kafka's own classes) on
these bytes and stores its documents next to them.

>>> from conformance.corpus.crafted import cases
>>> [c.name for c in cases()][:2]           # doctest: +SKIP
['split-empty', 'split-tail-00']

Byte builders (usable on their own, e.g. in tests):

* :func:`v2_record` - one v2 record (``length`` / ``body`` overrides for malformed ones);
* :func:`v2_batch` - one v2 batch; ``crc=`` keeps a given (wrong) CRC, ``batch_length=`` a
  given length; :func:`reseal` recomputes batchLength and CRC-32C after fields were corrupted;
* :func:`legacy_message` - one v0/v1 entry (CRC-32 computed unless ``crc=`` is given);
* :func:`legacy_wrapper` - a compressed v0/v1 wrapper around inner entries;
* :func:`lz4_custom`, :func:`xerial`, :func:`gzip_member`, :func:`zstd_raw_frame` - codec
  framings with every knob the cases need.

Case areas (name prefixes): ``split-`` (spec §1.2/§1.3), ``v2-`` (§3.1-3.3), ``rec-`` (§3.4,
§3.5), ``varint-`` (§3.6), ``hdr-`` (record headers, §3.4/§3.5), ``ctl-`` (§3.7), ``legacy-``
(§2), ``gzip-`` / ``snappy-`` / ``lz4-`` / ``zstd-`` / ``codec-`` (§5), ``mixed-`` (several
formats in one input). Cases about splitting run in both modes; the others in ``memory``.
"""

from __future__ import annotations

import hashlib
import re
import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from conformance import codecs
from conformance.primitives.crc import crc32, crc32c, xxh32
from conformance.wire.builder import seal_v2
from conformance.primitives.varint import encode_unsigned_varint, encode_varint, encode_varlong

__all__ = [
    "AREAS",
    "Case",
    "TS",
    "cases",
    "gzip_member",
    "legacy_message",
    "legacy_wrapper",
    "lz4_custom",
    "patch",
    "reseal",
    "v2_batch",
    "v2_record",
    "xerial",
    "zstd_raw_frame",
]

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
_BOTH = ("memory", "file")
_MEMORY = ("memory",)


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    description: str
    data: bytes
    modes: tuple[str, ...]


# ============================================================================ small helpers


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


# ============================================================================ v2 builders


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


# ============================================================================ legacy builders


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


# ============================================================================ codec framings


def lz4_block(data: bytes) -> bytes:
    import lz4.block

    return bytes(lz4.block.compress(data, store_size=False))


LZ4_MAGIC = b"\x04\x22\x4d\x18"


def lz4_custom(
    blocks: Sequence[bytes | tuple[bytes, str]],
    *,
    flg: int = 0x60,
    bd: int = 0x40,
    content_size: int | None = None,
    hc: str | int = "correct",
    block_checksum: bool | str = False,
    content_checksum: bool | int | str = False,
    end_mark: bool = True,
    trailer: bytes = b"",
) -> bytes:
    """A hand-made LZ4 frame (spec §5.4).

    ``blocks``: each a data chunk (compressed) or ``(chunk, "raw"|"lz4"|"size:<hex>")``.
    ``hc``: "correct" (xxh32 of FLG..content size), "broken" (over magic+descriptor, the
    KAFKA-3160 bug) or an explicit byte. FLG bits 3/4/2 are set from ``content_size``,
    ``block_checksum`` and ``content_checksum`` when those are given. ``block_checksum="bad"``
    stores wrong block checksums; ``content_checksum`` True = correct, an int = that value,
    "missing" = flag set but no checksum bytes.
    """
    if content_size is not None:
        flg |= 0x08
    if block_checksum:
        flg |= 0x10
    if content_checksum is not False:
        flg |= 0x04
    desc = bytes([flg & 0xFF, bd & 0xFF])
    if content_size is not None:
        desc += struct.pack("<Q", content_size)
    if hc == "correct":
        hcb = (xxh32(desc) >> 8) & 0xFF
    elif hc == "broken":
        hcb = (xxh32(LZ4_MAGIC + desc) >> 8) & 0xFF
    else:
        hcb = int(hc) & 0xFF
    parts = [LZ4_MAGIC, desc, bytes([hcb])]
    whole = bytearray()
    for blk in blocks:
        kind = "lz4"
        if isinstance(blk, tuple):
            blk, kind = blk
        whole += blk
        if kind == "raw":
            stored, size = blk, len(blk) | 0x80000000
        elif kind.startswith("size:"):
            stored, size = lz4_block(blk), int(kind[5:], 16)
        else:
            stored = lz4_block(blk)
            size = len(stored)
        parts.append(struct.pack("<I", size))
        parts.append(stored)
        if block_checksum:
            cs = xxh32(stored)
            if block_checksum == "bad":
                cs ^= 0xFFFFFFFF
            parts.append(struct.pack("<I", cs))
    if end_mark:
        parts.append(b"\x00\x00\x00\x00")
    if content_checksum is True:
        parts.append(struct.pack("<I", xxh32(bytes(whole))))
    elif isinstance(content_checksum, int) and not isinstance(content_checksum, bool):
        parts.append(struct.pack("<I", content_checksum & 0xFFFFFFFF))
    parts.append(trailer)
    return b"".join(parts)


XERIAL_MAGIC = b"\x82SNAPPY\x00"


def xerial_header(version: int = 1, compat: int = 1, *, little_endian: bool = False) -> bytes:
    fmt = "<ii" if little_endian else ">ii"
    return XERIAL_MAGIC + struct.pack(fmt, version, compat)


def xerial(
    chunks: Sequence[bytes], *, header: bytes | None = None, block: int | None = None
) -> bytes:
    """xerial framing: header then ``int32 length | raw snappy block`` per chunk (spec §5.3).

    ``chunks`` are uncompressed pieces (each compressed as one raw block); ``block`` splits
    one piece further (SnappyOutputStream's 32 KiB input blocks).
    """
    parts = [xerial_header() if header is None else header]
    pieces: list[bytes] = []
    for c in chunks:
        if block:
            pieces.extend(c[i : i + block] for i in range(0, len(c), block))
        else:
            pieces.append(c)
    for p in pieces:
        raw = codecs.snappy_raw(p)
        parts.append(struct.pack(">i", len(raw)) + raw)
    return b"".join(parts)


def gzip_member(
    data: bytes,
    *,
    flags: int = 0,
    extra: bytes = b"",
    fname: bytes = b"",
    comment: bytes = b"",
    hcrc: int | None = None,
    method: int = 8,
    os_byte: int = 0xFF,
    level: int = 6,
    crc: int | None = None,
    isize: int | None = None,
    magic: bytes = b"\x1f\x8b",
) -> bytes:
    """One RFC 1952 member with optional FEXTRA/FNAME/FCOMMENT/FHCRC (spec §5.2)."""
    if extra:
        flags |= 0x04
    if fname:
        flags |= 0x08
    if comment:
        flags |= 0x10
    if hcrc is not None:
        flags |= 0x02
    hdr = magic + bytes([method, flags]) + b"\x00\x00\x00\x00" + bytes([0, os_byte])
    if extra:
        hdr += struct.pack("<H", len(extra)) + extra
    if fname:
        hdr += fname + b"\x00"
    if comment:
        hdr += comment + b"\x00"
    if hcrc is not None:
        good = zlib.crc32(hdr) & 0xFFFF
        hdr += struct.pack("<H", good if hcrc == -1 else hcrc)
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    trailer = struct.pack(
        "<II",
        (zlib.crc32(data) & 0xFFFFFFFF) if crc is None else crc,
        (len(data) & 0xFFFFFFFF) if isize is None else isize,
    )
    return hdr + body + trailer


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_raw_frame(
    data: bytes,
    *,
    content_size: int | None = None,
    fcs_bytes: int = 8,
    checksum: bool | int = False,
    block: int = 64 * 1024,
) -> bytes:
    """A zstd frame made of raw (stored) blocks, with full control of the header.

    ``content_size`` None: no Frame_Content_Size (window descriptor instead); otherwise the
    size is written in ``fcs_bytes`` (8 or 4) bytes with Single_Segment off. ``checksum``
    True = correct XXH64 low 32 bits; an int = that value.
    """
    import xxhash

    fcs_flag = {0: 0, 4: 2, 8: 3}[fcs_bytes if content_size is not None else 0]
    fhd = (fcs_flag << 6) | (0x04 if checksum is not False else 0)
    hdr = ZSTD_MAGIC + bytes([fhd])
    hdr += bytes([(20 - 10) << 3])  # window descriptor: 1 MiB window
    if content_size is not None:
        hdr += content_size.to_bytes(fcs_bytes, "little")
    blocks = []
    pieces = [data[i : i + block] for i in range(0, len(data), block)] or [b""]
    for i, p in enumerate(pieces):
        last = 1 if i == len(pieces) - 1 else 0
        bh = last | (0 << 1) | (len(p) << 3)
        blocks.append(bh.to_bytes(3, "little") + p)
    out = hdr + b"".join(blocks)
    if checksum is True:
        out += struct.pack("<I", xxhash.xxh64_intdigest(data) & 0xFFFFFFFF)
    elif checksum is not False:
        out += struct.pack("<I", int(checksum) & 0xFFFFFFFF)
    return out


def zstd_std(data: bytes, *, content_size: bool = True, checksum: bool = False) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(
        level=3, write_content_size=content_size, write_checksum=checksum
    ).compress(data)


# ============================================================================ control records


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


# ============================================================================ the cases


class _Collector:
    def __init__(self) -> None:
        self.items: list[Case] = []
        self.names: set[str] = set()

    def __call__(self, name: str, description: str, data: bytes, modes: Sequence[str] | None = None) -> None:
        if not _NAME_RE.match(name) or not name.startswith(AREAS):
            raise ValueError(f"bad case name {name!r}")
        if name in self.names:
            raise ValueError(f"duplicate case name {name!r}")
        if modes is None:
            modes = _BOTH if name.startswith(("split-", "mixed-")) else _MEMORY
        if len(data) >= 200 * 1024:
            raise ValueError(f"case {name} is too large: {len(data)} bytes")
        self.names.add(name)
        self.items.append(Case(name, description, bytes(data), tuple(modes)))


def _split_cases(add: _Collector) -> None:
    good = simple_batch(2, base_offset=0)
    nxt = simple_batch(3, base_offset=2)
    add("split-empty", "§1.2/§1.3: empty input: no batches, outcome ok", b"")
    for n in range(18):
        add(
            f"split-tail-{n:02d}",
            f"§1.2/§1.3: a complete batch followed by the first {n} bytes of another "
            "(size field valid); memory ignores tails < size, file ignores <= 17 bytes",
            good + nxt[:n],
        )
    for n in (11, 12, 13, 16, 17, 18, 20):
        add(
            f"split-zero-tail-{n:02d}",
            f"§1.2/§1.3/§6.2: a complete batch followed by {n} zero bytes (size 0 < 14: "
            "memory raises from 12 bytes on, file ignores up to 17)",
            good + bytes(n),
        )
    add("split-17-zero-bytes", "§1.3: exactly 17 zero bytes: file ignores, memory raises size 0 < 14", bytes(17))
    add("split-18-zero-bytes", "§1.3: 18 zero bytes: both modes see size 0 < 14", bytes(18))
    add("split-12-zero-bytes", "§1.2: 12 zero bytes: memory raises (size < 14 before the 17-byte check)", bytes(12))
    add("split-11-bytes", "§1.2: fewer than 12 bytes: ignored silently", good[:11])
    for size in (13, 0, -1, 1):
        tag = f"m{-size}" if size < 0 else str(size)
        add(
            f"split-size-{tag}",
            f"§1.2 step 2/§1.3 step 2: entry size field {size} < 14 (followed by a full v2 header)",
            patch(good, 8, ">i", size),
        )
    add(
        "split-size-13-alone-12",
        "§1.2: a 12-byte fragment whose size field is 13 raises even though it is incomplete",
        patch(good, 8, ">i", 13)[:12],
    )
    add(
        "split-size-14-frag-16",
        "§1.2: a 16-byte fragment whose size field is 14 is ignored (needs 26 bytes)",
        patch(good, 8, ">i", 14)[:16],
    )
    add(
        "split-size-14-v2",
        "§1.2: magic-2 entry with size 14 (26 bytes) passes splitting; ensureValid fails (< 61)",
        patch(good, 8, ">i", 14)[:26],
    )
    add(
        "split-size-48-v2",
        "§1.2/§3.1: magic-2 entry with size 48 (60 bytes): 'smaller than the minimum allowed overhead 61'",
        patch(good, 8, ">i", 48)[:60],
    )
    add(
        "split-size-49-v2-empty",
        "§3.1: minimal v2 batch (size 49 = 61 bytes) with count 0: valid",
        v2_batch([], count=0),
    )
    add(
        "split-size-max-int",
        "§1.2: size 0x7FFFFFFF: memory overflows size+12 (raw IAE newLimit < 0); file: partial",
        patch(good, 8, ">i", 0x7FFFFFFF),
    )
    add(
        "split-size-negative-c57",
        "C57/§1.2: batch length 0x80000000 (high bit set) must not panic: size < 14",
        patch(good, 8, ">I", 0x80000000),
    )
    add(
        "split-size-overflowing",
        "§1.2 step 5: size larger than the input (no max in MemoryRecords): partial tail",
        patch(good, 8, ">i", len(good) + 100),
    )
    add(
        "split-size-too-small-for-content",
        "§1.2/§3.1: batchLength 5 short of the true length: the cut batch's CRC range shrinks (mismatch)",
        patch(good, 8, ">i", len(good) - 12 - 5),
    )
    for m in (3, 127, -1, -128):
        tag = f"m{-m}" if m < 0 else str(m)
        add(
            f"split-bad-magic-{tag}",
            f"§1.2 step 4/§1.3 step 4: magic {m} (CRC-valid v2 layout): memory raises, file has no range check",
            patch(good, 16, ">b", m),
        )
    add(
        "split-bad-magic-partial",
        "§1.2: 17-byte fragment with invalid magic 5 raises in memory even though incomplete",
        patch(good, 16, ">b", 5)[:17],
    )
    add(
        "split-bad-magic-partial-30",
        "§1.2/§1.3: 30-byte fragment of a batch with magic 9: memory raises, file stops (partial)",
        patch(good, 16, ">b", 9)[:30],
    )
    add(
        "split-bad-magic-after-good",
        "§1.2: good batch then a complete entry with magic 4: error at batch_index 1",
        good + patch(nxt, 16, ">b", 4),
    )
    add(
        "split-partial-only-c4",
        "C4/§1.2: only a truncated batch (first 40%): no batch, partial tail",
        nxt[: len(nxt) * 2 // 5],
    )
    add(
        "split-partial-trailing-c1",
        "C1/C7/§1.2: two complete v2 batches + first 40% of a third: 2 batches, partial tail",
        good + nxt + simple_batch(4, base_offset=5)[: len(simple_batch(4)) * 2 // 5],
    )
    for cut in (12, 17, 40, 60, 61, len(nxt) - 1):
        add(
            f"split-truncated-at-{cut}-c2",
            f"C2/§1.2: single v2 batch truncated to {cut} bytes: partial, no error",
            nxt[:cut],
        )
    big = simple_batch(40, value_size=400, base_offset=100, max_timestamp=TS + 39)
    add(
        "split-large-batch-partial-c66",
        "C66/§1.2: only the first 4000 bytes of a ~17 KB batch (fetch size too small): partial",
        big[:4000],
    )
    add(
        "split-poison-after-batch-c5",
        "C5/§1.2: a complete batch followed by bytes of another stream ('poison' text): ignored or raise per size/magic",
        good + b"POISON-NEXT-PARTITION-BYTES....",
    )
    add(
        "split-offsets-non-monotonic",
        "§1.2: batch offsets are not checked: batch 100 then batch 5 then batch 100",
        simple_batch(2, base_offset=100) + simple_batch(2, base_offset=5) + simple_batch(1, base_offset=100),
    )
    add(
        "split-three-batches",
        "§1.2/§1.3: three complete v2 batches back to back: ok",
        good + nxt + simple_batch(1, base_offset=5),
    )
    add(
        "split-magic-3-crc-valid",
        "§1.3 step 4: magic 3 with a full, CRC-valid v2 body: memory raises, file reads it as v2",
        patch(good, 16, ">b", 3),
    )
    add(
        "split-magic-m1-legacy-layout",
        "§1.3 step 4: v1-layout message with magic -1 and a valid CRC-32: memory raises, file takes it for legacy",
        legacy_message(b"k", b"v", magic=-1),
    )
    add(
        "split-legacy-tail-9",
        "§1.2/§1.3: v1 message followed by 9 bytes of another: ignored in both modes",
        legacy_message(offset=0) + legacy_message(offset=1)[:9],
    )
    add(
        "split-legacy-size-13",
        "§1.2/§1.3: legacy entry whose size field is 13 after a good message",
        legacy_message(offset=0) + patch(legacy_message(offset=1), 8, ">i", 13),
    )
    add(
        "split-overflow-message-c64",
        "C64/§1.2: v1 set whose last entry (offset -1, down-conversion overflow) is truncated: partial",
        legacy_message(b"a", b"1", offset=0)
        + legacy_message(b"b", b"2", offset=1)
        + legacy_message(b"c", text(300), offset=-1)[:60],
    )
    add(
        "split-truncated-lz4-batch-c3",
        "C3/§1.2: trailing LZ4 v2 batch truncated inside its compressed payload: partial",
        good + simple_batch(5, attributes=LZ4, base_offset=2, value_size=200)[:150],
    )


def _v2_cases(add: _Collector) -> None:
    a1 = bytes.fromhex(
        "0000000000000064 00000057 ffffffff 02 57fd8bed 0000 00000002 0000018bcfe56800 "
        "0000018bcfe56805 ffffffffffffffff ffff ffffffff 00000003 "
        "26 00 00 00 04 6b30 04 7630 04 04 6831 02 78 04 6832 01 "
        "10 00 0a 02 01 04 7631 00 "
        "10 00 13 04 04 6b32 01 00".replace(" ", "")
    )
    built = v2_batch(
        [
            v2_record(b"k0", b"v0", [("h1", b"x"), ("h2", None)]),
            v2_record(None, b"v1", offset_delta=1, timestamp_delta=5),
            v2_record(b"k2", None, offset_delta=2, timestamp_delta=-10),
        ],
        base_offset=100,
        max_timestamp=TS + 5,
    )
    if built != a1:  # pragma: no cover - guards the builders against the spec's reference bytes
        raise AssertionError("v2_batch does not reproduce spec Appendix A.1")
    add("v2-appendix-a1", "Appendix A.1: Java-written batch, 3 records (headers, null key, null value)", a1)
    add("v2-empty-batch", "§3.1/§3.5: count 0, no record bytes: empty record list", v2_batch([], count=0))
    add(
        "v2-log-append-time-c47",
        "C47/§3.3: LogAppendTime (bit 3): every record reports maxTimestamp, decoy base/deltas",
        v2_batch(
            [v2_record(b"a", b"1", timestamp_delta=77), v2_record(b"b", b"2", offset_delta=1, timestamp_delta=-9)],
            attributes=ATTR_LOG_APPEND_TIME,
            base_timestamp=12345,
            max_timestamp=TS + 999,
        ),
    )
    add(
        "v2-log-append-time-base-create-c48",
        "C48/§3.1: LogAppendTime batch whose baseTimestamp stays a create time < maxTimestamp",
        simple_batch(3, attributes=ATTR_LOG_APPEND_TIME, max_timestamp=TS + 60_000),
    )
    add(
        "v2-delete-horizon-c51",
        "C51/§3.2/§3.3: bit 6 set: deleteHorizonMs = baseTimestamp, records still base+delta (tombstone)",
        v2_batch(
            [v2_record(b"gone", None), v2_record(b"k", b"v", offset_delta=1, timestamp_delta=-3)],
            attributes=ATTR_DELETE_HORIZON,
            base_timestamp=TS + 86_400_000,
        ),
    )
    add(
        "v2-delete-horizon-lat",
        "§3.2/§3.3: bits 6 and 3: delete horizon plus LogAppendTime (records report maxTimestamp)",
        simple_batch(2, attributes=ATTR_DELETE_HORIZON | ATTR_LOG_APPEND_TIME, max_timestamp=TS + 5),
    )
    add(
        "v2-transactional",
        "§3.2: transactional bit 4 with producer id/epoch/sequence",
        simple_batch(3, attributes=ATTR_TRANSACTIONAL, producer_id=77, producer_epoch=2, base_sequence=10),
    )
    add(
        "v2-idempotent",
        "§3.3: producerId >= 0, baseSequence 5 -> lastSequence 7, record sequences",
        simple_batch(3, producer_id=9000, producer_epoch=0, base_sequence=5),
    )
    add(
        "v2-last-sequence-wrap",
        "§3.3: baseSequence 2^31-2 with lastOffsetDelta 4 wraps lastSequence to 2",
        simple_batch(5, producer_id=1, producer_epoch=1, base_sequence=0x7FFFFFFE),
    )
    add(
        "v2-attr-high-byte",
        "§3.2: attribute high byte 0xFF set (CRC-covered): readers ignore it",
        simple_batch(2, attributes=0xFF00),
    )
    add(
        "v2-attr-bit7",
        "C51/§3.2: reserved attribute bit 7 set: ignored",
        simple_batch(2, attributes=0x80),
    )
    add(
        "v2-attr-all-bits",
        "§3.2: attributes 0xFFF8 (every non-codec bit incl. control+txn, codec none), 1 record",
        v2_batch([v2_record(ctl_key(1), ctl_value())], attributes=0xFFF8, producer_id=5, producer_epoch=1),
    )
    for codec in (5, 6, 7):
        add(
            f"v2-codec-{codec}-count-0",
            f"§3.2/§3.5: codec id {codec} with count 0 (spec: count 0 never looks at the codec; "
            "true for iterator(), streamingIterator() is what the consumer uses)",
            v2_batch([], attributes=codec, count=0, payload=b"\x01\x02\x03"),
        )
        add(
            f"v2-codec-{codec}-count-1",
            f"§3.2/§4.2: codec id {codec} with count 1: IAE 'Unknown compression type id: {codec}'",
            v2_batch([], attributes=codec, count=1, payload=v2_record()),
        )
    # CRC with the high bit set (C61)
    i = 0
    while True:
        b = simple_batch(2, base_offset=0, producer_id=i)
        if struct.unpack_from(">I", b, 17)[0] & 0x80000000:
            break
        i += 1
    add("v2-crc-high-bit-c61", "C61/§3.1: stored CRC with the high bit set (uint32 compare)", b)
    add(
        "v2-crc-high-bit-wrong-c61",
        "C61/§3.1: CRC-32C with high bit set, stored value differs only in the sign bit",
        patch(b, 17, ">I", struct.unpack_from(">I", b, 17)[0] ^ 0x80000000),
    )
    base = simple_batch(3, base_offset=50, producer_id=3, producer_epoch=1, base_sequence=0)
    covered = [
        ("attributes", 21, ">h", 0x0100),
        ("last-offset-delta", 23, ">i", 5),
        ("base-timestamp", 27, ">q", TS - 1),
        ("max-timestamp", 35, ">q", TS + 100),
        ("producer-id", 43, ">q", 4),
        ("producer-epoch", 51, ">h", 2),
        ("base-sequence", 53, ">i", 1),
        ("records-count", 57, ">i", 2),
    ]
    for field_name, off, fmt, val in covered:
        add(
            f"v2-crc-covered-{field_name}-c62",
            f"C62/§3.1: {field_name} @{off} changed without resealing: CRC mismatch",
            patch(base, off, fmt, val),
        )
    add(
        "v2-crc-covered-records-c60",
        "C60/§3.1: one bit flipped in the first record's key, stale CRC: ensureValid fails",
        flip(base, 61 + 6, 0x01),
    )
    add(
        "v2-crc-covered-attributes-resealed-c62",
        "C62/§3.2: attribute high byte changed and CRC recomputed: accepted",
        reseal(patch(base, 21, ">h", 0x0100)),
    )
    uncovered = [
        ("base-offset", 0, ">q", 123456),
        ("partition-leader-epoch", 12, ">i", 99),
    ]
    for field_name, off, fmt, val in uncovered:
        add(
            f"v2-crc-uncovered-{field_name}-c62",
            f"C62/§3.1: {field_name} @{off} changed: outside the CRC, still valid",
            patch(base, off, fmt, val),
        )
    add(
        "v2-crc-uncovered-magic-c62",
        "C62/§3.1/§1.3: magic changed to 3: outside the CRC (memory rejects the magic, file reads v2)",
        patch(base, 16, ">b", 3),
        _BOTH,
    )
    add("v2-crc-zero", "§3.1: stored CRC 0 on a valid body: mismatch", patch(base, 17, ">I", 0))
    add("v2-crc-bit-flipped", "§3.1: stored CRC with one bit flipped", flip(base, 20, 0x10))
    add(
        "v2-crc-wrong-uncompressed-corrupt-c6",
        "C6/§3.1: 5 records, 2nd corrupted (length byte), stale CRC: rejected at ensureValid, not partial",
        flip(simple_batch(5), 61 + len(simple_records(1)[0]), 0x02),
    )
    add(
        "v2-record-corrupt-resealed-c6",
        "C6/§3.5: 5 records, 2nd corrupted (length byte), CRC recomputed: record-level error after 1 record",
        reseal(flip(simple_batch(5), 61 + len(simple_records(1)[0]), 0x02)),
    )
    add(
        "v2-corrupt-middle-batch-c63",
        "C63: three batches, the middle one has a bad CRC: error at batch_index 1, first batch kept",
        simple_batch(1, base_offset=0) + patch(simple_batch(1, base_offset=1), 17, ">I", 1) + simple_batch(1, base_offset=2),
    )
    add("v2-count-negative-c55", "C55/§3.5: recordsCount -1: 'Found invalid record count'", simple_batch(2, count=-1))
    add(
        "v2-count-min-int",
        "§3.5: recordsCount -2^31: 'Found invalid record count'",
        simple_batch(2, count=-(2**31)),
    )
    add(
        "v2-count-max-int-c55",
        "C55/§3.5: recordsCount 2^31-1 with 2 records (uncompressed): premature EOF, bounded memory",
        simple_batch(2, count=0x7FFFFFFF),
    )
    add(
        "v2-count-too-high-c58",
        "C58/§3.5: count 3 with 2 physical records: 2 records then 'premature EOF'",
        simple_batch(2, count=3),
    )
    add(
        "v2-count-too-low-c58",
        "C58/§3.5: count 2 with 3 physical records: 1 record then 'records still remaining'",
        simple_batch(3, count=2),
    )
    add(
        "v2-count-1-of-3",
        "§3.5: count 1 with 3 physical records: raises instead of returning the only declared record",
        simple_batch(3, count=1),
    )
    add(
        "v2-count-claims-no-bytes-c38",
        "C38/§3.5: CRC-valid batch claiming 5 records with zero record bytes: premature EOF",
        v2_batch([], count=5, last_offset_delta=4),
    )
    add(
        "v2-count-0-compacted-c35",
        "C35/§3.5: compacted batch base 100, lastOffsetDelta 9, count 0: no records, lastOffset 109",
        v2_batch([], count=0, base_offset=100, last_offset_delta=9, producer_id=8, producer_epoch=0, base_sequence=0),
    )
    add(
        "v2-count-0-junk",
        "§3.5: count 0 followed by 40 bytes of junk: the junk is never read",
        v2_batch([], count=0, payload=prand(40, 1)),
    )
    add(
        "v2-count-0-gzip-junk",
        "§3.5: gzip codec, count 0, payload not gzip (spec: never decompressed; iterator() vs streamingIterator())",
        v2_batch([], attributes=GZIP, count=0, payload=b"not gzip at all"),
    )
    add(
        "v2-count-0-codec-7-junk",
        "§3.5: codec 7, count 0, junk payload (spec: accepted by iterator())",
        v2_batch([], attributes=7, count=0, payload=prand(10, 2)),
    )
    add(
        "v2-compacted-gaps-c37",
        "C37/§3.3: offset deltas {0,3,7} with lastOffsetDelta 9: offsets base+{0,3,7}",
        v2_batch(
            [v2_record(b"a", b"1"), v2_record(b"b", b"2", offset_delta=3), v2_record(b"c", b"3", offset_delta=7)],
            base_offset=1000,
            last_offset_delta=9,
        ),
    )
    add(
        "v2-compacted-single-survivor-c36",
        "C36/§3.3: only surviving record has offsetDelta 0, lastOffsetDelta 49",
        v2_batch([v2_record(b"k", b"v")], last_offset_delta=49, base_offset=200),
    )
    add(
        "v2-offset-deltas-all-zero-c68",
        "C68/§3.3: three records all with offsetDelta 0 (not assigned): offsets not checked",
        v2_batch([v2_record(b"a", b"1"), v2_record(b"b", b"2"), v2_record(b"c", b"3")], last_offset_delta=2),
    )
    add(
        "v2-offset-delta-negative",
        "§3.3: record offsetDelta -5 and one past lastOffsetDelta: reported as base+delta",
        v2_batch([v2_record(offset_delta=-5), v2_record(offset_delta=10)], base_offset=100, last_offset_delta=1),
    )
    add(
        "v2-last-offset-delta-negative",
        "§3.3: lastOffsetDelta -1: lastOffset = base-1, unchecked",
        simple_batch(1, last_offset_delta=-1, base_offset=10),
    )
    add(
        "v2-base-offset-negative",
        "§3.3: baseOffset -1 (offsets not assigned) with 2 records",
        simple_batch(2, base_offset=-1),
    )
    add(
        "v2-base-offset-max",
        "§3.3: baseOffset 2^63-2 with lastOffsetDelta 3: 64-bit wrap of lastOffset",
        simple_batch(2, base_offset=2**63 - 2, last_offset_delta=3),
    )
    add(
        "v2-timestamp-wrap",
        "§3.3: baseTimestamp 2^63-1 plus delta 1 wraps to -2^63",
        v2_batch([v2_record(timestamp_delta=1)], base_timestamp=2**63 - 1),
    )
    add(
        "v2-timestamps-negative",
        "§3.3: baseTimestamp -1 (no timestamp) with deltas 0 and 5",
        v2_batch([v2_record(), v2_record(offset_delta=1, timestamp_delta=5)], base_timestamp=-1, max_timestamp=-1),
    )
    add(
        "v2-max-timestamp-inconsistent",
        "§3.5: maxTimestamp smaller than every record timestamp: not checked",
        simple_batch(3, max_timestamp=0),
    )
    add(
        "v2-partition-leader-epoch",
        "§3.3: partitionLeaderEpoch 2^31-1 reported as stored",
        simple_batch(1, partition_leader_epoch=0x7FFFFFFF),
    )
    add(
        "v2-many-records-c56",
        "C56: 1500 minimal records in one batch (scaled down from 200k to keep the corpus small): must decode",
        v2_batch([v2_record(None, None, offset_delta=i) for i in range(1500)]),
    )
    for size in (63, 64, 8191, 8192):
        add(
            f"v2-value-size-{size}-c59",
            f"C59/§3.6: value of {size} bytes straddling a varint width boundary",
            v2_batch([v2_record(b"k", text(size, size))]),
        )
    add(
        "v2-record-size-16k-c59",
        "C59: records whose length varint crosses 2^14 (16383/16384 body bytes)",
        v2_batch([v2_record(None, text(16383 - 5, 1)), v2_record(None, text(16384 - 5, 2), offset_delta=1)]),
    )
    add(
        "v2-magic-2-file-trailing",
        "§1.3: v2 batch followed by 17 bytes of a batch header (file ignores, memory: partial)",
        simple_batch(1) + simple_batch(1, base_offset=1)[:17],
        _BOTH,
    )


def _rec_cases(add: _Collector) -> None:
    r = v2_record(b"key", b"value", [("h", b"x")])
    body = r[1:]
    L = len(body)
    add(
        "rec-length-too-long-last",
        "§3.5(a) step 2: last record's length is 1 more than its body: 'Invalid record size ... only R remaining'",
        v2_batch([v2_record(body=body, length=L + 1)]),
    )
    add(
        "rec-length-too-long-not-last",
        "§3.5(a) steps 3+5: first of two records declares 1 byte too many: 'expected to read L bytes ... but instead read C'",
        v2_batch([v2_record(body=body, length=L + 1), v2_record(offset_delta=1)]),
    )
    add(
        "rec-length-too-short",
        "§3.5(a) step 5: length 1 less than the body: consumed != length",
        v2_batch([v2_record(body=body, length=L - 1), v2_record(offset_delta=1)]),
    )
    add(
        "rec-length-zero",
        "§3.5(a): length 0 with a normal body following",
        v2_batch([v2_record(body=body, length=0)]),
    )
    add(
        "rec-length-negative",
        "§3.5(a)/§4.2: record length -1 (uncompressed): 'expected to read -1 bytes'",
        v2_batch([v2_record(body=body, length=-1)]),
    )
    add(
        "rec-length-min-int",
        "§3.5(a): record length -2^31",
        v2_batch([v2_record(body=body, length=-(2**31))]),
    )
    add(
        "rec-length-huge",
        "§3.5(a) step 2: record length 2^31-1 > remaining",
        v2_batch([v2_record(body=body, length=0x7FFFFFFF)]),
    )
    add(
        "rec-length-overlong-varint",
        "§3.5(a) step 1/§3.6: length varint with 5th-byte MSB set: raw IAE 'Varint is too long'",
        v2_batch([v2_record(body=body, length=b"\x80\x80\x80\x80\x80\x01")]),
    )
    add(
        "rec-length-nonminimal",
        "§3.5(a) step 7/§3.6: length written as a 5-byte non-minimal varint: accepted",
        v2_batch([v2_record(body=body, length=bytes([(L * 2) | 0x80, 0x80, 0x80, 0x80, 0x00])), v2_record(offset_delta=1)]),
    )
    add(
        "rec-length-eof-mid-varint",
        "§3.5(a) step 1: batch ends inside the first record's length varint",
        v2_batch([], count=1, payload=b"\x80"),
    )
    add(
        "rec-no-bytes-count-1",
        "§3.5(a) step 1: count 1, no record bytes: BufferUnderflow -> 'premature EOF'",
        v2_batch([], count=1),
    )
    add(
        "rec-key-length-past-end",
        "§3.5(a) step 6: key length past the end of the batch: 'Found invalid record structure'",
        v2_batch([v2_record(body=b"\x00\x00\x00" + encode_varint(100) + b"abc")]),
    )
    add(
        "rec-value-length-past-end",
        "§3.5(a) step 6: value length past the end of the batch",
        v2_batch([v2_record(body=b"\x00\x00\x00" + vbytes(b"k") + encode_varint(50) + b"xy")]),
    )
    add(
        "rec-key-past-batch-end-c5",
        "C5/§3.5(a): key length runs past the batch into the next batch's bytes: bounded by the batch",
        v2_batch([v2_record(body=b"\x00\x00\x00" + encode_varint(70) + b"ab")]) + simple_batch(1, base_offset=1),
    )
    add(
        "rec-field-runs-into-next-record",
        "§3.5(a) step 3: first record's value length covers the next record; length check catches it",
        v2_batch(
            [
                v2_record(body=b"\x00\x00\x00" + vbytes(b"k") + encode_varint(12) + b"v" + b"\x00", length=7),
                v2_record(offset_delta=1),
            ]
        ),
    )
    add(
        "rec-attributes-nonzero",
        "§3.4: record attributes 0xFF: any value accepted",
        v2_batch([v2_record(attributes=0xFF)]),
    )
    add(
        "rec-timestamp-overlong-varlong",
        "§3.5(a) step 6/§3.6: 11-byte timestampDelta varlong in the body: 'Found invalid record structure'",
        v2_batch([v2_record(body=b"\x00" + b"\x80" * 10 + b"\x01" + b"\x00" + vbytes(b"k") + vbytes(b"v") + b"\x00")]),
    )
    add(
        "rec-offset-delta-overlong-varint",
        "§3.5(a) step 6/§3.6: 6-byte offsetDelta varint in the body",
        v2_batch([v2_record(body=b"\x00\x00" + b"\x80\x80\x80\x80\x80\x01" + vbytes(b"k") + vbytes(b"v") + b"\x00")]),
    )
    add(
        "rec-key-null-minus-2",
        "§3.4: key length -2 read as null",
        v2_batch([v2_record(body=b"\x00\x00\x00" + encode_varint(-2) + vbytes(b"v") + b"\x00")]),
    )
    add(
        "rec-value-null-minus-100",
        "§3.4: value length -100 read as null",
        v2_batch([v2_record(body=b"\x00\x00\x00" + vbytes(b"k") + encode_varint(-100) + b"\x00")]),
    )
    matrix = []
    i = 0
    for k in (None, b"", b"K"):
        for v in (None, b"", b"V"):
            for hv in (None, b"", b"H"):
                matrix.append(v2_record(k, v, [("h", hv)], offset_delta=i))
                i += 1
    add(
        "rec-null-empty-matrix-c52",
        "C52/§3.4: key x value x header value over {null, empty, 1 byte}: 27 records",
        v2_batch(matrix),
    )
    add("rec-key-empty", "C52/§3.4: empty key (length 0) vs null", v2_batch([v2_record(b"", b"v")]))
    add("rec-value-empty", "C52/§3.4: empty value (length 0) vs null", v2_batch([v2_record(b"k", b"")]))
    add("rec-key-value-null", "§3.4: null key and null value", v2_batch([v2_record(None, None)]))
    add(
        "rec-trailing-byte-after-records",
        "§3.5: one junk byte after the last declared record: 'records still remaining'",
        v2_batch([v2_record()], payload=v2_record() + b"\x00"),
    )
    add(
        "rec-truncated-body-last",
        "§3.5(a): last record truncated (length says 10, 4 bytes left)",
        v2_batch([], count=1, payload=encode_varint(10) + b"\x00\x00\x00\x02"),
    )
    # compressed path (§3.5 b)
    add(
        "rec-gzip-length-negative",
        "§3.5(b)/§4.2: gzip batch, record length -1: IAE 'capacity < 0' -> 'premature EOF'",
        v2_batch([v2_record(body=body, length=-1)], attributes=GZIP),
    )
    add(
        "rec-gzip-length-too-long",
        "§3.5(b): gzip batch, last record declares 5 bytes too many: 'record payload reached EOF'",
        v2_batch([v2_record(body=body, length=L + 5)], attributes=GZIP),
    )
    add(
        "rec-gzip-length-too-short",
        "§3.5(b): gzip batch, first record declares 2 bytes too few: 'Found invalid record structure'",
        v2_batch([v2_record(body=body, length=L - 2), v2_record(offset_delta=1)], attributes=GZIP),
    )
    add(
        "rec-gzip-length-too-long-not-last",
        "§3.5(b): gzip batch, first of two records declares 1 byte too many",
        v2_batch([v2_record(body=body, length=L + 1), v2_record(offset_delta=1)], attributes=GZIP),
    )
    add(
        "rec-gzip-length-overlong-varint",
        "§3.5(b)/§4.2: gzip batch, record length varint too long: 'premature EOF' (IAE cause)",
        v2_batch([v2_record(body=body, length=b"\xff\xff\xff\xff\xff\x01")], attributes=GZIP),
    )
    add(
        "rec-gzip-count-too-high",
        "§3.5(b): gzip batch, count 3 with 2 records: end of stream reads as 0xFF -> premature EOF",
        v2_batch(simple_records(2), attributes=GZIP, count=3),
    )
    add(
        "rec-gzip-count-too-low",
        "§3.5(b): gzip batch, count 1 with 2 records: 'records still remaining'",
        v2_batch(simple_records(2), attributes=GZIP, count=1),
    )
    add(
        "rec-gzip-count-max-c55",
        "C55/§3.5: gzip batch with count 2^31-1: streamingIterator fails cleanly (no OOM)",
        v2_batch(simple_records(2), attributes=GZIP, count=0x7FFFFFFF),
    )
    add(
        "rec-gzip-key-past-end",
        "§3.5(b): gzip batch, key length past the record: 'Found invalid record structure'",
        v2_batch([v2_record(body=b"\x00\x00\x00" + encode_varint(30) + b"abc")], attributes=GZIP),
    )
    add(
        "rec-gzip-overlong-varlong-body",
        "§3.5(b)/§3.6: gzip batch, 11-byte timestampDelta inside the body",
        v2_batch([v2_record(body=b"\x00" + b"\x81" * 10 + b"\x01" + b"\x00" + vbytes(b"k") + vbytes(b"v") + b"\x00")], attributes=GZIP),
    )
    add(
        "rec-lz4-length-too-short",
        "§3.5(b): lz4 batch, first record declares 2 bytes too few",
        v2_batch([v2_record(body=body, length=L - 2), v2_record(offset_delta=1)], attributes=LZ4),
    )


def _hdr_cases(add: _Collector) -> None:
    def hb(count: bytes, rest: bytes = b"") -> bytes:
        return v2_batch([v2_record(body=b"\x00\x00\x00" + vbytes(b"k") + vbytes(b"v") + count + rest)])

    add("hdr-count-negative", "§3.5(a) step 4: header count -1: 'Found invalid number of record headers -1'", hb(encode_varint(-1)))
    add("hdr-count-min-int", "§3.5(a) step 4: header count -2^31", hb(encode_varint(-(2**31))))
    add(
        "hdr-count-max-int-c55",
        "C55/§3.5(a) step 4: header count 2^31-1 with a tiny payload: larger than remaining",
        hb(encode_varint(0x7FFFFFFF)),
    )
    add(
        "hdr-count-remaining-plus-1",
        "§3.5(a) step 4: header count one more than the bytes left in the batch",
        hb(encode_varint(3), b"\x00\x00"),
    )
    add(
        "hdr-count-too-high",
        "§3.5(a): header count 2 but one header encoded: BufferUnderflow -> invalid record structure",
        hb(encode_varint(2), vbytes(b"h") + vbytes(b"x")),
    )
    add(
        "hdr-count-overlong-varint",
        "§3.5(a)/§3.6: 6-byte header count varint",
        hb(b"\x80\x80\x80\x80\x80\x00"),
    )
    add("hdr-key-size-negative-c52", "C52/§3.5(a): header key length -1: 'Invalid negative header key size -1'", hb(encode_varint(1), encode_varint(-1) + vbytes(b"x")))
    add("hdr-key-size-minus-7", "§3.5(a): header key length -7", hb(encode_varint(1), encode_varint(-7) + vbytes(b"x")))
    add("hdr-key-empty", "§3.5(a) step 4: header key of length 0 accepted", v2_batch([v2_record(headers=[("", b"x")])]))
    add(
        "hdr-key-invalid-utf8",
        "§3.5(a) step 4: header key bytes ff fe 41: lenient UTF-8 decode (U+FFFD)",
        v2_batch([v2_record(headers=[(b"\xff\xfeA", b"x")])]),
    )
    add(
        "hdr-key-overlong-utf8",
        "§3.5(a): header key with overlong encoding c0 80 and truncated e2 82",
        v2_batch([v2_record(headers=[(b"a\xc0\x80b", b"1"), (b"\xe2\x82", b"2")])]),
    )
    add(
        "hdr-key-surrogate-utf8",
        "§3.5(a): header key with an encoded surrogate ed a0 80 and a 4-byte emoji",
        v2_batch([v2_record(headers=[(b"\xed\xa0\x80", b"1"), ("\U0001f600", b"2")])]),
    )
    add(
        "hdr-key-utf8-edge-sequences",
        "§3.5(a): header keys with JDK-vs-WHATWG replacement edge cases (4-byte overlong, > U+10FFFF, "
        "truncated 4-byte, lone continuation, f5, ed 9f bf, surrogate pair as two 3-byte sequences)",
        v2_batch(
            [
                v2_record(
                    headers=[
                        (b"\xf0\x80\x80\x80", b"1"),
                        (b"\xf4\x90\x80\x80", b"2"),
                        (b"\xf0\x9f\x98", b"3"),
                        (b"a\x80b", b"4"),
                        (b"\xf5\x80", b"5"),
                        (b"\xed\x9f\xbf", b"6"),
                        (b"\xed\xa0\xbd\xed\xb8\x80", b"7"),
                        (b"\xe0\x80\xaf", b"8"),
                        (b"\xe2\x28\xa1", b"9"),
                    ]
                )
            ]
        ),
    )
    add(
        "hdr-key-non-ascii",
        "§3.4: header keys with valid multi-byte UTF-8",
        v2_batch([v2_record(headers=[("clé", b"1"), ("ключ", b"2")])]),
    )
    add("hdr-value-null", "C52/§3.4: header value null (-1)", v2_batch([v2_record(headers=[("h", None)])]))
    add("hdr-value-empty", "C52/§3.4: header value empty (0)", v2_batch([v2_record(headers=[("h", b"")])]))
    add("hdr-value-minus-9", "§3.4: header value length -9 read as null", hb(encode_varint(1), vbytes(b"h") + encode_varint(-9)))
    add("hdr-value-past-end", "§3.5(a) step 6: header value length past the end", hb(encode_varint(1), vbytes(b"h") + encode_varint(40) + b"x"))
    add("hdr-key-past-end", "§3.5(a) step 6: header key length past the end", hb(encode_varint(1), encode_varint(40) + b"h"))
    add(
        "hdr-duplicate-keys-c52",
        "C52: duplicate header keys kept in order",
        v2_batch([v2_record(headers=[("a", b"1"), ("a", b"2"), ("b", None), ("a", b"")])]),
    )
    add(
        "hdr-many-c52",
        "C52: 300 headers on one record",
        v2_batch([v2_record(headers=[("h%d" % i, b"%d" % i) for i in range(300)])]),
    )
    add("hdr-zero-c52", "C52: zero headers (single 00 byte)", v2_batch([v2_record(headers=[])]))
    add(
        "hdr-gzip-count-larger-than-record",
        "§3.5(b): gzip batch, header count larger than this record's remaining bytes (next record exists)",
        v2_batch(
            [v2_record(body=b"\x00\x00\x00" + vbytes(b"k") + vbytes(b"v") + encode_varint(5)), v2_record(offset_delta=1)],
            attributes=GZIP,
        ),
    )
    add(
        "hdr-gzip-key-size-negative",
        "§3.5(b): gzip batch, header key length -1",
        v2_batch([v2_record(body=b"\x00\x00\x00" + vbytes(b"k") + vbytes(b"v") + encode_varint(1) + encode_varint(-1) + vbytes(b"x"))], attributes=GZIP),
    )
    add(
        "hdr-gzip-invalid-utf8",
        "§3.5(b): gzip batch, header key with invalid UTF-8",
        v2_batch([v2_record(headers=[(b"\x80\x80", b"x")])], attributes=GZIP),
    )


def _varint_cases(add: _Collector) -> None:
    def rec_with(ts: bytes = b"\x00", od: bytes = b"\x00", kl: bytes | None = None, kd: bytes = b"k") -> bytes:
        key = (kl + kd) if kl is not None else vbytes(kd)
        return v2_record(body=b"\x00" + ts + od + key + vbytes(b"v") + b"\x00")

    add("varint-nonminimal-offset-delta", "§3.6: offsetDelta 0 written 80 00 (non-minimal): accepted", v2_batch([rec_with(od=b"\x80\x00")]))
    add(
        "varint-nonminimal-5-bytes",
        "§3.6: offsetDelta 1 written as 5 bytes 82 80 80 80 00: accepted",
        v2_batch([rec_with(od=b"\x82\x80\x80\x80\x00")]),
    )
    add(
        "varint-5th-byte-overflow-bits",
        "§3.6: 5th byte 0x70 (bits 4-6 set) silently dropped: offsetDelta 2 read",
        v2_batch([rec_with(od=b"\x84\x80\x80\x80\x70")]),
    )
    add(
        "varint-5th-byte-msb",
        "§3.6: offsetDelta with 5th-byte MSB set: IAE -> 'Found invalid record structure'",
        v2_batch([rec_with(od=b"\x80\x80\x80\x80\x80\x00")]),
    )
    add("varint-key-length-nonminimal", "§3.6: key length 1 written 82 00", v2_batch([rec_with(kl=b"\x82\x00")]))
    add(
        "varint-key-length-6-bytes-c54",
        "C54/§3.6: 6-byte varint in the key length slot",
        v2_batch([rec_with(kl=b"\x82\x80\x80\x80\x80\x00")]),
    )
    add(
        "varint-eof-continuation-c54",
        "C54/§3.6: batch ends while every varint byte has the continuation bit",
        v2_batch([], count=1, payload=encode_varint(4) + b"\x00\x80\x80\x80"),
    )
    add(
        "varint-varlong-10-byte-min",
        "§3.6: timestampDelta Long.MIN as a 10-byte varlong: wraps with baseTimestamp",
        v2_batch([rec_with(ts=bytes.fromhex("ffffffffffffffffff01"))]),
    )
    add(
        "varint-varlong-10-byte-max",
        "§3.6: timestampDelta Long.MAX (FE FF .. 01), baseTimestamp 0",
        v2_batch([rec_with(ts=bytes.fromhex("feffffffffffffffff01"))], base_timestamp=0),
    )
    add(
        "varint-varlong-10th-byte-overflow-bits",
        "§3.6: 10th varlong byte 0x7E: bits 1-6 silently dropped",
        v2_batch([rec_with(ts=bytes.fromhex("828080808080808080" + "7e"))]),
    )
    add(
        "varint-varlong-11-bytes-c54",
        "C54/§3.6: 11-byte varlong (10th byte has MSB): 'Varlong is too long'",
        v2_batch([rec_with(ts=bytes.fromhex("80808080808080808080" + "00"))]),
    )
    add(
        "varint-varlong-nonminimal",
        "§3.6: timestampDelta 0 written as 10 bytes 80..80 00",
        v2_batch([rec_with(ts=bytes.fromhex("808080808080808080" + "00"))]),
    )
    vectors = [0, -1, 1, 63, -64, 64, -65, 8191, 134217728, 2**31 - 1, -(2**31)]
    add(
        "varint-vectors-offset-delta",
        "§3.6: ByteUtilsTest varint vectors as record offsetDeltas",
        v2_batch([v2_record(b"%d" % v, None, offset_delta=v) for v in vectors], base_offset=0, last_offset_delta=0),
    )
    add(
        "varint-vectors-timestamp-delta",
        "§3.6: varlong vectors (incl. Long.MAX/MIN) as timestampDeltas, baseTimestamp 0",
        v2_batch(
            [v2_record(None, b"%d" % v, timestamp_delta=v, offset_delta=i) for i, v in enumerate([0, -1, 1, 2**63 - 1, -(2**63), 2**40])],
            base_timestamp=0,
        ),
    )
    add(
        "varint-unsigned-ff-int-min",
        "§3.6: length field FF FF FF FF 0F (zig-zag Integer.MIN) as a key length: null key",
        v2_batch([rec_with(kl=encode_unsigned_varint(0xFFFFFFFF), kd=b"")]),
    )
    add(
        "varint-nonminimal-gzip",
        "§3.5(b)/§3.6: gzip batch, record length and offsetDelta non-minimal",
        v2_batch(
            [v2_record(body=b"\x00\x00\x80\x00" + vbytes(b"k") + vbytes(b"v") + b"\x00", length=b"\x92\x80\x00")],
            attributes=GZIP,
        ),
    )
    add(
        "varint-5th-byte-msb-gzip",
        "§3.5(b)/§3.6: gzip batch, offsetDelta varint with 5th-byte MSB",
        v2_batch([rec_with(od=b"\x80\x80\x80\x80\x80\x00")], attributes=GZIP),
    )


def _ctl_cases(add: _Collector) -> None:
    add("ctl-commit-c32", "C32/§3.7: canonical COMMIT marker (key v0 type 1, value v0 epoch 7)", ctl_batch_kv(ctl_key(1), ctl_value()))
    add("ctl-abort-c32", "C32/§3.7: canonical ABORT marker", ctl_batch_kv(ctl_key(0), ctl_value(coordinator_epoch=-1)))
    add("ctl-only-commit-c26", "C26/§3.7: input is a single COMMIT control batch, 0 data records", ctl_batch_kv(ctl_key(1), ctl_value(), base_offset=41))
    add("ctl-key-short", "§3.7: control key of 3 bytes: 'Must have at least 4 bytes, but found only 3'", ctl_batch_kv(b"\x00\x00\x01", ctl_value()))
    add("ctl-key-empty", "§3.7: empty control key", ctl_batch_kv(b"", ctl_value()))
    add("ctl-key-null", "§3.7: null control key: NullPointerException", ctl_batch_kv(None, ctl_value()))
    add("ctl-key-version-negative", "§3.7: control key version -1: 'Invalid version found for control record'", ctl_batch_kv(ctl_key(1, version=-1), ctl_value()))
    add("ctl-key-version-1", "C32/§3.7: control key version 1 read as v0", ctl_batch_kv(ctl_key(0, version=1), ctl_value()))
    add("ctl-key-extra-bytes", "§3.7: control key with 4 extra bytes: ignored", ctl_batch_kv(ctl_key(1) + b"XXXX", ctl_value()))
    add("ctl-type-unknown", "C32/§3.7: unknown control type 99: UNKNOWN (type id -1)", ctl_batch_kv(ctl_key(99), b"whatever"))
    add("ctl-type-negative", "§3.7: control type -5: UNKNOWN", ctl_batch_kv(ctl_key(-5), None))
    for tid, tname in ((2, "leader-change"), (3, "snapshot-header"), (4, "snapshot-footer"), (5, "kraft-version"), (6, "kraft-voters")):
        add(
            f"ctl-type-{tname}-c32",
            f"C32/§3.7: KRaft control type {tid} ({tname}); value not parsed",
            ctl_batch_kv(ctl_key(tid), b"\x00\x00\x00\x00\x00\x01\x00", attributes=ATTR_CONTROL, producer_id=-1, producer_epoch=-1),
        )
    add("ctl-value-null-c33", "C33/§3.7: COMMIT with null value", ctl_batch_kv(ctl_key(1), None))
    add("ctl-value-empty", "§3.7: ABORT with empty value", ctl_batch_kv(ctl_key(0), b""))
    add("ctl-value-short", "§3.7: COMMIT value of 5 bytes: 'Must have at least 6 bytes, but found only 5'", ctl_batch_kv(ctl_key(1), b"\x00\x00\x00\x00\x07"))
    add("ctl-value-version-negative", "§3.7: end-marker value version -1", ctl_batch_kv(ctl_key(1), ctl_value(version=-1)))
    add("ctl-value-version-1", "§3.7: end-marker value version 1 parsed as v0", ctl_batch_kv(ctl_key(0), ctl_value(coordinator_epoch=3, version=1)))
    add("ctl-value-extra-bytes", "§3.7: end-marker value with 10 extra bytes: ignored", ctl_batch_kv(ctl_key(1), ctl_value() + bytes(10)))
    add(
        "ctl-two-abort-c31",
        "C31/§3.7: control batch with two ABORT records (count 2)",
        control_batch([v2_record(ctl_key(0), ctl_value(1)), v2_record(ctl_key(0), ctl_value(2), offset_delta=1)]),
    )
    add(
        "ctl-commit-and-data",
        "§3.7: control batch with a COMMIT record followed by a non-control-shaped record",
        control_batch([v2_record(ctl_key(1), ctl_value()), v2_record(b"k", b"v", offset_delta=1)]),
    )
    add(
        "ctl-not-transactional",
        "§3.7: control bit without the transactional bit",
        ctl_batch_kv(ctl_key(1), ctl_value(), attributes=ATTR_CONTROL),
    )
    add("ctl-empty-batch", "§3.5/§3.7: control batch with count 0", control_batch([], count=0))
    add("ctl-gzip", "§3.7/§5.2: gzip-compressed COMMIT control batch", ctl_batch_kv(ctl_key(1), ctl_value(), attributes=ATTR_TRANSACTIONAL | ATTR_CONTROL | GZIP))
    add(
        "ctl-lz4-transactional-c34",
        "C34: lz4 transactional data batch then its ABORT marker",
        v2_batch(simple_records(3), attributes=ATTR_TRANSACTIONAL | LZ4, producer_id=4242, producer_epoch=3, base_sequence=0, base_offset=7)
        + ctl_batch_kv(ctl_key(0), ctl_value(), base_offset=10),
    )
    txn = dict(attributes=ATTR_TRANSACTIONAL, producer_id=1, producer_epoch=0)
    add(
        "ctl-txn-layout-c29",
        "C29/C30: pid 1: tx1 commit, tx2 abort, tx3 commit (read_uncommitted returns all data)",
        v2_batch(simple_records(1), base_offset=0, base_sequence=0, **txn)
        + ctl_batch_kv(ctl_key(1), ctl_value(), base_offset=1, producer_id=1, producer_epoch=0)
        + v2_batch(simple_records(1), base_offset=2, base_sequence=1, **txn)
        + ctl_batch_kv(ctl_key(0), ctl_value(), base_offset=3, producer_id=1, producer_epoch=0)
        + v2_batch(simple_records(1), base_offset=4, base_sequence=2, **txn)
        + ctl_batch_kv(ctl_key(1), ctl_value(), base_offset=5, producer_id=1, producer_epoch=0),
    )
    add(
        "ctl-txn-empty-abort-c27",
        "C27/C28: ABORT marker of an empty txn, then data, then another ABORT",
        ctl_batch_kv(ctl_key(0), ctl_value(), base_offset=0, producer_id=1, producer_epoch=0)
        + v2_batch(simple_records(2), base_offset=1, base_sequence=0, **txn)
        + ctl_batch_kv(ctl_key(0), ctl_value(), base_offset=3, producer_id=1, producer_epoch=0),
    )


def _legacy_cases(add: _Collector) -> None:
    a2v1 = bytes.fromhex("0000000000000064 0000001a 74aa5140 01 00 0000018bcfe56800 00000002 6b30 00000002 7630".replace(" ", ""))
    a2v0 = bytes.fromhex("0000000000000064 00000012 8697724c 00 00 00000002 6b30 00000002 7630".replace(" ", ""))
    if legacy_message(b"k0", b"v0", magic=1, offset=100) != a2v1 or legacy_message(b"k0", b"v0", magic=0, offset=100) != a2v0:
        raise AssertionError("legacy_message does not reproduce spec Appendix A.2")  # pragma: no cover
    add("legacy-v1-appendix-a2", "Appendix A.2: v1 message offset 100", a2v1)
    add("legacy-v0-appendix-a2", "Appendix A.2: v0 message offset 100", a2v0)
    add("legacy-v0-null-key", "§2.1: v0 message with null key", legacy_message(None, b"v", magic=0))
    add("legacy-v0-null-value", "§2.1: v0 message with null value (tombstone)", legacy_message(b"k", None, magic=0))
    add("legacy-v1-null-both", "§2.1: v1 message with null key and value", legacy_message(None, None))
    add("legacy-v1-empty-both", "§2.1: v1 message with empty key and value", legacy_message(b"", b""))
    add("legacy-v1-key-minus-5", "§2.1: v1 key length -5 means null", legacy_message(None, b"v", key_length=-5))
    add("legacy-v1-crc-bad", "§2.3: v1 message with a wrong CRC: 'Record is corrupt (stored crc = ...'", legacy_message(crc=0x12345678))
    add("legacy-v0-crc-bad", "§2.3: v0 message with a wrong CRC", legacy_message(magic=0, crc=1))
    i = 0
    while not struct.unpack_from(">I", legacy_message(b"k", b"%d" % i), 12)[0] & 0x80000000:
        i += 1
    add("legacy-v1-crc-high-bit", "§2.1: CRC-32 with the high bit set compared unsigned", legacy_message(b"k", b"%d" % i))
    add(
        "legacy-v1-trailing-bytes",
        "§2.3: 5 bytes after the value, CRC covering them: accepted",
        legacy_message(trailing=b"JUNK!"),
    )
    add(
        "legacy-v1-trailing-bytes-crc-excluded",
        "§2.1: trailing bytes not covered by the stored CRC: mismatch",
        legacy_message(trailing=b"JUNK!", crc=crc32(legacy_message()[16:]) & 0xFFFFFFFF),
    )
    add(
        "legacy-v1-key-past-end-good-crc",
        "§2.3: key length 100 past the end, valid CRC: key() raises IAE",
        legacy_message(b"k", b"v", key_length=100),
    )
    add(
        "legacy-v0-value-past-end-good-crc",
        "§2.3: value length 50 past the end, valid CRC",
        legacy_message(b"k", b"v", magic=0, value_length=50),
    )
    add(
        "legacy-v1-value-short-good-crc",
        "§2.3: value length 0 but 3 value bytes present (trailing), valid CRC",
        legacy_message(b"k", b"v", value_length=0, trailing=b"ab"),
    )
    for size in range(14, 22):
        add(
            f"legacy-v1-size-{size}",
            f"§2.1/§2.3: v1 message of size {size} (< 22), CRC recomputed: passes splitting",
            legacy_message(None, None, magic=1, truncate=size),
        )
    add("legacy-v0-size-14", "§2.1: smallest v0 message (size 14, null key and value)", legacy_message(None, None, magic=0))
    add("legacy-v0-size-13", "§1.2/§2.3: v0 message truncated to size 13 (< 14)", legacy_message(None, None, magic=0, truncate=13))
    add(
        "legacy-v1-log-append-time",
        "§2.2: stand-alone v1 message with timestamp-type bit 3",
        legacy_message(attributes=0x08, timestamp=TS + 1),
    )
    add("legacy-v1-timestamp-negative", "§2.1: v1 timestamp -5 accepted on read", legacy_message(timestamp=-5))
    add("legacy-v1-timestamp-minus-1", "§2.1: v1 timestamp -1 (no timestamp)", legacy_message(timestamp=-1))
    add("legacy-v0-attr-bit3", "§2.2: timestamp-type bit on a v0 message is ignored", legacy_message(magic=0, attributes=0x08))
    add("legacy-v1-attr-high-bits", "§2.2: reserved attribute bits 4-7 set: ignored", legacy_message(attributes=0xF0))
    add("legacy-v1-codec-5", "§2.2/§2.5: v1 attributes codec 5: IAE 'Unknown compression type id: 5'", legacy_message(attributes=5))
    add("legacy-v0-codec-7", "§2.2/§2.5: v0 attributes codec 7", legacy_message(magic=0, attributes=7))
    add(
        "legacy-v1-zstd-wrapper-c24",
        "C24/§2.5: v1 wrapper with codec 4 (zstd): InvalidRecordException",
        legacy_wrapper(v1_inner(2), codec=ZSTD, offset=1, payload=zstd_std(b"".join(v1_inner(2)))),
    )
    add(
        "legacy-v0-zstd-wrapper",
        "§2.5: v0 wrapper with codec 4 (message prints the magic, 0)",
        legacy_wrapper(v1_inner(2, magic=0), magic=0, codec=ZSTD, offset=1, payload=zstd_std(b"".join(v1_inner(2, magic=0)))),
    )
    add(
        "legacy-v1-set-c46",
        "C46/§2.1: v1 message set of 3 uncompressed messages, CRC per message",
        b"".join(legacy_message(b"k%d" % i, b"v%d" % i, offset=10 + i, timestamp=TS + i) for i in range(3)),
        _BOTH,
    )
    add(
        "legacy-v0-set",
        "§2.1: v0 message set of 3 messages",
        b"".join(legacy_message(b"k%d" % i, b"v%d" % i, magic=0, offset=i) for i in range(3)),
        _BOTH,
    )
    # ---- wrappers
    for magic in (0, 1):
        for codec, cname in ((GZIP, "gzip"), (SNAPPY, "snappy"), (LZ4, "lz4")):
            inner = v1_inner(3, magic=magic, offsets=[100, 101, 102] if magic == 0 else None)
            add(
                f"legacy-v{magic}-{cname}-wrapper",
                f"§2.4/§2.5: v{magic} {cname} wrapper with 3 inner v{magic} messages as Java writes it",
                legacy_wrapper(inner, magic=magic, codec=codec, offset=102),
            )
    add(
        "legacy-v1-wrapper-offset-0-c41",
        "C41/§2.5: v1 wrapper offset 0 with relative inner offsets 0..2: inner offsets used as stored",
        legacy_wrapper(v1_inner(3), offset=0),
    )
    add(
        "legacy-v1-wrapper-offset-less-than-last",
        "§2.5: v1 wrapper offset 1 < last inner offset 2 (not 0): InvalidRecordException",
        legacy_wrapper(v1_inner(3), offset=1),
    )
    add(
        "legacy-v1-wrapper-offset-minus-1-c67",
        "C67/§2.5: v1 wrapper offset -1 (< last inner, not 0)",
        legacy_wrapper(v1_inner(2), offset=-1),
    )
    add(
        "legacy-v1-gaps-c39",
        "C39/§2.5: v1 gzip wrapper offset 105, inner relative {0,2,5}: absolute {100,102,105}",
        legacy_wrapper(v1_inner(3, offsets=[0, 2, 5]), offset=105),
    )
    add(
        "legacy-v1-gaps-0-5-9",
        "§2.5: inner 0,5,9 under W=109 give 100,105,109",
        legacy_wrapper(v1_inner(3, offsets=[0, 5, 9]), offset=109),
    )
    add(
        "legacy-v1-gaps-c40",
        "C40/§2.5: v1 wrapper with gaps, inner offsets not 0-based (3,4,8) under W=20",
        legacy_wrapper(v1_inner(3, offsets=[3, 4, 8]), offset=20),
    )
    add(
        "legacy-v0-gaps-c40",
        "C40/§2.5: v0 wrapper, inner absolute offsets 50,52,57 with gaps: used as stored",
        legacy_wrapper(v1_inner(3, magic=0, offsets=[50, 52, 57]), magic=0, offset=57),
    )
    add(
        "legacy-v0-wrapper-offset-mismatch",
        "§2.5: v0 wrapper offset 999 with inner absolute offsets 0..2: inner offsets used, lastOffset 999",
        legacy_wrapper(v1_inner(3, magic=0), magic=0, offset=999),
    )
    add(
        "legacy-v1-inner-non-monotonic",
        "§2.5: v1 wrapper W=10 with inner offsets 2,0,1 (L=1): base 9",
        legacy_wrapper(v1_inner(3, offsets=[2, 0, 1]), offset=10),
    )
    add(
        "legacy-v1-wrapper-lat-c47",
        "C47/§2.5: v1 wrapper with LogAppendTime: inner v1 records report the wrapper timestamp",
        legacy_wrapper(v1_inner(3, ts=5), offset=2, timestamp=TS + 500, extra_attributes=0x08),
    )
    add(
        "legacy-v1-wrapper-create-time",
        "§2.5: v1 wrapper CreateTime: inner records keep their own timestamps, maxTimestamp = wrapper field",
        legacy_wrapper(v1_inner(3, ts=TS - 10), offset=2, timestamp=TS + 77),
    )
    add(
        "legacy-v1-wrapper-null-value",
        "§2.5: v1 gzip wrapper with null value: 'Found invalid compressed record set with null value (magic = 1)'",
        legacy_message(None, None, attributes=GZIP, offset=3),
    )
    add(
        "legacy-v0-wrapper-null-value",
        "§2.5: v0 snappy wrapper with null value",
        legacy_message(None, None, magic=0, attributes=SNAPPY, offset=3),
    )
    add(
        "legacy-v1-wrapper-no-inner",
        "§2.5: v1 gzip wrapper whose value decompresses to nothing: 'no inner records'",
        legacy_wrapper([], offset=0),
    )
    add(
        "legacy-v1-wrapper-only-short-fragment",
        "§2.5: v1 wrapper whose value decompresses to 8 bytes (less than an entry prefix): no inner records",
        legacy_wrapper([], offset=0, payload=codecs.compress(GZIP, b"\x00" * 8)),
    )
    add(
        "legacy-v1-inner-compressed",
        "§2.5: second inner message carries codec gzip: 'Inner messages must not be compressed' after 1 record",
        legacy_wrapper(
            [v1_inner(1)[0], legacy_wrapper(v1_inner(1), offset=1)],
            offset=1,
        ),
    )
    add(
        "legacy-v1-inner-size-13",
        "§2.5: inner entry with size 13: CorruptRecordException",
        legacy_wrapper([v1_inner(1)[0], patch(v1_inner(2)[1], 8, ">i", 13)], offset=1),
    )
    add(
        "legacy-v1-inner-truncated",
        "§2.5: last inner message truncated inside the compressed value: dropped silently",
        legacy_wrapper(v1_inner(2), payload=codecs.compress(GZIP, b"".join(v1_inner(3))[:-5]), offset=1),
    )
    add(
        "legacy-v1-inner-magic-0",
        "§2.5: v1 wrapper with inner v0 messages (magic mismatch, relative offsets applied)",
        legacy_wrapper(v1_inner(2, magic=0), offset=11),
    )
    add(
        "legacy-v0-inner-magic-1",
        "§2.5: v0 wrapper with inner v1 messages: NoTimestampType but their own timestamp values",
        legacy_wrapper(v1_inner(2, magic=1, offsets=[4, 5]), magic=0, offset=5),
    )
    add(
        "legacy-v1-inner-crc-bad",
        "§2.5/§4.3: second inner message with a bad CRC: consumer's record.ensureValid raises",
        legacy_wrapper([v1_inner(2)[0], legacy_message(b"k1", b"v1", offset=1, crc=7)], offset=1),
    )
    add(
        "legacy-v1-wrapper-crc-bad",
        "§4.1/§4.3: wrapper's own CRC wrong, inner messages fine: the consumer does not check it",
        legacy_wrapper(v1_inner(2), offset=1, crc=0xDEADBEEF),
    )
    add(
        "legacy-v1-wrapper-key-nonnull",
        "§2.5: wrapper with a non-null key: not rejected",
        legacy_wrapper(v1_inner(2), offset=1, key=b"wrapper-key"),
    )
    add(
        "legacy-v1-wrapper-codec-6",
        "§2.5: v1 wrapper attributes codec 6: IAE",
        legacy_message(None, codecs.compress(GZIP, b"".join(v1_inner(1))), attributes=6),
    )
    add(
        "legacy-v1-wrapper-inner-v2",
        "§2.5: v1 gzip wrapper whose inner entry is a v2 batch (inner magic not range-checked)",
        legacy_wrapper([simple_batch(1)], offset=0),
    )
    add(
        "legacy-v1-wrapper-attr-high-bits",
        "§2.2: v1 gzip wrapper with reserved bits 0x70 set",
        legacy_wrapper(v1_inner(2), offset=1, extra_attributes=0x70),
    )
    add(
        "legacy-v1-wrapper-large-gzip",
        "§2.5: v1 gzip wrapper with 40 inner messages of 1 KiB (multi-buffer decompression)",
        legacy_wrapper(
            [legacy_message(b"k%d" % i, text(1024, i), offset=i) for i in range(40)], offset=39
        ),
    )
    add(
        "legacy-v1-wrapper-inner-lat-bit",
        "§2.5: CreateTime wrapper whose inner messages carry the LogAppendTime bit",
        legacy_wrapper(
            [legacy_message(b"k", b"v", offset=0, attributes=0x08, timestamp=TS - 1)], offset=0, timestamp=TS
        ),
    )


def _gzip_cases(add: _Collector) -> None:
    recs = simple_records(3)
    raw = b"".join(recs)

    def gb(payload: bytes, n: int = 3) -> bytes:
        return v2_batch(simple_records(n), attributes=GZIP, payload=payload, max_timestamp=TS + n - 1)

    add("gzip-v2-java", "§5.2: v2 gzip batch, 3 records, JDK-style header 1f8b0800000000 00ff", gb(codecs.compress(GZIP, raw)))
    # GZIPInputStream.readTrailer compares the CRC before it reads the size (found by fuzzing)
    # (a legacy wrapper: its deep iterator reads to the end, and Kafka's message quotes the cause)
    inner = b"".join(v1_inner(2))
    for name, member in (
        ("gzip-short-trailer-wrong-crc", gzip_member(inner, crc=0x12345678)[:-3]),
        ("gzip-short-trailer-right-crc", gzip_member(inner)[:-3]),
    ):
        add(name, "a 5-byte gzip trailer: a wrong CRC is ZipException 'Corrupt GZIP trailer', "
            "a right one EOFException",
            legacy_message(None, member, magic=1, attributes=GZIP, offset=1))
    big = simple_records(20, value_size=2000)
    add(
        "gzip-v2-large",
        "§5.2: v2 gzip batch, 20 records of 2 KB (> 32 KiB uncompressed)",
        v2_batch(big, attributes=GZIP, max_timestamp=TS + 19),
    )
    add("gzip-bad-magic", "§5.2: payload 1f 8c ...: KafkaException(ZipException 'Not in GZIP format')", gb(b"\x1f\x8c" + codecs.compress(GZIP, raw)[2:]))
    add("gzip-empty", "§5.2: empty gzip payload with count 3: KafkaException(EOFException)", gb(b""))
    add("gzip-header-only", "§5.2: gzip payload is the 10-byte header only", gb(codecs.compress(GZIP, raw)[:10]))
    add("gzip-truncated-header", "§5.2: gzip payload of 5 bytes (truncated header)", gb(codecs.compress(GZIP, raw)[:5]))
    full = codecs.compress(GZIP, raw)
    add("gzip-truncated", "§5.2: gzip payload cut in the middle of the deflate stream", gb(full[: len(full) // 2]))
    add("gzip-truncated-trailer", "§5.2: gzip payload missing the last 4 trailer bytes (ISIZE)", gb(full[:-4]))
    add("gzip-bad-trailer-crc", "§5.2: trailer CRC-32 wrong: 'Corrupt GZIP trailer'", gb(gzip_member(raw, crc=0)))
    add("gzip-bad-trailer-isize", "§5.2: trailer ISIZE wrong", gb(gzip_member(raw, isize=len(raw) + 1)))
    r1, r2 = b"".join(recs[:2]), recs[2]
    add("gzip-concatenated-members", "§5.2: records split over two concatenated gzip members: read as one stream", gb(gzip_member(r1) + gzip_member(r2)))
    add("gzip-concatenated-empty-member", "§5.2: full member followed by a member of empty content", gb(gzip_member(raw) + gzip_member(b"")))
    add("gzip-trailing-junk", "§5.2: 7 junk bytes after the member: silently ignored", gb(full + b"JUNKJNK"))
    add("gzip-trailing-zeros", "§5.2: 64 zero bytes after the member", gb(full + bytes(64)))
    add(
        "gzip-trailing-partial-header",
        "§5.2: bytes after the member start like a gzip header (1f 8b 08) but are truncated",
        gb(full + b"\x1f\x8b\x08"),
    )
    add(
        "gzip-trailing-bad-second-header",
        "§5.2: after the member, 1f 8b with method 7 (invalid second header)",
        gb(full + b"\x1f\x8b\x07\x00\x00\x00\x00\x00\x00\xff"),
    )
    add("gzip-fextra", "§5.2: header with FEXTRA (6 bytes) honoured", gb(gzip_member(raw, extra=b"AB\x02\x00xy")))
    add("gzip-fname", "§5.2: header with FNAME honoured", gb(gzip_member(raw, fname=b"records.bin")))
    add("gzip-fcomment", "§5.2: header with FCOMMENT honoured", gb(gzip_member(raw, comment=b"hello")))
    add("gzip-fhcrc-good", "§5.2: header with a correct FHCRC", gb(gzip_member(raw, hcrc=-1, fname=b"x")))
    add("gzip-fhcrc-bad", "§5.2: header with a wrong FHCRC: 'Corrupt GZIP header'", gb(gzip_member(raw, hcrc=0x1234)))
    add("gzip-all-flags", "§5.2: FTEXT|FHCRC|FEXTRA|FNAME|FCOMMENT all set", gb(gzip_member(raw, flags=1, extra=b"e", fname=b"n", comment=b"c", hcrc=-1)))
    add("gzip-method-7", "§5.2: compression method 7: 'Unsupported compression method'", gb(gzip_member(raw, method=7)))
    add("gzip-os-0", "§5.2: older-JDK header with OS byte 0", gb(gzip_member(raw, os_byte=0)))
    add("gzip-level-0-stored", "§5.2: deflate level 0 (stored blocks)", gb(gzip_member(raw, level=0)))
    add("gzip-level-9", "§5.2: deflate level 9", gb(gzip_member(raw, level=9)))
    add("gzip-corrupt-deflate", "§5.2: deflate stream with a corrupted byte", gb(flip(full, 12, 0xFF)))
    add(
        "gzip-legacy-bad-magic",
        "§2.5/§5.2: v1 gzip wrapper whose value is not gzip: KafkaException",
        legacy_wrapper([], offset=0, payload=b"definitely not gzip"),
    )
    add(
        "gzip-legacy-trailer-bad",
        "§2.5/§5.2: v1 gzip wrapper with a wrong trailer CRC",
        legacy_wrapper(v1_inner(2), offset=1, payload=gzip_member(b"".join(v1_inner(2)), crc=5)),
    )
    add(
        "gzip-legacy-empty-value",
        "§2.5/§5.2: v1 gzip wrapper with an empty (non-null) value",
        legacy_wrapper([], offset=0, payload=b""),
    )


def _snappy_cases(add: _Collector) -> None:
    recs = simple_records(3)
    raw = b"".join(recs)

    def sb(payload: bytes, n: int = 3) -> bytes:
        return v2_batch(simple_records(n), attributes=SNAPPY, payload=payload, max_timestamp=TS + n - 1)

    add("snappy-v2-xerial", "C15/§5.3/A.3: v2 snappy batch in xerial framing as snappy-java (Java producer) writes it", sb(xerial([raw])))
    add("snappy-raw-c11", "C11/§5.3: v2 batch with raw (unframed) snappy, as franz-go writes: raw fallback", sb(codecs.snappy_raw(raw)))
    # snappy-java reads the uncompressed length as a Java int and allocates before it
    # decompresses (found by differential fuzzing)
    for length in (3_000_000_000, 2147483646):
        block = encode_unsigned_varint(length) + b"\x00" * 12
        add(f"snappy-raw-length-{length}",
            "raw snappy whose uncompressed length is >= 2^31 (new byte[negative]) or above "
            "the JVM array limit: Kafka wraps the JVM's exception in a KafkaException",
            sb(block, 1))
        add(f"snappy-xerial-first-chunk-length-{length}",
            "the same length in the first xerial chunk: thrown by read(), escapes raw",
            sb(xerial_header() + len(block).to_bytes(4, "big") + block, 1))
    first = codecs.snappy_raw(recs[0])
    bad = encode_unsigned_varint(0xFFFFFFFF) + b"\x00" * 12
    add("snappy-xerial-second-chunk-length-negative",
        "a later xerial chunk whose length reads as a negative int: no new array (-1 is not "
        "larger), the native call refuses the short one: an IOException (found by fuzzing)",
        sb(xerial_header() + len(first).to_bytes(4, "big") + first
           + len(bad).to_bytes(4, "big") + bad, 2))
    big_recs = simple_records(12, value_size=4000)
    big = b"".join(big_recs)
    add(
        "snappy-multi-chunk-c12",
        "C12/C13/C10/§5.3: xerial stream with ~48 KB of records in two 32 KiB chunks",
        v2_batch(big_recs, attributes=SNAPPY, payload=xerial([big], block=32 * 1024), max_timestamp=TS + 11),
    )
    add(
        "snappy-raw-large-c11",
        "C11/§5.3: raw snappy (no framing) of ~48 KB of records",
        v2_batch(big_recs, attributes=SNAPPY, payload=codecs.snappy_raw(big), max_timestamp=TS + 11),
    )
    add(
        "snappy-chunk-per-record",
        "§5.3: xerial stream with one chunk per record",
        sb(xerial(recs)),
    )
    add(
        "snappy-chunk-zero-length-c12",
        "C12/§5.3: xerial stream with a zero-length chunk between two chunks",
        sb(xerial_header() + xerial([recs[0]])[16:] + b"\x00\x00\x00\x00" + xerial(recs[1:])[16:]),
    )
    add("snappy-le-header-c9", "C9/§5.3: xerial header version/compat written little-endian (01 00 00 00)", sb(xerial([raw], header=xerial_header(little_endian=True))))
    add("snappy-version-0", "§5.3: xerial header version 0, compat 0: version not checked", sb(xerial([raw], header=xerial_header(0, 0))))
    add("snappy-version-99", "§5.3: xerial header version 99, compat 99", sb(xerial([raw], header=xerial_header(99, 99))))
    chunk = codecs.snappy_raw(raw)
    add("snappy-negative-chunk", "§5.3: chunk length -1: SnappyError (unwrapped java.lang.Error)", sb(xerial_header() + struct.pack(">i", -1) + chunk))
    add("snappy-chunk-too-big-c25", "C25/§5.3: chunk length 0x7FFFFFF0 (> 512 MiB): SnappyError", sb(xerial_header() + struct.pack(">i", 0x7FFFFFF0) + chunk))
    add("snappy-short-chunk", "§5.3: chunk length 5 more than the bytes present: 'failed to read chunk'", sb(xerial_header() + struct.pack(">i", len(chunk) + 5) + chunk))
    add(
        "snappy-chunk-overrun-c12",
        "C12/§5.3: final chunk length overruns into nothing after a good first chunk",
        sb(xerial([recs[0]]) + struct.pack(">i", 1000) + codecs.snappy_raw(b"".join(recs[1:]))),
    )
    for n in (1, 2, 3):
        add(
            f"snappy-trailing-{n}-bytes",
            f"§5.3: {n} trailing byte(s) after the last chunk: ignored silently",
            sb(xerial([raw]) + b"\x01\x02\x03"[:n]),
        )
    add("snappy-trailing-4-bytes", "§5.3: 4 trailing bytes 00000000 (a zero-length chunk)", sb(xerial([raw]) + b"\x00\x00\x00\x00"))
    add(
        "snappy-concatenated-header",
        "§5.3: second xerial stream header (version 1) between chunks: continues",
        sb(xerial([recs[0]]) + xerial(recs[1:])),
    )
    add(
        "snappy-concatenated-header-version-0",
        "§5.3: concatenated header with version 0: treated as end of stream",
        sb(xerial([recs[0]]) + xerial(recs[1:], header=xerial_header(0, 0))),
    )
    add(
        "snappy-concatenated-header-bad-magic",
        "§5.3: chunk length equal to 0x82534E41 followed by a non-magic: end of stream",
        sb(xerial([recs[0]]) + b"\x82SNAXXXX\x00\x00\x00\x01\x00\x00\x00\x01" + xerial(recs[1:])[16:]),
    )
    add(
        "snappy-concatenated-header-truncated",
        "§5.3: concatenated header cut after 10 bytes: SnappyIOException",
        sb(xerial([recs[0]]) + xerial_header()[:10]),
    )
    add("snappy-empty", "§5.3: empty snappy payload: '[EMPTY_INPUT] Cannot decompress empty stream'", sb(b""))
    add("snappy-header-only", "§5.3: xerial header and no chunks, count 3", sb(xerial_header()))
    add("snappy-magic-only", "§5.3: 8-byte magic only (< 16 bytes): raw fallback on the magic", sb(XERIAL_MAGIC))
    add("snappy-header-15-bytes", "§5.3: 15 bytes of header: shorter than 16, raw fallback", sb(xerial_header()[:15]))
    add("snappy-corrupt-raw-block", "§5.3: chunk with a corrupted raw snappy block", sb(xerial_header() + struct.pack(">i", len(chunk)) + flip(chunk, len(chunk) // 2, 0xFF)))
    add("snappy-raw-corrupt-c11", "C11/§5.3: unframed payload that is not valid snappy", sb(b"\x05not snappy at all"))
    add(
        "snappy-raw-short-c11",
        "C11/§5.3: raw snappy payload shorter than 16 bytes (one small record)",
        v2_batch([v2_record(None, None)], attributes=SNAPPY, payload=codecs.snappy_raw(v2_record(None, None))),
    )
    add(
        "snappy-legacy-v0-raw",
        "§5.3: v0 snappy wrapper with raw (unframed) snappy value",
        legacy_wrapper(v1_inner(2, magic=0), magic=0, codec=SNAPPY, offset=1, payload=codecs.snappy_raw(b"".join(v1_inner(2, magic=0)))),
    )
    add(
        "snappy-legacy-v1-le-header-c9",
        "C9/§5.3: v1 snappy wrapper with little-endian xerial header",
        legacy_wrapper(v1_inner(2), codec=SNAPPY, offset=1, payload=xerial([b"".join(v1_inner(2))], header=xerial_header(little_endian=True))),
    )
    add(
        "snappy-legacy-negative-chunk",
        "§5.3: v1 snappy wrapper with chunk length -1 (SnappyError at deep-iterator creation)",
        legacy_wrapper(v1_inner(2), codec=SNAPPY, offset=1, payload=xerial_header() + b"\xff\xff\xff\xff"),
    )
    add(
        "snappy-plain-marked-c14",
        "C14: batch marked snappy whose payload is plaintext records",
        v2_batch(recs, attributes=SNAPPY, payload=raw, max_timestamp=TS + 2),
    )


def _lz4_cases(add: _Collector) -> None:
    recs = simple_records(3)
    raw = b"".join(recs)

    def lb(payload: bytes, n: int = 3) -> bytes:
        return v2_batch(simple_records(n), attributes=LZ4, payload=payload, max_timestamp=TS + n - 1)

    def lw(magic: int, payload: bytes) -> bytes:
        inner = v1_inner(2, magic=magic, offsets=[0, 1])
        return legacy_wrapper(inner, magic=magic, codec=LZ4, offset=1, payload=payload)

    def inner_raw(magic: int) -> bytes:
        return b"".join(v1_inner(2, magic=magic, offsets=[0, 1]))

    add("lz4-v2-java", "§5.4/A.3: v2 lz4 batch as Java writes it (FLG 60 BD 40 HC 82)", lb(codecs.compress(LZ4, raw, 2)))
    big_recs = simple_records(30, value_size=3000)
    add(
        "lz4-multi-block-c18",
        "C18/§5.4: ~90 KB of records in two 64 KiB blocks",
        v2_batch(big_recs, attributes=LZ4, max_timestamp=TS + 29),
    )
    add("lz4-v2-broken-hc-c16", "C16/§5.4: v2 batch with the magic-0 'broken' HC: 'Stream frame descriptor corrupted'", lb(lz4_custom([raw], hc="broken")))
    add("lz4-v2-bad-hc", "§5.4: v2 batch with HC byte 00", lb(lz4_custom([raw], hc=0)))
    add("lz4-v0-broken-hc-c16a", "C16a/C17/C20/§5.4: v0 lz4 wrapper with the broken HC (as old Java wrote)", lw(0, lz4_custom([inner_raw(0)], hc="broken")))
    add("lz4-v1-correct-hc-c16b", "C16b/§5.4: v1 lz4 wrapper with the correct HC", lw(1, lz4_custom([inner_raw(1)], hc="correct")))
    add("lz4-v1-broken-hc-c16c", "C16c/§5.4: v1 lz4 wrapper with the broken HC: rejected", lw(1, lz4_custom([inner_raw(1)], hc="broken")))
    add("lz4-v0-correct-hc-c16d", "C16d/§5.4: v0 lz4 wrapper with the correct HC: HC ignored for magic 0", lw(0, lz4_custom([inner_raw(0)], hc="correct")))
    add("lz4-v0-garbage-hc", "§5.4: v0 lz4 wrapper with HC byte 0x5A: ignored", lw(0, lz4_custom([inner_raw(0)], hc=0x5A)))
    add("lz4-v2-correct-hc-c16", "C16/§5.4: v2 with the correct HC built by hand", lb(lz4_custom([raw])))
    add("lz4-reserved-bit0-dictid", "§5.4: FLG bit 0 (DictID in newer spec) set: 'Reserved bits must be 0'", lb(lz4_custom([raw], flg=0x61)))
    add("lz4-reserved-bit1", "§5.4: FLG bit 1 set", lb(lz4_custom([raw], flg=0x62)))
    add("lz4-dependent-blocks-c18", "C18/§5.4: FLG block independence 0: 'Dependent block stream is unsupported'", lb(lz4_custom([raw], flg=0x40)))
    add("lz4-version-0", "§5.4: FLG version bits 00", lb(lz4_custom([raw], flg=0x20)))
    add("lz4-version-2", "§5.4: FLG version bits 10", lb(lz4_custom([raw], flg=0xA0)))
    add("lz4-bd-code-3", "§5.4: BD block max size code 3: 'Block size value must be between 4 and 7'", lb(lz4_custom([raw], bd=0x30)))
    add("lz4-bd-reserved-bits", "§5.4: BD reserved low bits set (0x41)", lb(lz4_custom([raw], bd=0x41)))
    add("lz4-bd-reserved-bit7", "§5.4: BD reserved bit 7 set (0xC0)", lb(lz4_custom([raw], bd=0xC0)))
    add("lz4-bd-256k", "§5.4: BD code 5 (256 KiB): accepted", lb(lz4_custom([raw], bd=0x50)))
    add("lz4-bd-4m", "§5.4: BD code 7 (4 MiB): accepted", lb(lz4_custom([raw], bd=0x70)))
    add("lz4-content-size-c18", "C18/§5.4: FLG content-size flag with the true size", lb(lz4_custom([raw], content_size=len(raw))))
    add("lz4-content-size-wrong", "§5.4: content size field 12345 (not the true size): not checked", lb(lz4_custom([raw], content_size=12345)))
    add("lz4-block-checksum-good-c18", "C18/§5.4: block checksums present and correct", lb(lz4_custom([raw], block_checksum=True)))
    add("lz4-block-checksum-bad", "§5.4: block checksum wrong: 'Block checksum mismatch'", lb(lz4_custom([raw], block_checksum="bad")))
    add("lz4-content-checksum-good-c19", "C19/§5.4: content checksum present and correct", lb(lz4_custom([raw], content_checksum=True)))
    add("lz4-content-checksum-wrong-c19", "C19/§5.4: content checksum wrong: read but not verified", lb(lz4_custom([raw], content_checksum=0xDEADBEEF)))
    add("lz4-content-checksum-missing-c19", "C19/§5.4: content checksum flag set but the 4 bytes missing: raw BufferUnderflowException", lb(lz4_custom([raw], content_checksum="missing")))
    add(
        "lz4-all-flags",
        "§5.4: content size + block checksums + content checksum together",
        lb(lz4_custom([raw], content_size=len(raw), block_checksum=True, content_checksum=True)),
    )
    add("lz4-uncompressed-blocks", "§5.4: every block stored uncompressed (size top bit)", lb(lz4_custom([(r, "raw") for r in recs])))
    add("lz4-many-small-blocks", "§5.4: one compressed block per 7 bytes", lb(lz4_custom([raw[i : i + 7] for i in range(0, len(raw), 7)])))
    add(
        "lz4-empty-compressed-block",
        "§5.4: a 1-byte compressed block (token 00) that decodes to 0 bytes, then the data block",
        lb(lz4_custom([b""] + [raw])),
    )
    add(
        "lz4-end-mark-first",
        "§5.4: a block size of 0 (end mark) before the data block: the stream ends early",
        lb(lz4_custom([raw], end_mark=False)[:7] + b"\x00\x00\x00\x00" + lz4_custom([raw])[7:]),
    )
    add("lz4-missing-end-mark", "§5.4: no end mark: 'Error checking for remaining bytes' / 'Stream ended prematurely'", lb(lz4_custom([raw], end_mark=False)))
    add("lz4-junk-after-end-mark", "§5.4: 9 junk bytes after the end mark: ignored", lb(lz4_custom([raw], trailer=b"JUNKJUNK!")))
    add("lz4-junk-after-content-checksum", "§5.4: junk after end mark + content checksum: ignored", lb(lz4_custom([raw], content_checksum=True, trailer=b"\x01\x02")))
    add("lz4-block-size-over-max", "§5.4: block size field 0x10001 > 64 KiB max: 'Block size ... exceeded max'", lb(lz4_custom([(raw, "size:10001")])))
    add("lz4-block-size-short", "§5.4: block size field larger than the bytes left: 'Stream ended prematurely'", lb(lz4_custom([(raw, "size:400")], end_mark=False)))
    add("lz4-bad-magic", "§5.4: magic 05 22 4d 18: 'Stream unsupported (invalid magic bytes)'", lb(b"\x05" + codecs.compress(LZ4, raw, 2)[1:]))
    add("lz4-short-5-bytes", "§5.4: 5-byte payload: 'Stream ended prematurely'", lb(codecs.compress(LZ4, raw, 2)[:5]))
    add("lz4-empty", "§5.4: empty lz4 payload", lb(b""))
    add("lz4-header-only", "§5.4: frame header (7 bytes) and nothing else", lb(codecs.compress(LZ4, raw, 2)[:7]))
    good_frame = lz4_custom([raw])
    add(
        "lz4-corrupt-block",
        "§5.4: compressed block bytes replaced by zeros (offset 0 match): LZ4Exception -> IOException",
        lb(good_frame[:11] + bytes(len(good_frame) - 15) + good_frame[-4:]),
    )
    add("lz4-truncated-frame", "C3/§5.4: frame truncated inside the block (batch resealed)", lb(codecs.compress(LZ4, raw, 2)[:30]))
    add(
        "lz4-legacy-v1-content-checksum-missing",
        "§5.4: v1 lz4 wrapper, content checksum flag set but missing",
        lw(1, lz4_custom([inner_raw(1)], content_checksum="missing")),
    )
    add(
        "lz4-legacy-v0-dependent",
        "§5.4: v0 lz4 wrapper with dependent blocks (FLG 0x40)",
        lw(0, lz4_custom([inner_raw(0)], flg=0x40, hc="broken")),
    )
    add(
        "lz4-legacy-v1-java",
        "§5.4: v1 lz4 wrapper with many inner messages spanning two blocks",
        legacy_wrapper([legacy_message(b"k%d" % i, text(2000, i), offset=i) for i in range(40)], codec=LZ4, offset=39),
    )


def _zstd_cases(add: _Collector) -> None:
    recs = simple_records(3)
    raw = b"".join(recs)

    def zb(payload: bytes, n: int = 3) -> bytes:
        return v2_batch(simple_records(n), attributes=ZSTD, payload=payload, max_timestamp=TS + n - 1)

    add("zstd-v2", "§5.5: v2 zstd batch with content size", zb(zstd_std(raw)))
    add("zstd-no-content-size-c21", "C21/§5.5: zstd frame without content size", zb(zstd_std(raw, content_size=False)))
    add("zstd-checksum", "§5.5: zstd frame with a content checksum", zb(zstd_std(raw, checksum=True)))
    add("zstd-multi-frame-c21", "C21/§5.5: records split over two concatenated frames", zb(zstd_std(b"".join(recs[:2])) + zstd_std(recs[2])))
    add(
        "zstd-skippable-c21",
        "C21/§5.5: skippable frame (0x184D2A50) before and between data frames",
        zb(b"\x50\x2a\x4d\x18" + struct.pack("<I", 6) + b"SKIPME" + zstd_std(recs[0]) + b"\x5f\x2a\x4d\x18\x00\x00\x00\x00" + zstd_std(b"".join(recs[1:]))),
    )
    add("zstd-trailing-junk", "§5.5: junk after the frame: 'Unknown frame descriptor' at the leftover check", zb(zstd_std(raw) + b"JUNKJUNK"))
    add("zstd-trailing-zeros", "§5.5: 4 zero bytes after the frame", zb(zstd_std(raw) + bytes(4)))
    full = zstd_std(raw)
    add("zstd-truncated-c21", "C21/§5.5: frame cut in the middle: 'Truncated source'", zb(full[: len(full) - 6]))
    add("zstd-truncated-header", "§5.5: only the 4-byte magic", zb(full[:4]))
    add("zstd-empty", "§5.5: empty zstd payload with count 3", zb(b""))
    add("zstd-bad-magic", "§5.5: first byte of the magic changed", zb(b"\x29" + full[1:]))
    add("zstd-raw-blocks", "§5.5: hand-made frame of raw blocks with an 8-byte content size", zb(zstd_raw_frame(raw, content_size=len(raw))))
    add("zstd-raw-blocks-no-fcs", "§5.5: hand-made frame of raw blocks, no content size", zb(zstd_raw_frame(raw)))
    add("zstd-content-size-lies-small-c21", "C21/§5.5: frame content size 10 smaller than the real content", zb(zstd_raw_frame(raw, content_size=10)))
    add("zstd-content-size-lies-large-c21", "C21/§5.5: frame content size larger than the real content", zb(zstd_raw_frame(raw, content_size=len(raw) + 100)))
    add("zstd-content-size-2-40-c25", "C25/§5.5: frame content size 2^40 over a tiny payload", zb(zstd_raw_frame(raw, content_size=2**40)))
    add("zstd-checksum-good-raw", "§5.5: raw-block frame with a correct checksum", zb(zstd_raw_frame(raw, checksum=True)))
    add("zstd-checksum-bad", "§5.5: raw-block frame with a wrong checksum", zb(zstd_raw_frame(raw, checksum=0x01020304)))
    big_recs = simple_records(40, value_size=3000)
    add("zstd-large", "§5.5: zstd batch of ~120 KB of records", v2_batch(big_recs, attributes=ZSTD, max_timestamp=TS + 39))
    add("zstd-corrupt-byte", "§5.5: one byte inside the compressed block flipped (content may change silently)", zb(full[:14] + flip(full[14:], 3, 0xFF)))
    rf = zstd_raw_frame(raw)
    add("zstd-reserved-block-type", "§5.5: block header with the reserved block type 3", zb(rf[:6] + bytes([rf[6] | 0x06]) + rf[7:]))
    add("zstd-rle-block", "§5.5: hand-made frame with one RLE block of 200 zero bytes after a raw block (count 1)",
        v2_batch([], attributes=ZSTD, count=1, payload=ZSTD_MAGIC + b"\x00\x50" + ((0 | (0 << 1) | (len(recs[0]) << 3)).to_bytes(3, "little") + recs[0]) + ((1 | (1 << 1) | (200 << 3)).to_bytes(3, "little") + b"\x00")))
    # zstd-jni's frameFinished is never cleared once a frame (skippable or not) ends: running
    # out of input afterwards is a clean end of stream (found by differential fuzzing)
    one = zstd_std(v2_record(b"k", b"v" * 300))
    skip_trunc = struct.pack("<II", 0x184D2A5F, 1000) + b"abc"
    skip_full = struct.pack("<II", 0x184D2A50, 3) + b"abc"
    for name, payload, count in (
        ("zstd-frame-then-truncated-frame", one + one[: len(one) // 2], 2),
        ("zstd-frame-then-truncated-skippable", one + skip_trunc, 2),
        ("zstd-skippable-then-truncated-skippable", skip_full + skip_trunc, 1),
        ("zstd-truncated-skippable-alone", skip_trunc, 1),
        # zstd's "bytes left to skip" hint goes through a 32-bit int in zstd-jni: within 119
        # of 2**32 it reads as an error code (found by fuzzing)
        ("zstd-skippable-hint-error-code", one + struct.pack("<II", 0x184D2A5F, 0xFFFFFF8C) + b"abc", 2),
        ("zstd-skippable-hint-just-below", one + struct.pack("<II", 0x184D2A5F, 0xFFFFFF8B) + b"abc", 2),
        ("zstd-skippable-hint-error-at-end-check", one + struct.pack("<II", 0x184D2A5F, 0xFFFFFFFF), 1),
    ):
        add(name, "zstd-jni: a truncated frame is an error only before the first whole frame",
            v2_batch([], attributes=ZSTD, count=count, payload=payload))


def _codec_cases(add: _Collector) -> None:
    recs = simple_records(6, value_size=6000)
    for codec, cname in ((GZIP, "gzip"), (SNAPPY, "snappy"), (LZ4, "lz4"), (ZSTD, "zstd")):
        add(
            f"codec-{cname}-v2-several-records",
            f"§5.1/§5.{codec + 1}: {cname} v2 batch with 6 records of 6 KB (> 32 KiB uncompressed)",
            v2_batch(recs, attributes=codec, max_timestamp=TS + 5, base_offset=1000),
        )
        add(
            f"codec-{cname}-headers-and-nulls",
            f"§5.1: {cname} v2 batch with headers, null key/value, empty values",
            v2_batch(
                [
                    v2_record(None, b"v", [("h", None), ("", b"")]),
                    v2_record(b"", None, offset_delta=1, timestamp_delta=-1),
                    v2_record(b"k", b"", [("x", b"y")], offset_delta=2, timestamp_delta=3),
                ],
                attributes=codec,
                max_timestamp=TS + 3,
            ),
        )
    for length in (2147483645, 2147483646):  # the JVM's byte[] limit (found by fuzzing)
        add(
            f"codec-gzip-record-length-{length}",
            "Kafka allocates the record buffer before reading it: above 2147483645 bytes the "
            "JVM throws OutOfMemoryError (Requested array size exceeds VM limit), below it the "
            "payload reaches EOF",
            v2_batch([], attributes=GZIP, count=1,
                     payload=gzip_member(encode_varint(length) + b"\x00" * 20)),
        )
        inner = struct.pack(">qi", 0, length) + b"\x00" * 20
        add(
            f"legacy-wrapper-inner-size-{length}",
            "the legacy deep iterator allocates each inner entry before reading it: same JVM "
            "array limit as for v2 records",
            legacy_message(None, gzip_member(inner), magic=1, attributes=GZIP),
        )
    zero_rec = b"\x00" * (64 * 1024 * 1024)
    add(
        "codec-gzip-bomb-c25",
        "C25/§3.5(b): ~64 KB gzip payload expanding to 64 MiB of zeros (length-0 records): fails on the first record",
        v2_batch([], attributes=GZIP, count=1, payload=gzip_member(zero_rec, level=9)),
    )
    add(
        "codec-zstd-bomb-c25",
        "C25/§3.5(b): tiny zstd payload expanding to 64 MiB of zeros",
        v2_batch([], attributes=ZSTD, count=1, payload=zstd_std(zero_rec)),
    )
    add(
        "codec-gzip-bomb-trailing-c25",
        "C25/§3.5(b): one valid record followed by 32 MiB of zeros: 'records still remaining' after 1 byte",
        v2_batch([], attributes=GZIP, count=1, payload=gzip_member(v2_record() + b"\x00" * (32 * 1024 * 1024), level=9)),
    )
    add(
        "codec-lz4-bomb-c25",
        "C25/§3.5(b): lz4 payload expanding to 8 MiB of zeros",
        v2_batch([], attributes=LZ4, count=1, payload=codecs.compress(LZ4, b"\x00" * (8 * 1024 * 1024), 2)),
    )
    add(
        "codec-gzip-plain-marked-c14",
        "C14: batch marked gzip whose payload is plaintext records",
        v2_batch(simple_records(2), attributes=GZIP, payload=b"".join(simple_records(2)), max_timestamp=TS + 1),
    )
    add(
        "codec-none-payload-compressed",
        "§5.1: codec none but the payload is a gzip stream",
        v2_batch([], count=1, payload=codecs.compress(GZIP, v2_record())),
    )
    add(
        "codec-legacy-v1-codec-7-wrapper",
        "§2.2/§5.1: v1 message with codec 7 and a gzip value",
        legacy_message(None, codecs.compress(GZIP, b"".join(v1_inner(1))), attributes=7),
    )
    add(
        "codec-count-0-all-codecs",
        "§3.5: four count-0 batches with codecs gzip/snappy/lz4/zstd and garbage payloads (codec opened or not)",
        b"".join(v2_batch([], attributes=c, count=0, payload=b"garbage", base_offset=c) for c in (1, 2, 3, 4)),
        _BOTH,
    )


def _mixed_cases(add: _Collector) -> None:
    v0w = legacy_wrapper(v1_inner(2, magic=0, offsets=[0, 1]), magic=0, codec=GZIP, offset=1)
    v1w = legacy_wrapper(v1_inner(3), magic=1, codec=GZIP, offset=4)
    add("mixed-v0-then-v1-wrapper-c42", "C42/C43/§2.5: v0 gzip wrapper (absolute inner) then v1 gzip wrapper (relative inner)", v0w + v1w)
    add("mixed-v1-then-v0-wrapper-c42", "C42/§2.5: v1 gzip wrapper then v0 gzip wrapper", v1w + legacy_wrapper(v1_inner(2, magic=0, offsets=[5, 6]), magic=0, codec=GZIP, offset=6))
    add(
        "mixed-v1-v1-v2-c44",
        "C44/§6.2: two v1 messages then a v2 batch (format upgrade in one partition)",
        legacy_message(b"a", b"1", offset=0) + legacy_message(b"b", b"2", offset=1) + simple_batch(2, base_offset=2),
    )
    add("mixed-v2-v1-c44", "C44: a v2 batch then a v1 message (kafkajs decides by the first magic)", simple_batch(2, base_offset=0) + legacy_message(b"c", b"3", offset=2))
    add(
        "mixed-v0-v1-v2",
        "§1/§6.2: v0 message, v1 snappy wrapper, v2 lz4 batch, v2 zstd batch",
        legacy_message(b"a", b"0", magic=0, offset=0)
        + legacy_wrapper(v1_inner(2), codec=SNAPPY, offset=2)
        + v2_batch(simple_records(2), attributes=LZ4, base_offset=3, max_timestamp=TS + 1)
        + v2_batch(simple_records(2), attributes=ZSTD, base_offset=5, max_timestamp=TS + 1),
    )
    add(
        "mixed-v1-lz4-v0-lz4",
        "C16/§5.4: v1 lz4 wrapper (correct HC) then v0 lz4 wrapper (broken HC)",
        legacy_wrapper(v1_inner(2), codec=LZ4, offset=1) + legacy_wrapper(v1_inner(2, magic=0, offsets=[2, 3]), magic=0, codec=LZ4, offset=3),
    )
    add(
        "mixed-v2-then-bad-legacy",
        "§1.2/§2.3: v2 batch then a v1 message with a bad CRC: error at batch_index 1",
        simple_batch(1) + legacy_message(offset=1, crc=3),
    )
    add(
        "mixed-legacy-then-partial-v2",
        "§1.2/§1.3: v1 message then a truncated v2 batch (30 bytes)",
        legacy_message(offset=0) + simple_batch(3, base_offset=1)[:30],
    )
    add(
        "mixed-control-and-data",
        "§3.7: data batch, COMMIT marker, legacy v1 message",
        v2_batch(simple_records(1), attributes=ATTR_TRANSACTIONAL, producer_id=4242, producer_epoch=3, base_sequence=0, base_offset=9)
        + ctl_batch_kv(ctl_key(1), ctl_value(), base_offset=10)
        + legacy_message(offset=11),
    )


def cases() -> list[Case]:
    """Every crafted case, in a stable order (names unique, kebab-case, area-prefixed)."""
    add = _Collector()
    _split_cases(add)
    _v2_cases(add)
    _rec_cases(add)
    _hdr_cases(add)
    _varint_cases(add)
    _ctl_cases(add)
    _legacy_cases(add)
    _gzip_cases(add)
    _snappy_cases(add)
    _lz4_cases(add)
    _zstd_cases(add)
    _codec_cases(add)
    _mixed_cases(add)
    return add.items


if __name__ == "__main__":  # pragma: no cover
    all_cases = cases()
    print(f"{len(all_cases)} cases, {sum(len(c.data) for c in all_cases)} bytes")
    for c in all_cases:
        print(f"{c.name:50s} {len(c.data):7d} {','.join(c.modes)}")
