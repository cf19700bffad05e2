"""The consumer side of ``check``: real consumers read the consume scenarios
(``corpora/consume/``) through the fake broker, and what they deliver is judged against Kafka's
own ``KafkaConsumer`` (docs/adapter-protocol.md, "The consumer side").

For each scenario the fake broker serves its partition; the adapter runs
``CMD consume --bootstrap HOST:PORT --topic T --partition 0 --from earliest --isolation L
--timeout-ms N`` as one process (the runner's deadline, output limit and process-group kill
apply), and prints one ``kafka-conformance/consume/1`` document. The adapter's capabilities
are read for the consume side (``judge.APPLIES_TO``: its ``consume`` object, else its top
level); the kit reads the served log's batch headers (:func:`log_batches`) to apply them:

============  ===================================================================
rule          verdict
============  ===================================================================
records       the same records in the same order as Kafka's consumer delivered
              (offset, timestamp, timestampType, key, value, headers), but the
              declared ``omits`` (per magic: the magic of the batch holding the
              record's offset); under ``eager`` (a compressed batch) or ``atomic``
              (any batch) the records Kafka's consumer delivered of the batch in
              which it raised may be a prefix, down to none
no error      when Kafka's consumer delivered everything without an exception
an error      when Kafka's consumer raised one, compared at the declared
              ``error_classes`` (``none``: any class), but ``timeout`` (the
              adapter's deadline: the consumer stalled) is "stalls", and no error at
              all "goes on" (more records) or "stops without an error"
unsupported   a scenario whose log holds a batch of a magic or a codec not declared,
              or whose only fault is a checksum error, for an adapter that declares
              ``checks_crc`` false (its library's default)
error         a crash, hang, flood or invalid JSON; for every scenario, capabilities
              that say something invalid (``capabilities: ...``)
============  ===================================================================
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from conformance.broker.fetch import FetchLog
from conformance.codecs import CODEC_IDS, CODECS
from conformance.corpus import consume as corpus
from conformance.corpus import package
from conformance.errors import CorpusError
from conformance.fakebroker import FakeBroker, read_log
from conformance.fileio import read_bytes
from conformance.harness.cases import read_json_file
from conformance.harness.decode import AdapterSide
from conformance.harness.divergences import EVIDENCE, consumer_name
from conformance.harness.judge import (
    CONSUME,
    DELIVERED_KEYS,
    PARTIES,
    Capabilities,
    error_lines,
    leveled,
)
from conformance.harness.process import ProcessTable, run_once
from conformance.harness.report.model import case_document
from conformance.harness.runner import CaseResult, Implementation, Job, Settings
from conformance.harness.runner import judged as judged_result
from conformance.jvm.message_defs import message_schemas
from conformance.jvm.oracle import CONSUME_FORMAT, consume_argv
from conformance.levels import DEFAULT_LEVEL, DELIVERY, JAVA, Judgement, Verdict
from conformance.messages.schema import Schemas
from conformance.stream.compare import diff
from conformance.stream.decoder import decode
from conformance.wire import layout

__all__ = [
    "GROUP",
    "RECORD_KEYS",
    "ConsumeCase",
    "ConsumeRun",
    "ConsumeSide",
    "LogBatch",
    "consume_case",
    "consume_case_documents",
    "consume_unsupported_reason",
    "consume_judgement",
    "judge_consume",
    "log_batches",
    "read_consume_cases",
]

#: the report group of every consume case
GROUP = "consume"
#: what is compared of each delivered record (its home: the capabilities' judge)
RECORD_KEYS = DELIVERED_KEYS
#: the adapter's own deadline, as a share of the runner's (so it reports a stall itself)
_ADAPTER_SHARE = 0.75
_TIMEOUT = "timeout"


@dataclass(frozen=True)
class ConsumeCase:
    id: str
    scenario: corpus.ConsumeScenario
    root: Path

    group = GROUP

    @property
    def description(self) -> str:
        return self.scenario.description

    def expected(self) -> dict[str, Any]:
        return corpus.read_expected(self.root, self.scenario)

    def check_readable(self) -> None:
        """Raise :class:`CorpusError` if the reference document is not a JSON object or the
        partition cannot be served (``cases.check_readable``)."""
        read_json_file(self.root / corpus.CONSUME_DIR / self.scenario.name / "expected.json")
        where = corpus.partition_dir(self.root, self.scenario)
        try:
            read_log(where)
        except (OSError, ValueError) as e:
            raise CorpusError(f"{where}: the partition cannot be served: {e}") from None


def read_consume_cases(root: Path | None = None) -> list[ConsumeCase]:
    """Every scenario of ``<root>/consume`` that has its reference document, the built-in
    ones first, then the stored ones (``root``: the corpora directory, default ``corpora/``
    of the checkout)."""
    root = Path(root) if root is not None else package.corpora_root()
    return [
        ConsumeCase(f"{GROUP}/{s.name}", s, root)
        for s in corpus.every_scenario(root)
        if (root / corpus.CONSUME_DIR / s.name / "expected.json").is_file()
    ]


def consume_case_documents(cases: Sequence[ConsumeCase]) -> dict[str, dict[str, Any]]:
    """The ``cases`` members of a report for consume cases."""
    docs: dict[str, dict[str, Any]] = {}
    for case in cases:
        d = corpus.partition_dir(case.root, case.scenario)
        logs = sorted(d.glob("*.log"))
        head = read_bytes(logs[0]) if logs else b""  # regular files only
        where = d.relative_to(case.root.parent) if d.is_relative_to(case.root.parent) else d
        docs[case.id] = case_document(
            GROUP,
            "consume",
            where.as_posix(),
            f"{case.scenario.description} ({case.scenario.isolation})",
            head,
            sum(p.stat().st_size for p in logs),
            "error" if case.expected().get("error") else "ok",
        )
    return docs


# ------------------------------------------------------------------------------------------
# the served log, as its batch headers say


@dataclass(frozen=True)
class LogBatch:
    """One batch (or v0/v1 entry) of a served log, from its header: its magic, its codec's
    name (None: an id no codec has), the offset of its last record, and where it lies."""

    magic: int
    codec: str | None
    last_offset: int
    source: bytes
    position: int
    size: int

    def data(self) -> bytes:
        return self.source[self.position : self.position + self.size]


def _header(data: bytes, pos: int) -> tuple[int, str | None]:
    """The magic and codec name of the entry at ``pos`` (its header read by ``file_frame``
    before: the bytes are there)."""
    magic = data[pos + layout.MAGIC_OFFSET]
    magic = magic - 256 if magic > 127 else magic  # signed, as file_frame reads it
    if magic >= 2:
        at = pos + layout.ATTRIBUTES_OFFSET + 1  # the low byte of the int16
    else:
        at = pos + layout.LOG_OVERHEAD + layout.MESSAGE_ATTRIBUTES_OFFSET
    if magic > 2 or at >= len(data):
        return magic, None
    codec = CODECS.get(data[at] & layout.COMPRESSION_CODEC_MASK)
    return magic, codec.name if codec is not None else None


def log_batches(log: FetchLog) -> list[LogBatch]:
    """The batches a consumer reading ``log`` from its start is served (those that start below
    its high watermark), from their headers, in offset order; a damaged header ends a
    segment's list, as it ends the leader's reads."""
    out: list[LogBatch] = []
    bound = log.high_watermark if log.high_watermark is not None else log.log_end_offset
    previous = (log.log_start_offset or 0) - 1
    for segment in log.segments:
        found, _ = log.batches(segment)
        for b in found:
            if previous + 1 >= bound:
                return out
            magic, codec = _header(segment.data, b.position)
            out.append(LogBatch(magic, codec, b.last_offset, segment.data, b.position, b.size))
            previous = b.last_offset
    return out


def _batch_at(lasts: list[int], offset: Any) -> int | None:
    """The index of the batch holding ``offset`` (a decimal string) in a log whose batches'
    last offsets are ``lasts``: the first whose last offset is at or after it, as the
    leader's ``translateOffset`` finds it."""
    try:
        value = int(offset)
    except (TypeError, ValueError):
        return None
    i = bisect.bisect_left(lasts, value)
    return i if i < len(lasts) else None


def consume_unsupported_reason(
    scenario: corpus.ConsumeScenario, log: Sequence[LogBatch], caps: Capabilities
) -> str | None:
    """Why a scenario is outside ``caps`` (``None``: the adapter must consume it): a batch of
    a magic or a codec it does not declare in the served ``log``, or a checksum error where
    it declares ``checks_crc`` false."""
    # an invalid magic is not a feature: every consumer must refuse it
    magics = sorted({b.magic for b in log if b.magic in (0, 1, 2)} - caps.magics)
    if magics:
        return f"magic {', '.join(map(str, magics))} not supported (a batch of the served log)"
    needed = {b.codec for b in log if b.codec is not None}
    codecs = [c for c in CODEC_IDS if c in needed - caps.codecs]
    if codecs:
        return f"codec {', '.join(codecs)} not supported (a batch of the served log)"
    if scenario.crc_error and not caps.checks_crc:
        return "Kafka's consumer stops at a checksum error; the adapter declares checks_crc false"
    return None


# ------------------------------------------------------------------------------------------
# the verdict


def _records(
    doc: dict[str, Any], caps: Capabilities, log: Sequence[LogBatch], kafka: list[Any]
) -> list[Any]:
    """The compared part of each record of ``doc``: its :data:`RECORD_KEYS` (those it has:
    a missing key differs from a null one) but the omitted ones, by the magic of the batch
    holding the offset of Kafka's record at that place (``kafka``), else its own."""
    out: list[Any] = []
    lasts = [b.last_offset for b in log]
    for i, record in enumerate(doc.get("records") or []):
        if not isinstance(record, dict):
            out.append(record)
            continue
        ref = kafka[i] if i < len(kafka) and isinstance(kafka[i], dict) else record
        at = _batch_at(lasts, ref.get("offset"))
        omitted = caps.omitted(log[at].magic if at is not None else None)
        out.append({k: record[k] for k in RECORD_KEYS if k in record and k not in omitted})
    return out


def _must_deliver(want: list[Any], log: Sequence[LogBatch], caps: Capabilities) -> int:
    """How many of Kafka's records ``want`` an adapter must deliver where Kafka's consumer
    raised: all, but under ``eager`` (a compressed batch) or ``atomic`` (any batch) not those
    of the batch in which it raised (the batch of its last record, when that batch fails:
    Kafka's own reader, ``conformance.decode``, ends it with an error)."""
    if caps.error_semantics == "streaming" or not want or not isinstance(want[-1], dict):
        return len(want)
    lasts = [b.last_offset for b in log]
    at = _batch_at(lasts, want[-1].get("offset"))
    if at is None or (caps.error_semantics == "eager" and log[at].codec == "none"):
        return len(want)
    if decode(log[at].data()).outcome != "error":  # Kafka raised after this batch
        return len(want)
    inside = 0  # Kafka's last records, those of that batch
    for record in reversed(want):
        if not isinstance(record, dict) or _batch_at(lasts, record.get("offset")) != at:
            break
        inside += 1
    return len(want) - inside


def _diff(want: list[Any], got: list[Any]) -> list[str]:
    """The differences of two record lists: a line for their counts when they differ, then
    each key that differs in a record both have (``stream.compare``'s lines)."""
    lines: list[str] = []
    if len(got) != len(want):
        lines.append(
            f"$.records: Kafka's consumer delivered {len(want)} records, the adapter {len(got)}"
        )
    for i, (w, g) in enumerate(zip(want, got)):
        lines += diff(w, g, f"$.records[{i}]", PARTIES)
    return lines


def _headline(lines: list[str], want: list[Any], got: list[Any]) -> str:
    """One line above the diff: the record counts when they differ, then how many other
    differences there are and where the first is."""
    others = [line for line in lines if not line.startswith("$.records: ")]
    head = ""
    if len(got) != len(want):
        head = f"delivered {len(got)} records where Kafka's consumer delivered {len(want)}"
        if not others:
            return head
        head += "; "
    n, where = len(others), others[0].split(": ", 1)[0]
    what = "other difference" if head else "difference"
    return f"{head}{n} {what}{'s' if n != 1 else ''}, the first at {where}"


def consume_judgement(
    expected: dict[str, Any],
    actual: Any,
    caps: Capabilities | None = None,
    log: Sequence[LogBatch] = (),
) -> Judgement:
    """One consume document against Kafka's consumer's (:func:`_judgement`), with what the
    adapter raised as evidence (``| the adapter raised CLASS: MESSAGE``: shown with the
    difference, never a difference itself)."""
    judgement = _judgement(expected, actual, caps, log)
    error = actual.get("error") if isinstance(actual, dict) else None
    if judgement.error is None and isinstance(error, dict):
        raised = f"{error.get('class')}: {error.get('message')}"
        judgement.evidence.append(f"{EVIDENCE}the adapter raised {raised}"[:_RAISED_SHOWN])
    return judgement


#: the characters of the adapter's error kept as evidence
_RAISED_SHOWN = 500


def _judgement(
    expected: dict[str, Any],
    actual: Any,
    caps: Capabilities | None = None,
    log: Sequence[LogBatch] = (),
) -> Judgement:
    """One consume document against Kafka's consumer's (the rules of the module docstring),
    under the consume-side ``caps`` (default: the protocol's defaults), ``log``: the served
    log's batches (:func:`log_batches`; without them no omits per magic and no
    ``error_semantics`` apply)."""
    if caps is None:
        caps = Capabilities(name="", side=CONSUME)
    if not isinstance(actual, dict) or actual.get("format") != CONSUME_FORMAT:
        return Judgement(error=f"not a {CONSUME_FORMAT} document")
    if not isinstance(actual.get("records"), list):
        return Judgement(error="no records list")
    error = actual.get("error")
    if error is not None and not (isinstance(error, dict) and isinstance(error.get("class"), str)):
        return Judgement(error='error is neither null nor {"class": ..., "message": ...}')
    kafka = list(expected.get("records") or [])
    want, got = _records(expected, caps, log, kafka), _records(actual, caps, log, kafka)
    kafka_error = expected.get("error")
    if kafka_error is None:
        lines = _diff(want, got)
        if error is not None:
            return _failed(
                f"raised {error['class']}: {error.get('message')} where Kafka's consumer "
                f"delivered every record",
                lines,
            )
        return leveled(lines, _level_of, lambda failing: _headline(failing, want, got))
    if error is not None and error["class"] == _TIMEOUT:
        return _failed(
            f"stalls where Kafka's consumer raises {kafka_error['class']}", _diff(want, got)
        )
    if error is None:
        if len(got) > len(want) and got[: len(want)] == want:
            what = f"goes on ({len(got) - len(want)} more records)"
        else:
            what = "stops without an error"
        return _failed(
            f"{what} where Kafka's consumer raises {kafka_error['class']}", _diff(want, got)
        )
    if _must_deliver(want, log, caps) <= len(got) < len(want):
        want = want[: len(got)]  # a prefix of the batch in which Kafka's consumer raised
    lines = error_lines(kafka_error, error, "class", caps.error_classes) + _diff(want, got)
    return leveled(lines, _level_of, lambda failing: _headline(failing, want, got))


def judge_consume(
    expected: dict[str, Any],
    actual: Any,
    caps: Capabilities | None = None,
    log: Sequence[LogBatch] = (),
    level: str = DEFAULT_LEVEL,
) -> Verdict:
    """The verdict of :func:`consume_judgement` at ``level``."""
    return consume_judgement(expected, actual, caps, log).verdict(level)


def _level_of(line: str) -> str:
    """What a consumer's difference breaks: everything it delivers or raises is
    ``delivery``, but Kafka's exact error text (``java``)."""
    return JAVA if line.startswith("$.error.message: ") else DELIVERY


def _failed(reason: str, lines: list[str]) -> Judgement:
    """A consumer that fails whatever the level: ``reason`` (the diff ``lines`` with it, or
    the reason as its one line)."""
    judged = leveled(lines or [reason], lambda _: DELIVERY, lambda _: reason)
    return judged


@dataclass(frozen=True)
class ConsumeRun:
    """One consume case through one adapter: the verdict and the (API key, version) of every
    request the fake broker read from the client, in arrival order."""

    result: CaseResult
    requests: list[tuple[int, int]]


def consume_case(
    impl: Implementation,
    case: ConsumeCase,
    settings: Settings,
    table: ProcessTable,
    schemas: Schemas,
    *,
    caps: Capabilities | None = None,
    version_cap: int | None = None,
    group: str | None = None,
    level: str = DEFAULT_LEVEL,
) -> ConsumeRun:
    """``case`` through ``impl``'s ``consume`` against a fake broker of its own (claiming no
    API version above ``version_cap``, when given; ``group``: the optional ``--group``),
    judged under ``caps``, its consume-side capabilities (without them: the protocol's
    defaults)."""
    if caps is None:
        caps = Capabilities(name=impl.name, side=CONSUME)
    if caps.invalid:
        return ConsumeRun(CaseResult(impl.name, case.id, GROUP, "error", caps.invalid), [])
    served = replace(corpus.served(case.root, case.scenario, schemas), version_cap=version_cap)
    log = log_batches(served.log)
    reason = consume_unsupported_reason(case.scenario, log, caps)
    if reason is not None:
        return ConsumeRun(CaseResult(impl.name, case.id, GROUP, "unsupported", reason), [])
    with FakeBroker(served) as broker:
        argv = consume_argv(
            broker.bootstrap,
            served.topic,
            served.partition,
            isolation=case.scenario.isolation,
            timeout_ms=int(settings.timeout * 1000 * _ADAPTER_SHARE),
            group=group,
        )
        exchange = run_once(
            table,
            [*impl.argv, *argv],
            b"",
            env=impl.env,
            timeout=settings.timeout,
            limit=settings.output_limit,
        )
    requests = list(broker.seen)
    actual, failure = exchange.document()
    if failure is not None:
        result = CaseResult(impl.name, case.id, GROUP, "error", failure)
    else:
        judgement = consume_judgement(case.expected(), actual, caps, log)
        result = judged_result(impl.name, case, judgement, level)
    result.stderr, result.seconds = exchange.stderr, exchange.seconds
    return ConsumeRun(result, requests)


class ConsumeSide(AdapterSide[ConsumeCase]):
    """Consumers over the consume scenarios, each through a fake broker of its own
    (``check --side consume``); a row is named ``<name> consumer`` (beside the library's
    decoder). ``version_cap``: the fake broker claims no API version above it; ``schemas``:
    the message definitions it speaks (default: the kafka-clients jar's, on first use)."""

    name = CONSUME

    def __init__(
        self,
        settings: Settings,
        schemas: Schemas | None = None,
        *,
        version_cap: int | None = None,
        level: str = DEFAULT_LEVEL,
    ) -> None:
        super().__init__(settings, level)
        self.version_cap, self._schemas = version_cap, schemas

    @property
    def schemas(self) -> Schemas:
        if self._schemas is None:  # KafkaJarsUnavailable: the run's error
            self._schemas = message_schemas(corpus.DEFINITIONS, clients_only=True)
        return self._schemas

    def row_name(self, name: str) -> str:
        return consumer_name(name)

    def read_cases(self, corpora: Path) -> list[ConsumeCase]:
        return read_consume_cases(corpora)

    def unsupported(self, case: ConsumeCase, caps: Capabilities) -> str | None:
        served = corpus.served(case.root, case.scenario, self.schemas)
        return consume_unsupported_reason(case.scenario, log_batches(served.log), caps)

    def documents(self, cases: Sequence[ConsumeCase]) -> dict[str, dict[str, Any]]:
        return consume_case_documents(cases)

    def run_case(
        self, env: Any, job: Job[ConsumeCase, Capabilities], table: ProcessTable
    ) -> CaseResult:
        run = consume_case(
            job.impl,
            job.case,
            self.settings,
            table,
            self.schemas,
            caps=job.caps,
            version_cap=self.version_cap,
            level=self.level,
        )
        return run.result
