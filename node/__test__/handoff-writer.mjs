// A Node writer process of the Redis handoff test (py/tests/test_handoff.py),
// the counterpart of py/tests/handoff_writer.py: follows the ring in etcd
// and sends SET, INCR, HSET, HINCRBY, RPUSH, SADD, EXPIRE and DEL over its
// own keys through the handoff protocol (Transition.route; a moving key's
// command through REDIS_GUARD on its old owner, again after a short wait on
// TRYAGAIN_REPLY, and on MOVED_REPLY on its new owner). Prints "ready", then each acknowledged command as one JSON
// line [key, command, args, reply] in the order acknowledged, a command
// whose server was unavailable (connection failed, or LOADING) with the
// reply "unknown" (it is not sent again, and its key is not used again),
// and "done" after SIGTERM.
//
//   node handoff-writer.mjs ETCD_URL PREFIX WRITER_ID KEYS SEED
//
// Not a test file itself (node --test runs *.test.mjs only).
import { readFileSync } from 'node:fs'
import { createClient, ErrorReply } from 'redis'
import { Follower, MOVED_REPLY, REDIS_GUARD, REDIS_GUARD_SHA1, TRYAGAIN_REPLY } from '../shardring.js'

const [url, prefix, writer, keyCount, seed] = process.argv.slice(2)
const keys = Number(keyCount)

// mulberry32: a small seeded generator, so a run can be repeated.
let state = Number(seed) >>> 0
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0
  let t = state
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const below = (n) => Math.floor(random() * n)

// Commands, their weights and the arguments after the key (as py/tests/handoff_writer.py).
const COMMANDS = [
  ['SET', 4, () => [String(below(1001))]],
  ['INCR', 8, () => []],
  ['HSET', 4, (n) => [`f${n}`, String(n)]],
  ['HINCRBY', 4, () => ['hits', String(1 + below(9))]],
  ['RPUSH', 4, (n) => [String(n)]],
  ['SADD', 4, (n) => [String(n % 50)]],
  ['EXPIRE', 1, () => ['86400']],
  ['DEL', 1, () => []],
]
const TOTAL = COMMANDS.reduce((sum, [, weight]) => sum + weight, 0)
const KINDS = { SET: 'string', INCR: 'string', HSET: 'hash', HINCRBY: 'hash', RPUSH: 'list', SADD: 'set' }

function pick() {
  let r = random() * TOTAL
  for (const command of COMMANDS) {
    r -= command[1]
    if (r < 0) return command
  }
  return COMMANDS[COMMANDS.length - 1]
}

const clients = new Map()
async function client(node) {
  if (!clients.has(node)) {
    const [host, port] = [node.slice(0, node.lastIndexOf(':')), Number(node.slice(node.lastIndexOf(':') + 1))]
    // No reconnection and no offline queue: a command is sent once or fails.
    const socket = { host, port, reconnectStrategy: false }
    // TLS with a client certificate and an ACL user, when the test's servers want them.
    const given = JSON.parse(process.env.SHARDRING_TEST_REDIS ?? 'null')
    const security = given === null ? {} : { username: given.user, password: given.password }
    if (given !== null) {
      Object.assign(socket, { tls: true, ca: readFileSync(given.ca), cert: readFileSync(given.cert), key: readFileSync(given.key) })
    }
    const c = createClient({ socket, disableOfflineQueue: true, ...security })
    c.on('error', () => {})
    clients.set(node, c.connect())
  }
  return clients.get(node)
}

function forget(node) {
  const pending = clients.get(node)
  clients.delete(node)
  pending?.then((c) => c.destroy()).catch(() => {})
}

// A server that is down, or restarting and still reading its append-only
// file (it answers LOADING, even to the connection's handshake), ran nothing.
const unavailable = (error) => !(error instanceof ErrorReply) || error.message.startsWith('LOADING')

async function send(node, words) {
  try {
    return await (await client(node)).sendCommand(words)
  } catch (error) {
    if (unavailable(error)) forget(node)
    throw error
  }
}

// The guard on the old owner; null on its moved reply.
async function guarded(node, mark, key, command, args) {
  let loads = 0
  for (;;) {
    try {
      return await send(node, ['EVALSHA', REDIS_GUARD_SHA1, '2', key, mark, command, ...args])
    } catch (error) {
      if (unavailable(error)) throw error
      // Redis 7.0 sends the guard's errors as "ERR SHARDRING_..."; node-redis keeps the code.
      if (error.message === MOVED_REPLY || error.message === `ERR ${MOVED_REPLY}`) return null
      if (error.message === TRYAGAIN_REPLY || error.message === `ERR ${TRYAGAIN_REPLY}`) {
        // In doubt (a MIGRATE cut short): nothing ran; the mover settles it.
        await new Promise((resolve) => setTimeout(resolve, 5))
        continue
      }
      if (!error.message.startsWith('NOSCRIPT') || ++loads > 2) throw error
      const sha = await send(node, ['SCRIPT', 'LOAD', REDIS_GUARD])
      if (sha !== REDIS_GUARD_SHA1) throw new Error(`the guard loaded as ${sha}`)
    }
  }
}

let stop = false
process.on('SIGTERM', () => { stop = true })
const out = []
const flush = () => { if (out.length) process.stdout.write(out.splice(0).join('')) }

const follower = await Follower.etcd(url, prefix)
// The test stored the even keys as counters before the writers start.
const kinds = new Map()
for (let i = 0; i < keys; i += 2) kinds.set(`${writer}:${i}`, 'string')
const retired = new Set()
process.stdout.write('ready\n')
let n = 0
while (!stop) {
  n += 1
  const key = `${writer}:${below(keys)}`
  if (retired.has(key)) continue
  let [command, , draw] = pick()
  let kind = KINDS[command]
  if (kind !== undefined && (kinds.get(key) ?? kind) !== kind) {
    ;[command, draw, kind] = ['DEL', () => [], undefined]
  }
  const args = draw(n)
  const transition = follower.transition
  const route = transition.route(key)
  let reply
  try {
    if (!route.moving) {
      reply = await send(route.new, [command, key, ...args])
    } else {
      reply = await guarded(route.old, transition.handoffMark, key, command, args)
      if (reply === null) reply = await send(route.new, [command, key, ...args])
    }
  } catch (error) {
    if (!unavailable(error)) throw error
    retired.add(key)
    out.push(JSON.stringify([key, command, args, 'unknown']) + '\n')
    continue
  }
  if (command === 'DEL') kinds.delete(key)
  else if (kind !== undefined) kinds.set(key, kind)
  out.push(JSON.stringify([key, command, args, typeof reply === 'number' ? reply : null]) + '\n')
  if (out.length >= 64) flush()
}
flush()
process.stdout.write('done\n')
follower.close()
for (const pending of clients.values()) pending.then((c) => c.destroy()).catch(() => {})
process.exit(0)
