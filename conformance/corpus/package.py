"""Where the corpora are, and which corpus a report was made with.

The corpora ``check`` reads (decode cases, consume scenarios, the produce cases of
``check-broker``) come from one of two places, in this order:

1. a checkout's ``corpora/`` (``$KAFKA_CONFORMANCE_ROOT``, or the repository an editable
   install lives in: ``jvm.runtime.checkout_root``);
2. the companion data package ``kafka-conformance-corpora`` (import name
   :data:`PACKAGE`), installed by ``pip install 'kafka-conformance[corpora]'``: a wheel of its
   own, built by ``scripts/build-corpora-package`` from the checkout's corpora, versioned with
   the kit (the extra pins the same version), holding only the files the cases read.

:func:`identity` names the corpus a run used (its version, where it came from, a digest of
its files) for every report. The data package carries its identity in :data:`IDENTITY_FILE`,
written when it is built; a checkout's is computed from its files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.corpus import golden
from conformance.jvm import runtime as jvm

__all__ = [
    "DISTRIBUTION",
    "IDENTITY_FILE",
    "INSTALL_HINT",
    "PACKAGE",
    "corpora_root",
    "digest",
    "identity",
    "package_root",
]

#: the data package's distribution name (``pip install``) and import name
DISTRIBUTION = "kafka-conformance-corpora"
PACKAGE = "kafka_conformance_corpora"
#: the data package's own description of its corpus: ``{"format", "version", "digest",
#: "files", "bytes"}``
IDENTITY_FILE = "corpus.json"
IDENTITY_FORMAT = "kafka-conformance/corpus-package/1"
INSTALL_HINT = (
    f"install the corpora (pip install 'kafka-conformance[corpora]', the {DISTRIBUTION} "
    "package of the same version), pass --corpora DIR, or set KAFKA_CONFORMANCE_ROOT to a "
    "checkout"
)


def package_root() -> Path | None:
    """The installed data package's directory (its files are the corpora), or None."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent
    return root if (root / IDENTITY_FILE).is_file() else None


def corpora_root() -> Path:
    """The corpora directory to read when none is given: the checkout's ``corpora/``, else
    the installed data package's. Raises :class:`conformance.jvm.runtime.NoCheckout` (with
    :data:`INSTALL_HINT`) when there is neither."""
    try:
        return golden.default_root()
    except jvm.NoCheckout:
        installed = package_root()
        if installed is not None:
            return installed
    raise jvm.NoCheckout(f"no corpora here: {INSTALL_HINT}")


def digest(root: Path, files: Iterable[Path]) -> str:
    """sha256 over every file's path (relative to ``root``) and contents, in path order: two
    corpora with the same digest hold the same cases."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        data = f.read_bytes()
        h.update(f"{f.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def identity(root: Path) -> dict[str, Any]:
    """Which corpus ``root`` is: ``{"version", "source", "digest"}``. ``source`` is
    ``package`` (the data package: its recorded version and digest), or ``directory`` (a
    checkout's or any other directory: the kit's version with ``+directory``, the digest of
    every file under it)."""
    recorded = root / IDENTITY_FILE
    if recorded.is_file():
        doc = json.loads(recorded.read_text(encoding="utf-8"))
        if doc.get("format") == IDENTITY_FORMAT:
            return {"version": doc["version"], "source": "package", "digest": doc["digest"]}
    files = [f for f in root.rglob("*") if f.is_file()] if root.is_dir() else []
    return {
        "version": f"{__version__}+directory",
        "source": "directory",
        "digest": digest(root, files),
    }


def write_identity(root: Path, version: str) -> dict[str, Any]:
    """Record ``root``'s identity in :data:`IDENTITY_FILE` (the data package's build)."""
    files = [f for f in root.rglob("*") if f.is_file() and f.name != IDENTITY_FILE]
    doc = {
        "format": IDENTITY_FORMAT,
        "version": version,
        "digest": digest(root, files),
        "files": len(files),
        "bytes": sum(f.stat().st_size for f in files),
    }
    (root / IDENTITY_FILE).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return doc
