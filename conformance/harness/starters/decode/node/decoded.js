/**
 * What the hook (library.js) fills and adapter.js writes as canonical JSON: the batches a Kafka
 * client library decoded and the error that ended decoding (JSDoc types), and the one read of
 * the input an adapter may do itself (batchPosition). You should not need to edit it.
 */
'use strict';

// ---------------------------------------------------------------------------------------------
// The data the hook fills. Plain objects; 64-bit fields are `bigint` (or a safe-integer number).

/**
 * @typedef {'memory' | 'file'} Mode
 *
 * @typedef {object} Decoded  what `decode(data, mode)` in library.js returns (or resolves to)
 * @property {Batch[]} batches  in input order, including the one during which the error happened
 *   (unless LISTS_FAILING_BATCH is false and the library gives no header for it)
 * @property {DecodeError | null} [error]  set iff the library raised an error
 *
 * @typedef {object} Batch  one record batch (magic 2) or one entry / wrapper message (magic 0/1)
 * @property {number} position  byte position of the batch in the input (see batchPosition)
 * @property {number} sizeInBytes  12 + the batch's length field
 * @property {number} magic
 * @property {number} crc  the stored CRC, unsigned 32-bit (a signed int32 is converted)
 * @property {number} attributes  as stored, signed
 * @property {string} compression  none | gzip | snappy | lz4 | zstd | unknown-5/6/7
 * @property {string} timestampType  CreateTime | LogAppendTime | NoTimestampType
 * @property {bigint} lastOffset
 * @property {bigint} maxTimestamp
 * @property {bigint} [baseOffset]  this and the fields below: magic 2 only
 * @property {number} [lastOffsetDelta]
 * @property {number} [partitionLeaderEpoch]
 * @property {bigint} [baseTimestamp]
 * @property {bigint | null} [deleteHorizonMs]
 * @property {boolean} [isTransactional]
 * @property {boolean} [isControl]
 * @property {bigint} [producerId]
 * @property {number} [producerEpoch]
 * @property {number} [baseSequence]
 * @property {number} [lastSequence]
 * @property {number} [recordsCount]
 * @property {Record[]} records
 *
 * @typedef {object} Record
 * @property {bigint} offset
 * @property {bigint} timestamp
 * @property {Uint8Array | null} key  null = a null key; an empty Uint8Array = an empty one
 * @property {Uint8Array | null} value
 * @property {Header[]} headers  always [] for magic 0/1
 * @property {Control | null} [control]  only in control batches
 *
 * @typedef {object} Header
 * @property {string} key
 * @property {Uint8Array | null} value
 *
 * @typedef {object} Control
 * @property {number} typeId
 * @property {string} type  e.g. ABORT, COMMIT
 * @property {number | null} [coordinatorEpoch]  ABORT/COMMIT only
 *
 * @typedef {object} DecodeError
 * @property {string} kafkaException  the Kafka (Java) exception class it corresponds to
 * @property {string | null} message  the library's own error text
 * @property {number} batchIndex  0-based index of the batch being split or decoded
 * @property {number} position  byte position in the input where that batch starts
 */

/**
 * The byte position of entry `index` in `data`, walking the entries' length fields from 0
 * (an entry's size is 12 + the big-endian int32 at its position + 8). This is the one read of
 * the bytes an adapter may do itself: `position` and `batch_index` are counts, not decoding.
 * Returns data.length when the data ends (or a length field is negative) before that entry.
 * @param {Uint8Array} data
 * @param {number} index
 * @returns {number}
 */
function batchPosition(data, index) {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let position = 0;
  for (let i = 0; i < index; i++) {
    if (position + 12 > data.length) return data.length;
    const length = view.getInt32(position + 8, false);
    if (length < 0) return data.length;
    position = Math.min(position + 12 + length, data.length);
  }
  return position;
}

module.exports = { batchPosition };
