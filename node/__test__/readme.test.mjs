// The README's Node quick example runs as written (an ES module with a
// top-level await), importing this checkout's package instead of 'shardring'.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const blocks = readme.split('```js\n').slice(1).map((block) => block.split('```')[0])

test('the quick example runs as written', async () => {
  const example = blocks[0]
  assert.match(example, /from 'shardring'/)
  const entry = new URL('../shardring.js', import.meta.url).href
  // Its last expression is the moved share; export it to check the value.
  const lines = example.trimEnd().split('\n')
  const last = lines.pop()
  assert.match(last, /^diff\(/)
  const source = [...lines, `export const movedShare = ${last}`, 'export { ring }']
    .join('\n')
    .replace("from 'shardring'", `from '${entry}'`)
  const dir = mkdtempSync(join(tmpdir(), 'shardring-readme-'))
  try {
    const file = join(dir, 'example.mjs')
    writeFileSync(file, source)
    const { movedShare, ring } = await import(pathToFileURL(file).href)
    assert.deepEqual([...ring].sort(), ['cache-1', 'cache-2', 'cache-3', 'cache-4'])
    // cache-4 (weight 1 of 5) takes about a fifth of the keys.
    assert.ok(movedShare > 0.15 && movedShare < 0.25, `moved ${movedShare}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
