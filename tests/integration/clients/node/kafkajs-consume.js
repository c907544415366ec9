#!/usr/bin/env node
// kafkajs-consume: a line-oriented driver for kafkajs consumer groups, run by
// tests/integration/test_groups_kafkajs.py against mockbroker.
//
// Usage:
//   node kafkajs-consume.js --brokers h:p[,h:p] --topic T --group G --count N
//                           [--consumers K] [--session-timeout-ms 6000]
//                           [--heartbeat-interval-ms 200] [--timeout-ms 60000]
//
// Starts K consumers (default 1) in group G, each with its own client id
// (mockbroker-kafkajs-consumer-<i>), subscribed to T from the beginning, and consumes until N
// messages have arrived in total. Then it waits until every partition it consumed from has its
// offset committed past the last message (kafkajs commits after each batch, autoCommit), and
// disconnects the consumers (LeaveGroup). It prints one JSON object per line:
//   {"event": "joined", "consumer": i, "member_id": m, "leader_id": l, "assignment": [p...]}
//   {"event": "consumed", "consumer": i, "partition": p, "offset": o, "key": ..., "value": ...,
//    "headers": [[name, value], ...], "timestamp_ms": t}
//   {"event": "committed", "consumer": i, "generation": g, "partition": p, "offset": o}
//   {"event": "done"}        everything consumed and committed, consumers disconnected
//
// Exit status: 0 on success, 1 on a client error, 2 on bad usage, 3 when --timeout-ms passes.
// kafkajs's log goes to stderr as JSON lines.
'use strict'

const { parseArgs } = require('node:util')
const { Kafka, logLevel } = require('kafkajs')

function usage (message) {
  process.stderr.write(`kafkajs-consume: ${message}\n`)
  process.exit(2)
}

let args
try {
  args = parseArgs({
    options: {
      brokers: { type: 'string' },
      topic: { type: 'string' },
      group: { type: 'string' },
      count: { type: 'string' },
      consumers: { type: 'string', default: '1' },
      'session-timeout-ms': { type: 'string', default: '6000' },
      'heartbeat-interval-ms': { type: 'string', default: '200' },
      'timeout-ms': { type: 'string', default: '60000' }
    }
  }).values
} catch (err) {
  usage(err.message)
}
if (!args.brokers || !args.topic || !args.group || !args.count) usage('--brokers, --topic, --group and --count are required')
const count = Number(args.count)
const consumers = Number(args.consumers)
if (!Number.isInteger(count) || count < 1) usage('--count must be a positive integer')
if (!Number.isInteger(consumers) || consumers < 1) usage('--consumers must be a positive integer')
const timeoutMs = Number(args['timeout-ms'])

const deadline = setTimeout(() => {
  process.stderr.write(`kafkajs-consume: error: deadline of ${timeoutMs} ms passed\n`)
  process.exit(3)
}, timeoutMs)

const logCreator = () => ({ namespace, label, log }) => {
  process.stderr.write(JSON.stringify({ level: label, namespace, ...log }) + '\n')
}

function emit (obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

function text (buffer) {
  return buffer === null || buffer === undefined ? null : buffer.toString()
}

// kafkajs gives headers as an object; a repeated name holds an array of values.
function headerPairs (headers) {
  const pairs = []
  for (const [name, value] of Object.entries(headers || {})) {
    for (const v of [].concat(value)) pairs.push([name, text(v)])
  }
  return pairs
}

async function main () {
  const kafka = new Kafka({
    clientId: 'mockbroker-kafkajs-consumer',
    brokers: args.brokers.split(','),
    logLevel: logLevel.INFO,
    logCreator
  })
  let consumed = 0
  const lastOffset = new Map() // partition -> last consumed offset (BigInt)
  const committed = new Map() // partition -> highest committed offset (BigInt)
  let finish
  const allConsumed = new Promise(resolve => { finish = resolve })
  let settle
  const allCommitted = new Promise(resolve => { settle = resolve })
  const checkCommitted = () => {
    if (consumed < count) return
    for (const [partition, offset] of lastOffset) {
      const c = committed.get(partition)
      if (c === undefined || c <= offset) return
    }
    settle()
  }

  const group = []
  for (let i = 0; i < consumers; i++) {
    const consumer = new Kafka({
      clientId: `mockbroker-kafkajs-consumer-${i}`,
      brokers: args.brokers.split(','),
      logLevel: logLevel.INFO,
      logCreator
    }).consumer({
      groupId: args.group,
      sessionTimeout: Number(args['session-timeout-ms']),
      heartbeatInterval: Number(args['heartbeat-interval-ms']),
      // kafkajs heartbeats (and so learns of a rebalance) between fetches: keep long polls short
      maxWaitTimeInMs: 500
    })
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      emit({
        event: 'joined',
        consumer: i,
        member_id: payload.memberId,
        leader_id: payload.leaderId,
        assignment: (payload.memberAssignment[args.topic] || []).slice().sort((a, b) => a - b)
      })
    })
    consumer.on(consumer.events.COMMIT_OFFSETS, ({ payload }) => {
      for (const t of payload.topics) {
        if (t.topic !== args.topic) continue
        for (const p of t.partitions) {
          // kafkajs reports partitions and offsets as strings here
          const partition = Number(p.partition)
          const offset = BigInt(p.offset)
          emit({ event: 'committed', consumer: i, generation: payload.groupGenerationId, partition, offset: Number(offset) })
          const before = committed.get(partition)
          if (before === undefined || offset > before) committed.set(partition, offset)
        }
      }
      checkCommitted()
    })
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      process.stderr.write(`kafkajs-consume: consumer ${i} crashed: ${payload.error && payload.error.stack}\n`)
    })
    await consumer.connect()
    await consumer.subscribe({ topic: args.topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        emit({
          event: 'consumed',
          consumer: i,
          partition,
          offset: Number(message.offset),
          key: text(message.key),
          value: text(message.value),
          headers: headerPairs(message.headers),
          timestamp_ms: Number(message.timestamp)
        })
        lastOffset.set(partition, BigInt(message.offset))
        consumed++
        if (consumed >= count) finish()
      }
    })
    group.push(consumer)
  }

  await allConsumed
  checkCommitted()
  await allCommitted
  for (const consumer of group) await consumer.disconnect()
  emit({ event: 'done' })
}

main().then(
  () => {
    clearTimeout(deadline)
    process.exit(0)
  },
  err => {
    process.stderr.write(`kafkajs-consume: error: ${err.stack || err}\n`)
    process.exit(1)
  }
)
