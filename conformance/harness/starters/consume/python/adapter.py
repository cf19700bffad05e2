#!/usr/bin/env python3
"""A kafka-conformance consumer adapter for a Python Kafka client library: the protocol side.

This file speaks the adapter protocol's consumer side (docs/adapter-protocol.md of
kafka-conformance, "The consumer side") and writes the consume document. You should not need
to edit it: run your library's consumer in ``library.py`` (the hook) and declare its
capabilities there; ``consumed.py`` holds the structures the hook fills.

Build: nothing to build (``python3 -m py_compile *.py`` checks the syntax).
Run:   python3 adapter.py capabilities
       python3 adapter.py consume --bootstrap 127.0.0.1:9092 --topic T --partition 0 \\
           --from earliest --isolation read_uncommitted --timeout-ms 10000
Check: kafka-conformance check --side consume --cmd "python3 /abs/path/adapter.py"

Exit codes: 0 with one document on stdout (also when the consumer reported an error: that is a
verdict); 2 for a usage error; 3 when the hook failed (a crash of the library is no verdict).

Python 3.11 or later, standard library only.
"""

from __future__ import annotations

import base64
import json
import sys
import traceback
from types import ModuleType
from typing import Any

from consumed import TIMESTAMP_TYPES, Consumed, Options

#: the contract id of the document this adapter prints
FORMAT = "kafka-conformance/consume/1"

USAGE = """usage: adapter.py capabilities
       adapter.py consume --bootstrap HOST:PORT --topic T --partition N --from earliest|OFFSET
                          --isolation read_uncommitted|read_committed --timeout-ms N [--group G]
"""

#: ``consume`` options: flag -> (Options field, converter); every one but --group is required
_OPTIONS = {
    "--bootstrap": ("bootstrap", str),
    "--topic": ("topic", str),
    "--partition": ("partition", int),
    "--from": ("start", str),
    "--isolation": ("isolation", str),
    "--timeout-ms": ("timeout_ms", int),
    "--group": ("group", str),
}
_ISOLATIONS = ("read_uncommitted", "read_committed")


class UsageError(Exception):
    pass


def _b64(data: bytes | None) -> str | None:
    """Bytes as standard base64 with padding; ``None`` stays null, b"" is ""."""
    return None if data is None else base64.b64encode(bytes(data)).decode("ascii")


def read_options(argv: list[str]) -> Options:
    """The ``consume`` command line as :class:`Options`; :class:`UsageError` if it is not one."""
    values: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        flag = argv[i]
        if flag not in _OPTIONS or i + 1 >= len(argv):
            raise UsageError(f"unknown option or missing value: {flag}")
        name, convert = _OPTIONS[flag]
        try:
            values[name] = convert(argv[i + 1])
        except ValueError:
            raise UsageError(f"{flag}: not a number: {argv[i + 1]!r}") from None
        i += 2
    missing = [f for f, (n, _) in _OPTIONS.items() if f != "--group" and n not in values]
    if missing:
        raise UsageError(f"missing {', '.join(missing)}")
    if values["isolation"] not in _ISOLATIONS:
        raise UsageError(f"--isolation: one of {', '.join(_ISOLATIONS)}")
    return Options(**values)


def write_consumed(out: Consumed) -> dict[str, Any]:
    """The consume document (contract :data:`FORMAT`) of what the hook returned."""
    records = []
    for r in out.records:
        if r.timestamp_type not in TIMESTAMP_TYPES:
            raise ValueError(f"timestamp_type {r.timestamp_type!r}: one of {TIMESTAMP_TYPES}")
        records.append(
            {
                "offset": str(int(r.offset)),
                "timestamp": str(int(r.timestamp)),
                "timestampType": r.timestamp_type,
                "key": _b64(r.key),
                "value": _b64(r.value),
                "headers": [{"key": h.key, "value": _b64(h.value)} for h in r.headers],
            }
        )
    error = None
    if out.error is not None:
        error = {"class": out.error.cls, "message": out.error.message}
    return {"format": FORMAT, "records": records, "error": error}


def capabilities(lib: ModuleType) -> dict[str, Any]:
    """The consumer side's capabilities (docs/adapter-protocol.md, "Capabilities")."""
    return {
        "name": lib.NAME,
        "version": lib.VERSION,
        "magics": list(lib.MAGICS),
        "codecs": list(lib.CODECS),
        "checks_crc": bool(lib.CHECKS_CRC),
        "error_semantics": lib.ERROR_SEMANTICS,
        "error_classes": lib.ERROR_CLASSES,
        "omits": lib.OMITS,
        "notes": lib.NOTES,
    }


def _write(doc: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("capabilities", "consume"):
        sys.stderr.write(USAGE)
        return 2
    try:
        if argv[0] == "capabilities" and argv[1:]:
            raise UsageError(f"capabilities takes no arguments: {' '.join(argv[1:])}")
        options = read_options(argv[1:]) if argv[0] == "consume" else None
    except UsageError as e:
        sys.stderr.write(f"adapter.py: {e}\n{USAGE}")
        return 2
    try:
        import library

        if options is None:
            _write(capabilities(library))
        else:
            _write(write_consumed(library.consume(options)))
    except Exception:  # noqa: BLE001 - the hook failed: no verdict, say why on stderr
        traceback.print_exc()
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
