"""What ``--index-sanity-check`` says of a failing index, per release: the message templates
of ``DumpFormat.index_sanity_texts`` (``{path}``, ``{last}``, ``{base}``, ``{first}``,
``{length}``; ``entries.EntryDumper._sanity_check`` fills them), which ``formats.CHANGES``
assigns to releases (:data:`ROWS`).

===============  ============================================  ==============================
releases         exception                                     texts
===============  ============================================  ==============================
0.10.2 - 1.0     ``IllegalArgumentException`` (Scala           :data:`SANITY_REQUIRE`
                 ``require``)
1.1              ``kafka.log.CorruptIndexException``           :data:`SANITY_1_1`
2.0 - 3.4        ``kafka.log.CorruptIndexException``           :data:`SANITY_SCALA`
3.5+             the storage module's                          :data:`SANITY_JAVA`
                 ``CorruptIndexException``
===============  ============================================  ==============================
"""

from __future__ import annotations

from typing import Any

#: --index-sanity-check messages of the storage module's Java indexes (3.5+)
SANITY_JAVA: dict[str, str] = {
    "offset-last": (
        "Corrupt index found, index file {path} has non-zero size but the last offset is {last} "
        "which is less than the base offset {base}"
    ),
    "offset-size": (
        "Index file {path} is corrupt, found {length} bytes which is neither positive nor a "
        "multiple of 8"
    ),
    "time-timestamp": (
        "Corrupt time index found, time index file ({path}) has non-zero size but the last "
        "timestamp is {last} which is less than the first timestamp {first}"
    ),
    "time-offset": (
        "Corrupt time index found, time index file ({path}) has non-zero size but the last "
        "offset is {last} which is less than the first offset {base}"
    ),
    "time-size": (
        "Time index file {path} is corrupt, found {length} bytes which is neither positive nor "
        "a multiple of 12"
    ),
}


#: --index-sanity-check messages of the Scala indexes (2.0 - 3.4): the offset index's path in
#: parentheses, the offset index's and the sizes' messages ending with '.'
SANITY_SCALA: dict[str, str] = {
    **SANITY_JAVA,
    "offset-last": (
        "Corrupt index found, index file ({path}) has non-zero size but the last offset is "
        "{last} which is less than the base offset {base}."
    ),
    "offset-size": SANITY_JAVA["offset-size"] + ".",
    "time-size": SANITY_JAVA["time-size"] + ".",
}
#: 1.1: an offset index's last offset must be above its base offset
SANITY_1_1: dict[str, str] = {
    **SANITY_SCALA,
    "offset-last": (
        "Corrupt index found, index file ({path}) has non-zero size but the last offset is "
        "{last} which is no greater than the base offset {base}."
    ),
}
#: up to 1.0: Scala ``require`` (IllegalArgumentException, 'requirement failed: ')
SANITY_REQUIRE: dict[str, str] = {
    "offset-last": (
        "requirement failed: Corrupt index found, index file ({path}) has non-zero size but "
        "the last offset is {last} which is no larger than the base offset {base}."
    ),
    "offset-size": (
        "requirement failed: Index file {path} is corrupt, found {length} bytes which is not "
        "positive or not a multiple of 8."
    ),
    "time-timestamp": (
        "requirement failed: Corrupt time index found, time index file ({path}) has non-zero "
        "size but the last timestamp is {last} which is no larger than the first timestamp "
        "{first}"
    ),
    "time-offset": (
        "requirement failed: Corrupt time index found, time index file ({path}) has non-zero "
        "size but the last offset is {last} which is smaller than the first offset {base}"
    ),
    "time-size": (
        "requirement failed: Time index file {path} is corrupt, found {length} bytes which is "
        "not positive or not a multiple of 12."
    ),
}

#: the ``formats.CHANGES`` rows of the sanity check: (since, Kafka change, what, facts); 0.10.2's
#: facts are in ``formats.BASE``, 3.5's texts in its storage module row (KAFKA-14480)
ROWS: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    (
        "1.1",
        "KAFKA-6324 (commit a5cd34d)",
        "index sanity failures are kafka.log.CorruptIndexException, not 'requirement failed: "
        "...' (IllegalArgumentException); new texts ('no greater than the base offset')",
        {"index_exception": "kafka.log.CorruptIndexException", "index_sanity_texts": SANITY_1_1},
    ),
    (
        "2.0",
        "KAFKA-7076 (commit c5e7bef)",
        "an offset index whose last offset is its base offset passes the sanity check "
        "('less than the base offset')",
        {"index_last_equal_fails": False, "index_sanity_texts": SANITY_SCALA},
    ),
)
