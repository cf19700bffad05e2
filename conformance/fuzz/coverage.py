"""Branch coverage of the decoder reached by each target's saved corpus (coverage.py).

Every input of ``fuzz/corpus/<target>/`` (the merged corpus kept in git) and of the seeds the
target extracts from ``corpora/`` (in an installed package, which has neither: the built-in
seeds of ``conformance.fuzz.seeds``) is replayed through the target with coverage.py measuring
branches of the decoding modules (``DECODER_MODULES``). The report gives, per target, the
branches of its own modules it reached, and for the union of all targets, the decoder's
branch coverage: the figure docs/fuzzing.md records.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import DecodeError
from conformance.fuzz.seeds import has_corpora, write_builtin_root
from conformance.fuzz.targets import TARGETS, get
from conformance.host.progress import Status
from conformance.jvm.runtime import checkout_root

#: the decoding core: what "the decoder's branches" means (encoders, CLI and shells excluded;
#: ``crc`` too: its branches are the pure-Python fallbacks, unused when the C libraries are in)
DECODER_MODULES = (
    "primitives/varint.py",
    "primitives/java.py",
    "codecs/*.py",
    "wire/record.py",
    "wire/_record_fast.py",
    "wire/batch.py",
    "wire/legacy.py",
    "wire/control.py",
    "stream/splitter.py",
    "stream/decoder.py",
    "stream/findings.py",
    "logdir/index.py",
    "logdir/txnindex.py",
    "logdir/snapshot.py",
    "logdir/checkpoint.py",
)


@dataclass
class ModuleCoverage:
    module: str
    branches: int
    covered: int

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.branches if self.branches else 100.0


def corpus_inputs(
    target_name: str,
    root: Path | None,
    include_seeds: bool = True,
    *,
    seeds_from: Path | None = None,
) -> Iterable[bytes]:
    """The saved corpus ``<root>/fuzz/corpus/<target>/``, then the seeds extracted from
    ``<seeds_from>/corpora`` (default ``root``)."""
    saved = root / "fuzz" / "corpus" / target_name if root is not None else None
    if saved is not None and saved.is_dir():
        for f in sorted(saved.iterdir()):
            if f.is_file():
                yield f.read_bytes()
    if include_seeds and (seeds_from or root) is not None:
        yield from get(target_name).seeds(seeds_from or root)  # type: ignore[arg-type]


def measure(
    targets: Iterable[str],
    *,
    root: Path | None = None,
    include_seeds: bool = True,
    progress: Status | None = None,
) -> dict[str, list[ModuleCoverage]]:
    """``{target: [ModuleCoverage...], "all": [...]}`` over the decoder modules.

    ``root`` defaults to the checkout; without one (or without its ``corpora/``) the seeds
    are the built-in ones."""
    with tempfile.TemporaryDirectory(prefix="fuzz-coverage-") as scratch:
        root = root or checkout_root()
        seeds_from = (
            write_builtin_root(Path(scratch)) if include_seeds and not has_corpora(root) else root
        )
        return _measure(targets, root, seeds_from, include_seeds, progress)


def _measure(
    targets: Iterable[str],
    root: Path | None,
    seeds_from: Path | None,
    include_seeds: bool,
    progress: Status | None,
) -> dict[str, list[ModuleCoverage]]:
    import coverage

    import conformance

    package = Path(conformance.__file__).parent
    keep = {str(f) for pattern in DECODER_MODULES for f in package.glob(pattern)}
    # source= (not include=) so that modules a target never entered still count, at 0%
    omit = [str(f) for f in package.rglob("*.py") if str(f) not in keep]
    options = dict(branch=True, source=[str(package)], omit=omit, data_file=None)
    results: dict[str, list[ModuleCoverage]] = {}
    union = _coverage(coverage, options)
    names = list(targets)
    for name in names:
        target = get(name)
        why = target.unavailable() if target.unavailable is not None else None
        if why:
            if progress:
                progress(f"  {name}: skipped: {why}")
            continue
        cov = _coverage(coverage, options)
        count = 0
        cov.start()
        try:
            for data in corpus_inputs(name, root, include_seeds, seeds_from=seeds_from):
                count += 1
                try:
                    target.run(data)
                except DecodeError:
                    pass
        finally:
            cov.stop()
        union.get_data().update(cov.get_data())
        own = set(target.modules)
        results[name] = [
            m
            for m in _report(cov, package)
            if any(m.module == o or m.module.startswith(o + ".") for o in own)
        ]
        if progress:
            pct = _total(results[name])
            progress(
                f"  {name}: {count} inputs, {pct:.1f}% of the branches of {', '.join(sorted(own))}"
            )
    results["all"] = _report(union, package)
    return results


#: the writers that live beside the readers (codec framings, wire structures): they build
#: inputs, the fuzzer never runs them, so their branches are not the decoder's
WRITER_FUNCTIONS = r"^\s*def (write_|encode_|seal_|v2_attributes|compress\b)"


def _coverage(coverage, options: dict[str, object]):  # type: ignore[no-untyped-def]
    cov = coverage.Coverage(**options)
    cov.exclude(WRITER_FUNCTIONS)
    return cov


def _report(cov, package: Path) -> list[ModuleCoverage]:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cov.json"
        try:
            cov.json_report(outfile=str(out))
        except Exception:  # coverage.exceptions.NoDataError: nothing measured  # noqa: BLE001
            return []
        doc = json.loads(out.read_text())
    modules = []
    for path, data in doc["files"].items():
        s = data["summary"]
        parts = Path(path).resolve().relative_to(package.resolve()).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules.append(ModuleCoverage(name, s.get("num_branches", 0), s.get("covered_branches", 0)))
    return sorted(modules, key=lambda m: m.module)


def _total(modules: list[ModuleCoverage]) -> float:
    branches = sum(m.branches for m in modules)
    return 100.0 * sum(m.covered for m in modules) / branches if branches else 100.0


def render(results: dict[str, list[ModuleCoverage]]) -> str:
    lines = ["target       branches reached (its modules)"]
    for name, modules in results.items():
        if name == "all":
            continue
        b = sum(m.branches for m in modules)
        c = sum(m.covered for m in modules)
        lines.append(f"{name:12} {c:5}/{b:<5} {_total(modules):5.1f}%")
    lines.append("")
    lines.append("decoder module       branches   covered  (union of all targets)")
    for m in results.get("all", []):
        lines.append(f"{m.module:20} {m.branches:8} {m.covered:9}  {m.percent:5.1f}%")
    allm = results.get("all", [])
    b = sum(m.branches for m in allm)
    c = sum(m.covered for m in allm)
    lines.append(f"{'TOTAL':20} {b:8} {c:9}  {_total(allm):5.1f}%")
    return "\n".join(lines)


def coverage_dict(results: dict[str, list[ModuleCoverage]]) -> dict[str, object]:
    return {
        name: {
            "percent": round(_total(mods), 2),
            "modules": {m.module: {"branches": m.branches, "covered": m.covered} for m in mods},
        }
        for name, mods in results.items()
    }


__all__ = ["DECODER_MODULES", "ModuleCoverage", "measure", "render", "coverage_dict", "TARGETS"]
