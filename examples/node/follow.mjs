// A follower process, as every application server runs one: follows the
// ring in etcd (or a config file) and prints each epoch as a JSON line,
// {"lang": "node", "revision": R, "fingerprint": "16 hex digits", "at_us": T}
// (at_us: wall clock in microseconds once the new ring is in place). On
// stdin, "digest N" prints {"digest": "16 hex digits", "revision": R}:
// XXH3-64 (seed 0) of the owners of keys key-0 .. key-(N-1), each followed by
// a newline. "quit" or end of input exits.
//
// Usage: node follow.mjs --etcd URL --prefix P | node follow.mjs --file PATH
// (the same protocol as membership/examples/follow.rs, examples/c/follow.c
// and examples/python/follow.py).
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { Follower, hashKey } from 'shardring'

const { values } = parseArgs({ options: { etcd: { type: 'string' }, prefix: { type: 'string' }, file: { type: 'string' } } })
const follower = values.file ? await Follower.file(values.file) : await Follower.etcd(values.etcd, values.prefix)
const hex = (fingerprint) => fingerprint.toString(16).padStart(16, '0')
const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000)
const emit = (record) => process.stdout.write(JSON.stringify(record) + '\n')

// Prints an epoch once: an event can also report the first ring, printed
// below. fingerprintHex is the text the CLI and every binding print.
let printed = -1
const print = ({ revision, fingerprintHex }) => {
  if (revision <= printed) return
  printed = revision
  emit({ lang: 'node', revision, fingerprint: fingerprintHex, at_us: nowUs() })
}
follower.on('change', print) // a new ring
follower.on('epoch', print) // the same ring, current at a later revision
print(follower)

for await (const line of createInterface({ input: process.stdin })) {
  const [command, argument] = line.trim().split(/\s+/)
  if (command === 'digest') {
    const n = Number(argument)
    const keys = Array.from({ length: n }, (_, i) => `key-${i}`)
    const owners = follower.ring.getMany(keys)
    const digest = hashKey(Buffer.from(owners.map((owner) => `${owner}\n`).join(''), 'utf8'), 0)
    emit({ digest: hex(digest), revision: follower.revision })
  } else if (command === 'quit') {
    break
  }
}
follower.close()
