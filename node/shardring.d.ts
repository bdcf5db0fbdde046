// Types of the shardring npm package: the native binding's generated types
// (index.d.ts) plus the methods shardring.js adds to Ring.
import type { Acquired, Balance, RingOptions } from './index'

export { LoadTracker, Ring, diff, hashKey, PLACEMENT_FORMAT } from './index'

/** The package version, `"X.Y.Z"`, the same in every binding. */
export declare const version: string
export type { Acquired, Balance, Flow, MovedArc, NodeInit, RingDiff, RingOptions, Spread } from './index'

/** The names of every placement algorithm, as the `algorithm` option takes them. */
export declare const ALGORITHMS: ReadonlyArray<NonNullable<RingOptions['algorithm']>>

/** A request's assignment from `LoadTracker.acquire`. */
export interface Lease extends Acquired {
  /** Gives the load back, exactly once; throws `RING_NO_LOAD` when called again. */
  release(): void
}

declare module './index' {
  interface LoadTracker {
    /** Assigns a request for `key` to a node under capacity. Throws `RING_EMPTY_RING`. */
    acquire(key: string | Uint8Array): Lease
  }

  interface Ring extends Iterable<string> {
    /** The owner of every key, in key order; the batch crosses napi once. Throws as `get`. */
    getMany(keys: ReadonlyArray<string | Uint8Array>): string[]
    /**
     * `getIndices` on the libuv thread pool: the owners' indices into the `ids`
     * of the ring as it was at the call. Throws synchronously as `getIndices`.
     */
    getIndicesAsync(bytes: Uint8Array, lengths: Uint32Array): Promise<Uint32Array>
    /** Places a key sample and measures how evenly it spreads. Throws `RING_EMPTY_RING`. */
    balance(keys: ReadonlyArray<string | Uint8Array>): Balance
    /** The JSON config as an object for `JSON.stringify`; `RangeError` when the seed exceeds 2^53. */
    toJSON(): object
    /** Iterates over the node ids, in order. */
    [Symbol.iterator](): IterableIterator<string>
  }
}
