"""Java's stream layers over a decompressed payload, replayed byte for byte.

=====================  ==============================================================
layer (Java)           here
=====================  ==============================================================
codec ``InputStream``  :class:`JavaStreamReader` ``_under_read`` (policy ``piece``: one
                       decompressed block per call; ``fill``: as many bytes as asked)
``ChunkedBytesStream`` :class:`JavaStreamReader` ``read``/``read_fully`` (a ``fill_size``
                       buffer; requests of at least that size bypass it)
``Utils.readFully``    :meth:`JavaStreamReader.read_fully`
``DataInputStream``    :class:`DataInputReader` (end of stream: :class:`StreamEof`)
=====================  ==============================================================

The record readers (:mod:`conformance.wire.record`, ``record_partial``, the broker's
iterators) read through these, so a short read or a codec error surfaces at the very read
where Kafka's does.
"""

from __future__ import annotations

from conformance.codecs import FILL, Decompressed
from conformance.errors import BufferUnderflowError

__all__ = ["DataInputReader", "JavaStreamReader", "StreamEof"]


class JavaStreamReader:
    """A decompressed payload read the way Kafka reads it (``codecs.Decompressed`` replayed).

    Layers, as in Java: the codec's ``InputStream.read(len)`` (policy ``piece`` or ``fill``),
    under ``ChunkedBytesStream`` (a ``fill_size`` buffer, direct reads for big requests),
    under ``Utils.readFully`` / single-byte ``read()``. Errors therefore surface at the very
    read where Java meets them, and short reads end record parsing where Java's do.
    """

    __slots__ = (
        "pieces",
        "error",
        "lossy",
        "fill",
        "size",
        "pi",
        "cur",
        "po",
        "buf",
        "bpos",
        "eof",
        "skip_to_stream",
    )

    def __init__(self, stream: Decompressed) -> None:
        self.pieces = stream.pieces
        self.error = stream.error
        self.lossy = stream.lossy
        self.fill = stream.policy == FILL
        self.size = stream.fill_size
        self.pi = -1
        self.cur: bytes = b""
        self.po = 0
        self.buf: bytes = b""
        self.bpos = 0
        self.eof = False
        self.skip_to_stream = stream.skip_to_stream

    # -- the codec stream (Java: Lz4BlockInputStream / SnappyInputStream / GZIPInputStream ...)
    def _next_piece(self) -> bytes | None:
        """Advance to the next piece; None for a snappy -1 marker; raises at the end on error."""
        self.pi += 1
        self.po = 0
        if self.pi >= len(self.pieces):
            self.pi = len(self.pieces)
            self.cur = b""  # nothing is read again after the end (Java keeps returning -1)
            self.eof = True
            if self.error is not None:
                raise self.error
            return None
        piece = self.pieces[self.pi]
        self.cur = b"" if piece is None else piece
        return piece

    def _under_read(self, n: int) -> bytes | None:
        """``read(b, 0, n)`` of the codec stream: bytes (``b""`` = Java's 0), None = -1."""
        if self.fill:
            parts = []
            total = 0
            while total < n:
                if self.po >= len(self.cur):
                    if self.eof:
                        break
                    if self.pi + 1 >= len(self.pieces) and self.error is None:
                        self.pi += 1
                        self.eof = True
                        break
                    if self._next_piece() is None:
                        break
                    continue
                take = self.cur[self.po : self.po + n - total]
                self.po += len(take)
                total += len(take)
                parts.append(take)
            if not parts:
                return None
            return b"".join(parts)
        if self.po >= len(self.cur):
            if self.eof:
                return None
            if self._next_piece() is None:
                return None
            if not self.cur:
                return b""  # an empty lz4 block: read() returns 0
        if self.lossy and self.pi == len(self.pieces) - 1 and len(self.cur) - self.po < n:
            assert self.error is not None
            self.eof = True
            raise self.error  # the call that runs into the corruption loses its bytes
        out = self.cur[self.po : self.po + n]
        self.po += len(out)
        return out

    def _under_available(self) -> int:
        if self.po < len(self.cur):
            return len(self.cur) - self.po
        if not self.fill or self.eof:
            return 0
        # SnappyInputStream.available() calls hasNextChunk()
        if self.pi + 1 >= len(self.pieces) and self.error is None:
            return 0
        self._next_piece()
        return len(self.cur)

    # -- ChunkedBytesStream ------------------------------------------------------------------
    def read(self) -> int:
        if self.bpos >= len(self.buf):
            self.bpos = 0
            r = self._under_read(self.size)
            self.buf = r or b""
            if not self.buf:
                if r == b"" and self.size == 1:
                    # no buffer in between (Kafka 2.x lz4): read() of an empty block is
                    # decompressedBuffer.get() on nothing
                    raise BufferUnderflowError()
                return -1
        b = self.buf[self.bpos]
        self.bpos += 1
        return b

    def _read1(self, n: int) -> bytes | None:
        avail = len(self.buf) - self.bpos
        if avail <= 0:
            if n >= self.size:
                return self._under_read(n)
            self.bpos = 0
            r = self._under_read(self.size)
            self.buf = r or b""
            if not self.buf:
                return None
            avail = len(self.buf)
        out = self.buf[self.bpos : self.bpos + n]
        self.bpos += len(out)
        return out

    def _read_into(self, n: int) -> bytes | None:
        if n == 0:
            return b""
        parts = []
        got = 0
        while True:
            r = self._read1(n - got)
            if not r:
                return r if got == 0 else b"".join(parts)
            parts.append(r)
            got += len(r)
            if got >= n or self._under_available() <= 0:
                return b"".join(parts)

    def read_fully(self, n: int) -> bytes:
        """``Utils.readFully``: up to ``n`` bytes, fewer only at end of stream."""
        avail = len(self.buf) - self.bpos
        if n <= avail:  # fast path: served from the chunk buffer
            out = self.buf[self.bpos : self.bpos + n]
            self.bpos += n
            return out
        parts = []
        got = 0
        while True:
            r = self._read_into(n - got)
            if r is None:
                break
            parts.append(r)
            got += len(r)
            if got >= n:
                break
        return b"".join(parts)

    def _under_skip(self, n: int) -> int:
        """The codec stream's ``skip(n)`` (lz4's ``Lz4BlockInputStream.skip``): the next block
        when the current one is used up (its error raised there), then at most what is left
        of the block; 0 at the end."""
        if self.po >= len(self.cur) and (self.eof or self._next_piece() is None):
            return 0
        k = min(n, len(self.cur) - self.po)
        self.po += k
        return k

    def skip(self, n: int) -> int:
        """``ChunkedBytesStream.skip``: the buffered bytes first, then the codec stream's
        ``skip`` (``skip_to_stream``; a 0 there reads one byte to tell the end) or buffer
        fills; the bytes skipped (fewer only at the end)."""
        if n <= 0:
            return 0
        k = min(len(self.buf) - self.bpos, n)
        self.bpos += k
        remaining = n - k
        while remaining > 0:
            if self.skip_to_stream:
                skipped = self._under_skip(remaining)
                if skipped == 0:
                    if self.read() == -1:
                        break
                    remaining -= 1
                remaining -= skipped
            else:
                if self.bpos >= len(self.buf):
                    self.bpos = 0
                    self.buf = self._under_read(self.size) or b""
                    if not self.buf:
                        break
                k = min(len(self.buf) - self.bpos, remaining)
                self.bpos += k
                remaining -= k
        return n - remaining

    def at_end(self) -> bool:
        """``inputStream.read() == -1`` (the leftover-data check)."""
        return self.read() == -1


class StreamEof(Exception):
    """``EOFException`` of a ``DataInputStream`` read (Kafka 2.x's record readers)."""


class DataInputReader:
    """``DataInputStream.readByte`` over a :class:`JavaStreamReader`: the end of the stream
    raises :class:`StreamEof` instead of reading as -1."""

    __slots__ = ("src",)

    def __init__(self, src: JavaStreamReader) -> None:
        self.src = src

    def read(self) -> int:
        b = self.src.read()
        if b < 0:
            raise StreamEof()
        return b
