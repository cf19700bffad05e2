"""The protocol the kit's client speaks: Kafka's own message definitions, newest first.

A :class:`Protocol` is a list of :class:`~conformance.messages.schema.Schemas` (one per Kafka
release, the newest first: ``jvm.message_defs.client_protocol`` reads them from the
``kafka-clients`` jars). A message of an API at a version is read and written with the first
release whose definition has that version: Kafka 4.0 dropped old versions from its definitions
(Produce v0-v2, Fetch v0-v3, ListOffsets v0, ...), which an older release still has, so the
client speaks every version any of them defines. The versions the client offers of an API are
the union of the releases' ranges (:meth:`Protocol.versions`; contiguous in practice, since
each release's range ends where a newer one's continues).

API names are the definitions' (``ProduceRequest`` -> ``Produce``); ``Protocol.key`` maps a
name to its apiKey.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.messages.schema import MessageSchema, Schemas, Versions
from conformance.messages.value import Message

__all__ = ["Protocol", "UnknownApiError", "build"]


class UnknownApiError(KeyError):
    """An API (or a version of it) none of the protocol's definitions has."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown API"


class Protocol:
    """The definitions of one or more Kafka releases, newest first."""

    def __init__(self, releases: Sequence[Schemas]) -> None:
        if not releases:
            raise ValueError("a protocol needs the definitions of at least one release")
        self.releases = tuple(releases)
        newest = self.releases[0]
        self.header = newest["RequestHeader"], newest["ResponseHeader"]
        self._keys: dict[str, int] = {}
        for schemas in self.releases:
            for name in schemas:
                s = schemas[name]
                if s.type == "request" and s.api_key is not None and name.endswith("Request"):
                    self._keys.setdefault(name.removesuffix("Request"), s.api_key)
        self._names = {key: name for name, key in self._keys.items()}

    @property
    def label(self) -> str:
        return ", ".join(s.label for s in self.releases)

    def key(self, api: str | int) -> int:
        """The apiKey of ``api`` (a name such as ``"Produce"``, or a key)."""
        if isinstance(api, int):
            return api
        try:
            return self._keys[api]
        except KeyError:
            raise UnknownApiError(f"no API {api!r} in the definitions of {self.label}") from None

    def name(self, api_key: int) -> str:
        """The name of ``api_key`` (``"API 99"`` for a key no definition has)."""
        return self._names.get(api_key, f"API {api_key}")

    def versions(self, api: str | int) -> Versions:
        """Every version of ``api``'s requests some release defines (lowest..highest)."""
        key = self.key(api)
        ranges = [s.valid_versions for s in self._all(key, "request")]
        if not ranges:
            raise UnknownApiError(f"no API {api!r} in the definitions of {self.label}")
        return Versions(min(r.lowest for r in ranges), max(r.highest for r in ranges))

    def _all(self, api_key: int, kind: str) -> list[MessageSchema]:
        out = []
        for schemas in self.releases:
            found = schemas.find_all(api_key, kind)
            if len(found) == 1:
                out.append(found[0])
        return out

    def schema(self, api: str | int, kind: str, version: int) -> MessageSchema:
        """The ``kind`` ("request" or "response") definition of ``api`` at ``version``: the
        newest release's that has the version."""
        key = self.key(api)
        for s in self._all(key, kind):
            if version in s.valid_versions:
                return s
        raise UnknownApiError(f"no {self.name(key)} {kind} v{version} in {self.label}")

    def request(self, api: str | int, version: int) -> MessageSchema:
        return self.schema(api, "request", version)

    def response(self, api: str | int, version: int) -> MessageSchema:
        return self.schema(api, "response", version)

    def new(self, api: str | int, version: int, **values: Any) -> Message:
        """A request of ``api`` at ``version`` with ``values`` set where the version has the
        field (:func:`build`)."""
        schema = self.request(api, version)
        return build(schema.struct, version, values)

    def __repr__(self) -> str:
        return f"Protocol({self.label})"


def build(struct: Any, version: int, values: dict[str, Any]) -> Message:
    """A :class:`Message` of ``struct`` holding ``values`` for the fields ``version`` has
    (the others stay at their defaults, so one call serves every version and every release:
    a field an older release's definition does not have is one its versions lack); a value
    that is a dict (or a list of dicts) for a struct (or struct-array) field is built the
    same way."""
    m = Message(struct)
    fields = {f.name: f for f in struct.fields}
    for name, value in values.items():
        f = fields.get(name)
        if f is None or version not in f.versions:
            continue
        if f.struct is not None and isinstance(value, dict):
            value = build(f.struct, version, value)
        elif f.struct is not None and isinstance(value, list):
            value = [build(f.struct, version, v) if isinstance(v, dict) else v for v in value]
        m[name] = value
    return m
