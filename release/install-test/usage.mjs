// The installed npm package from ESM, named imports: the same lines as usage.cjs.
import { readFileSync } from 'node:fs'
import { Ring, version } from 'shardring'

const [config, ...keys] = process.argv.slice(2)
const ring = Ring.fromJSON(readFileSync(config, 'utf8'))
console.error(`shardring ${version} (ESM)`)
for (const key of keys) console.log(`${key} ${ring.get(key)}`)
