"""The kit as a user installs it, shared by the tests that need it: the kit's wheel and the
corpora's wheel (scripts/build-corpora-package) built once per test session from copies of
the build inputs (nothing is written into the working tree), and fresh venvs outside the
checkout with ``KAFKA_CONFORMANCE_ROOT`` unset. Dependencies come from PyPI (or pip's cache)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_SCRUBBED = (
    "KAFKA_CONFORMANCE_ROOT",
    "PYTHONPATH",
    "PYTHONHOME",
    "VIRTUAL_ENV",
    "PYTHONSTARTUP",
    "PYTHONSAFEPATH",
)


@dataclass
class Install:
    wheel: Path
    venv: Path
    site: Path  # the fresh venv's site-packages
    work: Path  # cwd of every command: outside the checkout
    cache: Path  # $XDG_CACHE_HOME of the commands
    env: dict[str, str]
    pip_env: dict[str, str]  # the user's cache dirs: pip's cache is reused

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(
        self, *args: str, cwd: Path | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        """``kafka-conformance ARGS`` of the fresh venv; never a traceback."""
        r = subprocess.run(
            [self.bin("kafka-conformance"), *args],
            cwd=cwd or self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, (args, r.stderr)
        return r

    def pip(self, *args: str) -> None:
        r = subprocess.run(
            [
                self.bin("python"),
                "-m",
                "pip",
                "--disable-pip-version-check",
                "--no-input",
                "-q",
                *args,
            ],
            cwd=self.work,
            env=self.pip_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, f"pip {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}"


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _SCRUBBED}


def copy_build_inputs(dest: Path) -> None:
    """What ``pip wheel .`` reads: the root's files (pyproject.toml, setup.py, README.md, ...),
    the package and the JVM projects' files setup.py copies into it
    (``conformance.jvm.project_files``). Nothing else can end up in the wheel (packages
    ``conformance*`` only)."""
    from conformance.jvm.project_files import source_files

    dest.mkdir()
    for f in ROOT.iterdir():
        if f.is_file():
            shutil.copy2(f, dest / f.name)
    shutil.copytree(
        ROOT / "conformance",
        dest / "conformance",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    for rel in source_files(ROOT):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)


@dataclass(frozen=True)
class Wheels:
    kit: Path  # kafka_conformance-*.whl
    corpora: Path  # kafka_conformance_corpora-*.whl

    @property
    def directory(self) -> Path:
        """Where both are (``pip install --find-links``: the ``corpora`` extra resolves here)."""
        return self.kit.parent


def build_wheels(tmp: Path) -> Wheels:
    """Build the kit's wheel (``pip wheel`` of a copy of the build inputs) and the corpora's
    wheel (``scripts/build-corpora-package``) into ``tmp/dist``."""
    src = tmp / "src"
    copy_build_inputs(src)
    dist = tmp / "dist"
    pip_env = clean_env()
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--disable-pip-version-check",
         "-w", str(dist), str(src)],
        cwd=tmp, env=pip_env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, f"pip wheel failed:\n{r.stdout}\n{r.stderr}"
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build-corpora-package"), "--out", str(dist)],
        cwd=tmp, env={**pip_env, "KAFKA_CONFORMANCE_ROOT": str(ROOT)}, capture_output=True,
        text=True, timeout=900,
    )  # fmt: skip
    assert r.returncode == 0, f"build-corpora-package failed:\n{r.stdout}\n{r.stderr}"
    [kit] = dist.glob("kafka_conformance-*.whl")
    [corpora] = dist.glob("kafka_conformance_corpora-*.whl")
    return Wheels(kit, corpora)


def fresh_install(tmp: Path, *requirements: str | Path, find_links: Path | None = None) -> Install:
    """A fresh venv under ``tmp`` with ``requirements`` installed (wheel files, or wheel files
    with an extra: ``f"{wheel}[corpora]"``), commands run from ``tmp/work``."""
    assert ROOT not in tmp.resolve().parents, "the commands must run outside the checkout"
    pip_env = clean_env()
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300, env=pip_env)
    work = tmp / "work"
    work.mkdir()
    cache = tmp / "xdg-cache"
    env = {
        **clean_env(),
        "XDG_CACHE_HOME": str(cache),
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    site = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    first = Path(str(requirements[0]).split("[", 1)[0])
    inst = Install(first, venv, Path(site), work, cache, env, {**pip_env, "PATH": env["PATH"]})
    links = ["--find-links", str(find_links)] if find_links is not None else []
    inst.pip("install", *links, *map(str, requirements))
    return inst
