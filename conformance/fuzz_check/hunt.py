"""One implementation hunted for differences from Kafka: ``fuzz --against`` / ``--cmd``.

=============  ===========================================================================
step           how
=============  ===========================================================================
an input       ``inputs.Inputs`` (corpus and writer seeds, the structure-aware mutator)
the question   the mode (file for one input in four by its CRC, ``fuzz.differential``;
               memory for an adapter without file semantics) and what the input needs
               (``harness.cases.features``): outside the adapter's capabilities it is
               not asked (counted as unsupported), exactly as ``check`` decides a case;
               nor is an input past the kit's decompression bound, or one on which
               Java would allocate more than 256 MiB first (its verdict then depends
               on the heap: counted as bounded)
two answers    the kit's reference decoder (``fuzz.differential.reference``) and the
               adapter (its persistent ``serve``, or one ``decode`` per input), the
               adapter's judged as ``check`` judges it (``harness.judge.judgement`` at
               the level asked); a pass ends the input
confirmation   a new signature is asked of Kafka's own classes (the Java oracle): where
               Kafka's verdict differs from the reference's the finding is the kit's
               (kind ``kit``), else the adapter is judged again against Kafka's
               document; only a difference that holds there is the adapter's
repeating      the adapter asked the same input again must show the same signature: a
               difference that does not repeat (a timeout under load, a flaky answer)
               is counted as unrepeatable, not reported (``check`` could not reproduce it)
minimizing     ``fuzz.minimize.ddmin_stream`` while the adapter still shows the same
               signature against the reference, then the smallest input confirmed with
               the oracle and the adapter again (else the first input stays)
grouping       one finding per signature (:func:`signature`: the first kind of
               difference, numbers dropped; the failure of an ``error``), however often
               it is hit
=============  ===========================================================================

Whatever the adapter does (hangs, crashes, floods, lies), the input gets a verdict
(``error``) and the run goes on; the adapter's processes belong to the caller's
``ProcessTable`` and are stopped when the hunt ends.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.errors import HEAP_DEPENDENT, Allocations, DecodeError
from conformance.fuzz.differential import bounded, mode_of, normalize_java, reference
from conformance.fuzz.minimize import ddmin_stream
from conformance.fuzz.store import diff_signature
from conformance.fuzz.targets import MAX_LEN
from conformance.fuzz_check.inputs import ConsumeInputs, Inputs
from conformance.harness import divergences as dv
from conformance.harness.cases import Case, case_features, features
from conformance.harness.judge import Capabilities, judgement, unsupported_reason
from conformance.harness.process import Exchange, ProcessTable, Server, run_once
from conformance.harness.runner import Implementation
from conformance.jsondoc import JsonDocument
from conformance.jvm.oracle import OracleError, OracleServer, OracleUnavailable
from conformance.jvm.runtime import NoCheckout
from conformance.levels import DEFAULT_LEVEL, Verdict
from conformance.stream.compare import diff

__all__ = [
    "ADAPTER",
    "CONSUME_TARGET",
    "KIT",
    "STREAM_TARGET",
    "Finding",
    "Hunt",
    "HuntSettings",
    "HuntStats",
    "shape",
    "signature",
]

#: a finding of the implementation hunted, and one of the kit (its reference is not Kafka)
ADAPTER, KIT = "adapter", "kit"
#: what a finding's input is: a record stream (the decode side), a partition (the consume
#: side, ``fuzz_check.consume``)
STREAM_TARGET, CONSUME_TARGET = "stream", "consume"
_DIGITS = re.compile(r"\d+")
_HEX = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-f]{8,}\b")
_INDEX = re.compile(r"\[\d+\]")
_CLASS = re.compile(r'"kafka_exception": "([^"]+)"')


@dataclass(frozen=True)
class HuntSettings:
    """How long and how hard: ``seconds`` (or ``max_inputs``) per implementation, each
    input within ``timeout`` seconds and ``output_limit`` bytes of the adapter's output,
    judged at ``level``; ``minimize_seconds`` per new finding."""

    seconds: float = 60.0
    max_inputs: int | None = None
    seed: int = 0
    max_len: int = MAX_LEN
    timeout: float = 10.0
    output_limit: int = 64 << 20
    level: str = DEFAULT_LEVEL
    minimize_seconds: float = 20.0
    #: tries of the minimizer per finding (each one adapter execution)
    minimize_tries: int = 3000


@dataclass
class Finding:
    """One root cause: every input that showed ``signature``, the smallest one kept (an
    input: the record stream's bytes, or for the consume side an
    ``inputs.Partition``)."""

    impl: str
    kind: str  # ADAPTER, KIT
    signature: str
    status: str  # fail, error (kind ADAPTER); KIT: fail
    mode: str
    reason: str
    diff: list[str]
    data: Any  # the first input that showed it
    minimized: Any
    #: Kafka's document of ``minimized`` (the oracle's), the reference's (None on the
    #: consume side: Kafka's consumer is asked directly), the adapter's
    kafka: dict[str, Any] | None
    ours: dict[str, Any] | None
    adapter: Any
    confirmed: bool
    #: why the oracle could not confirm it (None: it did)
    unconfirmed: str | None = None
    hits: int = 1
    first_input: int = 0
    #: the known divergences that explain it (classes), empty: a new finding
    known: list[dv.Divergence] = field(default_factory=list)
    target: str = STREAM_TARGET

    @property
    def id(self) -> str:
        side = "" if self.target == STREAM_TARGET else f"{self.target}|"
        return hashlib.sha1(f"{side}{self.kind}|{self.signature}".encode()).hexdigest()[:10]

    @property
    def case_id(self) -> str:
        """The id of the finding as a case (``check --corpora`` of its directory)."""
        if self.target == CONSUME_TARGET:
            return f"consume/fuzz-{self.id}"
        return f"regressions/stream/fuzz-{self.id}@{self.mode}"

    @property
    def size(self) -> int:
        """The first input's size in bytes."""
        return _size(self.data)

    @property
    def minimized_size(self) -> int:
        return _size(self.minimized)


def _size(data: Any) -> int:
    return len(data) if isinstance(data, bytes) else int(data.size)


@dataclass
class HuntStats(JsonDocument):
    """What a hunt did: inputs made, asked of the adapter (executions), not asked
    (unsupported, or past the kit's decompression bound), the adapter's errors, the time."""

    inputs: int = 0
    executions: int = 0
    unsupported: int = 0
    bounded: int = 0
    errors: int = 0
    #: new signatures the adapter did not show again when asked the same input
    unrepeatable: int = 0
    oracle_calls: int = 0
    minimize_executions: int = 0
    seconds: float = 0.0
    #: of ``seconds``: making, asking and judging the inputs (not confirming, minimizing)
    loop_seconds: float = 0.0
    #: waiting for the adapter (in the loop and while minimizing)
    adapter_seconds: float = 0.0

    @property
    def per_second(self) -> float:
        """Executions per second of the hunt's own loop: its speed, whatever the findings
        cost to confirm and minimize."""
        return self.executions / self.loop_seconds if self.loop_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "executions": self.executions,
            "executions_per_second": round(self.per_second, 1),
            "unsupported": self.unsupported,
            "bounded": self.bounded,
            "adapter_errors": self.errors,
            "unrepeatable": self.unrepeatable,
            "oracle_calls": self.oracle_calls,
            "minimize_executions": self.minimize_executions,
            "seconds": round(self.seconds, 2),
            "loop_seconds": round(self.loop_seconds, 2),
            "adapter_seconds": round(self.adapter_seconds, 2),
        }


def shape(text: str) -> str:
    """``text`` with its numbers dropped (hex as X, digits as N): what two inputs that
    showed the same root cause share."""
    return _DIGITS.sub("N", _HEX.sub("X", text))


def _classes(rest: str) -> str:
    """``kafka=<class> adapter=<class>`` of an ``$.error`` line (null: no error)."""
    kafka, _, adapter = rest.partition(" adapter=")
    found = [_CLASS.search(side) for side in (kafka, adapter)]
    a, b = (m.group(1) if m else "null" for m in found)
    return f"kafka={a} adapter={b}"


def signature(verdict: Verdict) -> str:
    """A verdict's root cause, as stable as the values allow, from its first kind of
    difference: the outcome (with both error classes), else the error's class or family,
    else where the error happened, else the first differing field in document order
    (indexes dropped; a count of records or batches only when no field differs); for an
    ``error``, its reason. Numbers (positions, batch indexes, sizes) are dropped."""
    if verdict.status == "error":
        return "error: " + shape(verdict.reason.splitlines()[0] if verdict.reason else "")[:160]
    paths: dict[str, str] = {}
    for line in verdict.diff:
        if not line.startswith(dv.EVIDENCE):
            path, _, rest = line.partition(": ")
            paths.setdefault(_INDEX.sub("[]", path), rest)
    if "$.outcome" in paths:
        errors = f"; error {_classes(paths['$.error'])}" if "$.error" in paths else ""
        return f"outcome {paths['$.outcome']}{errors}"
    for path, rest in paths.items():
        if path == "$.error family" or path.endswith(".kafka_exception"):
            return f"{path}: {shape(rest)}"
    if any(p.startswith("$.error.") for p in paths):
        return "$.error at another batch or position"
    fields = [p for p in paths if not p.endswith(("$.batches", ".records"))] or list(paths)
    return fields[0] if fields else shape(verdict.reason)


@dataclass(frozen=True)
class _Asked:
    """One input's question (its mode, the reference's document) and the adapter's answer
    (what it gave, judged, and its document)."""

    mode: str
    ours: dict[str, Any]
    exchange: Exchange
    verdict: Verdict
    doc: Any


class Hunt:
    """One implementation (its capabilities read, ``Implementation`` named) hunted under
    ``settings`` with ``inputs``; :meth:`run` fills :attr:`findings` and :attr:`stats`.
    ``known``: the known divergences, which a finding's case id (:attr:`Finding.case_id`) and
    lines may match, or the signature of a case they explain (:meth:`learn_known`).
    ``persistent``: ask the adapter's ``serve`` when its capabilities declare one."""

    #: the side of ``check`` whose judgement it applies
    side = "decode"
    #: a signature that did not repeat this often is not confirmed again
    FLAKY_TRIES = 3

    def __init__(
        self,
        impl: Implementation,
        caps: Capabilities,
        settings: HuntSettings,
        table: ProcessTable,
        inputs: Inputs | ConsumeInputs,
        known: Sequence[dv.Divergence] = (),
        *,
        persistent: bool = True,
    ) -> None:
        self.impl, self.caps, self.settings, self.table = impl, caps, settings, table
        self.inputs = inputs
        self.known = list(known)
        self.stats = HuntStats()
        self.findings: dict[str, Finding] = {}
        serve = persistent and caps.persistent
        self._server = Server(table, [*impl.argv, "serve"], impl.env) if serve else None
        self._oracle: OracleServer | None = OracleServer()
        self._oracle_problem: str | None = None
        #: the signature of each known divergence's cases (:meth:`learn_known`)
        self._known_signatures: dict[str, list[dv.Divergence]] = {}
        self._deadline = time.monotonic() + settings.seconds
        #: how often a new signature did not repeat (after _FLAKY_TRIES it is not tried again)
        self._flaky: dict[str, int] = {}

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._oracle is not None:
            self._oracle.close()

    # ------------------------------------------------------------------------ one input
    def _mode(self, data: bytes) -> str:
        mode = mode_of(data)
        return mode if self.caps.file_semantics or mode == "memory" else "memory"

    def _exchange(self, mode: str, data: bytes) -> Exchange:
        s = self.settings
        if self._server is not None:
            return self._server.request(mode, data, timeout=s.timeout, limit=s.output_limit)
        argv = [*self.impl.argv, "decode", "--as", mode]
        return run_once(
            self.table, argv, data, env=self.impl.env, timeout=s.timeout, limit=s.output_limit
        )

    def _judge(self, expected: dict[str, Any], exchange: Exchange, mode: str) -> Verdict:
        doc, failure = exchange.document()
        if failure is not None:
            return Verdict("error", failure)
        return judgement(expected, doc, self.caps, mode).verdict(self.settings.level)

    def ask(self, data: bytes, mode: str | None = None, *, count: bool = False) -> _Asked | None:
        """``data`` through the reference and the adapter (None: not asked: outside the
        capabilities, past the kit's decompression bound or heap-dependent in Java;
        ``count``: counted so)."""
        mode = mode or self._mode(data)
        try:
            with Allocations() as allocations:
                ours = reference(data, mode)
        except DecodeError:  # the reference refuses to decode at all (never expected)
            return None
        # past the kit's decompression bound, or where Java would allocate so much first
        # that its verdict depends on the heap (``fuzz.differential``): not a question
        if bounded(ours) or allocations.largest > HEAP_DEPENDENT:
            self.stats.bounded += count
            return None
        other = reference(data, "memory") if mode == "file" else None
        if unsupported_reason(features(data, ours, mode, other), mode, self.caps) is not None:
            self.stats.unsupported += count
            return None
        t0 = time.monotonic()
        exchange = self._exchange(mode, data)
        self.stats.adapter_seconds += time.monotonic() - t0
        verdict = self._judge(ours, exchange, mode)
        if verdict.status == "error":
            self.stats.errors += count
        return _Asked(mode, ours, exchange, verdict, exchange.document()[0])

    # ----------------------------------------------------------------------- the oracle
    def _kafka(self, data: bytes, mode: str) -> dict[str, Any] | None:
        """Kafka's document of ``data`` (None: the oracle cannot run here; why is kept)."""
        if self._oracle is None:
            return None
        self.stats.oracle_calls += 1
        try:
            return normalize_java(self._oracle.decode(data, mode))
        except (OracleError, NoCheckout, OSError) as exc:
            self._oracle_failed(exc)
            return None

    def _oracle_failed(self, exc: Exception) -> None:
        """The oracle failed with ``exc``: kept as the hunt's oracle problem; a JVM that
        cannot start at all is not tried again, else the next question starts a new one."""
        assert self._oracle is not None
        self._oracle_problem = str(exc).splitlines()[0][:300]
        self._oracle.close()
        gone = isinstance(exc, (NoCheckout, OracleUnavailable))
        self._oracle = None if gone else OracleServer()

    def ended(self) -> bool:
        """Whether the hunt cannot go on (the decode side always can: the reference answers
        without the oracle, whose confirmation is then missing)."""
        return False

    @property
    def oracle_problem(self) -> str | None:
        return self._oracle_problem

    # --------------------------------------------------------------------------- the run
    def run(self, progress: Callable[[Hunt], None] | None = None, every: float = 10.0) -> None:
        """Inputs until the time (or ``max_inputs``) is spent; ``progress`` every ``every``
        seconds."""
        s = self.settings
        inputs = self.inputs
        start = time.monotonic()
        self._deadline = deadline = start + s.seconds
        shown = start
        while time.monotonic() < deadline:
            if s.max_inputs is not None and self.stats.inputs >= s.max_inputs:
                break
            if self.ended():
                break
            t0 = time.monotonic()
            data: Any = inputs.next()  # a stream, or a partition (ConsumeHunt)
            self.stats.inputs += 1
            asked = self.ask(data, count=True)
            self.stats.executions += asked is not None
            self.stats.loop_seconds += time.monotonic() - t0
            if asked is not None and asked.verdict.status != "pass":
                if self._file(data, asked):
                    inputs.keep(data)
            now = time.monotonic()
            self.stats.seconds = now - start
            if progress is not None and now - shown >= every:
                shown = now
                progress(self)
        self.stats.seconds = time.monotonic() - start

    def _file(self, data: bytes, asked: _Asked) -> bool:
        """Count ``data`` under its signature; a new one is confirmed and minimized. True when
        it was new."""
        sig = signature(asked.verdict)
        for f in self.findings.values():
            if f.kind == ADAPTER and f.signature == sig:
                f.hits += 1
                return False
        if self._flaky.get(sig, 0) >= self.FLAKY_TRIES:
            self.stats.unrepeatable += 1
            return False
        kafka = self._kafka(data, asked.mode)
        if kafka is not None and diff(kafka, asked.ours):
            return self._file_kit(data, asked.mode, asked.ours, kafka)
        verdict = asked.verdict
        if kafka is not None:
            verdict = self._judge(kafka, asked.exchange, asked.mode)
            if verdict.status == "pass":  # Kafka's document and the reference's differ only
                return False  # where the comparison does not look
            sig = signature(verdict)
        finding = Finding(
            self.impl.name, ADAPTER, sig, verdict.status, asked.mode, verdict.reason,
            list(verdict.diff), data, data, kafka, asked.ours, asked.doc,
            confirmed=kafka is not None, unconfirmed=None if kafka else self._oracle_problem,
            first_input=self.stats.inputs,
        )  # fmt: skip
        if not self._repeats(finding):
            self.stats.unrepeatable += 1  # asked again, the adapter answered otherwise
            self._flaky[sig] = self._flaky.get(sig, 0) + 1
            return False
        small = self._minimize(data, asked.mode, sig)
        if small != data:
            self._take_smaller(finding, small)
        self._explain(finding)
        self.findings[finding.id] = finding
        return True

    def _take_smaller(self, finding: Finding, small: bytes) -> bool:
        """``small`` replaces the input (True) when Kafka agrees with the reference on it and
        the adapter, asked again, still shows the finding's signature against Kafka's
        document."""
        again = self.ask(small, finding.mode)
        if again is None:
            return False
        kafka = self._kafka(small, finding.mode)
        if kafka is None:
            if finding.confirmed:
                return False
        elif diff(kafka, again.ours):
            return False
        else:
            verdict = self._judge(kafka, again.exchange, finding.mode)
            if verdict.status == "pass" or signature(verdict) != finding.signature:
                return False
            finding.reason, finding.diff = verdict.reason, list(verdict.diff)
        finding.minimized, finding.kafka = small, kafka
        finding.ours, finding.adapter = again.ours, again.doc
        return True

    def _repeats(self, finding: Finding) -> bool:
        """Whether the adapter, asked the finding's input again, shows its signature again
        (a finding that does not repeat, e.g. a timeout under load, is not reported: ``check``
        could not reproduce it)."""
        again = self.ask(finding.minimized, finding.mode)
        if again is None:
            return False
        verdict = self._judge(finding.kafka or again.ours, again.exchange, finding.mode)
        return verdict.status != "pass" and signature(verdict) == finding.signature

    def _minimize(self, data: bytes, mode: str, sig: str) -> bytes:
        s = self.settings

        def still(candidate: bytes) -> bool:
            if not candidate:
                return False
            self.stats.minimize_executions += 1
            asked = self.ask(candidate, mode)
            return (
                asked is not None
                and asked.verdict.status != "pass"
                and signature(asked.verdict) == sig
            )

        # within the hunt's time: a finding made near the end is minimized less
        budget = max(1.0, min(s.minimize_seconds, self._deadline - time.monotonic()))
        return ddmin_stream(data, still, max_tries=s.minimize_tries, seconds=budget)

    def _file_kit(
        self, data: bytes, mode: str, ours: dict[str, Any], kafka: dict[str, Any]
    ) -> bool:
        """The reference differs from Kafka on ``data``: a finding of the kit, whatever the
        adapter said."""
        lines = diff(kafka, ours)
        sig = diff_signature(lines, f"{mode}: ")
        for f in self.findings.values():
            if f.kind == KIT and f.signature == sig:
                f.hits += 1
                return False
        finding = Finding(
            self.impl.name, KIT, sig, "fail", mode,
            "the kit's reference decoder differs from Kafka's classes", lines, data, data,
            kafka, ours, None, confirmed=True, first_input=self.stats.inputs,
        )  # fmt: skip
        self.findings[finding.id] = finding
        return True

    def learn_known(self, cases: Sequence[Case]) -> int:
        """The signatures of the known divergences: every corpus case an entry of ``known``
        covers for this implementation, asked of the adapter and judged against Kafka's
        verdict; a finding with the signature of a case an entry explains is explained by
        it (the same root cause). Returns the number of cases asked."""
        mine = [e for e in self.known if e.about(self.impl.name)]
        asked = 0
        for case in cases:
            if not any(e.matches(self.impl.name, case.id) for e in mine):
                continue
            data, expected = case.data(), case.expected()
            why = unsupported_reason(case_features(case, data, expected), case.mode, self.caps)
            if why is not None:
                continue
            asked += 1
            verdict = self._judge(expected, self._exchange(case.mode, data), case.mode)
            if verdict.status == "pass":
                continue
            lines = [x for x in verdict.diff if not x.startswith(dv.EVIDENCE)] or [verdict.reason]
            entries = dv.classify(self.known, self.impl.name, case.id, lines)
            if entries:
                self._known_signatures.setdefault(signature(verdict), entries)
        return asked

    def _explain(self, finding: Finding) -> None:
        lines = [x for x in finding.diff if not x.startswith(dv.EVIDENCE)] or [finding.reason]
        finding.known = dv.classify(self.known, self.impl.name, finding.case_id, lines)
        if not finding.known:
            finding.known = list(self._known_signatures.get(finding.signature, []))
