#!/usr/bin/env python3
"""An adapter whose library computes a 64-bit value out of range, for tests/test_harness.py:
one answer in the document is 2^63 past the right one, as a library whose arithmetic does not
wrap (a BigInt, a Python int) would print it.

    out_of_range.py decode capabilities | decode --as MODE       (stdin: the input)
        the kit's reference decoder; the first batch's ``lastOffset`` + 2^63
    out_of_range.py consume capabilities | consume --bootstrap H:P ...
        kafka-python's real ``KafkaConsumer`` through the built-in adapter
        (adapters/kafka-python/consumer.py); the first record's ``offset`` + 2^63, its
        ``timestamp`` - 2^64

Both sides declare the name ``out-of-range``.
"""

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

NAME = "out-of-range"
BUILT_IN = Path(__file__).resolve().parents[2] / "adapters" / "kafka-python" / "consumer.py"
PAST = 2**63


def _built_in() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kafka_python_consumer", BUILT_IN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _decode(argv: list[str]) -> int:
    if argv[:1] == ["capabilities"]:
        print(json.dumps({"name": NAME}))
        return 0
    if argv[:1] != ["decode"]:
        return 2
    from conformance import decode

    doc = decode(sys.stdin.buffer.read(), mode=argv[argv.index("--as") + 1]).to_dict()
    if doc["batches"]:
        first = doc["batches"][0]
        first["lastOffset"] = str(int(first["lastOffset"]) + PAST)
    print(json.dumps(doc))
    return 0


def _consume() -> int:
    adapter = _built_in()
    capabilities, record = adapter.capabilities, adapter._record
    seen: list[int] = []

    def out_of_range(message: Any) -> dict[str, Any]:
        out = record(message)
        if not seen:
            out["offset"] = str(int(out["offset"]) + PAST)
            out["timestamp"] = str(int(out["timestamp"]) - 2 * PAST)
        seen.append(1)
        return out

    adapter._record = out_of_range  # consume() looks it up when a message is delivered
    return adapter.cp.main(lambda: {**capabilities(), "name": NAME}, adapter.consume)


def main() -> int:
    side = sys.argv[1]
    del sys.argv[1]  # the rest is the adapter protocol's command line
    return _consume() if side == "consume" else _decode(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
