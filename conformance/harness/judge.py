"""Capabilities and the comparison rules of docs/adapter-protocol.md: one case, one verdict.

:func:`unsupported_reason` says whether a case is outside what an adapter declares;
:func:`judge` compares the adapter's document with Kafka's (``stream.compare.diff`` after the
declared relaxations). Sans-IO: documents in, verdicts out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from conformance.codecs import CODEC_IDS
from conformance.harness.cases import Features
from conformance.jsondoc import JsonDocument
from conformance.stream.compare import diff, messages_match
from conformance.stream.result import FORMAT

__all__ = [
    "Capabilities",
    "CapabilityError",
    "ERROR_CLASSES",
    "Verdict",
    "error_family",
    "judge",
    "read_capabilities",
    "unsupported_reason",
]

#: codec names an adapter may declare (``codecs.CODECS``)
CODECS = tuple(CODEC_IDS)
ERROR_CLASSES = ("exact", "class", "family", "none")
SEMANTICS = ("streaming", "eager")
OUTCOMES = ("ok", "partial", "error")
#: diff lines kept per verdict (the rest is counted)
MAX_DIFF_LINES = 40

_FAMILIES = {
    "org.apache.kafka.common.errors.CorruptRecordException": "corrupt",
    "org.apache.kafka.common.InvalidRecordException": "corrupt",
    "java.lang.IllegalArgumentException": "corrupt",
    "java.lang.IndexOutOfBoundsException": "corrupt",
    "java.nio.BufferUnderflowException": "corrupt",
    "java.lang.NegativeArraySizeException": "corrupt",
    "java.lang.NullPointerException": "corrupt",
    "org.apache.kafka.common.KafkaException": "compression",
    "org.xerial.snappy.SnappyError": "compression",
    "java.lang.OutOfMemoryError": "resource",
}
# Kafka names the file in FileRecords messages; the runner's copy has another name
_IN_FILE = re.compile(r" in file .*\.$", re.S)


class CapabilityError(ValueError):
    """A capabilities document that is JSON but says something invalid."""


@dataclass(frozen=True)
class Capabilities(JsonDocument):
    name: str
    version: str = ""
    magics: frozenset[int] = frozenset({0, 1, 2})
    codecs: frozenset[str] = frozenset(CODECS)
    checks_crc: bool = True
    error_semantics: str = "streaming"
    file_semantics: bool = True
    error_classes: str = "none"
    omits: frozenset[str] = frozenset()
    persistent: bool = False
    notes: str = ""
    #: False when the adapter's `capabilities` failed and these are the protocol's defaults
    declared: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "magics": sorted(self.magics),
            "codecs": [c for c in CODECS if c in self.codecs],
            "checks_crc": self.checks_crc,
            "error_semantics": self.error_semantics,
            "file_semantics": self.file_semantics,
            "error_classes": self.error_classes,
            "omits": sorted(self.omits),
            "persistent": self.persistent,
            "notes": self.notes,
            "declared": self.declared,
        }


def _typed(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any) -> Any:
    value = doc.get(key, default)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise CapabilityError(
            f"capabilities: {key!r} must be {getattr(kind, '__name__', kind)}, not {value!r}"
        )
    return value


def read_capabilities(text: str | None, fallback_name: str) -> Capabilities:
    """The adapter's capabilities; the protocol's defaults when ``text`` is None or not a JSON
    object (the adapter's ``capabilities`` failed). Raises :class:`CapabilityError` for a JSON
    object with invalid members."""
    try:
        doc = json.loads(text) if text is not None else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return Capabilities(name=fallback_name, declared=False)
    magics = _typed(doc, "magics", list, [0, 1, 2])
    codecs = _typed(doc, "codecs", list, list(CODECS))
    if any(m not in (0, 1, 2) for m in magics):
        raise CapabilityError(f"capabilities: magics must be of 0, 1, 2, not {magics!r}")
    if any(c not in CODECS for c in codecs):
        raise CapabilityError(
            f"capabilities: codecs must be of {', '.join(CODECS)}, not {codecs!r}"
        )
    semantics = _typed(doc, "error_semantics", str, "streaming")
    classes = _typed(doc, "error_classes", str, "none")
    if semantics not in SEMANTICS:
        raise CapabilityError(
            f"capabilities: error_semantics must be streaming or eager, not {semantics!r}"
        )
    if classes not in ERROR_CLASSES:
        raise CapabilityError(
            f"capabilities: error_classes must be one of {', '.join(ERROR_CLASSES)}, "
            f"not {classes!r}"
        )
    omits = _typed(doc, "omits", list, [])
    return Capabilities(
        name=str(_typed(doc, "name", str, fallback_name) or fallback_name),
        version=_typed(doc, "version", str, ""),
        magics=frozenset(magics),
        codecs=frozenset(codecs),
        checks_crc=_typed(doc, "checks_crc", bool, True),
        error_semantics=semantics,
        file_semantics=_typed(doc, "file_semantics", bool, True),
        error_classes=classes,
        omits=frozenset(str(o) for o in omits),
        persistent=_typed(doc, "persistent", bool, False),
        notes=_typed(doc, "notes", str, ""),
    )


def unsupported_reason(features: Features, mode: str, caps: Capabilities) -> str | None:
    """Why a case is outside ``caps`` (``None``: the adapter must decode it)."""
    magics = sorted(features.magics - caps.magics)
    if magics:
        return f"magic {', '.join(map(str, magics))} not supported"
    codecs = [c for c in CODECS if c in features.codecs - caps.codecs]
    if codecs:
        return f"codec {', '.join(codecs)} not supported"
    if features.crc_error and not caps.checks_crc:
        return "a checksum error, and checksums are not checked"
    if mode == "file" and not caps.file_semantics and features.same_in_memory is not True:
        return "file semantics (Kafka's memory-mode verdict differs) not supported"
    return None


def error_family(kafka_exception: str | None) -> str:
    return _FAMILIES.get(kafka_exception or "", "other")


@dataclass
class Verdict:
    status: str  # pass | fail | unsupported | error
    reason: str = ""  # one line: the first difference, the capability, the problem
    diff: list[str] = field(default_factory=list)


def _strip(
    doc: dict[str, Any], omits: frozenset[str], mode: str, keep_message: bool
) -> dict[str, Any]:
    doc = {k: v for k, v in doc.items() if k != "findings"}
    error = doc.get("error")
    if isinstance(error, dict):
        error = dict(error)
        message = error.get("message")
        if not keep_message:
            error.pop("message", None)
        elif mode == "file" and isinstance(message, str):
            error["message"] = _IN_FILE.sub(" in file <input>.", message)
        doc["error"] = error
    if isinstance(doc.get("batches"), list):  # a new list: _eager_prefix may replace a batch
        doc["batches"] = (
            [_omit(b, omits) for b in doc["batches"]] if omits else list(doc["batches"])
        )
    return doc


def _omit(batch: Any, omits: frozenset[str]) -> Any:
    if not isinstance(batch, dict):
        return batch
    out = {k: v for k, v in batch.items() if k not in omits}
    if isinstance(out.get("records"), list):
        out["records"] = [
            {k: v for k, v in r.items() if k not in omits} if isinstance(r, dict) else r
            for r in out["records"]
        ]
    return out


def _structure_problem(actual: Any) -> str | None:
    if not isinstance(actual, dict):
        return f"the document is a JSON {type(actual).__name__}, not an object"
    if actual.get("format") != FORMAT:
        return f"'format' is {actual.get('format')!r}, not {FORMAT!r}"
    if actual.get("outcome") not in OUTCOMES:
        return f"'outcome' is {actual.get('outcome')!r}, not one of {', '.join(OUTCOMES)}"
    if not isinstance(actual.get("batches"), list):
        return "'batches' is not an array"
    return None


def _eager_prefix(expected: dict[str, Any], actual: dict[str, Any]) -> None:
    """Eager semantics: the compressed batch that ends in the error may deliver a prefix of
    Kafka's records; cut the expected records to what the adapter delivered, if a prefix."""
    error = expected.get("error")
    if expected["outcome"] != "error" or not error:
        return
    index = error["batch_index"]
    e_batches, a_batches = expected["batches"], actual["batches"]
    if index >= len(e_batches) or index >= len(a_batches):
        return
    e_batch, a_batch = e_batches[index], a_batches[index]
    if e_batch.get("compression") == "none" or not isinstance(a_batch, dict):
        return
    e_records, a_records = e_batch.get("records"), a_batch.get("records")
    if (
        isinstance(e_records, list)
        and isinstance(a_records, list)
        and len(a_records) <= len(e_records)
    ):
        e_batches[index] = {**e_batch, "records": e_records[: len(a_records)]}


def judge(expected: dict[str, Any], actual: Any, caps: Capabilities, mode: str) -> Verdict:
    """The verdict for one case: ``pass``, ``fail`` (with the diff) or ``error`` (a document
    that is not a decode document at all)."""
    problem = _structure_problem(actual)
    if problem:
        return Verdict("error", f"invalid document: {problem}")
    keep_message = caps.error_classes == "exact"
    exp = _strip(expected, caps.omits, mode, keep_message)
    act = _strip(actual, caps.omits, mode, keep_message)
    if not caps.file_semantics:
        act["mode"] = exp["mode"]  # one semantics for both: the mode it echoes is not compared
    if caps.error_semantics == "eager":
        _eager_prefix(exp, act)
    lines: list[str] = []
    e_err, a_err = exp.get("error"), act.get("error")
    if isinstance(e_err, dict) and isinstance(a_err, dict):
        e_cls, a_cls = e_err.pop("kafka_exception", None), a_err.pop("kafka_exception", None)
        if caps.error_classes in ("exact", "class") and e_cls != a_cls:
            lines.append(f"$.error.kafka_exception: {e_cls!r} != {a_cls!r}")
        elif (
            caps.error_classes == "family"
            and error_family(e_cls) != "resource"
            and error_family(e_cls) != error_family(a_cls)
        ):
            lines.append(
                f"$.error family: {error_family(e_cls)} ({e_cls}) != "
                f"{error_family(a_cls)} ({a_cls})"
            )
        if keep_message:
            e_msg, a_msg = e_err.pop("message", None), a_err.pop("message", None)
            if not messages_match(e_msg, a_msg):
                lines.append(f"$.error.message: {e_msg!r} != {a_msg!r}")
    lines += diff(exp, act)
    if not lines:
        return Verdict("pass")
    first = _headline(exp, act, lines)
    extra = len(lines) - MAX_DIFF_LINES
    kept = lines[:MAX_DIFF_LINES] + ([f"... {extra} more differences"] if extra > 0 else [])
    return Verdict("fail", first, kept)


def _headline(exp: dict[str, Any], act: dict[str, Any], lines: list[str]) -> str:
    if exp.get("outcome") != act.get("outcome"):
        return f"outcome {act.get('outcome')} where Kafka's is {exp.get('outcome')}"
    return lines[0] if len(lines[0]) <= 160 else lines[0][:157] + "..."
