#!/usr/bin/env node
'use strict'
// kafka-conformance adapter for kafkajs 2.2.4 (protocol: docs/adapter-protocol.md).
//
// API: kafkajs has no public decode API. Its consumer decodes a partition's `records` bytes with
// the internal src/protocol/requests/fetch/v4/decodeMessages.js (every Fetch version >= 4); we
// call it unchanged on a Decoder over [int32 length][input], as the Fetch response decoder does.
// It reads the magic at byte 16 of the FIRST entry: 2 -> recordBatch/v0/decoder for every batch
// while >= 49 bytes remain, else messageSet/decoder (v0/v1). Codecs are registered as a user
// does (CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec, ...).
// Observation: decodeMessages returns a flat record array, so the exports of three internal
// modules are wrapped in require.cache (before kafkajs loads) to see each batch or message the
// library decodes and where: recordBatch/v0/decoder, recordBatch/record/v0/decoder (records,
// and the context of a batch that fails later), message/decoder (top level or inside a
// wrapper); codecs are wrapped to tag their errors. Batch and record fields are the library's;
// position/sizeInBytes are decoder offsets. One behaviour change: MessageSetDecoder goes back on
// a negative length and can loop forever, so revisiting an entry position throws.
// Decoding runs in a child process (a worker thread cannot load the native codecs twice) with
// a time limit: a hang, crash or out-of-memory of kafkajs becomes an error document.
// Declared: checks_crc false (the CRC is read and discarded, recordBatch/v0/decoder.js);
// error_semantics eager (a compressed batch is decompressed whole first); file_semantics false
// (no log-file reader: `--as file` runs the same fetch path); error_classes family; omits what
// kafkajs never exposes (v2 CRC/attributes/codec, deleteHorizonMs, lastSequence, recordsCount,
// control-record parsing).
const { fork } = require('child_process')

const TIMEOUT_MS = Number(process.env.KAFKAJS_ADAPTER_TIMEOUT_MS || 10000)
const CORRUPT = 'org.apache.kafka.common.errors.CorruptRecordException'
const CODEC_ERROR = 'org.apache.kafka.common.KafkaException'
const OOM = 'java.lang.OutOfMemoryError'
const CODEC_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd', 'unknown-5', 'unknown-6', 'unknown-7']
const CODEC_TAG = Symbol('kafkajs codec')

function capabilities() {
  const v = name => require(`${name}/package.json`).version
  return {
    name: 'kafkajs', version: v('kafkajs'), magics: [0, 1, 2], codecs: ['none', 'gzip', 'snappy', 'lz4', 'zstd'],
    checks_crc: false, error_semantics: 'eager', file_semantics: false, error_classes: 'family',
    // a v0/v1 message is returned once all its fields decoded, a v2 header with its records
    lists_failing_batch: false,
    omits: ['crc', 'attributes', 'compression', 'deleteHorizonMs', 'lastSequence', 'recordsCount', 'control'],
    persistent: true,
    notes: `kafkajs ${v('kafkajs')} fetch path (decodeMessages); kafkajs-snappy ${v('kafkajs-snappy')} ` +
      `(snappyjs ${v('snappyjs')}), kafkajs-lz4 ${v('kafkajs-lz4')} (lz4 ${v('lz4')}, native) and @kafkajs/zstd ` +
      `${v('@kafkajs/zstd')} (cppzst ${v('cppzst')}, native), both built from npm sources. No CRC is checked; the ` +
      'format of the whole input is chosen from the first entry\'s magic. Listed batches are those kafkajs decoded ' +
      'before an exception (kafkajs itself then delivers no record of the partition: the Fetch response fails); a ' +
      'failing v2 batch is listed only if its header could be observed. v0 records have no timestamp in kafkajs ' +
      '(reported as -1). Headers come from a JS object (repeated keys grouped, integer-like keys first).',
  }
}

// ---------------------------------------------------------------- child process: kafkajs decoding
let st = null // observation state of the decode in progress

function loadKafkajs() {
  const Decoder = require('kafkajs/src/protocol/decoder')
  let CompressionCodecs = null // set once kafkajs is loaded, after the wrappers below
  const wrap = (id, wrapper) => {
    const file = require.resolve(id)
    const original = require(file)
    require.cache[file].exports = wrapper(original)
  }
  const progress = () => process.send({ progress: [st.entries.length - 1, st.cur.start] })
  // records of v2 batches (and the context of a batch whose later record fails)
  wrap('kafkajs/src/protocol/recordBatch/record/v0/decoder', original => (decoder, context) => {
    if (st.cur) st.cur.context = context
    const record = original(decoder, context)
    if (st.cur) st.cur.records.push(record)
    return record
  })
  // v0/v1 messages: top level (the input's own memory) or inside a decompressed wrapper
  wrap('kafkajs/src/protocol/message/decoder', original => (offset, size, decoder) => {
    const seen = st.seen.get(decoder) || st.seen.set(decoder, new Set()).get(decoder)
    const start = decoder.offset - 12
    const revisited = seen.has(start) || !seen.add(start)
    const top = decoder.buffer && decoder.buffer.buffer === st.arrayBuffer
    if (top) {
      st.cur = { legacy: true, start, message: null, inner: [], compressed: false, outLength: -1 }
      st.entries.push(st.cur)
      progress()
    }
    if (revisited) throw loopError(start)
    const message = original(offset, size, decoder)
    if (top) Object.assign(st.cur, { message, end: decoder.offset })
    else if (st.cur) st.cur.inner.push(message)
    return message
  })
  wrap('kafkajs/src/protocol/recordBatch/v0/decoder', original => async fetchDecoder => {
    const cur = { legacy: false, start: fetchDecoder.offset, batch: null, context: null, records: [] }
    st.cur = cur
    st.entries.push(cur)
    progress()
    try {
      return (cur.batch = await original(fetchDecoder))
    } catch (e) {
      if (e && e[CODEC_TAG] && !cur.context) cur.context = await contextOf(original, fetchDecoder.buffer, cur.start)
      throw e
    } finally {
      cur.end = fetchDecoder.offset
    }
  })
  // The context kafkajs decoded before its codec failed is not exposed: decode the same batch
  // again with the library, codecs answering an empty buffer, up to its first record.
  const contextOf = async (original, buffer, start) => {
    const [saved, real] = [st.cur, { ...CompressionCodecs }]
    st.cur = { context: null, records: [] }
    for (const type of [1, 2, 3, 4]) CompressionCodecs[type] = () => ({ decompress: async () => Buffer.alloc(0) })
    try {
      const decoder = new Decoder(buffer)
      decoder.forward(start)
      await original(decoder)
    } catch (_) { // expected: the first record of an empty buffer fails
    } finally {
      for (const type of [1, 2, 3, 4]) CompressionCodecs[type] = real[type]
    }
    const context = st.cur.context
    st.cur = saved
    return context
  }
  const decodeMessages = require('kafkajs/src/protocol/requests/fetch/v4/decodeMessages')
  const { CompressionTypes } = require('kafkajs')
  CompressionCodecs = require('kafkajs').CompressionCodecs
  const LZ4Codec = require('kafkajs-lz4')
  CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy')
  CompressionCodecs[CompressionTypes.LZ4] = new LZ4Codec().codec
  CompressionCodecs[CompressionTypes.ZSTD] = require('@kafkajs/zstd')()
  for (const type of [1, 2, 3, 4]) {
    const factory = CompressionCodecs[type]
    CompressionCodecs[type] = () => {
      const codec = factory()
      const decompress = async buffer => {
        if (st.cur) st.cur.compressed = true
        try {
          const out = await codec.decompress(buffer)
          // lz4's stream decoder returns what it has and emits 'error' a tick later with no
          // listener: an uncaught exception that kills a kafkajs process. Catch it here.
          await new Promise(resolve => setImmediate(resolve))
          if (st.uncaught) throw st.uncaught
          if (st.cur) st.cur.outLength = out ? out.length : -1
          return out
        } catch (e) {
          throw Object.assign(e instanceof Error ? e : new Error(String(e)), { [CODEC_TAG]: CODEC_NAMES[type] })
        }
      }
      return { ...codec, decompress }
    }
  }
  return { decodeMessages, Decoder }
}

const loopError = start => Object.assign(new Error(`adapter guard: kafkajs MessageSetDecoder came back to ` +
  `position ${start} (a negative length moved it backwards); it would loop forever`), { name: 'KafkaJSAdapterLoopGuard' })

const b64 = b => (b === null || b === undefined ? null : Buffer.from(b).toString('base64'))

const record = (r, timestamp, headers) =>
  ({ offset: String(r.offset), timestamp, key: b64(r.key), value: b64(r.value), headers })

// kafkajs headers are an object: { key: Buffer | null | [values of a repeated key] }
const headersOf = headers => Object.entries(headers || {})
  .flatMap(([key, value]) => (Array.isArray(value) ? value : [value]).map(v => ({ key, value: b64(v) })))

function v2Batch(e, batch, records) {
  const b = batch || e.context
  return {
    position: e.start, sizeInBytes: e.end - e.start,
    magic: e.context ? e.context.magicByte : 2, // kafkajs exposes the magic only to records
    timestampType: b.timestampType === 1 ? 'LogAppendTime' : 'CreateTime',
    lastOffset: String(BigInt.asIntN(64, BigInt(b.firstOffset) + BigInt(b.lastOffsetDelta))),
    maxTimestamp: String(b.maxTimestamp),
    baseOffset: String(b.firstOffset), lastOffsetDelta: b.lastOffsetDelta, partitionLeaderEpoch: b.partitionLeaderEpoch,
    baseTimestamp: String(b.firstTimestamp), isTransactional: b.inTransaction, isControl: b.isControlBatch,
    producerId: String(b.producerId), producerEpoch: b.producerEpoch, baseSequence: b.firstSequence,
    records: records.map(r => record(r, String(r.timestamp), headersOf(r.headers))),
  }
}

function legacyBatch(e, records) {
  const m = e.message
  return {
    position: e.start, sizeInBytes: 12 + m.size, magic: m.magicByte,
    crc: m.crc >>> 0, attributes: m.attributes, compression: CODEC_NAMES[m.attributes & 7],
    timestampType: m.magicByte === 0 ? 'NoTimestampType' : m.attributes & 8 ? 'LogAppendTime' : 'CreateTime',
    lastOffset: String(m.offset),
    maxTimestamp: m.magicByte === 0 ? '-1' : String(m.timestamp),
    // v0 messages have no timestamp in kafkajs: Kafka's NO_TIMESTAMP (-1)
    records: records.map(r => record(r, r.timestamp === undefined ? '-1' : String(r.timestamp), [])),
  }
}

const exceptionOf = e => // the guarded loop would run kafkajs out of memory
  (e && e.name === 'KafkaJSAdapterLoopGuard') || (e instanceof RangeError && /allocation failed/i.test(e.message))
    ? OOM : e && e[CODEC_TAG] ? CODEC_ERROR : CORRUPT

function errorMessage(e) {
  if (!(e instanceof Error)) return String(e)
  const cls = (e.constructor && e.constructor.name) || e.name
  const tag = e[CODEC_TAG] ? ` (codec ${e[CODEC_TAG]})` : ''
  return `${cls}${e.name !== cls ? ` [${e.name}]` : ''}: ${e.message}${tag}`
}

function toDocument(mode, length, delivered, error) {
  const set = new Set(delivered || [])
  const last = st.entries.length - 1
  const batches = []
  let stopped = null // the entry where kafkajs stopped (exception or silent break)
  let end = 0
  for (const [i, e] of st.entries.entries()) {
    let done
    if (error) done = i < last // kafkajs moves on only once an entry is finished
    else if (!e.legacy) done = e.batch !== null
    else if (!e.message) done = false
    else if (!e.compressed) done = set.has(e.message)
    else done = e.inner.every(m => set.has(m)) && (e.inner.length > 0 || e.outLength === 0)
    if (!done && (stopped = e)) break
    batches.push(e.legacy ? legacyBatch(e, e.compressed ? e.inner : [e.message]) : v2Batch(e, e.batch, e.batch.records))
    end = e.end
  }
  const position = stopped ? stopped.start : end
  const doc = { format: 'kafka-conformance/decode/1', mode, outcome: 'ok', error: null, tail: null, batches }
  if (error) {
    const index = batches.length
    // the failing batch, as far as kafkajs decoded it (eager: no records of a failed wrapper)
    if (stopped && stopped.legacy && stopped.message) batches.push(legacyBatch(stopped, []))
    if (stopped && !stopped.legacy && stopped.context) batches.push(v2Batch(stopped, null, stopped.records))
    doc.outcome = 'error'
    doc.error = { kafka_exception: exceptionOf(error), message: errorMessage(error), batch_index: index, position }
  } else if (position < length) {
    doc.outcome = 'partial'
    doc.tail = { position, bytes: length - position }
  }
  return doc
}

function runChild() {
  const { decodeMessages, Decoder } = loadKafkajs()
  process.send({ ready: true })
  process.on('disconnect', () => process.exit(0))
  process.on('uncaughtException', e => {
    const err = e instanceof Error ? e : new Error(String(e))
    err.message = `uncaught exception (it would crash a kafkajs process): ${err.message}`
    if (st && !st.uncaught) st.uncaught = err
    process.stderr.write(`kafkajs adapter: ${err.stack}\n`)
  })
  process.on('message', async ({ id, mode, input }) => {
    input = Buffer.from(input)
    const framed = Buffer.alloc(4 + input.length) // own ArrayBuffer: tells top-level entries apart
    framed.writeInt32BE(input.length, 0)
    input.copy(framed, 4)
    st = { arrayBuffer: framed.buffer, entries: [], cur: null, seen: new WeakMap() }
    let [delivered, error, doc] = [null, null, null]
    try {
      delivered = await decodeMessages(new Decoder(framed))
      await new Promise(resolve => setImmediate(resolve)) // let a codec's late 'error' surface
    } catch (e) {
      error = e
    }
    if (st.uncaught) { // it would have killed a kafkajs process: a crash, not a verdict
      process.send({ id, crash: `${st.uncaught.message}\n${st.uncaught.stack}` })
      return
    }
    try {
      doc = toDocument(mode, input.length, delivered, error)
    } catch (e) {
      process.send({ id, crash: `adapter: could not render kafkajs's result: ${e && e.stack}` })
      return
    }
    process.send({ id, doc })
  })
}

// ---------------------------------------------------------------- main thread
class Decoding {
  constructor() {
    Object.assign(this, { child: null, job: null, nextId: 1 })
  }

  start() {
    const w = fork(__filename, ['--kafkajs-decoder'], {
      serialization: 'advanced',
      stdio: ['ignore', 2, 2, 'ipc'], // a library printing must not corrupt our stdout
      execArgv: ['--max-old-space-size=4096'],
    })
    w.on('message', m => {
      if (m.ready) w.ready = true
      if (!this.job || this.child !== w) return
      if (m.progress) this.job.progress = m.progress
      else if (m.id === this.job.id) this.finish(m.doc || { crash: m.crash })
    })
    const died = what => {
      if (this.child !== w) return
      this.child = null
      if (!w.ready) { // kafkajs could not even be loaded: fail as an adapter, never as a verdict
        process.stderr.write(`adapter: the kafkajs decoder process did not start: ${what}\n`)
        process.exit(1)
      }
      if (this.job) this.finish({ crash: `kafkajs decoder process died: ${what}` })
    }
    w.on('error', e => died(`${e && e.stack}`))
    w.on('exit', (code, signal) => died(`exit code ${code}, signal ${signal}`))
    this.child = w
  }

  decode(mode, input) {
    if (!this.child) this.start()
    return new Promise(resolve => {
      const job = { id: this.nextId++, mode, resolve, progress: [0, 0] }
      job.timer = setTimeout(() => {
        const w = this.child
        this.child = null
        if (w) w.kill('SIGKILL')
        this.finish({ crash: `kafkajs did not finish within ${TIMEOUT_MS} ms (hang)` })
      }, TIMEOUT_MS)
      this.job = job
      this.child.send({ id: job.id, mode, input })
    })
  }

  finish(doc) {
    const job = this.job
    this.job = null
    clearTimeout(job.timer)
    job.resolve(doc)
  }

  close() {
    if (this.child) this.child.disconnect()
  }
}

async function oneShot(mode) {
  const decoding = new Decoding()
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  const doc = await decoding.decode(mode, Buffer.concat(chunks))
  decoding.close()
  if (doc.crash) crashed(doc.crash)
  process.stdout.write(JSON.stringify(doc) + '\n')
}

// kafkajs crashed, hung or died decoding this input: that is no verdict, so the adapter fails
// (the kit reports an `error` with this stderr; in `serve` it starts a new server)
function crashed(why) {
  require('fs').writeSync(2, `kafkajs adapter: ${why}\n`) // synchronous: exit() may drop a pipe write
  process.exit(1)
}

function serve() {
  const decoding = new Decoding()
  let [pending, busy, ended] = [Buffer.alloc(0), false, false]
  const pump = async () => {
    if (busy) return
    busy = true
    while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
      const [modeByte, length] = [pending[0], pending.readUInt32BE(1)]
      const input = Buffer.from(pending.subarray(5, 5 + length))
      pending = pending.subarray(5 + length)
      const mode = modeByte === 1 ? 'file' : 'memory'
      if (modeByte > 1) crashed(`unknown mode byte ${modeByte}`)
      let doc
      try {
        doc = await decoding.decode(mode, input)
      } catch (e) {
        crashed(`${e && e.stack}`)
      }
      if (doc.crash) crashed(doc.crash)
      const body = Buffer.from(JSON.stringify(doc), 'utf8')
      const head = Buffer.alloc(4)
      head.writeUInt32BE(body.length, 0)
      process.stdout.write(Buffer.concat([head, body]))
    }
    busy = false
    if (ended) decoding.close()
  }
  process.stdin.on('data', chunk => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk
    pump()
  })
  process.stdin.on('end', () => {
    ended = true
    pump()
  })
}

const [cmd, flag, mode] = process.argv.slice(2)
if (cmd === '--kafkajs-decoder') runChild()
else if (cmd === 'capabilities') process.stdout.write(JSON.stringify(capabilities()) + '\n')
else if (cmd === 'serve') serve()
else if (cmd === 'decode' && flag === '--as' && (mode === 'memory' || mode === 'file')) {
  oneShot(mode).catch(e => {
    process.stderr.write(`adapter: ${e && e.stack}\n`)
    process.exitCode = 1
  })
} else {
  process.stderr.write('usage: adapter.js capabilities | decode --as memory|file | serve\n')
  process.exitCode = 2
}
