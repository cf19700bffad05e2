#!/usr/bin/env python3
"""A kafka-conformance producer adapter for a Python Kafka client library: the protocol side.

This file speaks the adapter protocol's producer side (docs/adapter-protocol.md of
kafka-conformance, "Producer side"): it reads the plan, calls the hook and writes the
produce-result document, or the encoded batch. You should not need to edit it: call your
library in ``library.py`` (the hook) and declare its capabilities there; ``plan.py`` holds the
structures.

Build: nothing to build (``python3 -m py_compile *.py`` checks the syntax).
Run:   python3 adapter.py capabilities
       python3 adapter.py produce --bootstrap 127.0.0.1:9092 --plan sample-plan.json
       python3 adapter.py encode --plan sample-plan.json > batch.bin
Check: kafka-conformance check-producer --cmd "python3 /abs/path/adapter.py"

Exit codes: 0 with the document (produce; also when records failed: that is a verdict) or the
batch's bytes (encode) on stdout; 2 for a usage error or a plan that cannot be read; 3 when
the hook failed (a crash of the library is no verdict; encode: the library refused the plan).

Python 3.11 or later, standard library only.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

from plan import Plan, Produced, read_plan

#: the contract id of the document ``produce`` prints
RESULT_FORMAT = "kafka-conformance/produce-result/1"

USAGE = """usage: adapter.py capabilities
       adapter.py produce --bootstrap HOST:PORT --plan FILE
       adapter.py encode --plan FILE
"""


class UsageError(Exception):
    pass


def read_arguments(argv: list[str], needed: tuple[str, ...]) -> dict[str, str]:
    """``--flag value`` pairs: exactly the flags ``needed``."""
    values: dict[str, str] = {}
    for i in range(0, len(argv), 2):
        if argv[i] not in needed or i + 1 >= len(argv):
            raise UsageError(f"unknown option or missing value: {argv[i]}")
        values[argv[i]] = argv[i + 1]
    missing = [f for f in needed if f not in values]
    if missing:
        raise UsageError(f"missing {', '.join(missing)}")
    return values


def read_plan_file(path: str) -> Plan:
    try:
        with open(path, encoding="utf-8") as f:
            return read_plan(json.load(f))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise UsageError(f"{path}: cannot read the plan: {e!r}") from None


def write_produced(out: Produced, plan: Plan) -> dict[str, Any]:
    """The produce-result document (contract :data:`RESULT_FORMAT`): one entry per plan record."""
    if len(out.records) != len(plan.records):
        raise ValueError(
            f"the hook reported {len(out.records)} records for a plan of {len(plan.records)}"
        )
    records = [
        {
            "partition": None if d.partition is None else int(d.partition),
            "offset": None if d.offset is None else int(d.offset),
            "error": None if d.error is None else str(d.error),
        }
        for d in out.records
    ]
    return {"format": RESULT_FORMAT, "records": records, "error": out.error}


def capabilities(lib: Any) -> dict[str, Any]:
    """The producer side's capabilities: a ``produce`` and an ``encode`` object (either may be
    absent: that side is not offered)."""
    doc: dict[str, Any] = {"name": lib.NAME, "version": lib.VERSION}
    if lib.PRODUCE is not None:
        doc["produce"] = lib.PRODUCE
    if lib.ENCODE is not None:
        doc["encode"] = lib.ENCODE
    return doc


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command not in ("capabilities", "produce", "encode"):
        sys.stderr.write(USAGE)
        return 2
    try:
        if command == "produce":
            args = read_arguments(argv[1:], ("--bootstrap", "--plan"))
        elif command == "encode":
            args = read_arguments(argv[1:], ("--plan",))
        else:
            args = read_arguments(argv[1:], ())
        plan = read_plan_file(args["--plan"]) if "--plan" in args else None
    except UsageError as e:
        sys.stderr.write(f"adapter.py: {e}\n{USAGE}")
        return 2
    try:
        import library

        if plan is None:
            sys.stdout.write(json.dumps(capabilities(library)) + "\n")
        elif command == "produce":
            produced = library.produce(args["--bootstrap"], plan)
            sys.stdout.write(json.dumps(write_produced(produced, plan)) + "\n")
        else:
            sys.stdout.buffer.write(bytes(library.encode(plan)))
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - the hook failed: no verdict, say why on stderr
        traceback.print_exc()
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
