"""Kafka's JSON form of a message: ``XJsonConverter.write(message, version)``, printed as
Jackson's ``JsonNode.toString()`` prints it.

Source followed: Kafka's
``generator/src/main/java/org/apache/kafka/message/JsonConverterGenerator.java``
(``generateWrite``, ``generateTargetToJson``, ``generateVariableLengthTargetToJson``; the 4.0
development line) with the version tests of ``messages.plan``, and Jackson 2.16's
``ObjectMapper`` writer for the text; held to Kafka 3.9.2's and 4.3.1's generated converters
by ``tests/test_messages_java.py``.

The node tree (:func:`message_json_node`) is plain Python values standing for Jackson's nodes,
so a caller can build around it as Kafka's tools do (DumpLogSegments puts a converter's node
under ``{"type": ..., "data": ...}`` and replaces a member's ``subscription`` bytes with
another converter's node) and print the whole with :func:`write_json_text`:

============================  ===================  ========================================
field type                    node (Python value)  text
============================  ===================  ========================================
bool                          ``bool``             ``true`` / ``false``
int8, int16 / int32, uint16   ``int``              ``ShortNode`` / ``IntNode``: decimal
/ int64, uint32                                    (``LongNode``: decimal, never quoted)
float64                       ``float``            ``DoubleNode``: Java's ``Double.toString``
                                                   (``1.0E7``, ``0.001``); NaN and the
                                                   infinities quoted (``"NaN"``)
uuid                          ``str``              ``Uuid.toString()``: URL-safe base64, no
                                                   padding (22 characters)
string                        ``str``              Jackson's escaping: ``\\"``, ``\\\\``,
                                                   ``\\b \\t \\n \\f \\r``, other controls
                                                   ``\\u00XX`` (upper-case hex); everything
                                                   else as is (UTF-8)
bytes                         ``bytes``            ``BinaryNode``: base64, standard
                                                   alphabet, ``=`` padding, no line breaks
records                       ``bytes`` (empty)    ``""``: the converter writes an empty
                                                   ``BinaryNode`` (KIP-673); with
                                                   ``serialize_records=False`` the key is
                                                   ``<name>SizeInBytes`` with the size
array                         ``list``             ``[...]``
struct                        ``dict``             ``{...}``, keys in schema order
null                          ``None``             ``null``
============================  ===================  ========================================

Keys are the fields' camelCase names, in schema order; a field is written at the versions it
exists in; a tagged field only when it is not its default; a field absent at the version must
be its default unless ignorable (``UnsupportedVersionException: Attempted to write a
non-default x at version V``). The text is compact (no spaces), as ``toString()``.

Java 17's ``Double.toString`` (before JDK 19's shortest-digits algorithm) prints a few doubles
with more digits than needed (e.g. ``2.82879384806159008E17``); this module prints the
shortest digits, which is what Java 19+ prints. Kafka has three float64 fields (client quota
values).
"""

from __future__ import annotations

import base64
import math
import uuid
from decimal import Decimal
from typing import Any

from conformance.errors import NullPointerError, UnsupportedVersionError
from conformance.messages.plan import Coding, json_plan
from conformance.messages.schema import MessageSchema, StructSpec, kafka_uuid_string
from conformance.messages.value import Message, non_default

__all__ = [
    "java_double_string",
    "message_json_node",
    "write_json_text",
    "write_message_json",
]

#: a node of the tree: what each Jackson node is in Python (see the module docstring)
JsonNode = dict[str, Any] | list[Any] | str | int | float | bool | bytes | None


# -------------------------------------------------------------------------------- the tree


class _Converter:
    __slots__ = ("schema", "version", "serialize_records")

    def __init__(self, schema: MessageSchema, version: int, serialize_records: bool) -> None:
        self.schema = schema
        self.version = version
        self.serialize_records = serialize_records

    def struct(self, s: StructSpec, message: Any) -> dict[str, Any]:
        if message is None:
            raise NullPointerError()
        if not isinstance(message, Message):
            raise TypeError(f"expected a {s.name} message, got {message!r}")
        plan = json_plan(self.schema, s, self.version)
        if plan.error is not None:
            raise UnsupportedVersionError(plan.error)
        node: dict[str, Any] = {}
        values = message.values
        for f, action, coding in plan.fields:
            value = values[f.name]
            if action == "value":
                assert coding is not None
                self.target(node, f.camel_name, coding, value)
            elif action == "tagged":
                assert coding is not None
                if non_default(f, value, not f.nullable_versions.empty):
                    self.target(node, f.camel_name, coding, value)
            elif action == "absent" and non_default(f, value, not f.nullable_versions.empty):
                raise UnsupportedVersionError(
                    f"Attempted to write a non-default {f.camel_name} at version {self.version}"
                )
        return node

    def target(self, node: dict[str, Any], key: str, c: Coding, value: Any) -> None:
        """``generateTargetToJson``: ``node[key]`` for one value."""
        if c.kind == "records" and not self.serialize_records and value is not None:
            node[f"{key}SizeInBytes"] = len(value)
            return
        node[key] = self.value(c, value)

    def value(self, c: Coding, value: Any) -> Any:
        kind = c.kind
        if kind == "bool":
            return bool(value)
        if kind in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
            return int(value)
        if kind == "float64":
            return float(value)
        if kind == "uuid":
            if not isinstance(value, uuid.UUID):
                raise NullPointerError() if value is None else TypeError(repr(value))
            return kafka_uuid_string(value)
        if value is None and c.null_check:
            return None
        if kind == "string":
            return value  # TextNode(null) prints null too
        if kind == "records":
            if self.serialize_records:
                return b""
            raise NullPointerError()
        if value is None:
            raise NullPointerError()
        if kind == "bytes":
            return bytes(value)
        if kind == "struct":
            assert c.struct is not None
            return self.struct(c.struct, value)
        element = c.element
        assert element is not None
        if element.kind == "struct":
            assert element.struct is not None
            return [self.struct(element.struct, item) for item in value]
        return [self.value(element, item) for item in value]


def message_json_node(
    schema: MessageSchema, version: int, message: Message, *, serialize_records: bool = True
) -> dict[str, Any]:
    """``XJsonConverter.write(message, version, serializeRecords)`` as a node tree (see the
    module docstring); ``serialize_records=False`` is the request logger's form."""
    return _Converter(schema, version, serialize_records).struct(schema.struct, message)


def write_message_json(
    schema: MessageSchema, version: int, message: Message, *, serialize_records: bool = True
) -> str:
    """``XJsonConverter.write(message, version).toString()``."""
    return write_json_text(
        message_json_node(schema, version, message, serialize_records=serialize_records)
    )


# -------------------------------------------------------------------------------- the text

_ESCAPES = {i: f"\\u{i:04X}" for i in range(0x20)}
_ESCAPES.update(
    {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}
)


def _string(s: str) -> str:
    return '"' + s.translate(_ESCAPES) + '"'


def java_double_string(x: float) -> str:
    """``Double.toString(x)`` with the shortest digits that round-trip (JDK 19+)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    digits, exponent = _shortest(abs(x))
    if -3 <= exponent < 7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _shortest(x: float) -> tuple[str, int]:
    """The digits and decimal exponent (``x = d.ddd * 10**exponent``) Java prints: the
    shortest that read back as ``x``, at least two (``Double.toString`` always prints a
    digit after the point: of the two-digit decimals the one closest to ``x``, so
    ``Double.MIN_VALUE`` is ``4.9E-324`` where the shortest is ``5e-324``)."""
    _, digit_tuple, exp = Decimal(repr(x)).as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple))
    exponent = len(digits) - 1 + exp
    digits = digits.rstrip("0") or "0"
    if len(digits) == 1:
        exact = Decimal(x)
        two = exact.scaleb(-exact.adjusted() + 1).to_integral_value()  # 2 digits, half-even
        if float(two.scaleb(exact.adjusted() - 1)) == x:
            text = str(int(two))
            if len(text) == 2:  # not rounded up to 100
                return (text.rstrip("0") or "0"), exact.adjusted()
    return digits, exponent


def write_json_text(node: Any) -> str:
    """Jackson's compact text of a node tree (``JsonNode.toString()``)."""
    out: list[str] = []
    _write(node, out)
    return "".join(out)


def _write(node: Any, out: list[str]) -> None:
    if node is None:
        out.append("null")
    elif node is True:
        out.append("true")
    elif node is False:
        out.append("false")
    elif isinstance(node, int):
        out.append(str(node))
    elif isinstance(node, float):
        text = java_double_string(node)
        out.append(_string(text) if not math.isfinite(node) else text)
    elif isinstance(node, str):
        out.append(_string(node))
    elif isinstance(node, bytes | bytearray | memoryview):
        out.append('"' + base64.b64encode(bytes(node)).decode("ascii") + '"')
    elif isinstance(node, dict):
        out.append("{")
        for i, (key, value) in enumerate(node.items()):
            if i:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(value, out)
        out.append("}")
    elif isinstance(node, list | tuple):
        out.append("[")
        for i, value in enumerate(node):
            if i:
                out.append(",")
            _write(value, out)
        out.append("]")
    else:
        raise TypeError(f"not a JSON node: {node!r}")
