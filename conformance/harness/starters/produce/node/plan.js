// @ts-check
/**
 * The plan the kit hands a producer adapter, and what the hook returns (JSDoc types).
 *
 * readPlan turns the plan document (contract `kafka-conformance/produce-plan/1`,
 * docs/adapter-protocol.md of kafka-conformance, "Producer side") into the structures below;
 * adapter.js writes Produced as the produce-result document. `sample-plan.json` is a plan to
 * try the adapter on by hand. You should not need to edit it. Node.js 16 or later, standard
 * library only.
 */
'use strict';

const PLAN_FORMAT = 'kafka-conformance/produce-plan/1';

// ---------------------------------------------------------------------------------------------
// Plain objects; 64-bit fields (timestamps, offsets, producer ids) are `bigint`.

/**
 * @typedef {object} Header
 * @property {string} key
 * @property {Buffer | null} value
 *
 * @typedef {object} PlanRecord  one record to send, in plan order
 * @property {Buffer | null} key
 * @property {Buffer | null} value
 * @property {Header[]} headers
 * @property {bigint | null} timestamp  milliseconds; null: let the library choose (its clock)
 * @property {number | null} partition  null: the library's partitioner chooses
 *
 * @typedef {object} Transaction
 * @property {string} id  the transactional.id
 * @property {string} end  "commit" or "abort": how the transaction ends after every record is sent
 *
 * @typedef {object} Settings
 * @property {string} codec  compression type: none, gzip, snappy, lz4, zstd
 * @property {boolean} idempotence  enable.idempotence
 * @property {number} acks  -1 (all), 0 or 1
 * @property {number} lingerMs
 * @property {number} batchSize  bytes
 * @property {number} maxRequestSize  bytes
 * @property {Transaction | null} transaction
 * @property {number} timeoutMs  the budget for the whole plan (delivery and request timeouts, flush)
 *
 * @typedef {object} BatchFields  `encode` only: the header fields of the one batch to build
 * @property {number} magic
 * @property {bigint} baseOffset
 * @property {bigint} producerId
 * @property {number} producerEpoch
 * @property {number} baseSequence
 * @property {boolean} transactional
 * @property {number} partitionLeaderEpoch
 *
 * @typedef {object} Plan
 * @property {string} scenario
 * @property {string} topic  created by the kit before the adapter runs
 * @property {number} partitions
 * @property {Settings} settings
 * @property {PlanRecord[]} records
 * @property {BatchFields | null} batch  encode plans only
 * @property {Group[]} groups  runs of records to send as one batch each (the library's batch call,
 *   or back to back for its linger to gather them); empty when the plan has none
 *
 * @typedef {object} Group  records.slice(first, first + count), to send as one batch
 * @property {number} first
 * @property {number} count
 *
 * @typedef {object} Delivery  what the library reported for one plan record
 * @property {number | null} [partition]  the partition it was written to (null: not reported)
 * @property {bigint | null} [offset]  its offset (null: not reported; a safe-integer number works too)
 * @property {string | null} [error]  its error text (null: acknowledged)
 *
 * @typedef {object} Produced  what `produce(bootstrap, plan)` in library.js returns (or resolves to)
 * @property {Delivery[]} records  one Delivery per plan record, in plan order
 * @property {string | null} [error]  a failure outside any record (the producer could not
 *   start, the transaction could not commit), else null
 */

/** A plan document that is not one (the adapter exits 2, saying why). */
class PlanError extends Error {}

/** @param {unknown} value */
function describe(value) {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `${typeof value} ${JSON.stringify(value)}`;
}

/** @param {unknown} value @param {string} where @returns {Record<string, unknown>} */
function object(value, where) {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return /** @type {Record<string, unknown>} */ (value);
  }
  throw new PlanError(`${where} must be an object, got ${describe(value)}`);
}

/** @param {Record<string, unknown>} doc @param {string} key @param {string} where */
function field(doc, key, where) {
  if (!Object.prototype.hasOwnProperty.call(doc, key)) throw new PlanError(`${where}.${key} is missing`);
  return doc[key];
}

/** @param {unknown} value @param {string} where @returns {unknown[]} */
function array(value, where) {
  if (Array.isArray(value)) return value;
  throw new PlanError(`${where} must be an array, got ${describe(value)}`);
}

/** @param {unknown} value @param {string} where @returns {string} */
function string(value, where) {
  if (typeof value === 'string') return value;
  throw new PlanError(`${where} must be a string, got ${describe(value)}`);
}

/** @param {unknown} value @param {string} where @returns {boolean} */
function bool(value, where) {
  if (typeof value === 'boolean') return value;
  throw new PlanError(`${where} must be true or false, got ${describe(value)}`);
}

/** @param {unknown} value @param {string} where @returns {number} a 32-bit (or smaller) integer */
function int(value, where) {
  if (typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31) {
    return value;
  }
  throw new PlanError(`${where} must be a 32-bit integer, got ${describe(value)}`);
}

/**
 * A 64-bit field. JSON.parse reads every number as a double, so an integer of 2^53 or more
 * cannot be read exactly: it is refused rather than rounded.
 * @param {unknown} value @param {string} where @returns {bigint}
 */
function int64(value, where) {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  throw new PlanError(`${where} must be an integer within +-(2^53 - 1), got ${describe(value)}`);
}

/** Standard base64 with padding (the whole text; Buffer.from alone skips bad characters). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** @param {unknown} value @param {string} where @returns {Buffer | null} */
function bytes(value, where) {
  if (value === null) return null;
  if (typeof value === 'string' && BASE64.test(value)) return Buffer.from(value, 'base64');
  throw new PlanError(`${where} must be base64 or null, got ${describe(value)}`);
}

/**
 * The value of an optional key: null when it is absent or null, else `convert(value)`.
 * @template T
 * @param {Record<string, unknown>} doc @param {string} key @param {string} where
 * @param {(value: unknown, where: string) => T} convert
 * @returns {T | null}
 */
function optional(doc, key, where, convert) {
  const value = doc[key] ?? null;
  return value === null ? null : convert(value, `${where}.${key}`);
}

/**
 * The plan document (parsed JSON) as a Plan; PlanError if it is not one.
 * @param {unknown} document
 * @returns {Plan}
 */
function readPlan(document) {
  const doc = object(document, 'the plan');
  if (doc.format !== PLAN_FORMAT) {
    throw new PlanError(`not a plan: format ${describe(doc.format ?? null)}, expected ${PLAN_FORMAT}`);
  }
  const s = object(field(doc, 'settings', '$'), '$.settings');
  const settings = {
    codec: string(field(s, 'codec', '$.settings'), '$.settings.codec'),
    idempotence: bool(field(s, 'idempotence', '$.settings'), '$.settings.idempotence'),
    acks: int(field(s, 'acks', '$.settings'), '$.settings.acks'),
    lingerMs: int(field(s, 'linger_ms', '$.settings'), '$.settings.linger_ms'),
    batchSize: int(field(s, 'batch_size', '$.settings'), '$.settings.batch_size'),
    maxRequestSize: int(field(s, 'max_request_size', '$.settings'), '$.settings.max_request_size'),
    transaction: optional(s, 'transaction', '$.settings', (value, where) => {
      const t = object(value, where);
      return { id: string(field(t, 'id', where), `${where}.id`), end: string(field(t, 'end', where), `${where}.end`) };
    }),
    timeoutMs: int(field(s, 'timeout_ms', '$.settings'), '$.settings.timeout_ms'),
  };
  const records = array(field(doc, 'records', '$'), '$.records').map((value, i) => {
    const where = `$.records[${i}]`;
    const r = object(value, where);
    return {
      key: bytes(field(r, 'key', where), `${where}.key`),
      value: bytes(field(r, 'value', where), `${where}.value`),
      headers: array(field(r, 'headers', where), `${where}.headers`).map((h, j) => {
        const hw = `${where}.headers[${j}]`;
        const header = object(h, hw);
        return {
          key: string(field(header, 'key', hw), `${hw}.key`),
          value: bytes(field(header, 'value', hw), `${hw}.value`),
        };
      }),
      timestamp: field(r, 'timestamp', where) === null ? null : int64(r.timestamp, `${where}.timestamp`),
      partition: field(r, 'partition', where) === null ? null : int(r.partition, `${where}.partition`),
    };
  });
  const batch = optional(doc, 'batch', '$', (value, where) => {
    const b = object(value, where);
    return {
      magic: int(field(b, 'magic', where), `${where}.magic`),
      baseOffset: int64(field(b, 'base_offset', where), `${where}.base_offset`),
      producerId: int64(field(b, 'producer_id', where), `${where}.producer_id`),
      producerEpoch: int(field(b, 'producer_epoch', where), `${where}.producer_epoch`),
      baseSequence: int(field(b, 'base_sequence', where), `${where}.base_sequence`),
      transactional: bool(field(b, 'transactional', where), `${where}.transactional`),
      partitionLeaderEpoch: int(field(b, 'partition_leader_epoch', where), `${where}.partition_leader_epoch`),
    };
  });
  return {
    scenario: string(field(doc, 'scenario', '$'), '$.scenario'),
    topic: string(field(doc, 'topic', '$'), '$.topic'),
    partitions: int(field(doc, 'partitions', '$'), '$.partitions'),
    settings,
    records,
    batch,
    groups: array(doc.groups ?? [], '$.groups').map((value, i) => {
      const g = object(value, `$.groups[${i}]`);
      return {
        first: int(field(g, 'first', `$.groups[${i}]`), `$.groups[${i}].first`),
        count: int(field(g, 'count', `$.groups[${i}]`), `$.groups[${i}].count`),
      };
    }),
  };
}

module.exports = { PLAN_FORMAT, PlanError, readPlan };
