// The "hashring-js" migration mode side by side with npm hashring 3.2.0
// itself (a devDependency) on 100,000 keys: its default (`ketama`
// compatibility), `hash_ring` compatibility and `default port`, weights that
// land on binary64 rounding edges, and keys that hash exactly onto a point
// (the point labels themselves).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const HashRing = require('hashring')
const { Ring } = require('../shardring.js')

const KEYS = Array.from({ length: 100_000 }, (_, i) => `key:${i}`)

// Weights: (1/3) * 40 * 3 is 39.99999999999999 in binary64, so equal thirds
// get 39 digests, not 40; 0 is read as 1; fractions are kept.
const CASES = [
  { name: 'equal thirds', servers: { 'a:11211': 1, 'b:11211': 1, 'c:11211': 1 } },
  { name: 'fractions and a zero', servers: { '10.0.0.1:11211': 0.1, '10.0.0.2:11212': 0.2, '10.0.0.3': 0.7, 'z:1': 0 } },
  { name: 'weights 1..5', servers: { '0.0.0.1': 1, '0.0.0.2': 2, '0.0.0.3': 3, '0.0.0.4': 4, '0.0.0.5': 5 } },
  { name: 'ids as a list', servers: ['192.168.0.102:11212', '192.168.0.103:11212', '192.168.0.104:11212'] },
]

function labels (ring, servers) {
  // Every point label as a key: each hashes exactly onto a point.
  const ids = Array.isArray(servers) ? servers : Object.keys(servers)
  return ids.flatMap((id) => Array.from({ length: 60 }, (_, i) => `${id}-${i}`))
}

for (const { name, servers } of CASES) {
  for (const options of [{}, { compatibility: 'hash_ring' }, { 'default port': 11211 }, { 'vnode count': 100 }]) {
    test(`hashring-js places like npm hashring: ${name}, ${JSON.stringify(options)}`, () => {
      const theirs = new HashRing(servers, 'md5', options)
      const ours = new Ring(servers, {
        algorithm: 'hashring-js',
        ...(options.compatibility ? { distribution: options.compatibility } : {}),
        ...(options['default port'] ? { defaultPort: options['default port'] } : {}),
        ...(options['vnode count'] ? { vnodes: options['vnode count'] } : {}),
      })
      const keys = KEYS.concat(labels(theirs, servers))
      let wrong = 0
      let example
      for (const key of keys) {
        if (ours.get(key) !== theirs.get(key)) {
          wrong += 1
          example ??= key
        }
      }
      assert.equal(wrong, 0, `${wrong} of ${keys.length} differ, e.g. ${example}`)
      assert.equal(ours.pointCount, theirs.ring.length)
    })
  }
}

test("hashring-js reproduces npm hashring's own examples", () => {
  const ring = new Ring(['192.168.0.102:11212', '192.168.0.103:11212', '192.168.0.104:11212'], { algorithm: 'hashring-js' })
  assert.equal(ring.get('foo'), '192.168.0.102:11212')
  assert.equal(ring.get('pewpew'), '192.168.0.103:11212')
  const weighted = new Ring({ '127.0.0.1:11211': 600, '127.0.0.1:11212': 400 }, { algorithm: 'hashring-js' })
  assert.equal(weighted.hashKey('test'), 3446378249n)
})
