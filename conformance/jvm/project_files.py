"""Which files of the repository an installed kit carries.

The JVM side builds from directories of the repository: ``jvm/kafka-classpath`` (the POM that
resolves a Kafka distribution's jars, ``kafka_jars``), ``jvm/producer`` (the capture
scenarios' Java producer), ``oracle`` (the consumer oracle's Maven project and the broker
oracle's source sets, ``oracle`` and ``broker_oracle``), ``adapters/java`` and
``adapters/java-producer`` (the built-in ``java`` adapters, ``harness.registry``). The
built-in adapters whose build needs nothing but the kit ride along too: ``adapters/kit-builder``
(the kit's own encoder, run with the kit's interpreter) and ``adapters/python-common`` (the
protocol helpers it imports, standard library only). Every other built-in adapter needs a
third-party library or toolchain fetched by its build (PyPI, the Go module proxy, crates.io,
npm) or the checkout's ``native/``; the kit carries its manifest only (:data:`MANIFESTS`), so
that an installed kit lists it (``check --list``) and says that it needs a checkout
(:func:`carries_sources`).

The wheel and the sdist carry a copy of exactly :func:`source_files` (setup.py), under
``conformance/jvm/projects/<directory>/`` in the wheel; ``runtime.project_dir`` decides which
copy a command uses (the checkout's when there is one).

Standard library only, and no import of the package: setup.py loads this file by its path.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["MANIFESTS", "PACKAGED_DIR", "PROJECTS", "carries_sources", "source_files"]

#: each project's directory (relative to a checkout) and the globs of its sources: what its
#: build reads, never what a build writes (``target/``, classes, jars)
PROJECTS: dict[str, tuple[str, ...]] = {
    "jvm/kafka-classpath": ("pom.xml",),
    "jvm/producer": ("*.java",),
    "oracle": ("pom.xml", "src/**/*.java", "broker/**/*.java"),
    "adapters/java": ("adapter.toml",),
    "adapters/java-producer": ("adapter.toml", "*.java", "*.properties"),
    "adapters/kit-builder": ("adapter.toml", "*.py"),
    "adapters/python-common": ("*.py",),
}

#: the manifest of every built-in adapter, also of those whose sources stay in a checkout:
#: the catalogue an installed kit lists (relative to a checkout, like :data:`PROJECTS`)
MANIFESTS = "adapters/*/adapter.toml"

#: where the wheel carries them, relative to the package's ``jvm/`` folder
PACKAGED_DIR = "projects"


def source_files(root: Path) -> list[str]:
    """The files of every project under ``root`` (a checkout or an unpacked sdist), as POSIX
    paths relative to ``root``, sorted."""
    found: set[str] = set()
    for directory, globs in PROJECTS.items():
        base = root / directory
        for pattern in globs:
            found.update(p.relative_to(root).as_posix() for p in base.glob(pattern) if p.is_file())
    found.update(p.relative_to(root).as_posix() for p in root.glob(MANIFESTS) if p.is_file())
    return sorted(found)


def carries_sources(directory: str) -> bool:
    """Whether an installed kit carries the sources of ``directory`` (as in a checkout:
    ``adapters/kit-builder``), not only its manifest."""
    return directory in PROJECTS
