// Hot keys through Node: a watched ring shows its sketch every key it
// places, a hot set spreads a key over its preference list, the near cache
// serves for its TTL, bad values are named.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const { Follower, HotKeys, HotSet, NearCache, Ring } = require('../shardring.js')

const counts = (sketch) => Object.fromEntries(sketch.top().map((k) => [k.key.toString(), k.requests]))

test('a watched ring shows its sketch every key it places, batches included', () => {
  const ring = new Ring(['a', 'b', 'c'])
  const sketch = new HotKeys({ sample: 1 })
  ring.get('one') // before watching: not observed
  ring.watchHotKeys(sketch)
  ring.get('one')
  ring.getMany(['batch', 'batch', 'batch'])
  ring.getN('list', 2)
  ring.getByHash(ring.hashKey('by-hash')) // no key: not observed
  ring.addNode('d') // still watched after a change
  ring.get('one')
  assert.deepEqual(counts(sketch), { batch: 3, one: 2, list: 1 })
  assert.equal(sketch.sketchBytes, 2 * 4096 * 8)
  assert.throws(() => new HotKeys({ width: 100 }), { code: 'ERR_OUT_OF_RANGE', message: /width 100/ })
})

test('a spread key is read from its preference list in turn and written to all', () => {
  const ids = Array.from({ length: 12 }, (_, i) => `n${i}`)
  const ring = new Ring(ids)
  const observed = [{ key: Buffer.from('hot'), rate: 300 }]
  const loads = Object.fromEntries(ids.map((id) => [id, 75]))
  loads[ring.get('hot')] += 300
  const writing = new HotSet().advance(ring, observed, loads)
  assert.deepEqual(
    writing.keys().map((k) => [k.key.toString(), k.replicas, k.phase, k.generation]),
    [['hot', 6, 'writing', 1]],
  )
  const spread = HotSet.fromJSON(writing.advance(ring, observed, loads).toJSON())
  assert.equal(spread.epoch, 2)
  const listed = ring.getN('hot', 6)
  const plans = Array.from({ length: 12 }, () => spread.plan(ring, 'hot'))
  assert.deepEqual(plans.map((p) => p.read), [...listed, ...listed])
  assert.deepEqual(plans[1].copies, listed.slice(1))
  assert.equal(plans[1].copyKey.toString(), 'hot#hot1')
  assert.equal(plans[1].readCopy, true)
  assert.equal(spread.plan(ring, 'cold').read, ring.get('cold'))
  assert.throws(() => new HotSet().advance(ring, [], { zz: 1 }), { code: 'RING_INVALID_CONFIG', message: /"zz"/ })
  assert.throws(() => HotSet.fromJSON('{"epoch": 1, "keys": [{"key": "k", "replicas": 1, "phase": "spread", "generation": 1}]}'), {
    code: 'RING_INVALID_CONFIG',
    message: /replicas 1/,
  })
})

test('the near cache serves values for their TTL', async () => {
  assert.equal(NearCache.defaultCapacity(12), 44)
  const cache = new NearCache(2, 0.05)
  cache.put('k', Buffer.from('v'))
  assert.equal(cache.get('k').toString(), 'v')
  assert.equal(cache.get('other'), null)
  await new Promise((resolve) => setTimeout(resolve, 60))
  assert.equal(cache.get('k'), null)
  assert.deepEqual(cache.hitsAndMisses, [1, 2])
  assert.throws(() => new NearCache(0, 1), { code: 'ERR_OUT_OF_RANGE', message: /capacity 0/ })
})

test('a follower reports its near cache in its metrics', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardring-near-'))
  const path = join(dir, 'ring.json')
  writeFileSync(path, '{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}]}')
  const follower = await Follower.file(path)
  try {
    assert.doesNotMatch(follower.metrics(), /near_cache/)
    const cache = new NearCache(16, 60)
    assert.throws(() => follower.reportNearCache({}), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /cache must be a NearCache/ })
    follower.reportNearCache(cache)
    cache.put('hot', Buffer.from('v'))
    for (let i = 0; i < 3; i++) assert.equal(cache.get('hot').toString(), 'v')
    assert.equal(cache.get('cold'), null)
    const text = follower.metrics()
    for (const line of ['shardring_near_cache_hits_total 3', 'shardring_near_cache_misses_total 1',
      'shardring_near_cache_entries 1.0', 'shardring_near_cache_capacity 16.0', 'shardring_near_cache_hit_ratio 0.75']) {
      assert.ok(text.includes(line + '\n'), line)
    }
  } finally {
    follower.close()
    rmSync(dir, { recursive: true })
  }
})
