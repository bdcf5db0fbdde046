// Every JavaScript snippet of the documentation runs as written: the
// README, the pages of docs/ and node/README.md (the npm page). A snippet is
// named by its file and its position among that file's ```js blocks; one
// this test does not know fails it (run the new one here, or say why not).
// Each runs in its own Node process, as an ES module (`.mjs`) or, when it
// calls require, as CommonJS (`.cjs`), with this checkout's package in place
// of 'shardring', and must print exactly what it printed when written (its
// comments say what). The follower snippet runs against a real etcd (the
// launcher in servers.mjs), its address in place of http://127.0.0.1:2379,
// while a member joins.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Etcd } from './servers.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const ENTRY = fileURLToPath(new URL('../shardring.js', import.meta.url))
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`), 'node/README.md']
const ETCD_IN_SNIPPETS = 'http://127.0.0.1:2379'

/** Map of `file:index` to the snippet's code. */
function snippets() {
  const found = new Map()
  for (const file of DOCS) {
    const blocks = readFileSync(join(ROOT, file), 'utf8').split('```js\n').slice(1)
    blocks.forEach((block, i) => found.set(`${file}:${i}`, block.split('```')[0]))
  }
  return found
}

const dir = mkdtempSync(join(tmpdir(), 'shardring-snippets-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** The snippet as a file importing this checkout's package. */
function write(name, code) {
  const commonjs = /\brequire\('shardring'\)/.test(code)
  const source = commonjs
    ? code.replaceAll("require('shardring')", `require(${JSON.stringify(ENTRY)})`)
    : code.replaceAll("from 'shardring'", `from ${JSON.stringify(ENTRY)}`)
  assert.notEqual(source, code, `${name} does not load 'shardring'`)
  const file = join(dir, `${name.replace(/[/:.]/g, '-')}.${commonjs ? 'cjs' : 'mjs'}`)
  writeFileSync(file, source)
  return file
}

/** Runs a snippet to its end; returns its standard output. */
function run(name, code = snippets().get(name)) {
  const result = spawnSync(process.execPath, [write(name, code)], { encoding: 'utf8', timeout: 30000 })
  assert.equal(result.status, 0, `${name} failed:\n${result.stderr}`)
  return result.stdout
}

// What each snippet prints, in order.
const EXPECTED = {
  'docs/algorithms.md:0': '127.0.0.1:8080\n',
  'docs/bounded-loads.md:0': 'serving user:42 on cache-2 after 1 probe\n0\n',
  'docs/transitions.md:0': "[ 'cache-1' ] [ 'cache-1', 'cache-5' ]\n",
  'node/README.md:0': "cache-a\n[ 'cache-a', 'cache-c' ]\n[ 'cache-c', 'cache-c', 'cache-c' ]\n0.21990745730504505\n",
  'node/README.md:1': "[ 'cache-b', 'cache-a', 'cache-a' ]\n",
}
const SPECIAL = ['README.md:0', 'docs/fleet.md:0']

test('the docs have the snippets this test knows', () => {
  assert.deepEqual([...snippets().keys()].sort(), [...Object.keys(EXPECTED), ...SPECIAL].sort(),
    'a JavaScript snippet was added, moved or removed: run it here, or say why not')
})

for (const [name, expected] of Object.entries(EXPECTED)) {
  test(`${name} prints what it says`, () => {
    assert.equal(run(name), expected)
  })
}

test("the README's quick example runs as written, as an ES module with a top-level await", () => {
  const example = snippets().get('README.md:0')
  assert.match(example, /^import \{ Ring, diff \} from 'shardring'$/m)
  assert.match(example, /^await /m)
  // Its last expression is the moved share: print it, and the ring's ids.
  const lines = example.trimEnd().split('\n')
  const last = lines.pop()
  assert.match(last, /^diff\(/)
  const out = run('README.md:0', [...lines, `console.log(JSON.stringify([${last}, [...ring].sort()]))`].join('\n'))
  const [movedShare, ids] = JSON.parse(out)
  assert.deepEqual(ids, ['cache-1', 'cache-2', 'cache-3', 'cache-4'])
  // cache-4 (weight 1 of 5) takes about a fifth of the keys.
  assert.ok(movedShare > 0.15 && movedShare < 0.25, `moved ${movedShare}`)
})

test('the follower snippet runs on a real etcd while a member joins', async (t) => {
  const etcd = await Etcd.start()
  t.after(() => etcd.stop())
  const code = snippets().get('docs/fleet.md:0')
  assert.ok(code.includes(`Follower.etcd('${ETCD_IN_SNIPPETS}', '/shardring/cache')`))
  etcd.put('/shardring/cache/members/cache-1', JSON.stringify({ weight: 1 }))
  const child = spawn(process.execPath, [write('docs/fleet.md:0', code.replaceAll(ETCD_IN_SNIPPETS, etcd.url))])
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  let stderr = ''
  child.stderr.on('data', (data) => { stderr += data })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  // Once it prints the first ring, the snippet waits for the next revision: a member joins.
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (data) => {
      out += data
      if (out.includes('\n')) resolve()
    })
    child.on('exit', () => reject(new Error(`the snippet exited before printing:\n${stderr}`)))
  })
  const revision = etcd.put('/shardring/cache/members/cache-2', JSON.stringify({ weight: 1 }))
  assert.equal(await exited, 0, stderr)
  const [first, change, last] = out.trimEnd().split('\n')
  assert.match(first, /^cache-1 \d+ [0-9a-f]{16}$/)
  // The change event: revision, fingerprint, moved share (cache-2 takes about half).
  const [changed, fingerprint, moved] = change.split(' ')
  assert.equal(Number(changed), revision)
  assert.match(fingerprint, /^[0-9a-f]{16}$/)
  assert.ok(Number(moved) > 0.3 && Number(moved) < 0.7, change)
  assert.match(last, new RegExp(`^cache-[12] ${revision}$`))
})
