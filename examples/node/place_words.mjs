// Places every word of a word list on the cluster of a JSON ring config and
// prints the keys per node and an FNV-1a 64 digest of the placements.
//
// Run (after building node/ and `npm install` in examples/node/, which links it):
//   node examples/node/place_words.mjs examples/cluster.json /usr/share/dict/words
import { readFileSync } from 'node:fs'
import { Ring } from 'shardring'

const FNV_PRIME = 0x100000001b3n
const MASK = (1n << 64n) - 1n

function fnv1a(digest, bytes) {
  for (const byte of bytes) digest = ((digest ^ BigInt(byte)) * FNV_PRIME) & MASK
  return digest
}

const [configPath, wordsPath] = process.argv.slice(2)
if (!wordsPath) {
  console.error('usage: place_words.mjs CLUSTER.json WORDS')
  process.exit(2)
}
const ring = Ring.fromJSON(readFileSync(configPath, 'utf8'))
const data = readFileSync(wordsPath)
const words = []
for (let start = 0; start < data.length; ) {
  let end = data.indexOf(0x0a, start)
  if (end === -1) end = data.length
  words.push(data.subarray(start, end))
  start = end + 1
}
const owners = ring.getMany(words) // one call across napi for the whole list
const counts = new Map(ring.ids.map((id) => [id, 0]))
let digest = 0xcbf29ce484222325n
words.forEach((word, i) => {
  counts.set(owners[i], counts.get(owners[i]) + 1)
  digest = fnv1a(digest, word)
  digest = fnv1a(digest, Buffer.from(`\t${owners[i]}\n`, 'utf8'))
})
const keys = words.length
console.log(`Node: ${keys} keys on ${ring.size} nodes`)
for (const [id, count] of counts) {
  console.log(`  ${id.padEnd(10)} ${String(count).padStart(7)}  ${((100 * count) / keys).toFixed(2).padStart(5)}%`)
}
console.log(`digest ${digest.toString(16).padStart(16, '0')}`)
