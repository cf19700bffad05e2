#!/usr/bin/env node
'use strict'
// kafka-conformance consumer adapter for kafkajs 2.2.4 (protocol: docs/adapter-protocol.md,
// "The consumer side"). Side: consume.
//
// consume: new Kafka({clientId, brokers: [bootstrap], logLevel ERROR to stderr}).consumer({groupId:
// a fresh one, readUncommitted per --isolation}) with kafkajs's defaults for everything else
// (fetch sizes, maxWaitTimeInMs, retry { retries: 5 }, restartOnFailure). kafkajs's consumer always
// joins a group: the fake broker answers FindCoordinator/JoinGroup/SyncGroup as a group of one,
// kafkajs (the leader) assigns itself the partition. subscribe({topic, fromBeginning: true for
// earliest}); run({autoCommit: false, eachBatch}); a numeric --from is consumer.seek() once run()
// has started (kafkajs refuses a seek before). Every message of every batch kafkajs hands to
// eachBatch (batch.messages: control records and aborted transactions already filtered by
// kafkajs's Batch) becomes a record, in delivery order.
// The end offset is asked once at the start, as kafka-python's end_offsets() does: ListOffsets
// (latest, and earliest) sent by kafkajs's own Cluster.fetchTopicsOffset with the consumer's
// isolation level (the high watermark, the last stable offset for read_committed). The Cluster
// is made the way Kafka.consumer() makes its own (the Kafka instance's private createCluster):
// admin.fetchTopicOffsets would always ask READ_COMMITTED (its cluster has no isolation level and
// listOffsets defaults to 1). The position is what kafkajs resolves after each batch: the
// END_BATCH_PROCESS instrumentation event carries batch.lastOffset(), the offset kafkajs resolves
// (eachBatchAutoResolve) and fetches after (+1). That event also fires for a batch whose records
// were all filtered (control batches, aborted transactions: runner.js isEmptyDueToFiltering), so
// offsets skipped by a commit/abort marker move the position too. Done when position >= end.
// Errors: kafkajs reports a consumer failure only through the CRASH event (runner.js onCrash; the
// fetch loop retries first: retriable errors crash as KafkaJSNumberOfRetriesExceeded once the
// consumer's retries are spent). The error class is the crash error's own name, as the
// application sees it in event.payload.error.name (the wrapper's name, not the cause's: that is
// what a kafkajs user's crash listener gets first); the message carries the cause chain. The run
// stops at the first crash (kafkajs would restart the consumer after a retriable one); errors
// thrown by connect/subscribe/run are reported the same way.
// The timestamp type is what kafkajs exposes: a v2 record's batchContext.timestampType (its
// timestamp is then the batch's maxTimestamp for LogAppendTime: record/v0/decoder.js), a v1
// message's attributes bit 3 (for a compressed wrapper's inner messages that is the INNER
// message's attributes and timestamp: kafkajs never applies the wrapper's), a v0 message has no
// timestamp (Kafka's -1, NoTimestampType).
// The consumer is disconnected on every path; stdout carries only the document, then exit 0.

process.env.KAFKAJS_NO_PARTITIONER_WARNING = process.env.KAFKAJS_NO_PARTITIONER_WARNING || '1'
// stdout carries only the JSON document: anything printed by a library goes to stderr
for (const m of ['log', 'info', 'warn', 'debug']) console[m] = (...a) => console.error(...a)

const FORMAT = 'kafka-conformance/consume/1'
const USAGE = 'usage: consumer.js capabilities | consume --bootstrap H:P --topic T --partition P ' +
  '--from OFFSET|earliest [--isolation read_uncommitted|read_committed] [--timeout-ms N]\n'
const { errorText, registerCodecs } = require('./common')
const versionOf = name => require(`${name}/package.json`).version

function capabilities() {
  return {
    name: 'kafkajs',
    version: versionOf('kafkajs'),
    // recordBatch/v0/decoder.js: "The library is currently not performing CRC validations" (the
    // v2 CRC is read and discarded); message/decoder.js reads the v0/v1 crc and never compares it
    checks_crc: false,
    notes: `kafkajs ${versionOf('kafkajs')} consumer (always a group member: a fresh groupId, ` +
      'autoCommit false, eachBatch), readUncommitted per isolation, kafkajs defaults otherwise; codecs ' +
      `kafkajs-snappy ${versionOf('kafkajs-snappy')}, kafkajs-lz4 ${versionOf('kafkajs-lz4')}, @kafkajs/zstd ` +
      `${versionOf('@kafkajs/zstd')} registered. No CRC is checked (checks_crc false). End offset: ListOffsets ` +
      'through kafkajs\'s own cluster with the consumer\'s isolation level; position: the offset kafkajs ' +
      'resolves after each batch. An error is the first CRASH event (class: the crash error\'s name). ' +
      'Headers come from a JS object (repeated keys grouped, integer-like keys first).',
  }
}

// ---------------------------------------------------------------- arguments (consume_protocol.py)
function parse(argv) {
  const a = { isolation: 'read_uncommitted', timeoutMs: 20000 }
  const names = { '--bootstrap': 'bootstrap', '--topic': 'topic', '--partition': 'partition', '--from': 'start',
    '--isolation': 'isolation', '--timeout-ms': 'timeoutMs' }
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]]
    if (!key || i + 1 >= argv.length) throw new Error(`unknown or incomplete option ${argv[i]}`)
    a[key] = argv[i + 1]
  }
  for (const k of ['bootstrap', 'topic', 'partition', 'start']) if (a[k] === undefined) throw new Error(`missing ${k}`)
  if (!['read_uncommitted', 'read_committed'].includes(a.isolation)) throw new Error(`bad isolation ${a.isolation}`)
  if (a.start !== 'earliest' && !/^\d+$/.test(a.start)) throw new Error(`bad --from ${a.start}`)
  a.partition = Number(a.partition)
  a.timeoutMs = Number(a.timeoutMs)
  if (!Number.isInteger(a.partition) || !Number.isInteger(a.timeoutMs)) throw new Error('bad number')
  return a
}

// ---------------------------------------------------------------- records
const b64 = b => (b === null || b === undefined ? null : Buffer.from(b).toString('base64'))

// kafkajs headers are an object: { key: Buffer | null | [values of a repeated key] }
const headersOf = headers => Object.entries(headers || {})
  .flatMap(([key, value]) => (Array.isArray(value) ? value : [value]).map(v => ({ key, value: b64(v) })))

function record(m) {
  let [timestamp, timestampType] = ['-1', 'NoTimestampType'] // magic 0: no timestamp
  if (m.magicByte === 2 || (m.magicByte === undefined && m.batchContext)) {
    timestamp = String(m.timestamp)
    timestampType = m.batchContext && m.batchContext.timestampType === 1 ? 'LogAppendTime' : 'CreateTime'
  } else if (m.magicByte === 1) {
    timestamp = String(m.timestamp)
    timestampType = m.attributes & 8 ? 'LogAppendTime' : 'CreateTime'
  }
  return {
    offset: String(m.offset), timestamp, timestampType, key: b64(m.key), value: b64(m.value),
    headers: headersOf(m.headers),
  }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms).unref())

// ---------------------------------------------------------------- consume
async function consume(args) {
  const started = Date.now()
  const left = () => Math.max(0, args.timeoutMs - (Date.now() - started))
  const records = []
  let error = null // { class, message }
  let finished = null
  const done = new Promise(resolve => { finished = resolve })

  const kafkajs = require('kafkajs')
  registerCodecs(kafkajs)
  const { Kafka, logLevel } = kafkajs
  const levelName = { [logLevel.ERROR]: 'ERROR', [logLevel.WARN]: 'WARN', [logLevel.INFO]: 'INFO', [logLevel.DEBUG]: 'DEBUG' }
  const logCreator = () => ({ namespace, level, log }) => {
    const { message, ...extra } = log
    process.stderr.write(`kafkajs ${levelName[level] || level} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
  }
  const kafka = new Kafka({
    clientId: 'kafka-conformance-kafkajs',
    brokers: [args.bootstrap],
    logLevel: process.env.KAFKAJS_ADAPTER_LOG_DEBUG ? logLevel.DEBUG : logLevel.ERROR,
    logCreator,
  })
  const readUncommitted = args.isolation === 'read_uncommitted'
  const consumer = kafka.consumer({ groupId: `kafka-conformance-kafkajs-${process.pid}-${started}`, readUncommitted })
  let cluster = null

  let [position, end] = [null, null]
  const check = () => {
    if (position !== null && end !== null && position >= end) finished('end')
  }
  const fail = (e, where) => {
    if (error) return
    error = { class: (e && e.name) || 'Error', message: `${where}: ${errorText(e)}` }
    finished('error')
  }
  consumer.on(consumer.events.CRASH, ({ payload }) => fail(payload.error, `consumer crashed (restart ${payload.restart})`))
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    if (payload.topic !== args.topic || payload.partition !== args.partition) return
    position = BigInt(payload.lastOffset) + 1n
    check()
  })

  const work = async () => {
    // the end offset (and the start, for earliest), with the consumer's isolation level
    const createCluster = Object.getOwnPropertySymbols(kafka).find(s => s.description === 'private:Kafka:createCluster')
    cluster = kafka[createCluster]({ isolationLevel: readUncommitted ? 0 : 1 })
    await cluster.connect()
    await cluster.addTargetTopic(args.topic)
    const offsetOf = async fromBeginning => {
      const [t] = await cluster.fetchTopicsOffset([{ topic: args.topic, fromBeginning, partitions: [{ partition: args.partition }] }])
      return BigInt(t.partitions.find(p => p.partition === args.partition).offset)
    }
    const high = await offsetOf(false)
    const low = args.start === 'earliest' ? await offsetOf(true) : BigInt(args.start)
    await cluster.disconnect().catch(() => {})
    cluster = null
    if (low >= high) {
      position = low
      end = high
      return check()
    }

    await consumer.connect()
    await consumer.subscribe({ topics: [args.topic], fromBeginning: args.start === 'earliest' })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (batch.topic !== args.topic || batch.partition !== args.partition) return
        for (const m of batch.messages) records.push(record(m))
      },
    })
    if (args.start !== 'earliest') consumer.seek({ topic: args.topic, partition: args.partition, offset: args.start })
    end = high
    check()
  }
  work().catch(e => fail(e, 'consumer could not start'))

  const timer = setTimeout(() => finished('timeout'), args.timeoutMs)
  const outcome = await done
  clearTimeout(timer)
  // a batch delivered concurrently with the end of the run stays out of the document
  const delivered = records.slice()
  const bound = outcome === 'timeout' ? 2000 : Math.max(2000, Math.min(5000, left()))
  await Promise.race([
    Promise.all([
      consumer.disconnect().catch(e => process.stderr.write(`disconnect: ${errorText(e)}\n`)),
      cluster ? cluster.disconnect().catch(() => {}) : null,
    ]),
    sleep(bound),
  ])
  if (outcome === 'timeout') {
    error = { class: 'timeout', message: `the position did not reach the end offset in ${args.timeoutMs} ms` +
      ` (position ${position === null ? 'none' : position}, end ${end === null ? 'unknown' : end})` }
  }
  return { format: FORMAT, records: delivered, error }
}

const print = doc => process.stdout.write(JSON.stringify(doc) + '\n', () => process.exit(0))

const argv = process.argv.slice(2)
if (argv[0] === 'capabilities') {
  print(capabilities())
} else if (argv[0] === 'consume') {
  let args
  try {
    args = parse(argv.slice(1))
  } catch (e) {
    process.stderr.write(`${e.message}\n${USAGE}`)
    process.exit(2)
  }
  consume(args).then(print, e => {
    process.stderr.write(`adapter: ${e && e.stack}\n`)
    process.exit(1)
  })
} else {
  process.stderr.write(USAGE)
  process.exitCode = 2
}
