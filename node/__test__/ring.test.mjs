import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Ring, hashKey } = require('../index.js')

test('a string and its UTF-8 bytes land on the same node', () => {
  const ring = new Ring(Array.from({ length: 7 }, (_, i) => `node-${i}`))
  for (const key of ['abc', 'café', '🔑', '', '键']) {
    assert.equal(ring.get(key), ring.get(Buffer.from(key, 'utf8')))
    assert.equal(ring.get(key), ring.get(new TextEncoder().encode(key)))
  }
})

test('other key types throw TypeError', () => {
  const ring = new Ring(['a', 'b'])
  for (const key of [1, null, undefined, {}, ['a'], 1n, new Uint16Array(2)]) {
    assert.throws(() => ring.get(key), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE')
  }
})

test('weights and drained nodes', () => {
  const ring = new Ring([{ id: 'small', weight: 1 }, { id: 'big', weight: 3 }, { id: 'drained', weight: 0 }], { vnodes: 100 })
  const counts = { small: 0, big: 0, drained: 0 }
  for (let i = 0; i < 20000; i++) counts[ring.get(`k${i}`)]++
  assert.equal(counts.drained, 0)
  assert.ok(counts.big / counts.small > 2 && counts.big / counts.small < 4.5, JSON.stringify(counts))
  assert.equal(ring.getN('k', 5).length, 2)
})

const badRings = [
  [['a', 'a'], {}, 'RING_DUPLICATE_ID', /"a"/],
  [[''], {}, 'RING_EMPTY_ID', /position 0/],
  [[{ id: 'a', weight: NaN }], {}, 'RING_INVALID_WEIGHT', /NaN/],
  [[{ id: 'a', weight: -1 }], {}, 'RING_INVALID_WEIGHT', /-1/],
  [[{ id: 'a', weight: Infinity }], {}, 'RING_INVALID_WEIGHT', /inf/],
  [[{ id: 'a', weight: 1e18 }], {}, 'RING_TOO_MANY_POINTS', /limit/],
  [['a'], { vnodes: 0 }, 'RING_ZERO_VNODES', /vnodes/],
]
for (const [nodes, options, code, message] of badRings) {
  test(`bad input: ${code} ${message}`, () => {
    assert.throws(() => new Ring(nodes, options), (e) => e instanceof Error && e.code === code && message.test(e.message))
  })
}

test('empty rings throw RING_EMPTY_RING', () => {
  for (const ring of [new Ring([]), new Ring([{ id: 'drained', weight: 0 }])]) {
    assert.throws(() => ring.get('k'), { code: 'RING_EMPTY_RING' })
    assert.throws(() => ring.getN('k', 2), { code: 'RING_EMPTY_RING' })
  }
})

test('bad seeds throw RangeError', () => {
  for (const seed of [-1, 1.5, 2 ** 60, -1n, 2n ** 64n]) {
    assert.throws(() => new Ring(['a'], { seed }), RangeError)
  }
  assert.equal(new Ring(['a'], { seed: 2n ** 64n - 1n }).hashKey('k'), hashKey('k', 2n ** 64n - 1n))
})

test('bad JSON config names the field', () => {
  assert.throws(() => Ring.fromJSON('{"format_version": 1, "nodes": [], "colour": 1}'), {
    code: 'RING_INVALID_CONFIG',
    message: /colour/,
  })
})
