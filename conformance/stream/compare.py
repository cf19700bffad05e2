"""Comparing two canonical decode documents (docs/canonical-json.md, "Comparing").

Exact, field by field, with one documented relaxation: when the expected ``error.message`` is
the ``toString()`` of a compression library's exception (Kafka's ``new KafkaException(cause)``),
only the library exception class must match, not the library's wording.
"""

from __future__ import annotations

from typing import Any

#: exception classes whose messages are written by compression libraries, not by Kafka
LIBRARY_CLASSES = (
    "java.util.zip.ZipException",
    "java.io.EOFException",
    "java.io.IOException: net.jpountz.lz4.LZ4Exception",
    "org.xerial.snappy.SnappyIOException",
    "org.xerial.snappy.SnappyError",
    "com.github.luben.zstd.ZstdIOException",
    "com.github.luben.zstd.ZstdException",
    "net.jpountz.lz4.LZ4Exception",
)


def _library_prefix(message: str | None) -> str | None:
    if not message:
        return None
    for cls in LIBRARY_CLASSES:
        if message == cls or message.startswith(cls + ": "):
            return cls
    return None


def messages_match(expected: str | None, actual: str | None) -> bool:
    if expected == actual:
        return True
    cls = _library_prefix(expected)
    return cls is not None and _library_prefix(actual) == cls


def diff(expected: Any, actual: Any, path: str = "$") -> list[str]:
    """Every difference as ``path: expected != actual`` (empty list: the documents agree)."""
    out: list[str] = []
    _diff(expected, actual, path, out)
    return out


def _diff(e: Any, a: Any, path: str, out: list[str]) -> None:
    if isinstance(e, dict) and isinstance(a, dict):
        for k in e.keys() | a.keys():
            if k not in a:
                out.append(f"{path}.{k}: missing (expected {e[k]!r})")
            elif k not in e:
                out.append(f"{path}.{k}: unexpected {a[k]!r}")
            elif k == "message" and path.endswith(".error"):
                if not messages_match(e[k], a[k]):
                    out.append(f"{path}.{k}: {e[k]!r} != {a[k]!r}")
            else:
                _diff(e[k], a[k], f"{path}.{k}", out)
        return
    if isinstance(e, list) and isinstance(a, list):
        if len(e) != len(a):
            out.append(f"{path}: length {len(e)} != {len(a)}")
        for i, (x, y) in enumerate(zip(e, a)):
            _diff(x, y, f"{path}[{i}]", out)
        return
    if e != a or type(e) is not type(a):
        out.append(f"{path}: {e!r} != {a!r}")
