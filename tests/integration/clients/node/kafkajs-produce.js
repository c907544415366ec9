#!/usr/bin/env node
// kafkajs-produce: a line-oriented driver for kafkajs, run by tests/integration/test_kafkajs.py
// against mockbroker.
//
// Usage:
//   node kafkajs-produce.js --brokers h:p[,h:p] --topic T [--sends K] [--compression none|gzip]
//                           [--timeout-ms 60000]
//
// Reads messages from stdin, one JSON object per line:
//   {"key": "k" | null, "value": "v" | null, "headers": [["name", "value"], ...],
//    "partition": p, "timestamp_ms": t}        (partition and timestamp_ms may be left out)
// A message without a partition gets one up front from kafkajs's own DefaultPartitioner (murmur2
// on the key, as Java does) over the partitions Metadata reports, so the offset of every message
// is known from the per-partition base offsets in the Produce responses. The messages go out in K
// sequential producer.send() calls (acks=-1), so each partition gets up to K multi-record batches.
// Then it prints, one JSON object per line:
//   {"event": "produced", "partition": p, "offset": o, "key": ..., "value": ..., "headers": [...]}
//   {"event": "offsets", "partition": p, "low": l, "high": h}   (admin.fetchTopicOffsets: ListOffsets)
//
// Only producing: kafkajs has no consumer without a consumer group (its Consumer always joins a
// group), so the test checks what was stored by decoding the partition logs.
//
// Exit status: 0 on success, 1 on a client error, 2 on bad usage, 3 when --timeout-ms passes.
// kafkajs's log goes to stderr as JSON lines.
'use strict'

const readline = require('node:readline')
const { parseArgs } = require('node:util')
const { Kafka, logLevel, Partitioners, CompressionTypes } = require('kafkajs')

function usage (message) {
  process.stderr.write(`kafkajs-produce: ${message}\n`)
  process.exit(2)
}

let args
try {
  args = parseArgs({
    options: {
      brokers: { type: 'string' },
      topic: { type: 'string' },
      sends: { type: 'string', default: '1' },
      compression: { type: 'string', default: 'none' },
      'timeout-ms': { type: 'string', default: '60000' }
    }
  }).values
} catch (err) {
  usage(err.message)
}
if (!args.brokers || !args.topic) usage('--brokers and --topic are required')
const sends = Number(args.sends)
if (!Number.isInteger(sends) || sends < 1) usage('--sends must be a positive integer')
const compression = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP }[args.compression]
if (compression === undefined) usage(`unknown --compression ${args.compression} (kafkajs ships only gzip)`)
const timeoutMs = Number(args['timeout-ms'])

const deadline = setTimeout(() => {
  process.stderr.write(`kafkajs-produce: error: deadline of ${timeoutMs} ms passed\n`)
  process.exit(3)
}, timeoutMs)

const logCreator = () => ({ namespace, label, log }) => {
  process.stderr.write(JSON.stringify({ level: label, namespace, ...log }) + '\n')
}

function emit (obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

async function readMessages () {
  const messages = []
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  let n = 0
  for await (const raw of lines) {
    n++
    const line = raw.trim()
    if (!line) continue
    let m
    try {
      m = JSON.parse(line)
    } catch (err) {
      throw new Error(`stdin line ${n}: ${err.message}`)
    }
    messages.push({
      key: m.key ?? null,
      value: m.value ?? null,
      headerPairs: m.headers || [],
      partition: m.partition ?? null,
      timestamp: m.timestamp_ms ?? null
    })
  }
  return messages
}

// kafkajs takes headers as an object; a repeated name becomes an array of values.
function headersObject (pairs) {
  const headers = {}
  for (const [name, value] of pairs) {
    if (name in headers) {
      headers[name] = [].concat(headers[name], value)
    } else {
      headers[name] = value
    }
  }
  return headers
}

async function main () {
  const messages = await readMessages()
  const kafka = new Kafka({
    clientId: 'mockbroker-kafkajs-test',
    brokers: args.brokers.split(','),
    logLevel: logLevel.INFO,
    logCreator
  })
  const admin = kafka.admin()
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await admin.connect()
  await producer.connect()
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [args.topic] })
    const partitionMetadata = metadata.topics[0].partitions
    const partitioner = Partitioners.DefaultPartitioner()
    for (const m of messages) {
      m.partition = partitioner({ topic: args.topic, partitionMetadata, message: { key: m.key, partition: m.partition } })
    }

    const chunk = Math.ceil(messages.length / sends)
    for (let start = 0; start < messages.length; start += chunk) {
      const part = messages.slice(start, start + chunk)
      const results = await producer.send({
        topic: args.topic,
        acks: -1,
        compression,
        messages: part.map(m => ({
          key: m.key,
          value: m.value,
          partition: m.partition,
          headers: headersObject(m.headerPairs),
          ...(m.timestamp === null ? {} : { timestamp: String(m.timestamp) })
        }))
      })
      // One RecordMetadata per partition; kafkajs keeps the messages' order within a partition.
      const next = new Map(results.map(r => [r.partition, BigInt(r.baseOffset)]))
      for (const m of part) {
        const offset = next.get(m.partition)
        if (offset === undefined) throw new Error(`no produce result for partition ${m.partition}`)
        next.set(m.partition, offset + 1n)
        emit({
          event: 'produced',
          partition: m.partition,
          offset: Number(offset),
          key: m.key,
          value: m.value,
          headers: m.headerPairs,
          ...(m.timestamp === null ? {} : { timestamp_ms: m.timestamp })
        })
      }
    }

    const offsets = await admin.fetchTopicOffsets(args.topic)
    for (const o of offsets.sort((a, b) => a.partition - b.partition)) {
      emit({ event: 'offsets', partition: o.partition, low: Number(o.low), high: Number(o.high) })
    }
  } finally {
    await producer.disconnect()
    await admin.disconnect()
  }
}

main().then(
  () => {
    clearTimeout(deadline)
    process.exit(0)
  },
  err => {
    process.stderr.write(`kafkajs-produce: error: ${err.stack || err}\n`)
    process.exit(1)
  }
)
