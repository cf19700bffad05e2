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

A value Kafka would refuse as a configuration is a ``ValueError`` naming it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from conformance.broker.versions import LONG_MAX, BrokerVersion, broker_version
from conformance.codecs import CODEC_IDS, NONE
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


def record_version(message_format_version: str) -> int:
    """The magic a ``message.format.version`` stores: 0.8-0.9 -> 0, 0.10 -> 1, 0.11+ -> 2
    (``MetadataVersion``/``ApiVersion.recordVersion``)."""
    m = re.match(r"^(\d+)\.(\d+)", message_format_version)
    if m is None:
        raise ValueError(f"message.format.version: not a version: {message_format_version!r}")
    major, minor = int(m.group(1)), int(m.group(2))
    if (major, minor) < (0, 10):
        return 0
    if (major, minor) < (0, 11):
        return 1
    return 2


def _long(props: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    text = props.get(name)
    if text is None:
        return default
    try:
        value = int(str(text).strip())
    except ValueError:
        raise ValueError(f"{name}: not a number: {text!r}") from None
    if not minimum <= value <= LONG_MAX:
        raise ValueError(f"{name}: {value} is out of range (at least {minimum})")
    return value


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
            raise ValueError(
                f"topic configuration not used by the produce checks: {', '.join(unknown)} "
                f"(known: {', '.join(sorted(_KNOWN))})"
            )
        policy = {p.strip() for p in str(props.get("cleanup.policy", "delete")).split(",")}
        if not policy <= {"delete", "compact"}:
            raise ValueError(f"cleanup.policy: {props['cleanup.policy']!r}")
        ts_type = props.get("message.timestamp.type", TimestampType.CREATE_TIME)
        if ts_type not in (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME):
            raise ValueError(f"message.timestamp.type: {ts_type!r}")
        difference = LONG_MAX
        if "message.timestamp.difference.max.ms" in props:
            if not v.timestamp_difference:
                raise ValueError(
                    f"message.timestamp.difference.max.ms was removed in Kafka {v.version} "
                    "(use message.timestamp.before.max.ms / after.max.ms)"
                )
            difference = _long(props, "message.timestamp.difference.max.ms", LONG_MAX)
        if v.timestamp_bounds == "difference":
            for name in ("message.timestamp.before.max.ms", "message.timestamp.after.max.ms"):
                if name in props:
                    raise ValueError(f"{name} does not exist in Kafka {v.version}")
            before = after = difference
        else:
            before = _long(props, "message.timestamp.before.max.ms", LONG_MAX)
            after = _long(props, "message.timestamp.after.max.ms", v.default_after_max_ms)
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
            raise ValueError(f"compression.type: {codec_name!r}")
        magic = 2
        if "message.format.version" in props:
            if v.legacy_formats:
                magic = record_version(props["message.format.version"])
                if inter_broker_protocol_version is not None:
                    # message formats above the inter-broker protocol are refused; from IBP
                    # 3.0 the format is the IBP's (v2) whatever the topic says (KIP-724)
                    ibp = record_version(inter_broker_protocol_version)
                    if _major(inter_broker_protocol_version) >= 3:
                        magic = 2
                    elif magic > ibp:
                        raise ValueError(
                            "message.format.version is above inter.broker.protocol.version"
                        )
            # 4.x ignores the (removed) setting: topics store v2
        elif v.legacy_formats and inter_broker_protocol_version is not None:
            magic = record_version(inter_broker_protocol_version)
        return cls(
            compacted="compact" in policy,
            timestamp_type=ts_type,
            timestamp_before_max_ms=before,
            timestamp_after_max_ms=after,
            max_message_bytes=_long(props, "max.message.bytes", DEFAULT_MAX_MESSAGE_BYTES),
            compression=compression,
            magic=magic,
            segment_bytes=_long(props, "segment.bytes", DEFAULT_SEGMENT_BYTES, minimum=14),
            properties=tuple(sorted((k, str(val)) for k, val in props.items())),
        )


def _major(version: str) -> int:
    m = re.match(r"^(\d+)", version)
    return int(m.group(1)) if m else 0
