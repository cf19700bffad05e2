"""One ``check-producer`` run: brokers, the recording proxy, every adapter over the scenarios.

For each broker of the run (``capture.brokers.BROKERS`` ids; each started once, with Kafka's
own defaults for what the broker model reads, ``capture.produce.produce_spec``), the run
creates one topic per implementation x produce scenario, puts a
:class:`~conformance.capture.proxy.RecordingProxy` in front of the broker (with the
``disconnect-after-produce`` fault armed for the topics whose scenario asks for it), runs each
adapter's ``produce`` (``harness.process``: own session, deadline, output limit, process group
killed), then fetches every partition back through the proxy and judges
(``producer_check.judge``). ``encode`` scenarios need no broker: each encoder runs once per
scenario and the batch is judged against the newest broker line of the run. Everything started
is stopped at the end, on errors and on SIGINT/SIGTERM (``capture.lifecycle``; the adapters'
processes by the caller's ``ProcessTable``, killed before any worker is waited for), and the
run's temporary directory removed.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.broker.versions import VERSIONS
from conformance.capture import lifecycle
from conformance.capture.brokers import BROKERS
from conformance.capture.produce import DEFAULT_BROKERS as GOLDEN_BROKERS
from conformance.capture.produce import produce_spec
from conformance.capture.produce_wire import (
    API_PRODUCE,
    WireClient,
    create_topics,
    fetch_partition,
    read_produce_partitions,
    read_produce_responses,
)
from conformance.capture.proxy import Exchange as WireExchange
from conformance.capture.proxy import RecordingProxy, RequestHeader, topic_names
from conformance.capture.run import start as start_broker
from conformance.codecs import CODECS
from conformance.errors import PartitionerError
from conformance.harness.levels import DEFAULT_LEVEL, Judgement
from conformance.harness.process import ProcessTable, run_once
from conformance.harness.runner import (
    CaseResult,
    Implementation,
    ImplementationRun,
    ask_capabilities,
    keep_name,
    run_parallel,
)
from conformance.host.broker_socket import WIRE_ERRORS, one_line
from conformance.host.progress import Status
from conformance.jsondoc import JsonDocument, read_json
from conformance.jvm.kafka_jars import try_kafka2_zstd
from conformance.partitioners import partitioner
from conformance.producer_check.judge import (
    JAVA_PARTITIONER,
    ProduceObservation,
    SentRequest,
    judge_encode,
    judge_produce,
)
from conformance.producer_check.plan import (
    BATCH_LINGER,
    BATCH_NONE,
    BATCHING,
    DISCONNECT,
    ENCODE,
    NO_SETTING,
    PRODUCE,
    Scenario,
    write_plan,
)
from conformance.stream.splitter import Splitter

__all__ = [
    "DEFAULT_BROKERS",
    "MODEL_BROKERS",
    "case_documents",
    "ProducerCapabilities",
    "ProducerSettings",
    "case_id",
    "keep_name",
    "read_producer_capabilities",
    "run_producers",
]

#: the brokers ``--broker all`` means: one per line the broker model answers for (as
#: ``capture-produce-golden`` captures)
MODEL_BROKERS = GOLDEN_BROKERS
#: the brokers a run uses by default: the newest of them
DEFAULT_BROKERS = MODEL_BROKERS[-1:]
#: seconds to wait for a transaction's markers to reach the partition
MARKER_WAIT_S = 15.0
#: seconds an adapter gets beyond the scenario's own budget (process start, JVM, close)
GRACE_S = 30.0

#: ``(implementation, done, total, counts per status)``, over every implementation
ProgressCallback = Callable[[str, int, int, Counter[str]], None]


@dataclass(frozen=True)
class ProducerSettings:
    brokers: tuple[str, ...] = DEFAULT_BROKERS
    backend: str = "jvm"
    jobs: int = 2
    #: bytes an adapter may print for one scenario
    output_limit: int = 16 << 20
    capabilities_timeout: float = 120.0
    #: extra seconds per adapter run, beyond the scenario's timeout_ms
    grace: float = GRACE_S
    #: the wall-clock limit of one adapter run (None: the scenario's timeout_ms + grace)
    timeout: float | None = None
    #: where to write what crossed the wire, per implementation x scenario (``--keep``)
    keep: Path | None = None
    #: the judgement level (``harness.levels``): differences above it are findings
    level: str = DEFAULT_LEVEL

    def deadline(self, s: Scenario) -> float:
        return self.timeout if self.timeout is not None else s.timeout_ms / 1000 + self.grace


@dataclass(frozen=True)
class ProducerCapabilities(JsonDocument):
    """What a producer adapter declares (``capabilities``: its ``produce`` and ``encode``
    objects); an object missing means that side is not offered."""

    name: str
    version: str = ""
    produce: dict[str, Any] | None = None
    encode: dict[str, Any] | None = None
    declared: bool = True
    #: why the declared capabilities are invalid (every scenario is then an ``error``)
    invalid: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "produce": self.produce,
            "encode": self.encode,
            "declared": self.declared,
            "invalid": self.invalid or None,
        }

    def partitioner(self) -> str:
        return str((self.produce or {}).get("partitioner") or JAVA_PARTITIONER)

    def batching(self) -> str:
        """How the producer puts a plan group in one batch (undeclared: a linger)."""
        return str((self.produce or {}).get("batching") or BATCH_LINGER)

    def unsupported(self, s: Scenario) -> str | None:
        """Why ``s`` is not run on this implementation (None: it is)."""
        if self.invalid:
            return None
        side = self.produce if s.side == PRODUCE else self.encode
        if side is None:
            return f"no {s.side} mode (capabilities declare no {s.side!r} object)"
        needs = s.needs()
        codecs = side.get("codecs", [c.name for c in CODECS.values()])
        if needs["codec"] not in codecs:
            return f"codec {needs['codec']} not supported (codecs: {', '.join(codecs)})"
        # transactions first: a transaction needs idempotence too, and says so less clearly
        for feature in ("transactions", "idempotence", "headers"):
            if needs[feature] and not side.get(feature, True):
                return f"{feature} not supported"
        if needs["batching"] and self.batching() == BATCH_NONE:
            return 'batching not supported (batching "none": no batch call, no linger)'
        return None


#: what a ``produce`` or ``encode`` object of the capabilities may hold (docs/adapter-protocol.md,
#: "Producer side": the same keys on both sides; ``partitioner`` and ``defaults`` are read on
#: the produce side only), and each key's type
_SIDE_KEYS: dict[str, type] = {
    "codecs": list,
    "idempotence": bool,
    "transactions": bool,
    "headers": bool,
    "magics": list,
    "partitioner": str,
    "batching": str,
    "defaults": dict,
    "notes": str,
}


class ProducerCapabilityError(ValueError):
    """A producer adapter's capabilities say something invalid (an unknown key, a key with no
    meaning on its side, a wrong type, an unknown codec or partitioner)."""


def _check_side(side: str, value: dict[str, Any]) -> None:
    for key, v in value.items():
        if key not in _SIDE_KEYS:
            raise ProducerCapabilityError(
                f"capabilities: {side}.{key} is not a capability (known: {', '.join(_SIDE_KEYS)})"
            )
        kind = _SIDE_KEYS[key]
        if v is None:  # null: not declared
            continue
        if not isinstance(v, kind) or (kind is not bool and isinstance(v, bool)):
            raise ProducerCapabilityError(
                f"capabilities: {side}.{key} must be {kind.__name__}, not {v!r}"
            )
    codecs = [c.name for c in CODECS.values()]
    unknown = [c for c in value.get("codecs") or [] if c not in codecs]
    if unknown:
        raise ProducerCapabilityError(
            f"capabilities: {side}.codecs names {unknown!r}; codecs are {', '.join(codecs)}"
        )
    magics = value.get("magics") or [2]
    if 2 not in magics or not set(magics) <= {0, 1, 2}:
        raise ProducerCapabilityError(
            f"capabilities: {side}.magics must hold 2 (producers are judged on v2 batches) "
            f"and no magic but 0, 1, 2, not {magics!r}"
        )
    if value.get("batching") not in (None, *BATCHING):
        raise ProducerCapabilityError(
            f"capabilities: {side}.batching must be one of {', '.join(BATCHING)}, "
            f"not {value['batching']!r}"
        )
    for key in ("linger_ms", "batch_size"):
        v = (value.get("defaults") or {}).get(key)
        if v not in (None, NO_SETTING) and (type(v) is not int or v < 0):
            raise ProducerCapabilityError(
                f"capabilities: {side}.defaults.{key} must be a number of "
                f"{'ms' if key == 'linger_ms' else 'bytes'} >= 0 or {NO_SETTING!r} (the library "
                f"has no such setting), not {v!r}"
            )
    name = value.get("partitioner")
    if name is not None:
        try:
            partitioner(name)
        except PartitionerError as exc:
            raise ProducerCapabilityError(f"capabilities: {side}.partitioner: {exc}") from None


def read_producer_capabilities(
    text: str | None, fallback: str
) -> tuple[ProducerCapabilities, str | None]:
    """The capabilities in ``text`` (the adapter's ``capabilities`` output), or the protocol's
    defaults (every side, everything supported) and why. Raises
    :class:`ProducerCapabilityError` for a document that says something invalid."""
    try:
        doc = read_json(text or "")
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        problem = "`capabilities` printed no JSON object: the protocol's defaults apply"
        return ProducerCapabilities(fallback, produce={}, encode={}, declared=False), problem
    sides: dict[str, dict[str, Any] | None] = {}
    for side in (PRODUCE, ENCODE):
        value = doc.get(side)
        if value is not None and not isinstance(value, dict):
            raise ProducerCapabilityError(f"capabilities: {side} must be an object, not {value!r}")
        if value is not None:
            _check_side(side, value)
        sides[side] = value
    caps = ProducerCapabilities(
        str(doc.get("name") or fallback),
        str(doc.get("version", "")),
        sides[PRODUCE],
        sides[ENCODE],
    )
    problem = None
    if caps.produce is None and caps.encode is None:
        problem = "capabilities declare neither `produce` nor `encode`"
    return caps, problem


def case_id(s: Scenario, broker_id: str | None) -> str:
    """The report's id of a scenario: ``encode/<name>``, ``<kafka version>/<name>``."""
    if s.side == ENCODE:
        return f"encode/{s.name}"
    assert broker_id is not None
    return f"{BROKERS[broker_id].version}/{s.name}"


def group_of(s: Scenario, broker_id: str | None) -> str:
    if s.side == ENCODE:
        return "encode"
    assert broker_id is not None
    return f"{BROKERS[broker_id].version} {s.group}"


def case_documents(chosen: Sequence[Scenario], brokers: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The ``cases`` member of a producer report: one document per scenario x broker."""
    docs: dict[str, dict[str, Any]] = {}
    for s in chosen:
        for b in [None] if s.side == ENCODE else list(brokers):
            docs[case_id(s, b)] = {
                "group": group_of(s, b),
                "mode": s.side,
                "size": sum(len(r.key or b"") + len(r.value or b"") for r in s.records),
                "path": "conformance/producer_check/scenarios.py",
                "description": s.description,
                "outcome": "ok",
                "hex": "",
                "hex_truncated": False,
            }
    return docs


def _topic(impl: str, s: Scenario) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"pc.{impl}.{s.name}")[:200]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class _Job:
    impl: Implementation
    caps: ProducerCapabilities
    scenario: Scenario
    broker_id: str | None
    topic: str = ""
    results: list[CaseResult] = field(default_factory=list)


class _ProxyStopper:
    def __init__(self, proxy: RecordingProxy) -> None:
        self.stop = proxy.close


# ------------------------------------------------------------------------------ the run


def capabilities_of(
    table: ProcessTable, impl: Implementation, settings: ProducerSettings
) -> tuple[ProducerCapabilities, str | None]:
    text, failed = ask_capabilities(table, impl, settings.capabilities_timeout)
    try:
        caps, problem = read_producer_capabilities(text, impl.name or impl.argv[0])
    except ProducerCapabilityError as exc:
        # no verdict can rest on capabilities that say something invalid: every scenario of
        # this implementation is an error that names the problem
        name = impl.name or impl.argv[0]
        return ProducerCapabilities(name, declared=False, invalid=str(exc)), str(exc)
    return caps, failed or problem


def run_producers(
    impls: Sequence[Implementation],
    scenarios: Sequence[Scenario],
    settings: ProducerSettings,
    table: ProcessTable,
    *,
    log: Status = lambda _: None,
    progress: ProgressCallback | None = None,
) -> list[ImplementationRun]:
    """Every implementation over every scenario (produce ones on every broker of
    ``settings``); one :class:`ImplementationRun` per implementation, results in scenario
    order."""
    started = time.monotonic()
    if any(BROKERS[b].version.startswith("2.") for b in settings.brokers):
        try_kafka2_zstd(log)
    caps: list[tuple[ProducerCapabilities, str | None]] = [
        capabilities_of(table, impl, settings) for impl in impls
    ]
    names = _unique([impl.name or c.name for impl, (c, _) in zip(impls, caps, strict=True)])
    impls = [Implementation(n, i.argv, i.env, i.source) for n, i in zip(names, impls, strict=True)]
    jobs: list[_Job] = []
    for broker_id in [None, *settings.brokers]:
        for s in scenarios:
            if (s.side == ENCODE) != (broker_id is None):
                continue
            for impl, (c, _) in zip(impls, caps, strict=True):
                jobs.append(_Job(impl, c, s, broker_id, _topic(impl.name, s)))
    total, counts = len(jobs), Counter[str]()
    lock = threading.Lock()

    def finished(job: _Job, result: CaseResult) -> None:
        job.results.append(result)
        with lock:
            counts[result.status] += 1
            if progress is not None:
                progress(job.impl.name, counts.total(), total, counts)

    workdir = Path(tempfile.mkdtemp(prefix="check-producer-"))
    try:
        newest = max(
            (BROKERS[b].version for b in settings.brokers if BROKERS[b].version in VERSIONS),
            default=max(VERSIONS),
        )
        encode_jobs = [j for j in jobs if j.broker_id is None]
        _run_jobs(
            encode_jobs,
            settings,
            table,
            lambda j: _run_encoder(j, workdir, newest, table, settings),
            finished,
        )
        for broker_id in settings.brokers:
            mine = [j for j in jobs if j.broker_id == broker_id]
            if mine:
                _on_broker(broker_id, mine, workdir, table, settings, log, finished)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    seconds = time.monotonic() - started
    runs = []
    for impl, (c, problem) in zip(impls, caps, strict=True):
        results = [r for j in jobs if j.impl.name == impl.name for r in j.results]
        runs.append(
            ImplementationRun(impl, c, problem, results, seconds, side="producer")  # type: ignore[arg-type]
        )
    return runs


def _judged(
    job: _Job,
    settings: ProducerSettings,
    seconds: float,
    stderr: str,
    judge: Callable[[], Judgement],
) -> CaseResult:
    """The judgement of a run at the level asked; a failure of the kit itself is that
    scenario's error, named as the kit's, and the run goes on."""
    try:
        judgement = judge()
    except Exception as exc:  # noqa: BLE001 - one scenario's kit error must not end the run
        return _result(
            job, "error", f"kit error while judging: {type(exc).__name__}: {exc}", seconds=seconds
        )
    status, headline, diff, findings = judgement.verdict(settings.level)
    result = _result(job, status, headline, diff, stderr=stderr if diff else "", seconds=seconds)
    result.findings = findings
    result.level = None if judgement.error is not None else judgement.reached()
    return result


def _unique(names: list[str]) -> list[str]:
    out: list[str] = []
    for n in names:
        out.append(n if n not in out else f"{n}#{len(out) + 1}")
    return out


def _run_jobs(
    jobs: Sequence[_Job],
    settings: ProducerSettings,
    table: ProcessTable,
    work: Callable[[_Job], CaseResult],
    finished: Callable[[_Job, CaseResult], None],
) -> None:
    """``work`` on every job, ``settings.jobs`` at once; on Ctrl-C, SIGTERM or a bug every
    adapter process of ``table`` is killed before the workers are waited for
    (``harness.runner.run_parallel``)."""

    def one(i: int) -> None:
        finished(jobs[i], work(jobs[i]))

    run_parallel(len(jobs), one, settings.jobs, table)


def _result(
    job: _Job, status: str, reason: str = "", diff: Sequence[str] = (), **kw: Any
) -> CaseResult:
    return CaseResult(
        job.impl.name,
        case_id(job.scenario, job.broker_id),
        group_of(job.scenario, job.broker_id),
        status,
        reason,
        list(diff),
        **kw,
    )


def _plan_file(workdir: Path, job: _Job, plan: dict[str, Any]) -> Path:
    path = workdir / f"{job.topic}.{job.broker_id or 'encode'}.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def _run_encoder(
    job: _Job, workdir: Path, kafka_version: str, table: ProcessTable, settings: ProducerSettings
) -> CaseResult:
    if job.caps.invalid:
        return _result(job, "error", job.caps.invalid)
    why = job.caps.unsupported(job.scenario)
    if why:
        return _result(job, "unsupported", why)
    plan = _plan_file(workdir, job, write_plan(job.scenario, job.topic))
    ex = run_once(
        table,
        [*job.impl.argv, "encode", "--plan", str(plan)],
        b"",
        env=job.impl.env,
        timeout=settings.deadline(job.scenario),
        limit=settings.output_limit,
    )
    _kept(settings, job, plan, ex.output, ex.stderr)
    if ex.output is None:
        return _result(
            job, "error", ex.problem or "no output", stderr=ex.stderr, seconds=ex.seconds
        )
    output = ex.output
    return _judged(
        job,
        settings,
        ex.seconds,
        ex.stderr,
        lambda: judge_encode(job.scenario, output, kafka_version),
    )


def _on_broker(
    broker_id: str,
    jobs: list[_Job],
    workdir: Path,
    table: ProcessTable,
    settings: ProducerSettings,
    log: Status,
    finished: Callable[[_Job, CaseResult], None],
) -> None:
    spec = produce_spec(BROKERS[broker_id])
    runnable: list[_Job] = []
    for job in jobs:
        why = job.caps.unsupported(job.scenario)
        if job.caps.invalid:
            finished(job, _result(job, "error", job.caps.invalid))
        elif why:
            finished(job, _result(job, "unsupported", why))
        else:
            runnable.append(job)
    if not runnable:
        return
    log(f"{broker_id}: starting the broker ({settings.backend})")
    t0 = time.monotonic()
    with start_broker(spec, workdir / broker_id, settings.backend) as broker:
        log(f"{broker_id}: up at {broker.bootstrap} in {time.monotonic() - t0:.1f} s")
        refused = create_topics(
            broker.bootstrap,
            {j.topic: {} for j in runnable},
            {j.topic: j.scenario.partitions for j in runnable},
        )
        host, _, port = broker.bootstrap.rpartition(":")
        proxy = RecordingProxy(host, int(port), max_recorded_bytes=1 << 30, max_connections=64)
        stopper = _ProxyStopper(proxy)
        lifecycle.register(stopper)
        try:
            proxy.drop_response(
                _disconnect_rule(
                    [j.topic for j in runnable if j.scenario.fault == DISCONNECT], proxy
                )
            )
            todo = []
            for job in runnable:
                if job.topic in refused:
                    finished(job, _result(job, "error", f"kit: {refused[job.topic]}"))
                else:
                    todo.append(job)
            _run_jobs(
                todo,
                settings,
                table,
                lambda j: _run_producer(
                    j, spec.version, broker_id, proxy, workdir, table, settings
                ),
                finished,
            )
        finally:
            proxy.close()
            lifecycle.unregister(stopper)
    log(f"{broker_id}: stopped")


def _disconnect_rule(
    topics: list[str], proxy: RecordingProxy
) -> Callable[[RequestHeader, bytes], bool]:
    """Drop the answer to the first Produce request of each of ``topics`` (a Produce v13+
    request names its topics by id: resolved through the Metadata the proxy recorded)."""
    pending = set(topics)
    lock = threading.Lock()

    def rule(hdr: RequestHeader, frame: bytes) -> bool:
        if hdr.api_key != API_PRODUCE or not pending:
            return False
        _, _, parts = read_produce_partitions(frame, hdr.api_version)
        names = topic_ids(proxy) if hdr.api_version >= 13 else {}
        with lock:
            for topic, _, _ in parts:
                name = names.get(topic, topic)
                if name in pending:
                    pending.discard(name)
                    return True
        return False

    return rule


def topic_ids(proxy: RecordingProxy) -> dict[str, str]:
    """Topic id (as text) -> name, from the Metadata responses the proxy recorded."""
    return {str(k): v for k, v in topic_names(proxy.recording).items()}


def _run_producer(
    job: _Job,
    kafka_version: str,
    broker_id: str,
    proxy: RecordingProxy,
    workdir: Path,
    table: ProcessTable,
    settings: ProducerSettings,
) -> CaseResult:
    s = job.scenario
    plan = _plan_file(workdir, job, write_plan(s, job.topic, f"kc-{job.topic}"))
    started = _now_ms()
    ex = run_once(
        table,
        [*job.impl.argv, "produce", "--bootstrap", proxy.bootstrap, "--plan", str(plan)],
        b"",
        env=job.impl.env,
        timeout=settings.deadline(s),
        limit=settings.output_limit,
    )
    ended = _now_ms()
    _kept(settings, job, plan, ex.output, ex.stderr)
    if ex.output is None:
        return _result(
            job, "error", ex.problem or "no output", stderr=ex.stderr, seconds=ex.seconds
        )
    try:
        document = read_json(ex.output.decode("utf-8"))
    except ValueError as exc:
        return _result(job, "error", f"invalid JSON: {exc}", stderr=ex.stderr, seconds=ex.seconds)
    obs = ProduceObservation(
        scenario=s,
        topic=job.topic,
        kafka_version=kafka_version,
        broker_id=broker_id,
        document=document,
        started_ms=started,
        ended_ms=ended,
        requests=_sent(proxy.exchanges(API_PRODUCE), job.topic, proxy),
        inter_broker_protocol_version=BROKERS[broker_id].config.get(
            "inter.broker.protocol.version"
        ),
        partitioner=job.caps.partitioner(),
        batching=job.caps.batching(),
    )
    client = WireClient(proxy)
    try:
        for p in range(s.partitions):
            obs.fetched[p] = _fetch(client, proxy, job.topic, p, s.transaction is not None)
    except (*WIRE_ERRORS, OSError, RuntimeError) as exc:
        return _result(
            job, "error", f"kit: cannot fetch {job.topic}: {one_line(exc)}", seconds=ex.seconds
        )
    finally:
        client.close()
    _kept_wire(settings, job, obs)
    return _judged(job, settings, ex.seconds, ex.stderr, lambda: judge_produce(obs))


def _kept_dir(settings: ProducerSettings, job: _Job) -> Path | None:
    if settings.keep is None:
        return None
    d = settings.keep / keep_name(job.impl.name) / case_id(job.scenario, job.broker_id)
    d.mkdir(parents=True, exist_ok=True)
    return d


def _kept(
    settings: ProducerSettings, job: _Job, plan: Path, output: bytes | None, stderr: str
) -> None:
    """``--keep``: the plan, what the adapter printed (``result.json`` for produce,
    ``batch.bin`` for encode) and its stderr's tail."""
    d = _kept_dir(settings, job)
    if d is None:
        return
    shutil.copyfile(plan, d / "plan.json")
    if output is not None:
        (d / ("batch.bin" if job.scenario.side == ENCODE else "result.json")).write_bytes(output)
    (d / "stderr.txt").write_text(stderr, encoding="utf-8")


def _kept_wire(settings: ProducerSettings, job: _Job, obs: ProduceObservation) -> None:
    """``--keep``: every Produce request's records of the topic (``request-<n>-p<partition>.bin``),
    their broker answers and timing (``requests.json``) and each partition as fetched back
    (``fetch-p<partition>.bin``)."""
    d = _kept_dir(settings, job)
    if d is None:
        return
    index = []
    for n, r in enumerate(obs.requests):
        name = f"request-{n}-p{r.partition}.bin"
        (d / name).write_bytes(r.records)
        index.append(
            {
                "records": name,
                "partition": r.partition,
                "produce_version": r.produce_version,
                "acks": r.acks,
                "transactional_id": r.transactional_id,
                "response": r.response,
                "dropped": r.dropped,
                "sent_at_ms": r.sent_at,
                "received_at_ms": r.received_at,
            }
        )
    (d / "requests.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    for p, data in obs.fetched.items():
        (d / f"fetch-p{p}.bin").write_bytes(data)


def _fetch(
    client: WireClient, proxy: RecordingProxy, topic: str, partition: int, transactional: bool
) -> bytes:
    """The partition from offset 0; for a transaction, fetched again (for at most
    :data:`MARKER_WAIT_S`) until it ends in a control batch: the coordinator writes the
    markers after the producer's commit or abort has returned."""
    deadline = time.monotonic() + MARKER_WAIT_S
    while True:
        data = fetch_partition(client, topic, partition, whole=True)
        batches = list(Splitter(data, "memory"))
        if not transactional or not batches or time.monotonic() > deadline:
            return data
        if getattr(batches[-1], "is_control", False):
            return data
        time.sleep(0.2)


def _sent(exchanges: list[WireExchange], topic: str, proxy: RecordingProxy) -> list[SentRequest]:
    """The requests (one entry per partition) that carried records for ``topic``, in the order
    the broker answered them."""
    ids: dict[str, str] | None = None
    out: list[SentRequest] = []
    for ex in exchanges:
        try:
            txn, acks, parts = read_produce_partitions(ex.request, ex.api_version)
            answers = read_produce_responses(ex.response, ex.api_version)
        except Exception:  # noqa: BLE001 - a frame the definitions cannot read: not ours to judge
            continue
        if ex.api_version >= 13 and ids is None:
            ids = topic_ids(proxy)
        for t, partition, records in parts:
            name = (ids or {}).get(t, t) if ex.api_version >= 13 else t
            if name != topic:
                continue
            out.append(
                SentRequest(
                    partition=partition,
                    records=records,
                    produce_version=ex.api_version,
                    acks=acks,
                    transactional_id=txn,
                    response=answers.get((t, partition)),
                    sent_at=ex.sent_at_ms,
                    received_at=ex.received_at_ms,
                    dropped=ex.dropped,
                )
            )
    return out
