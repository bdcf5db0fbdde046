// Every option's conversion errors, as py/tests/test_errors.py checks them in
// Python: a number the option cannot hold is a RangeError (ERR_OUT_OF_RANGE)
// naming the option and the value; another type a TypeError naming it; an
// unknown name a RING_INVALID_CONFIG naming the option, the value and the
// names accepted, without speaking of a config nobody gave.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ALGORITHMS, LoadTracker, Ring, Transition, hashKey } from '../shardring.js'

// The whole-number options, each with the largest value it holds and an algorithm that takes it.
const WHOLE = {
  vnodes: [2 ** 32 - 1, 'ring'],
  seed: [Number.MAX_SAFE_INTEGER, 'ring'],
  tableSize: [2 ** 32 - 1, 'maglev'],
  defaultPort: [2 ** 16 - 1, 'hashring-js'],
  minRingSize: [Number.MAX_SAFE_INTEGER, 'envoy-ring-hash'],
  maxRingSize: [Number.MAX_SAFE_INTEGER, 'envoy-ring-hash'],
}

// The options naming a choice: one name each accepts, the core's name of the
// option, and an algorithm that takes it.
const NAMES = {
  algorithm: ['ring', 'algorithm', 'ring'],
  distribution: ['consistent_ketama', 'distribution', 'libmemcached'],
  keyHash: ['md5', 'key_hash', 'libmemcached'],
  serverIds: ['address', 'server_ids', 'twemproxy'],
  hashFunction: ['xx_hash', 'hash_function', 'envoy-ring-hash'],
  endpointOrder: ['by_key', 'endpoint_order', 'grpc-ring-hash'],
  serverKey: ['id32', 'server_key', 'haproxy'],
  score: ['integer', 'score', 'rendezvous'],
}

const outOfRange = (...named) => (error) => {
  assert.ok(error instanceof RangeError, error)
  assert.equal(error.code, 'ERR_OUT_OF_RANGE')
  for (const text of named) assert.ok(error.message.includes(String(text)), `${text} in ${error.message}`)
  return true
}

for (const [option, [largest, algorithm]] of Object.entries(WHOLE)) {
  test(`${option} out of range is a RangeError naming it and the value`, () => {
    for (const value of [-1, largest + 1, 1.5, Infinity, NaN]) {
      const shown = Number.isNaN(value) ? 'NaN' : String(value)
      assert.throws(() => new Ring(['a:1'], { algorithm, [option]: value }), outOfRange(option, shown))
    }
    for (const value of [null, true, '1', [1], {}]) {
      assert.throws(() => new Ring(['a:1'], { algorithm, [option]: value }), {
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message: new RegExp(`^${option} must be a (whole )?number`),
      })
    }
  })
}

for (const [option, [accepted, coreName, algorithm]] of Object.entries(NAMES)) {
  test(`an unknown ${option} names the option, the value and the names accepted`, () => {
    const options = option === 'algorithm' ? {} : { algorithm }
    assert.throws(() => new Ring(['a:1'], { ...options, [option]: 'nope' }), (error) => {
      assert.equal(error.code, 'RING_INVALID_CONFIG')
      assert.ok(!error.message.includes('config'), error.message)
      assert.ok(error.message.includes(`unknown ${coreName} "nope"`) && error.message.includes(accepted), error.message)
      if (option === 'algorithm') assert.ok(ALGORITHMS.every((name) => error.message.includes(name)), error.message)
      return true
    })
    assert.ok(new Ring(['a:1'], { ...options, [option]: accepted }) instanceof Ring)
    assert.throws(() => new Ring(['a:1'], { ...options, [option]: 5 }), { name: 'TypeError', message: new RegExp(`^${option} must be a string`) })
  })
}

test('a parameter the algorithm does not take is named without speaking of a config; a config that cannot be read says so', () => {
  assert.throws(() => new Ring(['a'], { algorithm: 'jump', vnodes: 10 }), {
    code: 'RING_INVALID_CONFIG',
    message: 'vnodes (10) does not apply to algorithm "jump"',
  })
  assert.throws(() => new Ring(['a']).withNode({ id: 'b', weight: 1 }).withWeight('b', 1e300), { code: 'RING_TOO_MANY_POINTS' })
  assert.throws(() => LoadTracker.haproxy(new Ring(['a']), 125), { code: 'RING_INVALID_CONFIG', message: /^[^:]*"haproxy"/ })
  const config = JSON.stringify({ format_version: 1, algorithm: 'jump', vnodes: 10, nodes: [{ id: 'a' }] })
  for (const read of [() => Ring.fromJSON(config), () => Transition.fromJSON(config)]) {
    assert.throws(read, { code: 'RING_INVALID_CONFIG', message: /^vnodes \(10\) does not apply to algorithm "jump"/ })
  }
  assert.throws(() => Ring.fromJSON('{"format_version": 1, "nodes": [}'), { code: 'RING_INVALID_CONFIG', message: /^invalid ring config: / })
})

test('the values inside options and the other calls taking whole numbers', () => {
  assert.throws(() => new Ring(['a'], { algorithm: 'memento', removedBuckets: [-1] }), outOfRange('removedBuckets item', -1))
  assert.throws(() => new Ring(['a'], { algorithm: 'memento', buckets: { a: 2 ** 32 } }), outOfRange('buckets value', 2 ** 32))
  assert.throws(() => new Ring(['a'], { algorithm: 'haproxy', haproxyIds: { a: -1 } }), outOfRange('haproxyIds value', -1))
  const ring = new Ring(['a', 'b'])
  assert.throws(() => ring.getN('k', -1), outOfRange('n', -1))
  assert.throws(() => hashKey('k', -1), outOfRange('seed', -1))
  assert.throws(() => hashKey('k', 2n ** 64n), outOfRange('seed'))
  assert.throws(() => LoadTracker.haproxy(new Ring(['a'], { algorithm: 'haproxy' }), -1), outOfRange('hashBalanceFactor', -1))
})
