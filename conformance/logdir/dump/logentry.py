"""Kafka 0.10.2's ``FileLogInputStream``, ``LogEntry`` and ``RecordsIterator``: how a release
that knows no record batches reads a segment (``DumpFormat.entry_reader`` "records").

0.10.2 knows magic 0 and 1 only. Its ``FileLogInputStream.nextEntry`` reads an entry's offset
and size and nothing else; every entry is one ``Record`` over the ``size`` bytes after them,
whatever its magic byte says, and ``Record``'s accessors read any magic other than 0 at the v1
positions. So a magic-2 batch reads as a v1 message of garbage fields:

==========  ===========  ====================================================
``Record``  v1 position  a v2 batch's bytes there
==========  ===========  ====================================================
crc         0            partitionLeaderEpoch
magic       4            magic (2)
attributes  5            the crc's first byte (its low 3 bits: the codec id)
timestamp   6            the crc's other bytes, attributes, lastOffsetDelta
key size    14           lastOffsetDelta's last byte, baseTimestamp's first 3
==========  ===========  ====================================================

The fields read as ``wire.legacy.LegacyMessage`` reads them (the same answers for any magic:
v0 positions for magic 0, v1 positions otherwise, ``ByteBuffer`` bounds as exceptions); this
module holds what differs from the readers of later releases:

=============================  ===================================================================
0.10.2                         here
=============================  ===================================================================
``nextEntry``                  :func:`read_entries`: a size below 14 or above ``maxRecordSize``
                               throws; an entry not wholly before ``end`` ends the file
``LogEntry.iterator``          :meth:`RecordEntry.entry_iterator`: an uncompressed entry is its
                               own record; else ``DeepRecordsIterator``
``DeepRecordsIterator``        the wrapper's value decompressed (a null value: NPE; snappy and
                               lz4 streams made by reflection, so whatever their constructor
                               throws is ``KafkaException: InvocationTargetException``), every
                               inner entry read first; no inner entry of a wrapper of magic > 0:
                               ``NoSuchElementException`` (``getLast``); offsets relative to
                               ``wrapper offset - last inner offset`` for a wrapper magic > 0
                               (no check); inner messages of magic > 0 take the wrapper's
                               timestamp type; a compressed inner message throws when reached
=============================  ===================================================================
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

from conformance import codecs
from conformance.errors import (
    CorruptRecordError,
    DecodeError,
    DecompressionLimitError,
    InvalidRecordError,
    KafkaError,
    NullPointerError,
)
from conformance.fileio import FileSource
from conformance.primitives.java import wrap64
from conformance.wire.layout import (
    LOG_OVERHEAD,
    MAGIC_VALUE_V0,
    RECORD_OVERHEAD_V0,
    SIZE_OFFSET,
)
from conformance.wire.legacy import LegacyBatch, LegacyMessage, read_inner_messages

_I32 = struct.Struct(">i")

#: ``CompressionType.forId`` of the release printing (its codec set; unknown ids throw)
CodecOf = Callable[[int], codecs.Codec]


class RecordEntry(LegacyBatch):
    """``FileChannelLogEntry``: one entry of a file read as one ``Record`` (``message``),
    whatever its magic; its header is read as :class:`~conformance.wire.legacy.LegacyBatch`
    reads one, its records as 0.10.2 reads them (:meth:`entry_iterator`)."""

    __slots__ = ()

    def entry_iterator(
        self,
        codec_of: CodecOf,
        decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    ) -> Iterator[tuple[int, LegacyMessage]]:
        """``LogEntry.iterator()``: (offset, record) pairs, errors where 0.10.2 raises them."""
        wrapper = self.message
        codec = codec_of(wrapper.compression_id)  # isCompressed()
        if codec.id == codecs.NONE:
            yield self.offset, wrapper
            return
        entries, base = self._deep_entries(codec.id, decompressed_limit)
        for inner_offset, inner in entries:  # DeepRecordsIterator.makeNext
            offset = wrap64(base + inner_offset) if base >= 0 else inner_offset
            if codec_of(inner.compression_id).id != codecs.NONE:
                raise InvalidRecordError("Inner messages must not be compressed")
            yield offset, inner

    def _deep_entries(
        self, codec: int, decompressed_limit: int
    ) -> tuple[list[tuple[int, LegacyMessage]], int]:
        """``DeepRecordsIterator``'s constructor: the inner entries, and the base of their
        offsets (-1: absolute)."""
        wrapper = self.message
        wrapper_magic = wrapper.magic
        value = wrapper.value
        by_reflection = codec in (codecs.SNAPPY, codecs.LZ4)
        if value is None and not by_reflection:  # GZIPInputStream reads its header first
            raise NullPointerError(
                'Cannot invoke "java.nio.ByteBuffer.hasRemaining()" because "this.buffer" is null'
            )
        try:
            if value is None:
                raise NullPointerError(None)
            stream = codecs.read_stream(codec, value, wrapper_magic, decompressed_limit)
        except DecompressionLimitError:
            raise
        except DecodeError:
            if not by_reflection:
                raise
            # Constructor.newInstance: whatever the constructor throws, wrapped
            raise KafkaError("java.lang.reflect.InvocationTargetException") from None
        entries = read_inner_messages(stream, wrapper, lambda magic: magic > MAGIC_VALUE_V0)
        if wrapper_magic > MAGIC_VALUE_V0:
            if not entries:  # logEntries.getLast() of an empty ArrayDeque
                raise DecodeError(None, java_class="java.util.NoSuchElementException")
            return entries, self.offset - entries[-1][0]
        return entries, -1


def read_entries(
    whole: FileSource | bytes, start: int, end: int, max_record_size: int
) -> Iterator[RecordEntry]:
    """``FileLogInputStream.nextEntry`` over the file ``whole`` from ``start`` to ``end``."""
    position = start
    while position + LOG_OVERHEAD < end:
        head = whole[position : position + LOG_OVERHEAD]
        size = _I32.unpack_from(head, SIZE_OFFSET)[0]
        if size < RECORD_OVERHEAD_V0:
            raise CorruptRecordError(
                f"Record size is smaller than minimum record overhead ({RECORD_OVERHEAD_V0})."
            )
        if size > max_record_size:
            raise CorruptRecordError(
                f"Record size exceeds the largest allowable message size ({max_record_size})."
            )
        if position + LOG_OVERHEAD + size > end:
            return
        yield RecordEntry(whole[position : position + LOG_OVERHEAD + size], position)
        position += LOG_OVERHEAD + size
