"""shardring: consistent hashing with virtual nodes and weights.

Places every key exactly as the Rust, C and Node bindings do (placement
format 1, see core/SPEC.md): keys and points are hashed with XXH3-64 under
the ring's seed; a ``str`` key is hashed as its UTF-8 bytes.

>>> from shardring import Ring
>>> ring = Ring(["cache-1", "cache-2", "cache-3"])
>>> ring.get("user:42") == ring.get(b"user:42")
True
"""

from ._errors import EmptyRingError, InvalidConfigError, InvalidNodeError, RingError, UnknownNodeError
from ._shardring import PLACEMENT_FORMAT, Ring, hash_key

__all__ = [
    "PLACEMENT_FORMAT",
    "EmptyRingError",
    "InvalidConfigError",
    "InvalidNodeError",
    "Ring",
    "RingError",
    "UnknownNodeError",
    "hash_key",
]
