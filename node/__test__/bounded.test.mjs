// Bounded loads through Node: capacities, release(), swaps and errors.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { LoadTracker, Ring } = require('../shardring.js')

test('a hot key spills along its preference list, within capacity', () => {
  const ring = new Ring(['a', 'b', 'c', 'd'])
  const tracker = new LoadTracker(ring, 0.25)
  const leases = Array.from({ length: 100 }, () => tracker.acquire('hot'))
  // Capacity ceil(1.25 * (T + 1) / 4) is 1 for the first three requests, then 2.
  const order = ring.getN('hot', 4)
  assert.deepEqual(leases.slice(0, 4).map((l) => l.node), [order[0], order[1], order[2], order[0]])
  assert.equal(leases[0].probes, 1)
  assert.equal(Math.max(...leases.map((l) => l.probes)), 4)
  assert.equal(tracker.totalLoad, 100)
  assert.ok(Object.values(tracker.loads).every((load) => load <= Math.ceil((1.25 * 100) / 4)))
  for (const lease of leases) lease.release()
  assert.equal(tracker.totalLoad, 0)
  assert.throws(() => leases[0].release(), { code: 'RING_NO_LOAD' })
  assert.throws(() => tracker.release('a'), { code: 'RING_NO_LOAD', message: /"a"/ })
  assert.throws(() => tracker.release('zz'), { code: 'RING_UNKNOWN_NODE' })
})

test('swap carries loads by id; bad epsilon and empty rings throw', () => {
  const ring = new Ring(['a', 'b', 'c'])
  const tracker = new LoadTracker(ring, 1)
  for (let i = 0; i < 30; i++) tracker.acquire(`k${i}`)
  const before = tracker.loads
  tracker.swap(ring.withoutNode('a').withNode('z'))
  assert.deepEqual(tracker.loads, { b: before.b, c: before.c, z: 0 })
  assert.equal(tracker.totalLoad, before.b + before.c)
  for (const epsilon of [0, -1, NaN, Infinity]) {
    assert.throws(() => new LoadTracker(ring, epsilon), { code: 'RING_INVALID_EPSILON' })
  }
  assert.throws(() => new LoadTracker(new Ring({ drained: 0 }), 0.25).acquire('k'), { code: 'RING_EMPTY_RING' })
  assert.throws(() => tracker.acquire(42), TypeError)
  assert.equal(tracker.balanceFactor, 2)
})

test('a tracker follows its ring as it changes in place', () => {
  // A gateway that removes a failed backend must stop sending it requests at once.
  const ring = new Ring(['a', 'b', 'c'])
  const tracker = new LoadTracker(ring, 0.25)
  const held = Array.from({ length: 30 }, (_, i) => tracker.acquire(`k${i}`))
  const onA = held.filter((lease) => lease.node === 'a').length
  assert.ok(onA > 0)
  ring.removeNode('a')
  assert.deepEqual(Object.keys(tracker.loads), ['b', 'c'])
  assert.equal(tracker.totalLoad, 30 - onA)
  for (let i = 0; i < 200; i++) assert.notEqual(tracker.acquire(`k${i}`).node, 'a')
  ring.addNode('d')
  assert.equal(tracker.loads.d, 0)
  assert.ok(Array.from({ length: 200 }, (_, i) => tracker.acquire(`x${i}`).node).includes('d'))
  // swap() moves the tracker onto another ring, which it then follows.
  const other = ring.withoutNode('b')
  tracker.swap(other)
  other.removeNode('c')
  assert.deepEqual(Object.keys(tracker.loads), ['d'])
})

test("LoadTracker.haproxy bounds loads as HAProxy's hash-balance-factor", () => {
  const ring = new Ring({ a: 1, b: 2, off: 0, c: 1 }, { algorithm: 'haproxy' })
  const tracker = LoadTracker.haproxy(ring, 125)
  assert.equal(tracker.balanceFactor, 1.25)
  const leases = Array.from({ length: 10 }, (_, i) => tracker.acquire(`k${i}`))
  // Before the 10th: 9 in flight, ((9 + 1) * 125 + 99) / 100 = 13 slots over
  // effective weights 16, 32, 0, 16: at most 3, 6, 0 and 4 held before it.
  const loads = tracker.loads
  assert.equal(loads.off, 0)
  assert.ok(loads.a <= 4 && loads.b <= 7 && loads.c <= 5, JSON.stringify(loads))
  assert.equal(tracker.totalLoad, 10)
  for (const lease of leases) lease.release()
  assert.throws(() => LoadTracker.haproxy(ring, 100), { code: 'RING_INVALID_CONFIG', message: /greater than 100/ })
  assert.throws(() => LoadTracker.haproxy(new Ring(['a']), 125), { code: 'RING_INVALID_CONFIG', message: /"haproxy"/ })
  assert.throws(() => LoadTracker.haproxy({}, 125), { code: 'ERR_INVALID_ARG_TYPE' })
})
