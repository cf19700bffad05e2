"""The :class:`Scenario` type, the registry (:data:`SCENARIOS`), the shared constants
(fixed timestamps, topic configs, non-determinism notes) and the helpers every scenario uses.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.capture import BrokerSpec, RunningBroker
from conformance.codecs import CODEC_IDS

#: Fixed CreateTime of the first record of every scenario (2023-11-14T22:13:20Z).
T0 = 1_700_000_000_000

MESSAGE_FORMAT = {0: "0.9.0", 1: "0.10.2"}
KP_API_VERSION: dict[int, tuple[int, ...]] = {0: (0, 9), 1: (0, 10, 2), 2: (2, 5)}
#: the codecs kafka-python can produce here (it has no snappy library in this environment)
KP_CODECS = tuple(name for name in CODEC_IDS if name != "snappy")

BASE_TOPIC_CONFIGS = {"retention.ms": "-1", "retention.bytes": "-1"}

ND_TOPIC_ID = "file:partition.metadata (random topic id)"
ND_PID = "producerId (allocated by the broker; depends on what ran before)"
ND_SNAPSHOT = "file:*.snapshot (producer ids, broker-assigned)"
ND_KP_GZIP = "crc (kafka-python gzip: the gzip header carries the compression time)"
ND_CONTROL = [
    "baseTimestamp (control batches: broker clock)",
    "maxTimestamp (control batches: broker clock)",
    "timestamp (control records: broker clock)",
    "crc",
    "file:*.timeindex (control batch timestamps)",
]

Send = dict[str, Any]  # {"key": str|None, "value": str|None, "timestamp": int, "headers": [...]}


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"[0-9]+", version)[:3])


# --------------------------------------------------------------------------------------------
# waiting for the log cleaner


def wait_cleaned(broker: RunningBroker, topic: str, timeout: float = 90.0) -> int:
    """Poll ``cleaner-offset-checkpoint`` until the cleaner has cleaned ``topic``-0 and no
    ``.cleaned``/``.swap`` file is left; returns the checkpointed offset."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = broker.read_log_file("cleaner-offset-checkpoint") or b""
        for line in data.decode("utf-8", errors="replace").splitlines()[2:]:
            parts = line.split()
            if len(parts) == 3 and parts[0] == topic and parts[1] == "0" and int(parts[2]) > 0:
                names = broker.list_log_dir(f"{topic}-0")
                if not any(n.endswith((".cleaned", ".swap")) for n in names):
                    time.sleep(0.5)  # let the swap settle
                    return int(parts[2])
        time.sleep(0.2)
    raise TimeoutError(f"log cleaner did not clean {topic}-0 within {timeout:.0f} s")


# --------------------------------------------------------------------------------------------
# the scenario


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    producer: str  # "kafka-python" | "java" | "none"
    topic_configs: dict[str, str]
    body: Callable[[RunningBroker, str], dict[str, Any]] | None = None
    magic: int = 2
    min_version: tuple[int, ...] = (0,)
    max_version: tuple[int, ...] = (99,)
    modes: tuple[str, ...] = ("kraft", "zookeeper")
    non_deterministic: tuple[str, ...] = ()
    #: partition directory to harvest instead of ``<topic>-0`` (e.g. ``__cluster_metadata-0``)
    source_dir: str | None = None
    #: harvest after every other scenario of the broker ran
    last: bool = False
    #: also record Fetch responses through the loopback proxy (``wire/fetch-NNN.bin``):
    #: {"max_bytes": N, "fetch_version": V | None (None: the newest both speak up to v12)}
    wire: dict[str, Any] | None = None

    def applies(self, spec: BrokerSpec) -> bool:
        v = version_tuple(spec.version)
        if spec.mode not in self.modes or not (self.min_version <= v < self.max_version):
            return False
        if self.producer == "java" and v < (0, 11):
            return False  # Produce.java uses the 0.11+ client API (headers, transactions)
        if self.magic < 2 and spec.mode == "kraft":
            return False  # KRaft ignores message.format.version: always magic 2
        if self.magic > spec.max_magic:
            return False
        return True

    def topic_for(self) -> str:
        return self.name

    def run(self, broker: RunningBroker, topic: str) -> dict[str, Any]:
        if self.body is None:
            return {"name": "none", "version": None, "api_version": None, "config": {}}
        return self.body(broker, topic)


def configs_for(magic: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    cfg = dict(BASE_TOPIC_CONFIGS)
    if magic < 2:
        cfg["message.format.version"] = MESSAGE_FORMAT[magic]
    cfg.update(extra or {})
    return cfg


def sends(n: int, *, prefix: str = "", ts: int = T0, step: int = 1) -> list[Send]:
    return [
        {"key": f"{prefix}k{i}", "value": f"{prefix}value-{i}", "timestamp": ts + i * step}
        for i in range(n)
    ]


SCENARIOS: dict[str, Scenario] = {}


def add(s: Scenario) -> None:
    assert s.name not in SCENARIOS, s.name
    SCENARIOS[s.name] = s


# -- codec x magic x producer -------------------------------------------------------------------


def scenarios_for(spec: BrokerSpec, names: Sequence[str] | str = "all") -> list[Scenario]:
    """The scenarios of ``names`` (or all) that ``spec`` can run, ``last`` ones at the end."""
    if names == "all" or names == ["all"]:
        chosen = list(SCENARIOS.values())
    else:
        if isinstance(names, str):
            names = [names]
        unknown = [n for n in names if n not in SCENARIOS]
        if unknown:
            raise KeyError(f"unknown scenario(s): {', '.join(unknown)}")
        chosen = [SCENARIOS[n] for n in names]
    chosen = [s for s in chosen if s.applies(spec)]
    return sorted(chosen, key=lambda s: s.last)


def masked_keys(non_deterministic: Sequence[str]) -> tuple[set[str], list[str]]:
    """(canonical JSON keys to mask, ``file:`` glob patterns) of a ``non_deterministic`` list."""
    keys: set[str] = set()
    files: list[str] = []
    for entry in non_deterministic:
        token = entry.split(" ", 1)[0]
        if token.startswith("file:"):
            files.append(token[len("file:") :])
        else:
            keys.add(token)
    return keys, files


def mask(doc: Any, keys: set[str]) -> Any:
    """``doc`` (decode JSON) with every value under one of ``keys`` replaced by "<masked>"."""
    if isinstance(doc, dict):
        return {k: ("<masked>" if k in keys else mask(v, keys)) for k, v in doc.items()}
    if isinstance(doc, list):
        return [mask(v, keys) for v in doc]
    return doc
