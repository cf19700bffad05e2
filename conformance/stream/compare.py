"""Comparing two canonical decode documents (docs/canonical-json.md, "Comparing").

Exact, field by field, with one documented relaxation: when the expected ``error.message`` is
the ``toString()`` of a compression library's exception (Kafka's ``new KafkaException(cause)``),
only the library exception class must match, not the library's wording.
"""

from __future__ import annotations

import json
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


#: a value longer than this (as JSON) is cut in a named diff line
_SHOWN = 120
#: characters shown before the first difference when two long values are cut around it
_BEFORE = 20
#: what a side that has no such key shows in a named diff line
_ABSENT = "(absent)"


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value is not _ABSENT else _ABSENT


def _cut(text: str) -> str:
    """``text``, or its start and its length when it is long."""
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 1]}… ({len(text)} chars)"


def _window(text: str, start: int) -> str:
    """A window of ``text`` from ``start`` (> 0), with its length."""
    end = start + _SHOWN - 2
    tail = "…" if end < len(text) else ""
    return f"…{text[start:end]}{tail} ({len(text)} chars, from char {start})"


def _first_difference(a: str, b: str) -> int:
    """Where ``a`` and ``b`` first differ (the shorter's length when one starts the other)."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def pair(expected: Any, actual: Any, parties: tuple[str, str] | None = None) -> str:
    """Two differing values: ``expected != actual`` (Python literals), or with ``parties``
    named, e.g. ``kafka=1700000000999 adapter="12422"`` (JSON, so a string and a number that
    print alike are told apart). A long value is cut; when both are long, both are shown
    around their first difference, so that two values alike in their first characters do not
    print alike."""
    if parties is None:
        return f"{expected!r} != {actual!r}"
    e, a = _text(expected), _text(actual)
    if len(e) > _SHOWN and len(a) > _SHOWN and e != a:
        at = _first_difference(e, a)
        if at >= _SHOWN - 1 - _BEFORE:  # past what the plain cut shows (with some after it)
            start = at - _BEFORE
            return f"{parties[0]}={_window(e, start)} {parties[1]}={_window(a, start)}"
    return f"{parties[0]}={_cut(e)} {parties[1]}={_cut(a)}"


def diff(
    expected: Any, actual: Any, path: str = "$", parties: tuple[str, str] | None = None
) -> list[str]:
    """Every difference as ``path: expected != actual``, or ``path: E=x A=y`` with ``parties``
    ``(E, A)`` (empty list: the documents agree)."""
    out: list[str] = []
    _diff(expected, actual, path, out, parties)
    return out


def _diff(e: Any, a: Any, path: str, out: list[str], parties: tuple[str, str] | None) -> None:
    if isinstance(e, dict) and isinstance(a, dict):
        # Kafka's keys in their order, then the adapter's others: one order on every run
        for k in [*e, *(k for k in a if k not in e)]:
            if k not in a:
                out.append(
                    f"{path}.{k}: {pair(e[k], _ABSENT, parties)}"
                    if parties
                    else f"{path}.{k}: missing (expected {e[k]!r})"
                )
            elif k not in e:
                out.append(
                    f"{path}.{k}: {pair(_ABSENT, a[k], parties)}"
                    if parties
                    else f"{path}.{k}: unexpected {a[k]!r}"
                )
            elif k == "message" and path.endswith(".error"):
                if not messages_match(e[k], a[k]):
                    out.append(f"{path}.{k}: {pair(e[k], a[k], parties)}")
            else:
                _diff(e[k], a[k], f"{path}.{k}", out, parties)
        return
    if isinstance(e, list) and isinstance(a, list):
        if len(e) != len(a):
            out.append(
                f"{path}: length {pair(len(e), len(a), parties)}"
                if parties
                else f"{path}: length {len(e)} != {len(a)}"
            )
        for i, (x, y) in enumerate(zip(e, a)):
            _diff(x, y, f"{path}[{i}]", out, parties)
        return
    if e != a or type(e) is not type(a):
        out.append(f"{path}: {pair(e, a, parties)}")
