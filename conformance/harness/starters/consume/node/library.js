// @ts-check
/*
 * The hook of this kafka-conformance consumer adapter: the ONE file you edit.
 *
 * Declare what your Kafka client library's consumer does (the constants below) and run it in
 * `consume()`. adapter.js does the rest (the protocol, the consume document); see its top
 * comment for how to run and check the adapter. The types you fill (Consumed, Record, Header,
 * ConsumeError) and the Options you get are documented in consumed.js. The kit starts a fake
 * broker on 127.0.0.1 that serves one partition, then runs
 * `node adapter.js consume --bootstrap 127.0.0.1:PORT ...`; what your consumer delivers is
 * compared with what Kafka's own KafkaConsumer delivers from the same partition.
 *
 * The rules (docs/adapter-protocol.md of kafka-conformance, "The consumer side"):
 * - Run the library's real consumer with the library's own defaults (its CRC setting, its
 *   fetch sizes): what users run is what is judged.
 * - Assign the one partition, or subscribe to the topic: the fake broker is also the group
 *   coordinator and serves a group of one (the member that joins leads it and assigns itself
 *   the partition; commits are accepted, not stored), so a consumer that always joins a group
 *   works too (`options.group`: the group id, when given; the kafkajs example below joins).
 * - Report only what the library delivered. A record field the library does not expose is
 *   left undefined and its key listed in OMITS (never filled with a guess).
 * - Stop when the position reaches the end of the partition (the high watermark; the last
 *   stable offset for read_committed), when the library reports an error (return it in
 *   `error`), or at `options.timeoutMs` (`{ class: 'timeout', message: null }`).
 * - A library that crashes or hangs gives no verdict: let the exception escape (the adapter
 *   then exits non-zero), never dress a crash as a clean error.
 * - 64-bit values (offsets, timestamps) are BigInts: never let them pass through a Number,
 *   which loses precision above 2^53.
 */
'use strict';

/** The implementation's name in reports (e.g. "my-library-consumer"). */
const NAME = 'my-consumer';
/** The library's version (e.g. require('your-library/package.json').version); "" = unknown. */
const VERSION = '';
/**
 * Message formats (magics) the consumer reads; a scenario whose partition holds a batch of
 * another magic is unsupported.
 */
const MAGICS = [0, 1, 2];
/**
 * Compression codecs the consumer reads, of none, gzip, snappy, lz4, zstd; a scenario whose
 * partition holds a batch of another codec is unsupported.
 */
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
/**
 * Whether the consumer verifies checksums with the library's defaults (librdkafka's
 * check.crcs=false: false); if false, a scenario whose only fault is a checksum error is
 * unsupported.
 */
const CHECKS_CRC = true;
/**
 * What the consumer delivers from a batch in which an error happens:
 * "streaming": the records before the error, as Kafka's consumer does;
 * "eager": from a compressed batch, possibly fewer of them, down to none;
 * "atomic": from any batch, possibly fewer of them, down to none.
 */
const ERROR_SEMANTICS = 'streaming';
/**
 * How `error.class` is compared with Kafka's consumer's exception class: "none" (any error
 * will do: the default, libraries name their errors differently), "family", "class", "exact"
 * (docs/adapter-protocol.md); anything but "none" means `error.class` holds Kafka's class names.
 */
const ERROR_CLASSES = 'none';
/**
 * Record keys the library does not expose, of offset, timestamp, timestampType, key, value,
 * headers (e.g. ["timestampType"] for a message type without a timestamp type); not compared.
 * An object {"0": [...], "1": [...], "2": [...]} says it per magic of the record's batch.
 * @type {string[] | Record<string, string[]>}
 */
const OMITS = [];
/** Free text for the report (e.g. "check.crcs is off by default in this library"). */
const NOTES = '';

/**
 * Reads `options.partition` of `options.topic` from `options.bootstrap` with your library's
 * consumer, from `options.start` to the end offset, and returns what it delivered.
 *
 * @param {import('./consumed').Options} options
 * @returns {import('./consumed').Consumed | Promise<import('./consumed').Consumed>}  a Consumed
 *   (an async function returning one works too). Return `error` for what the library reported:
 *   that is a verdict. Throw only for a crash (the adapter exits non-zero, reported as an error).
 */
function consume(options) {
  throw new Error('library.js: consume() is not implemented: run your library\'s consumer there');

  // Replace the throw with your library's consumer loop, for example (kafkajs, in an
  // `async function consume`; kafkajs joins a group rather than assigning a partition, and its
  // messages carry no timestamp type and their headers as an object, so it would declare
  // OMITS = ['timestampType'] and say so in NOTES):
  //
  // const { Kafka, logLevel } = require('kafkajs');
  // const kafka = new Kafka({ brokers: [options.bootstrap], logLevel: logLevel.NOTHING });
  // const admin = kafka.admin();
  // await admin.connect();
  // const offsets = await admin.fetchTopicOffsets(options.topic);
  // await admin.disconnect();
  // const end = BigInt(offsets.find((o) => o.partition === options.partition).high);
  // const consumer = kafka.consumer({ groupId: options.group ?? 'kafka-conformance',
  //                                   readUncommitted: options.isolation === 'read_uncommitted' });
  // /** @type {import('./consumed').Consumed} */
  // const out = { records: [], error: null };
  // await consumer.connect();
  // try {
  //   await consumer.subscribe({ topics: [options.topic], fromBeginning: true });
  //   await new Promise((resolve) => {
  //     const timer = setTimeout(() => {
  //       out.error = { class: 'timeout', message: null };
  //       resolve(undefined);
  //     }, options.timeoutMs);
  //     const done = () => { clearTimeout(timer); resolve(undefined); };
  //     consumer.on(consumer.events.CRASH, ({ payload }) => {
  //       out.error = { class: payload.error.name, message: payload.error.message };
  //       done();
  //     });
  //     let position = 0n;
  //     if (position >= end) return done();
  //     consumer.run({
  //       eachBatch: async ({ batch }) => {
  //         if (batch.partition !== options.partition) return;
  //         for (const m of batch.messages) {
  //           out.records.push({
  //             offset: BigInt(m.offset),
  //             timestamp: BigInt(m.timestamp),
  //             timestampType: undefined,       // not exposed: listed in OMITS
  //             key: m.key,                     // Buffer, or null for a null key
  //             value: m.value,
  //             headers: Object.entries(m.headers ?? {}).flatMap(([key, v]) =>
  //               (Array.isArray(v) ? v : [v]).map((value) => ({
  //                 key, value: value === undefined ? null : Buffer.from(value) }))),
  //           });
  //         }
  //         position = BigInt(batch.lastOffset()) + 1n; // past skipped control records too
  //         if (position >= end) done();
  //       },
  //     });
  //   });
  // } finally {
  //   await consumer.disconnect();
  // }
  // return out;
}

module.exports = {
  NAME,
  VERSION,
  MAGICS,
  CODECS,
  CHECKS_CRC,
  ERROR_SEMANTICS,
  ERROR_CLASSES,
  OMITS,
  NOTES,
  consume,
};
