"""What the JVM and Scala add to DumpLogSegments' output: ``java.io.File`` names, JDK I/O
exceptions, ``toString`` of Java values, Scala 2.13 ``mutable.HashMap`` iteration order,
Jackson string escaping and ``System.out`` buffering; plus the uncaught-exception type.
"""

from __future__ import annotations

import os
import re
from typing import Any, TextIO

from conformance.errors import DecodeError
from conformance.primitives.java import java_parse_int

INT_MAX = 0x7FFFFFFF
#: ``Object.toString()`` of an object without its own is ``Class@<identityHashCode, hex>``:
#: HotSpot draws the hash at run time (thread-local xorshift state seeded by the JVM's thread
#: start-up, so it varies with the JVM build and the machine). The kit cannot know it and
#: prints 0, which no identity hash is (HotSpot never hands out 0; docs/dump.md)
UNKNOWN_IDENTITY_HASH = "0"
#: ``--max-message-size`` default (5 MiB)
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
#: ``Snapshots``: ``<offset, 20 digits>-<epoch, 10 digits>.checkpoint``
SNAPSHOT_OFFSET_WIDTH = 20
SNAPSHOT_EPOCH_WIDTH = 10


class Uncaught(Exception):
    """A Java exception that escapes ``main`` (``Exception in thread "main" ...``)."""

    def __init__(self, java_class: str, message: str | None) -> None:
        super().__init__(message)
        self.java_class = java_class
        self.message = message

    def java_string(self) -> str:
        return self.java_class if self.message is None else f"{self.java_class}: {self.message}"


def throwable_string(e: BaseException) -> str:
    if isinstance(e, (Uncaught, DecodeError)):
        return e.java_string()
    raise TypeError(e)  # pragma: no cover


# ------------------------------------------------------------------------------------------
# Java value formatting and small JDK behaviours


def jbool(b: bool) -> str:
    return "true" if b else "false"


def optional_long(v: int | None) -> str:
    """``OptionalLong.toString()``."""
    return "OptionalLong.empty" if v is None else f"OptionalLong[{v}]"


def scala_option(v: int | None) -> str:
    """``Option[Long].toString``."""
    return "None" if v is None else f"Some({v})"


def utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


class JFile:
    """``java.io.File`` on Unix: the normalised path, ``getName``, ``getAbsolutePath``."""

    def __init__(self, path: str) -> None:
        p = re.sub("/+", "/", path)
        if len(p) > 1 and p.endswith("/"):
            p = p[:-1]
        self.path = p

    def __str__(self) -> str:
        return self.path

    @property
    def name(self) -> str:
        return self.path[self.path.rfind("/") + 1 :]

    @property
    def absolute(self) -> str:
        if self.path.startswith("/"):
            return self.path
        cwd = os.getcwd()
        if not self.path:
            return cwd
        return cwd + self.path if cwd == "/" else cwd + "/" + self.path

    def sibling(self, name: str) -> JFile:
        """``new File(file.getAbsoluteFile.getParent, name)``."""
        a = self.absolute
        i = a.rfind("/")
        parent = "/" if i <= 0 else a[:i]
        return JFile(parent + name if parent == "/" else parent + "/" + name)


def io_error(e: OSError, path: str) -> Uncaught:
    """What ``FileChannel.open`` / ``Files.readAllBytes`` throw (``UnixException``)."""
    if isinstance(e, FileNotFoundError):
        return Uncaught("java.nio.file.NoSuchFileException", path)
    if isinstance(e, PermissionError):
        return Uncaught("java.nio.file.AccessDeniedException", path)
    return Uncaught("java.nio.file.FileSystemException", f"{path}: {e.strerror}")


def read_file(path: str, shown: str, how: str) -> bytes:
    """Small files only. ``how`` is how Kafka opens them, which decides its exception:
    ``raf`` (``RandomAccessFile``, indexes), ``rw`` (``FileChannel.open`` READ+WRITE,
    transaction index), ``all`` (``Files.readAllBytes``, producer snapshots)."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as e:
        if how == "raf":
            reason = e.strerror or str(e)
            raise Uncaught("java.io.FileNotFoundException", f"{shown} ({reason})") from None
        if isinstance(e, IsADirectoryError):
            if how == "all":
                raise Uncaught("java.io.IOException", "Is a directory") from None
            raise Uncaught(
                "java.nio.file.FileSystemException", f"{shown}: Is a directory"
            ) from None
        raise io_error(e, shown) from None


class ScalaHashMap:
    """Iteration order of a Scala 2.13 ``mutable.HashMap[String, _]`` (what the tool's error
    maps are): buckets by ``improveHash(key.hashCode) & (size - 1)``, within a bucket by
    (signed) hash, ties in insertion order; the table doubles when an insert would reach
    ``0.75 * size``. Values keep their own order."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._table = 16

    @staticmethod
    def _hash(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return _i32(h ^ (h >> 16))

    def get(self, key: str) -> Any:
        return self._values.get(key)

    def put(self, key: str, value: Any) -> None:
        if key not in self._values:
            if len(self._values) + 1 >= int(self._table * 0.75):
                self._table *= 2
        self._values[key] = value

    def items(self) -> list[tuple[str, Any]]:
        order = {k: i for i, k in enumerate(self._values)}
        mask = self._table - 1

        def sort_key(k: str) -> tuple[int, int, int]:
            h = self._hash(k)
            return (h & mask, h, order[k])

        return [(k, self._values[k]) for k in sorted(self._values, key=sort_key)]


def java_string_hash(key: str) -> int:
    """``String.hashCode()`` (UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = key.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


class Scala211HashMap:
    """Iteration order of a Scala 2.11/2.12 ``mutable.HashMap[String, _]`` (``HashTable``, the
    tool's error maps in Kafka builds for Scala 2.11/2.12, i.e. up to Kafka 2.3 as the kit runs
    them): a table of 16 chains; a new key is prepended to its chain, index
    ``(improve(hash) >> (32 - bitCount(size - 1))) & (size - 1)`` with ``improve`` =
    ``byteswap32`` rotated right by the initial seed (4); the table doubles when it holds more
    than 0.75 * size keys, re-inserting the old chains from the last to the first; iteration
    runs from the last chain to the first."""

    _SEED = 4  # Integer.bitCount(16 - 1), fixed at construction

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._table: list[list[str]] = [[] for _ in range(16)]

    def _index(self, key: str) -> int:
        ones = len(self._table) - 1
        hc = _i32(java_string_hash(key) * 0x9E3775CD)
        hc = _i32(int.from_bytes((hc & 0xFFFFFFFF).to_bytes(4, "big"), "little"))
        hc = _i32(hc * 0x9E3775CD) & 0xFFFFFFFF
        rotated = ((hc >> self._SEED) | (hc << (32 - self._SEED))) & 0xFFFFFFFF
        improved = _i32(rotated)
        return (improved >> (32 - bin(ones).count("1"))) & ones

    def get(self, key: str) -> Any:
        return self._values.get(key)

    def put(self, key: str, value: Any) -> None:
        if key not in self._values:
            self._table[self._index(key)].insert(0, key)
            if len(self._values) + 1 > len(self._table) * 3 // 4:
                old = self._table
                self._table = [[] for _ in range(2 * len(old))]
                for chain in reversed(old):
                    for k in chain:
                        self._table[self._index(k)].insert(0, k)
        self._values[key] = value

    def items(self) -> list[tuple[str, Any]]:
        return [(k, self._values[k]) for chain in reversed(self._table) for k in chain]


class JavaHashMap:
    """Iteration order of a ``java.util.HashMap<String, _>`` filled with ``computeIfAbsent``
    (Kafka 4.3's Java DumpLogSegments): by bucket ``(h ^ (h >>> 16)) & (capacity - 1)``, the
    newest key first within a bucket (``computeIfAbsent`` puts a new node at the bin's head;
    a resize keeps the relative order); capacity 16, doubled when a key makes the size exceed
    0.75 * capacity. Bins that would become trees (8+ colliding keys) are not modelled."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._capacity = 16

    def get(self, key: str) -> Any:
        return self._values.get(key)

    def put(self, key: str, value: Any) -> None:
        if key not in self._values and len(self._values) + 1 > self._capacity * 3 // 4:
            self._capacity *= 2
        self._values[key] = value

    def items(self) -> list[tuple[str, Any]]:
        order = {k: i for i, k in enumerate(self._values)}
        mask = self._capacity - 1

        def sort_key(k: str) -> tuple[int, int]:
            h = java_string_hash(k) & 0xFFFFFFFF
            return ((h ^ (h >> 16)) & mask, -order[k])

        return [(k, self._values[k]) for k in sorted(self._values, key=sort_key)]


#: the error-map classes by :attr:`DumpFormat.error_maps`
ERROR_MAPS: dict[str, type] = {
    "scala-2.11": Scala211HashMap,
    "scala-2.13": ScalaHashMap,
    "java": JavaHashMap,
}


class Console:
    """``print``/``println`` to stdout: a line is written when it is complete; a partial line
    is written when the run dies (the JVM flushes ``System.out`` on exit)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.parts: list[str] = []

    def print(self, s: str) -> None:
        self.parts.append(s)

    def println(self, s: str = "") -> None:
        if self.parts:
            self.parts.append(s)
            s = "".join(self.parts)
            self.parts.clear()
        self.out.write(s + "\n")

    def flush_partial(self) -> None:
        if self.parts:
            self.out.write("".join(self.parts))
            self.parts.clear()


def read_snapshot_name(name: str) -> tuple[int, int]:
    """``Snapshots.parse(path).get()`` for a ``.checkpoint`` name."""
    n = utf16_len(name)

    def substring(begin: int, end: int) -> str:
        if begin < 0 or end > n or begin > end:
            raise Uncaught(
                "java.lang.StringIndexOutOfBoundsException",
                f"begin {begin}, end {end}, length {n}",
            )
        return name[begin:end]

    end_offset = java_parse_int(substring(0, SNAPSHOT_OFFSET_WIDTH))
    epoch_start = SNAPSHOT_OFFSET_WIDTH + 1  # after the "-"
    epoch = java_parse_int(substring(epoch_start, epoch_start + SNAPSHOT_EPOCH_WIDTH), bits=32)
    return end_offset, epoch


def json_str(s: str) -> str:
    """Jackson's string escaping (control characters only; non-ASCII as is)."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20:
            short = {8: "b", 9: "t", 10: "n", 12: "f", 13: "r"}.get(o)
            out.append("\\" + short if short else f"\\u{o:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
