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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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
from conformance.harness.process import ProcessTable, run_once
from conformance.harness.report.model import case_document
from conformance.harness.runner import (
    CaseResult,
    Implementation,
    Job,
    Side,
    Stage,
    ask_capabilities,
    judged,
    keep_name,
)
from conformance.host.broker_socket import WIRE_ERRORS, one_line
from conformance.host.progress import Status
from conformance.jsondoc import JsonDocument, read_json
from conformance.jvm.kafka_jars import try_kafka2_zstd
from conformance.levels import DEFAULT_LEVEL, Judgement
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
from conformance.producer_check.scenarios import scenarios
from conformance.stream.splitter import Splitter

__all__ = [
    "DEFAULT_BROKERS",
    "MODEL_BROKERS",
    "ProduceSide",
    "ProducerCapabilities",
    "ProducerCase",
    "ProducerSettings",
    "case_documents",
    "keep_name",
    "producer_cases",
    "read_producer_capabilities",
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
    #: the judgement level (``conformance.levels``): differences above it are findings
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
        why = "`capabilities` printed no JSON object: the protocol's defaults apply"
        return ProducerCapabilities(fallback, produce={}, encode={}, declared=False), why
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
    problem: str | None = None
    if caps.produce is None and caps.encode is None:
        problem = "capabilities declare neither `produce` nor `encode`"
    return caps, problem


@dataclass(frozen=True)
class ProducerCase:
    """A scenario on one broker line (None: an ``encode`` scenario, which needs none)."""

    scenario: Scenario
    broker_id: str | None

    @property
    def id(self) -> str:
        """The report's id: ``encode/<name>``, ``<kafka version>/<name>``."""
        if self.broker_id is None:
            return f"encode/{self.scenario.name}"
        return f"{BROKERS[self.broker_id].version}/{self.scenario.name}"

    @property
    def group(self) -> str:
        if self.broker_id is None:
            return "encode"
        return f"{BROKERS[self.broker_id].version} {self.scenario.group}"


def producer_cases(chosen: Sequence[Scenario], brokers: Sequence[str]) -> list[ProducerCase]:
    """The cases of ``chosen``, in its order: an encode scenario once, a produce scenario on
    each broker of ``brokers`` (the stages run the encode cases first, then broker by
    broker)."""
    return [ProducerCase(s, b) for s in chosen for b in ([None] if s.side == ENCODE else brokers)]


def case_documents(cases: Sequence[ProducerCase]) -> dict[str, dict[str, Any]]:
    """The ``cases`` member of a producer report."""
    return {
        c.id: case_document(
            c.group,
            c.scenario.side,
            "conformance/producer_check/scenarios.py",
            c.scenario.description,
            b"",
            sum(len(r.key or b"") + len(r.value or b"") for r in c.scenario.records),
        )
        for c in cases
    }


def _topic(impl: str, s: Scenario) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"pc.{impl}.{s.name}")[:200]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


_Job = Job[ProducerCase, ProducerCapabilities]


def topic_of(job: _Job) -> str:
    """The topic of an implementation x produce scenario."""
    return _topic(job.impl.name, job.case.scenario)


class _ProxyStopper:
    def __init__(self, proxy: RecordingProxy) -> None:
        self.stop = proxy.close


@dataclass
class _Stage:
    """What the cases of one stage run in: a temporary directory (the plans), the Kafka line
    judging them and, for a broker's stage, the proxy in front of it and the topics it
    refused to create."""

    workdir: Path
    kafka_version: str
    broker_id: str | None = None
    proxy: RecordingProxy | None = None
    refused: dict[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------------------ the run


def capabilities_of(
    table: ProcessTable, impl: Implementation, settings: ProducerSettings
) -> tuple[ProducerCapabilities, str | None]:
    text, failed = ask_capabilities(table, impl, settings.capabilities_timeout)
    try:
        caps, problem = read_producer_capabilities(text, impl.name or impl.argv[0])
    except ProducerCapabilityError as exc:
        # no verdict can rest on capabilities that say something invalid: every scenario of
        # this implementation is an error that names the problem; the row keeps the name
        # the adapter declares, else its command's path (as a valid document's)
        try:
            declared = read_json(text or "")
        except ValueError:
            declared = None
        name = impl.name or (declared.get("name") if isinstance(declared, dict) else "")
        caps = ProducerCapabilities(str(name or impl.argv[0]), declared=False, invalid=str(exc))
        return caps, str(exc)
    return caps, failed or problem


class ProduceSide(Side[ProducerCase, ProducerCapabilities]):
    """Producers and encoders over the scenarios (``check-producer``): the encode scenarios
    first (no broker), then every produce scenario on each broker of ``settings``, each
    broker started once for every implementation."""

    name = PRODUCE
    title = "check-producer"

    def __init__(self, settings: ProducerSettings, log: Status = lambda _: None) -> None:
        self.settings, self.log = settings, log
        self.jobs = settings.jobs

    def capabilities(
        self, impl: Implementation, table: ProcessTable
    ) -> tuple[ProducerCapabilities, str | None]:
        return capabilities_of(table, impl, self.settings)

    def read_cases(self, corpora: Path) -> list[ProducerCase]:
        """Every scenario on every broker of the settings (the scenarios are the kit's own:
        ``corpora`` is not read)."""
        return producer_cases(scenarios(), self.settings.brokers)

    def unsupported(self, case: ProducerCase, caps: ProducerCapabilities) -> str | None:
        return caps.unsupported(case.scenario)

    def documents(self, cases: Sequence[ProducerCase]) -> dict[str, dict[str, Any]]:
        return case_documents(cases)

    def settings_doc(self) -> dict[str, Any]:
        s = self.settings
        return {
            "jobs": s.jobs,
            "timeout": s.timeout or s.grace,
            "output_limit": s.output_limit,
            "level": s.level,
        }

    def stages(self, cases: Sequence[ProducerCase]) -> list[Stage[ProducerCase]]:
        keys = [None, *self.settings.brokers]
        staged = [Stage(k, [c for c in cases if c.broker_id == k], in_turn=False) for k in keys]
        return [st for st in staged if st.cases]

    @contextmanager
    def environment(
        self, stage: Stage[ProducerCase], jobs: Sequence[_Job], table: ProcessTable
    ) -> Iterator[_Stage]:
        workdir = Path(tempfile.mkdtemp(prefix="check-producer-"))
        try:
            if stage.key is None:
                lines = [BROKERS[b].version for b in self.settings.brokers]
                newest = max((v for v in lines if v in VERSIONS), default=max(VERSIONS))
                yield _Stage(workdir, newest)
            else:
                with self._broker(stage.key, jobs, workdir) as on:
                    yield on
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    @contextmanager
    def _broker(self, broker_id: str, jobs: Sequence[_Job], workdir: Path) -> Iterator[_Stage]:
        """The broker started, the jobs' topics created, a recording proxy in front of it
        (the ``disconnect-after-produce`` fault armed for the topics that ask for it); all
        stopped at the end."""
        settings, log = self.settings, self.log
        spec = produce_spec(BROKERS[broker_id])
        if spec.version.startswith("2."):
            try_kafka2_zstd(log)
        log(f"{broker_id}: starting the broker ({settings.backend})")
        t0 = time.monotonic()
        with start_broker(spec, workdir / broker_id, settings.backend) as broker:
            log(f"{broker_id}: up at {broker.bootstrap} in {time.monotonic() - t0:.1f} s")
            refused = create_topics(
                broker.bootstrap,
                {topic_of(j): {} for j in jobs},
                {topic_of(j): j.case.scenario.partitions for j in jobs},
            )
            host, _, port = broker.bootstrap.rpartition(":")
            proxy = RecordingProxy(host, int(port), max_recorded_bytes=1 << 30, max_connections=64)
            stopper = _ProxyStopper(proxy)
            lifecycle.register(stopper)
            try:
                faulty = [topic_of(j) for j in jobs if j.case.scenario.fault == DISCONNECT]
                proxy.drop_response(_disconnect_rule(faulty, proxy))
                yield _Stage(workdir, spec.version, broker_id, proxy, refused)
            finally:
                proxy.close()
                lifecycle.unregister(stopper)
        log(f"{broker_id}: stopped")

    def run_case(self, env: _Stage, job: _Job, table: ProcessTable) -> CaseResult:
        if env.proxy is None:
            return _run_encoder(job, env.workdir, env.kafka_version, table, self.settings)
        refused = env.refused.get(topic_of(job))
        if refused is not None:
            return _result(job, "error", f"kit: {refused}")
        assert env.broker_id is not None
        return _run_producer(
            job, env.kafka_version, env.broker_id, env.proxy, env.workdir, table, self.settings
        )


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
    result = judged(job.impl.name, job.case, judgement, settings.level, seconds=seconds)
    result.stderr = stderr if result.diff else ""
    return result


def _result(
    job: _Job, status: str, reason: str = "", diff: Sequence[str] = (), **kw: Any
) -> CaseResult:
    return CaseResult(job.impl.name, job.case.id, job.case.group, status, reason, list(diff), **kw)


def _plan_file(workdir: Path, job: _Job, plan: dict[str, Any]) -> Path:
    path = workdir / f"{topic_of(job)}.{job.case.broker_id or 'encode'}.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def _run_encoder(
    job: _Job, workdir: Path, kafka_version: str, table: ProcessTable, settings: ProducerSettings
) -> CaseResult:
    s = job.case.scenario
    plan = _plan_file(workdir, job, write_plan(s, topic_of(job)))
    ex = run_once(
        table,
        [*job.impl.argv, "encode", "--plan", str(plan)],
        b"",
        env=job.impl.env,
        timeout=settings.deadline(s),
        limit=settings.output_limit,
    )
    _kept(settings, job, plan, ex.output, ex.stderr)
    failure = ex.failure()
    if failure is not None or ex.output is None:
        return _result(job, "error", failure or "no output", stderr=ex.stderr, seconds=ex.seconds)
    output = ex.output
    return _judged(
        job, settings, ex.seconds, ex.stderr, lambda: judge_encode(s, output, kafka_version)
    )


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
    s, topic = job.case.scenario, topic_of(job)
    plan = _plan_file(workdir, job, write_plan(s, topic, f"kc-{topic}"))
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
    document, failure = ex.document()
    if failure is not None:
        return _result(job, "error", failure, stderr=ex.stderr, seconds=ex.seconds)
    obs = ProduceObservation(
        scenario=s,
        topic=topic,
        kafka_version=kafka_version,
        broker_id=broker_id,
        document=document,
        started_ms=started,
        ended_ms=ended,
        requests=_sent(proxy.exchanges(API_PRODUCE), topic, proxy),
        inter_broker_protocol_version=BROKERS[broker_id].config.get(
            "inter.broker.protocol.version"
        ),
        partitioner=job.caps.partitioner(),
        batching=job.caps.batching(),
    )
    client = WireClient(proxy)
    try:
        for p in range(s.partitions):
            obs.fetched[p] = _fetch(client, proxy, topic, p, s.transaction is not None)
    except WIRE_ERRORS + (OSError, RuntimeError) as exc:
        return _result(
            job, "error", f"kit: cannot fetch {topic}: {one_line(exc)}", seconds=ex.seconds
        )
    finally:
        client.close()
    _kept_wire(settings, job, obs)
    return _judged(job, settings, ex.seconds, ex.stderr, lambda: judge_produce(obs))


def _kept_dir(settings: ProducerSettings, job: _Job) -> Path | None:
    if settings.keep is None:
        return None
    d = settings.keep / keep_name(job.impl.name) / job.case.id
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
        (d / ("batch.bin" if job.case.scenario.side == ENCODE else "result.json")).write_bytes(
            output
        )
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
