#!/usr/bin/env node
// @ts-check
/*
 * A kafka-conformance producer adapter for a Node.js Kafka client library: the protocol side.
 *
 * This file speaks the adapter protocol's producer side (docs/adapter-protocol.md of
 * kafka-conformance, "Producer side"): it reads the plan, calls the hook and writes the
 * produce-result document, or the encoded batch. You should not need to edit it: call your
 * library in `library.js` (the hook) and declare its capabilities there; `plan.js` holds the
 * structures.
 *
 * Build: nothing to build (`node --check adapter.js` checks the syntax).
 * Run:   node adapter.js capabilities
 *        node adapter.js produce --bootstrap 127.0.0.1:9092 --plan sample-plan.json
 *        node adapter.js encode --plan sample-plan.json > batch.bin
 * Check: kafka-conformance check-producer --cmd "node /abs/path/adapter.js"
 *
 * Exit codes: 0 with the document (produce; also when records failed: that is a verdict) or
 * the batch's bytes (encode) on stdout; 2 for a usage error or a plan that cannot be read; 3
 * when the hook failed: it threw, its promise rejected or never settled, or it returned
 * something that does not fit (a crash of the library is no verdict; encode: the library
 * refused the plan). The adapter exits as soon as its output is written: a client's leftover
 * sockets or timers do not keep it running.
 *
 * Node.js 16 or later, standard library only. 64-bit values are BigInts (a safe-integer Number
 * is accepted too), so no precision is ever lost.
 */
'use strict';

const fs = require('fs');
const { PlanError, readPlan } = require('./plan');

/** The contract id of the document `produce` prints. */
const RESULT_FORMAT = 'kafka-conformance/produce-result/1';

const USAGE = `usage: node adapter.js capabilities
       node adapter.js produce --bootstrap HOST:PORT --plan FILE
       node adapter.js encode --plan FILE
`;

/**
 * @typedef {import('./plan').Plan} Plan
 * @typedef {import('./plan').Produced} Produced
 */

/** A command line that is not one of USAGE's, or a plan that cannot be read. */
class UsageError extends Error {}

/** A hook value that does not fit the contract (a bug in library.js, not a verdict). */
class HookError extends TypeError {}

// ---------------------------------------------------------------------------------------------
// The command line and the plan.

/**
 * `--flag value` pairs: exactly the flags `needed`.
 * @param {string[]} argv @param {string[]} needed @returns {Record<string, string>}
 */
function readArguments(argv, needed) {
  /** @type {Record<string, string>} */
  const values = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!needed.includes(argv[i]) || i + 1 >= argv.length) {
      throw new UsageError(`unknown option or missing value: ${argv[i]}`);
    }
    values[argv[i]] = argv[i + 1];
  }
  const missing = needed.filter((flag) => values[flag] === undefined);
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')}`);
  return values;
}

/** @param {string} path @returns {Plan} */
function readPlanFile(path) {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(fs.readFileSync(path));
    return readPlan(JSON.parse(text));
  } catch (error) {
    if (error instanceof PlanError || error instanceof SyntaxError || error instanceof TypeError ||
        /** @type {NodeJS.ErrnoException} */ (error).code !== undefined) {
      throw new UsageError(`${path}: cannot read the plan: ${/** @type {Error} */ (error).message}`);
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// The produce-result document.

/** @param {unknown} value */
function describe(value) {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `${typeof value} ${String(value)}`;
}

/** @param {unknown} value @param {string} where @returns {string} JSON: an int32 or null */
function partitionJson(value, where) {
  if (value === null) return 'null';
  if (typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31) {
    return String(value);
  }
  throw new HookError(`${where} must be a partition number or null, got ${describe(value)}`);
}

/**
 * JSON: an int64 or null. A BigInt outside the 64-bit range is written as it is: that is the
 * library's (wrong) answer, which the kit reports as a difference, not a fault of the adapter.
 * @param {unknown} value @param {string} where @returns {string}
 */
function offsetJson(value, where) {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  throw new HookError(`${where} must be a BigInt (or a safe integer) or null, got ${describe(value)}`);
}

/** @param {unknown} value @param {string} where @returns {string} JSON: a string or null */
function textJson(value, where) {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  throw new HookError(`${where} must be a string or null, got ${describe(value)}`);
}

/**
 * The produce-result document (contract RESULT_FORMAT) as JSON text: one entry per plan
 * record. Written by hand, not by JSON.stringify, so that a BigInt offset stays exact.
 * @param {Produced} produced @param {Plan} plan @returns {string}
 */
function resultJson(produced, plan) {
  if (produced === null || typeof produced !== 'object' || !Array.isArray(produced.records)) {
    throw new HookError(`produce() must return a Produced object, got ${describe(produced)}`);
  }
  if (produced.records.length !== plan.records.length) {
    throw new HookError(
      `the hook reported ${produced.records.length} records for a plan of ${plan.records.length}`,
    );
  }
  const records = produced.records.map((d, i) => {
    const where = `records[${i}]`;
    if (d === null || typeof d !== 'object') throw new HookError(`${where} is not a Delivery`);
    return (
      `{"partition":${partitionJson(d.partition ?? null, `${where}.partition`)},` +
      `"offset":${offsetJson(d.offset ?? null, `${where}.offset`)},` +
      `"error":${textJson(d.error ?? null, `${where}.error`)}}`
    );
  });
  return (
    `{"format":${JSON.stringify(RESULT_FORMAT)},"records":[${records.join(',')}],` +
    `"error":${textJson(produced.error ?? null, 'Produced.error')}}`
  );
}

// ---------------------------------------------------------------------------------------------
// The commands.

/**
 * @typedef {object} Hook  what library.js exports
 * @property {string} NAME
 * @property {string} VERSION
 * @property {object | null} PRODUCE
 * @property {object | null} ENCODE
 * @property {(bootstrap: string, plan: Plan) => Produced | Promise<Produced>} produce
 * @property {(plan: Plan) => Uint8Array | Promise<Uint8Array>} encode
 */

/**
 * The producer side's capabilities: a `produce` and an `encode` object (either may be absent:
 * that side is not offered).
 * @param {Hook} hook
 */
function capabilities(hook) {
  /** @type {Record<string, unknown>} */
  const doc = { name: hook.NAME, version: hook.VERSION };
  if (hook.PRODUCE != null) doc.produce = hook.PRODUCE;
  if (hook.ENCODE != null) doc.encode = hook.ENCODE;
  return doc;
}

/** Writes to stdout and waits until the data is handed to the OS. @param {Uint8Array | string} data */
function write(data) {
  return new Promise((resolve, reject) => {
    process.stdout.write(data, (error) => (error ? reject(error) : resolve(undefined)));
  });
}

/** @param {string[]} args @returns {Promise<number>} the exit status */
async function main(args) {
  const [command, ...rest] = args;
  if (command !== 'capabilities' && command !== 'produce' && command !== 'encode') {
    process.stderr.write(USAGE);
    return 2;
  }
  /** @type {Record<string, string>} */
  let values;
  /** @type {Plan | null} */
  let plan = null;
  try {
    const needed = { capabilities: [], produce: ['--bootstrap', '--plan'], encode: ['--plan'] };
    values = readArguments(rest, needed[command]);
    if (values['--plan'] !== undefined) plan = readPlanFile(values['--plan']);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`adapter.js: ${error.message}\n${USAGE}`);
    return 2;
  }
  // required here, not at the top: a hook that fails to load is reported like any hook failure
  /** @type {Hook} */
  const hook = require('./library');
  if (plan === null) {
    await write(JSON.stringify(capabilities(hook)) + '\n');
  } else if (command === 'produce') {
    const produced = await hook.produce(values['--bootstrap'], plan); // sync or async
    await write(resultJson(produced, plan) + '\n');
  } else {
    const batch = await hook.encode(plan);
    if (!(batch instanceof Uint8Array)) {
      throw new HookError(`encode() must return a Uint8Array/Buffer, got ${describe(batch)}`);
    }
    await write(batch);
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

module.exports = { RESULT_FORMAT, readArguments, readPlanFile, resultJson, capabilities };
