"""The JVM projects ride along (pyproject.toml has the rest of the build's configuration).

The repository's JVM projects (``jvm/``, ``oracle/``, the ``java`` adapters), the built-in
adapters that build from the kit alone (``kit-builder``, ``python-common``) and every
built-in adapter's ``adapter.toml`` (the files ``conformance/jvm/project_files.py`` lists)
are copied into the sdist as they are, and into the wheel under ``conformance/jvm/projects/``,
so that an installed kit resolves Kafka's jars, builds the Java oracle and those adapters,
and lists the others, without a checkout (``conformance.jvm.runtime.project_dir``). An
editable install gets no copy: it runs from the checkout, which has the originals.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent


def _project_files() -> ModuleType:
    """``conformance/jvm/project_files.py``, loaded by path (the package is not importable
    while it is being built)."""
    path = ROOT / "conformance" / "jvm" / "project_files.py"
    spec = importlib.util.spec_from_file_location("_kafka_conformance_project_files", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PROJECT_FILES = _project_files()


class BuildPyWithProjects(build_py):
    """build_py, then the projects' files into ``<build_lib>/conformance/jvm/projects/``."""

    def _project_targets(self) -> list[tuple[Path, Path]]:
        dest = Path(self.build_lib) / "conformance" / "jvm" / _PROJECT_FILES.PACKAGED_DIR
        return [(ROOT / rel, dest / rel) for rel in _PROJECT_FILES.source_files(ROOT)]

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        targets = self._project_targets()
        if not targets:
            raise SystemExit(f"no JVM project files under {ROOT} (oracle/, jvm/): not a checkout?")
        for src, dst in targets:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            os.chmod(dst, 0o644)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = list(super().get_outputs(include_bytecode))
        if not getattr(self, "editable_mode", False):
            outputs += [str(dst) for _, dst in self._project_targets()]
        return outputs


class SdistWithProjects(sdist):
    """sdist, with the projects' files at their places in the repository."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        for rel in _PROJECT_FILES.source_files(ROOT):
            dst = Path(base_dir) / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, dst)


setup(cmdclass={"build_py": BuildPyWithProjects, "sdist": SdistWithProjects})
