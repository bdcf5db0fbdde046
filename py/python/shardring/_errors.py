"""Exceptions raised by shardring.

Each subclasses :class:`RingError` and the builtin a Python caller would
already catch, so ``except ValueError`` keeps working.
"""


class RingError(Exception):
    """Base class of every shardring error."""


class InvalidNodeError(RingError, ValueError):
    """A node id is empty or repeated, a weight is NaN, infinite or negative, or a zone is empty."""


class UnknownNodeError(RingError, KeyError):
    """A node named for removal or re-weighting is not in the ring."""

    def __str__(self) -> str:
        # KeyError.__str__ would quote the message; keep it readable.
        return str(self.args[0]) if self.args else ""


class InvalidConfigError(RingError, ValueError):
    """Bad ring parameters (vnodes 0, too many points) or an unreadable JSON config."""


class EmptyRingError(RingError, LookupError):
    """A lookup on a ring with no node of weight > 0."""
