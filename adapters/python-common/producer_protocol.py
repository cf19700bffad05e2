"""The producer side of the adapter protocol (docs/adapter-protocol.md, "Producer side: `produce`
and `encode`") for the Python producer adapters: the part that is the same whatever library an
adapter drives. Used by the `producer.py` programs of adapters/kafka-python, adapters/aiokafka,
adapters/confluent-kafka and adapters/kit-builder.

Standard library only, like adapter_protocol.py beside it (each adapter runs in its own venv and
must not import the kit). An adapter imports it by putting this directory first on `sys.path`:

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))
    import producer_protocol as pp

What is here:
  load_plan()      the plan file (contract `kafka-conformance/produce-plan/1`), its records
                   decoded into `Record`s (bytes, `None` kept), its groups (`Plan.groups`:
                   runs of plan indices to send as one batch), its batch and settings
  capabilities()   the `capabilities` document with its `produce` / `encode` sides (side())
  Results          the per-record outcomes of `produce`, in plan order, and the result document;
                   thread-safe, printed exactly once
  Deadline         the plan's time budget (settings.timeout_ms) as remaining seconds
  main()           argument dispatch: capabilities | produce --bootstrap H:P --plan F |
                   encode --plan F; `produce` runs under a wall-clock watchdog (timeout_ms + a
                   grace) that prints the document with what is known and exits 0, so that a
                   stuck library never hangs the kit

What an adapter keeps: how it drives its library (configuration, send, flush, transactions,
close) and what it reports from the library's own results.
"""

import base64
import json
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass

PLAN_FORMAT = "kafka-conformance/produce-plan/1"
RESULT_FORMAT = "kafka-conformance/produce-result/1"
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
CODEC_IDS = {name: i for i, name in enumerate(CODECS)}
#: capabilities' produce.batching: how the library puts a plan group in one batch
BATCH_CALL, BATCH_LINGER, BATCH_NONE = "call", "linger", "none"
#: a default (linger_ms, batch_size) the library has no setting for
NO_SETTING = "none"

GRACE_S = 10  # the watchdog fires this long after settings.timeout_ms
NO_OUTCOME = "adapter: the library reported no outcome for this record"
USAGE = (
    "usage: producer.py capabilities | produce --bootstrap HOST:PORT --plan FILE | "
    "encode --plan FILE\n"
)


def log(msg):
    """A diagnostic line on stderr (stdout carries only the document / the batch bytes)."""
    sys.stderr.write(f"adapter: {msg}\n")
    sys.stderr.flush()


def error_text(exc):
    """An exception as the error text of a record or of the plan."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- the plan -----------------------------------------------------------------------------------


def unb64(text):
    return None if text is None else base64.b64decode(text, validate=True)


@dataclass(frozen=True)
class Record:
    """One plan record: bytes or None, headers as (str key, bytes or None value) pairs,
    timestamp (ms) or None (the library chooses), partition or None (the partitioner chooses)."""

    key: bytes | None
    value: bytes | None
    headers: list
    timestamp: int | None
    partition: int | None


@dataclass(frozen=True)
class Plan:
    doc: dict
    topic: str
    partitions: int
    settings: dict
    records: list
    batch: dict | None
    #: runs of plan indices (`range`s), each to be sent as one batch; [] when none
    groups: list

    @property
    def codec(self):
        return self.settings["codec"]

    @property
    def timeout_ms(self):
        return int(self.settings["timeout_ms"])

    @property
    def transaction(self):
        return self.settings.get("transaction")


def load_plan(path):
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    if doc.get("format") != PLAN_FORMAT:
        raise ValueError(f"not a {PLAN_FORMAT} document: format {doc.get('format')!r}")
    settings = doc["settings"]
    if settings["codec"] not in CODEC_IDS:
        raise ValueError(f"unknown codec {settings['codec']!r}")
    records = [
        Record(
            key=unb64(r.get("key")),
            value=unb64(r.get("value")),
            headers=[(h["key"], unb64(h.get("value"))) for h in r.get("headers") or []],
            timestamp=r.get("timestamp"),
            partition=r.get("partition"),
        )
        for r in doc["records"]
    ]
    return Plan(
        doc=doc,
        topic=doc.get("topic", ""),
        partitions=int(doc.get("partitions") or 0),
        settings=settings,
        records=records,
        batch=doc.get("batch"),
        groups=[
            range(int(g["first"]), int(g["first"]) + int(g["count"]))
            for g in doc.get("groups") or []
        ],
    )


class Deadline:
    """The plan's budget: `remaining()` seconds until settings.timeout_ms after the start."""

    def __init__(self, timeout_ms):
        self.timeout_s = timeout_ms / 1000.0
        self.end = time.monotonic() + self.timeout_s

    def remaining(self, floor=0.1):
        return max(floor, self.end - time.monotonic())


# -- capabilities -------------------------------------------------------------------------------


def side(
    *,
    codecs,
    idempotence,
    transactions,
    headers,
    magics,
    partitioner,
    defaults,
    notes,
    batching=None,
):
    """One side (`produce` or `encode`) of the capabilities document. `defaults` is the
    library's own `{"idempotence", "acks", "linger_ms", "batch_size"}` (None where the side
    has no such notion); `partitioner` a name of `kafka-conformance partition` or None;
    `batching` (produce) how a plan group becomes one batch: BATCH_CALL, BATCH_LINGER,
    BATCH_NONE (None: not declared, a linger)."""
    doc = {
        "codecs": list(codecs),
        "idempotence": idempotence,
        "transactions": transactions,
        "headers": headers,
        "magics": list(magics),
        "partitioner": partitioner,
        "defaults": defaults,
        "notes": notes,
    }
    if batching is not None:
        doc["batching"] = batching
    return doc


def defaults(idempotence, acks, linger_ms, batch_size):
    """The library's defaults; `linger_ms` / `batch_size` NO_SETTING where it has none."""
    return {
        "idempotence": idempotence,
        "acks": acks,
        "linger_ms": linger_ms,
        "batch_size": batch_size,
    }


def capabilities(name, version, produce=None, encode=None):
    doc = {"name": name, "version": version}
    if produce is not None:
        doc["produce"] = produce
    if encode is not None:
        doc["encode"] = encode
    return doc


# -- the result document ------------------------------------------------------------------------


class Results:
    """What the library reported for each plan record (plan order) and for the plan. Records
    with no outcome when the document is printed get `NO_OUTCOME` (plus the reason) as their
    error: a record is only ever acknowledged if the library said so."""

    def __init__(self, count):
        self._lock = threading.Lock()
        self._records = [None] * count
        self._error = None
        self._printed = False

    def ok(self, index, partition, offset):
        with self._lock:
            self._records[index] = {"partition": partition, "offset": offset, "error": None}

    def fail(self, index, error, partition=None, offset=None):
        with self._lock:
            self._records[index] = {"partition": partition, "offset": offset, "error": error}

    def done(self, index):
        with self._lock:
            return self._records[index] is not None

    def set_error(self, error):
        """A failure outside any record; the first one is kept, later ones are appended."""
        with self._lock:
            self._error = error if self._error is None else f"{self._error}; {error}"

    def document(self, why=None):
        with self._lock:
            unresolved = NO_OUTCOME if why is None else f"{NO_OUTCOME} ({why})"
            records = [
                dict(r)
                if r is not None
                else {"partition": None, "offset": None, "error": unresolved}
                for r in self._records
            ]
            return {"format": RESULT_FORMAT, "records": records, "error": self._error}

    def emit(self, why=None):
        """Print the document once (later calls do nothing); True if this call printed it."""
        doc = self.document(why)
        with self._lock:
            if self._printed:
                return False
            self._printed = True
        sys.stdout.write(json.dumps(doc) + "\n")
        sys.stdout.flush()
        return True


def _watchdog(results, seconds):
    """A daemon timer: after `seconds`, print the document with what is known and exit 0."""

    def fire():
        why = f"the plan did not finish within timeout_ms + {GRACE_S} s"
        log(why + "; printing what the library reported so far")
        results.set_error(f"adapter watchdog: {why}")
        results.emit(why)
        os._exit(0)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    return timer


# -- the process --------------------------------------------------------------------------------


def _options(args):
    """`--name value` pairs of `args` (exact names only); None if malformed."""
    opts = {}
    if len(args) % 2:
        return None
    for flag, value in zip(args[::2], args[1::2], strict=True):
        if not flag.startswith("--"):
            return None
        opts[flag[2:]] = value
    return opts


def main(argv, capabilities_fn, produce_fn=None, encode_fn=None):
    """The adapter's command line; returns the exit status (`produce` never returns: it exits
    0 after printing the document, without waiting for library threads).

    `produce_fn(bootstrap, plan, results, deadline)` drives the library, recording each
    record's outcome in `results` (an exception it raises becomes the plan's `error`);
    `encode_fn(plan)` returns the batch bytes (an exception is the library's refusal: exit 1).
    """
    if argv[:1] == ["capabilities"] and len(argv) == 1:
        sys.stdout.write(json.dumps(capabilities_fn()) + "\n")
        return 0
    opts = _options(argv[1:]) if argv else None
    if argv[:1] == ["produce"] and produce_fn and opts and set(opts) == {"bootstrap", "plan"}:
        plan = load_plan(opts["plan"])
        results = Results(len(plan.records))
        _watchdog(results, plan.timeout_ms / 1000.0 + GRACE_S)
        try:
            produce_fn(opts["bootstrap"], plan, results, Deadline(plan.timeout_ms))
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            results.set_error(error_text(exc))
        results.emit()
        sys.stderr.flush()
        os._exit(0)  # library threads (senders, atexit closers) must not keep the process
    if argv[:1] == ["encode"] and encode_fn and opts and set(opts) == {"plan"}:
        plan = load_plan(opts["plan"])
        try:
            data = encode_fn(plan)
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            log(f"the library refused the plan: {error_text(exc)}")
            return 1
        sys.stdout.buffer.write(bytes(data))
        sys.stdout.buffer.flush()
        return 0
    sys.stderr.write(USAGE)
    return 2
