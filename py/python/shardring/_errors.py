"""Exceptions raised by shardring.

Each subclasses :class:`RingError` and the builtin a Python caller would
already catch, so ``except ValueError`` keeps working.
"""


class RingError(Exception):
    """Base class of every shardring error."""


class InvalidNodeError(RingError, ValueError):
    """A node id is empty or repeated, or a weight is NaN, infinite or negative."""


class InvalidConfigError(RingError, ValueError):
    """Bad ring parameters (vnodes 0, too many points) or an unreadable JSON config."""


class EmptyRingError(RingError, LookupError):
    """A lookup on a ring with no node of weight > 0."""
