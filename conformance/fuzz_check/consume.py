"""One consumer hunted through the fake broker: ``fuzz --against IMPL --side consume``.

=============  ===========================================================================
step           how
=============  ===========================================================================
an input       a partition (``inputs.ConsumeInputs``: the consume scenarios' partitions
               and the writer seeds, their batches mutated, their aborted-transactions
               entries dropped, added or shifted, markers with and without entries,
               compaction gaps and empty batches, a cut Fetch response, a split segment,
               either isolation level)
the question   outside the consumer's capabilities it is not asked, as ``check --side
               consume`` decides (``harness.consumer.consume_unsupported_reason``: a
               batch of a magic or codec not declared, a bad checksum where it declares
               ``checks_crc`` false): counted as unsupported
Kafka          Kafka's own ``KafkaConsumer`` (the oracle's ``consume``, in one JVM for the
               hunt) reads the partition through a fake broker of its own; where it stalls
               (its deadline) the input has no verdict (counted as bounded)
the consumer   its ``consume`` command, one process per input, through another fake broker
               serving the same partition; judged as ``check --side consume`` judges it
               (``consume_judgement`` at the level asked); a pass ends the input
confirmation   Kafka's consumer is the reference itself, so every finding is Kafka's
               verdict; a new signature is asked again of both and must repeat (else it is
               counted as unrepeatable, not reported)
minimizing     each segment's batches and bytes (``fuzz.minimize.ddmin_stream``), then
               its aborted-transactions entries and the cut, while both consumers asked
               again still show the signature
grouping       :func:`consume_signature`: what the consumer did instead (stalls, goes on,
               stops, raises), how the offsets it delivered differ (twice, out of order,
               records Kafka's consumer skips, past its last, short of it), or the first
               record field that differs
=============  ===========================================================================

The fake brokers answer an empty Fetch at once (10 ms, not 500: the consumers' behaviour is
the same, only faster). Every process and broker is stopped when the input is judged or the
hunt ends.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance.corpus import consume as corpus
from conformance.fakebroker import FakeBroker, Faults, Served, max_magic
from conformance.fuzz.minimize import ddmin_stream
from conformance.fuzz_check.hunt import ADAPTER, CONSUME_TARGET, Finding, Hunt, shape
from conformance.fuzz_check.inputs import ConsumeInputs, Partition
from conformance.harness import divergences as dv
from conformance.harness.consumer import (
    ConsumeCase,
    LogBatch,
    consume_judgement,
    consume_unsupported_reason,
    log_batches,
)
from conformance.harness.judge import Capabilities
from conformance.harness.process import Exchange, ProcessTable, run_once
from conformance.harness.runner import Implementation
from conformance.jvm.oracle import OracleError, consume_argv
from conformance.jvm.runtime import NoCheckout
from conformance.levels import Verdict
from conformance.messages.schema import Schemas
from conformance.stream.decoder import decode

__all__ = ["ConsumeHunt", "consume_signature"]

#: how long an empty Fetch waits in the hunt's fake brokers
_EMPTY_FETCH_MS = 10
#: Kafka's consumer's deadline per input (it reads a fuzzed partition in well under a second)
_KAFKA_MS = 5_000
#: the consumer's own deadline, as a share of the hunt's per-input timeout
_ADAPTER_SHARE = 0.75
_TIMEOUT = "timeout"
_RAISED = re.compile(r"raised (\S+?): (.*) where (Kafka's consumer delivered every record)$", re.S)
_COUNT = re.compile(r"Kafka's consumer delivered (\d+) records, the adapter (\d+)")
_INDEX = re.compile(r"\[\d+\]")
_CRC = "(stored crc = "


def consume_signature(verdict: Verdict, kafka: Any = None, adapter: Any = None) -> str:
    """A consume verdict's root cause: what the consumer did instead of what Kafka's did
    (raised where Kafka delivered everything: the class and the message's shape; stalls,
    goes on, stops without an error); else the error class that differs; else, where the
    two delivered other offsets (``kafka`` and ``adapter``: the two documents), how
    (:func:`_delivery`); else the first record field that differs (indexes dropped). For an
    ``error``, its reason. Numbers are dropped."""
    if verdict.status == "error":
        return "error: " + shape(verdict.reason.splitlines()[0] if verdict.reason else "")[:160]
    raised = _RAISED.match(verdict.reason)
    if raised:
        message = shape(raised.group(2).splitlines()[0] if raised.group(2) else "")[:120]
        return f"raised {raised.group(1)} ({message}) where {raised.group(3)}"
    if verdict.reason.startswith(("stalls ", "goes on ", "stops without an error ")):
        return shape(verdict.reason)
    paths: dict[str, str] = {}
    for line in verdict.diff:
        if not line.startswith(dv.EVIDENCE):
            path, _, rest = line.partition(": ")
            paths.setdefault(_INDEX.sub("[]", path), rest)
    for path, rest in paths.items():
        if path.startswith("$.error"):
            return f"{path}: {shape(rest)}" if path.endswith(".class") else path
    how = _delivery(_offsets(kafka), _offsets(adapter))
    if how:
        return how
    fields = [p for p in paths if p != "$.records"]
    if fields:
        return fields[0]
    count = _COUNT.search(paths.get("$.records", ""))
    if count:
        fewer = int(count.group(2)) < int(count.group(1))
        return f"delivered {'fewer' if fewer else 'more'} records than Kafka's consumer"
    return shape(verdict.reason)


def _offsets(doc: Any) -> list[int] | None:
    """The offsets a consume document delivered (None: not a document with offsets)."""
    records = doc.get("records") if isinstance(doc, dict) else None
    if not isinstance(records, list):
        return None
    try:
        return [int(r["offset"]) for r in records]
    except (TypeError, KeyError, ValueError):
        return None


def _delivery(kafka: list[int] | None, adapter: list[int] | None) -> str | None:
    """How the offsets a consumer delivered differ from those Kafka's consumer delivered
    (None: the same, or unknown): an offset twice or out of order, records where Kafka's
    consumer delivers none, records it skips (inside its range) or never reaches (past its
    last), records it delivers that the consumer skips, or stopped short of."""
    if kafka is None or adapter is None or kafka == adapter:
        return None
    if len(set(adapter)) < len(adapter):
        return "delivered an offset more than once"
    if adapter != sorted(adapter):
        return "delivered offsets out of order"
    got, want = set(adapter), set(kafka)
    parts: list[str] = []
    extra = got - want
    if extra and not want:
        parts.append("delivered records where Kafka's consumer delivers none")
    elif extra:
        past = min(extra) > max(want)
        parts.append(
            "delivered records past Kafka's consumer's last"
            if past
            else "delivered records Kafka's consumer skips"
        )
    missing = want - got
    if missing:
        short = adapter == kafka[: len(adapter)]
        parts.append(
            "stopped before Kafka's consumer's last record"
            if short
            else "skipped records Kafka's consumer delivers"
        )
    return "; ".join(parts) or None


def _crc_error(log: Sequence[LogBatch]) -> bool:
    """Whether a batch the consumer is served fails its checksum (the kit's reader)."""
    for b in log:
        error = decode(b.data()).to_dict().get("error") or {}
        if _CRC in str(error.get("message") or ""):
            return True
    return False


@dataclass(frozen=True)
class _ConsumeAsked:
    """One partition's question: Kafka's consumer's document, the consumer's exchange, its
    verdict and document."""

    kafka: dict[str, Any]
    exchange: Exchange
    verdict: Verdict
    doc: Any


class ConsumeHunt(Hunt):
    """One consumer (its consume-side capabilities read) hunted with ``inputs``
    (:class:`~conformance.fuzz_check.inputs.ConsumeInputs`); the fake brokers speak
    ``schemas``. Findings are named by the consumer's row name (``<name> consumer``), as
    ``check --side consume`` reports it, and matched to its known divergences so."""

    side = "consume"

    def __init__(
        self,
        impl: Implementation,
        caps: Capabilities,
        settings: Any,
        table: ProcessTable,
        inputs: ConsumeInputs,
        schemas: Schemas,
        known: Sequence[dv.Divergence] = (),
    ) -> None:
        super().__init__(impl, caps, settings, table, inputs, known, persistent=False)
        self.schemas = schemas
        self.row = dv.consumer_name(impl.name)

    # ------------------------------------------------------------------------ one input
    def _served(self, p: Partition) -> Served:
        log = p.log()
        return Served(
            self.schemas,
            corpus.TOPIC,
            0,
            log,
            max_magic=max_magic(log),
            faults=Faults(cut_fetch=p.cut_fetch),
            max_wait_cap_ms=_EMPTY_FETCH_MS,
        )

    def _scenario(
        self, p: Partition, log: Sequence[LogBatch], name: str = "fuzz", description: str = ""
    ) -> corpus.ConsumeScenario:
        return corpus.ConsumeScenario(
            name, description or p.describe(), isolation=p.isolation,
            cut_fetch=p.cut_fetch, crc_error=_crc_error(log),
        )  # fmt: skip

    def _kafka_consume(self, served: Served, isolation: str) -> dict[str, Any] | None:
        if self._oracle is None:
            return None
        self.stats.oracle_calls += 1
        try:
            with FakeBroker(served) as broker:
                return self._oracle.consume(
                    broker.bootstrap, served.topic, 0, isolation=isolation, timeout_ms=_KAFKA_MS
                )
        except (OracleError, NoCheckout, OSError) as exc:
            self._oracle_failed(exc)
            return None

    def ended(self) -> bool:
        """Without Kafka's consumer no input has a verdict: the hunt ends (its report says
        why: :attr:`oracle_problem`)."""
        return self._oracle is None

    def _consume(self, served: Served, isolation: str) -> Exchange:
        s = self.settings
        t0 = time.monotonic()
        with FakeBroker(served) as broker:
            argv = consume_argv(
                broker.bootstrap, served.topic, 0, isolation=isolation,
                timeout_ms=int(s.timeout * 1000 * _ADAPTER_SHARE),
            )  # fmt: skip
            exchange = run_once(
                self.table, [*self.impl.argv, *argv], b"", env=self.impl.env,
                timeout=s.timeout, limit=s.output_limit,
            )  # fmt: skip
        self.stats.adapter_seconds += time.monotonic() - t0
        return exchange

    def _verdict(
        self, kafka: dict[str, Any], exchange: Exchange, log: Sequence[LogBatch]
    ) -> Verdict:
        doc, failure = exchange.document()
        if failure is not None:
            return Verdict("error", failure)
        return consume_judgement(kafka, doc, self.caps, log).verdict(self.settings.level)

    def ask(  # type: ignore[override]
        self, data: Partition, mode: str | None = None, *, count: bool = False
    ) -> _ConsumeAsked | None:
        """``data`` served to Kafka's consumer and to the adapter's (None: not asked:
        outside the capabilities, or Kafka's consumer stalls or cannot run)."""
        try:
            served = self._served(data)
        except ValueError:  # offsets past a long (a mutated base offset): no broker's log
            self.stats.bounded += count
            return None
        log = log_batches(served.log)
        scenario = self._scenario(data, log)
        if consume_unsupported_reason(scenario, log, self.caps) is not None:
            self.stats.unsupported += count
            return None
        kafka = self._kafka_consume(served, data.isolation)
        if kafka is None or (kafka.get("error") or {}).get("class") == _TIMEOUT:
            self.stats.bounded += count  # Kafka's consumer stalls: no verdict to hold it to
            return None
        exchange = self._consume(replace(served, log=data.log()), data.isolation)
        verdict = self._verdict(kafka, exchange, log)
        if verdict.status == "error":
            self.stats.errors += count
        return _ConsumeAsked(kafka, exchange, verdict, exchange.document()[0])

    # --------------------------------------------------------------------------- findings
    def _file(self, data: Partition, asked: _ConsumeAsked) -> bool:  # type: ignore[override]
        sig = consume_signature(asked.verdict, asked.kafka, asked.doc)
        for f in self.findings.values():
            if f.signature == sig:
                f.hits += 1
                return False
        if self._flaky.get(sig, 0) >= self.FLAKY_TRIES:
            self.stats.unrepeatable += 1
            return False
        verdict = asked.verdict
        finding = Finding(
            self.row, ADAPTER, sig, verdict.status, data.isolation, verdict.reason,
            list(verdict.diff), data, data, asked.kafka, None, asked.doc,
            confirmed=True, first_input=self.stats.inputs, target=CONSUME_TARGET,
        )  # fmt: skip
        if not self._still(data, sig):
            self.stats.unrepeatable += 1
            self._flaky[sig] = self._flaky.get(sig, 0) + 1
            return False
        self._minimize_partition(finding)
        self._explain(finding)
        self.findings[finding.id] = finding
        return True

    def _still(self, p: Partition, sig: str, finding: Finding | None = None) -> bool:
        """Whether both consumers, asked ``p``, still show ``sig`` (``finding``: then it takes
        ``p``, Kafka's document and the consumer's)."""
        again = self.ask(p)
        if again is None or again.verdict.status == "pass":
            return False
        if consume_signature(again.verdict, again.kafka, again.doc) != sig:
            return False
        if finding is not None:
            finding.minimized, finding.kafka, finding.adapter = p, again.kafka, again.doc
            finding.reason, finding.diff = again.verdict.reason, list(again.verdict.diff)
        return True

    def _minimize_partition(self, finding: Finding) -> None:
        """Smaller partitions while the signature holds, within the minimizing budget."""
        s = self.settings
        deadline = time.monotonic() + max(
            1.0, min(s.minimize_seconds, self._deadline - time.monotonic())
        )
        p = finding.minimized
        assert isinstance(p, Partition)

        def keep(candidate: Partition) -> bool:
            if time.monotonic() > deadline:
                return False
            self.stats.minimize_executions += 1
            return self._still(candidate, finding.signature, finding)

        for i in range(len(p.segments)):
            if deadline - time.monotonic() <= 0:
                break
            p = self._smaller_segment(p, i, keep, deadline)
        for i, segment in enumerate(p.segments):  # the aborted-transactions entries
            for entry in list(segment.aborted):
                kept = tuple(t for t in p.segments[i].aborted if t is not entry)
                trial = list(p.segments)
                trial[i] = replace(trial[i], aborted=kept)
                candidate = replace(p, segments=tuple(trial))
                if keep(candidate):
                    p = candidate
        if p.cut_fetch is not None and keep(replace(p, cut_fetch=None)):
            p = replace(p, cut_fetch=None)
        if finding.minimized is not p:  # the last kept one is what ``keep`` recorded
            self._still(p, finding.signature, finding)

    def _smaller_segment(
        self, p: Partition, i: int, keep: Callable[[Partition], bool], deadline: float
    ) -> Partition:
        """``p`` with segment ``i``'s bytes minimized (``fuzz.minimize.ddmin_stream``)."""

        def still(data: bytes) -> bool:
            if not data:
                return False
            trial = list(p.segments)
            trial[i] = replace(trial[i], data=data)
            return keep(replace(p, segments=tuple(trial)))

        data = p.segments[i].data
        left = deadline - time.monotonic()
        small = ddmin_stream(data, still, max_tries=self.settings.minimize_tries, seconds=left)
        if small == data:
            return p
        segments = list(p.segments)
        segments[i] = replace(segments[i], data=small)
        return replace(p, segments=tuple(segments))

    # ------------------------------------------------------------------ known divergences
    def learn_known(self, cases: Sequence[Any]) -> int:
        """The signatures of the consumer's known divergences: each consume case an entry
        covers served as the hunt serves its inputs and judged against the case's stored
        document (Kafka's consumer's)."""
        mine = [e for e in self.known if e.about(self.row)]
        asked = 0
        for case in cases:
            if not isinstance(case, ConsumeCase) or not any(
                e.matches(self.row, case.id) for e in mine
            ):
                continue
            served = replace(
                corpus.served(case.root, case.scenario, self.schemas),
                max_wait_cap_ms=_EMPTY_FETCH_MS,
            )
            log = log_batches(served.log)
            if consume_unsupported_reason(case.scenario, log, self.caps) is not None:
                continue
            asked += 1
            expected = case.expected()
            exchange = self._consume(served, case.scenario.isolation)
            verdict = self._verdict(expected, exchange, log)
            if verdict.status == "pass":
                continue
            lines = [x for x in verdict.diff if not x.startswith(dv.EVIDENCE)] or [verdict.reason]
            entries = dv.classify(self.known, self.row, case.id, lines)
            if entries:
                sig = consume_signature(verdict, expected, exchange.document()[0])
                self._known_signatures.setdefault(sig, entries)
        return asked

    def _explain(self, finding: Finding) -> None:
        lines = [x for x in finding.diff if not x.startswith(dv.EVIDENCE)] or [finding.reason]
        finding.known = dv.classify(self.known, self.row, finding.case_id, lines)
        if not finding.known:
            finding.known = list(self._known_signatures.get(finding.signature, []))

    def scenario_of(self, finding: Finding, name: str) -> corpus.ConsumeScenario:
        """The finding's minimized partition as a stored consume scenario named ``name``."""
        p = finding.minimized
        assert isinstance(p, Partition)
        note = f"found by fuzz --against in {finding.impl}: {finding.reason}"
        return self._scenario(p, log_batches(p.log()), name, note[:300])
