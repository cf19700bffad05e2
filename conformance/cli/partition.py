"""``kafka-conformance partition``: the partition each client's default partitioner gives a key,
or (``--list``) the partitioners themselves (``conformance.partitioners``)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from conformance.cli.common import add_command, plural, positive_int
from conformance.errors import PartitionerError
from conformance.partitioners import (
    HASHES,
    MAX_PARTITIONS,
    PARTITIONERS,
    POSITIVES,
    REDUCE,
    Partitioner,
    Registry,
    partitioner,
    place,
)

EXIT_OK = 0
EXIT_USAGE = 2

_EPILOG = (
    f"""\
A key is hashed as the bytes a producer's serializer makes of it: --key TEXT takes the UTF-8
bytes of TEXT (Java's StringSerializer), --key-hex its hexadecimal bytes, --null-key a record
without key. An empty key (--key '') is not a null key. "not key-determined" means that client
does not derive the partition from the key (random, sticky or round-robin: the line says
which); round-robin, sticky and random ignore every key. --list prints the partitioners
instead (no key, no --partitions): each one's name, whether a key determines the partition,
its composition, its rule as the source writes it, its null and empty keys and the clients
whose default it is, then the parts of a composition; with --json, the registry as one
document. A keyed rule is a composition HASH[(seed=N)]|POSITIVE|{REDUCE}: the hash of the key,
how it is made non-negative, the remainder by the partition count (e.g. murmur2|unsigned|mod,
(murmur2(key) >>> 0) % n); --partitioner takes a name or a composition, as a producer
adapter's capabilities do ("produce": {{"partitioner": NAME or COMPOSITION}}). A
composition hashes every non-null key; its null key is not key-determined.

exit codes:
  {EXIT_OK}  the partitions (or, with --list, the partitioners) were printed
  {EXIT_USAGE}  usage error (no key and no --list, --list with --partitions, no --partitions
     for a key, bad hexadecimal, a partition count outside 1..{MAX_PARTITIONS}, an unknown
     partitioner or a composition naming an unknown part)

partitioners (docs/partitioners.md):
"""
    + "\n".join(
        f"  {name}\n"
        + textwrap.fill(p.description, 78, initial_indent=" " * 6, subsequent_indent=" " * 6)
        for name, p in PARTITIONERS.items()
    )
    + """

examples:
  kafka-conformance partition --key order-42 --partitions 12
  kafka-conformance partition --key-hex 00ff10 --partitions 100 --partitioner java
  kafka-conformance partition --null-key --partitions 6 --json
  kafka-conformance partition --list
  kafka-conformance partition --list --json
  kafka-conformance partition --list --partitioner round-robin
  kafka-conformance partition --key order-42 --partitions 12 --partitioner 'murmur2|unsigned|mod'
"""
)


def _partition_count(text: str) -> int:
    value = positive_int(text)
    if value > MAX_PARTITIONS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_PARTITIONS}, not {value}")
    return value


def _hex_key(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not hexadecimal bytes: {text!r}") from None


def _key_shown(key: bytes | None) -> str:
    if key is None:
        return "null key"
    text = key.decode("utf-8", "backslashreplace")
    readable = text.isprintable() and "\\" not in text
    shown = f" {text!r}" if readable else ""
    return f"key {key.hex() or '(empty)'}{shown}, {plural(len(key), 'byte')}"


def _fill(text: str) -> str:
    return textwrap.fill(
        text, 78, initial_indent=" " * 4, subsequent_indent=" " * 6, break_on_hyphens=False
    )


def _spec(text: str) -> str:
    """A partitioner name or composition (``all``: every name), checked."""
    if text != "all":
        try:
            partitioner(text)
        except PartitionerError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _list(chosen: list[Partitioner], parts: bool) -> None:
    for p in chosen:
        kind = "key-determined" if p.key_determined else "ignores keys"
        print(f"{p.name} ({kind})")
        rule = p.composition.text if p.composition is not None else "none (the key is ignored)"
        print(_fill(f"composition: {rule}"))
        print(_fill(f"rule: {p.formula}"))
        print(_fill(f"null key: {p.null_key}"))
        print(_fill(f"empty key: {p.empty_key}"))
        defaults = "; ".join(u.client for u in p.used_by if u.default)
        print(_fill(f"default of: {defaults or 'no client (chosen by name only)'}"))
    if not parts:
        return
    print(f"\nparts of a composition HASH[(seed=N)]|POSITIVE|{REDUCE} (wherever a name is taken):")
    for h in HASHES.values():
        print(_fill(f"hash {h.name}{'(seed=N)' if h.seeded else ''}: {h.definition}"))
    for q in POSITIVES.values():
        print(_fill(f"positive {q.name}: {q.definition}"))
    print(_fill(f"{REDUCE}: the remainder by the partition count (of a non-negative number)"))


def _cmd_partition(args: argparse.Namespace) -> int:
    every = args.partitioner == "all"
    chosen = list(PARTITIONERS.values()) if every else [partitioner(args.partitioner)]
    if args.list:
        if args.partitions is not None:
            print("kafka-conformance partition: --list takes no --partitions", file=sys.stderr)
            return EXIT_USAGE
        if args.json:
            sys.stdout.write(Registry(tuple(chosen)).to_json() + "\n")
        else:
            _list(chosen, every)
        return EXIT_OK
    if args.partitions is None:
        print("kafka-conformance partition: --partitions N is required", file=sys.stderr)
        return EXIT_USAGE
    if args.null_key:
        key = None
    elif args.key_hex is not None:
        key = args.key_hex
    else:
        key = args.key.encode("utf-8", "surrogateescape")
    names = None if args.partitioner == "all" else (args.partitioner,)
    report = place(key, args.partitions, names)
    if args.json:
        sys.stdout.write(report.to_json() + "\n")
        return EXIT_OK
    print(f"{_key_shown(key)}; {plural(args.partitions, 'partition')}")
    width = max(len(p.partitioner) for p in report.placements)
    for p in report.placements:
        where = str(p.partition) if p.partition is not None else p.instead
        print(f"  {p.partitioner:{width}}  {where}")
    return EXIT_OK


def register(subparsers: Any) -> None:
    """Add ``partition`` to the ``kafka-conformance`` parser."""
    p = add_command(
        subparsers,
        "partition",
        "the partition each Kafka client's default partitioner gives a key (--list: the "
        "partitioners)",
        "Print the partition a record with the given key goes to under each "
        "client's partitioner (Java, librdkafka, sarama, kafkajs, kafka-go, ...), as each "
        "client computes it, or whether that client does not derive it from the key; with "
        "--list, the partitioners themselves.",
        _EPILOG,
    )
    key = p.add_mutually_exclusive_group(required=True)
    key.add_argument("--key", metavar="TEXT", help="the key: the UTF-8 bytes of TEXT")
    key.add_argument("--key-hex", type=_hex_key, metavar="HEX", help="the key as hexadecimal bytes")
    key.add_argument("--null-key", action="store_true", help="a record without key (null)")
    key.add_argument(
        "--list",
        action="store_true",
        help="no key: list the partitioners (name, key-determined or not, composition, rule, "
        "null and empty key, whose default) and the parts of a composition",
    )
    p.add_argument(
        "--partitions",
        type=_partition_count,
        metavar="N",
        help="the topic's partition count (required with a key)",
    )
    p.add_argument(
        "--partitioner",
        type=_spec,
        default="all",
        metavar="NAME|COMPOSITION|all",
        help="one partitioner (a name below, or a composition such as murmur2|unsigned|mod) "
        "or all of them (default)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON document (with --list: the registry)"
    )
    p.set_defaults(func=_cmd_partition)
