"""Shared pieces of the crafted cases: the case record, the collector, deterministic data, and
the crafted defaults for the wire writers.

There is no record, batch or message writer here: every structure is written by the one writer
next to its reader (``conformance.wire.record.write_record_v2``,
``conformance.wire.batch.write_batch_v2`` / ``seal_v2``,
``conformance.wire.legacy.write_legacy_message`` / ``write_legacy_wrapper``,
``conformance.wire.control.write_control_key`` / ``write_end_txn_marker_value``), whose
keyword knobs make the faults (wrong length, stale CRC, raw varints, ...). The helpers below
only give those writers the crafted cases' defaults: timestamp :data:`TS`, key ``b"k"``,
value ``b"v"``, magic 1 for legacy messages.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from conformance.codecs import GZIP, LZ4, NONE, SNAPPY, ZSTD
from conformance.stream.splitter import MODES
from conformance.wire.batch import seal_v2, write_batch_v2
from conformance.wire.control import write_control_key, write_end_txn_marker_value
from conformance.wire.layout import (
    CONTROL_FLAG_MASK,
    MAGIC_VALUE_V1,
    TRANSACTIONAL_FLAG_MASK,
)
from conformance.wire.legacy import write_legacy_message, write_legacy_wrapper
from conformance.wire.record import HeaderInput, Raw, write_record_v2

__all__ = [
    "AREAS",
    "BOTH",
    "GZIP",
    "LZ4",
    "MEMORY",
    "NONE",
    "SNAPPY",
    "TS",
    "ZSTD",
    "Case",
    "Collector",
    "Raw",
    "codec_batch",
    "control_batch",
    "ctl_batch_kv",
    "ctl_key",
    "ctl_value",
    "flip",
    "legacy_message",
    "legacy_wrapper",
    "legacy_wrapper_over",
    "patch",
    "prand",
    "reseal",
    "simple_batch",
    "simple_records",
    "text",
    "v1_inner",
    "v2_batch",
    "v2_record",
]


TS = 1_700_000_000_000  # 2023-11-14T22:13:20Z, the timestamp of docs/format.md Appendix A
AREAS = (
    "split-",
    "v2-",
    "rec-",
    "varint-",
    "hdr-",
    "ctl-",
    "legacy-",
    "gzip-",
    "snappy-",
    "lz4-",
    "zstd-",
    "codec-",
    "mixed-",
)
_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
BOTH = MODES
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


def v2_record(
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    headers: Sequence[HeaderInput] = (),
    **knobs: Any,
) -> bytes:
    """``write_record_v2`` with key ``b"k"`` and value ``b"v"`` by default; every keyword
    (``offset_delta``, ``timestamp_delta``, ``attributes`` and the fault knobs ``length``,
    ``header_count``, ``trailing``, ``end_after``) goes to the writer."""
    return write_record_v2(key=key, value=value, headers=headers, **knobs)


#: ``write_batch_v2`` with baseTimestamp :data:`TS` by default (every knob as there)
v2_batch = partial(write_batch_v2, base_timestamp=TS)
#: recompute batchLength and/or the CRC-32C after a field was corrupted
reseal = seal_v2


def simple_records(
    n: int, *, tag: bytes = b"", ts_step: int = 1, value_size: int = 0
) -> list[bytes]:
    """n ordinary records: key k<i>, value v<i> (or value_size bytes of text), deltas i."""
    out = []
    for i in range(n):
        value = (b"v%d" % i + tag) if not value_size else text(value_size, seed=i)
        out.append(v2_record(b"k%d" % i, value, offset_delta=i, timestamp_delta=i * ts_step))
    return out


def simple_batch(n: int = 3, *, value_size: int = 0, **kw: Any) -> bytes:
    kw.setdefault("max_timestamp", TS + max(n - 1, 0))
    return v2_batch(simple_records(n, value_size=value_size), **kw)


def codec_batch(codec: int, payload: bytes, n: int = 3) -> bytes:
    """:func:`simple_batch` of ``n`` records whose attributes name ``codec`` and whose records
    section is ``payload``, as given (the records compressed, or a broken stream)."""
    return simple_batch(n, attributes=codec, payload=payload)


def legacy_message(
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    *,
    magic: int = MAGIC_VALUE_V1,
    attributes: int = 0,
    timestamp: int = TS,
    offset: int = 0,
    **knobs: Any,
) -> bytes:
    """``write_legacy_message`` with the crafted defaults (a v1 message ``k`` -> ``v`` at
    offset 0, timestamp :data:`TS`); the fault knobs (``crc``, ``size``, ``key_length``,
    ``value_length``, ``trailing``, ``truncate``) go to the writer."""
    return write_legacy_message(magic, offset, timestamp, key, value, attributes, **knobs)


def legacy_wrapper(
    inner: Sequence[bytes],
    *,
    magic: int = MAGIC_VALUE_V1,
    codec: int = GZIP,
    offset: int = 0,
    timestamp: int = TS,
    extra_attributes: int = 0,
    **knobs: Any,
) -> bytes:
    """``write_legacy_wrapper`` with the crafted defaults (v1, gzip, offset 0, :data:`TS`);
    the fault knobs (``payload``, ``key``, ``crc``) go to the writer."""
    return write_legacy_wrapper(magic, offset, timestamp, inner, codec, extra_attributes, **knobs)


def legacy_wrapper_over(
    codec: int, compress: Callable[[bytes], bytes], *, magic: int = MAGIC_VALUE_V1
) -> bytes:
    """A wrapper at offset 1 over two inner messages (:func:`v1_inner`, of ``magic``): its
    attributes name ``codec``, its value is ``compress`` of the inner messages' bytes."""
    inner = v1_inner(2, magic=magic)
    return legacy_wrapper(
        inner, magic=magic, codec=codec, offset=1, payload=compress(b"".join(inner))
    )


def v1_inner(
    n: int, *, magic: int = MAGIC_VALUE_V1, offsets: Sequence[int] | None = None, ts: int = TS
) -> list[bytes]:
    """n inner messages with offsets 0..n-1 (or the given ones), timestamps ts+i."""
    offs = list(range(n)) if offsets is None else list(offsets)
    return [
        legacy_message(b"k%d" % i, b"v%d" % i, magic=magic, offset=o, timestamp=ts + i)
        for i, o in enumerate(offs)
    ]


#: a control record key ``version int16 | type int16``
ctl_key = write_control_key


def ctl_value(coordinator_epoch: int = 7, version: int = 0) -> bytes:
    """An end-transaction marker value (coordinator epoch 7 by default)."""
    return write_end_txn_marker_value(coordinator_epoch, version)


def control_batch(
    records: Iterable[bytes],
    *,
    attributes: int = TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK,
    **kw: Any,
) -> bytes:
    """A transactional control batch of producer 4242/3 at offset 10 (every knob of v2_batch)."""
    kw.setdefault("producer_id", 4242)
    kw.setdefault("producer_epoch", 3)
    kw.setdefault("base_offset", 10)
    return v2_batch(records, attributes=attributes, **kw)


def ctl_batch_kv(key: bytes | None, value: bytes | None, **kw: Any) -> bytes:
    return control_batch([v2_record(key, value)], **kw)


class Collector:
    def __init__(self) -> None:
        self.items: list[Case] = []
        self.names: set[str] = set()

    def __call__(
        self, name: str, description: str, data: bytes, modes: Sequence[str] | None = None
    ) -> None:
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
