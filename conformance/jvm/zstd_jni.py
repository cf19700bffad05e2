"""Kafka 2.x's zstd: zstd-jni 1.4.9-1's read loop over the libzstd 1.4.9 it ships.

Kafka 2.8 reads zstd through ``BufferedInputStream(ZstdInputStreamNoFinalizer, 16 KiB)``
(``ZstdFactory.wrapForInput``). zstd-jni 1.4.9-1 bundles libzstd 1.4.9, whose decoder
refuses frames that libzstd 1.5 (Kafka 3.x/4.x, and the ``zstandard`` package the kit's
reference uses) reads, e.g. "Corrupted block detected" on blocks a 1.5 encoder writes. So
the broker model of Kafka 2.x reads zstd with that very library: ``libzstd-jni.so`` of the
zstd-jni jar among Kafka 2.8.2's jars (``kafka_jars.kafka2_libzstd``) exports libzstd's own
API (``ZSTD_decompressStream`` ...), driven here through ctypes exactly as the Java class
drives it through JNI:

=====================  ==================================================================
Java (1.4.9-1)         here
=====================  ==================================================================
``read(b, off, len)``  :meth:`ZstdJni.read`: ``readInternal`` again while it returns 0
``readInternal``       :meth:`ZstdJni._read_internal`, line for line: upstream reads of
                       ``ZSTD_DStreamInSize()`` bytes when ``needRead`` and (bytes left or
                       no output yet); end of input after a whole frame is -1, inside one
                       ``IOException("Read error or truncated source")``
``decompressStream``   ``ZSTD_decompressStream``; its ``size_t`` returned as a Java
                       ``int``, then ``Zstd.isError((long) size)`` (sign-extended) and
                       ``IOException("Decompression error: " + getErrorName)``
=====================  ==================================================================

:func:`read_stream_kafka2` is the ``codecs.zstd.Kafka2Reader`` the edges register
(``kafka_jars.use_kafka2_zstd``); the core never loads a library itself.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

from conformance.codecs import PIECE, Decompressed, Limit
from conformance.codecs._stream import IO_EXCEPTION
from conformance.errors import CodecError

__all__ = ["ZstdJni", "open_libzstd", "read_stream_kafka2"]

#: Kafka 2.x wraps the zstd stream in a BufferedInputStream of this size
READ_SIZE = 16 * 1024


class _Buffer(ctypes.Structure):
    """``ZSTD_inBuffer`` / ``ZSTD_outBuffer``."""

    _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


def open_libzstd(path: Path | str) -> Any:
    """The libzstd API of the shared library at ``path`` (must be libzstd 1.4)."""
    lib = ctypes.CDLL(str(path))
    lib.ZSTD_versionNumber.restype = ctypes.c_uint
    version = lib.ZSTD_versionNumber()
    if version // 100 != 104:
        raise OSError(f"{path}: libzstd {version}, not 1.4.x")
    lib.ZSTD_createDStream.restype = ctypes.c_void_p
    lib.ZSTD_initDStream.argtypes = [ctypes.c_void_p]
    lib.ZSTD_initDStream.restype = ctypes.c_size_t
    lib.ZSTD_freeDStream.argtypes = [ctypes.c_void_p]
    lib.ZSTD_freeDStream.restype = ctypes.c_size_t
    lib.ZSTD_DStreamInSize.restype = ctypes.c_size_t
    lib.ZSTD_decompressStream.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(_Buffer),
        ctypes.POINTER(_Buffer),
    ]
    lib.ZSTD_decompressStream.restype = ctypes.c_size_t
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    lib.ZSTD_isError.restype = ctypes.c_uint
    lib.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
    lib.ZSTD_getErrorName.restype = ctypes.c_char_p
    return lib


class ZstdJni:
    """``ZstdInputStreamNoFinalizer`` (zstd-jni 1.4.9-1) over a ``ByteBufferInputStream`` of
    ``payload``: its fields and its read loop."""

    def __init__(self, lib: Any, payload: bytes) -> None:
        self.lib = lib
        self.payload = payload
        self.up = 0  # the upstream ByteBufferInputStream's position
        self.src_cap = int(lib.ZSTD_DStreamInSize())
        self.src = ctypes.create_string_buffer(1)
        self.src_size = 0
        self.src_pos = 0
        self.need_read = True
        self.frame_finished = True
        self.stream = lib.ZSTD_createDStream()
        lib.ZSTD_initDStream(self.stream)

    def close(self) -> None:
        self.lib.ZSTD_freeDStream(self.stream)

    def read(self, n: int) -> bytes | None:
        """``read(dst, 0, n)``: loops while ``readInternal`` returns 0; None is -1."""
        while True:
            out = self._read_internal(n)
            if out is None or out:
                return out

    def _read_internal(self, n: int) -> bytes | None:
        dst = ctypes.create_string_buffer(n)
        dst_pos = 0
        last = -1
        while dst_pos < n and last < dst_pos:
            available = len(self.payload) - self.up
            if self.need_read and (available > 0 or dst_pos == 0):
                if available <= 0:  # in.read(...) == -1
                    self.src_size = 0
                    if self.frame_finished:
                        return None
                    raise CodecError("Read error or truncated source", java_class=IO_EXCEPTION)
                chunk = self.payload[self.up : self.up + self.src_cap]
                self.up += len(chunk)
                self.src = ctypes.create_string_buffer(chunk, len(chunk))
                self.src_size = len(chunk)
                self.src_pos = 0
                self.frame_finished = False
            last = dst_pos
            out = _Buffer(ctypes.cast(dst, ctypes.c_void_p), n, dst_pos)
            inp = _Buffer(ctypes.cast(self.src, ctypes.c_void_p), self.src_size, self.src_pos)
            size = ctypes.c_int32(self.lib.ZSTD_decompressStream(self.stream, out, inp)).value
            dst_pos, self.src_pos = out.pos, inp.pos
            code = size & 0xFFFFFFFFFFFFFFFF  # (long) size, sign-extended, as size_t
            if self.lib.ZSTD_isError(code):
                name = self.lib.ZSTD_getErrorName(code).decode("ascii", "replace")
                raise CodecError(f"Decompression error: {name}", java_class=IO_EXCEPTION)
            if size == 0:  # a frame is complete
                self.frame_finished = True
                self.need_read = self.src_pos == self.src_size
                return dst.raw[:dst_pos]
            self.need_read = dst_pos < n
        return dst.raw[:dst_pos]


def read_stream_kafka2(lib: Any, payload: bytes, limit: Limit) -> Decompressed:
    """The payload as Kafka 2.x reads it: one piece per 16 KiB read of the buffered stream;
    a read that fails loses what it had decoded (the exception leaves the read)."""
    jni = ZstdJni(lib, payload)
    pieces: list[bytes | None] = []
    try:
        while True:
            piece = jni.read(READ_SIZE)
            if piece is None:
                return Decompressed(pieces, None, False, PIECE, READ_SIZE)
            limit.add(len(piece))
            pieces.append(piece)
    except CodecError as e:
        return Decompressed(pieces, e, False, PIECE, READ_SIZE)
    finally:
        jni.close()
