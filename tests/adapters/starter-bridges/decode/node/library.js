// @ts-check
/*
 * Test bridge for the Node.js starter (tests/test_init_adapter.py): a replacement of the hook
 * whose decode() runs the kit's reference decoder (tests/adapters/starter_bridge.py, named by
 * $STARTER_BRIDGE_PYTHON and $STARTER_BRIDGE_SCRIPT) and turns its B/R/C/E lines into the
 * starter's structures, so that the starter's protocol file is what the test exercises.
 */
'use strict';

const { spawnSync } = require('child_process');

const NAME = 'node-starter-bridge';
const VERSION = '';
const MAGICS = [0, 1, 2];
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const CHECKS_CRC = true;
const ERROR_SEMANTICS = 'streaming';
const FILE_SEMANTICS = true;
const ERROR_CLASSES = 'class';
const LISTS_FAILING_BATCH = true;
/** @type {string[]} */
const OMITS = [];
const NOTES = '';

/** Bytes: lowercase hex, "~" empty, "-" null. @param {string} field */
const hexBytes = (field) =>
  field === '-' ? null : field === '~' ? Buffer.alloc(0) : Buffer.from(field, 'hex');
/** Text: hex of UTF-8, "~" empty, "-" null. @param {string} field */
const hexText = (field) => (field === '-' ? null : hexBytes(field)?.toString('utf8') ?? '');

/**
 * @param {Buffer} data
 * @param {'memory' | 'file'} mode
 * @returns {import('./decoded').Decoded}
 */
function decode(data, mode) {
  const python = process.env.STARTER_BRIDGE_PYTHON ?? 'python3';
  const script = process.env.STARTER_BRIDGE_SCRIPT ?? '';
  const run = spawnSync(python, [script, mode], { input: data, maxBuffer: 1 << 30 });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`${script} failed (${run.status}): ${run.stderr}`);

  /** @type {import('./decoded').Batch[]} */
  const batches = [];
  /** @type {import('./decoded').DecodeError | null} */
  let error = null;
  for (const line of run.stdout.toString('utf8').split('\n')) {
    const [kind, ...f] = line.split(' ');
    if (kind === 'B') {
      /** @type {import('./decoded').Batch} */
      const batch = {
        position: Number(f[0]),
        sizeInBytes: Number(f[1]),
        magic: Number(f[2]),
        crc: Number(f[3]),
        attributes: Number(f[4]),
        compression: f[5],
        timestampType: f[6],
        lastOffset: BigInt(f[7]),
        maxTimestamp: BigInt(f[8]),
        records: [],
      };
      if (batch.magic >= 2) {
        Object.assign(batch, {
          baseOffset: BigInt(f[9]),
          lastOffsetDelta: Number(f[10]),
          partitionLeaderEpoch: Number(f[11]),
          baseTimestamp: BigInt(f[12]),
          deleteHorizonMs: f[13] === '-' ? null : BigInt(f[13]),
          isTransactional: f[14] === '1',
          isControl: f[15] === '1',
          producerId: BigInt(f[16]),
          producerEpoch: Number(f[17]),
          baseSequence: Number(f[18]),
          lastSequence: Number(f[19]),
          recordsCount: Number(f[20]),
        });
      }
      batches.push(batch);
    } else if (kind === 'R') {
      const headers = [];
      for (let i = 0; i < Number(f[4]); i++) {
        headers.push({ key: hexText(f[5 + 2 * i]) ?? '', value: hexBytes(f[6 + 2 * i]) });
      }
      batches[batches.length - 1].records.push({
        offset: BigInt(f[0]),
        timestamp: BigInt(f[1]),
        key: hexBytes(f[2]),
        value: hexBytes(f[3]),
        headers,
        control: null,
      });
    } else if (kind === 'C') {
      const records = batches[batches.length - 1].records;
      records[records.length - 1].control = {
        typeId: Number(f[0]),
        type: hexText(f[1]) ?? '',
        coordinatorEpoch: f[2] === '-' ? null : Number(f[2]),
      };
    } else if (kind === 'E') {
      error = {
        kafkaException: hexText(f[0]) ?? '',
        message: hexText(f[1]),
        batchIndex: Number(f[2]),
        position: Number(f[3]),
      };
    }
  }
  return { batches, error };
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
