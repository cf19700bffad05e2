"""Differential decoding: the reference decoder against Kafka's Java classes and kafka-python.

Each input (as a record stream, ``Target.wire_bytes``) goes through

* the reference decoder (``conformance.decode``, canonical JSON),
* the Java oracle, one long-lived JVM fed over the framed stdin/stdout protocol of
  ``oracle serve`` (:class:`conformance.jvm.oracle.OracleServer`),
* kafka-python's ``MemoryRecords`` as its consumer reads it (``validate_crc`` per batch, and
  per legacy record, then every record's offset, timestamp, key, value, headers).

Reference vs oracle must agree exactly (``compare.diff``: verdict, error class and message,
every batch field, every record). kafka-python is compared with the oracle on the verdict
(error or not) and on the records it hands out; its differences are findings about
kafka-python (kind ``kafka-python``), kept apart from the kit's own (kind ``divergence``).

The mode (memory or file semantics) is derived from the input's CRC-32 so a saved input
replays identically: one input in four is decoded with file semantics.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Any

from conformance.errors import (
    HEAP_DEPENDENT,
    Allocations,
    DecompressionLimitError,
    is_resource_limit,
)
from conformance.fuzz.store import FindingStore, diff_signature
from conformance.fuzz.targets import DECOMPRESSED_LIMIT
from conformance.jvm.oracle import OracleError, OracleServer
from conformance.jvm.runtime import NoCheckout
from conformance.stream.compare import diff
from conformance.stream.decoder import decode

_ORACLE_TMP = re.compile(r"\S*kafka-conformance-oracle-\d+\.log")
FILENAME = "<input>"


def mode_of(wire: bytes) -> str:
    return "file" if zlib.crc32(wire) % 4 == 0 else "memory"


def reference(wire: bytes, mode: str) -> dict[str, Any]:
    """Our verdict. The decompression bound is the kit's own policy, not Kafka's: an input that
    runs into the fuzzing bound is decoded again under the kit's default bound (256 MiB) so the
    comparison is about the format, not the policy."""
    result = decode(
        wire,
        mode=mode,
        filename=FILENAME,  # type: ignore[arg-type]
        decompressed_limit=DECOMPRESSED_LIMIT,
    )
    if isinstance(result.error, DecompressionLimitError):
        result = decode(wire, mode=mode, filename=FILENAME)  # type: ignore[arg-type]
    return result.to_dict()


def bounded(doc: dict[str, Any]) -> bool:
    """Our verdict is the kit's decompression bound (256 MiB): Java, with no bound, allocates
    and goes on, so what it says next depends on its heap - not comparable."""
    err = doc.get("error")
    return bool(err) and is_resource_limit(err.get("message"))


def normalize_java(doc: dict[str, Any]) -> dict[str, Any]:
    """File mode: the oracle names its temporary file in messages; ours says ``<input>``."""
    err = doc.get("error")
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        err["message"] = _ORACLE_TMP.sub(FILENAME, err["message"])
    return doc


#: CPU seconds kafka-python may spend on one input (it loops forever on some inputs)
KAFKA_PYTHON_CPU_SECONDS = 2.0


class _ThirdPartyTimeout(Exception):
    pass


def _alarm(_signum: int, _frame: object) -> None:
    raise _ThirdPartyTimeout


def kafka_python(wire: bytes) -> dict[str, Any]:
    """kafka-python's consumer view: ``{"error": str|None, "records": [...]}``.

    Bounded by CPU time (SIGVTALRM; libFuzzer owns SIGALRM): a hang is its verdict
    "timeout" - a finding about kafka-python, not a dead fuzzing run."""
    import signal
    import threading

    bounded_here = threading.current_thread() is threading.main_thread()
    if bounded_here:
        previous = signal.signal(signal.SIGVTALRM, _alarm)
        signal.setitimer(signal.ITIMER_VIRTUAL, KAFKA_PYTHON_CPU_SECONDS)
    try:
        return _kafka_python(wire)
    except _ThirdPartyTimeout:
        return {"error": f"timeout: more than {KAFKA_PYTHON_CPU_SECONDS} s of CPU", "records": []}
    finally:
        if bounded_here:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.signal(signal.SIGVTALRM, previous)


def _kafka_python(wire: bytes) -> dict[str, Any]:
    from kafka.record import MemoryRecords

    records: list[dict[str, Any]] = []
    try:
        mr = MemoryRecords(wire)
        while True:
            batch = mr.next_batch()
            if batch is None:
                break
            if hasattr(batch, "validate_crc") and not batch.validate_crc():
                raise ValueError("batch CRC mismatch")
            for r in batch:
                if getattr(batch, "magic", 2) < 2 and not r.validate_crc():
                    raise ValueError("record CRC mismatch")
                records.append(
                    {
                        "offset": str(r.offset),
                        # kafka-python says None where Kafka says NO_TIMESTAMP (-1): same thing
                        "timestamp": str(-1 if r.timestamp is None else r.timestamp),
                        "key": r.key,
                        "value": r.value,
                        "headers": [(k, v) for k, v in r.headers],
                    }
                )
    except _ThirdPartyTimeout:
        raise
    except Exception as e:  # noqa: BLE001 - any failure of the third party is its verdict
        return {"error": f"{type(e).__name__}: {e}"[:300], "records": records}
    return {"error": None, "records": records}


def _java_records(doc: dict[str, Any]) -> list[dict[str, Any]]:
    import base64

    out = []
    for b in doc.get("batches", []):
        for r in b.get("records", []):

            def dec(s: str | None) -> bytes | None:
                return None if s is None else base64.b64decode(s)

            out.append(
                {
                    "offset": r["offset"],
                    "timestamp": r["timestamp"],
                    "key": dec(r["key"]),
                    "value": dec(r["value"]),
                    "headers": [(h["key"], dec(h["value"])) for h in r["headers"]],
                }
            )
    return out


def compare_kafka_python(java: dict[str, Any], kp: dict[str, Any]) -> list[str]:
    out = []
    java_error = java.get("error")
    if kp["error"] and kp["error"].startswith("timeout"):
        return [
            f"$.verdict: {'error' if java_error else 'no error'} != timeout (kafka-python hangs)"
        ]
    if (java_error is None) != (kp["error"] is None):
        jv = java_error["kafka_exception"] if java_error else "no error"
        kv = kp["error"].split(":")[0] if kp["error"] else "no error"
        out.append(f"$.verdict: {jv} != {kv}")
    jr = _java_records(java)
    if len(jr) != len(kp["records"]):
        out.append(f"$.records: length {len(jr)} != {len(kp['records'])}")
    for i, (a, b) in enumerate(zip(jr, kp["records"])):
        for k in a:
            if a[k] != b[k]:
                out.append(f"$.records[{i}].{k}: {a[k]!r:.80} != {b[k]!r:.80}")
    return out


def _jsonable(kp: dict[str, Any]) -> dict[str, Any]:
    import base64

    def enc(v: Any) -> Any:
        return None if v is None else base64.b64encode(v).decode("ascii")

    return {
        "error": kp["error"],
        "records": [
            {
                **r,
                "key": enc(r["key"]),
                "value": enc(r["value"]),
                "headers": [{"key": k, "value": enc(v)} for k, v in r["headers"]],
            }
            for r in kp["records"]
        ],
    }


def kp_signature(differences: list[str]) -> str:
    """kafka-python differs from Kafka in many places at once; one finding per first kind of
    difference keeps the list readable."""
    return diff_signature(differences[:1])


def our_signature(o: Outcome) -> str:
    return diff_signature(o.differences, f"{o.mode}: ")


@dataclass
class Outcome:
    mode: str
    ours: dict[str, Any]
    java: dict[str, Any] | None
    differences: list[str] = field(default_factory=list)
    kp: dict[str, Any] | None = None
    kp_differences: list[str] = field(default_factory=list)
    oracle_error: str | None = None
    #: not compared: ours stopped at the kit's decompression bound, or Java would allocate
    #: more than HEAP_DEPENDENT bytes first
    bounded: bool = False


class Differential:
    """Runs inputs through all decoders; owns one oracle JVM (restarted if it dies)."""

    def __init__(self, *, with_kafka_python: bool = True) -> None:
        self.oracle = OracleServer()
        self.with_kafka_python = with_kafka_python
        self.inputs = 0
        self.skipped = 0

    def close(self) -> None:
        self.oracle.close()

    def run(self, wire: bytes) -> Outcome:
        self.inputs += 1
        mode = mode_of(wire)
        with Allocations() as allocations:
            ours = reference(wire, mode)
        if allocations.largest > HEAP_DEPENDENT or bounded(ours):
            # Java would allocate (and zero) that much before reading: its verdict and its
            # time (seconds per input) depend on the heap; not compared
            self.skipped += 1
            return Outcome(mode, ours, None, bounded=True)
        try:
            self.oracle.send_decode(wire, mode)  # the JVM decodes while kafka-python does
            kp = kafka_python(wire) if self.with_kafka_python else None
            java = normalize_java(self.oracle.receive_decode())
        except (OracleError, NoCheckout) as e:  # NoCheckout: an installed package, no oracle/
            self.oracle = OracleServer()
            return Outcome(mode, ours, None, oracle_error=str(e)[:2000])
        out = Outcome(mode, ours, java, diff(java, ours))
        if kp is not None:
            out.kp = kp
            out.kp_differences = compare_kafka_python(java, kp)
        return out

    def divergence_signature(self, wire: bytes) -> str | None:
        """The signature of the divergence ``wire`` shows (None: none)."""
        o = self.run(wire)
        return our_signature(o) if o.differences else None

    def check(self, data: bytes, wire: bytes, store: FindingStore) -> Outcome:
        """Run and save whatever differs (``data`` is the target's input, ``wire`` its stream)."""
        o = self.run(wire)
        if o.oracle_error is not None:
            store.divergence(
                data,
                "oracle",
                "oracle failed: " + o.oracle_error.splitlines()[0],
                [o.oracle_error],
                {"ours": o.ours},
                wire,
            )
        if o.differences:
            store.divergence(
                data,
                "divergence",
                our_signature(o),
                o.differences,
                {"ours": o.ours, "java": o.java},
                wire,
            )
        if o.kp_differences:
            assert o.kp is not None
            store.divergence(
                data,
                "kafka-python",
                kp_signature(o.kp_differences),
                o.kp_differences,
                {"java": o.java, "kafka-python": _jsonable(o.kp)},
                wire,
            )
        return o


__all__ = [
    "Differential",
    "Outcome",
    "compare_kafka_python",
    "kafka_python",
    "kp_signature",
    "mode_of",
    "our_signature",
    "reference",
]
