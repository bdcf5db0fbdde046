// Follower on a real etcd and on a config file: the ring follows changes,
// 'change' events carry what moved, bad records are reported by key.
import { test, after, before } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync, renameSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { Follower, LoadTracker, Ring } from '../shardring.js'
import { Etcd } from './servers.mjs'

const PREFIX = '/shardring/test'
let etcd
before(async () => { etcd = await Etcd.start() })
after(() => etcd?.stop())

const member = (id, record) => etcd.put(`${PREFIX}/members/${id}`, JSON.stringify(record))

test('the ring follows members; change events carry the diff', async () => {
  member('a', { weight: 1 })
  const follower = await Follower.etcd(etcd.url, PREFIX)
  try {
    const ring = follower.ring
    assert.deepEqual(ring.ids, ['a'])
    const keys = Array.from({ length: 2000 }, (_, i) => `key-${i}`)
    assert.ok(keys.every((k) => ring.get(k) === 'a'))
    const tracker = new LoadTracker(ring, 0.25)
    const changed = once(follower, 'change')
    const revision = member('b', { weight: 2, zone: 'east' })
    const [event] = await changed
    assert.ok(event.revision >= revision && event.movedShare > 0 && event.flows[0].from === 'a')
    const want = new Ring([{ id: 'a' }, { id: 'b', weight: 2, zone: 'east' }])
    assert.equal(follower.fingerprint, want.fingerprint)
    assert.equal(event.fingerprint, want.fingerprint)
    assert.deepEqual(ring.getMany(keys), want.getMany(keys), 'get and getMany see the new ring')
    assert.ok(keys.some((k) => tracker.acquire(k).node === 'b'), 'the tracker follows the ring')
    const removed = member('c', { weight: 1 })
    assert.ok(await follower.waitForRevision(removed) >= removed)
    assert.deepEqual([...ring], ['a', 'b', 'c'], 'current once waitForRevision resolves')
    assert.throws(() => ring.addNode('x'), { name: 'TypeError', message: /belongs to a Follower/ })
    const status = follower.status()
    assert.ok(status.connected && status.staleFor === 0 && status.revision === follower.revision)
  } finally {
    follower.close()
  }
})

test('bad records are reported by key; the rest of the ring is built', async () => {
  member('good', { weight: 1 })
  const follower = await Follower.etcd([etcd.url], `${PREFIX}-bad`, { timeout: 5 })
  try {
    const rejected = once(follower, 'rejected')
    etcd.put(`${PREFIX}-bad/members/bad`, '{"weight": 1, "colour": "red"}')
    const [event] = await rejected
    assert.equal(event.key, `${PREFIX}-bad/members/bad`)
    assert.match(event.message, /colour/)
    assert.equal(follower.ring.size, 0)
  } finally {
    follower.close()
  }
})

test('an unreachable etcd rejects with RING_TIMEOUT; bad endpoints with RING_INVALID_CONFIG', async () => {
  await assert.rejects(Follower.etcd('http://127.0.0.1:1', PREFIX, { timeout: 0.5 }), { code: 'RING_TIMEOUT', message: /127\.0\.0\.1:1/ })
  await assert.rejects(Follower.etcd('nowhere', PREFIX), { code: 'RING_INVALID_CONFIG' })
  await assert.rejects(Follower.etcd('http://127.0.0.1:1', PREFIX, { timeout: 'soon' }), TypeError)
})

test('the file follower', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardring-file-'))
  const path = join(dir, 'ring.json')
  const write = (config) => {
    writeFileSync(`${path}.tmp`, JSON.stringify(config))
    renameSync(`${path}.tmp`, path)
  }
  write({ format_version: 1, nodes: [{ id: 'a' }, { id: 'b' }] })
  const follower = await Follower.file(path)
  try {
    assert.equal(follower.revision, 1)
    write({ format_version: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] })
    assert.equal(await follower.waitForRevision(2), 2)
    assert.deepEqual(follower.ring.ids, ['a', 'b', 'c'])
  } finally {
    follower.close()
  }
})

test('a follower follows member states', async () => {
  const prefix = `${PREFIX}-states`
  for (const id of ['a', 'b']) etcd.put(`${prefix}/members/${id}`, '{"weight": 1}')
  const follower = await Follower.etcd(etcd.url, prefix)
  try {
    assert.equal(follower.transition.isSteady, true)
    const revision = etcd.put(`${prefix}/members/w`, '{"weight": 1, "state": "warming"}')
    await follower.waitForRevision(revision)
    assert.deepEqual(follower.ring.ids, ['a', 'b'], 'a warming member takes no reads')
    const keys = Array.from({ length: 2000 }, (_, i) => `key-${i}`)
    const newRing = new Ring(['a', 'b', 'w'])
    assert.ok(keys.every((k) => follower.writeNodes(k).at(-1) === newRing.get(k)))
    assert.ok(keys.some((k) => follower.writeNodes(k).length === 2))
    assert.ok(keys.every((k) => follower.readNodes(k)[0] === follower.ring.get(k)))
    assert.equal(follower.transition.state('w'), 'warming')
  } finally {
    follower.close()
  }
})
