"""The conventions of docs/architecture.md ("Conventions"), held by the package's syntax trees.

* **One verb per direction**: a function or method that turns bytes or a document into
  objects is ``read_<structure>`` (``from_dict`` for a constructor), one that turns objects
  into bytes or text is ``write_<structure>``; the synonyms the kit used to mix (``encode``,
  ``parse``, ``load``, ``dumps``, ``iterator_records``, ...) do not come back. ``decode`` is
  not a structure verb: it is Kafka's consumer verdict on bytes (``conformance.decode``).
* **JSON**: ``to_dict()`` returns the document (a dict), ``to_json()`` returns its text; a
  class with ``to_dict`` gets ``to_json`` from ``conformance.jsondoc.JsonDocument``.
* **One home per fact**: the codec list (``codecs.CODECS``), the broker list
  (``capture.brokers.BROKERS``), each ``kafka-conformance/...`` format string, the free-port
  picker and the progress display are each defined once.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from conftest import package_modules

from conformance.codecs import CODEC_IDS, CODECS, codec_name
from conformance.stream.splitter import MODES

PACKAGE = Path(__file__).resolve().parents[1] / "conformance"
FILES = {p.relative_to(PACKAGE.parent).as_posix(): p for p in package_modules()}
TREES = {name: ast.parse(p.read_text(), name) for name, p in FILES.items()}

#: verbs that are not the kit's: the name (or its prefix, for those ending in "_")
FORBIDDEN_VERBS = (
    "encode",
    "encode_",
    "parse",
    "parse_",
    "serialize",
    "deserialize",
    "load",
    "load_",
    "loads",
    "dumps",
    "iter_",
    "iterator_",
    "from_json",
)


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    return [
        (name, node)
        for name, tree in TREES.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def _forbidden(name: str) -> bool:
    if name.startswith("__") and name.endswith("__"):  # Python's own protocol (__iter__, ...)
        return False
    bare = name.lstrip("_")
    return any(bare == v or (v.endswith("_") and bare.startswith(v)) for v in FORBIDDEN_VERBS)


def test_one_verb_per_direction() -> None:
    bad = [f"{f}:{node.lineno} {node.name}" for f, node in _functions() if _forbidden(node.name)]
    assert not bad, "use read_<x> / write_<x> (docs/architecture.md, Conventions): " + ", ".join(
        bad
    )


def test_records_is_a_view_not_a_reader() -> None:
    """``records`` names the records a result holds (a property); reading them from bytes is
    ``read_records``."""
    bad = []
    for f, node in _functions():
        if node.name == "records":
            props = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
            if "property" not in props:
                bad.append(f"{f}:{node.lineno}")
    assert not bad, bad


def _annotation(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    return ast.unparse(node.returns) if node.returns is not None else ""


def test_to_json_returns_text_and_to_dict_a_dict() -> None:
    bad = []
    for f, node in _functions():
        if node.name == "to_json" and _annotation(node) != "str":
            bad.append(f"{f}:{node.lineno} to_json -> {_annotation(node) or '?'} (must be str)")
        if node.name == "to_dict" and not _annotation(node).startswith("dict"):
            bad.append(f"{f}:{node.lineno} to_dict -> {_annotation(node) or '?'} (must be dict)")
    assert not bad, bad


def test_classes_with_to_dict_have_to_json_text() -> None:
    """Every class defining ``to_dict`` is a ``JsonDocument`` (or gets it from a base of its
    own module), so ``to_json()`` is its text everywhere; a ``Protocol`` naming ``to_dict``
    is an interface."""
    bad = []
    for f, tree in TREES.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef) or node.name == "JsonDocument":
                continue
            methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            bases = {ast.unparse(b) for b in node.bases}
            if "Protocol" in bases:  # an interface (what a document offers), not a document
                continue
            if "to_dict" in methods and "JsonDocument" not in bases:
                bad.append(f"{f}:{node.lineno} {node.name}")
    assert not bad, bad


def test_a_decode_result_prints_as_json_text() -> None:
    """docs/decoding.md's ``print(result.to_json())`` prints the canonical document itself."""
    from conformance import decode

    result = decode(b"\x00" * 5)
    text = result.to_json()
    assert isinstance(text, str) and json.loads(text) == result.to_dict()
    assert text == json.dumps(result.to_dict(), separators=(",", ":"))


# --------------------------------------------------------------------------- one home per fact

_CODEC_NAMES = set(CODEC_IDS)
#: files that may name several codecs in one literal, and why
_CODEC_LITERALS_ALLOWED = {
    "conformance/corpus/synth/generate.py": "draw weights per codec; a codec not named gets a "
    "default weight",
}


def test_the_codec_list_is_restated_nowhere() -> None:
    """No tuple, list, set or dict literal outside ``conformance/codecs/`` names three or more
    codecs: they take the list from ``codecs.CODECS``."""
    bad = []
    for f, tree in TREES.items():
        if f.startswith("conformance/codecs/") or f in _CODEC_LITERALS_ALLOWED:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                elements = node.keys
            elif isinstance(node, ast.Tuple | ast.List | ast.Set):
                elements = node.elts
            else:
                continue
            names = {
                e.value
                for e in elements
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            }
            if len(names & _CODEC_NAMES) >= 3:
                bad.append(f"{f}:{node.lineno}")
    assert not bad, f"codec lists restated (import codecs.CODECS): {bad}"


def test_the_schema_names_every_codec_id_and_mode() -> None:
    schema = json.loads((PACKAGE / "schema" / "decode-result.schema.json").read_text())
    found = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "compression" in node and isinstance(node["compression"], dict):
                found.append(node["compression"].get("enum"))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    assert found and all(e == [codec_name(i) for i in range(8)] for e in found), found
    assert [codec_name(i) for i in sorted(CODECS)] == list(CODEC_IDS)
    assert schema["properties"]["mode"]["enum"] == list(MODES)


def _assigned_names(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def _defined_once(name: str) -> list[str]:
    return [f for f, tree in TREES.items() if name in _assigned_names(tree)]


def test_the_broker_list_has_one_home() -> None:
    assert _defined_once("BROKERS") == ["conformance/capture/brokers.py"]


def test_helpers_have_one_home() -> None:
    defs: dict[str, list[str]] = {}
    for f, node in _functions():
        defs.setdefault(node.name, []).append(f)
    assert defs["free_port"] == ["conformance/host/ports.py"]
    progress = [
        f"{f}:{n.name}"
        for f, tree in TREES.items()
        for n in ast.walk(tree)
        if isinstance(n, ast.ClassDef) and "Progress" in n.name
    ]
    assert progress == ["conformance/host/progress.py:Progress"], progress


_FORMAT = re.compile(r"^kafka-conformance/[a-z-]+[/-][0-9]+$")


def test_format_strings_are_defined_once() -> None:
    seen: dict[str, list[str]] = {}
    for f, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if _FORMAT.match(node.value):
                    seen.setdefault(node.value, []).append(f"{f}:{node.lineno}")
    assert seen, "no format strings found (the scan is broken)"
    twice = {k: v for k, v in seen.items() if len(v) > 1}
    assert not twice, twice


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """The scanners themselves: a forbidden verb, a restated codec list and a to_json that
    returns a dict are seen."""
    src = (
        "def encode_thing(x): ...\n"
        "def parse(x): ...\n"
        "C = ('none', 'gzip', 'zstd')\n"
        "class A:\n    def to_json(self) -> dict: ...\n"
    )
    tree = ast.parse(src)
    names = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    assert [n for n in names if _forbidden(n)] == ["encode_thing", "parse"]
    lists = [n for n in ast.walk(tree) if isinstance(n, ast.Tuple)]
    assert {e.value for e in lists[0].elts} & _CODEC_NAMES == {"none", "gzip", "zstd"}
    to_json = next(
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "to_json"
    )
    assert _annotation(to_json) == "dict"
    assert not _forbidden("read_batch") and not _forbidden("write_batch")
    assert not _forbidden("decode")
