"""The brokers ``check-broker`` judges (its targets), and how each is reached.

==========  =================================================================================
kind        what it is, and how it runs
==========  =================================================================================
kafka       Apache Kafka of a line the broker model answers for (``capture.produce``'s
            ``DEFAULT_BROKERS``: 2.8.2, 3.9.2, 4.3.1): a JVM process from Maven Central jars
            on 127.0.0.1 (``capture.jvm``), with Kafka's own defaults for what the model reads
            from the broker's configuration (``capture.produce.produce_spec``); judged
            against its own line
built-in    an ``[[impl]]`` with ``sides = ["broker"]`` in ``adapters/*/adapter.toml``: built
            on demand into ``.cache/adapters/`` (``harness.registry``), started with ``{port}``
            in its command replaced by a free 127.0.0.1 port (and ``{postgresql}`` by the URL
            of a PostgreSQL server the kit starts, for ``needs = ["postgresql"]``); ready when
            the port answers ApiVersions; stopped with its whole process group
bootstrap   ``--bootstrap HOST:PORT``: a broker that already runs (a staging cluster);
            nothing is started or stopped
==========  =================================================================================
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformance.capture.brokers import BROKERS
from conformance.capture.produce import DEFAULT_BROKERS, produce_spec
from conformance.harness import registry
from conformance.host import ports, sessions
from conformance.host.broker_socket import WIRE_ERRORS, BrokerConnection
from conformance.host.kafka_client import read_bootstrap
from conformance.host.postgres import postgres_server
from conformance.host.progress import Status
from conformance.jvm import runtime
from conformance.jvm.message_defs import client_protocol

__all__ = [
    "BOOTSTRAP",
    "BUILTIN",
    "KAFKA",
    "Target",
    "TargetError",
    "bootstrap_target",
    "known_targets",
    "running",
]

KAFKA, BUILTIN, BOOTSTRAP = "kafka", "built-in", "bootstrap"
#: the ``kafka`` target that is a cluster of several brokers
CLUSTER = "kafka-4.3.1-kraft-cluster"
#: seconds a started target has to answer ApiVersions
READY_SECONDS = 90.0


class TargetError(RuntimeError):
    """A target could not be built, started or reached (the message says why, with the tail
    of its log)."""


@dataclass(frozen=True)
class Target:
    name: str
    kind: str
    description: str
    #: a ``kafka`` target's own Kafka line (judged against it)
    kafka_version: str | None = None
    adapter: registry.Adapter | None = None
    #: a ``bootstrap`` target's address
    bootstrap: str | None = None
    #: what it is, in a few words (the reports' version column)
    version: str = ""
    #: the replication factor the run creates its topics with
    replication: int = 1
    #: a ``kafka`` target's brokers (more than 1: a KRaft cluster, ``capture.cluster``)
    nodes: int = 1
    #: a ``kafka`` target's broker in ``capture.brokers.BROKERS`` (None: its name)
    broker_id: str | None = None


def known_targets() -> dict[str, Target]:
    """The targets the kit can start: the Kafka brokers, then the built-in ones."""
    out = {
        b: Target(b, KAFKA, f"Apache Kafka {BROKERS[b].version} ({BROKERS[b].mode}), JVM process",
                  kafka_version=BROKERS[b].version, version=f"Apache Kafka {BROKERS[b].version}")
        for b in DEFAULT_BROKERS
    }  # fmt: skip
    out[CLUSTER] = Target(
        CLUSTER,
        KAFKA,
        "Apache Kafka 4.3.1: 3 KRaft brokers, RF 3, min.insync.replicas 2, JVM processes",
        kafka_version="4.3.1",
        version="Apache Kafka 4.3.1 (3 brokers)",
        replication=3,
        nodes=3,
        broker_id="kafka-4.3.1-kraft",
    )
    for a in registry.adapters(side="broker"):
        what = f"{a.library} {a.version}: {a.description}"
        out[a.name] = Target(a.name, BUILTIN, what, adapter=a, version=f"{a.library} {a.version}")
    return out


def bootstrap_target(address: str, name: str | None = None) -> Target:
    """A running broker (or cluster) at ``address`` (``HOST:PORT[,HOST:PORT...]``), labelled
    ``name``; ValueError (naming what is wrong) for no such address or a name that is not
    one line of printable text."""
    try:
        read_bootstrap(address)
    except ValueError as exc:
        raise ValueError(f"--bootstrap {ascii(address)}: {exc}; give HOST:PORT") from None
    if name is not None and (not name or len(name) > 100 or not all(c.isprintable() for c in name)):
        raise ValueError(f"--bootstrap NAME {ascii(name)[:120]}: give 1-100 printable characters")
    return Target(
        name or address,
        BOOTSTRAP,
        f"the broker at {address}",
        bootstrap=address,
        version=f"running at {address}",
    )


def answers_api_versions(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether ``host:port`` answers ApiVersions (negotiated as Java's client does, with the
    kit's own client)."""
    try:
        with BrokerConnection(
            (host, port), client_protocol(), timeout=timeout, connect_timeout=timeout
        ) as conn:
            conn.negotiate()
        return True
    except WIRE_ERRORS:
        return False


@contextlib.contextmanager
def running(target: Target, log: Status) -> Iterator[str]:
    """Start ``target`` (a bootstrap one: nothing) for the ``with`` block; yields its
    bootstrap address; everything started is stopped however the block ends."""
    if target.kind == BOOTSTRAP:
        assert target.bootstrap is not None
        yield target.bootstrap
        return
    workdir = Path(tempfile.mkdtemp(prefix=f"check-broker-{target.name}-"))
    try:
        if target.kind == KAFKA:
            from conformance.capture.cluster import start_cluster
            from conformance.capture.jvm import start_broker

            spec = produce_spec(BROKERS[target.broker_id or target.name])
            if target.nodes > 1:
                log(f"{target.name}: starting {target.nodes} brokers (JVM) in {workdir}")
                with start_cluster(spec, workdir, target.nodes) as cluster:
                    log(f"{target.name}: ready in {cluster.startup_seconds:.0f} s")
                    yield cluster.bootstrap
            else:
                log(f"{target.name}: starting (JVM) in {workdir}")
                with start_broker(spec, workdir) as broker:
                    yield broker.bootstrap
        else:
            with _services(target, workdir) as values, _process(target, workdir, values, log) as b:
                yield b
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def _services(target: Target, workdir: Path) -> Iterator[dict[str, str]]:
    """The services a built-in target needs, each running for the block: name -> URL."""
    assert target.adapter is not None
    values: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        for need in target.adapter.needs:
            if need != "postgresql":
                raise TargetError(f"{target.name}: unknown service {need!r} in adapter.toml")
            server = stack.enter_context(postgres_server(runtime.repo_root(), workdir))
            values["postgresql"] = server.url
        yield values


@contextlib.contextmanager
def _process(target: Target, workdir: Path, values: dict[str, str], log: Status) -> Iterator[str]:
    assert target.adapter is not None
    try:
        built = registry.build(target.adapter, log=log)
    except registry.AdapterBuildError as exc:
        raise TargetError(str(exc)) from exc
    port = ports.free_port()
    fills = {"port": str(port), **values}
    argv = [registry.fill(a, fills) for a in built.argv]
    env = {k: registry.fill(v, fills) for k, v in built.env.items()}
    log_path = workdir / f"{target.name}.log"
    log(f"{target.name}: starting on 127.0.0.1:{port} (log {log_path})")
    child = sessions.Child(target.name, argv, env, log_path, cwd=workdir)
    try:
        deadline = time.monotonic() + READY_SECONDS
        while not answers_api_versions("127.0.0.1", port):
            code = child.exit_code()
            if code is not None or time.monotonic() > deadline:
                why = f"exited with {code}" if code is not None else "did not answer ApiVersions"
                tail = sessions.last_lines(child.new_output(), 20)
                raise TargetError(f"{target.name}: {why} within {READY_SECONDS:.0f} s\n{tail}")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        sessions.uninterrupted(lambda: sessions.terminate([child]))
