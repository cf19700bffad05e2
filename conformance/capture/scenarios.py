"""What each corpus case makes a real broker write (docs/corpora.md, scenario directories).

A :class:`Scenario` creates nothing itself: ``capture`` (``run.py``) creates its topic with
``topic_configs`` (partition count 1), calls :meth:`Scenario.run`, which produces
deterministically (fixed timestamps, keys and values; batches delimited by explicit flushes,
``linger`` far longer than a run) and waits where needed (the log cleaner), and returns the
producer description for the manifest.

``non_deterministic`` lists what may differ between two captures of the same scenario. Each
entry starts with a canonical decode JSON key (``conformance.stream.canonical``), masked wherever it
appears in a batch or record by the determinism test, optionally followed by an explanation;
entries starting with ``file:`` name files whose bytes vary as a whole.

Producers: kafka-python (``api_version`` picks the magic: (0, 9) -> 0, (0, 10, 2) -> 1,
(2, 5) -> 2; it has no snappy codec here) and Kafka's own Java producer
(``jvm/producer/Produce.java``, run with the broker version's kafka-clients).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.jvm import runtime as _jvm
from conformance.jvm import kafka_jars
from conformance.capture import BrokerSpec, RunningBroker

__all__ = ["SCENARIOS", "Scenario", "scenarios_for", "T0"]

#: Fixed CreateTime of the first record of every scenario (2023-11-14T22:13:20Z).
T0 = 1_700_000_000_000

MESSAGE_FORMAT = {0: "0.9.0", 1: "0.10.2"}
KP_API_VERSION: dict[int, tuple[int, ...]] = {0: (0, 9), 1: (0, 10, 2), 2: (2, 5)}
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
KP_CODECS = ("none", "gzip", "lz4", "zstd")  # kafka-python here has no snappy library

BASE_TOPIC_CONFIGS = {"retention.ms": "-1", "retention.bytes": "-1"}

ND_TOPIC_ID = "file:partition.metadata (random topic id)"
ND_PID = "producerId (allocated by the broker; depends on what ran before)"
ND_SNAPSHOT = "file:*.snapshot (producer ids, broker-assigned)"
ND_KP_GZIP = "crc (kafka-python gzip: the gzip header carries the compression time)"
ND_CONTROL = [
    "baseTimestamp (control batches: broker clock)",
    "maxTimestamp (control batches: broker clock)",
    "timestamp (control records: broker clock)",
    "crc",
    "file:*.timeindex (control batch timestamps)",
]

ROOT = Path(__file__).resolve().parents[2]
PRODUCE_JAVA = ROOT / "jvm" / "producer" / "Produce.java"

Send = dict[str, Any]  # {"key": str|None, "value": str|None, "timestamp": int, "headers": [...]}


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"[0-9]+", version)[:3])


# --------------------------------------------------------------------------------------------
# producers


def _b(s: str | None) -> bytes | None:
    return None if s is None else s.encode("utf-8")


def kafka_python_produce(
    broker: RunningBroker,
    topic: str,
    groups: Sequence[Sequence[Send]],
    *,
    magic: int = 2,
    config: dict[str, Any] | None = None,
    transactions: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Send each group, then flush (one group = one batch unless batch_size splits it).

    ``transactions``: per group, "commit" or "abort" (wraps each group in a transaction).
    """
    import kafka
    from kafka import KafkaProducer

    cfg: dict[str, Any] = {
        "api_version": KP_API_VERSION[magic],
        "linger_ms": 600_000,
        "enable_idempotence": False,
        "acks": -1 if magic == 2 else 1,
        "retries": 5,
        "max_in_flight_requests_per_connection": 1,
        "request_timeout_ms": 30_000,
        "delivery_timeout_ms": 900_000,
    }
    cfg.update(config or {})
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, client_id="conformance", **cfg)
    try:
        if transactions:
            producer.init_transactions()
        for i, group in enumerate(groups):
            if transactions:
                producer.begin_transaction()
            futures = []
            for s in group:
                value = ("x" * s["value_size"]).encode() if "value_size" in s else _b(s.get("value"))
                headers = [(k, _b(v)) for k, v in s.get("headers", [])] or None
                futures.append(
                    producer.send(
                        topic,
                        key=_b(s.get("key")),
                        value=value,
                        headers=headers,
                        partition=0,
                        timestamp_ms=s.get("timestamp"),
                    )
                )
            if transactions:
                if transactions[i] == "commit":
                    producer.commit_transaction()
                else:
                    producer.flush()
                    producer.abort_transaction()
            else:
                producer.flush()
            for f in futures:
                if transactions and transactions[i] == "abort":
                    continue
                f.get(timeout=60)
    finally:
        producer.close(timeout=30)
    shown = {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(cfg.items())}
    return {
        "name": "kafka-python",
        "version": kafka.__version__,
        "api_version": ".".join(str(x) for x in KP_API_VERSION[magic]),
        "config": shown,
    }


def java_produce(
    broker: RunningBroker,
    topic: str,
    steps: Sequence[dict[str, Any]],
    *,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run ``jvm/producer/Produce.java`` (kafka-clients of the broker's own version)."""
    cfg: dict[str, Any] = {
        "linger.ms": "600000",
        "delivery.timeout.ms": "900000",
        "enable.idempotence": "false",
        "acks": "all",
        "max.in.flight.requests.per.connection": "1",
        "retries": "5",
        "client.id": "conformance",
    }
    cfg.update({k: str(v) for k, v in (config or {}).items()})
    spec = {"bootstrap": broker.bootstrap, "topic": topic, "config": cfg, "steps": list(steps)}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
        spec_path = fh.name
    try:
        cmd = kafka_jars.java_command(
            broker.spec.version, str(PRODUCE_JAVA), [spec_path], jvm_opts=["-Xmx256m"]
        )
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    finally:
        Path(spec_path).unlink(missing_ok=True)
    if proc.returncode != 0:
        raise RuntimeError(
            f"java producer failed ({proc.returncode}) on {topic}:\n"
            f"{_jvm.tail(proc.stdout + proc.stderr)}"
        )
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"name": "java", "version": info["version"], "api_version": None, "config": cfg}


def java_steps(
    groups: Sequence[Sequence[Send]], transactions: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [{"op": "init"}] if transactions else []
    for i, group in enumerate(groups):
        if transactions:
            steps.append({"op": "begin"})
        steps += [{"op": "send", **s} for s in group]
        steps.append({"op": "flush"})
        if transactions:
            steps.append({"op": transactions[i]})
    return steps


def produce(
    producer: str,
    broker: RunningBroker,
    topic: str,
    groups: Sequence[Sequence[Send]],
    *,
    magic: int = 2,
    kp_config: dict[str, Any] | None = None,
    java_config: dict[str, Any] | None = None,
    transactions: Sequence[str] | None = None,
) -> dict[str, Any]:
    if producer == "kafka-python":
        return kafka_python_produce(
            broker, topic, groups, magic=magic, config=kp_config, transactions=transactions
        )
    return java_produce(broker, topic, java_steps(groups, transactions), config=java_config)


# --------------------------------------------------------------------------------------------
# waiting for the log cleaner


def wait_cleaned(broker: RunningBroker, topic: str, timeout: float = 90.0) -> int:
    """Poll ``cleaner-offset-checkpoint`` until the cleaner has cleaned ``topic``-0 and no
    ``.cleaned``/``.swap`` file is left; returns the checkpointed offset."""
    checkpoint = broker.log_dir / "cleaner-offset-checkpoint"
    pdir = broker.log_dir / f"{topic}-0"
    if not broker.log_dir.is_dir():  # e.g. testcontainers: the log dir is inside the container
        time.sleep(min(timeout, 20.0))
        return -1
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            lines = checkpoint.read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        for line in lines[2:]:
            parts = line.split()
            if len(parts) == 3 and parts[0] == topic and parts[1] == "0" and int(parts[2]) > 0:
                if not any(pdir.glob("*.cleaned")) and not any(pdir.glob("*.swap")):
                    time.sleep(0.5)  # let the swap settle
                    return int(parts[2])
        time.sleep(0.2)
    raise TimeoutError(f"log cleaner did not clean {topic}-0 within {timeout:.0f} s")


# --------------------------------------------------------------------------------------------
# the scenario


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    producer: str  # "kafka-python" | "java" | "none"
    topic_configs: dict[str, str]
    body: Callable[[RunningBroker, str], dict[str, Any]] | None = None
    magic: int = 2
    min_version: tuple[int, ...] = (0,)
    max_version: tuple[int, ...] = (99,)
    modes: tuple[str, ...] = ("kraft", "zookeeper")
    non_deterministic: tuple[str, ...] = ()
    #: partition directory to harvest instead of ``<topic>-0`` (e.g. ``__cluster_metadata-0``)
    source_dir: str | None = None
    #: harvest after every other scenario of the broker ran
    last: bool = False
    #: also record Fetch responses through the loopback proxy (``wire/fetch-NNN.bin``):
    #: {"max_bytes": N, "api_version": "x.y.z" | None}
    wire: dict[str, Any] | None = None

    def applies(self, spec: BrokerSpec) -> bool:
        v = _v(spec.version)
        if spec.mode not in self.modes or not (self.min_version <= v < self.max_version):
            return False
        if self.producer == "java" and v < (0, 11):
            return False  # Produce.java uses the 0.11+ client API (headers, transactions)
        if self.magic < 2 and spec.mode == "kraft":
            return False  # KRaft ignores message.format.version: always magic 2
        if self.magic > spec.max_magic:
            return False
        return True

    def topic_for(self) -> str:
        return self.name

    def run(self, broker: RunningBroker, topic: str) -> dict[str, Any]:
        if self.body is None:
            return {"name": "none", "version": None, "api_version": None, "config": {}}
        return self.body(broker, topic)


def _topic_configs(magic: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    cfg = dict(BASE_TOPIC_CONFIGS)
    if magic < 2:
        cfg["message.format.version"] = MESSAGE_FORMAT[magic]
    cfg.update(extra or {})
    return cfg


def _records(n: int, *, prefix: str = "", ts: int = T0, step: int = 1) -> list[Send]:
    return [
        {"key": f"{prefix}k{i}", "value": f"{prefix}value-{i}", "timestamp": ts + i * step}
        for i in range(n)
    ]


SCENARIOS: dict[str, Scenario] = {}


def _add(s: Scenario) -> None:
    assert s.name not in SCENARIOS, s.name
    SCENARIOS[s.name] = s


# -- codec x magic x producer -------------------------------------------------------------------


def _codec_body(codec: str, magic: int, producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [_records(3, prefix="a", ts=T0), _records(4, prefix="b", ts=T0 + 1000)]
        return produce(
            producer,
            broker,
            topic,
            groups,
            magic=magic,
            kp_config={"compression_type": None if codec == "none" else codec},
            java_config={"compression.type": codec},
        )

    return body


for _magic in (0, 1, 2):
    for _codec in CODECS:
        if _codec == "zstd" and _magic < 2:
            continue  # zstd needs magic 2 (UNSUPPORTED_COMPRESSION_TYPE otherwise)
        for _producer in ("kafka-python", "java"):
            if _producer == "kafka-python" and _codec not in KP_CODECS:
                continue
            if _producer == "java" and _magic < 2 and _codec != "snappy":
                continue  # java writes v2: the broker down-converts; keep that for snappy
            nd: list[str] = [ND_TOPIC_ID]
            if _producer == "kafka-python" and _codec == "gzip" and _magic > 0:
                nd.append(ND_KP_GZIP)  # v0 compressed wrappers are rebuilt by the broker
            desc = f"{_codec} batches, magic {_magic}, CreateTime, 2 flushes, {_producer} producer"
            if _producer == "java" and _magic < 2:
                desc += " (v2 produce, down-converted by the broker)"
            if _magic == 0 and _codec != "none":
                desc += "; v0 compressed wrappers are rebuilt by the broker"
            _add(
                Scenario(
                    name=f"codec-{_codec}-v{_magic}-{_producer}",
                    description=desc,
                    producer=_producer,
                    topic_configs=_topic_configs(_magic),
                    body=_codec_body(_codec, _magic, _producer),
                    magic=_magic,
                    min_version=(2, 1) if _codec == "zstd" else (0,),
                    non_deterministic=tuple(nd),
                )
            )


# -- broker-side recompression ------------------------------------------------------------------


def _recompress_body(magic: int) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [_records(3, ts=T0), _records(2, prefix="z", ts=T0 + 5)]
        return produce("kafka-python", broker, topic, groups, magic=magic, kp_config={})

    return body


for _magic in (0, 1, 2):
    for _codec in ("gzip", "snappy", "lz4", "zstd"):
        if _codec == "zstd" and _magic < 2:
            continue
        _add(
            Scenario(
                name=f"broker-recompress-{_codec}-v{_magic}",
                description=f"topic compression.type={_codec}: the broker compresses the "
                f"uncompressed magic {_magic} batches itself",
                producer="kafka-python",
                topic_configs=_topic_configs(_magic, {"compression.type": _codec}),
                body=_recompress_body(_magic),
                magic=_magic,
                min_version=(2, 1) if _codec == "zstd" else (0,),
                non_deterministic=(ND_TOPIC_ID,),
            )
        )


# -- up-conversion (old client, v2 topic) -------------------------------------------------------


def _upconvert_body(magic: int) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [_records(3, ts=T0), _records(3, prefix="g", ts=T0 + 7)]
        info = kafka_python_produce(broker, topic, groups[:1], magic=magic, config={})
        kafka_python_produce(broker, topic, groups[1:], magic=magic, config={"compression_type": "gzip"})
        info["config"]["compression_type"] = ["none (batch 1)", "gzip (batch 2)"]
        return info

    return body


for _magic in (0, 1):
    _add(
        Scenario(
            name=f"upconvert-v{_magic}-to-v2",
            description=f"kafka-python sends magic {_magic} (plain, then gzip) into a magic 2 "
            "topic: the broker up-converts",
            producer="kafka-python",
            topic_configs=_topic_configs(2),
            body=_upconvert_body(_magic),
            magic=2,
            max_version=(4,),  # 4.x rejects Produce v0-v2 (KIP-896)
            non_deterministic=(ND_TOPIC_ID,),
        )
    )


# -- headers ------------------------------------------------------------------------------------


_HEADER_SENDS: list[Send] = [
    {"key": "h0", "value": "one header", "timestamp": T0, "headers": [["trace", "abc"]]},
    {"key": "h1", "value": "null header value", "timestamp": T0 + 1, "headers": [["nullable", None]]},
    {
        "key": "h2",
        "value": "several, repeated key, empty value, unicode key",
        "timestamp": T0 + 2,
        "headers": [["a", "1"], ["a", "2"], ["empty", ""], ["\u00e9t\u00e9-\u2603", "\u00fc"]],
    },
    {"key": "h3", "value": "no headers", "timestamp": T0 + 3},
]


def _headers_body(producer: str, codec: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        sends = _HEADER_SENDS
        if producer == "kafka-python":  # it rejects null header values: the java case has them
            sends = [s for s in sends if all(v is not None for _, v in s.get("headers", []))]
        return produce(
            producer,
            broker,
            topic,
            [sends],
            kp_config={"compression_type": None if codec == "none" else codec},
            java_config={"compression.type": codec},
        )

    return body


for _producer in ("kafka-python", "java"):
    for _codec in ("none", "gzip"):
        _add(
            Scenario(
                name=f"headers-{_codec}-v2-{_producer}",
                description="record headers: repeated keys, empty value, non-ASCII key"
                + (", null value" if _producer == "java" else ""),
                producer=_producer,
                topic_configs=_topic_configs(2),
                body=_headers_body(_producer, _codec),
                non_deterministic=(ND_TOPIC_ID,)
                + ((ND_KP_GZIP,) if (_producer, _codec) == ("kafka-python", "gzip") else ()),
            )
        )


# -- null keys / values -------------------------------------------------------------------------


def _nulls_body(magic: int, producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        sends: list[Send] = [
            {"key": None, "value": "null key", "timestamp": T0},
            {"key": "null-value", "value": None, "timestamp": T0 + 1},
            {"key": "", "value": "empty key", "timestamp": T0 + 2},
            {"key": "empty-value", "value": "", "timestamp": T0 + 3},
        ]
        if producer == "java":
            sends.append({"key": None, "value": None, "timestamp": T0 + 4})
        return produce(producer, broker, topic, [sends], magic=magic)

    return body


for _magic in (0, 1, 2):
    for _producer in ("kafka-python", "java"):
        if _producer == "java" and _magic < 2:
            continue
        _add(
            Scenario(
                name=f"nulls-v{_magic}-{_producer}",
                description="null and empty keys/values (tombstones on a delete-policy topic)"
                + ("; also key and value both null" if _producer == "java" else ""),
                producer=_producer,
                topic_configs=_topic_configs(_magic),
                body=_nulls_body(_magic, _producer),
                magic=_magic,
                non_deterministic=(ND_TOPIC_ID,),
            )
        )


# -- a record over 1 MiB, many tiny records ------------------------------------------------------


def _large_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    sends = [
        {"key": "small", "value": "before", "timestamp": T0},
    ]
    big = [{"key": "big", "value_size": 1_100_000, "timestamp": T0 + 1}]
    return produce(
        "kafka-python",
        broker,
        topic,
        [sends, big],
        kp_config={"max_request_size": 4_194_304},
    )


_add(
    Scenario(
        name="large-record-v2",
        description="one uncompressed record with a 1,100,000-byte value (topic "
        "max.message.bytes raised to 2 MiB)",
        producer="kafka-python",
        topic_configs=_topic_configs(2, {"max.message.bytes": "2097152"}),
        body=_large_body,
        non_deterministic=(ND_TOPIC_ID,),
    )
)


def _tiny_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    sends = [
        {"key": None, "value": chr(97 + i % 26), "timestamp": T0 + i // 10} for i in range(600)
    ]
    return produce("kafka-python", broker, topic, [sends], kp_config={"batch_size": 1024})


_add(
    Scenario(
        name="many-tiny-v2",
        description="600 one-byte records, null keys, kafka-python batch_size=1024 (several "
        "batches), index.interval.bytes=0",
        producer="kafka-python",
        topic_configs=_topic_configs(2, {"index.interval.bytes": "0"}),
        body=_tiny_body,
        non_deterministic=(ND_TOPIC_ID,),
    )
)


# -- LogAppendTime --------------------------------------------------------------------------------


def _lat_body(magic: int, codec: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [_records(3, ts=T0), _records(2, prefix="b", ts=T0 + 10)]
        return produce(
            "kafka-python",
            broker,
            topic,
            groups,
            magic=magic,
            kp_config={"compression_type": None if codec == "none" else codec},
        )

    return body


for _magic in (1, 2):
    for _codec in ("none", "gzip"):
        _add(
            Scenario(
                name=f"log-append-time-{_codec}-v{_magic}",
                description=f"message.timestamp.type=LogAppendTime, {_codec}, magic {_magic}",
                producer="kafka-python",
                topic_configs=_topic_configs(_magic, {"message.timestamp.type": "LogAppendTime"}),
                body=_lat_body(_magic, _codec),
                magic=_magic,
                non_deterministic=(
                    ND_TOPIC_ID,
                    "maxTimestamp (LogAppendTime: broker clock)",
                    "timestamp (records of LogAppendTime batches: broker clock)",
                    "crc",
                    "file:*.timeindex (broker clock)",
                ),
            )
        )


# -- idempotent / transactional ------------------------------------------------------------------


def _idem_body(producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [_records(3, ts=T0), _records(2, prefix="b", ts=T0 + 100), _records(4, prefix="c", ts=T0 + 200)]
        return produce(
            producer,
            broker,
            topic,
            groups,
            kp_config={"enable_idempotence": True, "acks": -1, "compression_type": "gzip"},
            java_config={"enable.idempotence": "true", "compression.type": "gzip"},
        )

    return body


for _producer in ("kafka-python", "java"):
    _add(
        Scenario(
            name=f"idempotent-v2-{_producer}",
            description="idempotent producer (producerId/epoch/sequences), gzip, 3 batches",
            producer=_producer,
            topic_configs=_topic_configs(2),
            body=_idem_body(_producer),
            non_deterministic=(ND_TOPIC_ID, ND_PID, "crc", ND_SNAPSHOT),
        )
    )


def _txn_body(producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [
            _records(3, prefix="c1", ts=T0),
            _records(2, prefix="a1", ts=T0 + 100),
            _records(2, prefix="c2", ts=T0 + 200),
            _records(1, prefix="a2", ts=T0 + 300),
        ]
        tx = ["commit", "abort", "commit", "abort"]
        return produce(
            producer,
            broker,
            topic,
            groups,
            kp_config={"transactional_id": f"txn-{topic}", "enable_idempotence": True, "acks": -1},
            java_config={"transactional.id": f"txn-{topic}", "enable.idempotence": "true"},
            transactions=tx,
        )

    return body


for _producer in ("kafka-python", "java"):
    _add(
        Scenario(
            name=f"txn-commit-abort-v2-{_producer}",
            description="transactional producer: commit, abort, commit, abort (control batches, "
            ".txnindex)",
            producer=_producer,
            topic_configs=_topic_configs(2),
            body=_txn_body(_producer),
            non_deterministic=(ND_TOPIC_ID, ND_PID, ND_SNAPSHOT, *ND_CONTROL),
        )
    )


# -- compaction -----------------------------------------------------------------------------------

_COMPACT = {
    "cleanup.policy": "compact",
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
    "delete.retention.ms": str(365 * 86_400_000),
    "index.interval.bytes": "0",
}


def _compact_idem_body(producer: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        kp = {"enable_idempotence": True, "acks": -1}
        jc = {"enable.idempotence": "true"}
        # producer A: its last batch will be compacted away entirely -> empty batch retained
        info = produce(
            producer,
            broker,
            topic,
            [
                [{"key": "k1", "value": "a1", "timestamp": T0}, {"key": "k2", "value": "a2", "timestamp": T0 + 1}],
            ],
            kp_config=kp,
            java_config=jc,
        )
        # producer B: overwrites k1, k2, tombstone for k3 (never written), k4 kept
        produce(
            producer,
            broker,
            topic,
            [
                [
                    {"key": "k3", "value": "b3", "timestamp": T0 + 2},
                    {"key": "k4", "value": "b4", "timestamp": T0 + 3},
                ],
                [
                    {"key": "k1", "value": "b1", "timestamp": T0 + 4},
                    {"key": "k2", "value": "b2", "timestamp": T0 + 5},
                    {"key": "k3", "value": None, "timestamp": T0 + 6},
                ],
            ],
            kp_config=kp,
            java_config=jc,
        )
        # roll (segment.ms=100 compares record timestamps), then let the cleaner run
        produce(producer, broker, topic, [[{"key": "k9", "value": "roll", "timestamp": T0 + 60_000}]])
        info["cleaner_checkpoint"] = wait_cleaned(broker, topic)
        info["rounds"] = "A(idempotent) k1,k2 | B(idempotent) k3,k4 ; k1,k2,k3=null | C k9 @T0+60s"
        return info

    return body


for _producer in ("kafka-python", "java"):
    _add(
        Scenario(
            name=f"compacted-v2-{_producer}",
            description="cleanup.policy=compact after the cleaner ran: offset gaps, a tombstone "
            "with delete horizon, an empty batch kept for an idempotent producer's last batch",
            producer=_producer,
            topic_configs=_topic_configs(2, _COMPACT),
            body=_compact_idem_body(_producer),
            non_deterministic=(
                ND_TOPIC_ID,
                ND_PID,
                ND_SNAPSHOT,
                "baseTimestamp (batches with a delete horizon: cleaner clock + delete.retention.ms)",
                "deleteHorizonMs (cleaner clock)",
                "crc",
                "file:cleaner-offset-checkpoint",
            ),
        )
    )


def _compact_legacy_body(magic: int, codec: str) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        kp = {"compression_type": None if codec == "none" else codec}
        groups = [
            [{"key": f"k{i}", "value": f"v{i}-1", "timestamp": T0 + i} for i in range(4)],
            [
                {"key": "k0", "value": "v0-2", "timestamp": T0 + 10},
                {"key": "k2", "value": None, "timestamp": T0 + 11},
                {"key": "k5", "value": "v5-1", "timestamp": T0 + 12},
            ],
        ]
        info = produce("kafka-python", broker, topic, groups, magic=magic, kp_config=kp)
        produce(
            "kafka-python",
            broker,
            topic,
            [[{"key": "k9", "value": "roll", "timestamp": T0 + 60_000}]],
            magic=magic,
            kp_config=kp,
        )
        if magic == 0:
            # v0 has no timestamps: segment.ms rolls on the broker clock
            time.sleep(0.3)
            produce("kafka-python", broker, topic, [[{"key": "k8", "value": "roll2"}]], magic=0, kp_config=kp)
        info["cleaner_checkpoint"] = wait_cleaned(broker, topic)
        return info

    return body


for _magic in (0, 1, 2):
    for _codec in ("none", "gzip"):
        _add(
            Scenario(
                name=f"compacted-{_codec}-v{_magic}",
                description=f"compacted magic {_magic} {_codec} log after the cleaner ran "
                "(offset gaps, tombstone, re-compressed wrappers)",
                producer="kafka-python",
                topic_configs=_topic_configs(_magic, _COMPACT),
                body=_compact_legacy_body(_magic, _codec),
                magic=_magic,
                non_deterministic=(
                    ND_TOPIC_ID,
                    "baseTimestamp (v2 batches with a delete horizon)",
                    "deleteHorizonMs (cleaner clock)",
                    "crc",
                    "file:cleaner-offset-checkpoint",
                )
                + (("file:* (v0 segment roll follows the broker clock)",) if _magic == 0 else ()),
            )
        )


# -- multi-segment ----------------------------------------------------------------------------------


def _multi_bytes_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    groups = [_records(4, prefix=f"r{r}-", ts=T0 + r * 1000) for r in range(8)]
    return produce("kafka-python", broker, topic, groups)


_add(
    Scenario(
        name="multi-segment-bytes-v2",
        description="segment.bytes=400: 8 batches roll into several segments, index.interval.bytes=0",
        producer="kafka-python",
        topic_configs=_topic_configs(2, {"segment.bytes": "400", "index.interval.bytes": "0"}),
        body=_multi_bytes_body,
        max_version=(4,),  # 4.x: segment.bytes >= 1 MiB
        non_deterministic=(ND_TOPIC_ID,),
    )
)


def _multi_time_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    # segment.ms compares the new batch's timestamp with the segment's first: fixed
    # timestamps one minute apart roll deterministically, whatever the wall clock
    groups = [_records(3, prefix=f"r{r}-", ts=T0 + r * 60_000) for r in range(4)]
    return produce("kafka-python", broker, topic, groups)


_add(
    Scenario(
        name="multi-segment-time-v2",
        description="segment.ms=1000 and CreateTimes one minute apart: 4 segments, "
        "index.interval.bytes=0",
        producer="kafka-python",
        topic_configs=_topic_configs(2, {"segment.ms": "1000", "index.interval.bytes": "0"}),
        body=_multi_time_body,
        non_deterministic=(ND_TOPIC_ID,),
    )
)


# -- KRaft metadata log -------------------------------------------------------------------------------

_add(
    Scenario(
        name="kraft-cluster-metadata",
        description="the KRaft __cluster_metadata-0 log after all the other scenarios of the run",
        producer="none",
        topic_configs={},
        body=None,
        modes=("kraft",),
        source_dir="__cluster_metadata-0",
        last=True,
        non_deterministic=(
            "file:* (topic ids, incarnation ids, broker clock timestamps, the set of topics "
            "created before it)",
        ),
    )
)


# ---------------------------------------------------------------- wire captures (Fetch responses)


def _alter_topic(broker: RunningBroker, topic: str, configs: dict[str, str]) -> None:
    """Replace the topic's configs (AlterConfigs is not incremental: pass them all)."""
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=30_000)
    try:
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)])
    finally:
        admin.close()


def _wire_partial_body(magic: int) -> Callable[[RunningBroker, str], dict]:
    def body(broker: RunningBroker, topic: str) -> dict[str, Any]:
        groups = [_records(5, prefix=f"b{i}-", ts=T0 + 100 * i) for i in range(12)]
        return kafka_python_produce(broker, topic, groups, magic=magic)

    return body


def _mixed_formats_body(broker: RunningBroker, topic: str) -> dict[str, Any]:
    """magic 0, then 1, then 2 in ONE partition: the topic's message.format.version is raised
    between produce rounds (what a format upgrade leaves on disk, C42-C44)."""
    info = {}
    for magic, fmt in ((0, "0.9.0"), (1, "0.10.2"), (2, None)):
        cfg = dict(BASE_TOPIC_CONFIGS)
        if fmt is not None:
            cfg["message.format.version"] = fmt
        else:
            cfg["message.format.version"] = "0.11.0"
        _alter_topic(broker, topic, cfg)
        groups = [_records(3, prefix=f"m{magic}-{i}-", ts=T0 + 1000 * magic + 10 * i) for i in range(2)]
        info = kafka_python_produce(broker, topic, groups, magic=magic)
    info["note"] = "topic message.format.version raised 0.9.0 -> 0.10.2 -> 0.11.0 between rounds"
    return info


_add(
    Scenario(
        "wire-partial-fetch-v2",
        "12 v2 batches; Fetch responses recorded with fetch max bytes 700 (partial trailing batches)",
        "kafka-python",
        _topic_configs(2),
        _wire_partial_body(2),
        magic=2,
        wire={"max_bytes": 700, "api_version": None},
    )
)
_add(
    Scenario(
        "wire-partial-fetch-v1",
        "12 v1 message sets; Fetch v3 responses (api_version 0.10.2) with fetch max bytes 500",
        "kafka-python",
        _topic_configs(1),
        _wire_partial_body(1),
        magic=1,
        max_version=(4,),
        wire={"max_bytes": 500, "api_version": "0.10.2"},
    )
)
_add(
    Scenario(
        "wire-mixed-formats",
        "magic 0, 1 and 2 batches in one partition (format upgrade), on disk and in Fetch responses",
        "kafka-python",
        _topic_configs(0),
        _mixed_formats_body,
        magic=0,
        min_version=(0, 11),
        max_version=(4,),
        modes=("zookeeper",),
        wire={"max_bytes": 100_000, "api_version": None},
    )
)


def scenarios_for(spec: BrokerSpec, names: Sequence[str] | str = "all") -> list[Scenario]:
    """The scenarios of ``names`` (or all) that ``spec`` can run, ``last`` ones at the end."""
    if names == "all" or names == ["all"]:
        chosen = list(SCENARIOS.values())
    else:
        if isinstance(names, str):
            names = [names]
        unknown = [n for n in names if n not in SCENARIOS]
        if unknown:
            raise KeyError(f"unknown scenario(s): {', '.join(unknown)}")
        chosen = [SCENARIOS[n] for n in names]
    chosen = [s for s in chosen if s.applies(spec)]
    return sorted(chosen, key=lambda s: s.last)


def masked_keys(non_deterministic: Sequence[str]) -> tuple[set[str], list[str]]:
    """(canonical JSON keys to mask, ``file:`` glob patterns) of a ``non_deterministic`` list."""
    keys: set[str] = set()
    files: list[str] = []
    for entry in non_deterministic:
        token = entry.split(" ", 1)[0]
        if token.startswith("file:"):
            files.append(token[len("file:"):])
        else:
            keys.add(token)
    return keys, files


def mask(doc: Any, keys: set[str]) -> Any:
    """``doc`` (decode JSON) with every value under one of ``keys`` replaced by "<masked>"."""
    if isinstance(doc, dict):
        return {k: ("<masked>" if k in keys else mask(v, keys)) for k, v in doc.items()}
    if isinstance(doc, list):
        return [mask(v, keys) for v in doc]
    return doc
