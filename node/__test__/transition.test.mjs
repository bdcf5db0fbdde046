// Transition through Node: read and write sets while members warm up or drain.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Ring, Transition } from '../shardring.js'

const KEYS = Array.from({ length: 5000 }, (_, i) => `key-${i}`)

test('warming and draining members', () => {
  const config = { format_version: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'w', state: 'warming' }, { id: 'd', state: 'draining' }] }
  const t = Transition.fromJSON(JSON.stringify(config))
  const oldRing = new Ring(['a', 'b', 'd'])
  const newRing = new Ring(['a', 'b', 'w'])
  assert.deepEqual(t.readRing.ids, ['a', 'b'])
  assert.ok(t.oldRing.equals(oldRing) && t.newRing.equals(newRing))
  for (const key of KEYS) {
    const owner = t.readRing.get(key)
    assert.deepEqual(t.readNodes(key), oldRing.get(key) === 'd' ? [owner, 'd'] : [owner])
    assert.deepEqual(t.writeNodes(key), newRing.get(key) === 'w' ? [owner, 'w'] : [owner])
  }
  assert.deepEqual([t.state('w'), t.state('d'), t.state('a'), t.state('zz')], ['warming', 'draining', 'active', null])
  assert.equal(t.isSteady, false)
  assert.ok(t.moves().flows.every((f) => f.from === 'd' || f.to === 'w'))
  assert.equal(Transition.between(oldRing, newRing).fingerprint, t.fingerprint)
  assert.throws(() => Ring.fromJSON(JSON.stringify(config)), { code: 'RING_INVALID_CONFIG', message: /"w" is warming/ })
  assert.throws(() => Transition.between(oldRing, 5), { name: 'TypeError', message: 'newRing must be a shardring Ring, not number' })
  assert.throws(() => Transition.between(new Ring(['a']), new Ring(['a'], { seed: 1 })), { code: 'RING_SEED_MISMATCH' })
})
