"""``dump --json``: one canonical JSON document per file (the kit's own format, not the tool's):
the decode document (docs/canonical-json.md) for ``.log``/``.checkpoint``, an entries document
for the other kinds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TextIO

from conformance.errors import DecodeError
from conformance.fileio import FileSource, write_decode_json
from conformance.jsondoc import json_text
from conformance.logdir import snapshot
from conformance.logdir.dump.files import open_index
from conformance.logdir.dump.javaemu import (
    INT_MAX,
    JFile,
    Uncaught,
    io_error,
    read_file,
)
from conformance.logdir.index import OffsetIndex, TimeIndex
from conformance.logdir.txnindex import TransactionIndex
from conformance.primitives.java import java_parse_int
from conformance.stream.decoder import StreamDecoder


def _error_json(e: BaseException) -> dict[str, Any]:
    if isinstance(e, (Uncaught, DecodeError)):
        cls = e.java_class if isinstance(e, Uncaught) else e.kafka_exception
        return {"kafka_exception": cls, "message": e.message}
    raise TypeError(e)  # pragma: no cover


def _log_json(file: JFile, max_bytes: int, out: TextIO) -> bool:
    """The canonical decode document (docs/canonical-json.md) of a segment, ``mode: file``.

    Memory stays bounded by one batch (:func:`conformance.fileio.write_decode_json`)."""
    if os.path.isdir(file.path):
        raise Uncaught("java.io.IOException", "Is a directory")
    try:
        source = FileSource(file.path, 0, None if max_bytes == INT_MAX else max(0, max_bytes))
    except OSError as e:
        raise io_error(e, file.path) from None
    with source:
        decoder = StreamDecoder(source, mode="file", filename=file.path)
        write_decode_json(decoder, out)
        return decoder.outcome != "error"


def _entries_json(file: JFile, kind: str) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "file": file.path,
        "kind": kind,
        "baseOffset": None,
        "entries": [],
        "error": None,
    }
    entries: list[dict[str, Any]] = doc["entries"]
    try:
        if kind == "unknown":
            return doc
        name = file.name
        base = java_parse_int(name[: name.find(".")] if kind == "txnindex" else name.split(".")[0])
        doc["baseOffset"] = str(base) if kind != "snapshot" else None
        if kind == "txnindex" and not os.path.exists(file.path):
            return doc
        if kind in ("index", "timeindex"):
            idx = open_index(OffsetIndex if kind == "index" else TimeIndex, file, base)
            doc["sizeInBytes"] = idx.length
            for i in range(idx.entries):  # the tool's rule: stop at a zero (base offset) entry
                e = idx.entry(i)
                if e.offset == base and i > 0:
                    break
                if kind == "index":
                    entries.append({"offset": str(e.offset), "position": e.position})
                else:
                    entries.append({"timestamp": str(e.timestamp), "offset": str(e.offset)})
        elif kind == "txnindex":
            data = read_file(file.path, file.path, "rw")
            for t in TransactionIndex(data, base, file.absolute):
                entries.append(
                    {
                        "version": t.version,
                        "producerId": str(t.producer_id),
                        "firstOffset": str(t.first_offset),
                        "lastOffset": str(t.last_offset),
                        "lastStableOffset": str(t.last_stable_offset),
                    }
                )
        else:
            doc["baseOffset"] = str(base)
            for p in snapshot.read_snapshot(read_file(file.path, file.path, "all")):
                entries.append(
                    {
                        "producerId": str(p.producer_id),
                        "producerEpoch": p.producer_epoch,
                        "coordinatorEpoch": p.coordinator_epoch,
                        "currentTxnFirstOffset": None
                        if p.current_txn_first_offset < 0
                        else str(p.current_txn_first_offset),
                        "lastTimestamp": str(p.timestamp),
                        "batch": None
                        if not p.has_batch_metadata
                        else {
                            "firstSequence": p.first_sequence,
                            "lastSequence": p.last_sequence,
                            "lastOffset": str(p.last_offset),
                            "offsetDelta": p.offset_delta,
                            "timestamp": str(p.timestamp),
                        },
                    }
                )
    except (Uncaught, DecodeError) as e:
        doc["error"] = _error_json(e)
    order = ("file", "kind", "baseOffset", "sizeInBytes", "entries", "error")
    return {k: doc[k] for k in order if k in doc}


_KINDS = {
    ".log": "log",
    ".checkpoint": "log",
    ".index": "index",
    ".timeindex": "timeindex",
    ".txnindex": "txnindex",
    ".snapshot": "snapshot",
}


def dump_json(
    files: Sequence[str], *, max_bytes: int | None = None, out: TextIO, err: TextIO
) -> int:
    """One JSON line per file: the canonical decode document for ``.log``/``.checkpoint``,
    ``{"file", "kind", "baseOffset", "entries", "error"}`` for the other kinds (see the
    ``dump --help`` text). Returns 1 if any file has an error, else 0."""
    status = 0
    limit = INT_MAX if max_bytes is None else max_bytes
    for arg in files:
        file = JFile(arg)
        name = file.name
        dot = name.rfind(".")
        kind = _KINDS.get(name[dot:], "unknown") if dot >= 0 else "unknown"
        if kind == "log":
            try:
                if not _log_json(file, limit, out):
                    status = 1
            except Uncaught as e:
                status = 1
                doc = {
                    "file": file.path,
                    "kind": "log",
                    "baseOffset": None,
                    "entries": [],
                    "error": _error_json(e),
                }
                out.write(json_text(doc) + "\n")
            continue
        if kind == "unknown":
            err.write(f"Ignoring unknown file {file}\n")
        doc = _entries_json(file, kind)
        if doc["error"] is not None:
            status = 1
        out.write(json_text(doc) + "\n")
    return status
