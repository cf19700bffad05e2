"""Version negotiation as Java's ``NetworkClient`` does it, sans-IO.

1. ApiVersions at the newest version the client's definitions have
   (:func:`api_versions_request`);
2. an answer with UNSUPPORTED_VERSION carries the broker's ranges in the v0 layout: the client
   asks again at the highest ApiVersions version the broker lists, if that is below the one
   it asked (:func:`read_api_versions` returns a :class:`Retry`); any other error, or
   UNSUPPORTED_VERSION without a lower ApiVersions version, is a
   :class:`NegotiationError`;
3. per API, the versions both speak are the intersection of the broker's range and the
   client's (:meth:`BrokerVersions.both`; a caller narrows it further with its own range),
   and a request goes at the highest of them (:meth:`BrokerVersions.newest`).

A range that is no range (lowest above highest, a negative lowest) or an API listed twice is
a finding of its own (:attr:`BrokerVersions.findings`, one line each), and the API is taken
as not offered: nothing is sent at a version the broker stated two ways or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.broker.codes import CODES, error_name
from conformance.client.protocol import Protocol, UnknownApiError
from conformance.messages.protocol import API_VERSIONS
from conformance.messages.schema import Versions
from conformance.messages.value import Message

__all__ = [
    "BrokerVersions",
    "NegotiationError",
    "Retry",
    "api_versions_request",
    "read_api_versions",
]

_UNSUPPORTED_VERSION = CODES["UNSUPPORTED_VERSION"]
#: the client software the ApiVersions request names (v3+)
SOFTWARE_NAME = "kafka-conformance"


class NegotiationError(Exception):
    """The broker's ApiVersions answer leaves no way to talk to it (one-line reason)."""


@dataclass(frozen=True)
class Retry:
    """Ask ApiVersions again at ``version`` (the broker's highest)."""

    version: int


def api_versions_request(
    protocol: Protocol, version: int | None = None, software_version: str = "0"
) -> tuple[int, Message]:
    """(version, body) of an ApiVersions request (default: the newest the definitions
    have)."""
    v = protocol.versions(API_VERSIONS).highest if version is None else version
    body = protocol.new(
        API_VERSIONS,
        v,
        ClientSoftwareName=SOFTWARE_NAME,
        ClientSoftwareVersion=software_version,
    )
    return v, body


@dataclass
class BrokerVersions:
    """What a broker said it speaks: apiKey -> (lowest, highest), the ApiVersions version
    that answered, and the findings about ranges that are not ranges."""

    ranges: dict[int, tuple[int, int]]
    api_versions_version: int
    findings: list[str] = field(default_factory=list)

    def both(self, protocol: Protocol, api: str | int, within: Versions | None = None) -> Versions:
        """The versions of ``api`` the broker and the client both speak (and ``within``, the
        caller's own bounds); empty when none."""
        key = protocol.key(api)
        theirs = self.ranges.get(key)
        if theirs is None:
            return Versions(0, -1)
        try:
            ours = protocol.versions(key)
        except UnknownApiError:
            return Versions(0, -1)
        out = ours.intersect(Versions(*theirs))
        return out if within is None else out.intersect(within)

    def newest(self, protocol: Protocol, api: str | int, within: Versions | None = None) -> int:
        """The highest version both speak; :class:`NegotiationError` when there is none."""
        both = self.both(protocol, api, within)
        if both.empty:
            key = protocol.key(api)
            theirs = self.ranges.get(key)
            said = "does not offer it" if theirs is None else f"offers v{theirs[0]}-{theirs[1]}"
            ours = f"v{within.lowest}-{within.highest}" if within is not None else "its own"
            raise NegotiationError(
                f"no {protocol.name(key)} version both speak (the broker {said}; "
                f"the kit speaks {ours} of {protocol.versions(key)})"
            )
        return both.highest


def read_api_versions(
    protocol: Protocol, asked: int, read_version: int, body: Message
) -> BrokerVersions | Retry:
    """The broker's answer to ApiVersions v``asked`` (read at ``read_version``: 0 when it
    fell back to the v0 layout)."""
    code = int(body["ErrorCode"])
    listed: dict[int, tuple[int, int]] = {}
    findings: list[str] = []
    twice: set[int] = set()
    for entry in body["ApiKeys"] or []:
        key, low, high = int(entry["ApiKey"]), int(entry["MinVersion"]), int(entry["MaxVersion"])
        name = protocol.name(key)
        if key in listed or key in twice:
            if key not in twice:
                findings.append(f"ApiVersions lists {name} twice: the kit sends none of it")
            twice.add(key)
            listed.pop(key, None)
            continue
        if low < 0 or low > high:
            findings.append(
                f"ApiVersions: {name} v{low}-{high} is not a range of versions "
                "(the kit takes the API as not offered)"
            )
            continue
        listed[key] = (low, high)
    if code == _UNSUPPORTED_VERSION:
        theirs = listed.get(API_VERSIONS)
        if theirs is not None and theirs[1] < asked:
            ours = protocol.versions(API_VERSIONS)
            retry = min(theirs[1], ours.highest)
            if retry >= ours.lowest:
                return Retry(retry)
        raise NegotiationError(
            f"ApiVersions v{asked} answered UNSUPPORTED_VERSION"
            + (
                ""
                if theirs is None
                else f" while the broker lists ApiVersions v{theirs[0]}-{theirs[1]}"
            )
        )
    if code != 0:
        raise NegotiationError(f"ApiVersions v{asked} answered {error_name(code)}")
    return BrokerVersions(listed, read_version, findings)
