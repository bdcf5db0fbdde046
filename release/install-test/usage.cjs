// The installed npm package from CommonJS: prints "key owner" for each key
// argument on the ring of a JSON config (release/install-test.sh compares the
// lines with Python's and C++'s).
const { readFileSync } = require('node:fs')
const { Ring, version } = require('shardring')

const [config, ...keys] = process.argv.slice(2)
const ring = Ring.fromJSON(readFileSync(config, 'utf8'))
console.error(`shardring ${version} (CommonJS)`)
for (const key of keys) console.log(`${key} ${ring.get(key)}`)
