// @ts-check
/*
 * Test bridge for the Node.js consumer starter (tests/test_starter_sides.py): a replacement of
 * the hook whose consume() runs Kafka's own consumer (tests/adapters/starter_bridge.py consume,
 * named by $STARTER_BRIDGE_PYTHON and $STARTER_BRIDGE_SCRIPT; its docstring gives the line
 * format) and fills the starter's structures from its R/E lines, so that the starter's
 * protocol side is what the test exercises.
 */
'use strict';

const { spawnSync } = require('child_process');

const NAME = 'node-consume-starter-bridge';
const VERSION = '';
const MAGICS = [0, 1, 2];
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const CHECKS_CRC = true;
const ERROR_SEMANTICS = 'streaming';
const ERROR_CLASSES = 'class';
/** @type {string[]} */
const OMITS = [];
const NOTES = '';

/** Bytes: lowercase hex, "~" empty, "-" null. @param {string} field */
const hexBytes = (field) =>
  field === '-' ? null : field === '~' ? Buffer.alloc(0) : Buffer.from(field, 'hex');
/** Text: hex of UTF-8, "~" empty, "-" null. @param {string} field */
const hexText = (field) => (field === '-' ? null : hexBytes(field)?.toString('utf8') ?? '');

/**
 * @param {import('./consumed').Options} options
 * @returns {import('./consumed').Consumed}
 */
function consume(options) {
  const python = process.env.STARTER_BRIDGE_PYTHON ?? 'python3';
  const script = process.env.STARTER_BRIDGE_SCRIPT ?? '';
  const args = [
    script, 'consume',
    '--bootstrap', options.bootstrap, '--topic', options.topic,
    '--partition', String(options.partition), '--from', options.start,
    '--isolation', options.isolation, '--timeout-ms', String(options.timeoutMs),
  ];
  if (options.group !== null) args.push('--group', options.group);
  const run = spawnSync(python, args, { maxBuffer: 1 << 30 });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`${script} consume failed (${run.status ?? run.signal}): ${run.stderr}`);

  /** @type {import('./consumed').Consumed} */
  const out = { records: [], error: null };
  for (const line of run.stdout.toString('utf8').split('\n')) {
    const f = line.split(' ');
    if (f[0] === 'R') {
      const headers = [];
      for (let i = 0; i < Number(f[6]); i++) {
        headers.push({ key: hexText(f[7 + 2 * i]) ?? '', value: hexBytes(f[8 + 2 * i]) });
      }
      out.records.push({
        offset: BigInt(f[1]),
        timestamp: BigInt(f[2]),
        timestampType: /** @type {any} */ (f[3]),
        key: hexBytes(f[4]),
        value: hexBytes(f[5]),
        headers,
      });
    } else if (f[0] === 'E') {
      out.error = { class: hexText(f[1]) ?? '', message: hexText(f[2]) };
    }
  }
  return out;
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
