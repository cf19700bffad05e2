"""The layers of docs/architecture.md, held by the import graph.

Every ``import`` of every module of the package counts: at module level, inside functions,
under ``if TYPE_CHECKING:`` alike. The rules:

* a module imports only from its own layer or from the layers below it (``LAYERS``);
* the decoding core never opens files: ``open``/``os.open``/``os.pread``/``mmap`` appear only
  in ``fileio`` and the layers above it;
* no cycle in the module graph;
* no module over ``MAX_LINES`` lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import package_modules

PACKAGE = Path(__file__).resolve().parents[1] / "conformance"

#: layer of each top-level part of the package; a module may import its own layer and below.
#: The shells (corpus, capture, fuzz, jvm, strategies) sit side by side above ``logdir``;
#: ``producer_check`` and ``broker_check`` each join two of them (capture's brokers and proxy,
#: harness's adapters and reports), ``fuzz_check`` fuzz's inputs and harness's judging; the
#: command line sits above them all.
LAYERS: dict[str, int] = {
    "errors": 0,
    "jsondoc": 0,
    "levels": 0,
    "primitives": 1,
    "codecs": 2,
    "partitioners": 2,
    "wire": 3,
    "messages": 3,
    "stream": 4,
    "broker": 5,
    "client": 5,
    "fileio": 6,
    "host": 6,
    "logdir": 7,
    "jvm": 8,
    "strategies": 8,
    "fakebroker": 8,
    "corpus": 9,
    "fuzz": 10,
    "capture": 10,
    "replay": 10,
    "harness": 10,
    "producer_check": 11,
    "broker_check": 11,
    "fuzz_check": 11,
    "cli": 12,
    "pytest_plugin": 12,
}
#: shells that must not depend on each other although they share a layer number
SIBLINGS_APART = {
    ("cli", "pytest_plugin"),
    ("pytest_plugin", "cli"),
    ("fuzz", "capture"),
    ("capture", "fuzz"),
    ("jvm", "strategies"),
    ("strategies", "jvm"),
    ("replay", "fuzz"),
    ("fuzz", "replay"),
    ("replay", "capture"),
    ("capture", "replay"),
    ("producer_check", "broker_check"),
    ("broker_check", "producer_check"),
    ("fuzz_check", "producer_check"),
    ("producer_check", "fuzz_check"),
    ("fuzz_check", "broker_check"),
    ("broker_check", "fuzz_check"),
} | {
    pair
    for other in ("fuzz", "capture", "replay")
    for pair in (("harness", other), (other, "harness"))
}
#: the sans-IO core: bytes in, objects out
CORE = (
    "errors",
    "jsondoc",
    "levels",
    "primitives",
    "codecs",
    "wire",
    "messages",
    "stream",
    "broker",
    "client",
    "partitioners",
)
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    out = {}
    for f in package_modules():
        parts = ("conformance",) + f.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


MODULES = _modules()


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, path: Path) -> set[str]:
    """The package's modules that ``module`` imports (a name imported from a package counts
    as the submodule when one of that name exists)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path, node)
            names = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in MODULES:  # conformance.x.y.attr -> conformance.x.y
                name = name.rpartition(".")[0]
            if name.startswith("conformance") and name != module:
                found.add(name)
    return found


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_part_has_a_layer() -> None:
    parts = {_part(m) for m in MODULES} - {""}
    assert parts <= set(LAYERS), f"unknown top-level parts: {parts - set(LAYERS)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_down(module: str) -> None:
    if module == "conformance":  # the package's public face re-exports the core's API
        assert all(_part(m) in CORE for m in GRAPH[module]), GRAPH[module]
        return
    mine = _part(module)
    bad = []
    for target in sorted(GRAPH[module]):
        theirs = _part(target)
        if target == "conformance":  # the root re-exports the core: only above the core
            if LAYERS[mine] <= LAYERS["broker"]:
                bad.append(f"{target} (import from the defining module, not the package root)")
        elif LAYERS[theirs] > LAYERS[mine] or (mine, theirs) in SIBLINGS_APART:
            bad.append(
                f"{target} ({theirs}, layer {LAYERS[theirs]} > {mine}, layer {LAYERS[mine]})"
            )
    assert not bad, f"{module} imports upward: {bad}"


def test_no_import_cycle() -> None:
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(GRAPH[m]):
            if state.get(n) == 1:
                cycles.append(stack[stack.index(n) :] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


_FILE_CALLS = {
    ("os", "open"),
    ("os", "pread"),
    ("os", "fdopen"),
    ("mmap", "mmap"),
    ("io", "open"),
    ("Path", "read_bytes"),
    ("Path", "open"),
}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _part(m) in CORE))
def test_core_does_no_file_io(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text())
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "open":
                calls.append("open()")
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                if (f.value.id, f.attr) in _FILE_CALLS or f.attr in ("read_bytes", "read_text"):
                    calls.append(f"{f.value.id}.{f.attr}()")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names]
            mod = node.module if isinstance(node, ast.ImportFrom) else None
            if "mmap" in names or mod == "mmap" or "gc" in names:
                calls.append(f"import {names}")
    assert not calls, f"{module} does IO / touches process state: {calls}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_size(module: str) -> None:
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module}: {lines} lines (split it by concern)"


def test_the_checker_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    """The import scan itself: a function-level import and a TYPE_CHECKING import count."""
    src = tmp_path / "m.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from conformance.stream.result import DecodeResult\n"
        "def f():\n    from conformance.logdir import index\n    return index\n"
    )
    found = _imports("conformance.wire.fake", src)
    assert found == {"conformance.stream.result", "conformance.logdir.index"}
