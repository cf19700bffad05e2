#!/usr/bin/env python3
"""A consumer adapter for tests/test_consume.py: kafka-python's real ``KafkaConsumer``, through
the built-in adapter (adapters/kafka-python/consumer.py), with one field its records lack, as
a library whose message type has no timestamp type: every delivered record is printed without
``timestampType``.

    consumer_omits.py declared|undeclared capabilities | consume --bootstrap H:P ...

``declared``: the capabilities say so (``omits: ["timestampType"]``), so the key is not
compared; ``undeclared``: they do not, so every record Kafka's consumer delivered differs.
"""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

BUILT_IN = Path(__file__).resolve().parents[2] / "adapters" / "kafka-python" / "consumer.py"


def _built_in() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kafka_python_consumer", BUILT_IN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    declared = sys.argv[1] == "declared"
    del sys.argv[1]  # the rest is the adapter protocol's command line
    adapter = _built_in()
    capabilities, record = adapter.capabilities, adapter._record

    def without_type(message: Any) -> dict[str, Any]:
        out = record(message)
        del out["timestampType"]
        return out

    def declaring() -> dict[str, Any]:
        caps = {**capabilities(), "name": "kafka-python-no-timestamp-type"}
        return {**caps, "omits": ["timestampType"]} if declared else caps

    adapter._record = without_type  # consume() looks it up when a message is delivered
    return adapter.cp.main(declaring, adapter.consume)


if __name__ == "__main__":
    sys.exit(main())
