#!/usr/bin/env node
// kafkajs-http-faults: a kafkajs consumer while plain `fetch` calls (node 18+, no HTTP library)
// drive mockbroker's HTTP control API; run by tests/sidecar/test_node.py.
//
// Usage:
//   node kafkajs-http-faults.js --brokers h:p --admin http://h:p --topic T --group G
//                               [--token TOKEN] [--timeout-ms 60000]
//
// 1. produces 5 records over HTTP (POST /topics/T/records) and consumes them;
// 2. pushes a REBALANCE_IN_PROGRESS error for the next Heartbeat (POST /faults/errors): kafkajs
//    must rejoin the group with the same member id; produces 5 more and consumes them;
// 3. expires the member's session (POST /groups/G/expire): kafkajs's next heartbeat gets
//    UNKNOWN_MEMBER_ID and it must rejoin with a new member id; produces 5 more and consumes them.
// One JSON object per line on stdout:
//   {"event": "joined", "member_id": m}                       each GROUP_JOIN kafkajs reports
//   {"event": "consumed", "partition": p, "offset": o, "value": v}
//   {"event": "http", "call": "...", "status": s, "body": {...}} each control API answer
//   {"event": "done"}
// Exit status: 0 on success, 1 on an error, 2 on bad usage, 3 when --timeout-ms passes.
'use strict'

const { parseArgs } = require('node:util')
const { Kafka, logLevel } = require('kafkajs')

let args
try {
  args = parseArgs({
    options: {
      brokers: { type: 'string' },
      admin: { type: 'string' },
      token: { type: 'string' },
      topic: { type: 'string' },
      group: { type: 'string' },
      'timeout-ms': { type: 'string', default: '60000' }
    }
  }).values
} catch (err) {
  process.stderr.write(`kafkajs-http-faults: ${err.message}\n`)
  process.exit(2)
}
if (!args.brokers || !args.admin || !args.topic || !args.group) {
  process.stderr.write('kafkajs-http-faults: --brokers, --admin, --topic and --group are required\n')
  process.exit(2)
}
const deadline = setTimeout(() => {
  process.stderr.write(`kafkajs-http-faults: error: deadline of ${args['timeout-ms']} ms passed\n`)
  process.exit(3)
}, Number(args['timeout-ms']))

function emit (obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

// The control API, with nothing but node's global fetch.
async function control (method, path, body) {
  const headers = { 'Content-Type': 'application/json' }
  if (args.token) headers.Authorization = `Bearer ${args.token}`
  const response = await fetch(args.admin + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  const answer = text ? JSON.parse(text) : null
  emit({ event: 'http', call: `${method} ${path}`, status: response.status, body: answer })
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}: ${text}`)
  return answer
}

function waitFor (what, predicate) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (predicate()) return resolve()
      setTimeout(check, 20)
    }
    check()
  }).catch(err => { throw new Error(`${what}: ${err}`) })
}

async function produce (from, count) {
  const records = []
  for (let i = from; i < from + count; i++) records.push({ key: `k${i}`, value: `record ${i}` })
  await control('POST', `/topics/${encodeURIComponent(args.topic)}/records`, { records })
}

async function main () {
  const consumer = new Kafka({
    clientId: 'kafkajs-http-faults',
    brokers: args.brokers.split(','),
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, label, log }) => {
      process.stderr.write(JSON.stringify({ level: label, namespace, ...log }) + '\n')
    }
  }).consumer({
    groupId: args.group,
    sessionTimeout: 10000,
    heartbeatInterval: 100,
    // kafkajs heartbeats between fetches: short long polls make it meet the faults quickly
    maxWaitTimeInMs: 100,
    retry: { retries: 10, initialRetryTime: 50 }
  })
  const joins = []
  const consumed = new Set()
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    joins.push(payload.memberId)
    emit({ event: 'joined', member_id: payload.memberId })
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    process.stderr.write(`kafkajs-http-faults: consumer crashed: ${payload.error && payload.error.stack}\n`)
  })
  await consumer.connect()
  await consumer.subscribe({ topic: args.topic, fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      consumed.add(`${partition}:${message.offset}`)
      emit({ event: 'consumed', partition, offset: Number(message.offset), value: message.value.toString() })
    }
  })

  await produce(0, 5)
  await waitFor('the first join and 5 records', () => joins.length >= 1 && consumed.size >= 5)

  await control('POST', '/faults/errors', { api: 'Heartbeat', errors: ['REBALANCE_IN_PROGRESS'] })
  await waitFor('a rejoin after REBALANCE_IN_PROGRESS', () => joins.length >= 2)
  await produce(5, 5)
  await waitFor('10 records', () => consumed.size >= 10)

  await control('POST', `/groups/${encodeURIComponent(args.group)}/expire`, { member_id: joins[joins.length - 1] })
  await waitFor('a rejoin after the session expired', () => joins.length >= 3)
  await produce(10, 5)
  await waitFor('15 records', () => consumed.size >= 15)

  await consumer.disconnect()
  emit({ event: 'done' })
}

main().then(
  () => {
    clearTimeout(deadline)
    process.exit(0)
  },
  err => {
    process.stderr.write(`kafkajs-http-faults: error: ${err.stack || err}\n`)
    process.exit(1)
  }
)
