// @ts-check
/*
 * Test bridge for the Node.js producer starter (tests/test_starter_sides.py): a replacement of
 * the hook that writes the plan the starter read back as lines to Kafka's own producer and
 * batch builder (tests/adapters/starter_bridge.py produce|encode, named by
 * $STARTER_BRIDGE_PYTHON and $STARTER_BRIDGE_SCRIPT; its docstring gives the line format) and
 * fills the starter's structures from the answer, so that the starter's protocol side (the
 * plan it reads, the document it writes) is what the test exercises.
 */
'use strict';

const { spawnSync } = require('child_process');

const NAME = 'node-produce-starter-bridge';
const VERSION = '';
const PRODUCE = {
  codecs: ['none', 'gzip', 'snappy', 'lz4', 'zstd'],
  idempotence: true,
  transactions: true,
  headers: true,
  magics: [2],
  partitioner: 'java',
  defaults: { idempotence: true, acks: -1, linger_ms: 5, batch_size: 16384 },
};
const ENCODE = {
  codecs: ['none', 'gzip', 'snappy', 'lz4', 'zstd'],
  idempotence: true,
  transactions: true,
  headers: true,
  magics: [2],
};

/** Bytes as lowercase hex, "~" empty, "-" null. @param {Uint8Array | null} data */
const hex = (data) => (data === null ? '-' : Buffer.from(data).toString('hex') || '~');
/** Text as hex of UTF-8. @param {string | null} text */
const hexText = (text) => hex(text === null ? null : Buffer.from(text, 'utf8'));
/** @param {string} field @returns {string | null} */
const textOf = (field) =>
  field === '-' ? null : field === '~' ? '' : Buffer.from(field, 'hex').toString('utf8');

/** The plan as the bridge's P/S/R/B lines. @param {import('./plan').Plan} plan */
function lines(plan) {
  const s = plan.settings;
  const txn = s.transaction;
  const out = [
    `P ${hexText(plan.scenario)} ${hexText(plan.topic)} ${plan.partitions}`,
    `S ${s.codec} ${s.idempotence ? 1 : 0} ${s.acks} ${s.lingerMs} ${s.batchSize} ` +
      `${s.maxRequestSize} ${s.timeoutMs} ${hexText(txn ? txn.id : null)} ${txn ? txn.end : '-'}`,
  ];
  for (const r of plan.records) {
    const line = [
      'R', hex(r.key), hex(r.value),
      r.timestamp === null ? '-' : String(r.timestamp),
      r.partition === null ? '-' : String(r.partition),
      String(r.headers.length),
    ];
    for (const h of r.headers) line.push(hexText(h.key), hex(h.value));
    out.push(line.join(' '));
  }
  const b = plan.batch;
  if (b !== null) {
    out.push(`B ${b.magic} ${b.baseOffset} ${b.producerId} ${b.producerEpoch} ${b.baseSequence} ` +
      `${b.transactional ? 1 : 0} ${b.partitionLeaderEpoch}`);
  }
  return out.map((line) => line + '\n').join('');
}

/** Runs the bridge with the plan on stdin; its output lines, split. @param {string[]} args @param {import('./plan').Plan} plan */
function bridge(args, plan) {
  const python = process.env.STARTER_BRIDGE_PYTHON ?? 'python3';
  const script = process.env.STARTER_BRIDGE_SCRIPT ?? '';
  const run = spawnSync(python, [script, ...args], { input: lines(plan), maxBuffer: 1 << 30 });
  if (run.error) throw run.error;
  if (run.status !== 0) {
    throw new Error(`${script} ${args[0]} failed (${run.status ?? run.signal}): ${run.stderr}`);
  }
  return run.stdout.toString('utf8').split('\n').filter((line) => line !== '').map((line) => line.split(' '));
}

/**
 * @param {string} bootstrap
 * @param {import('./plan').Plan} plan
 * @returns {import('./plan').Produced}
 */
function produce(bootstrap, plan) {
  /** @type {import('./plan').Produced} */
  const out = { records: [], error: null };
  for (const f of bridge(['produce', bootstrap], plan)) {
    if (f[0] === 'D') {
      out.records.push({
        partition: f[1] === '-' ? null : Number(f[1]),
        offset: f[2] === '-' ? null : BigInt(f[2]),
        error: textOf(f[3]),
      });
    } else if (f[0] === 'F') {
      out.error = textOf(f[1]);
    }
  }
  return out;
}

/** @param {import('./plan').Plan} plan @returns {Buffer} */
function encode(plan) {
  const answer = bridge(['encode'], plan);
  if (answer.length !== 1 || answer[0][0] !== 'X' || answer[0].length !== 2) {
    throw new Error(`unexpected encode answer: ${JSON.stringify(answer).slice(0, 200)}`);
  }
  return Buffer.from(answer[0][1], 'hex');
}

module.exports = {
  NAME,
  VERSION,
  PRODUCE,
  ENCODE,
  produce,
  encode,
};
