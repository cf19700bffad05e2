"""The adapter protocol (docs/adapter-protocol.md) for the Python adapters: the part that is the
same whatever library an adapter drives. Used by adapters/kafka-python and adapters/aiokafka.

Standard library only: each adapter runs in its own venv (built from its adapter.toml, whose
`shared = ["../python-common"]` puts this directory in the build hash) and must not import the
kit (`conformance`). An adapter imports it by putting this directory first on `sys.path`:

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))
    import adapter_protocol as protocol

What is here:
  constants        Kafka exception classes (error family), codec names, the watchdog's limit
  capabilities()   the `capabilities` document, with what both Python adapters declare as defaults
  record_doc()     one record of the canonical JSON (docs/canonical-json.md); codec_name(), b64();
                   control_doc() (a control record's type, by Kafka's names)
  decode()         the decode document around an adapter's walk over the batches: its
                   skeleton, the error (the library's verdict: every exception ends decoding)
                   and the tail of a partial input; a Cursor carries where the walk is
  traceback_codes() the code objects an exception was raised through (for error classes)
  main()           argument dispatch: capabilities | decode --as memory|file | serve, each
                   decode under a wall-clock watchdog (exit 124 on a hang); serve() is the
                   persistent framed mode

What an adapter keeps: the library's iteration (the walk), its batch documents and how its
exceptions map to Kafka's exception classes.
"""

import base64
import json
import os
import signal
import struct
import sys

FORMAT = "kafka-conformance/decode/1"
CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}

# Kafka's exception classes, compared by family (`error_classes = "family"`)
CORRUPT = "org.apache.kafka.common.errors.CorruptRecordException"
INVALID = "org.apache.kafka.common.InvalidRecordException"
IAE = "java.lang.IllegalArgumentException"
COMPRESSION = "org.apache.kafka.common.KafkaException"
OOM = "java.lang.OutOfMemoryError"

WATCHDOG_S = 10  # seconds per input; the corpora decode in well under 1 s each
USAGE = "usage: adapter.py capabilities | decode --as memory|file | serve\n"


# -- capabilities -------------------------------------------------------------------------------


def capabilities(name, version, omits, notes, **more):
    """The `capabilities` document. Both Python adapters declare magics 0-2, all five codecs,
    checks_crc (the consumers' check_crcs=True), eager error semantics (a compressed batch is
    decompressed whole before its first record), no FileRecords semantics (`--as file` is
    decoded as memory) and family error classes; they differ in name, version, omits and notes;
    `more`: other keys (e.g. lists_failing_batch).
    `persistent`: serve() below."""
    return {
        "name": name,
        "version": version,
        "magics": [0, 1, 2],
        "codecs": ["none", "gzip", "snappy", "lz4", "zstd"],
        "checks_crc": True,
        "error_semantics": "eager",
        "file_semantics": False,
        "error_classes": "family",
        "omits": omits,
        "persistent": True,
        "notes": notes,
        **more,
    }


# -- the decode document ------------------------------------------------------------------------


def b64(b):
    return None if b is None else base64.b64encode(bytes(b)).decode("ascii")


def codec_name(ctype):
    return CODECS.get(ctype, f"unknown-{ctype:d}")


#: Kafka's names of control record types (ControlRecordType), by type id; any other is UNKNOWN
CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}


def control_doc(type_id):
    """A record's `control` object from the type id the library parsed (its coordinatorEpoch,
    which neither Python library exposes, is declared omitted: `control.coordinatorEpoch`)."""
    return {"typeId": type_id, "type": CONTROL_TYPES.get(type_id, "UNKNOWN")}


def record_doc(rec):
    """One record (offset, timestamp, key, value, headers) of a library record object."""
    ts = rec.timestamp
    return {
        "offset": str(rec.offset),
        "timestamp": str(-1 if ts is None else ts),
        "key": b64(rec.key),
        "value": b64(rec.value),
        "headers": [{"key": k, "value": b64(v)} for k, v in rec.headers],
    }


class Cursor:
    """Where a walk is: the batch being read (None while the library looks for the next one),
    its index and its position in the input. The error document reports these."""

    def __init__(self):
        self.position = 0
        self.index = 0
        self.batch = None

    def advance(self, size):
        """The current batch is done: the next one starts `size` bytes further."""
        self.position += size
        self.index += 1


def decode(data, mode, walk, kafka_class):
    """The decode document of `data`. `walk(data, batches, cursor)` iterates the library,
    appending batch documents (with their records) to `batches` and keeping `cursor` current;
    any exception it raises is the library's verdict, mapped to Kafka's class by
    `kafka_class(exc, cursor.batch)`. Bytes after the last batch walked are the tail."""
    batches = []
    doc = {
        "format": FORMAT,
        "mode": mode,
        "outcome": "ok",
        "error": None,
        "tail": None,
        "batches": batches,
    }
    cursor = Cursor()
    try:
        walk(data, batches, cursor)
    except Exception as exc:  # the library's verdict: every exception ends decoding
        doc["outcome"] = "error"
        doc["error"] = {
            "kafka_exception": kafka_class(exc, cursor.batch),
            "message": f"{type(exc).__name__}: {exc}",
            "batch_index": cursor.index,
            "position": cursor.position,
        }
        return doc
    if cursor.position < len(data):
        doc["outcome"] = "partial"
        doc["tail"] = {"position": cursor.position, "bytes": len(data) - cursor.position}
    return doc


def traceback_codes(exc):
    """The code objects of the frames `exc` was raised through, outermost first."""
    tb = exc.__traceback__
    while tb is not None:
        yield tb.tb_frame.f_code
        tb = tb.tb_next


# -- the watchdog -------------------------------------------------------------------------------


class _Hang(BaseException):
    """Raised by the watchdog; a BaseException so that no `except Exception` swallows it."""


def _on_alarm(signum, frame):
    raise _Hang()


def _decode_guarded(decode_fn, data, mode):
    """decode_fn(data, mode) under a wall-clock watchdog: a library stuck in a Python-level loop
    (e.g. a legacy inner entry of size -12) is reported as a crash (exit 124), not a verdict."""
    signal.setitimer(signal.ITIMER_REAL, WATCHDOG_S)
    try:
        return decode_fn(data, mode)
    except _Hang:
        sys.stderr.write(f"adapter: the library did not finish within {WATCHDOG_S:d} s (hang)\n")
        sys.stderr.flush()
        os._exit(124)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


# -- the process: one-shot and persistent modes -------------------------------------------------


def _dump(doc):
    return json.dumps(doc).encode("utf-8")


def _read_exact(stream, n):
    buf = b""
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def serve(decode_fn):
    """The persistent mode: requests (mode byte, 4-byte big-endian length, input) on stdin,
    each answered by a 4-byte big-endian length and the JSON document, until end of input."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = _read_exact(inp, 5)
        if head is None:
            return
        mode_byte, length = head[0], struct.unpack(">I", head[1:])[0]
        data = _read_exact(inp, length) if length else b""
        if data is None:
            return
        mode = "file" if mode_byte == 1 else "memory"
        try:
            body = _dump(_decode_guarded(decode_fn, data, mode))
        except BaseException as exc:  # never let one request kill the server
            if isinstance(exc, (KeyboardInterrupt, SystemExit, _Hang)):
                raise
            body = _dump(
                {
                    "format": FORMAT,
                    "mode": mode,
                    "outcome": "error",
                    "tail": None,
                    "batches": [],
                    "error": {
                        "kafka_exception": CORRUPT,
                        "batch_index": 0,
                        "position": 0,
                        "message": f"adapter failure: {exc!r}",
                    },
                }
            )
        out.write(struct.pack(">I", len(body)) + body)
        out.flush()


def main(argv, capabilities_fn, decode_fn):
    """The adapter's command line; returns the exit status. `capabilities_fn()` gives the
    capabilities document, `decode_fn(data, mode)` the decode document."""
    signal.signal(signal.SIGALRM, _on_alarm)
    if argv[:1] == ["capabilities"]:
        sys.stdout.write(json.dumps(capabilities_fn()) + "\n")
        return 0
    if argv[:1] == ["serve"]:
        serve(decode_fn)
        return 0
    if (
        len(argv) == 3
        and argv[0] == "decode"
        and argv[1] == "--as"
        and argv[2] in ("memory", "file")
    ):
        data = sys.stdin.buffer.read()
        sys.stdout.buffer.write(_dump(_decode_guarded(decode_fn, data, argv[2])) + b"\n")
        sys.stdout.buffer.flush()
        return 0
    sys.stderr.write(USAGE)
    return 2
