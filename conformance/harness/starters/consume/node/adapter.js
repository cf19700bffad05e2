#!/usr/bin/env node
// @ts-check
/*
 * A kafka-conformance consumer adapter for a Node.js Kafka client library: the protocol side.
 *
 * This file speaks the adapter protocol's consumer side (docs/adapter-protocol.md of
 * kafka-conformance, "The consumer side") and writes the consume document. You should not need
 * to edit it: run your library's consumer in `library.js` (the hook) and declare its
 * capabilities there; `consumed.js` holds the structures the hook fills.
 *
 * Build: nothing to build (`node --check adapter.js` checks the syntax).
 * Run:   node adapter.js capabilities
 *        node adapter.js consume --bootstrap 127.0.0.1:9092 --topic T --partition 0 \
 *            --from earliest --isolation read_uncommitted --timeout-ms 10000
 * Check: kafka-conformance check --side consume --cmd "node /abs/path/adapter.js"
 *
 * Exit codes: 0 with one document on stdout (also when the consumer reported an error: that is
 * a verdict); 2 for a usage error; 3 when the hook failed: it threw, its promise rejected or
 * never settled, or it returned something that is not a Consumed (a crash of the library is no
 * verdict). The adapter exits as soon as the document is written: a client's leftover sockets
 * or timers do not keep it running.
 *
 * Node.js 16 or later, standard library only. 64-bit values are BigInts (a safe-integer Number
 * is accepted too); they are written as decimal strings, so no precision is ever lost.
 */
'use strict';

const { TIMESTAMP_TYPES } = require('./consumed');

/** The contract id of the document this adapter prints. */
const FORMAT = 'kafka-conformance/consume/1';

const USAGE = `usage: node adapter.js capabilities
       node adapter.js consume --bootstrap HOST:PORT --topic T --partition N --from earliest|OFFSET
                               --isolation read_uncommitted|read_committed --timeout-ms N [--group G]
`;

/**
 * @typedef {import('./consumed').Options} Options
 * @typedef {import('./consumed').Consumed} Consumed
 */

/** A command line that is not one of USAGE's. */
class UsageError extends Error {}

/** A hook value that does not fit the contract (a bug in library.js, not a verdict). */
class HookError extends TypeError {}

// ---------------------------------------------------------------------------------------------
// The command line.

/** @param {string} flag @param {string} text @returns {number} */
function integer(flag, text) {
  const n = Number(text);
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new UsageError(`${flag}: not a number: ${JSON.stringify(text)}`);
  }
  return n;
}

/** @param {string} _flag @param {string} text @returns {string} */
const text = (_flag, text) => text;

/**
 * `consume` options: flag -> [Options field, converter]; every one but --group is required.
 * @type {Record<string, [keyof Options, (flag: string, text: string) => unknown]>}
 */
const OPTIONS = {
  '--bootstrap': ['bootstrap', text],
  '--topic': ['topic', text],
  '--partition': ['partition', integer],
  '--from': ['start', text],
  '--isolation': ['isolation', text],
  '--timeout-ms': ['timeoutMs', integer],
  '--group': ['group', text],
};
const ISOLATIONS = ['read_uncommitted', 'read_committed'];

/**
 * The `consume` command line as Options; UsageError if it is not one.
 * @param {string[]} argv  the arguments after `consume`
 * @returns {Options}
 */
function readOptions(argv) {
  /** @type {Record<string, unknown>} */
  const values = { group: null };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    if (!Object.prototype.hasOwnProperty.call(OPTIONS, flag) || i + 1 >= argv.length) {
      throw new UsageError(`unknown option or missing value: ${flag}`);
    }
    const [name, convert] = OPTIONS[flag];
    values[name] = convert(flag, argv[i + 1]);
  }
  const missing = Object.entries(OPTIONS)
    .filter(([flag, [name]]) => flag !== '--group' && values[name] === undefined)
    .map(([flag]) => flag);
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')}`);
  if (!ISOLATIONS.includes(/** @type {string} */ (values.isolation))) {
    throw new UsageError(`--isolation: one of ${ISOLATIONS.join(', ')}`);
  }
  return /** @type {Options} */ (/** @type {unknown} */ (values));
}

// ---------------------------------------------------------------------------------------------
// The consume document.

/**
 * An int64 as decimal text. A BigInt outside the 64-bit range is written as it is: that is
 * the library's (wrong) answer, which the kit reports as a difference (Kafka's arithmetic
 * wraps), not a fault of the adapter.
 * @param {unknown} value @param {string} where @returns {string}
 */
function int64(value, where) {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  throw new HookError(`${where} must be a BigInt (or a safe integer), got ${describe(value)}`);
}

/** @param {unknown} value @param {string} where @returns {string | null} base64 or null */
function bytes(value, where) {
  if (value === null) return null;
  if (value instanceof Uint8Array) {
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  }
  throw new HookError(`${where} must be a Uint8Array/Buffer or null, got ${describe(value)}`);
}

/** @param {unknown} value @param {string} where @returns {string} */
function string(value, where) {
  if (typeof value === 'string') return value;
  throw new HookError(`${where} must be a string, got ${describe(value)}`);
}

/** @param {unknown} value @param {string} where @returns {string} */
function timestampType(value, where) {
  if (TIMESTAMP_TYPES.includes(/** @type {any} */ (value))) return /** @type {string} */ (value);
  throw new HookError(`${where} must be one of ${TIMESTAMP_TYPES.join(', ')}, got ${describe(value)}`);
}

/** @param {unknown} value @param {string} where @returns {{key: string, value: string | null}[]} */
function headers(value, where) {
  return array(value, where).map((header, i) => ({
    key: string(header?.key, `${where}[${i}].key`),
    value: bytes(header?.value, `${where}[${i}].value`),
  }));
}

/** @param {unknown} value @param {string} where @returns {any[]} */
function array(value, where) {
  if (Array.isArray(value)) return value;
  throw new HookError(`${where} must be an array, got ${describe(value)}`);
}

/** @param {unknown} value */
function describe(value) {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `${typeof value} ${String(value)}`;
}

/** @type {[string, (value: unknown, where: string) => unknown][]} a record's keys, in order */
const RECORD_FIELDS = [
  ['offset', int64],
  ['timestamp', int64],
  ['timestampType', timestampType],
  ['key', bytes],
  ['value', bytes],
  ['headers', headers],
];

/**
 * The keys OMITS declares for any magic: such a key, left undefined by the hook, is left out
 * of the record (the kit does not compare it); any other undefined key is a hook error.
 * @param {string[] | Record<string, string[]>} omits
 * @returns {Set<string>}
 */
function omittedKeys(omits) {
  return new Set(Array.isArray(omits) ? omits : Object.values(omits ?? {}).flat());
}

/**
 * The consume document (contract FORMAT) of what the hook returned.
 * @param {Consumed} consumed
 * @param {Set<string>} omitted
 */
function toDocument(consumed, omitted) {
  if (consumed === null || typeof consumed !== 'object') {
    throw new HookError(`consume() must return a Consumed object, got ${describe(consumed)}`);
  }
  const records = array(consumed.records, 'Consumed.records').map((record, i) => {
    const where = `records[${i}]`;
    if (record === null || typeof record !== 'object') throw new HookError(`${where} is not a Record`);
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [key, convert] of RECORD_FIELDS) {
      if (record[key] === undefined) {
        if (omitted.has(key)) continue;
        throw new HookError(`${where}.${key} is not set (set it, or list "${key}" in OMITS)`);
      }
      out[key] = convert(record[key], `${where}.${key}`);
    }
    return out;
  });
  const error = consumed.error ?? null;
  if (error !== null && typeof error !== 'object') {
    throw new HookError(`Consumed.error must be a ConsumeError or null, got ${describe(error)}`);
  }
  return {
    format: FORMAT,
    records,
    error:
      error === null
        ? null
        : {
            class: string(error.class, 'error.class'),
            message: (error.message ?? null) === null ? null : string(error.message, 'error.message'),
          },
  };
}

// ---------------------------------------------------------------------------------------------
// The commands.

/**
 * @typedef {object} Hook  what library.js exports
 * @property {string} NAME
 * @property {string} VERSION
 * @property {number[]} MAGICS
 * @property {string[]} CODECS
 * @property {boolean} CHECKS_CRC
 * @property {string} ERROR_SEMANTICS
 * @property {string} ERROR_CLASSES
 * @property {string[] | Record<string, string[]>} OMITS
 * @property {string} NOTES
 * @property {(options: Options) => Consumed | Promise<Consumed>} consume
 */

/** The consumer side's capabilities (docs/adapter-protocol.md, "Capabilities"). @param {Hook} hook */
function capabilities(hook) {
  return {
    name: hook.NAME,
    version: hook.VERSION,
    magics: hook.MAGICS,
    codecs: hook.CODECS,
    checks_crc: hook.CHECKS_CRC,
    error_semantics: hook.ERROR_SEMANTICS,
    error_classes: hook.ERROR_CLASSES,
    omits: hook.OMITS,
    notes: hook.NOTES,
  };
}

/** Writes to stdout and waits until the data is handed to the OS. @param {string} data */
function write(data) {
  return new Promise((resolve, reject) => {
    process.stdout.write(data, (error) => (error ? reject(error) : resolve(undefined)));
  });
}

/** @param {string[]} args @returns {Promise<number>} the exit status */
async function main(args) {
  const [command, ...rest] = args;
  if (command !== 'capabilities' && command !== 'consume') {
    process.stderr.write(USAGE);
    return 2;
  }
  /** @type {Options | null} */
  let options = null;
  try {
    if (command === 'consume') options = readOptions(rest);
    else if (rest.length > 0) throw new UsageError(`capabilities takes no options: ${rest[0]}`);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`adapter.js: ${error.message}\n${USAGE}`);
    return 2;
  }
  // required here, not at the top: a hook that fails to load is reported like any hook failure
  /** @type {Hook} */
  const hook = require('./library');
  if (options === null) {
    await write(JSON.stringify(capabilities(hook)) + '\n');
  } else {
    const consumed = await hook.consume(options); // the hook may be synchronous or async
    await write(JSON.stringify(toDocument(consumed, omittedKeys(hook.OMITS))) + '\n');
  }
  return 0;
}

/** Whether main() ended (with a status, or by failing): see the 'exit' listener below. */
let settled = false;

/** The hook failed (or crashed asynchronously): no verdict, say why on stderr. @param {unknown} error */
function failed(error) {
  settled = true;
  process.stderr.write(`adapter.js: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(3);
}

if (require.main === module) {
  // an exception thrown in one of the library's callbacks, or a promise it left rejected
  process.on('uncaughtException', failed);
  // a hook whose promise never settles once nothing is left to run: not an empty success
  process.on('exit', () => {
    if (settled) return;
    process.stderr.write('adapter.js: the hook returned a promise that never settled\n');
    process.exitCode = 3;
  });
  main(process.argv.slice(2)).then((status) => {
    settled = true;
    process.exit(status);
  }, failed);
}

module.exports = { FORMAT, readOptions, toDocument, capabilities };
