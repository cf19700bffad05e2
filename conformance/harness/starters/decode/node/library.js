// @ts-check
/*
 * The hook of this kafka-conformance adapter: the ONE file you edit.
 *
 * Call your Kafka client library in `decode()` below and declare what it supports in the
 * constants. adapter.js (the protocol: `capabilities`, `decode --as`, `serve`, the canonical
 * JSON) calls this file; you should not need to edit it. The types you fill (Decoded, Batch,
 * Record, Header, Control, DecodeError) are documented in decoded.js.
 *
 * The protocol's rules (docs/adapter-protocol.md of kafka-conformance):
 * - Report only what the library decoded. Never parse the bytes yourself to fill a field the
 *   library does not expose: leave the field out and list its key in OMITS instead. The ONE
 *   exception: you may read a batch's length field (bytes 8..11 at the batch's position,
 *   big-endian int32; size = 12 + length) to compute `position` and `batchIndex`; the helper
 *   batchPosition(data, index) from decoded.js does exactly that.
 * - Declare the library's real defaults (CRC checking, error behaviour) rather than configure
 *   it to look conformant.
 * - Map the library's exceptions to the Kafka exception class they correspond to (see
 *   kafkaExceptionFor below) and put the library's own error text in `message`.
 * - 64-bit values (offsets, timestamps, producer ids, delete horizons) are BigInts: never let
 *   them pass through a Number, which loses precision above 2^53.
 */
'use strict';

// eslint-disable-next-line no-unused-vars
const { batchPosition } = require('./decoded');

/** Implementation name shown in reports (e.g. your library's package name). */
const NAME = 'my-adapter';
/** The library's version (e.g. require('your-library/package.json').version); "" = unknown. */
const VERSION = '';
/** Message formats (magic values) the library decodes; a case with another magic is unsupported. */
const MAGICS = [0, 1, 2];
/** Compression codecs it decodes, of none, gzip, snappy, lz4, zstd; a case needing another is unsupported. */
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
/** Whether it verifies checksums BY DEFAULT (false: cases whose verdict is a CRC error are unsupported). */
const CHECKS_CRC = true;
/**
 * What a batch in which an error happens still delivers:
 * "streaming": the records before the error, as Kafka's consumer does;
 * "eager": a compressed batch may deliver fewer of them, down to none;
 * "atomic": any batch, compressed or not, may deliver a prefix of its records, down to none.
 */
const ERROR_SEMANTICS = 'streaming';
/** Whether `file` mode (a whole .log segment) is decoded with FileRecords rules. */
const FILE_SEMANTICS = true;
/**
 * How closely `kafkaException` matches Kafka's: "exact" (class and message), "class" (class
 * only), "family" (corrupt / compression / resource), "none" (any error will do). A library
 * that only reports a bare EOF should say CorruptRecordException and declare "none".
 */
const ERROR_CLASSES = 'class';
/**
 * true: when decoding fails, the failing batch's header is in `batches` (as Kafka lists it).
 * false: the library returns an error without that header, so that batch may be missing.
 */
const LISTS_FAILING_BATCH = true;
/**
 * Batch or record keys the library does not expose, e.g. ["crc", "deleteHorizonMs"]; they are
 * left out of the document and not compared. "control.coordinatorEpoch"-style entries leave out
 * one field of a record's `control` object.
 * @type {string[]}
 */
const OMITS = [];
/** Free text for the report (e.g. "CRC checking is off by default in this library"). */
const NOTES = '';

/**
 * Decodes `data` with your library.
 *
 * @param {Buffer} data  a fetch response's `records` field (mode "memory") or a whole .log
 *   segment (mode "file")
 * @param {'memory' | 'file'} mode
 * @returns {import('./decoded').Decoded | Promise<import('./decoded').Decoded>}  a Decoded (an
 *   async function returning one works too). Return `error` for bad bytes: rejecting them is a
 *   verdict. Throw only for a bug of the adapter (it exits non-zero, reported as an error).
 */
function decode(data, mode) {
  throw new Error('decode is not implemented yet: call your library in library.js');

  // An example, with an imaginary library `kafkaLib` whose batches() throws on bad bytes:
  //
  // /** @type {import('./decoded').Batch[]} */
  // const batches = [];
  // try {
  //   for (const b of kafkaLib.batches(data, { file: mode === 'file' })) {
  //     batches.push({
  //       position: batchPosition(data, batches.length), // counts, not decoding: allowed
  //       sizeInBytes: b.sizeInBytes,
  //       magic: b.magic,
  //       crc: b.crc,                         // unsigned; a signed int32 is converted
  //       attributes: b.attributes,
  //       compression: b.compression,         // "none", "gzip", ...
  //       timestampType: b.timestampType,     // "CreateTime" | "LogAppendTime" | "NoTimestampType"
  //       lastOffset: BigInt(b.lastOffset),   // 64-bit: BigInt (keep the library's, if BigInt)
  //       maxTimestamp: BigInt(b.maxTimestamp),
  //       // magic 2 only: baseOffset, lastOffsetDelta, partitionLeaderEpoch, baseTimestamp,
  //       // deleteHorizonMs (or null), isTransactional, isControl, producerId, producerEpoch,
  //       // baseSequence, lastSequence, recordsCount
  //       records: [],
  //     });
  //     for (const r of b.records()) {
  //       batches[batches.length - 1].records.push({
  //         offset: BigInt(r.offset),
  //         timestamp: BigInt(r.timestamp),
  //         key: r.key,                       // Buffer, or null for a null key
  //         value: r.value,
  //         headers: r.headers.map((h) => ({ key: h.key, value: h.value })),
  //         control: b.isControl ? { typeId: r.controlType, type: r.controlTypeName,
  //                                  coordinatorEpoch: r.coordinatorEpoch ?? null } : null,
  //       });
  //     }
  //   }
  // } catch (e) {
  //   // the failing batch was listed (LISTS_FAILING_BATCH) if its header was decoded
  //   const batchIndex = failedInHeader ? batches.length : batches.length - 1;
  //   return {
  //     batches,
  //     error: {
  //       kafkaException: kafkaExceptionFor(e),
  //       message: e instanceof Error ? e.message : String(e),
  //       batchIndex,
  //       position: batchPosition(data, batchIndex),
  //     },
  //   };
  // }
  // return { batches, error: null };
}

/**
 * The Kafka (Java) exception class a library error corresponds to. Adapt it to the library's
 * error types; the common ones are:
 * - org.apache.kafka.common.errors.CorruptRecordException: a bad CRC, a bad size or length
 *   field, a truncated record (also: a library that only reports a bare EOF);
 * - org.apache.kafka.common.InvalidRecordException: a record whose fields are inconsistent
 *   (e.g. a bad count or a varint running past the record);
 * - java.lang.IllegalArgumentException: an unknown magic or compression codec id;
 * - org.apache.kafka.common.KafkaException: a codec (gzip, snappy, lz4, zstd) stream failed;
 * - java.nio.BufferUnderflowException: a read past the end of a buffer.
 * @param {unknown} error
 * @returns {string}
 */
// eslint-disable-next-line no-unused-vars
function kafkaExceptionFor(error) {
  return 'org.apache.kafka.common.errors.CorruptRecordException';
}

module.exports = {
  NAME,
  VERSION,
  MAGICS,
  CODECS,
  CHECKS_CRC,
  ERROR_SEMANTICS,
  FILE_SEMANTICS,
  ERROR_CLASSES,
  LISTS_FAILING_BATCH,
  OMITS,
  NOTES,
  decode,
};
