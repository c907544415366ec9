#!/usr/bin/env node
// Conformance driver for kafkajs, speaking the JSON-lines protocol of docs/conformance.md
// (commands on stdin, events on stdout; kafkajs's own log goes to stderr).
//
// Usage: NODE_PATH=<dir holding kafkajs> node kafkajs_driver.js --bootstrap HOST:PORT[,...] --client-id ID
//
// kafkajs has no manual assignment: "assign" runs a group consumer of its own (group
// "<client id>-assign") from the beginning. It only assigns with its round-robin assignor, has no
// static membership, no cooperative rebalancing, and ships only the gzip codec (the others are
// plugins an application registers), all said in the hello.
'use strict'

const { parseArgs } = require('node:util')
const readline = require('node:readline')
const { Kafka, logLevel, CompressionTypes } = require('kafkajs')
const { version } = require('kafkajs/package.json')

const PROTOCOL_VERSION = 1
const args = parseArgs({ options: { bootstrap: { type: 'string' }, 'client-id': { type: 'string' } } }).values
if (!args.bootstrap || !args['client-id']) {
  process.stderr.write('usage: kafkajs_driver.js --bootstrap HOST:PORT --client-id ID\n')
  process.exit(2)
}

const UNSUPPORTED = {
  'compression.snappy': 'kafkajs ships only gzip; snappy needs a codec package registered by the application (kafkajs-snappy)',
  'compression.lz4': 'kafkajs ships only gzip; lz4 needs a codec package registered by the application (kafkajs-lz4)',
  'compression.zstd': 'kafkajs ships only gzip; zstd needs a codec package registered by the application (@kafkajs/zstd)',
  'static-membership': 'kafkajs 2.2.4 has no group.instance.id (KIP-345)',
  cooperative: 'kafkajs 2.2.4 rebalances eagerly only (no KIP-429 cooperative protocol)'
}
const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP }

function emit (event, fields) {
  process.stdout.write(JSON.stringify({ event, ...fields }) + '\n')
}

const text = b => (b === null || b === undefined ? null : b.toString())

const kafka = new Kafka({
  clientId: args['client-id'],
  brokers: args.bootstrap.split(','),
  logLevel: logLevel.WARN,
  retry: { initialRetryTime: 50, retries: 20 },
  logCreator: () => ({ namespace, label, log }) => {
    process.stderr.write(JSON.stringify({ level: label, namespace, ...log }) + '\n')
  }
})

const producers = new Map() // "codec/idempotent" -> connected producer
let consumer = null
let topic = null
let assignment = []
const consumed = new Map() // partition -> next offset

async function produce (cmd) {
  const codec = cmd.compression || 'none'
  if (!(codec in CODECS)) throw new Error(UNSUPPORTED[`compression.${codec}`] || `unknown codec ${codec}`)
  const key = `${codec}/${!!cmd.idempotent}`
  if (!producers.has(key)) {
    const p = kafka.producer({ idempotent: !!cmd.idempotent, maxInFlightRequests: cmd.idempotent ? 1 : undefined, allowAutoTopicCreation: false })
    await p.connect()
    producers.set(key, p)
  }
  const messages = cmd.records.map(r => ({ key: r.key, value: r.value, partition: r.partition ?? undefined }))
  const results = await producers.get(key).send({ topic: cmd.topic, acks: -1, compression: CODECS[codec], messages })
  // One base offset per partition: the records of that partition follow it in send order.
  const next = new Map(results.map(r => [r.partition, BigInt(r.baseOffset)]))
  const offsets = cmd.records.map(r => {
    if (r.partition === null || r.partition === undefined || !next.has(r.partition)) return null
    const o = next.get(r.partition)
    next.set(r.partition, o + 1n)
    return [r.partition, Number(o)]
  })
  return { offsets }
}

async function startConsumer (groupId, cmd) {
  topic = cmd.topic
  consumer = kafka.consumer({
    groupId,
    sessionTimeout: cmd.session_timeout_ms || 10000,
    heartbeatInterval: cmd.heartbeat_interval_ms || 300,
    rebalanceTimeout: cmd.rebalance_timeout_ms || 30000,
    maxWaitTimeInMs: 200, // kafkajs heartbeats between fetches: keep long polls short
    retry: { initialRetryTime: 50, retries: 20 }
  })
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const now = (payload.memberAssignment[topic] || []).slice().sort((a, b) => a - b)
    const added = now.filter(p => !assignment.includes(p))
    const removed = assignment.filter(p => !now.includes(p))
    assignment = now
    if (removed.length) emit('revoked', { removed, partitions: now, member_id: payload.memberId })
    emit('assigned', { added, partitions: now, member_id: payload.memberId, generation: payload.groupGenerationId })
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    emit('client_error', { error: payload.error && payload.error.name, message: String(payload.error && payload.error.message) })
  })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      consumed.set(partition, Number(message.offset) + 1)
      emit('record', { partition, offset: Number(message.offset), key: text(message.key), value: text(message.value) })
    }
  })
}

async function handle (cmd) {
  switch (cmd.cmd) {
    case 'produce':
      return ['produced', await produce(cmd)]
    case 'subscribe':
      await startConsumer(cmd.group, cmd)
      return ['subscribed', {}]
    case 'assign':
      await startConsumer(`${args['client-id']}-assign`, cmd)
      return ['assigned', { added: cmd.partitions, partitions: cmd.partitions }]
    case 'commit': {
      // Explicit offsets, or the next offset of every consumed partition still assigned.
      const wanted = cmd.offsets && Object.keys(cmd.offsets).length
        ? Object.entries(cmd.offsets).map(([p, o]) => [Number(p), Number(o)])
        : [...consumed.entries()].filter(([p]) => assignment.includes(p))
      await consumer.commitOffsets(wanted.map(([p, o]) => ({ topic, partition: p, offset: String(o) })))
      return ['committed', { offsets: Object.fromEntries(wanted.map(([p, o]) => [String(p), o])) }]
    }
    case 'seek':
      consumer.seek({ topic, partition: cmd.partition, offset: String(cmd.offset) })
      return ['done', { cmd: 'seek' }]
    case 'pause':
      consumer.pause([{ topic, partitions: cmd.partitions }])
      return ['done', { cmd: 'pause' }]
    case 'resume':
      consumer.resume([{ topic, partitions: cmd.partitions }])
      return ['done', { cmd: 'resume' }]
    default:
      return ['unsupported', { cmd: cmd.cmd, reason: `unknown command ${cmd.cmd}` }]
  }
}

async function close () {
  if (consumer) await consumer.disconnect() // LeaveGroup
  for (const p of producers.values()) await p.disconnect()
  emit('closed', {})
  process.exit(0)
}

emit('hello', { protocol: PROTOCOL_VERSION, client: 'kafkajs', version, unsupported: UNSUPPORTED })
// Commands run one after another, in arrival order.
let chain = Promise.resolve()
const lines = readline.createInterface({ input: process.stdin })
lines.on('line', line => {
  if (!line.trim()) return
  const cmd = JSON.parse(line)
  chain = chain.then(async () => {
    if (cmd.cmd === 'close') return close()
    try {
      const [event, fields] = await handle(cmd)
      emit(event, fields)
    } catch (err) {
      emit(`${cmd.cmd}_failed`, { error: err.name, message: String(err.message) })
    }
  })
})
lines.on('close', () => { chain = chain.then(close) })
