"""kafka-conformance consumer adapter for aiokafka (PyPI `aiokafka`, pinned in
requirements.txt): the `consume` side of docs/adapter-protocol.md.

`aiokafka.AIOKafkaConsumer` with its defaults (check_crcs=True, fetch sizes, api_version
auto), no group (group_id=None, enable_auto_commit=False) and the given isolation level;
`assign([tp])`, `seek_to_beginning`/`seek`, then `getmany()` until `position(tp)` reaches
`end_offsets` (a ListOffsets(latest) with the consumer's isolation level: the high watermark,
or the last stable offset for read_committed) or the deadline. A delivered ConsumerRecord
becomes a record; an exception raised by the consumer ends the run and is reported with its
class name (aiokafka.errors.X). The whole run is one asyncio.run(): the consumer is stopped
(its fetcher and connection tasks cancelled) before the loop closes, and every await is
bounded by the deadline.

Usage: consumer.py capabilities | consume --bootstrap H:P --topic T --partition P --from O ...
"""

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-common"))

import aiokafka  # noqa: E402
import consume_protocol as cp  # noqa: E402
from aiokafka import AIOKafkaConsumer, TopicPartition  # noqa: E402

# aiokafka's ConsumerRecord.timestamp_type: 0 CreateTime, 1 LogAppendTime (magic 1 and 2);
# magic 0 records have timestamp None and timestamp_type None
TS_TYPES = {0: "CreateTime", 1: "LogAppendTime"}


def capabilities():
    return {
        "name": "aiokafka",
        "version": aiokafka.__version__,
        "notes": "AIOKafkaConsumer defaults (check_crcs=True, max_partition_fetch_bytes 1 MiB, "
        "fetch_max_bytes 50 MiB, api_version auto), no group (assign), enable_auto_commit=False",
    }


def _record(m):
    if m.timestamp is None or m.timestamp_type not in TS_TYPES:
        ts, ts_type = -1, "NoTimestampType"
    else:
        ts, ts_type = m.timestamp, TS_TYPES[m.timestamp_type]
    return cp.record(m.offset, ts, ts_type, m.key, m.value, m.headers)


class _Timeout(Exception):
    pass


async def _bounded(deadline, aw):
    """`aw`, cancelled when the deadline passes (-> _Timeout)."""
    left = deadline.left_ms()
    if left <= 0:
        if asyncio.iscoroutine(aw):
            aw.close()
        raise _Timeout
    try:
        return await asyncio.wait_for(aw, left / 1000)
    except TimeoutError:
        # wait_for's timer may fire a little before the deadline (the loop's clock
        # resolution, left_ms rounding down): within 50 ms of it, that is the deadline
        if deadline.left_ms() < 50:
            raise _Timeout from None
        raise


async def _consume(args):
    deadline = cp.Deadline(args.timeout_ms)
    records = []
    consumer = None
    try:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=args.bootstrap,
            enable_auto_commit=False,
            isolation_level=args.isolation,
            client_id="kafka-conformance-aiokafka",
        )
        await _bounded(deadline, consumer.start())
        tp = TopicPartition(args.topic, args.partition)
        consumer.assign([tp])
        if args.start == "earliest":
            await _bounded(deadline, consumer.seek_to_beginning(tp))
        else:
            consumer.seek(tp, int(args.start))
        end = (await _bounded(deadline, consumer.end_offsets([tp])))[tp]
        while await _bounded(deadline, consumer.position(tp)) < end:
            if deadline.passed():
                raise _Timeout
            polled = await _bounded(
                deadline, consumer.getmany(tp, timeout_ms=min(200, deadline.left_ms()))
            )
            for m in polled.get(tp, []):
                records.append(_record(m))
    except _Timeout:
        return cp.timeout_document(records, args.timeout_ms)
    except Exception as e:  # noqa: BLE001 - every library error is a verdict
        return cp.document(records, f"{type(e).__module__}.{type(e).__name__}", str(e))
    finally:
        if consumer is not None:
            try:
                await asyncio.wait_for(consumer.stop(), 5)
            except Exception:  # noqa: BLE001 - the document is already decided
                pass
    return cp.document(records)


def consume(args):
    return asyncio.run(_consume(args))


if __name__ == "__main__":
    sys.exit(cp.main(capabilities, consume))
