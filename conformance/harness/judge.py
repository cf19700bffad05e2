"""Capabilities and the comparison rules of docs/adapter-protocol.md: one case, one verdict.

:func:`unsupported_reason` says whether a case is outside what an adapter declares;
:func:`judge` compares the adapter's document with Kafka's (``stream.compare.diff`` after the
declared relaxations). Sans-IO: documents in, verdicts out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from conformance.codecs import CODEC_IDS
from conformance.harness.cases import Features
from conformance.jsondoc import JsonDocument, read_json
from conformance.levels import (
    DEFAULT_LEVEL,
    DELIVERY,
    JAVA,
    WIRE,
    Difference,
    Judgement,
    Verdict,
)
from conformance.stream.compare import diff, messages_match, pair
from conformance.stream.result import FORMAT

__all__ = [
    "APPLIES_TO",
    "CONSUME",
    "Capabilities",
    "CapabilityError",
    "DECODE",
    "DELIVERED_KEYS",
    "ERROR_CLASSES",
    "SIDE_OBJECTS",
    "error_family",
    "error_lines",
    "judge",
    "judgement",
    "level_of",
    "leveled",
    "read_capabilities",
    "unsupported_reason",
]

#: codec names an adapter may declare (``codecs.CODECS``)
CODECS = tuple(CODEC_IDS)
ERROR_CLASSES = ("exact", "class", "family", "none")
SEMANTICS = ("streaming", "eager", "atomic")
OUTCOMES = ("ok", "partial", "error")
#: diff lines kept per verdict (the rest is counted): enough that a known divergence can be
#: seen to explain every line of a result (a line "... N more differences" is explained by
#: none); the terminal shows fewer
MAX_DIFF_LINES = 1000
#: how the two parties of a difference are named in diff lines (``kafka=1 adapter=2``)
PARTIES = ("kafka", "adapter")
#: the sides a capabilities document is read for: an adapter's decoder and its consumer
DECODE = "decode"
CONSUME = "consume"
#: each capability and the sides it has a meaning on (docs/adapter-protocol.md,
#: "Capabilities"); declared on another side it is a capability error, never ignored
APPLIES_TO: dict[str, tuple[str, ...]] = {
    "name": (DECODE, CONSUME),
    "version": (DECODE, CONSUME),
    "notes": (DECODE, CONSUME),
    "magics": (DECODE, CONSUME),
    "codecs": (DECODE, CONSUME),
    "checks_crc": (DECODE, CONSUME),
    "omits": (DECODE, CONSUME),
    "error_classes": (DECODE, CONSUME),
    "error_semantics": (DECODE, CONSUME),
    "file_semantics": (DECODE,),
    "lists_failing_batch": (DECODE,),
    "persistent": (DECODE,),
}
#: objects of a document's top level that are not decode capabilities: the consumer side's
#: own (read instead of the top level there), the producer side's (``producer_check``)
SIDE_OBJECTS = ("consume", "produce", "encode")
#: the keys of a record a consumer delivers (``kafka-conformance/consume/1``): what is
#: compared of each, and what the consume side may declare in ``omits``
DELIVERED_KEYS = ("offset", "timestamp", "timestampType", "key", "value", "headers")
#: nesting a decode document never exceeds (top, batches, batch, records, record, headers,
#: header); deeper JSON is not a decode document, and is refused before it is walked
MAX_DEPTH = 16

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
    """A capabilities document that is JSON but says something invalid (the message starts
    with ``capabilities:``); ``name``: the name it declares, if any."""

    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message)
        self.name = name


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
    #: keys not compared, for every magic (``control.X``: field X of a record's ``control``)
    omits: frozenset[str] = frozenset()
    #: more keys not compared, per magic: ``((0, {...}), (1, {...}))``
    omits_by_magic: tuple[tuple[int, frozenset[str]], ...] = ()
    #: False: the batch during which the error happened may be missing from ``batches``
    lists_failing_batch: bool = True
    persistent: bool = False
    notes: str = ""
    #: False when the adapter's `capabilities` failed and these are the protocol's defaults
    declared: bool = True
    #: the side these were read for (``DECODE``, ``CONSUME``)
    side: str = DECODE
    #: the capability error (``capabilities: ...``) that makes every case of the
    #: implementation an ``error`` ("": none)
    invalid: str = ""

    def omitted(self, magic: Any) -> frozenset[str]:
        """The keys not compared in a batch of ``magic`` (and in its records). A magic byte
        outside 0..2, which file mode reads in the layout it selects, counts as that layout's:
        below 1 as magic 0 (a legacy v0 message), above 2 as magic 2."""
        if not isinstance(magic, int) or isinstance(magic, bool):
            return self.omits
        extra = dict(self.omits_by_magic).get(min(max(magic, 0), 2))
        return self.omits | extra if extra else self.omits

    def _omits_doc(self) -> list[str] | dict[str, list[str]]:
        if not self.omits_by_magic:
            return sorted(self.omits)
        return {str(m): sorted(self.omitted(m)) for m in (0, 1, 2)}

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
            "omits": self._omits_doc(),
            "lists_failing_batch": self.lists_failing_batch,
            "persistent": self.persistent,
            "notes": self.notes,
            "declared": self.declared,
        }


def _typed(
    doc: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any, where: str = ""
) -> Any:
    value = doc.get(key, default)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise CapabilityError(
            f"capabilities: {where + key!r} must be {getattr(kind, '__name__', kind)}, "
            f"not {value!r}"
        )
    return value


def read_capabilities(text: str | None, fallback_name: str, side: str = DECODE) -> Capabilities:
    """The adapter's capabilities for ``side``; the protocol's defaults when ``text`` is None
    or not a JSON object (the adapter's ``capabilities`` failed). The consume side reads the
    document's ``consume`` object when it has one, else its top level. Raises
    :class:`CapabilityError` for a JSON object with an unknown key (at the top level or in
    ``consume``), a key without a meaning on ``side``, or an invalid value."""
    try:
        doc = read_json(text) if text is not None else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return Capabilities(name=fallback_name, declared=False, side=side)
    try:
        return _read_side(doc, fallback_name, side)
    except CapabilityError as exc:
        part = doc.get("consume") if side == CONSUME and "consume" in doc else doc
        name = part.get("name") if isinstance(part, dict) else None
        raise CapabilityError(str(exc), name if isinstance(name, str) else "") from None


def _known_keys(doc: dict[str, Any]) -> None:
    """Every key of ``doc`` and of its ``consume`` object is a capability (a typo is not
    silently a default)."""
    known = [*APPLIES_TO, *SIDE_OBJECTS]
    consume = doc.get("consume", {})
    if not isinstance(consume, dict):
        raise CapabilityError(f"capabilities: 'consume' must be an object, not {consume!r}")
    for where, keys, allowed in (("", doc, known), ("consume.", consume, list(APPLIES_TO))):
        unknown = [k for k in keys if k not in allowed]
        if unknown:
            raise CapabilityError(
                f"capabilities: unknown key {', '.join(repr(where + k) for k in unknown)} "
                f"(known{' in consume' if where else ''}: {', '.join(allowed)})"
            )


def _read_side(doc: dict[str, Any], fallback_name: str, side: str) -> Capabilities:
    _known_keys(doc)
    where = ""
    if side == CONSUME and "consume" in doc:
        doc, where = doc["consume"], "consume."
    doc = {k: v for k, v in doc.items() if k not in SIDE_OBJECTS}
    misplaced = [k for k in doc if side not in APPLIES_TO[k]]
    if misplaced:
        sides = ", ".join(sorted({s for k in misplaced for s in APPLIES_TO[k]}))
        raise CapabilityError(
            f"capabilities: {', '.join(where + k for k in misplaced)} "
            f"{'has' if len(misplaced) == 1 else 'have'} no meaning on the {side} side "
            f"({sides} only)"
        )
    magics = _typed(doc, "magics", list, [0, 1, 2], where)
    codecs = _typed(doc, "codecs", list, list(CODECS), where)
    if any(m not in (0, 1, 2) or isinstance(m, bool) for m in magics):
        raise CapabilityError(f"capabilities: {where}magics must be of 0, 1, 2, not {magics!r}")
    if any(c not in CODECS for c in codecs):
        raise CapabilityError(
            f"capabilities: {where}codecs must be of {', '.join(CODECS)}, not {codecs!r}"
        )
    semantics = _typed(doc, "error_semantics", str, "streaming", where)
    classes = _typed(doc, "error_classes", str, "none", where)
    if semantics not in SEMANTICS:
        raise CapabilityError(
            f"capabilities: {where}error_semantics must be one of {', '.join(SEMANTICS)}, "
            f"not {semantics!r}"
        )
    if classes not in ERROR_CLASSES:
        raise CapabilityError(
            f"capabilities: {where}error_classes must be one of {', '.join(ERROR_CLASSES)}, "
            f"not {classes!r}"
        )
    if side == DECODE:
        names, what = omittable(), "batch or record key"
    else:
        names, what = frozenset(DELIVERED_KEYS), "key of a delivered record"
    omits, by_magic = _read_omits(doc.get("omits", []), names, what, where)
    return Capabilities(
        name=str(_typed(doc, "name", str, fallback_name, where) or fallback_name),
        version=_typed(doc, "version", str, "", where),
        magics=frozenset(magics),
        codecs=frozenset(codecs),
        checks_crc=_typed(doc, "checks_crc", bool, True, where),
        error_semantics=semantics,
        file_semantics=_typed(doc, "file_semantics", bool, True, where),
        error_classes=classes,
        omits=omits,
        omits_by_magic=by_magic,
        lists_failing_batch=_typed(doc, "lists_failing_batch", bool, True, where),
        persistent=_typed(doc, "persistent", bool, False, where),
        notes=_typed(doc, "notes", str, "", where),
        side=side,
    )


@cache
def omittable() -> frozenset[str]:
    """The keys an adapter may declare in ``omits``: every batch and record key of the decode
    document's schema, and ``control.X`` for each field X of a control record."""
    schema = json.loads(
        resources.files("conformance.schema").joinpath("decode-result.schema.json").read_text()
    )
    defs = schema["$defs"]
    control = defs["record"]["properties"]["control"]["properties"]
    return frozenset(
        [*defs["batch"]["properties"], *defs["record"]["properties"]]
        + [f"control.{k}" for k in control]
    ) - {"records", "position"}


def _read_omits(
    value: Any, names: frozenset[str], what: str, where: str = ""
) -> tuple[frozenset[str], tuple[tuple[int, frozenset[str]], ...]]:
    """``omits``: a list (every magic) or an object ``{"0": [...], "1": [...], "2": [...]}``
    (also ``"*"``: every magic), of key names among ``names`` (each ``what``)."""
    groups = value if isinstance(value, dict) else {"*": value}
    if not all(k in ("*", "0", "1", "2") for k in groups):
        raise CapabilityError(
            f"capabilities: the keys of an {where}omits object are '0', '1', '2' or '*', not "
            f"{sorted(groups)!r}"
        )
    sets: dict[str, frozenset[str]] = {}
    for key, listed in groups.items():
        if not isinstance(listed, list) or not all(isinstance(n, str) for n in listed):
            raise CapabilityError(
                f"capabilities: {where}omits must be a list of key names (or an object of "
                f"such lists by magic), not {value!r}"
            )
        unknown = sorted(set(listed) - names)
        if unknown:
            raise CapabilityError(
                f"capabilities: {where}omits names no {what}: {', '.join(unknown)} "
                f"(known: {', '.join(sorted(names))})"
            )
        sets[key] = frozenset(listed)
    by_magic = tuple((int(k), v) for k, v in sorted(sets.items()) if k != "*" and v)
    return sets.get("*", frozenset()), by_magic


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


def error_family(kafka_exception: Any) -> str:
    """The family of Kafka's exception class (``error_classes = "family"``), ``other`` for
    any other class (and for what is not a class name)."""
    return _FAMILIES.get(kafka_exception, "other") if isinstance(kafka_exception, str) else "other"


def error_lines(
    expected: dict[str, Any], actual: dict[str, Any], class_key: str, granularity: str
) -> list[str]:
    """The differences of two error objects (``$.error``) at the ``error_classes``
    ``granularity``: their classes (member ``class_key``) and, for ``exact``, their messages
    (``stream.compare.messages_match``). Under ``family`` an error where Kafka ran out of
    memory matches any error."""
    e_cls, a_cls = expected.get(class_key), actual.get(class_key)
    lines: list[str] = []
    if granularity in ("exact", "class") and e_cls != a_cls:
        lines.append(f"$.error.{class_key}: {pair(e_cls, a_cls, PARTIES)}")
    elif (
        granularity == "family"
        and error_family(e_cls) != "resource"
        and error_family(e_cls) != error_family(a_cls)
    ):
        lines.append(
            f"$.error family: kafka={error_family(e_cls)} ({e_cls}) "
            f"adapter={error_family(a_cls)} ({a_cls})"
        )
    if granularity == "exact":
        e_msg, a_msg = expected.get("message"), actual.get("message")
        if not messages_match(e_msg, a_msg):
            lines.append(f"$.error.message: {pair(e_msg, a_msg, PARTIES)}")
    return lines


def _strip(
    doc: dict[str, Any], caps: Capabilities, magics: list[Any], mode: str, keep_message: bool
) -> dict[str, Any]:
    """``doc`` without what is not compared; ``magics[i]`` is the magic of Kafka's batch i
    (the adapter's batch i may omit its own)."""
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
    if isinstance(doc.get("batches"), list):  # a new list: _failing_batch may change it
        doc["batches"] = [
            _omit(b, caps.omitted(magics[i] if i < len(magics) else _magic(b)))
            for i, b in enumerate(doc["batches"])
        ]
    return doc


def _magic(batch: Any) -> Any:
    return batch.get("magic") if isinstance(batch, dict) else None


def _omit(batch: Any, omits: frozenset[str]) -> Any:
    if not isinstance(batch, dict) or not omits:
        return batch
    out = {k: v for k, v in batch.items() if k not in omits}
    if isinstance(out.get("records"), list):
        out["records"] = [_omit_record(r, omits) for r in out["records"]]
    return out


def _omit_record(record: Any, omits: frozenset[str]) -> Any:
    if not isinstance(record, dict):
        return record
    out = {k: v for k, v in record.items() if k not in omits}
    control = out.get("control")
    if isinstance(control, dict):
        out["control"] = {k: v for k, v in control.items() if f"control.{k}" not in omits}
    return out


def _too_deep(doc: Any, limit: int) -> bool:
    """Whether ``doc`` nests deeper than ``limit`` (without recursion)."""
    level: list[Any] = [doc]
    for _ in range(limit + 1):
        nested = []
        for item in level:
            if isinstance(item, dict):
                nested.extend(item.values())
            elif isinstance(item, list):
                nested.extend(item)
        if not nested:
            return False
        level = nested
    return True


def _structure_problem(actual: Any) -> str | None:
    if _too_deep(actual, MAX_DEPTH):
        return f"JSON nested deeper than {MAX_DEPTH} levels"
    if not isinstance(actual, dict):
        return f"the document is a JSON {type(actual).__name__}, not an object"
    if actual.get("format") != FORMAT:
        return f"'format' is {actual.get('format')!r}, not {FORMAT!r}"
    if actual.get("outcome") not in OUTCOMES:
        return f"'outcome' is {actual.get('outcome')!r}, not one of {', '.join(OUTCOMES)}"
    if not isinstance(actual.get("batches"), list):
        return "'batches' is not an array"
    return None


def _failing_batch(expected: dict[str, Any], actual: dict[str, Any], caps: Capabilities) -> None:
    """What an adapter may leave out of the batch during which the error happened: the whole
    batch (``lists_failing_batch`` false: when the adapter lists exactly the batches before
    it), or records at its end (``eager``: of a compressed batch, ``atomic``: of any batch),
    down to none. Kafka's batch is cut to what the adapter shows, when that is such a part."""
    error = expected.get("error")
    if expected.get("outcome") != "error" or not isinstance(error, dict):
        return
    index = error.get("batch_index")
    e_batches, a_batches = expected["batches"], actual["batches"]
    if not isinstance(index, int) or not 0 <= index < len(e_batches):
        return
    if not caps.lists_failing_batch and len(a_batches) == index == len(e_batches) - 1:
        e_batches.pop()
        return
    if caps.error_semantics == "streaming" or index >= len(a_batches):
        return
    e_batch, a_batch = e_batches[index], a_batches[index]
    if not isinstance(a_batch, dict) or not isinstance(e_batch, dict):
        return
    if caps.error_semantics == "eager" and e_batch.get("compression") == "none":
        return
    e_records, a_records = e_batch.get("records"), a_batch.get("records")
    if (
        isinstance(e_records, list)
        and isinstance(a_records, list)
        and len(a_records) <= len(e_records)
    ):
        e_batches[index] = {**e_batch, "records": e_records[: len(a_records)]}


#: the keys of a decoded batch a consumer notices (its records, whether they are control
#: records, their timestamps' type); every other key is a header field (``wire``)
_DELIVERED_BATCH_KEYS = ("records", "isControl", "timestampType")
_PATH = re.compile(r"\$(?:\.(?P<top>[A-Za-z_]+)(?:\[\d+\](?:\.(?P<key>[A-Za-z_]+))?)?)?")


def level_of(line: str) -> str:
    """The level (``conformance.levels``) a decode diff line breaks: what a consumer notices
    (the outcome, the error's class or family, the batches and records delivered) is
    ``delivery``; Kafka's exact error text is ``java``; every other field ``wire``."""
    path = line.split(": ", 1)[0]
    if path == "$.error.message":
        return JAVA
    if path in ("$.outcome", "$.error.kafka_exception", "$.error family", "$.error"):
        return DELIVERY
    m = _PATH.match(path)
    if m and m.group("top") == "batches" and m.group("key") in (None, *_DELIVERED_BATCH_KEYS):
        return DELIVERY
    return WIRE


def judgement(expected: dict[str, Any], actual: Any, caps: Capabilities, mode: str) -> Judgement:
    """One case's judgement: every difference of the adapter's document from Kafka's, at its
    level (:func:`level_of`), or an error (a document that is not a decode document)."""
    problem = _structure_problem(actual)
    if problem:
        return Judgement(error=f"invalid document: {problem}")
    keep_message = caps.error_classes == "exact"
    magics = [_magic(b) for b in expected.get("batches", [])]
    exp = _strip(expected, caps, magics, mode, keep_message)
    act = _strip(actual, caps, magics, mode, keep_message)
    if not caps.file_semantics:
        act["mode"] = exp["mode"]  # one semantics for both: the mode it echoes is not compared
    _failing_batch(exp, act, caps)
    lines: list[str] = []
    e_err, a_err = exp.get("error"), act.get("error")
    if isinstance(e_err, dict) and isinstance(a_err, dict):
        lines += error_lines(e_err, a_err, "kafka_exception", caps.error_classes)
        for err in (e_err, a_err):  # compared above
            err.pop("kafka_exception", None)
            err.pop("message", None)
    lines += diff(exp, act, parties=PARTIES)
    return leveled(lines, level_of, lambda failing: _headline(exp, act, failing))


def leveled(
    lines: list[str], level: Callable[[str], str], headline: Callable[[list[str]], str]
) -> Judgement:
    """A judgement of diff ``lines``, each at ``level(line)``, its verdict's reason made by
    ``headline`` from the failing lines, at most :data:`MAX_DIFF_LINES` kept."""
    return Judgement(
        [Difference(level(line), line) for line in lines],
        headline=headline,
        limit=MAX_DIFF_LINES,
    )


def judge(
    expected: dict[str, Any], actual: Any, caps: Capabilities, mode: str, level: str = DEFAULT_LEVEL
) -> Verdict:
    """The verdict for one case at ``level``: ``pass``, ``fail`` (with the diff) or ``error``
    (a document that is not a decode document at all); differences above the level are its
    findings."""
    return judgement(expected, actual, caps, mode).verdict(level)


def _headline(exp: dict[str, Any], act: dict[str, Any], lines: list[str]) -> str:
    """One line above the diff, not a copy of its first line: the outcome when it differs,
    else how many differences and where the first one is."""
    if exp.get("outcome") != act.get("outcome"):
        return f"outcome {act.get('outcome')} where Kafka's is {exp.get('outcome')}"
    where = lines[0].split(": ", 1)[0]
    n = len(lines)
    return f"{n} difference{'s' if n != 1 else ''}, the first at {where}"
