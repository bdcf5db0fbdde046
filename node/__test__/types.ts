// Type-checked by `tsc --noEmit` in `npm test`: the public types describe the
// whole surface, the methods shardring.js adds included.
import { ALGORITHMS, Follower, LoadTracker, Ring, Transition, diff, hashKey, PLACEMENT_FORMAT, REDIS_GUARD, REDIS_GUARD_SHA1, MOVED_REPLY, TRYAGAIN_REPLY, version, type Balance, type EpochEvent, type FollowerRefusedError, type RingDiff, type Route } from '../shardring.js'
// @ts-expect-error: Snapshot is internal
import type { Snapshot } from '../shardring.js'
// @ts-expect-error: so is the loader's binding target
import { __napiBindingTarget } from '../shardring.js'

const ring: Ring = new Ring([{ id: 'a', weight: 2, zone: 'east' }, 'b'], { vnodes: 160, seed: 7n })
const fromMap: Ring = new Ring({ a: 1, b: 2 })
const owner: string = ring.get('key')
const owners: string[] = ring.getMany(['k1', Buffer.from('k2')])
const list: string[] = ring.getN(new Uint8Array([1, 2]), 2)
const byHash: string = ring.getByHash(hashKey('key', 7n))
const ids: string[] = [...ring]
const balance: Balance = ring.balance(['k'])
const change: RingDiff = diff(ring, fromMap.withNode('c'))
const shares: Record<string, number> = ring.ownership()
const text: string = ring.toJSONString()
const format: number = PLACEMENT_FORMAT
ring.addNode({ id: 'c' })
ring.setWeight('c', 0.5)
ring.removeNode('c')
const maglev = new Ring(['a', 'b'], { algorithm: 'maglev', tableSize: 251 })
const algorithm: string = maglev.algorithm
const size: number | null = maglev.tableSize
const vnodes: number | null = maglev.vnodes
const names: ReadonlyArray<string> = ALGORITHMS
// @ts-expect-error: not an algorithm name
new Ring(['a'], { algorithm: 'chord' })
const tracker = new LoadTracker(maglev, 0.25)
const lease = tracker.acquire('key')
const leased: string = lease.node
const probes: number = lease.probes
lease.release()
void [algorithm, size, vnodes, names, leased, probes, tracker.totalLoad]
void [owner, owners, list, byHash, ids, balance.byWeight.cv, change.movedShare, shares, text, format, ring.fingerprint]
// The package's types show no internals.
// @ts-expect-error: the placement fast path is internal
ring._placer()
// @ts-expect-error: acquire adds release(); _acquire is internal
tracker._acquire('key')
const same: boolean = ring.equals(fromMap)
// One text for a fingerprint, on everything that has one.
const fingerprintText: string = ring.fingerprintHex
const transitionText: string = Transition.between(ring, fromMap).fingerprintHex
const route: Route = Transition.between(ring, fromMap).route('k')
const routed: [string, string, boolean, string] = [route.old, route.new, route.moving, REDIS_GUARD + REDIS_GUARD_SHA1 + MOVED_REPLY + TRYAGAIN_REPLY]
void [fingerprintText, transitionText, routed]
const packageVersion: string = version
async function follow(): Promise<void> {
  const follower: Follower = await Follower.etcd('http://127.0.0.1:2379', '/shardring/cache', { timeout: 1 })
  follower.on('change', (event: EpochEvent) => void [event.movedShare, event.fingerprintHex.length])
  const texts: string[] = [follower.fingerprintHex, follower.status().fingerprintHex, follower.transition.fingerprintHex]
  void texts
  const held: number = await follower.waitForRevision(follower.revision + 1)
  const owner: string = follower.ring.get('k')
  follower.close()
  void [held, owner, follower.status().staleFor]
}
void follow
function refusalOf(error: unknown): FollowerRefusedError['refusal'] | null {
  const refused = error as FollowerRefusedError
  return refused.code === 'RING_REFUSED' ? refused.refusal : null
}
void refusalOf
