// Every algorithm through the Node binding: the peers' own recorded
// placements, parameters, errors and derived rings.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { ALGORITHMS, Ring, diff } = require('../shardring.js')

const peer = JSON.parse(readFileSync(new URL('../../testdata/peer/libmemcached-ketama.json', import.meta.url), 'utf8'))
const servers = peer.servers.map((s) => ({ id: `${s.host}:${s.port}`, weight: s.weight }))

for (const [algorithm, cases] of [['ketama', 'cases'], ['ketama-spy', 'spy_cases']]) {
  test(`${algorithm} places like libmemcached's own fixture`, () => {
    const ring = new Ring(servers, { algorithm })
    const keys = peer[cases].map((c) => c.key)
    const want = peer[cases].map((c) => `${c.server}:11211`)
    assert.deepEqual(ring.getMany(keys), want)
    assert.deepEqual(keys.map((k) => ring.get(k)), want)
    if (algorithm === 'ketama') assert.deepEqual(keys.map((k) => ring.hashKey(k)), peer.cases.map((c) => BigInt(c.key_hash)))
  })
}

test('libketama, nginx and slots hash like their peers', () => {
  const libketama = new Ring({ '127.0.0.1:11211': 600, '127.0.0.1:11212': 400 }, { algorithm: 'libketama' })
  assert.equal(libketama.pointCount, 320)
  assert.equal(libketama.hashKey('test'), 3446378249n)
  assert.equal(libketama.get('test'), '127.0.0.1:11211')
  assert.equal(new Ring(['a'], { algorithm: 'nginx' }).hashKey('123456789'), 0xcbf43926n)
  const slots = new Ring(['a', 'b', 'c'], { algorithm: 'slots' })
  assert.equal(slots.hashKey('somekey'), 11058n)
  assert.equal(slots.get('{user1000}.following'), slots.get('{user1000}.followers'))
  assert.deepEqual([0n, 5460n, 5461n, 16383n].map((s) => slots.getByHash(s)), ['a', 'a', 'b', 'c'])
  assert.throws(() => slots.getByHash(16384n), { code: 'RING_HASH_OUT_OF_RANGE', message: /16384/ })
})

for (const algorithm of ALGORITHMS) {
  test(`${algorithm}: derives, round-trips and lists every node`, () => {
    const ids = [1, 2, 3, 4, 5].map((i) => `10.0.0.${i}:11211`)
    const ring = new Ring(ids, { algorithm })
    assert.equal(ring.algorithm, algorithm)
    const grown = ring.withNode({ id: '10.0.0.9:11211' })
    const keys = Array.from({ length: 2000 }, (_, i) => `key-${i}`)
    const before = ring.getMany(keys)
    const after = grown.getMany(keys)
    const moved = after.filter((owner, i) => owner !== before[i]).length / keys.length
    // Envoy's and gRPC's rings shrink every host's points as one joins
    // (points per host depend on the host count): more than the new share moves.
    const most = algorithm.endsWith('ring-hash') ? 0.35 : 0.26
    assert.ok(moved > 0.1 && moved < most, `${algorithm} moved ${moved}`)
    const copy = Ring.fromJSON(grown.toJSONString())
    assert.equal(copy.algorithm, algorithm)
    assert.equal(copy.fingerprint, grown.fingerprint)
    assert.deepEqual(copy.getMany(keys), after)
    assert.deepEqual(grown.getN('k', 9).sort(), [...grown].sort())
  })
}

test('parameters and errors name the value', () => {
  const maglev = new Ring(['a', 'b'], { algorithm: 'maglev', tableSize: 251 })
  assert.equal(maglev.tableSize, 251)
  assert.equal(maglev.vnodes, null)
  assert.equal(new Ring(['a']).vnodes, 160)
  assert.throws(() => new Ring(['a'], { algorithm: 'maglev', tableSize: 65535 }), { code: 'RING_INVALID_TABLE_SIZE', message: /65535/ })
  assert.throws(() => new Ring(['a'], { algorithm: 'maglev', tableSize: 2.5 }), RangeError)
  assert.throws(() => new Ring(['a'], { algorithm: 'chord' }), { code: 'RING_INVALID_CONFIG', message: /"chord"/ })
  assert.throws(() => new Ring(['a'], { algorithm: 'ketama', vnodes: 100 }), { code: 'RING_INVALID_CONFIG', message: /vnodes/ })
  assert.throws(() => new Ring({ a: 1, b: 2 }, { algorithm: 'jump' }), { code: 'RING_INVALID_WEIGHT', message: /jump has no weights/ })
  assert.throws(() => new Ring(['10.0.0.1:99999'], { algorithm: 'ketama' }), { code: 'RING_INVALID_ADDRESS', message: /99999/ })
  assert.throws(() => diff(new Ring(['a']), new Ring(['a'], { algorithm: 'jump' })), { code: 'RING_ALGORITHM_MISMATCH' })
})

test("the load balancers' parameters through the constructor", () => {
  const hosts = [90, 91, 92, 93, 94, 95].map((p) => `127.0.0.1:${p}`)
  const envoy = new Ring(hosts, { algorithm: 'envoy-ring-hash', minRingSize: 12 })
  // Envoy's ring_hash_lb_test.cc, Basic: h = 0 and the wrap go to :94, a point to itself.
  assert.deepEqual(envoy.ringSizes, [12, 8388608])
  assert.equal(envoy.hashFunction, 'xx_hash')
  assert.deepEqual([0n, 2n ** 64n - 1n, 3551244743356806947n].map((h) => envoy.getByHash(h)), ['127.0.0.1:94', '127.0.0.1:94', '127.0.0.1:95'])
  const grpc = new Ring({ 'b:1': 1, 'a:1': 2 }, { algorithm: 'grpc-ring-hash', endpointOrder: 'by_key', maxRingSize: 1e6 })
  assert.deepEqual(grpc.ringSizes, [1024, 4096])
  assert.equal(grpc.endpointOrder, 'by_key')
  const haproxy = new Ring({ web1: 1, web2: 2 }, { algorithm: 'haproxy', hashFunction: 'djb2', haproxyIds: { web2: 7 } })
  assert.deepEqual([haproxy.hashFunction, haproxy.avalanche, haproxy.serverKey, haproxy.haproxyIds], ['djb2', false, 'id', { web2: 7 }])
  assert.equal(Ring.fromJSON(haproxy.toJSONString()).fingerprint, haproxy.fingerprint)
  assert.throws(() => new Ring(['a'], { algorithm: 'haproxy', avalanche: 1 }), { code: 'ERR_INVALID_ARG_TYPE', message: /avalanche must be a boolean/ })
  assert.throws(() => new Ring(['a:1'], { algorithm: 'envoy-ring-hash', minRingSize: 10, maxRingSize: 5 }), { code: 'RING_INVALID_CONFIG', message: /minimum_ring_size \(10\) > maximum_ring_size \(5\)/ })
  assert.throws(() => new Ring(['a'], { haproxyIds: { a: 1 } }), { code: 'RING_INVALID_CONFIG', message: /haproxy ids do not apply/ })
  assert.throws(() => new Ring(['a', 'b'], { algorithm: 'haproxy', haproxyIds: { a: 3, b: 3 } }), { code: 'RING_INVALID_CONFIG', message: /same id 3/ })
  assert.throws(() => new Ring({ a: 257 }, { algorithm: 'haproxy' }), { code: 'RING_INVALID_WEIGHT', message: /257/ })
})

test('jumpback matches hash4j and grows like jump', () => {
  const ring = new Ring(Array.from({ length: 1000 }, (_, i) => `bucket-${String(i).padStart(4, '0')}`), { algorithm: 'jumpback' })
  // hash4j's jumpBackHashSplitMix64() on 1,000 buckets (docs/algorithms.md, jumpback: hash4j's values).
  assert.deepEqual([0n, 1n, 2n ** 64n - 1n, 0x9e3779b97f4a7c15n].map((h) => ring.getByHash(h)), ['bucket-0313', 'bucket-0492', 'bucket-0288', 'bucket-0618'])
  assert.throws(() => new Ring({ a: 1, b: 2 }, { algorithm: 'jumpback' }), { code: 'RING_INVALID_WEIGHT', message: /jumpback has no weights/ })
})

test('memento removes any node and carries its history', () => {
  const ids = Array.from({ length: 10 }, (_, i) => `shard-${i}`)
  const ring = new Ring(ids, { algorithm: 'memento' })
  const keys = Array.from({ length: 5000 }, (_, i) => `key-${i}`)
  const before = ring.getMany(keys)
  assert.deepEqual(before, new Ring(ids, { algorithm: 'jumpback' }).getMany(keys))
  ring.removeNode('shard-3')
  ring.removeNode('shard-7')
  const after = ring.getMany(keys)
  assert.ok(after.every((owner, i) => owner === before[i] || before[i] === 'shard-3' || before[i] === 'shard-7'))
  assert.deepEqual(ring.removedBuckets, [3, 7])
  assert.equal(ring.buckets['shard-8'], 8)
  const copy = Ring.fromJSON(ring.toJSONString())
  assert.equal(copy.fingerprint, ring.fingerprint)
  assert.deepEqual(copy.getMany(keys), after)
  const rebuilt = new Ring([...ring], { algorithm: 'memento', removedBuckets: [3, 7], buckets: ring.buckets })
  assert.equal(rebuilt.fingerprint, ring.fingerprint)
  ring.addNode({ id: 'fresh' })
  assert.equal(ring.buckets.fresh, 7)
  assert.deepEqual(ring.removedBuckets, [3])
  const [owner, second] = ring.getN('user:42', 2)
  assert.equal(ring.withoutNode(owner).get('user:42'), second)
  assert.throws(() => new Ring(['a', 'b'], { algorithm: 'memento', removedBuckets: [1, 1] }), { code: 'RING_INVALID_CONFIG', message: /removed_buckets lists bucket 1 twice/ })
  assert.throws(() => new Ring(['a'], { removedBuckets: [0] }), { code: 'RING_INVALID_CONFIG', message: /removed_buckets \(\[0\]\) does not apply/ })
  assert.throws(() => new Ring(['a'], { algorithm: 'memento', removedBuckets: '0' }), { code: 'ERR_INVALID_ARG_TYPE', message: /removedBuckets must be an array of numbers, not string/ })
  assert.throws(() => new Ring(['a'], { algorithm: 'memento', buckets: { a: -1 } }), RangeError)
  assert.equal(new Ring(['a']).buckets, null)
  assert.equal(new Ring(['a']).removedBuckets, null)
})

test('rendezvous scores by integers by default and keeps the float score', () => {
  const weights = { a: 1, b: 2, c: 1, d: 3 }
  const integer = new Ring(weights, { algorithm: 'rendezvous' })
  const float = new Ring(weights, { algorithm: 'rendezvous', score: 'float' })
  assert.deepEqual([integer.score, float.score], ['integer', 'float'])
  const keys = Array.from({ length: 20000 }, (_, i) => `key-${i}`)
  assert.deepEqual(integer.getMany(keys), float.getMany(keys))
  assert.notEqual(integer.fingerprint, float.fingerprint)
  assert.equal(Ring.fromJSON(float.toJSONString()).fingerprint, float.fingerprint)
  assert.throws(() => new Ring(weights, { algorithm: 'rendezvous', score: 'exact' }), { code: 'RING_INVALID_CONFIG', message: /unknown score "exact"/ })
  assert.throws(() => new Ring(weights, { score: 'float' }), { code: 'RING_INVALID_CONFIG', message: /score .*does not apply/ })
  assert.equal(new Ring(['a']).score, null)
})

