// Every row of testdata/bad-inputs.json (docs/bad-inputs.md) through the
// Node API: the error code each row records, or its answer.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { LoadTracker, Ring, hashKey } = require('../shardring.js')

const { cases } = JSON.parse(readFileSync(new URL('../../testdata/bad-inputs.json', import.meta.url), 'utf8'))

// A key: bytes, or a string of UTF-16 code units ({"utf16": [...]}).
function keyOf(value) {
  if (value.utf16 !== undefined) return String.fromCharCode(...value.utf16.map((unit) => parseInt(unit, 16)))
  return bytesOf(value)
}

function bytesOf(value) {
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  if (value.hex !== undefined) return Buffer.from(value.hex, 'hex')
  if (value.fill !== undefined) return Buffer.alloc(value.len, Buffer.from(value.fill, 'hex'))
  return Buffer.from(Array.from({ length: 256 }, (_, i) => i))
}

// An id as a JS string: bytes that are not UTF-8 become lone surrogates
// U+DC80-U+DCFF, as Python's surrogateescape does.
function idOf(value) {
  const bytes = bytesOf(value)
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return String.fromCharCode(...Array.from(bytes, (b) => (b < 0x80 ? b : 0xdc00 + b)))
  }
}

const number = (value) => (typeof value === 'string' ? Number(value.replace('inf', 'Infinity')) : value)

function run(c) {
  const op = c.op ?? {}
  if (op.from_json !== undefined) return Ring.fromJSON(op.from_json) instanceof Ring
  const nodes = c.nodes.map((node) => {
    if (typeof node === 'string') return node
    const spec = { id: idOf(node.id), weight: number(node.weight) }
    if (node.zone !== undefined) spec.zone = idOf(node.zone)
    return spec
  })
  const { table_size: tableSize, ...options } = c.options ?? {}
  const ring = new Ring(nodes, tableSize === undefined ? options : { ...options, tableSize })
  if (op.get !== undefined) return ring.get(keyOf(op.get))
  if (op.get_n !== undefined) return ring.getN(keyOf(op.get_n[0]), op.get_n[1])
  if (op.fingerprint !== undefined) return ring.fingerprint.toString()
  if (op.hash_key !== undefined) return hashKey(keyOf(op.hash_key[0]), op.hash_key[1]).toString()
  if (op.get_by_hash !== undefined) return ring.getByHash(BigInt(op.get_by_hash))
  if (op.remove !== undefined) return ring.withoutNode(op.remove).size
  if (op.add !== undefined) return ring.withNode(op.add).size
  if (op.tracker !== undefined) return new LoadTracker(ring, number(op.tracker)).balanceFactor
  if (op.release !== undefined) return new LoadTracker(ring, 0.1).release(op.release)
  return undefined
}

test('the table keeps its rows', () => {
  assert.ok(cases.length >= 52)
})

for (const c of cases) {
  test(c.name, () => {
    if (c.expect.error) {
      assert.throws(() => run(c), (error) => {
        assert.equal(error.code, c.expect.error.js, error.message)
        assert.ok(error.message.length > 0)
        return true
      })
    } else {
      assert.deepEqual(run(c), c.expect.ok)
    }
  })
}
