// Types of the shardring npm package: the native binding's generated types
// (index.d.ts) plus the methods shardring.js adds to Ring.
import { EventEmitter } from 'node:events'
import type { Acquired, Balance, Flow, FollowerStatus, HotKey, HotSet, NearCache, Ring, RingOptions, SpreadPlan, Transition } from './index'

export {
  HotKeys,
  HotSet,
  LoadTracker,
  NearCache,
  Ring,
  Transition,
  diff,
  hashKey,
  PLACEMENT_FORMAT,
  REDIS_GUARD,
  REDIS_GUARD_SHA1,
  MOVED_REPLY,
  TRYAGAIN_REPLY,
} from './index'

/** The package version, `"X.Y.Z"`, the same in every binding. */
export declare const version: string
export type {
  Acquired,
  HotEntry,
  HotKey,
  HotKeysOptions,
  ObservedKey,
  SpreadPlan,
  Balance,
  Flow,
  FollowerStatus,
  MovedArc,
  NodeInit,
  RingDiff,
  RingOptions,
  Route,
  Spread,
} from './index'

/** A new ring (`'change'`) or a later revision of the same ring (`'epoch'`). */
export interface EpochEvent {
  /** The epoch number: it only grows, across an etcd restore too. */
  epoch: number
  /** etcd's revision (file: successful reads); lower after etcd is restored from an older snapshot. */
  revision: number
  fingerprint: bigint
  /** The fingerprint as text, 16 lowercase hex digits, zero-padded (as `Ring.fingerprintHex` and the CLI). */
  fingerprintHex: string
  changed: boolean
  /** Share of keys that moved (on `'change'`). */
  movedShare?: number
  /** Who gave keys to whom (on `'change'`). */
  flows?: Flow[]
}

/**
 * What `Follower.etcd` rejects with when etcd refused the client (code
 * `RING_REFUSED`): the message names the endpoint and the TLS or auth reason.
 */
export interface FollowerRefusedError extends Error {
  code: 'RING_REFUSED'
  /** TLS (a certificate, TLS against plain TCP), a wrong user or password, or a role without the permission. */
  refusal: 'tls' | 'authentication' | 'permission'
}

/**
 * A ring kept current from etcd or a config file; see shardring.js. Events:
 * `'change'` and `'epoch'` ({@link EpochEvent}), `'rejected'` (`{ key,
 * message }`), `'disconnected'` (`{ message }`), `'reconnected'`
 * (`{ revision, downFor }`).
 */
export declare class Follower extends EventEmitter {
  private constructor()
  /**
   * Follows `prefix` in etcd at `endpoints`; rejects with `RING_REFUSED` (etcd refused this client: a
   * {@link FollowerRefusedError}), `RING_TIMEOUT`, `RING_INVALID_CONFIG` or `RING_FILE`.
   * TLS with `caFile`/`certFile`/`keyFile` (PEM, key mode 600) or an `https://` endpoint; etcd auth with
   * `user` and `password` or `passwordFile` (mode 600).
   */
  static etcd(
    endpoints: string | string[],
    prefix: string,
    options?: {
      timeout?: number
      caFile?: string
      certFile?: string
      keyFile?: string
      user?: string
      password?: string
      passwordFile?: string
      /** Report as `<prefix>/clients/<reportAs>` for `shardring fleet status`. */
      reportAs?: string
      /** Seconds between reports (default 10). */
      reportInterval?: number
      /** Find (and report) the hot keys of the follower's lookups. */
      hotKeys?: boolean
    },
  ): Promise<Follower>
  /** Follows a JSON ring config file; rejects at once with `RING_FILE` naming why when it cannot be read or is refused. */
  static file(path: string, options?: { timeout?: number }): Promise<Follower>
  /** The current ring (read-only). */
  readonly ring: Ring
  /** The etcd revision the ring was read at (file: successful reads); lower after a restore. */
  readonly revision: number
  /** The epoch number: it only grows, across an etcd restore too. */
  readonly epoch: number
  /** The ring's fingerprint. */
  readonly fingerprint: bigint
  /** The ring's fingerprint as text, 16 lowercase hex digits, zero-padded (as the CLI prints it). */
  readonly fingerprintHex: string
  /** The current transition (with every member active, just the ring). */
  readonly transition: Transition
  /** Where to read `key` now. */
  readNodes(key: string | Uint8Array): string[]
  /** Where to write `key` now. */
  writeNodes(key: string | Uint8Array): string[]
  status(): FollowerStatus
  /** Lookups made on this follower's rings so far, per node id. */
  lookupCounts(): Record<string, number>
  /** The hot keys of this follower's lookups; `null` unless started with `hotKeys: true`. */
  hotKeys(): HotKey[] | null
  /** The fleet's hot set as last read from `<prefix>/hot`. */
  hotSet(): HotSet
  /** Where to read and write `key` now, by the fleet's hot set. */
  plan(key: string | Uint8Array): SpreadPlan
  /** The metrics report `cache`: its hits, misses, entries, capacity and hit ratio (a later call replaces it). */
  reportNearCache(cache: NearCache): void
  /** The follower's metrics as OpenMetrics text (serve it at /metrics). */
  metrics(): string
  /** Resolves with the revision held once it is `revision` or later (a whole number from 0 to 2^53 - 1). */
  waitForRevision(revision: number, timeout?: number): Promise<number>
  /** Stops the follower; every later call but close() throws `RING_STOPPED`. */
  close(): void
}

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
