// @ts-check
/*
 * The hook of this kafka-conformance producer adapter: the ONE file you edit.
 *
 * Declare what your Kafka client library's producer and batch builder do (the constants
 * below), then send a plan in `produce()` and build a batch in `encode()`. adapter.js does the
 * rest (the protocol, reading the plan, the produce-result document); see its top comment for
 * how to run and check the adapter. The types (Plan, Produced, Delivery) are documented in
 * plan.js. `check-producer` starts a real Kafka broker, creates the plan's topic, runs
 * `node adapter.js produce --bootstrap HOST:PORT --plan FILE`, records what crossed the wire
 * and judges it with the broker's verdict and Kafka's consumer (docs/producer-check.md).
 *
 * The rules (docs/adapter-protocol.md of kafka-conformance, "Producer side"):
 * - Use the library's real producer with the plan's settings and the library's own defaults
 *   for everything else: what users run is what is judged.
 * - Send every record in plan order; wait until each is acknowledged or failed (flush); end
 *   the transaction if the plan has one; close the producer.
 * - Report per record what the library reported (partition, offset, error text). A record the
 *   library refused before sending keeps `partition`/`offset` null and its `error` set.
 * - Leave out of a capability object what the library cannot do (set the flag to false or
 *   leave out the codec): those scenarios are then unsupported, not failures.
 * - Either side may be absent: set PRODUCE = null (no producer) or ENCODE = null (no batch
 *   builder exposed), and leave its function as it is.
 * - 64-bit values (timestamps, offsets, producer ids) are BigInts: never let them pass through
 *   a Number, which loses precision above 2^53.
 */
'use strict';

/** The implementation's name in reports (e.g. "my-library-producer"). */
const NAME = 'my-producer';
/** The library's version (e.g. require('your-library/package.json').version); "" = unknown. */
const VERSION = '';

/**
 * The producer side (`produce`), or null if the library has no producer. Its keys:
 *   codecs       the compression types it can send, of none, gzip, snappy, lz4, zstd
 *   idempotence  whether it has the idempotent producer (enable.idempotence)
 *   transactions whether it has transactions (transactional.id, commit, abort)
 *   headers      whether records can carry headers
 *   magics       the message formats it writes; must hold 2
 *   partitioner  the name of its default partitioner for records without a partition, from
 *                `kafka-conformance partition --list` (e.g. "java", "librdkafka:consistent_random"),
 *                or a composition of its parts when no name fits (e.g. "murmur2|unsigned|mod")
 *   defaults     its real defaults: {idempotence: boolean, acks: -1|0|1, linger_ms: number,
 *                batch_size: number}; "none" for a linger or batch size the library does not have
 *   batching     how the records of a plan group (plan.groups) go in one batch: "call" (a batch
 *                call), "linger" (sent back to back, a linger gathers them), "none" (it cannot:
 *                those scenarios are then unsupported)
 *   notes        free text for the report
 * @type {Record<string, unknown> | null}
 */
const PRODUCE = {
  codecs: ['none', 'gzip', 'snappy', 'lz4', 'zstd'],
  idempotence: true,
  transactions: true,
  headers: true,
  magics: [2],
  partitioner: 'java',
  defaults: { idempotence: true, acks: -1, linger_ms: 5, batch_size: 16384 },
  batching: 'linger',
  notes: '',
};
/**
 * The encoder side (`encode`: the library's batch builder on its own), or null. The same keys
 * as PRODUCE but partitioner and defaults.
 * @type {Record<string, unknown> | null}
 */
const ENCODE = {
  codecs: ['none', 'gzip', 'snappy', 'lz4', 'zstd'],
  idempotence: true,
  transactions: true,
  headers: true,
  magics: [2],
  notes: '',
};

/**
 * Sends every record of `plan` to `bootstrap` with your library's producer and returns what it
 * reported: one Delivery per plan record, in plan order.
 *
 * @param {string} bootstrap  "HOST:PORT" of the kit's broker
 * @param {import('./plan').Plan} plan
 * @returns {import('./plan').Produced | Promise<import('./plan').Produced>}  a Produced (an
 *   async function returning one works too). Throw only for a crash (the adapter exits
 *   non-zero, reported as an error); records that failed are a verdict.
 */
// eslint-disable-next-line no-unused-vars
function produce(bootstrap, plan) {
  throw new Error('library.js: produce() is not implemented: send the plan with your library\'s producer');

  // Replace the throw with your library's producer, for example (kafkajs, in an
  // `async function produce`; kafkajs has no linger or batch size, sends one request per
  // send(), keeps headers as an object and compresses with gzip only unless codec packages are
  // registered, so it would declare PRODUCE accordingly and say so in notes):
  //
  // const { Kafka, CompressionTypes, logLevel } = require('kafkajs');
  // const s = plan.settings;
  // const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING,
  //                           requestTimeout: s.timeoutMs });
  // const producer = kafka.producer({
  //   idempotent: s.idempotence || s.transaction !== null,
  //   transactionalId: s.transaction?.id,
  //   maxInFlightRequests: s.idempotence || s.transaction ? 1 : undefined,
  // });
  // const compression = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP,
  //   snappy: CompressionTypes.Snappy, lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD }[s.codec];
  // /** @type {import('./plan').Produced} */
  // const out = { records: [], error: null };
  // try {
  //   await producer.connect();
  // } catch (e) {
  //   out.error = String(e);
  //   out.records = plan.records.map(() => ({ partition: null, offset: null, error: String(e) }));
  //   return out;
  // }
  // const sender = s.transaction ? await producer.transaction() : producer;
  // for (const r of plan.records) {
  //   try {
  //     const [meta] = await sender.send({
  //       topic: plan.topic, acks: s.acks, timeout: s.timeoutMs, compression,
  //       messages: [{
  //         key: r.key, value: r.value, partition: r.partition ?? undefined,
  //         timestamp: r.timestamp === null ? undefined : String(r.timestamp),
  //         headers: Object.fromEntries(r.headers.map((h) => [h.key, h.value ?? undefined])),
  //       }],
  //     });
  //     out.records.push({ partition: meta.partition, offset: BigInt(meta.baseOffset), error: null });
  //   } catch (e) {
  //     out.records.push({ partition: null, offset: null, error: String(e) });
  //   }
  // }
  // if (s.transaction) {
  //   try {
  //     await (s.transaction.end === 'commit' ? sender.commit() : sender.abort());
  //   } catch (e) {
  //     out.error = String(e);
  //   }
  // }
  // await producer.disconnect();
  // return out;
}

/**
 * The bytes of the ONE record batch your library's batch builder makes from the plan's
 * records, with `plan.settings.codec` and the header fields of `plan.batch` (base offset,
 * producer id and epoch, base sequence, transactional, partition leader epoch).
 *
 * Replace the throw with the builder call; if the library refuses the plan, throw (the adapter
 * exits non-zero with the reason on stderr). A library whose builder is not public (kafkajs's
 * is internal) sets ENCODE = null instead.
 *
 * @param {import('./plan').Plan} plan
 * @returns {Uint8Array | Promise<Uint8Array>}  a Buffer or Uint8Array (or a promise of one)
 */
// eslint-disable-next-line no-unused-vars
function encode(plan) {
  throw new Error('library.js: encode() is not implemented: build the batch with your library\'s builder');
}

module.exports = {
  NAME,
  VERSION,
  PRODUCE,
  ENCODE,
  produce,
  encode,
};
