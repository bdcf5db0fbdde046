// Types of the shardring npm package: the native binding's generated types
// (index.d.ts) plus the methods shardring.js adds to Ring.
import type { Balance, RingOptions } from './index'

export { Ring, diff, hashKey, PLACEMENT_FORMAT } from './index'
export type { Balance, Flow, MovedArc, NodeInit, RingDiff, RingOptions, Spread } from './index'

/** The names of every placement algorithm, as the `algorithm` option takes them. */
export declare const ALGORITHMS: ReadonlyArray<NonNullable<RingOptions['algorithm']>>

declare module './index' {
  interface Ring extends Iterable<string> {
    /** The owner of every key, in key order; the batch crosses napi once. Throws as `get`. */
    getMany(keys: ReadonlyArray<string | Uint8Array>): string[]
    /** Places a key sample and measures how evenly it spreads. Throws `RING_EMPTY_RING`. */
    balance(keys: ReadonlyArray<string | Uint8Array>): Balance
    /** The JSON config as an object for `JSON.stringify`; `RangeError` when the seed exceeds 2^53. */
    toJSON(): object
    /** Iterates over the node ids, in order. */
    [Symbol.iterator](): IterableIterator<string>
  }
}
