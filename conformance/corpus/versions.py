"""Which Kafka release wrote some log files (``dump --format-of auto``).

A case of a golden corpus says it in its manifest (``broker_version``, docs/corpora.md): the
files' nearest ``manifest.json`` above them decides. Kafka itself writes no software version
into a log directory, so outside a corpus the answer is "unknown" and the user names the
version.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from conformance.corpus.golden import read_manifest

__all__ = ["kafka_version_of"]

#: how many directories above a file are searched for a manifest (case/log/<partition>/file)
MANIFEST_DEPTH = 4


def _manifest_version(file: Path) -> tuple[str | None, Path | None]:
    here = file.resolve().parent
    for directory in [here, *here.parents][:MANIFEST_DEPTH]:
        manifest = directory / "manifest.json"
        if manifest.is_file():
            try:
                version = read_manifest(directory).get("broker_version")
            except (OSError, ValueError):
                return None, manifest
            return (version if isinstance(version, str) else None), manifest
    return None, None


def kafka_version_of(files: Sequence[str]) -> tuple[str | None, str]:
    """``(version, where it was found)``, or ``(None, why not)``: every file must tell the
    same version."""
    found: dict[str, Path] = {}
    for name in files:
        version, manifest = _manifest_version(Path(name))
        if version is None:
            if manifest is not None:
                return None, f"{manifest} names no broker_version"
            return None, f"no corpus manifest.json above {name} tells its Kafka version"
        found.setdefault(version, manifest)  # type: ignore[arg-type]
    if len(found) > 1:
        listed = ", ".join(f"{v} ({m})" for v, m in found.items())
        return None, f"the files were written by different Kafka versions: {listed}"
    if not found:
        return None, "no file given"
    version, manifest = next(iter(found.items()))
    return version, str(manifest)
