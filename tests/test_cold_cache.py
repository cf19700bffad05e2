"""First uses from an empty cache, at once (issue 52, 6: a traceback once in the fake broker's
first run on a cold machine, beside a broker target's first start resolving Kafka's jars).

Three processes resolve Kafka 3.9.2's jars into the same empty cache at the same moment (two
``python -m conformance.jvm.kafka_jars classpath 3.9.2`` and the fake broker, which reads its
definitions from them, serving the consume scenario with the most records), while a fourth,
the kit's own client, downloads the ``kafka-clients`` jars of its releases into that cache
(``<cache>/kafka/<version>/clients/``, inside the directory the resolution puts in place) and
then fetches the whole partition from the fake broker. All succeed without a traceback, the
two resolutions print the same jars, the client reads every record Kafka's consumer delivered
(the scenario's reference), and what each first use left in the cache is still there.

Fast and offline: the cache's Maven repository (``<cache>/m2``) is a link to the checkout's,
which holds Kafka 3.9.2 already, and the client's downloads come from it (``file://``); the
kit's own cache entries (``kafka/``) start empty.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from conformance.corpus import consume
from conformance.jvm import runtime

M2 = ROOT / ".cache" / "m2"
VERSION = "3.9.2"
SCENARIO = "many-tiny"

#: the kit's client, first: the kafka-clients jars of its releases downloaded into the cold
#: cache; then the bootstrap address from stdin and the whole partition fetched
CLIENT = """\
import sys
from conformance import decode
from conformance.capture.produce_wire import WireClient, fetch_partition
from conformance.jvm.message_defs import client_protocol
protocol = client_protocol()
host, _, port = sys.stdin.readline().split()[-1].rpartition(":")
client = WireClient(address=(host, int(port)), protocol=protocol)
data = fetch_partition(client, sys.argv[1], 0, whole=True)
client.connection.close()
print(sum(len(b["records"]) for b in decode(data).to_dict()["batches"]))
"""


def _ready() -> str | None:
    """Why the test cannot run here (None: it can)."""
    if shutil.which("mvn") is None or shutil.which("java") is None:
        return "needs java and mvn"
    jar = M2 / "org/apache/kafka/kafka-clients" / VERSION / f"kafka-clients-{VERSION}.jar"
    if not jar.is_file():
        return f"the checkout's Maven repository has no Kafka {VERSION} ({M2})"
    return None


@pytest.mark.skipif(_ready() is not None, reason=str(_ready()))
def test_concurrent_first_uses_from_an_empty_cache(tmp_path: Path) -> None:
    root = tmp_path / "root"  # a checkout whose cache is empty
    root.mkdir()
    for name in ("jvm", "corpora"):
        (root / name).symlink_to(ROOT / name, target_is_directory=True)
    cache = root / ".cache"
    cache.mkdir()
    (cache / "m2").symlink_to(M2, target_is_directory=True)
    env = {
        **os.environ,
        runtime.ROOT_ENV: str(root),
        "KAFKA_CONFORMANCE_MAVEN_URL": M2.as_uri(),
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
    }
    scenario = next(s for s in consume.SCENARIOS if s.name == SCENARIO)
    partition = consume.partition_dir(root / "corpora", scenario)
    topic = partition.name.rpartition("-")[0]
    py = [sys.executable]
    procs: list[subprocess.Popen[str]] = []

    def start(*argv: str, stdin: bool = False) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [*py, *argv],
            cwd=tmp_path,
            env=env,
            text=True,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        procs.append(proc)
        return proc

    # the checkout's repository is shared with other runs: they wait while ours use it
    with runtime.locked(M2.parent / ".m2.lock"):
        try:
            broker = start("-m", "conformance.cli", "fake-broker", "--quiet", str(partition))
            first = start("-m", "conformance.jvm.kafka_jars", "classpath", VERSION)
            second = start("-m", "conformance.jvm.kafka_jars", "classpath", VERSION)
            client = start("-c", CLIENT, topic, stdin=True)
            assert broker.stdout is not None
            line = broker.stdout.readline()  # once its definitions are read
            assert line.startswith("bootstrap "), broker.communicate(timeout=30)[1]
            results = {"client": client.communicate(input=line, timeout=240)}
            results |= {
                name: p.communicate(timeout=240)
                for name, p in (("first", first), ("second", second))
            }
            for name, p in (("first", first), ("second", second), ("client", client)):
                out, err = results[name]
                assert p.returncode == 0, (name, err)
                assert "Traceback" not in err + out, (name, err)
            broker.terminate()
            _, err = broker.communicate(timeout=30)
            assert "Traceback" not in err, err
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
    jars = results["first"][0].split()
    assert jars and jars == results["second"][0].split()
    assert all(Path(j).is_file() and Path(j).stat().st_size > 0 for j in jars)
    want = json.loads((ROOT / "corpora/consume" / SCENARIO / "expected.json").read_text())
    assert int(results["client"][0]) == len(want["records"]) > 0
    # what each first use put in <cache>/kafka/3.9.2/ survives the others
    clients = cache / "kafka" / VERSION / "clients" / f"kafka-clients-{VERSION}.jar"
    assert clients.is_file() and clients.stat().st_size > 0
    assert sorted(p.name for p in (cache / "kafka").iterdir() if p.name.startswith(".")) == [
        ".resolve.lock"
    ]  # no staging or replaced directory left
