"""Findings on disk: crashes, hangs, memory blow-ups and divergences, deduplicated.

Layout (one directory per distinct finding, named by kind and a hash of its signature)::

    <findings>/<target>/<kind>-<sig8>/
        input.bin        the smallest input seen with this signature
        input.min.bin    after minimization (``minimize``), when done
        finding.json     target, kind, signature, first/last seen, count, traceback or diff
        ours.json java.json kafka-python.json   (divergences: each side's output)

Kinds: ``crash`` (an exception outside the documented hierarchy, or a violated invariant,
signature = exception type + innermost frames in the kit), ``timeout`` / ``oom`` (the engine
killed the input, signature = kind + input hash), ``divergence`` (reference decoder != Java
oracle, signature = differing fields), ``kafka-python`` (kafka-python != Java oracle),
``oracle`` (the oracle JVM itself failed).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def crash_signature(exc: BaseException) -> str:
    """Exception type and the three innermost frames inside ``conformance`` (no line numbers,
    so the signature survives unrelated edits)."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if "conformance" in f.filename.replace("\\", "/")
        and "/fuzz/" not in f.filename.replace("\\", "/")
    ]
    where = " < ".join(f"{Path(f.filename).stem}.{f.name}" for f in reversed(frames[-3:]))
    return f"{type(exc).__name__} at {where or '?'}"


_INDEX = re.compile(r"\[\d+\]")
_DIGITS = re.compile(r"\d+")


def diff_signature(differences: list[str], prefix: str = "") -> str:
    """Differing fields with list indexes dropped; for error fields, the values too (so two
    different exception classes are two findings)."""
    keys = set()
    for line in differences:
        path, _, rest = line.partition(": ")
        path = _INDEX.sub("[]", path)
        if path.endswith(("kafka_exception", ".outcome")) or path.endswith("$.error"):
            keys.add(f"{path}: {rest}")
        elif path.endswith(".error.message"):  # the wording, numbers aside, tells causes apart
            keys.add(f"{path}: {_DIGITS.sub('N', rest)}")
        else:
            keys.add(path)
    return prefix + " | ".join(sorted(keys)[:4])


@dataclass
class FuzzFinding:
    path: Path
    target: str
    kind: str
    signature: str
    info: dict[str, Any]

    @property
    def input(self) -> bytes:
        m = self.path / "input.min.bin"
        return (m if m.exists() else self.path / "input.bin").read_bytes()


class FindingStore:
    def __init__(self, root: Path, target: str) -> None:
        self.dir = Path(root) / target
        self.target = target
        self._sizes: dict[str, int] = {}

    def _save(
        self,
        kind: str,
        signature: str,
        data: bytes,
        info: dict[str, Any],
        sides: dict[str, Any] | None = None,
    ) -> bool:
        """Record one hit; returns True when the signature is new (or the input smaller)."""
        known = self._sizes.get(signature)
        if known is not None and known <= len(data):
            return False
        folder = self.dir / f"{kind}-{_hash(signature)}"
        folder.mkdir(parents=True, exist_ok=True)
        meta_path = folder / "finding.json"
        previous: dict[str, Any] = {}
        if meta_path.exists():
            try:
                previous = json.loads(meta_path.read_text())
            except ValueError:
                previous = {}
            old = folder / "input.bin"
            if known is None and old.exists() and old.stat().st_size <= len(data):
                self._sizes[signature] = old.stat().st_size  # another worker saw it smaller
                return False
        self._sizes[signature] = len(data)
        (folder / "input.bin").write_bytes(data)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        meta = {
            "target": self.target,
            "kind": kind,
            "signature": signature,
            "first_seen": previous.get("first_seen", now),
            "last_seen": now,
            "input_size": len(data),
            **info,
        }
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
        for side, doc in (sides or {}).items():
            (folder / f"{side}.json").write_text(json.dumps(doc, indent=2) + "\n")
        return known is None

    def crash(self, data: bytes, exc: BaseException) -> bool:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return self._save("crash", crash_signature(exc), data, {"traceback": tb[-8000:]})

    def divergence(
        self,
        data: bytes,
        kind: str,
        signature: str,
        differences: list[str],
        sides: dict[str, Any],
        wire: bytes | None = None,
    ) -> bool:
        info: dict[str, Any] = {"differences": differences[:50]}
        if wire is not None and wire != data:
            info["wire_sha1"] = hashlib.sha1(wire).hexdigest()
        return self._save(kind, signature, data, info, sides)

    def artifact(self, kind: str, data: bytes, log_tail: str) -> bool:
        signature = f"{kind} {hashlib.sha1(data).hexdigest()[:12]}"
        return self._save(kind, signature, data, {"log_tail": log_tail[-8000:]})


def read_findings(root: Path, target: str | None = None) -> list[FuzzFinding]:
    out = []
    for meta in sorted(Path(root).glob(f"{target or '*'}/*/finding.json")):
        try:
            info = json.loads(meta.read_text())
        except ValueError:
            continue
        out.append(
            FuzzFinding(
                meta.parent,
                info.get("target", meta.parent.parent.name),
                info.get("kind", "?"),
                info.get("signature", "?"),
                info,
            )
        )
    return out


__all__ = ["FuzzFinding", "FindingStore", "crash_signature", "diff_signature", "read_findings"]
