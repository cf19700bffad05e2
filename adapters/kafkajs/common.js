'use strict'
// What the kafkajs producer and consumer adapters share: the codec packages registered in
// kafkajs (as kafkajs's README says an application does) and an error's text with its causes.

function registerCodecs(kafkajs) {
  const { CompressionTypes, CompressionCodecs } = kafkajs
  const LZ4Codec = require('kafkajs-lz4')
  CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy')
  CompressionCodecs[CompressionTypes.LZ4] = new LZ4Codec().codec
  CompressionCodecs[CompressionTypes.ZSTD] = require('@kafkajs/zstd')()
}

function errorText(e) {
  if (!(e instanceof Error)) return String(e)
  let text = `${e.name}: ${e.message}`
  const cause = e.originalError || e.cause
  if (cause && cause !== e) text += ` (caused by ${errorText(cause)})`
  return text
}

module.exports = { registerCodecs, errorText }
