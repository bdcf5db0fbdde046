// A migrating user runs npm hashring beside shardring in one process: its
// get('__proto__') leaves `before`, `next` and `value` on Object.prototype.
// Every path that builds or returns objects (ring, analysis, bounded,
// transition, follower) must answer exactly as it does in a clean process.
// Each test restores Object.prototype, also on failure.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { writeFileSync, renameSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import util from 'node:util'
import { Follower, LoadTracker, Ring, Transition, diff } from '../shardring.js'

const HashRing = createRequire(import.meta.url)('hashring')
const POLLUTED = ['before', 'next', 'value']
const KEYS = Array.from({ length: 300 }, (_, i) => `key-${i}`)

// Runs `body` with Object.prototype as `pollute` leaves it, then puts back
// the descriptors it had (none, in a clean process).
async function polluted(pollute, body) {
  const saved = POLLUTED.map((name) => [name, Object.getOwnPropertyDescriptor(Object.prototype, name)])
  try {
    pollute()
    return await body()
  } finally {
    for (const [name, descriptor] of saved) {
      if (descriptor === undefined) delete Object.prototype[name]
      else Object.defineProperty(Object.prototype, name, descriptor)
    }
  }
}

// Everything the package builds or returns, as plain data to compare.
async function exercise() {
  const out = {}
  // ring: every constructor shape, the options read from objects, derivations.
  const ring = new Ring([{ id: 'a', weight: 2, zone: 'east' }, 'b', 'value'], { vnodes: 40, seed: 7 })
  const byWeight = new Ring({ a: 1, next: 2, before: 1 })
  const memento = new Ring(['m0', 'm1', 'm2'], { algorithm: 'memento', buckets: { m0: 2, m1: 0, m2: 1 } })
  const haproxy = new Ring(['web1', 'web2'], { algorithm: 'haproxy', haproxyIds: { web1: 3 } })
  const envoy = new Ring(['h:1', 'h:2'], { algorithm: 'envoy-ring-hash', minRingSize: 64, maxRingSize: 256 })
  const copy = Ring.fromJSON(ring.toJSONString())
  const derived = ring.withNode({ id: 'c', weight: 1 }).withoutNode('b').withWeight('a', 3)
  const changed = new Ring(['a', 'b'])
  changed.addNode('c')
  changed.setWeight('a', 2)
  changed.removeNode('b')
  out.ring = {
    nodes: ring.nodes,
    ids: [...ring],
    byWeight: byWeight.nodes,
    buckets: memento.buckets,
    haproxyIds: haproxy.haproxyIds,
    ringSizes: envoy.ringSizes,
    owners: ring.getMany(KEYS),
    get: KEYS.map((k) => ring.get(k)),
    getN: KEYS.map((k) => ring.getN(k, 2)),
    indices: [...ring.getIndices(Buffer.from(KEYS.join('')), Uint32Array.from(KEYS, (k) => k.length))],
    indicesAsync: [...(await ring.getIndicesAsync(Buffer.from(KEYS.join('')), Uint32Array.from(KEYS, (k) => k.length)))],
    hash: ring.hashKey('k'),
    fingerprint: ring.fingerprint,
    equals: copy.equals(ring),
    json: ring.toJSON(),
    ownership: ring.ownership(),
    derived: [derived.ids, derived.nodes, changed.ids, changed.nodes],
    inspected: util.inspect(ring),
  }
  // Still not clonable: the guard's accessor is in place on every ring.
  for (const guarded of [ring, copy, derived, changed]) {
    assert.throws(() => structuredClone(guarded), { name: 'TypeError', message: /cannot be cloned/ })
  }
  // analysis
  const grown = ring.withNode('d')
  out.analysis = { diff: diff(ring, grown), balance: ring.balance(KEYS) }
  // bounded
  const tracker = new LoadTracker(ring, 0.25)
  const leases = KEYS.slice(0, 20).map((k) => tracker.acquire(k))
  const loads = tracker.loads
  for (const lease of leases) lease.release()
  const balancer = LoadTracker.haproxy(haproxy, 150)
  out.bounded = {
    leases: leases.map(({ node, probes }) => ({ node, probes })),
    loads,
    after: tracker.loads,
    haproxy: balancer.acquire('k').node,
    inspected: util.inspect(tracker),
  }
  assert.throws(() => structuredClone(tracker), { name: 'TypeError', message: /cannot be cloned/ })
  // transition
  const moving = Transition.between(ring, grown)
  const stated = Transition.fromJSON(
    JSON.stringify({ format_version: 1, nodes: [{ id: 'a' }, { id: 'b', state: 'draining' }, { id: 'c', state: 'warming' }] }),
  )
  out.transition = [moving, stated].map((t) => ({
    read: KEYS.map((k) => t.readNodes(k)),
    write: KEYS.map((k) => t.writeNodes(k)),
    rings: [t.readRing.ids, t.oldRing.ids, t.newRing.ids],
    states: ['a', 'b', 'c', 'd', 'value'].map((id) => t.state(id)),
    steady: t.isSteady,
    fingerprint: t.fingerprint,
    moves: t.moves(),
  }))
  // follower (a config file; etcd's events are built by the same code)
  const dir = mkdtempSync(join(tmpdir(), 'shardring-pollution-'))
  const path = join(dir, 'ring.json')
  const write = (config) => {
    writeFileSync(`${path}.tmp`, JSON.stringify(config))
    renameSync(`${path}.tmp`, path)
  }
  write({ format_version: 1, nodes: [{ id: 'a' }, { id: 'b' }] })
  const follower = await Follower.file(path, { timeout: 5 })
  try {
    const change = once(follower, 'change')
    write({ format_version: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'value' }] })
    const [event] = await change
    const { connected, revision, fingerprint, epochs } = follower.status()
    out.follower = {
      event,
      status: { connected, revision, fingerprint, epochs },
      ids: follower.ring.ids,
      fingerprint: follower.fingerprint,
      read: KEYS.map((k) => follower.readNodes(k)),
      write: KEYS.map((k) => follower.writeNodes(k)),
      transition: follower.transition.isSteady,
    }
    assert.throws(() => structuredClone(follower.ring), { name: 'TypeError', message: /cannot be cloned/ })
  } finally {
    follower.close()
    rmSync(dir, { recursive: true })
  }
  return out
}

const clean = await exercise()

test('npm hashring get("__proto__") pollutes Object.prototype, and shardring answers as in a clean process', async () => {
  const answers = await polluted(
    () => {
      const peer = new HashRing(['127.0.0.1:11211', '127.0.0.1:11212'])
      peer.get('__proto__')
      // The pollution this test is about, really left by the peer.
      assert.deepEqual(POLLUTED.filter((name) => Object.hasOwn(Object.prototype, name)), POLLUTED)
      assert.equal({}.value, peer.get('__proto__'))
    },
    exercise,
  )
  assert.deepEqual(answers, clean)
  assert.deepEqual(POLLUTED.filter((name) => Object.hasOwn(Object.prototype, name)), [], 'restored')
})

test('before, next and value set on Object.prototype directly change nothing', async () => {
  const answers = await polluted(() => {
    Object.prototype.before = { value: 1 }
    Object.prototype.next = () => ({ done: true })
    Object.prototype.value = 'a'
  }, exercise)
  assert.deepEqual(answers, clean)
})

test('a Ring built while polluted is the ring a clean process builds', async () => {
  const ring = await polluted(
    () => new HashRing(['x:1']).get('__proto__'),
    () => new Ring(['a', 'b', 'c'], { algorithm: 'jump', seed: 1 }),
  )
  const want = new Ring(['a', 'b', 'c'], { algorithm: 'jump', seed: 1 })
  assert.equal(ring.fingerprint, want.fingerprint)
  assert.deepEqual(ring.getMany(KEYS), want.getMany(KEYS))
})

test('a follower reads its options as own properties: an inherited timeout is not one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardring-pollution-'))
  const path = join(dir, 'ring.json')
  writeFileSync(path, JSON.stringify({ format_version: 1, nodes: [{ id: 'a' }] }))
  Object.prototype.timeout = 'soon'
  try {
    const follower = await Follower.file(path)
    follower.close()
    const given = await Follower.file(path, { timeout: 5 })
    given.close()
    await assert.rejects(Follower.file(path, { timeout: 'soon' }), { name: 'TypeError', message: /timeout must be a number/ })
  } finally {
    delete Object.prototype.timeout
    rmSync(dir, { recursive: true })
  }
})
