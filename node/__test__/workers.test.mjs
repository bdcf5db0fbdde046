// Lookups from worker_threads while the main thread keeps swapping rings: each
// worker owns a Ring built from the JSON the main thread posts, so every answer
// must come from one whole ring (a member of it, preference lists distinct).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'

const workerCode = `
const { parentPort } = require('node:worker_threads')
const { Ring } = require(${JSON.stringify(new URL('../shardring.js', import.meta.url).pathname)})
let ring = null, lookups = 0, bad = 0
parentPort.on('message', (message) => {
  if (message === 'stop') { parentPort.postMessage({ lookups, bad }); return }
  ring = Ring.fromJSON(message)
  const ids = new Set(ring.ids)
  const keys = Array.from({ length: 200 }, (_, i) => 'key-' + (lookups + i))
  const owners = ring.getMany(keys)
  keys.forEach((key, i) => {
    if (owners[i] !== ring.get(key) || !ids.has(owners[i])) bad++
    const list = ring.getN(key, 3)
    if (new Set(list).size !== 3 || list[0] !== owners[i]) bad++
  })
  lookups += keys.length
  parentPort.postMessage('ready')
})
`

test('workers place keys while the main thread swaps rings', { timeout: 60000 }, async () => {
  const { Ring } = await import('../shardring.js')
  const workers = Array.from({ length: 3 }, () => new Worker(workerCode, { eval: true }))
  let ring = new Ring(Array.from({ length: 6 }, (_, i) => `node-${i}`), { vnodes: 40 })
  const ask = (w, message) => new Promise((resolve, reject) => {
    const onMessage = (reply) => {
      w.off('error', onError)
      resolve(reply)
    }
    const onError = (error) => {
      w.off('message', onMessage)
      reject(error)
    }
    w.once('message', onMessage)
    w.once('error', onError)
    w.postMessage(message)
  })
  const round = (json) => Promise.all(workers.map((w) => ask(w, json)))
  for (let i = 0; i < 40; i++) {
    ring = i % 2 === 0 ? ring.withNode(`extra-${i}`) : ring.withoutNode(`extra-${i - 1}`)
    await round(ring.toJSONString())
  }
  const results = await Promise.all(workers.map((w) => ask(w, 'stop')))
  await Promise.all(workers.map((w) => w.terminate()))
  for (const { lookups, bad } of results) {
    assert.equal(bad, 0)
    assert.equal(lookups, 40 * 200)
  }
})
