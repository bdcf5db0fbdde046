// Concurrency stress: one worker_thread per algorithm, all running at once
// for about 10 s (SHARDRING_STRESS_SECS changes it), each placing keys while
// it keeps changing its ring in place (remove x, add y, remove y, add x, ...).
// JavaScript objects live in one isolate, so the threads share the native
// library, not rings; within a worker, every getMany batch and getN list must
// equal what a ring rebuilt from the current state's JSON answers, recorded
// before the state was published.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { ALGORITHMS } = require('../shardring.js')
const seconds = Number(process.env.SHARDRING_STRESS_SECS ?? 10)

const workerCode = `
const { parentPort, workerData } = require('node:worker_threads')
const { Ring } = require(${JSON.stringify(new URL('../shardring.js', import.meta.url).pathname)})
const servers = Array.from({ length: 8 }, (_, i) => '10.0.0.' + (i + 1) + ':11211')
const [x, y] = ['10.0.0.100:11211', '10.0.0.101:11211']
const keys = Array.from({ length: 256 }, (_, i) => 'stress-key-' + i)
const answers = (ring) => {
  const rebuilt = Ring.fromJSON(ring.toJSONString())
  return { owners: rebuilt.getMany(keys), lists: keys.map((k) => rebuilt.getN(k, 3)) }
}
const ring = new Ring([...servers, x], { algorithm: workerData.algorithm })
const steps = [
  [(r) => r.withoutNode(x), () => ring.removeNode(x)],
  [(r) => r.withNode(y), () => ring.addNode(y)],
  [(r) => r.withoutNode(y), () => ring.removeNode(y)],
  [(r) => r.withNode(x), () => ring.addNode(x)],
]
let expected = answers(ring), swaps = 0, reads = 0, bad = 0
const end = Date.now() + workerData.seconds * 1000
while (Date.now() < end) {
  for (let read = 0; read < 4; read++, reads++) {
    const owners = ring.getMany(keys)
    keys.forEach((key, i) => {
      const list = ring.getN(key, 3)
      if (owners[i] !== expected.owners[i] || ring.get(key) !== owners[i]) bad++
      if (list.join() !== expected.lists[i].join() || new Set(list).size !== list.length) bad++
    })
  }
  const [derive, mutate] = steps[swaps % 4]
  expected = answers(derive(ring))
  mutate()
  swaps++
}
parentPort.postMessage({ swaps, reads, bad })
`

test('workers place keys while each keeps changing its ring', { timeout: 120000 }, async () => {
  const results = await Promise.all(
    ALGORITHMS.map(
      (algorithm) =>
        new Promise((resolve, reject) => {
          const worker = new Worker(workerCode, { eval: true, workerData: { algorithm, seconds } })
          worker.once('message', (result) => resolve({ algorithm, ...result }))
          worker.once('error', reject)
        }),
    ),
  )
  for (const { algorithm, swaps, reads, bad } of results) {
    assert.equal(bad, 0, `${algorithm}: ${bad} answers differ from their state's`)
    assert.ok(swaps >= 3 && reads > 0, `${algorithm}: ${swaps} swaps, ${reads} reads`)
  }
})
