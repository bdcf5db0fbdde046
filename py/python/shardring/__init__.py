"""shardring: consistent hashing with virtual nodes and weights.

Places every key exactly as the Rust, C and Node bindings do (placement
format 1, see core/SPEC.md): keys and points are hashed with XXH3-64 under
the ring's seed; a ``str`` key is hashed as its UTF-8 bytes, so ``"abc"`` and
``b"abc"`` land on the same node.

>>> from shardring import Ring
>>> ring = Ring(["cache-1", "cache-2", "cache-3"])
>>> ring.get("user:42") == ring.get(b"user:42")
True
"""

from ._errors import (
    EmptyRingError,
    FollowerClosedError,
    FollowerTimeoutError,
    HashOutOfRangeError,
    InvalidConfigError,
    InvalidNodeError,
    InvalidUtf8Error,
    NoLoadError,
    OutOfRangeError,
    RefusedError,
    RingError,
    SourceError,
    UnknownNodeError,
)
from ._node import Node
from ._shardring import (
    ALGORITHMS,
    PARAMETERS,
    __version__,
    PLACEMENT_FORMAT,
    MOVED_REPLY,
    REDIS_GUARD,
    REDIS_GUARD_SHA1,
    TRYAGAIN_REPLY,
    Balance,
    Diff,
    Follower,
    FollowerEvents,
    HotKeys,
    HotSet,
    Lease,
    LoadTracker,
    NearCache,
    Ring,
    Route,
    Spread,
    Transition,
    diff,
    hash_key,
)

__all__ = [
    "__version__",
    "ALGORITHMS",
    "PARAMETERS",
    "PLACEMENT_FORMAT",
    "MOVED_REPLY",
    "REDIS_GUARD",
    "REDIS_GUARD_SHA1",
    "TRYAGAIN_REPLY",
    "Balance",
    "Diff",
    "EmptyRingError",
    "Follower",
    "FollowerClosedError",
    "FollowerEvents",
    "FollowerTimeoutError",
    "HashOutOfRangeError",
    "HotKeys",
    "HotSet",
    "InvalidConfigError",
    "InvalidNodeError",
    "InvalidUtf8Error",
    "Lease",
    "LoadTracker",
    "NearCache",
    "NoLoadError",
    "Node",
    "OutOfRangeError",
    "RefusedError",
    "Ring",
    "RingError",
    "Route",
    "SourceError",
    "Spread",
    "Transition",
    "UnknownNodeError",
    "diff",
    "hash_key",
]
