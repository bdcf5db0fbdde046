// One text for a fingerprint: every object that has a fingerprint gives
// `fingerprintHex`, 16 lowercase hex digits zero-padded, the exact text the
// CLI prints (`shardring stats`, `shardring watch`), vectors.json records and
// Python's `fingerprint_hex` gives (py/tests/test_fingerprint.py compares the
// same CLI text).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import util from 'node:util'
import { ALGORITHMS, Follower, Ring, Transition } from '../shardring.js'

const CLI = fileURLToPath(new URL('../../target/release/shardring', import.meta.url))

function cli(...args) {
  assert.ok(existsSync(CLI), `${CLI} is missing: run \`make build-cli\` (make test-node does)`)
  return execFileSync(CLI, args, { encoding: 'utf8', timeout: 60_000 })
}

// The first seed whose ring's fingerprint is below 2^60, so its text starts
// with a 0 that only zero-padding keeps.
function configWithALeadingZero() {
  for (let seed = 0; seed < 1000; seed++) {
    const ring = new Ring(['a', 'b', 'c'], { seed })
    if (ring.fingerprint < 1n << 60n) return JSON.parse(ring.toJSONString())
  }
  throw new Error('no fingerprint below 2^60 in 1000 seeds')
}

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'shardring-fingerprint-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function write(path, config) {
  writeFileSync(`${path}.tmp`, JSON.stringify(config))
  renameSync(`${path}.tmp`, path)
}

test('the text is 16 hex digits, zero-padded, and follows the ring', () => {
  const config = configWithALeadingZero()
  const ring = Ring.fromJSON(JSON.stringify(config))
  assert.equal(ring.fingerprintHex, ring.fingerprint.toString(16).padStart(16, '0'))
  assert.match(ring.fingerprintHex, /^0[0-9a-f]{15}$/)
  assert.equal(BigInt(`0x${ring.fingerprintHex}`), ring.fingerprint)
  assert.match(util.inspect(ring), new RegExp(`fingerprint: '${ring.fingerprintHex}'`))
  ring.addNode('d')
  assert.equal(ring.fingerprintHex, ring.fingerprint.toString(16).padStart(16, '0'))
  assert.notEqual(ring.fingerprintHex, Ring.fromJSON(JSON.stringify(config)).fingerprintHex)
})

test("every vector case's text is the one vectors.json records", () => {
  const text = readFileSync(new URL('../../testdata/vectors.json', import.meta.url), 'utf8')
  // Seeds above 2^53 stay exact as strings, and go back into the config as numbers.
  const { cases } = JSON.parse(text.replace(/"seed": (\d+)/g, '"seed": "$1"'))
  assert.ok(cases.length > 20)
  for (const c of cases) {
    const config = JSON.stringify(c.config).replace(/"seed":"(\d+)"/g, '"seed":$1')
    assert.equal(Ring.fromJSON(config).fingerprintHex, c.fingerprint, c.name)
  }
})

test('rings, transitions, followers and change events give the text the CLI prints', async (t) => {
  const first = configWithALeadingZero()
  const second = { ...first, nodes: [...first.nodes, { id: 'd', weight: 2 }] }
  const path = join(tempDir(t), 'ring.json')
  write(path, first)
  const stats = cli('stats', path).split('\n')[0]
  assert.ok(stats.endsWith(`fingerprint ${Ring.fromJSON(JSON.stringify(first)).fingerprintHex}`), stats)

  const watch = spawn(CLI, ['watch', '--file', path, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.after(() => watch.exitCode === null && watch.kill())
  const lines = createInterface({ input: watch.stdout })[Symbol.asyncIterator]()
  // The CLI's next epoch past revision `after` (it may print its first epoch twice).
  const printed = async (after) => {
    for (;;) {
      const line = JSON.parse((await lines.next()).value)
      if (line.kind === 'epoch' && line.revision > after) return line
    }
  }

  const follower = await Follower.file(path)
  t.after(() => follower.close())
  const firstEpoch = await printed(0)
  let text = firstEpoch.fingerprint
  assert.match(text, /^0[0-9a-f]{15}$/)
  assert.equal(Ring.fromJSON(JSON.stringify(first)).fingerprintHex, text)
  assert.equal(Transition.fromJSON(JSON.stringify(first)).fingerprintHex, text)
  assert.equal(follower.fingerprintHex, text)
  assert.equal(follower.ring.fingerprintHex, text)
  assert.equal(follower.status().fingerprintHex, text)
  assert.equal(follower.transition.fingerprintHex, text)

  const changed = once(follower, 'change')
  write(path, second)
  text = (await printed(firstEpoch.revision)).fingerprint
  const [event] = await changed
  assert.equal(event.fingerprintHex, text)
  assert.equal(event.fingerprint, BigInt(`0x${text}`))
  assert.equal(Ring.fromJSON(JSON.stringify(second)).fingerprintHex, text)
  assert.equal(follower.fingerprintHex, text)
  assert.equal(follower.status().fingerprintHex, text)
  const exited = once(watch, 'exit')
  watch.kill('SIGTERM')
  const [code] = await exited
  assert.equal(code, 0)
})

test('a transition between rings gives its own text; a steady one its ring', () => {
  const old = new Ring(['a', 'b'])
  const moving = Transition.between(old, old.withNode('c'))
  assert.equal(moving.fingerprintHex, moving.fingerprint.toString(16).padStart(16, '0'))
  assert.notEqual(moving.fingerprintHex, old.fingerprintHex)
  assert.equal(Transition.between(old, old).fingerprintHex, old.fingerprintHex)
})

test('every algorithm gives the text the CLI prints', (t) => {
  const dir = tempDir(t)
  for (const algorithm of ALGORITHMS) {
    const ring = new Ring(['10.0.0.1:11211', '10.0.0.2:11211', '10.0.0.3:11211'], { algorithm })
    const path = join(dir, `${algorithm}.json`)
    writeFileSync(path, ring.toJSONString())
    assert.ok(cli('stats', path).split('\n')[0].endsWith(`fingerprint ${ring.fingerprintHex}`), algorithm)
  }
})
