// Follower on a real etcd and on a config file: the ring follows changes,
// 'change' events carry what moved, bad records are reported by key.
import { test, after, before } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, writeFileSync, renameSync, mkdtempSync, mkdirSync, rmSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { Follower, LoadTracker, Ring } from '../shardring.js'
import { Etcd, makePki } from './servers.mjs'

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
  const follower = await Follower.etcd([etcd.url], `${PREFIX}-bad`, { timeout: 30 })
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
  await assert.rejects(Follower.etcd('http://127.0.0.1:1', PREFIX, { timeout: 0.5 }), (error) => {
    assert.equal(error.code, 'RING_TIMEOUT', error.message)
    assert.match(error.message, /127\.0\.0\.1:1/)
    assert.equal(error.refusal, undefined)
    return true
  })
  await assert.rejects(Follower.etcd('nowhere', PREFIX), { code: 'RING_INVALID_CONFIG' })
  await assert.rejects(Follower.etcd('http://127.0.0.1:1', PREFIX, { timeout: 'soon' }), TypeError)
})

test('over TLS with a client certificate and etcd auth, a follower follows; bad credentials are typed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardring-pki-'))
  const pki = makePki(dir)
  const secure = await Etcd.start(pki)
  try {
    secure.ctl(['user', 'add', 'root:root-Pw-9d2f', '--interactive=false'])
    secure.ctl(['user', 'grant-role', 'root', 'root'])
    secure.ctl(['role', 'add', 'reader'])
    secure.ctl(['role', 'grant-permission', '--prefix=true', 'reader', 'read', `${PREFIX}-tls/`])
    secure.ctl(['user', 'add', 'follower:follower-Pw-7c1e', '--interactive=false'])
    secure.ctl(['user', 'grant-role', 'follower', 'reader'])
    secure.ctl(['auth', 'enable'])
    secure.put(`${PREFIX}-tls/members/a`, '{"weight": 1}')
    const passwordFile = join(dir, 'password')
    writeFileSync(passwordFile, 'follower-Pw-7c1e\n', { mode: 0o600 })
    const options = { caFile: pki.ca, certFile: pki.cert, keyFile: pki.key, user: 'follower', passwordFile, timeout: 10 }
    const follower = await Follower.etcd(secure.url, `${PREFIX}-tls`, options)
    assert.deepEqual([...follower.ring], ['a'])
    follower.close()
    // A refusal is RING_REFUSED with its kind, naming the endpoint and the
    // reason, within the timeout (2 s) and a margin; it used to be RING_TIMEOUT.
    const endpoint = secure.url.replace('https://', '')
    const refusals = [
      ['a wrong password', secure.url, `${PREFIX}-tls`, { ...options, passwordFile: undefined, password: 'not-the-Pw-0000' },
        'authentication', /refused this client \(authentication\): .*authentication failed, invalid user ID or password/],
      ['a role that may not read the prefix', secure.url, `${PREFIX}-other`, options, 'permission',
        /refused this client \(permission\): etcdserver: permission denied/],
      ['a server from an unknown CA', secure.url, `${PREFIX}-tls`, { ...options, caFile: undefined }, 'tls',
        /refused this client \(TLS\): .*UnknownIssuer/],
      ['plain TCP to a TLS-only etcd', secure.url.replace('https://', 'http://'), `${PREFIX}-tls`, {}, 'tls',
        /if etcd speaks TLS only, use an https:\/\/ endpoint/],
    ]
    for (const [name, url, prefix, given, refusal, reason] of refusals) {
      const started = Date.now()
      await assert.rejects(Follower.etcd(url, prefix, { ...given, timeout: 2 }), (error) => {
        assert.equal(error.code, 'RING_REFUSED', `${name}: ${error.message}`)
        assert.equal(error.refusal, refusal, name)
        assert.match(error.message, reason, name)
        assert.ok(error.message.includes(endpoint), `${name}: ${error.message}`)
        assert.doesNotMatch(error.message, /not-the-Pw/)
        return true
      })
      assert.ok(Date.now() - started < 3500, `${name}: refused after ${Date.now() - started} ms`)
    }
    chmodSync(passwordFile, 0o644)
    await assert.rejects(Follower.etcd(secure.url, `${PREFIX}-tls`, options),
      { code: 'RING_FILE', message: /readable by group or others \(mode 644\)/ })
    await assert.rejects(Follower.etcd(secure.url, `${PREFIX}-tls`, { ...options, passwordFile: undefined }),
      { code: 'RING_INVALID_CONFIG', message: /"follower".*no password/ })
    assert.throws(() => Follower.etcd(secure.url, PREFIX, { cafile: pki.ca }), TypeError)
    assert.throws(() => Follower.etcd(secure.url, PREFIX, { caFile: 7 }), TypeError)
  } finally {
    secure.stop()
    rmSync(dir, { recursive: true, force: true })
  }
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
    // Lookups counted per node, batches included, and in the metrics.
    const want = {}
    for (let i = 0; i < 500; i++) {
      const owner = follower.ring.get(`key-${i}`)
      want[owner] = (want[owner] ?? 0) + 2
    }
    follower.ring.getMany(Array.from({ length: 500 }, (_, i) => `key-${i}`))
    assert.deepEqual(follower.lookupCounts(), want)
    const metrics = follower.metrics()
    for (const [id, count] of Object.entries(want)) {
      assert.ok(metrics.includes(`shardring_lookups_total{node="${id}"} ${count}\n`), id)
    }
    assert.match(metrics, new RegExp(`shardring_ring_info\\{algorithm="ring",fingerprint="${follower.fingerprintHex}",epoch="2"\\} 1`))
    assert.ok(metrics.endsWith('# EOF\n'))
    assert.throws(() => follower.ring.countLookups(), (e) => e instanceof TypeError && /follower.lookupCounts/.test(e.message))
  } finally {
    follower.close()
  }
  assert.throws(() => follower.metrics(), (e) => e.code === 'RING_STOPPED')
})

const utf16 = (text) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])
const GOOD = '{"format_version": 1, "nodes": [{"id": "a"}]}'

// It used to wait the whole timeout and reject with RING_TIMEOUT "no answer"
// (a refused config, a missing file, a directory), or say "stream did not
// contain valid UTF-8" with no position (UTF-16, Latin-1).
test('a file that cannot be read or is refused rejects at once with RING_FILE naming why', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardring-refused-'))
  const cases = [
    ['bom8.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(GOOD)]), 'the text starts with a byte-order mark (U+FEFF, bytes EF BB BF)'],
    ['utf16.json', utf16(GOOD), 'the text starts with a UTF-16 byte-order mark (bytes FF FE)'],
    ['latin1.json', Buffer.from('{"format_version": 1, "nodes": [{"id": "caf\xe9"}]}', 'latin1'), 'byte 0xE9 at line 1 column 44 (offset 43) is not UTF-8'],
    ['down.json', Buffer.from('{"format_version": 1, "algorithm": "ketama", "nodes": [{"id": "a:1", "down": true}]}'), 'do not apply to algorithm "ketama"'],
    ['missing.json', null, 'cannot read it: No such file or directory'],
    ['directory', 'dir', 'cannot read it: Is a directory'],
  ]
  for (const [name, content, reason] of cases) {
    const path = join(dir, name)
    if (content === 'dir') mkdirSync(path)
    else if (content !== null) writeFileSync(path, content)
    const started = Date.now()
    await assert.rejects(Follower.file(path, { timeout: 30 }), (error) => {
      assert.equal(error.code, 'RING_FILE', name)
      assert.ok(error.message.startsWith(`${path}: `) && error.message.includes(reason), `${name}: ${error.message}`)
      return true
    })
    assert.ok(Date.now() - started < 5000, `${name}: refused after ${Date.now() - started} ms, not at once`)
  }
})

test('a reload that fails keeps the ring and says why', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardring-reload-'))
  const path = join(dir, 'ring.json')
  const write = (bytes) => {
    writeFileSync(`${path}.tmp`, bytes)
    renameSync(`${path}.tmp`, path)
  }
  write('{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}]}')
  const follower = await Follower.file(path)
  try {
    const fingerprint = follower.fingerprint
    let rejected = once(follower, 'rejected')
    write(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(GOOD)]))
    let [event] = await rejected
    assert.equal(event.key, path)
    assert.match(event.message, /byte-order mark \(U\+FEFF/)
    rejected = once(follower, 'rejected')
    write(utf16(GOOD))
    ;[event] = await rejected
    assert.match(event.message, /UTF-16 byte-order mark/)
    const disconnected = once(follower, 'disconnected')
    unlinkSync(path)
    ;[event] = await disconnected
    assert.ok(event.message.includes(path) && event.message.includes('No such file or directory'), event.message)
    assert.deepEqual([follower.revision, follower.fingerprint, follower.ring.ids], [1, fingerprint, ['a', 'b']])
    write('{"format_version": 1, "nodes": [{"id": "z"}]}')
    assert.equal(await follower.waitForRevision(2, 30), 2)
    assert.deepEqual(follower.ring.ids, ['z'])
  } finally {
    follower.close()
  }
})

test('waitForRevision takes a revision as every whole-number argument', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardring-wait-'))
  const path = join(dir, 'ring.json')
  writeFileSync(path, GOOD)
  const follower = await Follower.file(path)
  try {
    for (const revision of [2 ** 63, -(2 ** 70), -1, 1.5, 2 ** 53, NaN, Infinity]) {
      await assert.rejects(follower.waitForRevision(revision, 0), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: /^revision must be a whole number from 0 to 9007199254740991, got / }, String(revision))
    }
    for (const revision of [true, '1', 1n, null, undefined, {}]) {
      await assert.rejects(follower.waitForRevision(revision, 0), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /^revision must be a number, not / }, String(revision))
    }
    assert.equal(await follower.waitForRevision(0), 1)
    assert.equal(await follower.waitForRevision(1), 1)
  } finally {
    follower.close()
  }
})

// ring, transition, readNodes, writeNodes and listeners worked after close()
// (a listener that never fires); now every call throws RING_STOPPED.
test('a closed follower answers nothing but close', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardring-closed-'))
  const path = join(dir, 'ring.json')
  writeFileSync(path, GOOD)
  const follower = await Follower.file(path)
  const ring = follower.ring
  const listener = () => {}
  follower.on('change', listener)
  follower.close()
  const calls = {
    ring: () => follower.ring,
    transition: () => follower.transition,
    readNodes: () => follower.readNodes('k'),
    writeNodes: () => follower.writeNodes('k'),
    revision: () => follower.revision,
    fingerprint: () => follower.fingerprint,
    fingerprintHex: () => follower.fingerprintHex,
    status: () => follower.status(),
    on: () => follower.on('change', () => {}),
    addListener: () => follower.addListener('change', () => {}),
    once: () => follower.once('change', () => {}),
    prependListener: () => follower.prependListener('change', () => {}),
    prependOnceListener: () => follower.prependOnceListener('change', () => {}),
  }
  for (const [name, call] of Object.entries(calls)) {
    assert.throws(call, { code: 'RING_STOPPED', message: 'the follower is closed' }, name)
  }
  await assert.rejects(follower.waitForRevision(1), { code: 'RING_STOPPED', message: 'the follower is closed' })
  follower.off('change', listener)
  assert.equal(follower.listenerCount('change'), 0)
  follower.close()
  assert.equal(ring.get('k'), 'a', 'a ring taken before close keeps its last snapshot')
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

test('a wiped etcd is read again; epoch only grows while revision falls', { timeout: 60000 }, async () => {
  const own = await Etcd.start()
  const follower = await (async () => {
    for (let i = 0; i < 60; i++) own.put(`${PREFIX}/members/a`, JSON.stringify({ weight: 1 + (i % 3) }))
    return Follower.etcd(own.url, PREFIX)
  })()
  try {
    assert.ok(follower.revision >= 60 && follower.epoch === follower.revision, 'one store from its start')
    const numbers = []
    follower.on('change', (event) => numbers.push(event.epoch))
    follower.on('epoch', (event) => numbers.push(event.epoch))
    let before = follower.epoch
    for (const round of [0, 1]) {
      await own.wipeAndRestart()
      const want = new Ring([{ id: `x${round}` }])
      const changed = new Promise((resolve) => {
        const listener = () => {
          if (follower.fingerprint === want.fingerprint) {
            follower.off('change', listener)
            resolve()
          }
        }
        follower.on('change', listener)
      })
      const revision = own.put(`${PREFIX}/members/x${round}`, JSON.stringify({ weight: 1 }))
      await changed
      assert.ok(await follower.waitForRevision(revision, 30) >= revision)
      const status = follower.status()
      assert.ok(status.revision < 10 && status.epoch === follower.epoch && follower.epoch > before,
        `round ${round}: ${JSON.stringify({ ...status, fingerprint: undefined })}, before ${before}`)
      before = follower.epoch
    }
    assert.ok(numbers.length >= 2 && numbers.every((n, i) => i === 0 || n > numbers[i - 1]), `${numbers}`)
  } finally {
    follower.close()
    own.stop()
  }
})
