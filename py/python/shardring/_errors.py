"""Exceptions raised by shardring.

Each subclasses :class:`RingError` and the builtin a Python caller would
already catch, so ``except ValueError`` keeps working.
"""


class RingError(Exception):
    """Base class of every shardring error."""


class InvalidNodeError(RingError, ValueError):
    """A node id is empty or repeated, a weight is NaN, infinite, negative or not one the
    algorithm can express, a ketama server address is malformed, or a zone is empty."""


class UnknownNodeError(RingError, KeyError):
    """A node named for removal or re-weighting is not in the ring."""

    def __str__(self) -> str:
        # KeyError.__str__ would quote the message; keep it readable.
        return str(self.args[0]) if self.args else ""


class InvalidConfigError(RingError, ValueError):
    """Bad ring parameters (vnodes 0, too many points, an unknown algorithm, a parameter the
    algorithm does not take, a bad Maglev table size) or an unreadable JSON config."""


class HashOutOfRangeError(RingError, ValueError):
    """A hash given to get_by_hash is wider than the algorithm's key hash
    (32 bits for ketama and nginx, 14 for slots)."""


class EmptyRingError(RingError, LookupError):
    """A lookup on a ring with no node of weight > 0."""


class NoLoadError(RingError, ValueError):
    """A load release for a node whose load is already 0 (or a lease released twice)."""
