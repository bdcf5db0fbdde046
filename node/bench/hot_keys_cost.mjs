// What finding hot keys adds to a Node lookup: the same 100,000 keys placed
// with ring.get (one call per key) and ring.getMany (one batch) on a ring
// without a sketch and on one a HotKeys sketch watches (watchHotKeys,
// default settings: 1 lookup in 4 sampled per thread), alternating the two
// rings pass by pass. Prints the median ns per key of each and the
// difference. Not a test: `make bench`, or
// `node bench/hot_keys_cost.mjs [--quick]`.
import { HotKeys, Ring } from '../shardring.js'

const quick = process.argv.includes('--quick')
const nodes = Array.from({ length: 100 }, (_, i) => `cache-${String(i).padStart(4, '0')}.example.internal`)
const keys = Array.from({ length: quick ? 10_000 : 100_000 }, (_, i) => `user:session:${String(i).padStart(11, '0')}xxxxxx`)
const passes = quick ? 3 : 11

const plain = new Ring(nodes, { vnodes: 160 })
const watched = new Ring(nodes, { vnodes: 160 })
const sketch = new HotKeys()
watched.watchHotKeys(sketch)
if (watched.getMany(keys).join() !== plain.getMany(keys).join()) throw new Error('a watched ring placed differently')

let sink = 0
const perKey = (run) => {
  const start = process.hrtime.bigint()
  run()
  return Number(process.hrtime.bigint() - start) / keys.length
}
const median = (samples) => samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]

console.log(`hot keys cost in Node: 100 nodes x 160 points, ${keys.length.toLocaleString('en')} keys, median of ${passes} passes`)
for (const [name, run] of [
  ['get', (ring) => { for (const key of keys) sink += ring.get(key).length }],
  ['getMany', (ring) => { sink += ring.getMany(keys).length }],
]) {
  const off = []
  const on = []
  for (let p = 0; p < passes; p++) {
    off.push(perKey(() => run(plain)))
    on.push(perKey(() => run(watched)))
  }
  const [a, b] = [median(off), median(on)]
  console.log(`  ${name.padEnd(9)} ${a.toFixed(1).padStart(7)} ns/key without a sketch, ${b.toFixed(1).padStart(7)} with one: ${(b - a >= 0 ? '+' : '') + (b - a).toFixed(1)} ns`)
}
console.log(`  the sketch saw the keys: ${sketch.top().length} in its top (sink ${sink > 0})`)
