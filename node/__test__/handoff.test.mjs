// The handoff protocol's pieces (core/SPEC.md, Handoff): a key's route
// during a transition, the old and the new ring's owner, and the Redis
// guard's source, SHA-1 and moved reply; py/tests/test_handoff.py runs the
// protocol on real Redis servers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { MOVED_REPLY, REDIS_GUARD, REDIS_GUARD_SHA1, Ring, TRYAGAIN_REPLY, Transition } from '../shardring.js'

test('route gives the old ring owner, the new ring owner and whether they differ', () => {
  const oldRing = new Ring(['a', 'b', 'c', 'd'])
  const newRing = new Ring(['a', 'b', 'c', 'd', 'e'])
  const transition = Transition.between(oldRing, newRing)
  let moving = 0
  for (let i = 0; i < 2000; i++) {
    const key = `k${i}`
    const route = transition.route(key)
    assert.deepEqual(route, { old: oldRing.get(key), new: newRing.get(key), moving: oldRing.get(key) !== newRing.get(key) })
    moving += route.moving ? 1 : 0
  }
  assert.ok(moving > 300 && moving < 500, `${moving} of 2000 keys move to the 5th node`)
  assert.deepEqual(transition.route(Buffer.from('k1')), transition.route('k1'))
  assert.throws(() => transition.route(1), { message: 'key must be a string, Buffer or Uint8Array, not number' })
  assert.equal(transition.handoffMark, `shardring:handoff:${transition.fingerprintHex}`)
})

test('the guard is named by its SHA-1 and answers the moved and try-again replies', () => {
  assert.equal(createHash('sha1').update(REDIS_GUARD).digest('hex'), REDIS_GUARD_SHA1)
  assert.equal(MOVED_REPLY, 'SHARDRING_MOVED')
  assert.ok(REDIS_GUARD.includes(`redis.error_reply('${MOVED_REPLY}')`))
  assert.equal(TRYAGAIN_REPLY, 'SHARDRING_TRYAGAIN')
  assert.ok(REDIS_GUARD.includes(`redis.error_reply('${TRYAGAIN_REPLY}')`))
})
