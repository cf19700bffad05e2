"""The producers scenarios run: kafka-python (``api_version`` picks the magic) and Kafka's own
Java producer (``jvm/producer/Produce.java`` with the broker version's kafka-clients).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.capture import RunningBroker
from conformance.capture.scenarios.base import KP_API_VERSION, Send
from conformance.jvm import kafka_jars
from conformance.jvm import runtime as _jvm


def produce_java_path() -> Path:
    """``jvm/producer/Produce.java`` of the repository (``runtime.repo_root()``, looked up when
    called)."""
    return _jvm.repo_root() / "jvm" / "producer" / "Produce.java"


def _utf8(s: str | None) -> bytes | None:
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
                value = (
                    ("x" * s["value_size"]).encode() if "value_size" in s else _utf8(s.get("value"))
                )
                headers = [(k, _utf8(v)) for k, v in s.get("headers", [])] or None
                futures.append(
                    producer.send(
                        topic,
                        key=_utf8(s.get("key")),
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
            broker.spec.version,
            str(produce_java_path()),
            [spec_path],
            jvm_opts=["-Xmx256m", *_jvm.CLIENT_COMPILER_ONLY],
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
