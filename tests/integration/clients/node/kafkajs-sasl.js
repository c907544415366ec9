#!/usr/bin/env node
// kafkajs-sasl: kafkajs over SASL_SSL, or over SSL with a client certificate, run by
// tests/integration/test_security.py against mockbroker.
//
// Usage:
//   node kafkajs-sasl.js --brokers h:p --ca FILE --mechanism plain|scram-sha-256|scram-sha-512
//                        --username U --password P --topic T [--timeout-ms 30000]
//   node kafkajs-sasl.js --brokers h:p --ca FILE --cert FILE --key FILE --topic T   (SSL, no SASL)
//
// Produces three messages (m0, m1, m2) to T, then consumes them back in group g-T and prints one
// JSON object per line: {"event": "consumed", "value": v} for each, then {"event": "done"}.
// A client error prints {"event": "error", "name": e.name, "message": e.message} and exits 1;
// --timeout-ms passing exits 3.
'use strict'

const fs = require('node:fs')
const { parseArgs } = require('node:util')
const { Kafka, logLevel } = require('kafkajs')

const { values: args } = parseArgs({
  options: {
    brokers: { type: 'string' },
    ca: { type: 'string' },
    cert: { type: 'string' },
    key: { type: 'string' },
    mechanism: { type: 'string' },
    username: { type: 'string' },
    password: { type: 'string' },
    topic: { type: 'string' },
    'timeout-ms': { type: 'string', default: '30000' }
  }
})

const print = (o) => process.stdout.write(JSON.stringify(o) + '\n')
setTimeout(() => { print({ event: 'timeout' }); process.exit(3) }, Number(args['timeout-ms'])).unref()

async function main () {
  const kafka = new Kafka({
    clientId: 'mockbroker-kafkajs-sasl',
    brokers: args.brokers.split(','),
    ssl: {
      ca: [fs.readFileSync(args.ca, 'utf-8')],
      ...(args.cert ? { cert: fs.readFileSync(args.cert, 'utf-8'), key: fs.readFileSync(args.key, 'utf-8') } : {})
    },
    sasl: args.mechanism ? { mechanism: args.mechanism, username: args.username, password: args.password } : undefined,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING
  })
  const producer = kafka.producer()
  await producer.connect()
  await producer.send({ topic: args.topic, messages: ['m0', 'm1', 'm2'].map((value) => ({ value })) })
  await producer.disconnect()

  const consumer = kafka.consumer({ groupId: `g-${args.topic}`, heartbeatInterval: 200 })
  await consumer.connect()
  await consumer.subscribe({ topic: args.topic, fromBeginning: true })
  let seen = 0
  await new Promise((resolve, reject) => {
    consumer.run({
      eachMessage: async ({ message }) => {
        print({ event: 'consumed', value: message.value.toString() })
        seen += 1
        if (seen === 3) resolve()
      }
    }).catch(reject)
  })
  await consumer.disconnect()
  print({ event: 'done' })
}

main().then(() => process.exit(0), (e) => {
  print({ event: 'error', name: e.name, message: e.message })
  process.exit(1)
})
