"""conformance.messages held to Kafka's own generated classes.

``tests/java/MessageOracle.java`` (our program, run by Java's single-file source launcher with
a Kafka version's jars on the classpath) builds, reads and writes messages with Kafka's
generated classes (``FetchRequestData``, ``PartitionRecord``, ``GroupMetadataValue``, ...) and
prints them with their ``JsonConverter``s. Every expectation below is Kafka's answer:

* named samples: messages built through Kafka's setters from a few hand-written field values
  (FetchRequest/FetchResponse at versions before and after flexible versions, with tagged
  fields and real record batches; MetadataResponse; ApiVersionsResponse; FeatureLevelRecord,
  TopicRecord, PartitionRecord, RegisterBrokerRecord, ClientQuotaRecord; OffsetCommitValue,
  GroupMetadataValue, TransactionLogValue) and written by Kafka: we read Kafka's bytes back to
  the same values, write the same bytes from the same values, print Kafka's JSON, and give
  Kafka's verdict on every truncation of them;
* every definition of the jars at every valid version: random messages read by Kafka (its
  rewrite and JSON against ours), their truncations at every byte and single-byte mutations
  (Kafka's exception class and message against ours);
* versions outside a definition's validVersions (the generated code's simplified version
  tests) and write errors (Kafka's JsonConverter reads a message at the highest version,
  which is then written at every version).

One JVM per Kafka version answers all cases.
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import subprocess
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import require_kafka_jars

from conformance.errors import DecodeError
from conformance.messages import (
    Message,
    MessageSchema,
    RawTaggedField,
    Schemas,
    StructSpec,
    read_kafka_uuid,
    read_message,
    read_message_at,
    write_message,
    write_message_json,
)
from conformance.messages.sample import sample_message
from conformance.wire.builder import BatchBuilder

pytestmark = pytest.mark.oracle

KAFKA_VERSIONS = ["2.8.2", "3.9.2", "4.3.1"]
ORACLE = Path(__file__).resolve().parent / "java" / "MessageOracle.java"
TOPIC_ID = "b2Zmc2V0cy10b3BpYy1pZA"
NULL_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


class Seeded:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.r.randint(lo, hi)

    def binary(self, max_size: int) -> bytes:
        return self.r.randbytes(self.r.randint(0, max_size))

    def text(self, max_size: int) -> str:
        planes = (lambda: self.r.randint(32, 126), lambda: self.r.randint(0xE000, 0x10FFFF))
        return "".join(chr(self.r.choice(planes)()) for _ in range(self.r.randint(0, max_size)))


# ------------------------------------------------------------------------------- the oracle


def _classes(jars: list[Path]) -> dict[str, str]:
    """Generated class name -> fully qualified name, from Kafka's jars (a class with a
    ``JsonConverter`` beside it first)."""
    found: dict[str, tuple[bool, str]] = {}
    pattern = re.compile(r"^(.*/(?:generated|message|metadata))/([A-Za-z0-9]+)\.class$")
    for jar in jars:
        if not jar.name.startswith("kafka"):
            continue
        with zipfile.ZipFile(jar) as z:
            names = set(z.namelist())
        for entry in names:
            m = pattern.match(entry)
            if m is None:
                continue
            has_converter = f"{m[1]}/{m[2]}JsonConverter.class" in names
            if m[2] not in found or (has_converter and not found[m[2]][0]):
                found[m[2]] = (has_converter, f"{m[1]}/{m[2]}".replace("/", "."))
    return {k: v for k, (_, v) in found.items()}


def _run_oracle(version: str, lines: list[str]) -> list[dict[str, Any]]:
    from conformance.jvm import kafka_jars, runtime

    try:
        java = runtime.java_executable()
    except runtime.JvmToolMissing as e:  # pragma: no cover
        pytest.skip(str(e))
    jars = kafka_jars.classpath(version)
    proc = subprocess.run(
        [java, "-Xss8m", "-cp", os.pathsep.join(map(str, jars)), str(ORACLE)],
        input="".join(lines),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == len(lines), proc.stderr[-4000:]
    return answers


@dataclass
class Case:
    kind: str  # which test reports it
    op: str  # the oracle's op
    schema: MessageSchema
    version: int
    data: bytes = b""
    text: str = ""  # spec or JSON
    read_version: int = 0
    message: Message | None = None  # what the Java side built, as ours
    expected: Message | None = None  # the values the bytes must read back as


@dataclass
class Outcome:
    checked: Counter[str] = field(default_factory=Counter)
    verdicts: Counter[str] = field(default_factory=Counter)
    mismatches: dict[str, list[str]] = field(default_factory=dict)


def _verdict(case: Case) -> dict[str, Any]:
    """Our answer, in the oracle's terms."""
    out: dict[str, Any] = {}
    message = case.message
    if case.op == "read":
        try:
            message, out["pos"] = read_message_at(case.schema, case.version, case.data)
        except DecodeError as e:
            return {"read_error": e.java_string()}
    assert message is not None
    try:
        out["bytes"] = write_message(case.schema, case.version, message).hex()
    except DecodeError as e:
        out["write_error"] = e.java_string()
    try:
        out["json"] = write_message_json(case.schema, case.version, message)
    except DecodeError as e:
        out["json_error"] = e.java_string()
    return out


def _normal(answer: dict[str, Any]) -> dict[str, Any]:
    """Kafka's answer with NullPointerException's helpful text dropped (JDK 14+ describes
    the null; the kit reports the class)."""
    return {
        k: ("java.lang.NullPointerException" if "NullPointerException" in str(v) else v)
        for k, v in answer.items()
    }


@cache
def _outcome(version: str) -> Outcome:
    require_kafka_jars(version)
    from conformance.jvm import kafka_jars
    from conformance.jvm.message_defs import message_schemas

    schemas = message_schemas(version)
    classes = _classes(kafka_jars.classpath(version))
    cases = _named_cases(schemas) + _every_definition(schemas, version)
    lines = []
    for c in cases:
        cls = classes[c.schema.data_class_name]
        if c.op == "read":
            lines.append(f"read\t{cls}\t{c.version}\t{c.data.hex()}\n")
        elif c.op == "build":
            lines.append(f"build\t{cls}\t{c.version}\t{c.text}\n")
        else:
            lines.append(f"json\t{cls}\t{c.read_version}\t{c.version}\t{c.text}\n")
    outcome = Outcome()
    for case, answer in zip(cases, _run_oracle(version, lines), strict=True):
        kafka = _normal(answer)
        assert "oracle_error" not in kafka, (case.schema.name, case.version, kafka)
        if case.op == "json" and "read_error" in kafka:
            continue  # Kafka's JSON reader refused our JSON (2.x cannot read bytes): no case
        ours = _verdict(case)
        if "json" not in kafka and "json_error" not in kafka:  # no converter (2.x records)
            ours.pop("json", None)
            ours.pop("json_error", None)
        problems = []
        if ours != kafka:
            problems.append(f"kafka {kafka}\n    ours  {ours}")
        if case.expected is not None and "bytes" in kafka:
            back = read_message(case.schema, case.version, bytes.fromhex(kafka["bytes"]))
            if back != case.expected:
                problems.append(f"read back {back!r}\n    built {case.expected!r}")
        outcome.checked[case.kind] += 1
        for key in ("read_error", "write_error", "json_error"):
            if key in kafka:
                outcome.verdicts[
                    f"{case.kind} {key} {re.sub(r'-?[0-9]+', 'N', kafka[key])[:120]}"
                ] += 1
        if "bytes" in kafka:
            outcome.verdicts[f"{case.kind} ok"] += 1
        if problems:
            where = f"{case.schema.name} v{case.version} {case.op} {case.data.hex() or case.text}"
            outcome.mismatches.setdefault(case.kind, []).append(
                where[:300] + "\n    " + "\n    ".join(problems)
            )
    return outcome


def _assert_no_mismatch(version: str, kind: str, at_least: int) -> Outcome:
    outcome = _outcome(version)
    found = outcome.mismatches.get(kind, [])
    assert not found, f"{len(found)} of {outcome.checked[kind]} differ:\n" + "\n".join(found[:8])
    assert outcome.checked[kind] >= at_least, outcome.checked
    return outcome


# ---------------------------------------------------------------------------- named samples


def _records(n: int) -> str:
    builder = BatchBuilder(magic=2, compression="none", base_offset=100)
    for i in range(n):
        builder.append(1_700_000_000_000 + i, b"k%d" % i, b"value-%d" % i, [("h", b"v")])
    return base64.b64encode(builder.build()).decode()


def _spec(struct: StructSpec, version: int, **values: Any) -> dict[str, Any]:
    """The values whose fields this definition has at ``version`` (the samples name fields of
    every Kafka version's definitions)."""
    out = {}
    for name, value in values.items():
        if name == "_unknown":
            out[name] = value
            continue
        try:
            f = struct.field(name)
        except KeyError:
            continue
        if version in f.versions:
            out[name] = value
    return out


def _sub(s: MessageSchema, struct: str, version: int, **values: Any) -> dict[str, Any] | None:
    """A nested struct's values (None where this definition has no such struct)."""
    return _spec(s.structs[struct], version, **values) if struct in s.structs else None


def _fetch_request(s: MessageSchema, v: int) -> dict[str, Any]:
    partitions = [
        _sub(
            s,
            "FetchPartition",
            v,
            Partition=p,
            CurrentLeaderEpoch=5,
            FetchOffset=42 + p,
            LastFetchedEpoch=4,
            LogStartOffset=-1,
            PartitionMaxBytes=1048576,
            ReplicaDirectoryId=TOPIC_ID,
        )
        for p in (0, 7)
    ]
    return _spec(
        s.struct,
        v,
        ClusterId="cluster-é",
        ReplicaId=-1,
        ReplicaState=_sub(s, "ReplicaState", v, ReplicaId=3, ReplicaEpoch=7),
        MaxWaitMs=500,
        MinBytes=1,
        MaxBytes=52428800,
        IsolationLevel=1,
        SessionId=123,
        SessionEpoch=4,
        Topics=[_sub(s, "FetchTopic", v, Topic="orders", TopicId=TOPIC_ID, Partitions=partitions)],
        ForgottenTopicsData=[
            _sub(s, "ForgottenTopic", v, Topic="old", TopicId=NULL_UUID, Partitions=[1, 2])
        ],
        RackId="rack-a",
    )


def _fetch_response(s: MessageSchema, v: int, records: str | None) -> dict[str, Any]:
    aborted = [_sub(s, "AbortedTransaction", v, ProducerId=9, FirstOffset=101)]
    partition = _sub(
        s,
        "PartitionData",
        v,
        PartitionIndex=3,
        ErrorCode=0,
        HighWatermark=102,
        LastStableOffset=101,
        LogStartOffset=0,
        DivergingEpoch=_sub(s, "EpochEndOffset", v, Epoch=2, EndOffset=90),
        CurrentLeader=_sub(s, "LeaderIdAndEpoch", v, LeaderId=1, LeaderEpoch=5),
        AbortedTransactions=aborted if records else None,
        PreferredReadReplica=-1,
        Records=records,
    )
    endpoint = _sub(s, "NodeEndpoint", v, NodeId=1, Host="broker-1", Port=9092, Rack=None)
    spec = _spec(
        s.struct,
        v,
        ThrottleTimeMs=5,
        ErrorCode=0,
        SessionId=77,
        Responses=[
            _sub(
                s,
                "FetchableTopicResponse",
                v,
                Topic="orders",
                TopicId=TOPIC_ID,
                Partitions=[partition],
            )
        ],
        NodeEndpoints=[endpoint],
    )
    if v >= 12 and records is None:
        spec["_unknown"] = [[7, "AQI="], [40, ""]]
    return spec


def _metadata_response(s: MessageSchema, v: int) -> dict[str, Any]:
    broker = "MetadataResponseBroker"
    return _spec(
        s.struct,
        v,
        ThrottleTimeMs=0,
        Brokers=[
            _sub(s, broker, v, NodeId=1, Host="localhost", Port=9092, Rack=None),
            _sub(s, broker, v, NodeId=2, Host="b2", Port=9093, Rack="r2"),
        ],
        ClusterId="cluster",
        ControllerId=1,
        Topics=[
            _sub(
                s,
                "MetadataResponseTopic",
                v,
                ErrorCode=0,
                Name="orders",
                TopicId=TOPIC_ID,
                IsInternal=False,
                Partitions=[
                    _sub(
                        s,
                        "MetadataResponsePartition",
                        v,
                        ErrorCode=0,
                        PartitionIndex=0,
                        LeaderId=1,
                        LeaderEpoch=3,
                        ReplicaNodes=[1, 2],
                        IsrNodes=[1],
                        OfflineReplicas=[2],
                    )
                ],
                TopicAuthorizedOperations=-2147483648,
            )
        ],
        ClusterAuthorizedOperations=-2147483648,
    )


def _api_versions_response(s: MessageSchema, v: int) -> dict[str, Any]:
    return _spec(
        s.struct,
        v,
        ErrorCode=0,
        ApiKeys=[
            _sub(s, "ApiVersion", v, ApiKey=k, MinVersion=0, MaxVersion=m)
            for k, m in ((0, 11), (1, 17), (18, 4))
        ],
        ThrottleTimeMs=0,
        SupportedFeatures=[
            _sub(s, "SupportedFeatureKey", v, Name="metadata.version", MinVersion=1, MaxVersion=21)
        ],
        FinalizedFeaturesEpoch=12,
        FinalizedFeatures=[
            _sub(
                s,
                "FinalizedFeatureKey",
                v,
                Name="metadata.version",
                MaxVersionLevel=21,
                MinVersionLevel=21,
            )
        ],
        ZkMigrationReady=True,
    )


def _register_broker(s: MessageSchema, v: int) -> dict[str, Any]:
    return _spec(
        s.struct,
        v,
        BrokerId=1,
        IsMigratingZkBroker=False,
        IncarnationId=TOPIC_ID,
        BrokerEpoch=2,
        EndPoints=[
            _sub(s, "BrokerEndpoint", v, Name="PLAINTEXT", Host="h", Port=9092, SecurityProtocol=0)
        ],
        Features=[
            _sub(
                s,
                "BrokerFeature",
                v,
                Name="metadata.version",
                MinSupportedVersion=1,
                MaxSupportedVersion=21,
            )
        ],
        Rack=None,
        Fenced=True,
        InControlledShutdown=False,
        LogDirs=[TOPIC_ID],
    )


def _group_metadata(s: MessageSchema, v: int) -> dict[str, Any]:
    return _spec(
        s.struct,
        v,
        protocolType="consumer",
        generation=3,
        protocol="range",
        leader="m-1",
        currentStateTimestamp=1_700_000_000_000,
        members=[
            _sub(
                s,
                "MemberMetadata",
                v,
                memberId="m-1",
                groupInstanceId=None,
                clientId="c",
                clientHost="/127.0.0.1",
                rebalanceTimeout=300000,
                sessionTimeout=45000,
                subscription="AAEAAAABAAZvcmRlcnM=",
                assignment="",
            )
        ],
    )


def _transaction_log(s: MessageSchema, v: int) -> dict[str, Any]:
    return _spec(
        s.struct,
        v,
        ProducerId=1000,
        PreviousProducerId=999,
        NextProducerId=-1,
        ProducerEpoch=3,
        NextProducerEpoch=-1,
        TransactionTimeoutMs=60000,
        TransactionStatus=2,
        TransactionPartitions=[_sub(s, "PartitionsSchema", v, Topic="orders", PartitionIds=[0, 1])],
        TransactionLastUpdateTimestampMs=1_700_000_000_001,
        TransactionStartTimestampMs=1_700_000_000_000,
        ClientTransactionVersion=2,
    )


SAMPLES: dict[str, tuple[list[int], Callable[[MessageSchema, int], list[dict[str, Any]]]]] = {
    "FetchRequest": ([4, 7, 11, 12, 13, 15, 17], lambda s, v: [_fetch_request(s, v)]),
    "FetchResponse": (
        [4, 7, 11, 12, 13, 16],
        lambda s, v: [_fetch_response(s, v, _records(3)), _fetch_response(s, v, None)],
    ),
    "MetadataResponse": ([1, 5, 9, 10, 12], lambda s, v: [_metadata_response(s, v)]),
    "ApiVersionsResponse": ([0, 1, 3, 4], lambda s, v: [_api_versions_response(s, v)]),
    "FeatureLevelRecord": (
        [0],
        lambda s, v: [_spec(s.struct, v, Name="metadata.version", FeatureLevel=21)],
    ),
    "TopicRecord": ([0], lambda s, v: [_spec(s.struct, v, Name="orders", TopicId=TOPIC_ID)]),
    "PartitionRecord": (
        [0, 1, 2],
        lambda s, v: [
            _spec(
                s.struct,
                v,
                PartitionId=0,
                TopicId=TOPIC_ID,
                Replicas=[1, 2, 3],
                Isr=[1, 2],
                RemovingReplicas=[],
                AddingReplicas=[3],
                Leader=1,
                LeaderRecoveryState=1,
                LeaderEpoch=4,
                PartitionEpoch=9,
                Directories=[TOPIC_ID, NULL_UUID, TOPIC_ID],
                EligibleLeaderReplicas=[3],
                LastKnownElr=None,
            )
        ],
    ),
    "RegisterBrokerRecord": ([0, 1, 2, 3, 4], lambda s, v: [_register_broker(s, v)]),
    "ClientQuotaRecord": (
        [0],
        lambda s, v: [
            _spec(
                s.struct,
                v,
                Key=k,
                Value=x,
                Remove=False,
                Entity=[_sub(s, "EntityData", v, EntityType="user", EntityName=None)],
            )
            for k, x in (
                ("producer_byte_rate", 1048576.0),
                ("request_percentage", 0.1),
                ("a", 1e-5),
                ("b", 12345678.9),
                ("c", 1e21),
                ("d", -0.0),
            )
        ],
    ),
    "OffsetCommitValue": (
        [0, 1, 2, 3, 4],
        lambda s, v: [
            _spec(
                s.struct,
                v,
                offset=100,
                leaderEpoch=5,
                metadata='m\n"é\x01',
                commitTimestamp=1_700_000_000_000,
                expireTimestamp=-1,
                topicId=TOPIC_ID,
            )
        ],
    ),
    "GroupMetadataValue": ([0, 1, 2, 3, 4], lambda s, v: [_group_metadata(s, v)]),
    "TransactionLogValue": ([0, 1], lambda s, v: [_transaction_log(s, v)]),
}


def _message_of(struct: StructSpec, spec: dict[str, Any]) -> Message:
    """The sample's values as a Message (built without the codec)."""
    m = Message(struct)
    for name, value in spec.items():
        if name == "_unknown":
            m.unknown_tagged_fields = [RawTaggedField(t, base64.b64decode(d)) for t, d in value]
            continue
        f = struct.field(name)
        m[name] = _value(
            f.struct, f.type.element.kind if f.type.element else f.type.kind, value, f.type.is_array
        )
    return m


def _value(struct: StructSpec | None, kind: str, value: Any, array: bool = False) -> Any:
    if value is None:
        return None
    if array:
        return [_value(struct, kind, item) for item in value]
    if kind == "struct":
        assert struct is not None
        return _message_of(struct, value)
    if kind in ("bytes", "records"):
        return base64.b64decode(value)
    if kind == "uuid":
        return read_kafka_uuid(value)
    if kind == "float64":
        return float(value)
    return value


def _named_cases(schemas: Schemas) -> list[Case]:
    cases = []
    for name, (versions, make) in SAMPLES.items():
        if name not in schemas:
            continue  # e.g. ClientQuotaRecord is QuotaRecord in 2.8
        s = schemas[name]
        for v in versions:
            if v not in s.valid_versions:
                continue
            for spec in make(s, v):
                built = _message_of(s.struct, spec)
                text = json.dumps(spec, ensure_ascii=False)
                cases.append(Case("named", "build", s, v, text=text, message=built, expected=built))
                data = write_message(s, v, built)
                for cut in range(len(data)):
                    cases.append(Case("named truncated", "read", s, v, data[:cut]))
    return cases


# ------------------------------------------------------------------------ every definition


def _strip_unknown(value: Any) -> None:
    if isinstance(value, Message):
        value.unknown_tagged_fields = []
        for v in value.values.values():
            _strip_unknown(v)
    elif isinstance(value, list):
        for v in value:
            _strip_unknown(v)


def _has(schema: MessageSchema, kinds: tuple[str, ...]) -> bool:
    return any(
        f.type.kind in kinds or (f.type.element is not None and f.type.element.kind in kinds)
        for s in (schema.struct, *schema.structs.values())
        for f in s.fields
    )


def _every_definition(schemas: Schemas, kafka_version: str) -> list[Case]:
    cases = []
    for s in schemas.values():
        v = s.valid_versions
        if v.empty:
            continue  # an API Kafka removed (4.x keeps its definition, not its classes)
        rng = random.Random(s.name)
        for version in range(v.lowest, v.highest + 1):
            for seed in (0, 1):
                data = write_message(s, version, sample_message(s, version, Seeded(seed)))
                cases.append(Case("random", "read", s, version, data))
            for _ in range(3):
                mutated = bytearray(data)
                if mutated:
                    mutated[rng.randrange(len(mutated))] = rng.randrange(256)
                cases.append(Case("mutated", "read", s, version, bytes(mutated)))
        data = write_message(s, v.highest, sample_message(s, v.highest, Seeded(2)))
        for cut in range(len(data)):
            cases.append(Case("truncated", "read", s, v.highest, data[:cut]))
        outside = {v.highest + 1, v.highest + 3, v.lowest - 1, -1, 0, 100, 32767, -32768}
        for version in sorted(outside - set(range(v.lowest, v.highest + 1))):
            for at in (v.lowest, v.highest):
                data = write_message(s, at, sample_message(s, at, Seeded(at)))
                cases.append(Case("outside", "read", s, version, data))
        if kafka_version.startswith("2.") or _has(s, ("records", "float64")):
            continue  # 2.x's JSON reader refuses bytes; records and doubles do not survive JSON
        message = sample_message(s, v.highest, Seeded(5))
        _strip_unknown(message)
        text = write_message_json(s, v.highest, message)
        for version in range(v.lowest - 1, v.highest + 2):
            cases.append(
                Case("json", "json", s, version, text=text, read_version=v.highest, message=message)
            )
    return cases


# ------------------------------------------------------------------------------------ tests


@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_named_samples_built_and_written_by_kafka(version: str) -> None:
    outcome = _assert_no_mismatch(version, "named", 30)
    assert outcome.verdicts["named ok"] >= 30


@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_truncated_samples_fail_as_in_kafka(version: str) -> None:
    outcome = _assert_no_mismatch(version, "named truncated", 1500)
    errors = {k for k in outcome.verdicts if k.startswith("named truncated read_error")}
    assert len(errors) >= 3, errors  # underflows, byte arrays, collections at least


@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_every_definition_at_every_version(version: str) -> None:
    _assert_no_mismatch(version, "random", 800)


@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_every_truncation_and_mutation(version: str) -> None:
    _assert_no_mismatch(version, "truncated", 5000)
    outcome = _assert_no_mismatch(version, "mutated", 1000)
    kinds = {k.split(" ", 2)[2] for k in outcome.verdicts if " read_error " in k}
    assert len(kinds) >= 8, kinds  # the reader's whole range of exceptions is exercised


@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_versions_outside_the_definitions(version: str) -> None:
    outcome = _assert_no_mismatch(version, "outside", 1000)
    assert outcome.verdicts["outside ok"] > 100  # the generated code reads them too


@pytest.mark.parametrize("version", ["3.9.2", "4.3.1"])
def test_write_errors_at_every_version(version: str) -> None:
    outcome = _assert_no_mismatch(version, "json", 500)
    assert any("non-default" in k for k in outcome.verdicts), outcome.verdicts
