"""The consumer side of the adapter protocol (docs/adapter-protocol.md, "The consumer side")
for the Python adapters: argument parsing, the `kafka-conformance/consume/1` document, the
deadline. Standard library only (each adapter runs in its own venv and must not import the
kit); an adapter imports it by putting this directory first on `sys.path`.

What an adapter keeps: building the library's consumer from the arguments, its loop, and how a
delivered message becomes a record (`record()`).
"""

import argparse
import base64
import json
import sys
import time

FORMAT = "kafka-conformance/consume/1"
TIMESTAMP_TYPES = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}
USAGE = (
    "usage: consumer.py capabilities | consume --bootstrap H:P --topic T --partition P "
    "--from OFFSET|earliest [--isolation read_uncommitted|read_committed] [--timeout-ms N]\n"
)


def b64(data):
    return None if data is None else base64.b64encode(bytes(data)).decode("ascii")


def record(offset, timestamp, timestamp_type, key, value, headers):
    """One delivered record; `timestamp_type` is Kafka's name (TIMESTAMP_TYPES)."""
    return {
        "offset": str(offset),
        "timestamp": str(timestamp),
        "timestampType": timestamp_type,
        "key": b64(key),
        "value": b64(value),
        "headers": [{"key": k, "value": b64(v)} for k, v in (headers or [])],
    }


def parse(argv):
    p = argparse.ArgumentParser(prog="consume", add_help=False)
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--partition", type=int, required=True)
    p.add_argument("--from", dest="start", required=True)
    p.add_argument(
        "--isolation", default="read_uncommitted", choices=("read_uncommitted", "read_committed")
    )
    p.add_argument("--timeout-ms", type=int, default=20000)
    return p.parse_args(argv)


class Deadline:
    def __init__(self, timeout_ms):
        self.end = time.monotonic() + timeout_ms / 1000

    def left_ms(self):
        return max(0, int((self.end - time.monotonic()) * 1000))

    def passed(self):
        return time.monotonic() >= self.end


def document(records, error_class=None, message=None):
    error = None if error_class is None else {"class": error_class, "message": message}
    return {"format": FORMAT, "records": records, "error": error}


def timeout_document(records, timeout_ms):
    """The consumer neither reached the end offset nor raised within the deadline."""
    return document(
        records, "timeout", f"the position did not reach the end offset in {timeout_ms} ms"
    )


def main(capabilities, consume):
    """`capabilities` -> dict; `consume(args)` -> the document (it catches the library's own
    exceptions and reports them with document())."""
    argv = sys.argv[1:]
    if argv[:1] == ["capabilities"]:
        out = capabilities()
    elif argv[:1] == ["consume"]:
        out = consume(parse(argv[1:]))
    else:
        sys.stderr.write(USAGE)
        return 2
    sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    return 0
