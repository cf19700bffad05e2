#!/usr/bin/env node
'use strict'
// kafka-conformance producer adapter for kafkajs 2.2.4 (protocol: docs/adapter-protocol.md,
// "Producer side"). Side: produce only (no `encode`: kafkajs has no public batch builder).
//
// produce: new Kafka({clientId, brokers: [bootstrap], logLevel ERROR to stderr}).producer({
// idempotent, transactionalId, maxInFlightRequests: 1 when idempotent/transactional,
// createPartitioner: Partitioners.DefaultPartitioner}), then ONE send() of every record in plan
// order with compression, acks and timeout (inside producer.transaction() when the plan has a
// transaction, then commit()/abort()). kafkajs sends one Produce request per leader holding one
// RecordBatch per partition with the messages of that partition in send order (offsetDelta =
// index: src/protocol/requests/produce/v3/request.js); its report is one RecordMetadata per
// partition with the batch's baseOffset, so a record's offset is baseOffset + its index among
// that send's records of the same partition. The partition a record went to is observed by
// wrapping the library's DefaultPartitioner (it is called once per message per attempt; the
// last attempt's choice is kept). kafkajs has no linger, batch size or max request size.
// Records kafkajs's own Record encoder refuses (a null header value: Buffer.byteLength(null)
// throws) are not sent: their error is that exception, the other records are sent.
const fs = require('fs')
const { errorText, registerCodecs } = require('./common')

process.env.KAFKAJS_NO_PARTITIONER_WARNING = process.env.KAFKAJS_NO_PARTITIONER_WARNING || '1'
// stdout carries only the JSON document: anything printed by a library goes to stderr
for (const m of ['log', 'info', 'warn', 'debug']) console[m] = (...a) => console.error(...a)

const versionOf = name => require(`${name}/package.json`).version
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd']

function capabilities() {
  const notes =
    `kafkajs ${versionOf('kafkajs')} producer; codecs: gzip (zlib, built in), snappy kafkajs-snappy ` +
    `${versionOf('kafkajs-snappy')}, lz4 kafkajs-lz4 ${versionOf('kafkajs-lz4')}, zstd @kafkajs/zstd ` +
    `${versionOf('@kafkajs/zstd')}. All records are given to ONE send() (inside producer.transaction() for ` +
    'transactions): one RecordBatch per partition, offset = the partition\'s baseOffset + the record\'s index ' +
    'in it (batching "call": a plan group is in that one send()). kafkajs has no linger (a send() is sent at ' +
    'once), no batch size and no max request size (linger_ms and batch_size defaults "none"): linger_ms, ' +
    'batch_size and max_request_size are ignored. ' +
    'timeout_ms is send({timeout}) (the broker\'s ack wait), the client requestTimeout and the adapter\'s ' +
    'deadline. Default partitioner (Partitioners.DefaultPartitioner): Java\'s murmur2 rule for keyed records; ' +
    'null keys round-robin from a random start. Headers are a JS object: repeated keys are grouped (values in ' +
    'order) and integer-like keys come first, so interleaved header order is not kept. A null header value ' +
    'cannot be sent (kafkajs\'s Record encoder throws TypeError): such a record is refused with that error. ' +
    'timestamp null = the message has no timestamp (kafkajs uses Date.now()). acks 0: kafkajs reports no ' +
    'RecordMetadata (partition and offset null). Idempotent producer with acks != -1 is refused by kafkajs. ' +
    'Retries are kafkajs\'s defaults (5; Kafka.producer() never applies the idempotent producer\'s ' +
    'MAX_SAFE_INTEGER default).'
  const produce = {
    codecs: CODECS, idempotence: true, transactions: true, headers: true, magics: [2],
    partitioner: 'java',
    batching: 'call',
    defaults: { idempotence: false, acks: -1, linger_ms: 'none', batch_size: 'none' },
    notes,
  }
  return { name: 'kafkajs', version: versionOf('kafkajs'), produce }
}

// JSON numbers beyond 2^53 would lose digits: read every record timestamp as its decimal text
function readPlan(file) {
  const text = fs.readFileSync(file, 'utf8')
    .replace(/([{,]\s*"timestamp"\s*:\s*)(-?\d+)(?=\s*[,}])/g, '$1"$2"')
  return JSON.parse(text)
}

const b64 = s => (s === null || s === undefined ? null : Buffer.from(s, 'base64'))

function toMessage(r) {
  const message = { key: b64(r.key), value: b64(r.value) }
  // kafkajs headers: an object (own properties only; a key "__proto__" must stay a header)
  const headers = Object.create(null)
  for (const h of r.headers || []) {
    const value = b64(h.value)
    if (!Object.prototype.hasOwnProperty.call(headers, h.key)) headers[h.key] = value
    else if (Array.isArray(headers[h.key])) headers[h.key].push(value)
    else headers[h.key] = [headers[h.key], value]
  }
  message.headers = headers
  if (r.timestamp !== null && r.timestamp !== undefined) message.timestamp = String(r.timestamp)
  if (r.partition !== null && r.partition !== undefined) message.partition = r.partition
  return message
}

const sleep = (ms, value) => new Promise(resolve => setTimeout(() => resolve(value), ms).unref())

async function produce(bootstrap, planFile) {
  const plan = readPlan(planFile)
  const s = plan.settings
  const timeoutMs = Number(s.timeout_ms)
  const results = plan.records.map(() => ({ partition: null, offset: null, error: null }))
  const doc = { format: 'kafka-conformance/produce-result/1', records: results, error: null }
  let printed = false
  const print = () => {
    if (printed) return
    printed = true
    process.stdout.write(JSON.stringify(doc) + '\n', () => process.exit(0))
  }
  // last resort: whatever happens, one document and exit within timeout_ms + 8 s
  setTimeout(() => {
    if (!doc.error) doc.error = `adapter: kafkajs did not finish (send and disconnect) within ${timeoutMs + 8000} ms`
    for (const r of results) if (r.error === null && r.offset === null && !r.done) r.error = doc.error
    for (const r of results) delete r.done
    print()
  }, timeoutMs + 8000).unref()

  let kafkajs
  try {
    kafkajs = require('kafkajs')
    registerCodecs(kafkajs)
  } catch (e) {
    doc.error = `adapter: could not load kafkajs: ${errorText(e)}`
    return print()
  }
  const { Kafka, Partitioners, CompressionTypes, logLevel } = kafkajs
  const Record = require('kafkajs/src/protocol/recordBatch/record/v0')
  const compression = {
    none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy,
    lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD,
  }[s.codec]

  // messages, and the records kafkajs's own record encoder refuses
  const messages = []
  const indexOf = new Map() // message -> plan index
  plan.records.forEach((r, i) => {
    const message = toMessage(r)
    try {
      Record({ ...message, offsetDelta: 0, timestampDelta: 0 })
    } catch (e) {
      results[i].error = `refused by kafkajs's record encoder: ${errorText(e)}`
      return
    }
    messages.push(message)
    indexOf.set(message, i)
  })

  // the library's default partitioner, observed
  const assigned = new Map() // message -> partition chosen by DefaultPartitioner
  const createPartitioner = () => {
    const partitioner = Partitioners.DefaultPartitioner()
    return args => {
      const partition = partitioner(args)
      assigned.set(args.message, partition)
      return partition
    }
  }

  const levelName = { [logLevel.ERROR]: 'ERROR', [logLevel.WARN]: 'WARN', [logLevel.INFO]: 'INFO', [logLevel.DEBUG]: 'DEBUG' }
  const logCreator = () => ({ namespace, level, log }) => {
    const { message, ...extra } = log
    process.stderr.write(`kafkajs ${levelName[level] || level} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
  }
  const transaction = s.transaction || null
  const idempotent = !!s.idempotence
  let producer = null
  let phase = 'connect' // where the work is: connect, transaction, send, end
  const work = async () => {
    const kafka = new Kafka({
      clientId: `kafka-conformance-${plan.scenario || 'plan'}`,
      brokers: [bootstrap],
      requestTimeout: timeoutMs,
      logLevel: process.env.KAFKAJS_ADAPTER_LOG_DEBUG ? logLevel.DEBUG : logLevel.ERROR,
      logCreator,
    })
    producer = kafka.producer({
      createPartitioner,
      idempotent,
      transactionalId: transaction ? transaction.id : undefined,
      maxInFlightRequests: idempotent || transaction ? 1 : undefined,
    })
    try {
      await producer.connect()
    } catch (e) {
      doc.error = `producer could not start: ${errorText(e)}`
      return
    }
    let txn = null
    if (transaction) {
      phase = 'transaction'
      try {
        txn = await producer.transaction()
      } catch (e) {
        doc.error = `transaction could not begin: ${errorText(e)}`
        return
      }
    }
    if (messages.length > 0) {
      phase = 'send'
      try {
        const metadata = await (txn || producer).send({
          topic: plan.topic, messages, acks: Number(s.acks), timeout: timeoutMs, compression,
        })
        const base = new Map()
        for (const m of metadata || []) if (m.topicName === plan.topic) base.set(Number(m.partition), m)
        const seen = new Map() // partition -> records of it so far in this send
        for (const message of messages) {
          const r = results[indexOf.get(message)]
          r.done = true
          const partition = assigned.get(message)
          const index = seen.get(partition) || 0
          seen.set(partition, index + 1)
          const m = base.get(Number(partition))
          if (!m) {
            // acks 0: kafkajs reports nothing. Otherwise kafkajs resolved send() without a
            // RecordMetadata for this record's partition: it skips partitions missing from its
            // metadata (cluster.findLeaderForPartitions), the record was never sent
            if (Number(s.acks) !== 0) {
              r.error = `kafkajs send() resolved but reported no RecordMetadata for partition ${partition}: ` +
                'kafkajs silently dropped the record (a partition missing from its topic metadata is skipped)'
            }
            continue
          }
          r.partition = Number(m.partition)
          r.offset = Number(BigInt(m.baseOffset) + BigInt(index))
        }
      } catch (e) {
        const text = errorText(e)
        for (const message of messages) Object.assign(results[indexOf.get(message)], { error: text, done: true })
      }
    }
    if (txn) {
      phase = 'end'
      try {
        await (transaction.end === 'abort' ? txn.abort() : txn.commit())
      } catch (e) {
        doc.error = `transaction ${transaction.end} failed: ${errorText(e)}`
      }
    }
  }

  const finished = await Promise.race([work().then(() => true), sleep(timeoutMs, false)])
  if (!finished) {
    const text = `adapter: kafkajs did not complete within timeout_ms (${timeoutMs} ms)`
    for (const r of results) if (!r.done && r.error === null) r.error = text
    if (!doc.error) {
      doc.error = {
        connect: `producer could not start: ${text} (producer.connect() pending)`,
        transaction: `transaction could not begin: ${text} (producer.transaction() pending)`,
        send: transaction ? `${text} (send() pending); transaction not ended` : null,
        end: `transaction ${transaction && transaction.end} failed: ${text} (${transaction && transaction.end}() pending)`,
      }[phase]
    }
  }
  for (const r of results) delete r.done
  if (producer) {
    await Promise.race([producer.disconnect().catch(e => process.stderr.write(`disconnect: ${errorText(e)}\n`)), sleep(5000)])
  }
  print()
}

const args = process.argv.slice(2)
const opt = name => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
if (args[0] === 'capabilities') {
  process.stdout.write(JSON.stringify(capabilities()) + '\n')
} else if (args[0] === 'produce' && opt('--bootstrap') && opt('--plan')) {
  produce(opt('--bootstrap'), opt('--plan')).catch(e => {
    process.stderr.write(`adapter: ${e && e.stack}\n`)
    process.stdout.write(JSON.stringify({
      format: 'kafka-conformance/produce-result/1', records: [], error: `adapter: ${errorText(e)}`,
    }) + '\n', () => process.exit(0))
  })
} else {
  process.stderr.write('usage: producer.js capabilities | produce --bootstrap HOST:PORT --plan FILE\n')
  process.exitCode = 2
}
