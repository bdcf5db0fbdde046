"""Type stubs of the compiled extension (checked by mypy.stubtest in the tests).

The docstrings here are what editors show; the compiled module carries the
same text (``help(shardring.Ring)``).
"""

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from os import PathLike
from typing import Any, ClassVar, Final, Literal, Optional, Union, final

from ._node import Node

_Key = Union[str, bytes, bytearray, memoryview]
_NodeLike = Union[str, Node]
_Algorithm = Literal["ring", "ketama", "ketama-spy", "libketama", "nginx", "jump", "rendezvous", "maglev", "slots", "libmemcached",
                     "twemproxy", "uhashring", "uhashring-ketama", "hashring-js", "envoy-ring-hash", "envoy-maglev",
                     "grpc-ring-hash", "haproxy", "jumpback", "memento"]
_Distribution = Literal[
    "modula", "ketama", "hash_ring", "consistent_ketama", "consistent_weighted", "consistent_ketama_spy", "consistent_ketama_spy_weighted"
]
_KeyHash = Literal[
    "one_at_a_time", "md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh",
    "murmur", "jenkins", "murmur3",
]

__all__ = [
    "ALGORITHMS",
    "PARAMETERS",
    "PLACEMENT_FORMAT",
    "MOVED_REPLY",
    "REDIS_GUARD",
    "REDIS_GUARD_SHA1",
    "TRYAGAIN_REPLY",
    "Balance",
    "Diff",
    "Follower",
    "FollowerEvents",
    "HotKeys",
    "HotSet",
    "Lease",
    "LoadTracker",
    "NearCache",
    "Ring",
    "Route",
    "Spread",
    "Transition",
    "__version__",
    "_ring_from_json",
    "diff",
    "hash_key",
]

__version__: Final[str]
"""The package version, "X.Y.Z", the same in every binding."""
PLACEMENT_FORMAT: Final[int]
"""The placement format this build implements (core/SPEC.md)."""
ALGORITHMS: Final[tuple[str, ...]]
PARAMETERS: Final[tuple[str, ...]]
"""The names of every placement algorithm, as Ring(algorithm=...) takes them."""

def hash_key(key: _Key, seed: int = 0) -> int:
    """XXH3-64 of a key (str as UTF-8, or bytes-like) under ``seed``, an int in
    [0, 2**64): the position every binding gives the key on a ring with that seed.

    Raises TypeError for a bool or None seed, OutOfRangeError for one outside
    [0, 2**64), InvalidUtf8Error for a str key holding a lone surrogate."""

def diff(old: Ring, new: Ring) -> Diff:
    """The exact difference between two rings, position by position (by node id):
    the moved share, the share moved per (from, to) pair, and the arcs that
    change owner (the migration plan). Computed without the GIL.

    Raises InvalidConfigError when the seeds or algorithms differ, EmptyRingError
    when either ring has no points."""

def _ring_from_json(config: str) -> Ring: ...

@final
class Ring:
    """A consistent-hash ring (placement format 1, core/SPEC.md).

    ``nodes``: a list of ids (weight 1.0 each) or of ``Node(id, weight, zone)``,
    or a dict id -> weight. A weight is relative capacity, finite and >= 0 (0 =
    drained). ``algorithm``: one of ALGORITHMS. ``vnodes``: points per unit of
    weight (>= 1, default 160), "ring" only. ``seed``: of the XXH3 hashes,
    [0, 2**64). ``table_size``: Maglev table size, a prime (default 65537).
    ``distribution`` and ``key_hash``: "libmemcached" and "twemproxy" only,
    the distribution and key hash the peer is configured with (libmemcached:
    "consistent_ketama"; md5 for the weighted distributions, else
    one_at_a_time; twemproxy: "ketama", "fnv1a_64"). ``server_ids`` ("address" or
    "label") and ``hash_tag`` (two characters): "twemproxy" only. The
    migration modes "uhashring", "uhashring-ketama" and "hashring-js" place
    exactly as those libraries do; "hashring-js" takes ``distribution``
    ("ketama" or "hash_ring") and ``default_port``. The load balancers' modes:
    "envoy-ring-hash" and "grpc-ring-hash" take ``min_ring_size``,
    ``max_ring_size`` and ``hash_function`` ("xx_hash"; Envoy also
    "murmur_hash_2"), "grpc-ring-hash" ``endpoint_order`` ("given" or
    "by_key"), "envoy-maglev" ``table_size``, and "haproxy"
    ``hash_function`` ("sdbm", "djb2", "wt6", "crc32"), ``avalanche``,
    ``server_key`` ("id", "id_full_hash", "id32") and ``haproxy_ids`` (node
    id -> HAProxy server id). "jumpback" and "memento" take weights of 1;
    "memento" also takes its removal history, ``removed_buckets`` (oldest
    first, as to_json writes them) and ``buckets`` (node id -> bucket).
    "rendezvous" takes ``score``: "integer" (the default, identical on every
    platform) or "float" (placement format 1's, with the platform's ln).
    Leave a parameter out for its default: None is not a value and a bool is
    not a number (TypeError).

    Keys are str (hashed as UTF-8) or bytes-like. Lookups read one whole
    snapshot even while another thread calls add_node, remove_node or set_weight.
    Two rings are equal when their fingerprints are (they place every key
    identically); a Ring changes in place, so it is not hashable.

    Raises InvalidNodeError, InvalidConfigError (naming the keyword, the value
    and the names accepted), OutOfRangeError (an int the keyword cannot hold,
    such as seed=-1), InvalidUtf8Error or TypeError."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        nodes: Union[Iterable[_NodeLike], Mapping[str, float]],
        *,
        algorithm: _Algorithm = ...,
        vnodes: int = ...,
        seed: int = ...,
        table_size: int = ...,
        distribution: _Distribution = ...,
        key_hash: _KeyHash = ...,
        server_ids: Literal["address", "label"] = ...,
        hash_tag: str = ...,
        default_port: int = ...,
        min_ring_size: int = ...,
        max_ring_size: int = ...,
        hash_function: Literal["xx_hash", "murmur_hash_2", "sdbm", "djb2", "wt6", "crc32"] = ...,
        endpoint_order: Literal["given", "by_key"] = ...,
        avalanche: bool = ...,
        server_key: Literal["id", "id_full_hash", "id32"] = ...,
        haproxy_ids: Mapping[str, int] = ...,
        buckets: Mapping[str, int] = ...,
        removed_buckets: Iterable[int] = ...,
        score: Literal["integer", "float"] = ...,
    ) -> Ring: ...
    @staticmethod
    def from_json(config: str) -> Ring:
        """Builds a ring from a JSON ring config (docs/config.schema.json), the
        format every binding and the CLI share. Raises InvalidConfigError for
        malformed JSON, a duplicate key, a null, an unknown or mistyped field
        (naming its path), and the constructor's errors."""
    def to_json(self) -> str:
        """The ring's JSON config, which Ring.from_json reads back exactly."""
    @property
    def params(self) -> dict[str, Union[int, str, bool, list[int]]]:
        """The algorithm and its parameters as the ring resolved them: the
        keyword options (PARAMETERS) that rebuild it, defaults filled in."""
    @property
    def algorithm(self) -> str:
        """The placement algorithm's name ("ring", "ketama", ...)."""
    @property
    def vnodes(self) -> int | None:
        """Points per unit of weight ("ring" only; None otherwise)."""
    @property
    def table_size(self) -> int | None:
        """Maglev table size ("maglev" only; None otherwise)."""
    @property
    def distribution(self) -> str | None:
        """The peer's distribution ("libmemcached" and "twemproxy" only; None otherwise)."""
    @property
    def server_ids(self) -> str | None:
        """What node ids are, "address" or "label" ("twemproxy" only; None otherwise)."""
    @property
    def default_port(self) -> int | None:
        """npm hashring's default port ("hashring-js" only, when set; None otherwise)."""
    @property
    def hash_tag(self) -> str | None:
        """twemproxy's hash tag ("twemproxy" only, when set; None otherwise)."""
    @property
    def ring_sizes(self) -> tuple[int, int] | None:
        """The ring sizes (minimum, maximum) as resolved ("envoy-ring-hash", "grpc-ring-hash"; None otherwise)."""
    @property
    def hash_function(self) -> str | None:
        """The balancer's hash function ("envoy-ring-hash", "grpc-ring-hash", "haproxy"; None otherwise)."""
    @property
    def endpoint_order(self) -> str | None:
        """gRPC's endpoint order, "given" or "by_key" ("grpc-ring-hash" only; None otherwise)."""
    @property
    def avalanche(self) -> bool | None:
        """Whether request hashes pass through full_hash ("haproxy" only; None otherwise)."""
    @property
    def server_key(self) -> str | None:
        """What HAProxy node keys derive from ("haproxy" only; None otherwise)."""
    @property
    def haproxy_ids(self) -> dict[str, int] | None:
        """The HAProxy server ids given, node id -> id ("haproxy" only; None otherwise)."""
    @property
    def score(self) -> str | None:
        """How nodes are scored, "integer" or "float" ("rendezvous" only; None otherwise)."""
    @property
    def buckets(self) -> dict[str, int] | None:
        """Each node's bucket, node id -> bucket ("memento" only; None otherwise)."""
    @property
    def removed_buckets(self) -> list[int] | None:
        """The removed buckets in removal order, oldest first ("memento" only; None otherwise)."""
    @property
    def key_hash(self) -> str | None:
        """The named 32-bit key hash of a peer-compatible mode ("md5" for the
        ketama modes, "crc32a" for nginx, the configured one for
        "libmemcached"); None for the XXH3 algorithms and "slots"."""
    @property
    def seed(self) -> int:
        """Seed of the key and point hashes (0 for the unseeded algorithms)."""
    @property
    def point_count(self) -> int:
        """Points on the continuum (0 for jump, jumpback, memento, rendezvous, maglev, slots, modula, haproxy)."""
    @property
    def fingerprint(self) -> int:
        """A 64-bit digest of the canonical config (core/SPEC.md): equal
        fingerprints mean the same owner for every key, in every binding."""
    @property
    def fingerprint_hex(self) -> str:
        """The fingerprint as text, 16 lowercase hex digits, zero-padded
        ("53712479e1fdae70"): what the CLI prints, and every binding's
        fingerprint_hex (fingerprintHex in Node) for the same ring."""
    @property
    def nodes(self) -> list[Node]:
        """The nodes as Node objects, in order (drained ones included)."""
    def hash_key(self, key: _Key, /) -> int:
        """The key's hash under the ring's algorithm: XXH3-64 under the seed
        ("ring", "jump", "rendezvous", "maglev", "jumpback", "memento"), MD5's first 4 bytes little-endian (ketama modes), CRC-32
        ("nginx"), the Redis slot ("slots"), a compatibility mode's peer's hash
        otherwise."""
    def watch_hot_keys(self, sketch: HotKeys) -> None:
        """From now on, show ``sketch`` the key of every lookup by key on this
        ring (batches included; lookups by hash are not shown), across
        add_node / remove_node / set_weight. TypeError on a Follower's ring."""
    def count_lookups(self) -> None:
        """From now on, count the lookups on this ring per node (across
        add_node / remove_node / set_weight). TypeError on a Follower's ring."""
    def lookup_counts(self) -> dict[str, int]:
        """The lookups counted since count_lookups(), per node id."""
    def get(self, key: _Key, /) -> str:
        """The id of the node owning ``key``. Raises EmptyRingError (a
        LookupError) when no node can own keys, InvalidUtf8Error for a str with
        a lone surrogate, TypeError for other key types."""
    def get_by_hash(self, hash: int, /) -> str:
        """The id of the node owning key hash ``hash`` (from hash_key). Raises
        HashOutOfRangeError for a hash wider than the algorithm's, EmptyRingError."""
    def get_n(self, key: _Key, n: int, /) -> list[str]:
        """The key's preference list: up to ``n`` distinct ids, the first being
        get(key); nodes of distinct zones first (Dynamo's preference list,
        Cassandra's zone rule). Raises as get; OutOfRangeError (a ValueError)
        for a negative n, TypeError for a bool or non-int n."""
    def get_many(self, keys: Iterable[_Key], /) -> list[str]:
        """The owner of every key, in key order, placed without the GIL."""
    def with_node(self, node: _NodeLike) -> Ring:
        """A new ring with ``node`` added; only keys it now owns move. Raises
        InvalidNodeError (a duplicate id included) or InvalidConfigError."""
    def without_node(self, id: str) -> Ring:
        """A new ring without node ``id``; only its keys move. Raises UnknownNodeError."""
    def with_weight(self, id: str, weight: float) -> Ring:
        """A new ring with node ``id`` at ``weight``: raising it moves keys only to
        the node, lowering it only away. Raises UnknownNodeError, InvalidNodeError."""
    def add_node(self, node: _NodeLike) -> None:
        """Adds a node in place (see with_node); other threads see the old or the
        new ring, whole. LoadTrackers over this ring follow the change."""
    def remove_node(self, id: str) -> None:
        """Removes a node in place (see without_node); trackers stop routing to it."""
    def set_weight(self, id: str, weight: float) -> None:
        """Re-weights a node in place (see with_weight)."""
    def ownership(self) -> dict[str, float]:
        """Each node's exact share of the hash space, from arc lengths (expected
        shares for jump and rendezvous); drained nodes own 0."""
    def balance(self, keys: Iterable[_Key]) -> Balance:
        """Places a sample of keys (without the GIL) and measures the spread."""
    def __eq__(self, other: object, /) -> bool:
        """Equal fingerprints: the rings place every key identically."""
    def __len__(self) -> int:
        """The number of nodes, drained ones included."""
    def __contains__(self, id: object, /) -> bool:
        """Whether a node with this id is a member."""
    def __iter__(self) -> Iterator[str]:
        """The node ids, in order."""
    def __reduce__(self) -> tuple[object, tuple[str]]:
        """Pickles as the JSON config."""

@final
class Diff:
    """The difference between two rings (see shardring.diff)."""

    @property
    def moved_share(self) -> float:
        """Fraction of all keys (of the hash space) whose owner differs, in [0, 1]."""
    @property
    def flows(self) -> dict[tuple[str, str], float]:
        """The share of the hash space moving from one node id to another."""
    @property
    def arcs(self) -> list[tuple[int, int, str, str]]:
        """(start, end, from_id, to_id) per arc that changes owner, in ring order:
        keys whose hash h has start <= h <= end move from from_id to to_id."""

@final
class Spread:
    """How evenly loads spread against a reference (1.0 is perfect)."""

    @property
    def cv(self) -> float:
        """Coefficient of variation: population standard deviation over mean."""
    @property
    def max_over_mean(self) -> float:
        """Largest load over the reference."""
    @property
    def min_over_mean(self) -> float:
        """Smallest load over the reference."""

@final
class Balance:
    """Per-node key counts of a sample (see Ring.balance)."""

    @property
    def keys(self) -> int:
        """Keys in the sample."""
    @property
    def counts(self) -> dict[str, int]:
        """Keys per node id (drained nodes included)."""
    @property
    def by_node(self) -> Spread:
        """Spread of the counts over the nodes that can own keys, against their mean."""
    @property
    def by_weight(self) -> Spread:
        """Spread of each count over its fair count (keys x weight share)."""

@final
class LoadTracker:
    """Consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam):
    live requests per node of ``ring``, each sent to the first node in its key's
    preference order under capacity max(1, ceil((1 + epsilon) * (total + 1) *
    weight / total weight)). Follows ``ring`` as it changes in place.
    ``epsilon``: a float > 0 (Envoy's hash_balance_factor 125 is 0.25).
    Raises InvalidConfigError for a bad epsilon, TypeError for a bool."""

    def __new__(cls, ring: Ring, epsilon: float) -> LoadTracker: ...
    @staticmethod
    def haproxy(ring: Ring, hash_balance_factor: int) -> LoadTracker:
        """Bounds loads as HAProxy's hash-balance-factor does (an int above
        100) on a "haproxy" ring. Raises InvalidConfigError for a factor of
        100 or less or a ring of another algorithm."""
    def acquire(self, key: _Key) -> Lease:
        """Assigns a request for ``key`` to a node under capacity; release the
        Lease with lease.release() or by using it as a context manager."""
    def release(self, node: str) -> None:
        """Removes one unit of load from node ``node``. Raises UnknownNodeError
        (not in the current ring), NoLoadError (its load is already 0)."""
    def swap(self, ring: Ring) -> None:
        """Follows ``ring`` from now on: nodes in both keep their load, nodes that
        left drop theirs, new nodes start at 0."""
    @property
    def loads(self) -> dict[str, int]:
        """Current load per node id, in node order."""
    @property
    def total_load(self) -> int:
        """Sum of all loads."""
    @property
    def balance_factor(self) -> float:
        """The balance factor 1 + epsilon."""

@final
class Lease:
    """One request's assignment. Release exactly once, with release() or by
    leaving a ``with`` block (which gives ``node``)."""

    @property
    def node(self) -> str:
        """Id of the node the request went to."""
    @property
    def probes(self) -> int:
        """Distinct nodes tried, including the one taken (1 = the key's owner)."""
    @property
    def released(self) -> bool:
        """Whether the lease was released."""
    def release(self) -> None:
        """Gives the load back. Raises NoLoadError when already released."""
    def __enter__(self) -> str: ...
    def __exit__(self, *_exc: object) -> bool: ...

@final
class Follower:
    """A ring kept current by a background thread, from the member records
    under ``prefix`` in etcd (core/SPEC.md, Membership in etcd) or from a JSON
    ring config file. ``ring`` is a Ring the follower replaces atomically on
    every change; ``revision`` is its epoch. Use as a context manager, or
    call close()."""

    @staticmethod
    def etcd(
        endpoints: Union[str, Sequence[str]],
        prefix: str,
        *,
        timeout: float = ...,
        ca_file: Optional[Union[str, PathLike[str]]] = None,
        cert_file: Optional[Union[str, PathLike[str]]] = None,
        key_file: Optional[Union[str, PathLike[str]]] = None,
        user: Optional[str] = None,
        password: Optional[str] = None,
        password_file: Optional[Union[str, PathLike[str]]] = None,
        report_as: Optional[str] = None,
        report_interval: float = 10.0,
        hot_keys: bool = False,
    ) -> Follower:
        """Follows ``prefix`` in etcd at ``endpoints`` ("http://127.0.0.1:2379",
        comma-separated or a list); returns once the first ring is read.
        TLS when an endpoint is https:// or ``ca_file``/``cert_file`` is given
        (PEM; ``key_file`` owner-only); etcd auth with ``user`` and ``password``
        or ``password_file`` (owner-only), the token renewed when it expires.
        Raises RefusedError (code RING_REFUSED; ``refusal`` "tls",
        "authentication" or "permission") when no ring is read within
        ``timeout`` seconds (default 5) and etcd refused this client, naming
        the endpoint and the TLS or auth reason; TimeoutError after
        ``timeout`` seconds otherwise, with the last error;
        InvalidConfigError for a bad endpoint, prefix or user, SourceError
        (RING_FILE) for an unusable file.
        With ``report_as`` (a client id), reports itself every
        ``report_interval`` seconds as ``<prefix>/clients/<id>`` for
        ``shardring fleet status``."""
    @staticmethod
    def file(path: Union[str, PathLike[str]], *, timeout: float = ...) -> Follower:
        """Follows a JSON ring config file, re-read when it is replaced or written.
        Raises SourceError (code RING_FILE) at once, naming the path and why,
        when the file cannot be read or its config is refused."""
    @property
    def ring(self) -> Ring:
        """The current ring (its in-place methods raise TypeError)."""
    @property
    def revision(self) -> int:
        """The etcd revision the ring was read at (file: successful reads);
        lower after etcd is restored from an older snapshot."""
    @property
    def epoch(self) -> int:
        """The epoch number: it only grows, across an etcd restore too; equal
        to ``revision`` while the follower has read one store from its start."""
    @property
    def fingerprint(self) -> int:
        """The current ring's fingerprint."""
    @property
    def fingerprint_hex(self) -> str:
        """The current ring's fingerprint as text (16 lowercase hex digits,
        zero-padded), as ``shardring watch`` prints it."""
    def hot_keys(self) -> list[tuple[bytes, int, float]] | None:
        """The hot keys of this follower's lookups (key, requests, rate);
        None unless started with hot_keys=True."""
    def hot_set(self) -> HotSet:
        """The fleet's hot set as last read from ``<prefix>/hot``."""
    def plan(self, key: _Key) -> tuple[str, bool, str, list[str], bytes]:
        """Where to read and write ``key`` now, by the fleet's hot set."""
    def report_near_cache(self, cache: NearCache) -> None:
        """The metrics report ``cache``: its hits, misses, entries, capacity
        and hit ratio (a later call replaces it)."""
    def lookup_counts(self) -> dict[str, int]:
        """Lookups made on this follower's rings so far, per node id (get and
        its variants, each key of a batch, get_n's first node, read_nodes and
        write_nodes)."""
    def metrics(self) -> str:
        """The follower's metrics as OpenMetrics text (ends with ``# EOF``)."""
    def status(self) -> dict[str, Any]:
        """{"epoch", "revision", "fingerprint", "fingerprint_hex", "connected", "stale_for" (s),
        "last_error", "epochs"}."""
    def wait_for_revision(self, revision: int, timeout: float = ...) -> int:
        """Blocks (without the GIL) until the follower holds ``revision`` or later;
        returns the revision held. Raises TimeoutError; OutOfRangeError for a
        revision outside 0 to 2**63 - 1, TypeError for a non-int (a bool too)."""
    def on_change(self, callback: Callable[[dict[str, Any]], object]) -> None:
        """Calls ``callback(event)`` with each event dict, on the follower's thread."""
    def events(self, timeout: float | None = None) -> FollowerEvents:
        """The events from now on; each next() waits up to ``timeout`` seconds."""
    @property
    def transition(self) -> Transition:
        """The current transition (with every member active, just the ring)."""
    def read_nodes(self, key: _Key, /) -> list[str]:
        """Where to read ``key`` now: [owner], or [owner, draining fallback]."""
    def write_nodes(self, key: _Key, /) -> list[str]:
        """Where to write ``key`` now: [owner], or [owner, warming new owner]."""
    def close(self) -> None:
        """Stops the follower's thread; a Ring taken before keeps its last
        snapshot. Every later call but close() raises FollowerClosedError."""
    def __enter__(self) -> Follower: ...
    def __exit__(self, *_exc: object) -> bool: ...

@final
class FollowerEvents:
    """Iterator over a follower's event dicts: {"kind": "epoch" | "rejected" |
    "disconnected" | "reconnected", ...}; an epoch's carries "revision",
    "fingerprint" (int), "fingerprint_hex" (its text, as Ring.fingerprint_hex),
    "changed", "moved_share" and "flows"."""

    def __iter__(self) -> FollowerEvents: ...
    def __next__(self) -> dict[str, Any]: ...

REDIS_GUARD: Final[str]
"""The Lua source of the Redis handoff guard: ``EVALSHA REDIS_GUARD_SHA1 2
key transition.handoff_mark command *arguments_after_the_key`` on a moving
key's old owner runs the command there unless the key is missing and the
mover set the mark; then it answers the error MOVED_REPLY, or TRYAGAIN_REPLY
while the mover holds the key in doubt."""
REDIS_GUARD_SHA1: Final[str]
"""SHA-1 of REDIS_GUARD, 40 lowercase hex digits."""
MOVED_REPLY: Final[str]
"""The guard's error message when the key is not there: "SHARDRING_MOVED"."""
TRYAGAIN_REPLY: Final[str]
"""The guard's error message when the key is not there and the mover holds it
in doubt (a MIGRATE of it got no answer): "SHARDRING_TRYAGAIN". Nothing ran;
send the guarded command again after a short wait."""

@final
class Route:
    """A key's route during a transition (Transition.route)."""

    @property
    def old(self) -> str:
        """Its owner under the old ring (active and draining members): where it is."""
    @property
    def new(self) -> str:
        """Its owner under the new ring (active and warming members): where it goes."""
    @property
    def moving(self) -> bool:
        """Whether ``old`` and ``new`` differ."""

@final
class Transition:
    """A ring whose members are "active", "warming" (take the writes of the
    keys they will own, no reads) or "draining" (no writes; reads as a
    fallback); core/SPEC.md, Transitions."""

    @staticmethod
    def from_json(config: str) -> Transition:
        """From a JSON ring config whose nodes may carry "state"."""
    @staticmethod
    def between(old: Ring, new: Ring) -> Transition:
        """Members only in ``old`` drain, members only in ``new`` warm up."""
    def read_nodes(self, key: _Key, /) -> list[str]:
        """Where to read ``key``: the active owner, then the old owner when it differs."""
    def write_nodes(self, key: _Key, /) -> list[str]:
        """Where to write ``key``: the active owner, then the new owner when it differs."""
    @property
    def handoff_mark(self) -> str:
        """The guard's second key: "shardring:handoff:" and the fingerprint in 16 hex digits."""
    def route(self, key: _Key, /) -> Route:
        """Where ``key`` is (its old ring owner) and where it goes (its new
        ring owner); core/SPEC.md, Handoff."""
    @property
    def read_ring(self) -> Ring:
        """The ring of the active members."""
    @property
    def old_ring(self) -> Ring:
        """The ring of the active and draining members."""
    @property
    def new_ring(self) -> Ring:
        """The ring of the active and warming members."""
    def state(self, id: str) -> str | None:
        """"active", "warming" or "draining"; None for an unknown id."""
    @property
    def is_steady(self) -> bool:
        """Whether every member is active."""
    @property
    def fingerprint(self) -> int:
        """The fingerprint of the config with its states."""
    @property
    def fingerprint_hex(self) -> str:
        """The fingerprint as text (16 lowercase hex digits, zero-padded); a
        steady transition's is its ring's."""
    def moves(self) -> Diff:
        """The old ring's difference to the new one: what a rebalancer copies."""

@final
class HotKeys:
    """Which keys take the most requests (HeavyKeeper; ``width`` x 16 bytes).
    OutOfRangeError naming a setting out of its range."""
    def __new__(cls, top: int = 100, width: int = 4096, sample: int = 4, half_life: float = 60.0) -> HotKeys: ...
    def observe(self, key: _Key) -> None:
        """Counts one request of ``key``."""
    def top(self) -> list[tuple[bytes, int, float]]:
        """The hot keys, most requested first: (key, requests, requests per second)."""
    def halve(self) -> None:
        """Halves every count now (the sketch does it every half-life)."""
    @property
    def sketch_bytes(self) -> int: ...

@final
class HotSet:
    """The hot keys a fleet agreed to spread (``P/hot``); HotSet() is empty."""
    def __new__(cls) -> HotSet: ...
    @staticmethod
    def from_json(text: str) -> HotSet:
        """InvalidConfigError naming the field."""
    def to_json(self) -> str: ...
    @property
    def epoch(self) -> int: ...
    def keys(self) -> list[tuple[bytes, int, str, int, float]]:
        """(key, replicas, phase, generation, rate), sorted by key."""
    def plan(self, ring: Ring, key: _Key) -> tuple[str, bool, str, list[str], bytes]:
        """(read, read_copy, owner, copies, copy_key): where to read ``key``
        (a copy: read ``copy_key`` there, on a miss the owner, then add the
        copy), and the ids to write the copy to after the owner."""
    def advance(self, ring: Ring, observed: list[tuple[bytes, float]], loads: dict[str, float], bound: float = 1.25) -> HotSet:
        """The next publication for ``ring`` from the fleet's hot keys
        [(key, rate)] and requests per node {id: rate} (per second)."""
    def __len__(self) -> int: ...

@final
class NearCache:
    """A small TTL cache of hot values in this process."""
    def __new__(cls, capacity: int, ttl: float) -> NearCache: ...
    @staticmethod
    def default_capacity(nodes: int) -> int:
        """ceil(n log2 n), at least 16 (Fan et al., SoCC 2011)."""
    def get(self, key: _Key) -> bytes | None: ...
    def put(self, key: _Key, value: bytes) -> None: ...
    def remove(self, key: _Key) -> None: ...
    @property
    def hits_and_misses(self) -> tuple[int, int]: ...
    def __len__(self) -> int: ...
