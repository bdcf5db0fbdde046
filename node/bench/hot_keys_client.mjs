// One Node client of the hot-key bench (py/bench/hot_keys.py starts it):
// the same requests as py/bench/hot_keys_client.py (Zipf ranks from the same
// SplitMix64 draws), read through memcached cache-aside with memjs, placed by
// a ring that a HotKeys sketch watches; with a hot set, each key's reads and
// writes follow HotSet.plan. Eight requests in flight. Prints one JSON line.
//
//   node hot_keys_client.mjs SETTINGS_JSON
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const shardring = require('../shardring.js')
const memjs = require('memjs')

function zipfRanks(keys, s, count, seed) {
  const cumulative = new Float64Array(keys)
  let total = 0
  for (let i = 0; i < keys; i++) {
    total += 1 / Math.pow(i + 1, s)
    cumulative[i] = total
  }
  const mask = (1n << 64n) - 1n
  let state = BigInt(seed)
  const ranks = new Uint32Array(count)
  for (let n = 0; n < count; n++) {
    state = (state + 0x9e3779b97f4a7c15n) & mask
    let z = state
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask
    z ^= z >> 31n
    const u = (Number(z >> 11n) / 2 ** 53) * total
    let lo = 0
    let hi = keys
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cumulative[mid] < u) lo = mid + 1
      else hi = mid
    }
    ranks[n] = lo
  }
  return ranks
}

const keyOf = (rank) => `key:${String(rank).padStart(7, '0')}`
const valueOf = (key) => Buffer.from(key.repeat(8).slice(0, 100))

const settings = JSON.parse(process.argv[2])
const ranks = zipfRanks(settings.keys, settings.s, settings.requests, settings.seed)
const ring = new shardring.Ring(Object.keys(settings.servers))
const sketch = new shardring.HotKeys({ top: settings.top })
ring.watchHotKeys(sketch)
ring.countLookups()
const hot = settings.hot_set ? shardring.HotSet.fromJSON(settings.hot_set) : null
const clients = {}
for (const [node, address] of Object.entries(settings.servers)) {
  clients[node] = memjs.Client.create(address, { retries: 0, timeout: 5 })
}

let copyReads = 0
let copyMisses = 0
let loads = 0
let next = 0
async function worker() {
  while (next < ranks.length) {
    const key = keyOf(ranks[next++])
    let plan
    if (hot === null) {
      const owner = ring.get(key)
      plan = { read: owner, readCopy: false, owner, copies: [], copyKey: null }
    } else {
      plan = hot.plan(ring, key)
    }
    if (plan.readCopy) {
      copyReads++
      if ((await clients[plan.read].get(plan.copyKey)).value !== null) continue
      copyMisses++
    }
    let value = (await clients[plan.owner].get(key)).value
    if (value === null) {
      // Cache-aside: load, then write the owner and every copy.
      loads++
      value = valueOf(key)
      await clients[plan.owner].set(key, value, {})
      for (const node of plan.copies) await clients[node].set(plan.copyKey, value, {})
    } else if (plan.readCopy) {
      await clients[plan.read].add(plan.copyKey, value, {})
    }
  }
}

const start = performance.now()
await Promise.all(Array.from({ length: 8 }, worker))
const elapsed = (performance.now() - start) / 1000
for (const client of Object.values(clients)) client.close()

const exact = new Map()
for (const rank of ranks) exact.set(rank, (exact.get(rank) ?? 0) + 1)
const truth = new Set(
  [...exact.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, settings.top)
    .map(([rank]) => keyOf(rank)),
)
const top = sketch.top()
const found = new Set(top.slice(0, settings.top).map((k) => k.key.toString()))
const both = [...found].filter((k) => truth.has(k)).length
console.log(
  JSON.stringify({
    language: 'node',
    requests: ranks.length,
    elapsed,
    rate: ranks.length / elapsed,
    top: top.map((k) => [k.key.toString(), k.rate]),
    recall: both / truth.size,
    precision: both / Math.max(1, found.size),
    sketch_bytes: sketch.sketchBytes,
    copy_reads: copyReads,
    copy_misses: copyMisses,
    loads,
    lookups: Object.fromEntries(Object.entries(ring.lookupCounts()).map(([node, count]) => [node, count / elapsed])),
  }),
)
