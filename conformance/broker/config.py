"""The topic and broker settings the produce path reads, from Kafka's configuration names.

A :class:`TopicConfig` is built from the topic's configuration as Kafka spells it (strings,
``{"cleanup.policy": "compact", "message.timestamp.type": "LogAppendTime"}``), with each
version's defaults (``LogConfig``), and gives the values the checks use:

===========================================  =====================================================
configuration                                used for
===========================================  =====================================================
``cleanup.policy``                           ``compact`` in the list: records need a key
``message.timestamp.type``                   CreateTime (bounds checked) or LogAppendTime
``message.timestamp.before.max.ms``,         the accepted window around the broker's clock
``message.timestamp.after.max.ms``,          (version rules: ``versions.BrokerVersion``)
``message.timestamp.difference.max.ms``
``max.message.bytes``                        the largest batch (default 1048588 = 1 MiB + 12)
``compression.type``                         ``producer`` keeps the producer's codec, else the
                                             broker recompresses (``uncompressed`` = none)
``message.format.version``                   the magic the topic stores (2.x, 3.x only)
``segment.bytes``                            the largest append (RECORD_LIST_TOO_LARGE)
===========================================  =====================================================

A value Kafka would refuse as a configuration is a :class:`~conformance.errors.ConfigError`
(a ``ValueError``) naming it: ``max.message.bytes`` and ``segment.bytes`` are Kafka ``INT``
settings (``Integer.parseInt`` of the trimmed text: at most 2147483647), the timestamp bounds
``LONG``; ``inter.broker.protocol.version`` does not exist from Kafka 4.0 (KRaft only:
``metadata.version``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from conformance.broker.versions import LONG_MAX, BrokerVersion, broker_version
from conformance.codecs import CODEC_IDS, NONE
from conformance.errors import ConfigError, NumberFormatError
from conformance.primitives.java import java_parse_int
from conformance.wire.layout import TimestampType

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "TopicConfig", "record_version", "topic_properties"]

#: ``LogConfig.DEFAULT_MAX_MESSAGE_BYTES``: 1 MiB + the 12-byte log overhead
DEFAULT_MAX_MESSAGE_BYTES = 1048588
DEFAULT_SEGMENT_BYTES = 1 << 30

_KNOWN = frozenset(
    {
        "cleanup.policy",
        "message.timestamp.type",
        "message.timestamp.before.max.ms",
        "message.timestamp.after.max.ms",
        "message.timestamp.difference.max.ms",
        "max.message.bytes",
        "compression.type",
        "message.format.version",
        "segment.bytes",
    }
)


#: a version as ``message.format.version`` / ``inter.broker.protocol.version`` take it
#: (``MetadataVersion``/``ApiVersion.fromVersionString``: ``0.10.2``, ``2.8``, ``2.8-IV1``)
_FORMAT_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.\d+){0,2}(?:-IV\d+)?", re.ASCII)


def record_version(version: str, setting: str = "message.format.version") -> int:
    """The magic a ``message.format.version`` (or an ``inter.broker.protocol.version``:
    ``setting``, the name a refusal gives) stores: 0.8-0.9 -> 0, 0.10 -> 1, 0.11+ -> 2
    (``MetadataVersion``/``ApiVersion.recordVersion``)."""
    m = _FORMAT_VERSION.fullmatch(str(version))
    if m is None:
        raise ConfigError(
            f"{setting}: not a version: {version!r} (expected e.g. 0.10.2, 2.8 or 2.8-IV1)"
        )
    major, minor = int(m.group(1)), int(m.group(2))
    if (major, minor) < (0, 10):
        return 0
    if (major, minor) < (0, 11):
        return 1
    return 2


_IBP = "inter.broker.protocol.version"

#: the largest value of Kafka's configuration types ``INT`` and ``LONG``
_TYPE_BITS = {"INT": 32, "LONG": 64}


def _number(
    props: Mapping[str, str], name: str, default: int, minimum: int = 0, kind: str = "LONG"
) -> int:
    """A setting of ``ConfigDef`` type ``kind`` (``INT``, ``LONG``): the text trimmed as
    ``String.trim`` does, then ``Integer.parseInt``/``Long.parseLong``, then ``atLeast``."""
    text = props.get(name)
    if text is None:
        return default
    trimmed = _java_trim(str(text))
    try:
        value = java_parse_int(trimmed, _TYPE_BITS[kind])
    except NumberFormatError:
        bits = _TYPE_BITS[kind]
        raise ConfigError(
            f"{name}: not a number of type {kind} ({-(1 << (bits - 1))}..{(1 << (bits - 1)) - 1}): "
            f"{text!r}"
        ) from None
    if value < minimum:
        raise ConfigError(f"{name}: {value} is out of range (at least {minimum})")
    return value


def _java_trim(text: str) -> str:
    """``String.trim()``: code points up to U+0020 cut from both ends (nothing else)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def topic_properties(version: str | BrokerVersion | None = None) -> frozenset[str]:
    """The topic settings of the produce checks that a broker of ``version`` has (2.x: no
    before/after bounds; 4.x: no timestamp difference)."""
    v = broker_version(version)
    gone: set[str] = set()
    if v.timestamp_bounds == "difference":
        gone |= {"message.timestamp.before.max.ms", "message.timestamp.after.max.ms"}
    if not v.timestamp_difference:
        gone.add("message.timestamp.difference.max.ms")
    return _KNOWN - gone


@dataclass(frozen=True)
class TopicConfig:
    """The effective topic settings of one partition (see the module docstring)."""

    compacted: bool = False
    timestamp_type: str = TimestampType.CREATE_TIME
    #: a record may be this much older than the broker's clock ...
    timestamp_before_max_ms: int = LONG_MAX
    #: ... and this much newer
    timestamp_after_max_ms: int = LONG_MAX
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    #: ``None``: keep the producer's codec (``producer``), else the codec id to store
    compression: int | None = None
    #: the magic the topic stores (``message.format.version``; always 2 from 4.0)
    magic: int = 2
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    #: the configuration it was built from (the oracle gets the same)
    properties: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_properties(
        cls,
        props: Mapping[str, str] | None = None,
        version: str | BrokerVersion | None = None,
        *,
        inter_broker_protocol_version: str | None = None,
    ) -> TopicConfig:
        """The effective settings of a topic configured with ``props`` on a broker of
        ``version`` (default: the newest supported)."""
        v = broker_version(version)
        props = dict(props or {})
        unknown = sorted(set(props) - _KNOWN)
        if unknown:
            raise ConfigError(
                f"topic configuration not used by the produce checks: {', '.join(unknown)} "
                f"(known: {', '.join(sorted(_KNOWN))})"
            )
        policy = {p.strip() for p in str(props.get("cleanup.policy", "delete")).split(",")}
        if not policy <= {"delete", "compact"}:
            raise ConfigError(f"cleanup.policy: {props['cleanup.policy']!r}")
        ts_type = props.get("message.timestamp.type", TimestampType.CREATE_TIME)
        if ts_type not in (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME):
            raise ConfigError(f"message.timestamp.type: {ts_type!r}")
        difference = LONG_MAX
        if "message.timestamp.difference.max.ms" in props:
            if not v.timestamp_difference:
                raise ConfigError(
                    f"message.timestamp.difference.max.ms was removed in Kafka {v.version} "
                    "(use message.timestamp.before.max.ms / after.max.ms)"
                )
            difference = _number(props, "message.timestamp.difference.max.ms", LONG_MAX)
        if v.timestamp_bounds == "difference":
            for name in ("message.timestamp.before.max.ms", "message.timestamp.after.max.ms"):
                if name in props:
                    raise ConfigError(f"{name} does not exist in Kafka {v.version}")
            before = after = difference
        else:
            before = _number(props, "message.timestamp.before.max.ms", LONG_MAX)
            after = _number(props, "message.timestamp.after.max.ms", v.default_after_max_ms)
            # 3.6-3.9 (LogConfig.getMessageTimestampBeforeMaxMs): while the difference exists,
            # a bound left at Long.MAX_VALUE takes the difference's value
            if v.timestamp_difference:
                before = difference if before == LONG_MAX else before
                after = difference if after == LONG_MAX else after
        codec_name = str(props.get("compression.type", "producer")).strip()
        if codec_name == "producer":
            compression = None
        elif codec_name == "uncompressed":
            compression = NONE
        elif codec_name in CODEC_IDS and codec_name != "none":
            compression = CODEC_IDS[codec_name]
        else:
            raise ConfigError(f"compression.type: {codec_name!r}")
        ibp_magic = None
        if inter_broker_protocol_version is not None:
            if not v.inter_broker_protocol:
                raise ConfigError(
                    f"inter.broker.protocol.version does not exist in Kafka {v.version} (removed "
                    "in 4.0 with ZooKeeper, KIP-500; a KRaft broker has metadata.version)"
                )
            ibp_magic = record_version(inter_broker_protocol_version, _IBP)
        magic = 2
        if "message.format.version" in props:
            if v.legacy_formats:
                magic = record_version(props["message.format.version"])
                if ibp_magic is not None:
                    # message formats above the inter-broker protocol are refused; from IBP
                    # 3.0 the format is the IBP's (v2) whatever the topic says (KIP-724)
                    if _major(str(inter_broker_protocol_version)) >= 3:
                        magic = 2
                    elif magic > ibp_magic:
                        raise ConfigError(
                            "message.format.version is above inter.broker.protocol.version"
                        )
            # 4.x ignores the (removed) setting: topics store v2
        elif v.legacy_formats and ibp_magic is not None:
            magic = ibp_magic
        return cls(
            compacted="compact" in policy,
            timestamp_type=ts_type,
            timestamp_before_max_ms=before,
            timestamp_after_max_ms=after,
            max_message_bytes=_number(
                props, "max.message.bytes", DEFAULT_MAX_MESSAGE_BYTES, kind="INT"
            ),
            compression=compression,
            magic=magic,
            segment_bytes=_number(
                props, "segment.bytes", DEFAULT_SEGMENT_BYTES, minimum=14, kind="INT"
            ),
            properties=tuple(sorted((k, str(val)) for k, val in props.items())),
        )


def _major(version: str) -> int:
    m = re.match(r"^(\d+)", version)
    return int(m.group(1)) if m else 0
