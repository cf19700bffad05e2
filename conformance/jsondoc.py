"""JSON documents as the kit writes them: ``to_dict()`` is the document, ``to_json()`` its text.

Every object of the kit with a JSON form (a decode verdict, an error, a finding, a report)
has both: ``to_dict()`` returns the document as plain Python values (dicts, lists, strings,
numbers, None), ``to_json()`` returns it as the kit's JSON text, written by :func:`json_text`:
one line, no spaces, ASCII only (anything else as ``\\u`` escapes), keys in document order.
That text is the canonical form of docs/canonical-json.md, so ``result.to_json()`` is exactly
what ``kafka-conformance decode --json`` prints for the same input (without the newline).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JsonDocument", "json_text", "read_json"]


def read_json(text: str) -> Any:
    """The JSON value of ``text``, from an untrusted program: ``ValueError`` for anything that
    is not JSON, including nesting too deep for the parser (which
    ``json.loads`` reports as ``RecursionError``: ``[`` a million times)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


def json_text(doc: Any) -> str:
    """``doc`` as the kit's JSON text: one line, ASCII-safe, key order preserved."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True)


class JsonDocument:
    """Mixin: a class that defines ``to_dict()`` gets ``to_json()``, the text of that dict."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_json(self) -> str:
        """The document as the kit's JSON text (:func:`json_text` of :meth:`to_dict`)."""
        return json_text(self.to_dict())
