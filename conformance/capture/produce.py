"""``scripts/capture-produce-golden``: golden produce cases from real Kafka brokers.

For one broker of ``capture.brokers.BROKERS`` (default: the three lines the broker model
answers for): start it (backend ``jvm``), create one fresh topic per case (1 partition, the
case's configuration), and send each request of every applicable crafted produce case
(``corpus.produce.cases``) as a real Produce request (kafka-python's ``ProduceRequest`` of the
case's version, ``acks=-1``) through a :class:`~conformance.capture.proxy.RecordingProxy`, then
fetch the partition back from offset 0. Batches of a real client (kafka-python's producer,
one per codec, and an idempotent one) are recorded the same way: their records are taken from
the recorded Produce request frames. What is stored (``corpus.produce.golden``) is what
crossed the proxy: the records as sent, the response frames as received, the partition
responses decoded from them (kafka-python's ``ProduceResponse``) and the stored batches as
fetched. Nothing comes from the kit's model; ``main`` compares the model with the captured
answers afterwards (``judge_golden``) and lists every difference.

The broker runs with Kafka's defaults for what the model reads from the broker's
configuration (``message.max.bytes``, the timestamp bounds), not the capture brokers' relaxed
values. The broker's clock ``now`` of a request is the wall clock read right before sending it
(``receivedAtMs``, read when the answer arrived, bounds it from above). Cases whose answer
depends on ``now`` against their fixed timestamps (``rec-ts-*``) are re-timed: every v2
batch's first and max timestamps move by (capture time - the case's clock), CRC resealed;
the shift is recorded. Everything started (broker, proxy, sockets, producers) is stopped on
errors, at exit and on SIGINT/SIGTERM (``capture.lifecycle``). The protocol side (requests,
responses, the Fetch and the cutting of the fetched log per request) is ``produce_wire``.
"""

from __future__ import annotations

import argparse
import fnmatch
import shutil
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformance.broker.config import DEFAULT_MAX_MESSAGE_BYTES
from conformance.broker.log import DEFAULT_TRANSACTIONAL_ID
from conformance.broker.versions import LONG_MAX, VERSIONS, broker_version
from conformance.capture import (
    BrokerSpec,
    CaptureResult,
    add_out_option,
    lifecycle,
)
from conformance.capture.brokers import BROKERS
from conformance.capture.produce_wire import (
    API_PRODUCE,
    CLIENT_ID,
    TIMEOUT_MS,
    WireClient,
    create_topics,
    fetch_partition,
    new_produce_request,
    produce_version_for,
    read_produce_partitions,
    read_produce_response,
    read_produce_versions,
    stored_by_request,
)
from conformance.capture.proxy import RecordingProxy
from conformance.codecs import CODECS, NONE
from conformance.corpus.produce.cases import ProduceCase, cases
from conformance.corpus.produce.golden import (
    GoldenCase,
    GoldenRequest,
    judge_golden,
    write_golden_case,
    write_golden_manifest,
)
from conformance.host.progress import Status
from conformance.jvm.message_defs import client_protocol
from conformance.stream.splitter import Splitter
from conformance.wire.batch import seal_v2
from conformance.wire.layout import (
    BASE_TIMESTAMP_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V2,
    MAX_TIMESTAMP_OFFSET,
    SIZE_OFFSET,
)

__all__ = [
    "DEFAULT_BROKERS",
    "GoldenResult",
    "capture_golden",
    "judge_all",
    "main",
    "coordinator_meta",
    "produce_spec",
    "send_case",
    "retime",
    "skip_reason",
]

#: the brokers captured by default: one per broker line of ``conformance.broker``
DEFAULT_BROKERS = tuple(
    sorted(
        (b for b, s in BROKERS.items() if s.version in VERSIONS and not s.config),
        key=lambda b: tuple(int(x) for x in BROKERS[b].version.split(".")),
    )
)
#: cases whose verdict depends on the broker's clock against their fixed timestamps
RETIMED_PREFIX = "rec-ts-"
TOPIC_PREFIX = "pg-"


@dataclass
class GoldenResult(CaptureResult):
    #: case -> every difference between the kit's model and the broker
    disagreements: dict[str, list[str]] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------
# what is captured, and how the broker runs


def produce_spec(spec: BrokerSpec) -> BrokerSpec:
    """``spec`` with Kafka's own defaults for the settings the broker model reads from the
    broker configuration (the capture brokers relax them for their old fixed timestamps)."""
    v = broker_version(spec.version)
    defaults = {"message.max.bytes": str(DEFAULT_MAX_MESSAGE_BYTES)}
    if v.timestamp_bounds == "before-after":
        defaults["log.message.timestamp.before.max.ms"] = str(LONG_MAX)
        defaults["log.message.timestamp.after.max.ms"] = str(v.default_after_max_ms)
    return replace(spec, config={**spec.config, **defaults})


def skip_reason(case: ProduceCase, spec: BrokerSpec) -> str | None:
    """Why ``case`` is not captured on ``spec`` (None: it is)."""
    if spec.version not in case.versions:
        return f"applies to Kafka {', '.join(case.versions)} only"
    ibp = spec.config.get("inter.broker.protocol.version")
    if case.inter_broker_protocol_version not in (None, ibp):
        return (
            f"needs inter.broker.protocol.version {case.inter_broker_protocol_version} "
            f"(this broker: {ibp or 'its default'})"
        )
    return None


def retime(records: bytes, shift: int) -> bytes:
    """Every v2 batch of ``records`` with its first and max timestamps moved by ``shift`` ms
    (a timestamp of -1 stays) and the CRC resealed; other bytes as they are."""
    out, pos = bytearray(), 0
    while pos + LOG_OVERHEAD <= len(records):
        (size,) = struct.unpack_from(">i", records, pos + SIZE_OFFSET)
        end = pos + LOG_OVERHEAD + size
        batch = bytearray(records[pos:end])
        if size < 0 or end > len(records) or len(batch) <= MAX_TIMESTAMP_OFFSET + 8:
            break
        if batch[MAGIC_OFFSET] == MAGIC_VALUE_V2:
            for off in (BASE_TIMESTAMP_OFFSET, MAX_TIMESTAMP_OFFSET):
                (ts,) = struct.unpack_from(">q", batch, off)
                if ts != -1:
                    struct.pack_into(">q", batch, off, ts + shift)
            batch = bytearray(seal_v2(batch, length=False))
        out += batch
        pos = end
    return bytes(out + records[pos:])


def _is_transactional(records: bytes) -> bool:
    try:
        return any(getattr(b, "is_transactional", False) for b in Splitter(records, "memory"))
    except Exception:  # noqa: BLE001 - malformed bytes: not a transactional request
        return False


def _chosen(name: str, only: Sequence[str] | None) -> bool:
    return only is None or any(fnmatch.fnmatch(name, g) for g in only)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Stopper:
    """Something with ``stop()`` for ``capture.lifecycle``: closes a proxy at exit/signal."""

    def __init__(self, close: Callable[[], None]) -> None:
        self.stop = close


# ------------------------------------------------------------------------------------------
# the two kinds of case


def send_case(
    case: ProduceCase,
    topic: str,
    proxy: RecordingProxy,
    fetch: bool,
    advertised: tuple[int, int],
    kafka: tuple[int, int],
    address: tuple[str, int] | None = None,
    topic_id: Any = None,
) -> tuple[list[GoldenRequest], bytes | None, dict[str, Any]]:
    """Send each request of ``case`` raw, in order, as a Produce request (its version, or the
    nearest one the broker (``advertised``) and the Kafka line judging it (``kafka``) speak:
    ``produce_wire.produce_version_for``) to ``topic`` through ``proxy`` (``address``: the
    proxy's listener of the partition leader; ``topic_id``: the topic's id, for Produce v13+),
    then fetch
    the partition back from offset 0 (``fetch``); the requests with the answers, the fetched
    records and what the case's provenance says (Produce version replaced, retimed)."""
    meta: dict[str, Any] = {"source": "crafted (conformance.corpus.produce.cases)"}
    version = produce_version_for(case.produce_version, advertised, kafka)
    if version != case.produce_version:
        meta["produceVersionReplaced"] = (
            f"the target does not speak Produce v{case.produce_version} "
            f"(it offers v{advertised[0]}-{advertised[1]}): sent as v{version}"
        )
    shift = 0
    if case.name.startswith(RETIMED_PREFIX):
        shift = _now_ms() - case.now
        meta["retimed"] = {
            "shiftMs": str(shift),
            "reason": "the verdict depends on the broker's clock against the records' "
            "timestamps: every v2 batch's first/max timestamp moved by shiftMs (CRC resealed)",
        }
    client = WireClient(proxy, address=address)
    out: list[GoldenRequest] = []
    try:
        for records in case.requests:
            records = retime(records, shift) if shift else records
            txn = DEFAULT_TRANSACTIONAL_ID if version >= 3 and _is_transactional(records) else None
            sent_at = _now_ms()
            corr, frame, response = client.exchange(
                new_produce_request(topic, records, version, txn, topic_id)
            )
            received_at = _now_ms()
            recorded = [e for e in proxy.exchanges(API_PRODUCE) if e.correlation_id == corr]
            if response is not None:
                if len(recorded) != 1 or recorded[0].response != response:
                    raise RuntimeError("the proxy did not record the Produce exchange")
                frame = recorded[0].request
            txn_sent, _, sent = read_produce_partitions(frame, version)
            if [r for _, _, r in sent] != [records] or txn_sent != txn:
                raise RuntimeError("the recorded request does not hold the records sent")
            out.append(
                _request(
                    records, version, txn, sent_at, response, case.produce_version, received_at
                )
            )
        fetched = fetch_partition(client, topic) if fetch else None
    finally:
        client.close()
    return out, fetched, meta


def coordinator_meta(version: str) -> dict[str, str]:
    """What a 3.6+ broker's transaction verification (KIP-890) hears in a capture: no
    transactional client ever runs there, so ``__transaction_state`` does not exist and
    ``AddPartitionsToTxnManager`` finds no coordinator (the model's ``coordinator``)."""
    if not broker_version(version).transaction_verification:
        return {}
    return {"coordinator": "COORDINATOR_NOT_AVAILABLE"}


def _request(
    records: bytes,
    version: int,
    txn: str | None,
    sent_at: int,
    frame: bytes | None,
    requested: int,
    received_at: int,
) -> GoldenRequest:
    return GoldenRequest(
        records,
        version,
        sent_at,
        txn,
        None if frame is None else read_produce_response(frame, version),
        None,
        received_at,
        frame,
        {"requestedProduceVersion": requested},
    )


def client_cases(spec: BrokerSpec) -> dict[str, tuple[str, dict[str, str], dict[str, Any]]]:
    """The real-client cases on ``spec``: name -> (description, topic configuration,
    kafka-python producer configuration)."""
    import kafka.codec

    def have(name: str) -> bool:  # kafka-python's has_<codec>(): its compression library
        return name == "none" or bool(getattr(kafka.codec, f"has_{name}", lambda: False)())

    version = tuple(int(x) for x in spec.version.split(".")[:3])
    out: dict[str, tuple[str, dict[str, str], dict[str, Any]]] = {}
    for c in CODECS.values():
        if c.since > version or not have(c.name):
            continue
        out[f"client-{c.name}"] = (
            f"kafka-python producer, one batch of 5 records, compression {c.name}",
            {},
            {"compression_type": None if c.id == NONE else c.name, "enable_idempotence": False},
        )
    out["client-idempotent"] = (
        "kafka-python idempotent producer (InitProducerId, sequence 0), one batch",
        {},
        {"compression_type": None, "enable_idempotence": True},
    )
    if have("lz4") and have("zstd"):
        out["client-lz4-to-zstd-topic"] = (
            "kafka-python lz4 batch to compression.type=zstd: the broker recompresses",
            {"compression.type": "zstd"},
            {"compression_type": "lz4", "enable_idempotence": False},
        )
    return out


def _client(
    topic: str, config: dict[str, Any], proxy: RecordingProxy, fetch: bool
) -> tuple[list[GoldenRequest], bytes | None, dict[str, Any]]:
    import kafka
    from kafka import KafkaProducer

    cfg: dict[str, Any] = {
        "acks": "all",
        "linger_ms": 600_000,
        "max_in_flight_requests_per_connection": 1,
        "request_timeout_ms": TIMEOUT_MS,
        "delivery_timeout_ms": 900_000,
        **config,
    }
    sent_at = _now_ms()
    producer = KafkaProducer(bootstrap_servers=proxy.bootstrap, client_id=CLIENT_ID, **cfg)
    try:
        futures = [
            producer.send(
                topic,
                key=b"k%d" % i,
                value=b"value %d " % i + b"abcdefgh" * i,
                headers=[("h", b"x%d" % i)] if i == 2 else None,
                partition=0,
            )
            for i in range(5)
        ]
        producer.flush(timeout=60)
        for f in futures:
            f.get(timeout=60)
    except BaseException:
        producer.close(timeout=0)  # no waiting for a broker that may be gone (Ctrl-C)
        raise
    producer.close(timeout=30)
    received_at = _now_ms()
    out = []
    for ex in proxy.exchanges(API_PRODUCE):
        txn, _, sent = read_produce_partitions(ex.request, ex.api_version)
        parts = [r for _, _, r in sent]
        if len(parts) != 1:
            raise RuntimeError(f"a Produce request with {len(parts)} partitions")
        out.append(
            _request(
                parts[0], ex.api_version, txn, sent_at, ex.response, ex.api_version, received_at
            )
        )
    if not out:
        raise RuntimeError("no Produce request was recorded")
    client = WireClient(proxy)
    try:
        fetched = fetch_partition(client, topic) if fetch else None
    finally:
        client.close()
    shown = {k: v for k, v in sorted(cfg.items())}
    return (
        out,
        fetched,
        {"source": "real client", "producer": {"name": "kafka-python",
                                               "version": kafka.__version__, "config": shown}},
    )  # fmt: skip


# ------------------------------------------------------------------------------------------
# one broker


def capture_golden(
    broker_id: str,
    out_dir: Path,
    *,
    only: Sequence[str] | None = None,
    fetch: bool = True,
    clients: bool = True,
    progress: Status = print,
    command: str | None = None,
) -> GoldenResult:
    """Capture the applicable cases (``only``: globs over case names, any may match) on
    ``broker_id`` into ``out_dir/<broker_id>/`` (replaced), then judge them with the kit's
    model."""
    from conformance.capture.jvm import start_broker

    if broker_id not in BROKERS:
        raise KeyError(f"unknown broker {broker_id!r}; known: {', '.join(BROKERS)}")
    spec = BROKERS[broker_id]
    if spec.version not in VERSIONS:
        raise KeyError(
            f"{broker_id}: the broker model answers for Kafka {', '.join(VERSIONS)} only"
        )
    spec = produce_spec(spec)
    result = GoldenResult(broker_id)
    chosen: list[ProduceCase] = []
    for c in cases():
        if not _chosen(c.name, only):
            continue
        why = skip_reason(c, spec)
        if why is None:
            chosen.append(c)
        else:
            result.skipped[c.name] = why
    extra = {n: v for n, v in (client_cases(spec) if clients else {}).items() if _chosen(n, only)}
    topics = {f"{TOPIC_PREFIX}{c.name}": dict(c.topic) for c in chosen}
    topics |= {f"{TOPIC_PREFIX}{n}": dict(v[1]) for n, v in extra.items()}
    root = Path(out_dir).resolve() / broker_id
    t_start = time.monotonic()
    golden: list[GoldenCase] = []
    workdir = Path(tempfile.mkdtemp(prefix=f"produce-golden-{broker_id}-"))
    progress(f"{broker_id}: starting broker (jvm) in {workdir}")
    try:
        with start_broker(spec, workdir) as broker:
            result.startup_seconds = time.monotonic() - t_start
            progress(f"{broker_id}: up at {broker.bootstrap} in {result.startup_seconds:.1f} s")
            refused = create_topics(broker.bootstrap, topics)
            progress(f"{broker_id}: {len(topics) - len(refused)} topics created")
            host, _, port = broker.bootstrap.rpartition(":")
            with RecordingProxy(host, int(port)) as probe:
                advertised = read_produce_versions(probe)
            kafka_produce = broker_version(spec.version).produce_versions
            todo: list[tuple[str, str, dict[str, str], Callable[[RecordingProxy], Any]]] = [
                (
                    c.name,
                    c.description,
                    dict(c.topic),
                    lambda p, c=c: send_case(
                        c, f"{TOPIC_PREFIX}{c.name}", p, fetch, advertised, kafka_produce
                    ),
                )
                for c in chosen
            ]
            todo += [
                (n, d, t, lambda p, n=n, k=k: _client(f"{TOPIC_PREFIX}{n}", k, p, fetch))
                for n, (d, t, k) in extra.items()
            ]
            for i, (name, description, topic_config, run) in enumerate(todo, 1):
                topic = f"{TOPIC_PREFIX}{name}"
                if topic in refused:
                    result.failed[name] = refused[topic]
                    progress(f"{broker_id}: [{i}/{len(todo)}] {name} FAILED: {refused[topic]}")
                    continue
                t0 = time.monotonic()
                proxy = RecordingProxy(host, int(port))
                stopper = _Stopper(proxy.close)
                lifecycle.register(stopper)
                try:
                    requests, fetched, meta = run(proxy)
                except Exception as exc:  # keep going: report it
                    result.failed[name] = f"{type(exc).__name__}: {exc}"[:2000]
                    progress(f"{broker_id}: [{i}/{len(todo)}] {name} FAILED: {exc}")
                    continue
                finally:
                    proxy.close()
                    lifecycle.unregister(stopper)
                if fetched is not None:
                    stored = stored_by_request(fetched, [r.response for r in requests])
                    requests = [replace(r, stored=s) for r, s in zip(requests, stored)]
                golden.append(
                    GoldenCase(
                        name,
                        description,
                        broker_id,
                        spec.version,
                        topic,
                        topic_config,
                        tuple(requests),
                        spec.config.get("inter.broker.protocol.version"),
                        fetched is not None,
                        fetched,
                        {
                            **meta,
                            "capturedAt": _utc(),
                            "backend": broker.backend,
                            "javaVersion": broker.java_version,
                            "recorded": [
                                "request-<i>.bin: the partition's records, read from the "
                                "Produce request frame the proxy recorded",
                                "response-<i>.bin: the Produce response frame as received",
                            ]
                            + (["fetch.bin: the records of a Fetch v11 from offset 0"]
                               if fetched is not None else []),
                            **coordinator_meta(spec.version),
                        },
                    )
                )  # fmt: skip
                errors = [r.response["errorName"] if r.response else "closed" for r in requests]
                progress(
                    f"{broker_id}: [{i}/{len(todo)}] {name}: {', '.join(errors)} "
                    f"({time.monotonic() - t0:.1f} s)"
                )
            broker_config = dict(getattr(broker, "broker_config", {}) or spec.config)
            java = broker.java_version
            progress(f"{broker_id}: stopping broker")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        result.seconds = time.monotonic() - t_start
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for g in golden:
        write_golden_case(root, g)
        result.captured.append(g.name)
    write_golden_manifest(
        root,
        {
            "broker": {
                "id": broker_id,
                "kafkaVersion": spec.version,
                "mode": spec.mode,
                "backend": "jvm",
                "javaVersion": java,
                "config": broker_config,
                "produceVersionsAdvertised": list(advertised),
            },
            "capturedAt": _utc(),
            "seconds": round(result.seconds, 1),
            "tool": "conformance.capture.produce (the kit's own client, Kafka's definitions of "
            f"{client_protocol().label})",
            "command": command or f"scripts/capture-produce-golden --broker {broker_id}",
            "expectations": "the real broker's answers only (never the kit's model)",
            "cases": result.captured,
            "skipped": result.skipped,
            "failed": result.failed,
        },
    )
    result.disagreements = judge_all(golden, broker_version(spec.version).clients)
    progress(
        f"{broker_id}: {len(result.captured)} captured, {len(result.skipped)} skipped, "
        f"{len(result.failed)} failed, {len(result.disagreements)} disagree with the model, "
        f"{result.seconds:.0f} s"
    )
    return result


def judge_all(golden: Sequence[GoldenCase], clients: str) -> dict[str, list[str]]:
    """Case -> the differences between the kit's model and the broker (a case the model
    cannot judge here says why). Kafka 2.x's zstd is read with its own libzstd, from the
    Kafka 2.8.2 jars (``jvm.kafka_jars.use_kafka2_zstd``)."""
    if clients == "2.8":
        try:
            from conformance.jvm.kafka_jars import use_kafka2_zstd

            use_kafka2_zstd()
        except Exception:  # noqa: BLE001 - the zstd cases say so below
            pass
    out: dict[str, list[str]] = {}
    for g in golden:
        try:
            diffs = judge_golden(g)
        except Exception as exc:  # noqa: BLE001 - reported with the differences
            diffs = [f"{g.broker_id}/{g.name}: not judged: {type(exc).__name__}: {exc}"]
        if diffs:
            out[g.name] = diffs
    return out


# ------------------------------------------------------------------------------------------
# the command

_EPILOG = """\
exit codes:
  0  every applicable case captured (differences from the kit's model are listed, not errors)
  1  a case or a broker failed
  2  usage error, or no Kafka jars for a broker (scripts/fetch-kafka-jars VERSION)
  130 interrupted (Ctrl-C): the broker, proxies and sockets are stopped

examples:
  scripts/capture-produce-golden                       # the three brokers into corpora/
  scripts/capture-produce-golden --broker kafka-3.9.2-kraft
  scripts/capture-produce-golden --broker kafka-4.3.1-kraft --only 'pid-*' --only req-ok \\
      --out /tmp/g
  scripts/capture-produce-golden --broker all --report /tmp/golden-diff.txt

Cases go to OUT/produce-golden/<broker-id>/<case>/ (request-<i>.bin, response-<i>.bin,
fetch.bin, case.json, answer.json) with OUT/produce-golden/<broker-id>/manifest.json.
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="capture-produce-golden",
        description="Send the crafted produce cases and a real client's batches to real Kafka "
        "brokers (JVM processes from Maven Central jars) through the recording proxy; store "
        "the requests, the broker's responses and the stored batches.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--broker",
        default="all",
        metavar="ID|all",
        help=f"broker id or all (default: {', '.join(DEFAULT_BROKERS)})",
    )
    add_out_option(p)
    p.add_argument(
        "--only",
        action="append",
        metavar="GLOB",
        help="only the cases whose name matches (repeatable)",
    )
    p.add_argument("--no-fetch", action="store_true", help="do not fetch stored batches back")
    p.add_argument("--no-client", action="store_true", help="no real-client (kafka-python) cases")
    p.add_argument("--report", type=Path, default=None, help="write model differences here")
    args = p.parse_args(argv)
    ids = list(DEFAULT_BROKERS) if args.broker == "all" else [args.broker]
    for b in ids:
        if b not in BROKERS or BROKERS[b].version not in VERSIONS:
            known = ", ".join(x for x in BROKERS if BROKERS[x].version in VERSIONS)
            print(f"capture-produce-golden: unknown broker {b!r}; known: {known}", file=sys.stderr)
            return 2
    if args.out is None:
        from conformance.corpus.golden import default_root

        args.out = default_root()
    out = args.out / "produce-golden"

    def progress(message: str) -> None:
        print(f"capture-produce-golden: {message}", file=sys.stderr, flush=True)

    from conformance.capture.jvm import BrokerStartError
    from conformance.jvm.kafka_jars import KafkaJarsUnavailable

    status, lines = 0, []
    command = "scripts/capture-produce-golden " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    try:
        for b in ids:
            try:
                r = capture_golden(
                    b,
                    out,
                    only=args.only,
                    fetch=not args.no_fetch,
                    clients=not args.no_client,
                    progress=progress,
                    command=command.strip(),
                )
            except KafkaJarsUnavailable as e:
                v = BROKERS[b].version
                progress(f"{b}: Kafka {v} jars missing ({e}); scripts/fetch-kafka-jars {v}")
                return 2
            except BrokerStartError as e:
                progress(f"{b}: FAILED to start: {e}")
                status = 1
                continue
            if not r.tell_cases(progress):
                status = 1
            for diffs in r.disagreements.values():
                lines += diffs
    except KeyboardInterrupt:
        print("\ncapture-produce-golden: interrupted (broker and proxies stopped)", file=sys.stderr)
        return 130
    for line in lines:
        progress(f"model differs: {line}")
    if args.report is not None:
        args.report.write_text("".join(f"{x}\n" for x in lines))
    progress(f"{len(lines)} differences between the kit's model and the real brokers")
    return status


if __name__ == "__main__":
    sys.exit(main())
