/**
 * The structures the hook (library.js) fills: what the library's consumer delivered (JSDoc
 * types), and the options the kit passed. adapter.js writes them as the consume document
 * (docs/adapter-protocol.md of kafka-conformance, "The consumer side"). You should not need to
 * edit it. Node.js 16 or later, standard library only.
 */
'use strict';

/** The timestamp types Kafka reports (`ConsumerRecord.timestampType()`). */
const TIMESTAMP_TYPES = /** @type {const} */ (['CreateTime', 'LogAppendTime', 'NoTimestampType']);

// ---------------------------------------------------------------------------------------------
// Plain objects; 64-bit fields (offsets, timestamps) are `bigint` (or a safe-integer number).

/**
 * @typedef {object} Options  what the kit asked for: `consume --bootstrap ... --topic ...`
 * @property {string} bootstrap  "127.0.0.1:PORT": the kit's fake broker
 * @property {string} topic
 * @property {number} partition
 * @property {string} start  "earliest", or an offset to start from (the kit passes "earliest")
 * @property {'read_uncommitted' | 'read_committed'} isolation  the consumer's isolation.level
 * @property {number} timeoutMs  stop at this budget (milliseconds) and report
 *   `{ class: 'timeout', message: null }`
 * @property {string | null} group  the group id to use when the consumer subscribes (joins a
 *   group) instead of assigning the partition; the kit's check never passes it (null: use any
 *   id). Either way works: the fake broker is also the group coordinator, of a group of one
 *
 * @typedef {object} Header
 * @property {string} key
 * @property {Uint8Array | null} value
 *
 * @typedef {object} Record  one delivered record, as the library's consumer handed it out
 * @property {bigint} offset
 * @property {bigint} timestamp  -1n when the record has none, as Kafka reports it
 * @property {'CreateTime' | 'LogAppendTime' | 'NoTimestampType'} timestampType  of TIMESTAMP_TYPES
 * @property {Uint8Array | null} key  null = a null key; an empty Uint8Array = an empty one
 * @property {Uint8Array | null} value
 * @property {Header[]} headers
 *   A field the library does not expose may be left undefined if its key is listed in OMITS;
 *   it is then left out of the document.
 *
 * @typedef {object} ConsumeError  the error that stopped the consumer
 * @property {string} class  the library's error name (or Kafka's class name, e.g.
 *   "org.apache.kafka.common.KafkaException", when the capabilities declare ERROR_CLASSES
 *   other than "none"); "timeout" when the budget ran out
 * @property {string | null} [message]  its text
 *
 * @typedef {object} Consumed  what `consume(options)` in library.js returns (or resolves to)
 * @property {Record[]} records  every record delivered, in delivery order
 * @property {ConsumeError | null} [error]  null: the consumer reached the end of the partition
 */

module.exports = { TIMESTAMP_TYPES };
