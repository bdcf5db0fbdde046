// Every case of testdata/vectors.json, placed through the Node binding.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Ring, hashKey, PLACEMENT_FORMAT } = require('../shardring.js')

// Seeds may exceed 2^53, which JSON.parse would round: read them as strings.
const text = readFileSync(new URL('../../testdata/vectors.json', import.meta.url), 'utf8')
const vectors = JSON.parse(text.replace(/"seed": (\d+)/g, '"seed": "$1"'))

// The case's ring through the constructor (listed slot ranges and nginx's
// down marks exist only in configs).
function build(config, configText) {
  if (config.nodes.some((n) => n.slots !== undefined || n.down !== undefined)) return Ring.fromJSON(configText)
  // Every ring parameter under its camelCase name (table_size is tableSize),
  // 64-bit ones as bigints: a parameter added to the core needs no line here.
  const options = {}
  for (const [name, value] of Object.entries(config)) {
    if (name === 'format_version' || name === 'nodes') continue
    options[name.replace(/_(.)/g, (_, c) => c.toUpperCase())] = name === 'seed' ? BigInt(value) : value
  }
  const ids = config.nodes.filter((n) => n.haproxy_id !== undefined)
  if (ids.length > 0) options.haproxyIds = Object.fromEntries(ids.map((n) => [n.id, n.haproxy_id]))
  const buckets = config.nodes.filter((n) => n.bucket !== undefined)
  if (buckets.length > 0) options.buckets = Object.fromEntries(buckets.map((n) => [n.id, n.bucket]))
  const nodes = config.nodes.map(({ id, weight, zone }) => (zone === undefined ? { id, weight } : { id, weight, zone }))
  return new Ring(nodes, options)
}

const configText = (c) => JSON.stringify(c.config).replace(`"seed":"${c.config.seed}"`, `"seed":${c.config.seed}`)
const xxh3 = new Set(['ring', 'jump', 'rendezvous', 'maglev', 'jumpback', 'memento'])

test('format version', () => {
  assert.equal(vectors.format_version, 1)
  assert.equal(PLACEMENT_FORMAT, 1)
  assert.ok(vectors.cases.length >= 12)
})

for (const c of vectors.cases) {
  test(`vector case: ${c.name}`, () => {
    const seed = BigInt(c.config.seed ?? 0)
    const ring = build(c.config, configText(c))
    const fromJson = Ring.fromJSON(configText(c))
    assert.deepEqual(ring.ids, c.config.nodes.map((n) => n.id))
    assert.equal(ring.algorithm, c.config.algorithm)
    assert.deepEqual([...fromJson], ring.ids)
    assert.equal(ring.fingerprint, BigInt('0x' + c.fingerprint))
    assert.equal(fromJson.fingerprint, BigInt('0x' + c.fingerprint))
    for (const lookup of c.hash_lookups ?? []) {
      assert.equal(ring.getByHash(BigInt('0x' + lookup.hash)), lookup.owner)
    }
    for (const lookup of c.lookups) {
      const key = Buffer.from(lookup.key_hex, 'hex')
      assert.equal(ring.hashKey(key), BigInt('0x' + lookup.key_hash))
      if (xxh3.has(c.config.algorithm)) assert.equal(hashKey(key, seed), BigInt('0x' + lookup.key_hash))
      assert.equal(ring.get(key), lookup.owner)
      assert.equal(ring.get(new Uint8Array(key)), lookup.owner)
      assert.equal(fromJson.get(key), lookup.owner)
      assert.deepEqual(ring.getN(key, lookup.n), lookup.preference)
      assert.deepEqual(ring.getMany([key, key]), [lookup.owner, lookup.owner])
      if (lookup.key !== undefined) {
        assert.deepEqual(ring.getMany([lookup.key]), [lookup.owner])
        assert.deepEqual(ring.getMany([lookup.key, key]), [lookup.owner, lookup.owner])
        assert.equal(ring.get(lookup.key), lookup.owner)
        assert.deepEqual(ring.getN(lookup.key, lookup.n), lookup.preference)
      }
    }
  })
}

test('every case in one batch per case', () => {
  for (const c of vectors.cases) {
    const ring = build(c.config, configText(c))
    const keys = c.lookups.map((l) => Buffer.from(l.key_hex, 'hex'))
    assert.deepEqual(ring.getMany(keys), c.lookups.map((l) => l.owner), c.name)
  }
})
