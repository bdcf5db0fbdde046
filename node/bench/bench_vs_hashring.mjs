// shardring against npm `hashring`, side by side in one process.
// 100 nodes x 160 points each (hashring: 40 vnodes x 4 replicas), 100,000
// distinct 30-byte string keys, so hashring's 5,000-entry LRU cache cannot
// help. Prints the median of several passes in ns per key and the speed-up.
// Not a test: `make bench`, or `node bench/bench_vs_hashring.mjs [--quick]`.
import HashRing from 'hashring'
import { Ring } from '../shardring.js'

const quick = process.argv.includes('--quick')
const nodes = Array.from({ length: 100 }, (_, i) => `cache-${String(i).padStart(4, '0')}.example.internal`)
const keys = Array.from({ length: quick ? 10_000 : 100_000 }, (_, i) => `user:session:${String(i).padStart(11, '0')}xxxxxx`)
const passes = quick ? 2 : 7

function perKey(run) {
  const samples = []
  for (let p = 0; p < passes; p++) {
    const start = process.hrtime.bigint()
    run()
    samples.push(Number(process.hrtime.bigint() - start) / keys.length)
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(passes / 2)]
}

const ours = new Ring(nodes, { vnodes: 160 })
const peer = new HashRing(nodes, 'md5', { 'vnode count': 40 })
if (peer.ring.length !== ours.pointCount) throw new Error(`point counts differ: ${peer.ring.length} vs ${ours.pointCount}`)

let sink = 0
const get = () => { for (const key of keys) sink += ours.get(key).length }
const many = () => { sink += ours.getMany(keys).length }
const peerGet = () => { for (const key of keys) sink += peer.get(key).length }

// Keys that arrive as bytes (say, in a network buffer) skip V8's string reads.
const packed = Buffer.concat(keys.map((key) => Buffer.from(key)))
const lengths = Uint32Array.from(keys, (key) => Buffer.byteLength(key))
const indices = () => { sink += ours.getIndices(packed, lengths).length }

async function perKeyAsync(run) {
  const samples = []
  for (let p = 0; p < passes; p++) {
    const start = process.hrtime.bigint()
    await run()
    samples.push(Number(process.hrtime.bigint() - start) / keys.length)
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(passes / 2)]
}

// The floor under any call that takes a string key: Node's cheapest native
// read of a V8 string (Buffer#latin1Write, a copy, no Node-API call).
const scratch = Buffer.alloc(64)
const read = () => { for (const key of keys) sink += scratch.latin1Write(key, 0) }

const peerNs = perKey(peerGet)
const rows = [
  ['get(key), per call', perKey(get)],
  ['getMany(keys), per key', perKey(many)],
  ['getIndices(packed bytes), per key', perKey(indices)],
  ['getIndicesAsync(packed bytes), per key', await perKeyAsync(async () => { sink += (await ours.getIndicesAsync(packed, lengths)).length })],
  ['floor: reading each key string (Buffer#latin1Write), per key', perKey(read)],
]
console.log(`Node ${process.version}, ${nodes.length} nodes x 160 points, ${keys.length} distinct keys, median of ${passes} passes`)
console.log('| call | shardring | hashring get | speed-up |')
console.log('|---|---:|---:|---:|')
for (const [name, ns] of rows) console.log(`| ${name} | ${ns.toFixed(1)} ns | ${peerNs.toFixed(0)} ns | ${(peerNs / ns).toFixed(0)}x |`)
if (sink === 0) console.log('')
