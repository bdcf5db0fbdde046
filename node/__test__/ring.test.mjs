import { test } from 'node:test'
import assert from 'node:assert/strict'
import util from 'node:util'
import { LoadTracker, Ring, diff, hashKey } from '../shardring.js'

const KEYS = Array.from({ length: 3000 }, (_, i) => `key-${i}`)

test('a string and its UTF-8 bytes land on the same node, alone and in batches', () => {
  const ring = new Ring(Array.from({ length: 7 }, (_, i) => `node-${i}`))
  const keys = ['abc', 'café', '🔑', '', '键', '\0', 'a real \ufffd', 'x'.repeat(254), 'é'.repeat(127), 'y'.repeat(255), 'long'.repeat(300)]
  for (const key of keys) {
    const owner = ring.get(key)
    assert.equal(ring.get(Buffer.from(key, 'utf8')), owner)
    assert.equal(ring.get(new TextEncoder().encode(key)), owner)
  }
  const owners = keys.map((k) => ring.get(k))
  assert.deepEqual(ring.getMany(keys), owners)
  assert.deepEqual(ring.getMany(keys.map((k) => Buffer.from(k, 'utf8'))), owners)
  assert.deepEqual(ring.getMany([keys[0], Buffer.from(keys[1]), keys[2]]), owners.slice(0, 3))
  assert.deepEqual(ring.getMany([]), [])
})

test('other key types throw TypeError', () => {
  const ring = new Ring(['a', 'b'])
  for (const key of [1, null, undefined, {}, ['a'], 1n, new Uint16Array(2)]) {
    assert.throws(() => ring.get(key), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE')
    assert.throws(() => ring.getMany(['ok', key]), (e) => e instanceof TypeError && /key 1/.test(e.message))
  }
  assert.throws(() => ring.getMany('abc'), TypeError)
  assert.throws(() => ring.get(1), { message: 'key must be a string, Buffer or Uint8Array, not number' })
})

test('nodes as ids, objects or an id -> weight map', () => {
  const a = new Ring(['x', 'y'])
  const b = new Ring([{ id: 'x' }, { id: 'y', weight: 1 }])
  const c = new Ring({ x: 1, y: 1 })
  assert.equal(a.fingerprint, b.fingerprint)
  assert.equal(a.fingerprint, c.fingerprint)
  assert.deepEqual(c.ids, ['x', 'y'])
  const zoned = new Ring([{ id: 'x', weight: 2, zone: 'east' }, 'y'])
  assert.deepEqual(zoned.nodes, [{ id: 'x', weight: 2, zone: 'east' }, { id: 'y', weight: 1 }])
  for (const bad of [42, 'xy', [1], [{ weight: 1 }], null]) {
    assert.throws(() => new Ring(bad), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE')
  }
})

test('weights, drained nodes, ownership and balance', () => {
  const ring = new Ring([{ id: 'small', weight: 1 }, { id: 'big', weight: 3 }, { id: 'drained', weight: 0 }], { vnodes: 100 })
  const owners = ring.getMany(KEYS)
  assert.ok(!owners.includes('drained'))
  const shares = ring.ownership()
  assert.deepEqual(Object.keys(shares), ['small', 'big', 'drained'])
  assert.equal(shares.drained, 0)
  assert.ok(Math.abs(shares.small + shares.big - 1) < 1e-12)
  const b = ring.balance(KEYS)
  assert.equal(b.keys, KEYS.length)
  assert.equal(b.counts.small + b.counts.big, KEYS.length)
  assert.equal(b.counts.big, owners.filter((o) => o === 'big').length)
  assert.ok(b.byNode.maxOverMean > 1.3 && b.byWeight.maxOverMean < b.byNode.maxOverMean)
  assert.deepEqual(ring.getN('k', 5).sort(), ['big', 'small'])
})

test('objects keyed by node id hold every id as an own key, __proto__ and NUL included', () => {
  const ids = ['__proto__', 'constructor', 'a\0b', 'plain']
  const ring = new Ring(ids, { algorithm: 'memento' })
  const own = (object) => Object.getOwnPropertyNames(object)
  assert.deepEqual(own(ring.buckets), ids)
  assert.deepEqual(Object.values(ring.buckets), [0, 1, 2, 3])
  assert.equal(Object.getPrototypeOf(ring.buckets), Object.prototype)
  assert.deepEqual(own(ring.ownership()), ids)
  assert.equal(ring.balance(KEYS).counts.__proto__, ring.getMany(KEYS).filter((o) => o === '__proto__').length)
  assert.deepEqual(own(new LoadTracker(ring, 1.25).loads), ids)
  assert.deepEqual(JSON.parse(JSON.stringify(ring.buckets)), { ['__proto__']: 0, constructor: 1, 'a\0b': 2, plain: 3 })
  const haproxy = new Ring(['__proto__', 'x'], { algorithm: 'haproxy', haproxyIds: JSON.parse('{"__proto__": 5}') })
  assert.deepEqual(own(haproxy.haproxyIds), ['__proto__'])
  assert.equal(haproxy.haproxyIds.__proto__, 5)
})

test('derivation is immutable and minimal; mutation swaps the ring', () => {
  const ring = new Ring(['a', 'b', 'c'])
  const grown = ring.withNode({ id: 'd', zone: 'west' })
  assert.deepEqual([...ring], ['a', 'b', 'c'])
  assert.deepEqual([...grown], ['a', 'b', 'c', 'd'])
  const before = ring.getMany(KEYS)
  const after = grown.getMany(KEYS)
  after.forEach((owner, i) => assert.ok(owner === before[i] || owner === 'd'))
  assert.equal(grown.withoutNode('d').fingerprint, ring.fingerprint)
  ring.addNode('d')
  assert.ok(ring.has('d') && ring.size === 4)
  assert.deepEqual(ring.getMany(KEYS), after.map((o) => (o === 'd' ? 'd' : o)))
  ring.setWeight('d', 0)
  assert.deepEqual(ring.getMany(KEYS), before)
  ring.removeNode('d')
  assert.deepEqual([...ring], ['a', 'b', 'c'])
  assert.ok(!ring.has('d'))
})

test('diff is exact', () => {
  const old = new Ring(['a', 'b', 'c'])
  const next = old.withNode('d')
  const d = diff(old, next)
  assert.ok(Math.abs(d.movedShare - next.ownership().d) < 1e-12)
  assert.deepEqual(d.flows.map((f) => f.to), ['d', 'd', 'd'])
  for (const key of KEYS.slice(0, 500)) {
    const h = old.hashKey(key)
    const arc = d.arcs.find((a) => a.start <= h && h <= a.end)
    if (old.get(key) !== next.get(key)) assert.deepEqual([arc.from, arc.to], [old.get(key), 'd'])
    else assert.equal(arc, undefined)
  }
  assert.throws(() => diff(old, new Ring(['a'], { seed: 1 })), { code: 'RING_SEED_MISMATCH' })
  assert.throws(() => diff(old, new Ring([])), { code: 'RING_EMPTY_RING' })
})

test('JSON round trips', () => {
  const ring = new Ring([{ id: 'a', weight: 1.5, zone: 'east' }, 'b'], { vnodes: 40, seed: 7 })
  const again = Ring.fromJSON(JSON.stringify(ring))
  assert.equal(again.fingerprint, ring.fingerprint)
  assert.equal(JSON.parse(JSON.stringify(ring)).nodes[0].zone, 'east')
  const big = new Ring(['a'], { seed: 2n ** 63n + 5n })
  assert.equal(Ring.fromJSON(big.toJSONString()).seed, 2n ** 63n + 5n)
  assert.throws(() => JSON.stringify(big), RangeError)
})

test('hash lookups agree with key lookups', () => {
  const ring = new Ring(['a', 'b', 'c'], { seed: 9 })
  for (const key of KEYS.slice(0, 200)) {
    assert.equal(ring.getByHash(ring.hashKey(key)), ring.get(key))
    assert.equal(ring.hashKey(key), hashKey(key, 9))
    assert.equal(ring.hashKey(key), hashKey(key, 9n))
  }
  assert.throws(() => ring.getByHash(2n ** 64n), RangeError)
  assert.throws(() => ring.getByHash(-1n), RangeError)
})

const badRings = [
  [['a', 'a'], {}, 'RING_DUPLICATE_ID', /"a"/],
  [[''], {}, 'RING_EMPTY_ID', /position 0/],
  [[{ id: 'a', weight: NaN }], {}, 'RING_INVALID_WEIGHT', /NaN/],
  [[{ id: 'a', weight: -1 }], {}, 'RING_INVALID_WEIGHT', /-1/],
  [[{ id: 'a', weight: Infinity }], {}, 'RING_INVALID_WEIGHT', /inf/],
  [[{ id: 'a', zone: '' }], {}, 'RING_EMPTY_ZONE', /zone/],
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
    for (const call of [() => ring.get('k'), () => ring.getN('k', 2), () => ring.getMany(['k']), () => ring.getByHash(1n), () => ring.balance(['k'])]) {
      assert.throws(call, { code: 'RING_EMPTY_RING' })
    }
  }
})

test('unknown nodes and duplicates', () => {
  const ring = new Ring(['a'])
  for (const call of [() => ring.withoutNode('zz'), () => ring.removeNode('zz'), () => ring.setWeight('zz', 1), () => ring.withWeight('zz', 1)]) {
    assert.throws(call, { code: 'RING_UNKNOWN_NODE', message: 'unknown node "zz"' })
  }
  assert.throws(() => ring.addNode('a'), { code: 'RING_DUPLICATE_ID' })
  assert.deepEqual([...ring], ['a'])
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
  assert.throws(() => Ring.fromJSON('{"format_version": 2, "nodes": []}'), { code: 'RING_UNSUPPORTED_FORMAT' })
})

test('vnodes and n must be whole numbers in range', () => {
  for (const vnodes of [-1, 1.9, 2 ** 32, NaN, Infinity, -4294967136]) {
    assert.throws(() => new Ring(['a'], { vnodes }), (e) => e instanceof RangeError && e.message.includes(String(vnodes)))
  }
  const ring = new Ring(['a', 'b', 'c'])
  for (const n of [-1, 1.5, NaN, -Infinity]) {
    assert.throws(() => ring.getN('k', n), RangeError)
  }
  assert.throws(() => ring.getN('k', -1), { message: 'n must be a whole number >= 0, got -1' })
  assert.equal(ring.getN('k', 2 ** 32).length, 3)
  assert.equal(ring.getN('k', 2 ** 53).length, 3)
})

test('misspelt option and node fields throw instead of being ignored', () => {
  const unknown = (field) => (error) => error instanceof TypeError && error.code === 'ERR_INVALID_ARG_VALUE' && error.message.includes(field)
  assert.throws(() => new Ring(['a'], { vnode: 10 }), unknown('"vnode"'))
  assert.throws(() => new Ring(['a'], { table_size: 7 }), unknown('"table_size"'))
  assert.throws(() => new Ring([{ id: 'a', wieght: 2 }]), unknown('"wieght"'))
  assert.throws(() => new Ring(['a']).withNode({ id: 'b', zones: 'x' }), unknown('"zones"'))
  const ring = new Ring(['a'])
  assert.throws(() => ring.addNode({ id: 'b', Weight: 2 }), unknown('"Weight"'))
  assert.equal(ring.size, 1)
  assert.throws(() => new Ring(['a'], 5), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
  assert.equal(new Ring([{ id: 'a', weight: 2, zone: 'z' }], { vnodes: 10, seed: 1n }).pointCount, 20)
})

test('ids that are not strings throw TypeError naming the type', () => {
  const ring = new Ring(['a'])
  const notString = (type) => ({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: `id must be a string, not ${type}` })
  assert.throws(() => ring.has(null), notString('null'))
  assert.throws(() => ring.withoutNode(5), notString('number'))
  assert.throws(() => new Ring([{ id: 3 }]), notString('number'))
  assert.throws(() => new Ring([null]), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
})

test('getIndices places a packed batch as get does, on or off the JS thread', async () => {
  const ring = new Ring(['a', 'b', 'c', 'd'])
  const keys = ['alpha', '', 'gamma', 'δέλτα', 'k'.repeat(1000)]
  const bytes = Buffer.concat(keys.map((k) => Buffer.from(k)))
  const lengths = Uint32Array.from(keys, (k) => Buffer.byteLength(k))
  const expected = keys.map((k) => ring.ids.indexOf(ring.get(k)))
  assert.deepEqual([...ring.getIndices(bytes, lengths)], expected)
  assert.deepEqual([...(await ring.getIndicesAsync(new Uint8Array(bytes), lengths))], expected)
  assert.deepEqual([...ring.getIndices(Buffer.alloc(0), new Uint32Array(0))], [])
  const overrun = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' }
  assert.throws(() => ring.getIndices(bytes, Uint32Array.of(bytes.length + 1)), overrun)
  assert.throws(() => ring.getIndicesAsync(bytes, Uint32Array.of(bytes.length + 1)), overrun)
  const empty = new Ring([{ id: 'a', weight: 0 }])
  assert.throws(() => empty.getIndicesAsync(bytes, lengths), { code: 'RING_EMPTY_RING' })
})

test('the ring can change while getIndicesAsync runs; the answer is from the snapshot at the call', async () => {
  const ring = new Ring(['a', 'b'])
  const ids = ring.ids
  const bytes = Buffer.from('key-1key-2')
  const lengths = Uint32Array.of(5, 5)
  const expected = [...ring.getIndices(bytes, lengths)]
  const pending = ring.getIndicesAsync(bytes, lengths)
  ring.removeNode('a')
  ring.addNode('c')
  assert.deepEqual([...(await pending)], expected)
  assert.deepEqual(expected.map((i) => ids[i]), ['key-1', 'key-2'].map((k) => new Ring(['a', 'b']).get(k)))
  assert.deepEqual(ring.ids, ['b', 'c'])
})

test('Maps, Sets, typed arrays and arrays are not node maps or options', () => {
  const typeError = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }
  assert.throws(() => new Ring(new Map([['a', 1]])), typeError)
  assert.throws(() => new Ring(new Set(['a'])), typeError)
  assert.throws(() => new Ring(new Uint8Array(2)), typeError)
  assert.throws(() => new Ring(['a'], []), typeError)
  assert.throws(() => new Ring(['a'], new Map([['vnodes', 3]])), typeError)
  assert.equal(new Ring(Object.assign(Object.create(null), { a: 1, b: 2 })).size, 2)
})

test('a lone surrogate in a string key throws RING_INVALID_UTF8 everywhere, as in Python', () => {
  const ring = new Ring(['a', 'b'])
  const invalid = { code: 'RING_INVALID_UTF8', message: /lone surrogate/ }
  for (const key of ['\ud800', 'x\udfff', 'lone \ud800 surrogate', 'y'.repeat(300) + '\ud800']) {
    assert.throws(() => ring.get(key), invalid)
    assert.throws(() => ring.getN(key, 2), invalid)
    assert.throws(() => ring.hashKey(key), invalid)
    assert.throws(() => hashKey(key), invalid)
    assert.throws(() => ring.getMany(['ok', key]), invalid)
    assert.throws(() => ring.balance(['ok', key]), invalid)
    assert.throws(() => ring.balance([Buffer.from('ok'), key]), invalid)
    assert.throws(() => new LoadTracker(ring, 0.5).acquire(key), invalid)
  }
  // A real U+FFFD is a key like any other: its UTF-8 bytes.
  assert.equal(ring.get('\ufffd'), ring.get(Buffer.from([0xef, 0xbf, 0xbd])))
  assert.deepEqual(ring.getMany(['\ufffd']), [ring.get('\ufffd')])
})

test('null is never a value and booleans are never numbers; undefined means left out', () => {
  const typeError = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }
  for (const options of [{ vnodes: null }, { seed: null }, { tableSize: null }, { algorithm: null }, { vnodes: true }, { seed: false }]) {
    assert.throws(() => new Ring(['a'], options), { ...typeError, message: new RegExp(Object.keys(options)[0]) })
  }
  assert.throws(() => new Ring(['a'], null), typeError)
  for (const node of [{ id: 'a', weight: null }, { id: 'a', weight: true }, { id: 'a', weight: '2' }]) {
    assert.throws(() => new Ring([node]), { ...typeError, message: /weight must be a number/ })
  }
  assert.throws(() => new Ring([{ id: 'a', zone: null }]), { ...typeError, message: 'zone must be a string, not null' })
  assert.throws(() => new Ring({ a: true }), { ...typeError, message: /weight must be a number, not boolean/ })
  const ring = new Ring(['a', 'b'])
  assert.throws(() => hashKey('k', null), { ...typeError, message: 'seed must be a number or a bigint, not null' })
  assert.throws(() => hashKey('k', true), typeError)
  assert.throws(() => ring.getN('k', true), typeError)
  assert.equal(hashKey('k', undefined), hashKey('k', 0))
  assert.equal(new Ring(['a'], { vnodes: undefined, seed: undefined }).fingerprint, new Ring(['a']).fingerprint)
  assert.equal(new Ring([{ id: 'a', weight: undefined, zone: undefined }]).fingerprint, new Ring(['a']).fingerprint)
})

test('wrong argument types throw TypeError ERR_INVALID_ARG_TYPE naming the argument', () => {
  const ring = new Ring(['a', 'b'])
  const typeError = (message) => ({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message })
  assert.throws(() => ring.getByHash(1), typeError('hash must be a bigint, not number'))
  assert.throws(() => ring.getN('k', '2'), typeError('n must be a number, not string'))
  assert.throws(() => ring.withWeight('a', '2'), typeError('weight must be a number, not string'))
  assert.throws(() => ring.setWeight('a', null), typeError('weight must be a number, not null'))
  assert.throws(() => new LoadTracker(ring, '0.1'), typeError('epsilon must be a number, not string'))
  assert.throws(() => new LoadTracker({}, 0.1), typeError('ring must be a shardring Ring, not object'))
  assert.throws(() => new LoadTracker(ring, 0.1).swap(5), typeError('ring must be a shardring Ring, not number'))
  assert.throws(() => diff(1, 2), typeError('oldRing must be a shardring Ring, not number'))
  assert.throws(() => ring.equals('a'), typeError('other must be a shardring Ring, not string'))
  assert.throws(() => hashKey('k', 'x'), typeError('seed must be a number or a bigint, not string'))
  assert.throws(() => ring.getIndices('abc', new Uint32Array(1)), typeError('bytes must be a Uint8Array or Buffer, not string'))
  assert.throws(() => ring.getIndices(Buffer.from('a'), [1]), typeError('lengths must be a Uint32Array, not object'))
  assert.throws(() => Ring.fromJSON(5), typeError('config must be a string, not number'))
  assert.throws(() => new Ring([{ id: 'a', zone: 5 }]), typeError('zone must be a string, not number'))
  // eslint-disable-next-line new-cap
  assert.throws(() => Ring(['a', 'b']), { name: 'TypeError', message: "Class constructor Ring cannot be invoked without 'new'" })
  assert.throws(() => LoadTracker(ring, 0.1), { name: 'TypeError', message: /cannot be invoked without 'new'/ })
  assert.ok(Ring.fromJSON(ring.toJSONString()) instanceof Ring && ring.withNode('c') instanceof Ring)
})

test('inherited properties are never read: npm hashring polluting Object.prototype does not break rings', () => {
  Object.prototype.extra = 1
  Object.prototype.weight = 7
  try {
    const ring = new Ring([{ id: 'a' }, { id: 'b', weight: 2 }], { vnodes: 10 })
    assert.deepEqual(ring.nodes.map((n) => n.weight), [1, 2])
    assert.deepEqual(new Ring({ a: 1 }).ids, ['a'])
  } finally {
    delete Object.prototype.extra
    delete Object.prototype.weight
  }
  // Non-enumerable own fields are still fields: unknown ones throw.
  const sneaky = { id: 'a' }
  Object.defineProperty(sneaky, 'wieght', { value: 2, enumerable: false })
  assert.throws(() => new Ring([sneaky]), { code: 'ERR_INVALID_ARG_VALUE', message: /"wieght"/ })
})

test('version, equality, inspection and cloning', async () => {
  const { version } = await import('../shardring.js')
  assert.match(version, /^\d+\.\d+\.\d+$/)
  const a = new Ring(['x', 'y'])
  assert.ok(a.equals(new Ring({ y: 1, x: 1 })) && !a.equals(new Ring(['x'])))
  const shown = util.inspect(new Ring([{ id: 'a', weight: 2, zone: 'east' }, 'b'], { vnodes: 10 })).replace(/\s+/g, ' ')
  assert.match(shown, /^Ring \{ algorithm: 'ring', vnodes: 10, seed: 0n, pointCount: 30, fingerprint: '[0-9a-f]{16}',/)
  assert.match(shown, /\{ id: 'a', weight: 2, zone: 'east' \}/)
  // Every parameter shows, not only vnodes, seed and tableSize: the ring's
  // params, under the constructor's option names, which rebuild it.
  const haproxy = new Ring({ web1: 2, web2: 1 }, { algorithm: 'haproxy', hashFunction: 'djb2', serverKey: 'id32' })
  assert.deepEqual(haproxy.params, { algorithm: 'haproxy', hashFunction: 'djb2', avalanche: false, serverKey: 'id32' })
  assert.match(util.inspect(haproxy).replace(/\s+/g, ' '), /^Ring \{ algorithm: 'haproxy', hashFunction: 'djb2', avalanche: false, serverKey: 'id32', pointCount: 0,/)
  const envoy = new Ring(['a', 'b'], { algorithm: 'envoy-ring-hash', minRingSize: 12 })
  assert.deepEqual(envoy.params, { algorithm: 'envoy-ring-hash', minRingSize: 12n, maxRingSize: 8388608n, hashFunction: 'xx_hash' })
  for (const ring of [haproxy, envoy, a]) {
    assert.ok(new Ring(ring.nodes, ring.params).equals(ring), ring.algorithm)
  }
  assert.match(util.inspect(new LoadTracker(a, 0.5)), /^LoadTracker \{ balanceFactor: 1.5, totalLoad: 0, loads: \{ x: 0, y: 0 \} \}/)
  for (const ring of [a, a.withNode('z'), Ring.fromJSON(a.toJSONString()), new LoadTracker(a, 0.5)]) {
    assert.throws(() => structuredClone(ring), { name: 'TypeError', message: /cannot be cloned or posted to a worker/ })
  }
  const { port1, port2 } = new MessageChannel()
  assert.throws(() => port1.postMessage(a), /cannot be cloned or posted to a worker/)
  port1.close()
  port2.close()
})

test('a ring counts its lookups per node once asked, across in-place changes', () => {
  const ring = new Ring(['a', 'b', 'c'])
  ring.get('before')
  assert.deepEqual(ring.lookupCounts(), {})
  ring.countLookups()
  const want = {}
  for (const key of KEYS) want[ring.get(key)] = (want[ring.get(key)] ?? 0) + 2
  assert.deepEqual(ring.lookupCounts(), want)
  ring.addNode('d')
  ring.countLookups()
  ring.getMany(KEYS)
  const after = {}
  for (const key of KEYS) after[ring.get(key)] = (after[ring.get(key)] ?? 0) + 1
  const total = Object.values(ring.lookupCounts()).reduce((a, b) => a + b, 0)
  assert.equal(total, 2 * KEYS.length + 3 * KEYS.length)
  assert.ok(ring.lookupCounts().d > 0 && ring.lookupCounts().d === after.d * 3)
})
