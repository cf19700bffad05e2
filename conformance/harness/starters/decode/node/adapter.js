#!/usr/bin/env node
// @ts-check
/*
 * A kafka-conformance adapter for a Node.js Kafka client library: the protocol side.
 *
 * This file speaks the adapter protocol (docs/adapter-protocol.md of kafka-conformance) and
 * writes the canonical decode JSON (docs/canonical-json.md). You should not need to edit it:
 * call your library in `library.js` (the hook) and declare its capabilities there; `decoded.js`
 * holds the structures the hook fills.
 *
 * Build: nothing to build (`node --check adapter.js` checks the syntax).
 * Run:   node adapter.js capabilities
 *        node adapter.js decode --as memory|file  < input.bin
 *        node adapter.js serve                      (persistent mode, framed stdin/stdout)
 * Check: kafka-conformance check --cmd "node /abs/path/adapter.js"
 *
 * Node.js 16 or later, standard library only. 64-bit values are BigInts (a safe-integer Number
 * is accepted too); they are written as decimal strings, so no precision is ever lost.
 */
'use strict';

/** The contract id of the document this adapter prints. */
const FORMAT = 'kafka-conformance/decode/1';
/** `decode --as` values, indexed by the mode byte of a `serve` request (0 memory, 1 file). */
const MODES = /** @type {const} */ (['memory', 'file']);

const USAGE = `usage: node adapter.js capabilities
       node adapter.js decode --as memory|file  < input
       node adapter.js serve
`;

/**
 * @typedef {import('./decoded').Decoded} Decoded
 * @typedef {import('./decoded').Mode} Mode
 */

module.exports = { FORMAT, MODES };

// ---------------------------------------------------------------------------------------------
// The canonical document (docs/canonical-json.md): keys in its order, values converted here.

/** A hook value that does not fit the contract (a bug in library.js, not a verdict). */
class HookError extends TypeError {}

/** @param {unknown} value @param {string} where @returns {number} an 8/16/32-bit int */
function int(value, where) {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'bigint' && BigInt.asIntN(53, value) === value) return Number(value);
  throw new HookError(`${where} must be an integer, got ${describe(value)}`);
}

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

/** @param {unknown} value @param {string} where @returns {number} the CRC as unsigned 32-bit */
function uint32(value, where) {
  const crc = int(value, where);
  if (crc < -0x80000000 || crc > 0xffffffff) throw new HookError(`${where} is not 32-bit: ${crc}`);
  return crc >>> 0;
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

/** @param {unknown} value @param {string} where @returns {boolean} */
function bool(value, where) {
  if (typeof value === 'boolean') return value;
  throw new HookError(`${where} must be a boolean, got ${describe(value)}`);
}

/** @param {unknown} value @param {string} where @returns {string | null} */
function nullableInt64(value, where) {
  return value === null ? null : int64(value, where);
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

/**
 * @typedef {(value: unknown, where: string) => unknown} Convert
 * @type {[string, Convert][]} the keys every batch has, in document order
 */
const BATCH_FIELDS = [
  ['position', int],
  ['sizeInBytes', int],
  ['magic', int],
  ['crc', uint32],
  ['attributes', int],
  ['compression', string],
  ['timestampType', string],
  ['lastOffset', int64],
  ['maxTimestamp', int64],
];
/** @type {[string, Convert][]} the keys only magic >= 2 batches have, after the common ones */
const V2_FIELDS = [
  ['baseOffset', int64],
  ['lastOffsetDelta', int],
  ['partitionLeaderEpoch', int],
  ['baseTimestamp', int64],
  ['deleteHorizonMs', nullableInt64],
  ['isTransactional', bool],
  ['isControl', bool],
  ['producerId', int64],
  ['producerEpoch', int],
  ['baseSequence', int],
  ['lastSequence', int],
  ['recordsCount', int],
];
/** @type {[string, Convert][]} the keys of a record, before the optional `control` */
const RECORD_FIELDS = [
  ['offset', int64],
  ['timestamp', int64],
  ['key', bytes],
  ['value', bytes],
  ['headers', headers],
];

/**
 * Copies `fields` of `source` into `target` in order, converted. A key listed in OMITS is left
 * out (the library does not expose it); any other missing key is a hook error.
 * @param {Record<string, unknown>} target
 * @param {any} source
 * @param {[string, Convert][]} fields
 * @param {Set<string>} omits
 * @param {string} where
 */
function copyFields(target, source, fields, omits, where) {
  for (const [key, convert] of fields) {
    if (omits.has(key)) continue;
    if (source[key] === undefined) {
      throw new HookError(`${where}.${key} is not set (set it, or list "${key}" in OMITS)`);
    }
    target[key] = convert(source[key], `${where}.${key}`);
  }
}

/**
 * The canonical document for the hook's result on `data`.
 * @param {Decoded} decoded
 * @param {Uint8Array} data
 * @param {Mode} mode
 * @param {Set<string>} omits
 */
function toDocument(decoded, data, mode, omits) {
  if (decoded === null || typeof decoded !== 'object') {
    throw new HookError(`decode() must return a Decoded object, got ${describe(decoded)}`);
  }
  const batches = array(decoded.batches, 'Decoded.batches').map((batch, i) =>
    batchObject(batch, omits, `batches[${i}]`),
  );
  const error = decoded.error ?? null;
  let outcome = 'ok';
  let tail = null;
  if (error !== null) {
    outcome = 'error';
  } else {
    // ok: every byte belongs to a batch; partial: bytes after the last batch were left unread.
    // A last batch whose size is negative (a length field of 0x80000000 or more, taken as the
    // library gave it) ends nowhere: no tail is made of it (its position would be negative),
    // and the kit shows the size the library reported.
    const last = decoded.batches[decoded.batches.length - 1];
    const start = last === undefined ? 0 : int(last.position, 'last batch position');
    const end = last === undefined ? 0 : start + int(last.sizeInBytes, 'last batch sizeInBytes');
    if (start <= end && end < data.length) {
      outcome = 'partial';
      tail = { position: end, bytes: data.length - end };
    }
  }
  return {
    format: FORMAT,
    mode,
    outcome,
    error: error === null ? null : errorObject(error),
    tail,
    batches,
  };
}

/** @param {any} batch @param {Set<string>} omits @param {string} where */
function batchObject(batch, omits, where) {
  if (batch === null || typeof batch !== 'object') throw new HookError(`${where} is not a Batch`);
  /** @type {Record<string, unknown>} */
  const out = {};
  copyFields(out, batch, BATCH_FIELDS, omits, where);
  // the magic-2-only keys only when magic >= 2 (with `magic` omitted: when baseOffset is set)
  const v2 = batch.magic === undefined ? batch.baseOffset !== undefined : int(batch.magic, where) >= 2;
  if (v2) copyFields(out, batch, V2_FIELDS, omits, where);
  if (!omits.has('records')) {
    out.records = array(batch.records, `${where}.records`).map((record, i) =>
      recordObject(record, omits, `${where}.records[${i}]`),
    );
  }
  return out;
}

/** @param {any} record @param {Set<string>} omits @param {string} where */
function recordObject(record, omits, where) {
  if (record === null || typeof record !== 'object') throw new HookError(`${where} is not a Record`);
  /** @type {Record<string, unknown>} */
  const out = {};
  copyFields(out, record, RECORD_FIELDS, omits, where);
  // `control` only in control records; "control.X" in OMITS leaves out its field X
  const control = record.control ?? null;
  if (control !== null && !omits.has('control')) {
    /** @type {Record<string, unknown>} */
    const c = {};
    if (!omits.has('control.typeId')) c.typeId = int(control.typeId, `${where}.control.typeId`);
    if (!omits.has('control.type')) c.type = string(control.type, `${where}.control.type`);
    const epoch = control.coordinatorEpoch ?? null;
    if (epoch !== null && !omits.has('control.coordinatorEpoch')) {
      c.coordinatorEpoch = int(epoch, `${where}.control.coordinatorEpoch`);
    }
    out.control = c;
  }
  return out;
}

/** @param {any} error */
function errorObject(error) {
  if (typeof error !== 'object') throw new HookError('Decoded.error is not a DecodeError');
  const message = error.message ?? null;
  return {
    kafka_exception: string(error.kafkaException, 'error.kafkaException'),
    message: message === null ? null : string(message, 'error.message'),
    batch_index: int(error.batchIndex, 'error.batchIndex'),
    position: int(error.position, 'error.position'),
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
 * @property {boolean} FILE_SEMANTICS
 * @property {string} ERROR_CLASSES
 * @property {boolean} LISTS_FAILING_BATCH
 * @property {string[]} OMITS
 * @property {string} NOTES
 * @property {(data: Buffer, mode: Mode) => Decoded | Promise<Decoded>} decode
 */

/** `capabilities`: the hook's constants as the protocol's JSON object. @param {Hook} hook */
function capabilities(hook) {
  return {
    name: hook.NAME,
    version: hook.VERSION,
    magics: hook.MAGICS,
    codecs: hook.CODECS,
    checks_crc: hook.CHECKS_CRC,
    error_semantics: hook.ERROR_SEMANTICS,
    file_semantics: hook.FILE_SEMANTICS,
    error_classes: hook.ERROR_CLASSES,
    omits: hook.OMITS,
    lists_failing_batch: hook.LISTS_FAILING_BATCH,
    persistent: true, // `serve` below
    notes: hook.NOTES,
  };
}

/** One input through the hook, as JSON text. @param {Hook} hook @param {Buffer} data @param {Mode} mode */
async function decodeToJson(hook, data, mode) {
  const decoded = await hook.decode(data, mode); // the hook may be synchronous or async
  return JSON.stringify(toDocument(decoded, data, mode, new Set(hook.OMITS)));
}

/** All of a stream (stdin), however it arrives. @param {NodeJS.ReadableStream} stream */
async function readAll(stream) {
  /** @type {Buffer[]} */
  const chunks = [];
  for await (const chunk of stream) chunks.push(/** @type {Buffer} */ (chunk));
  return Buffer.concat(chunks);
}

/** A `serve` request or stream that breaks the framing. */
class ProtocolError extends Error {}

/**
 * The `serve` requests on `stream`: 1 byte mode + 4-byte big-endian length + that many bytes.
 * Chunks may split a request anywhere (even inside its header), or hold several requests.
 * @param {NodeJS.ReadableStream} stream
 * @returns {AsyncGenerator<{mode: Mode, data: Buffer}>}
 */
async function* readRequests(stream) {
  const header = Buffer.alloc(5);
  let headerFill = 0;
  /** @type {Buffer | null} the input being filled, once its header is complete */
  let body = null;
  let bodyFill = 0;
  for await (const item of stream) {
    const chunk = /** @type {Buffer} */ (item);
    let at = 0;
    while (at < chunk.length) {
      if (body === null) {
        const n = Math.min(header.length - headerFill, chunk.length - at);
        chunk.copy(header, headerFill, at, at + n);
        headerFill += n;
        at += n;
        if (headerFill < header.length) break; // the rest of the header is in the next chunk
        body = Buffer.alloc(header.readUInt32BE(1));
        bodyFill = 0;
      }
      const n = Math.min(body.length - bodyFill, chunk.length - at);
      chunk.copy(body, bodyFill, at, at + n);
      bodyFill += n;
      at += n;
      if (bodyFill === body.length) {
        const mode = MODES[header[0]];
        if (mode === undefined) throw new ProtocolError(`unknown mode byte ${header[0]}`);
        yield { mode, data: body };
        body = null;
        headerFill = 0;
      }
    }
  }
  if (headerFill > 0) throw new ProtocolError('stdin ended inside a request');
}

/** `serve`: answer each request with 4-byte big-endian length + the UTF-8 document. @param {Hook} hook */
async function serve(hook) {
  for await (const { mode, data } of readRequests(process.stdin)) {
    const document = Buffer.from(await decodeToJson(hook, data, mode), 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(document.length);
    await write(Buffer.concat([length, document])); // flushed before the next request is read
  }
}

/** Writes to stdout and waits until the data is handed to the OS. @param {Buffer | string} data */
function write(data) {
  return new Promise((resolve, reject) => {
    process.stdout.write(data, (error) => (error ? reject(error) : resolve(undefined)));
  });
}

/** @param {string[]} args @returns {Promise<number>} the exit status */
async function main(args) {
  const [command, ...rest] = args;
  const modeArg = rest.length === 2 && rest[0] === '--as' ? rest[1] : undefined;
  const usable =
    (command === 'capabilities' && rest.length === 0) ||
    (command === 'serve' && rest.length === 0) ||
    (command === 'decode' && (modeArg === 'memory' || modeArg === 'file'));
  if (!usable) {
    process.stderr.write(USAGE);
    return 2;
  }
  // required here, not at the top: a hook that fails to load is reported like any hook failure
  /** @type {Hook} */
  const hook = require('./library');
  if (command === 'capabilities') {
    await write(JSON.stringify(capabilities(hook)) + '\n');
  } else if (command === 'serve') {
    await serve(hook);
  } else {
    const mode = /** @type {Mode} */ (modeArg);
    await write((await decodeToJson(hook, await readAll(process.stdin), mode)) + '\n');
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (status) => {
      process.exitCode = status;
    },
    (error) => {
      // a hook failure is not a verdict: the kit reports the non-zero exit as an `error`
      process.stderr.write(`adapter.js: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
