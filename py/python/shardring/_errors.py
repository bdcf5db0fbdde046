"""Exceptions raised by shardring.

Each subclasses :class:`RingError` and the builtin a Python caller would
already catch, so ``except ValueError`` keeps working. Every instance raised
by shardring has ``code``, the C result name of the error (``"RING_EMPTY_RING"``),
the same string as a Node error's ``code`` and ``ring_result_name`` in C.
"""


class RingError(Exception):
    """Base class of every shardring error. ``code``: the C result name."""

    code: str = "RING_ERROR"


class InvalidUtf8Error(RingError, UnicodeError):
    """A str id, zone or key holds a lone surrogate, which has no UTF-8 bytes
    (code RING_INVALID_UTF8, as in C and Node). Pass bytes for arbitrary keys."""

    code = "RING_INVALID_UTF8"


class InvalidNodeError(RingError, ValueError):
    """A node id is empty or repeated, a weight is NaN, infinite, negative or not one the
    algorithm can express, a ketama server address is malformed, or a zone is empty."""


class UnknownNodeError(RingError, KeyError):
    """A node named for removal or re-weighting is not in the ring."""

    code = "RING_UNKNOWN_NODE"

    def __str__(self) -> str:
        # KeyError.__str__ would quote the message; keep it readable.
        return str(self.args[0]) if self.args else ""


class InvalidConfigError(RingError, ValueError):
    """Bad ring parameters (vnodes 0, too many points, an unknown algorithm, a parameter the
    algorithm does not take, a bad Maglev table size) or an unreadable JSON config."""


class OutOfRangeError(RingError, ValueError):
    """A number outside what its parameter holds: a negative or too large int
    (seed, vnodes, table_size, n, a bucket, ...), an int too large for a float
    (a weight, an epsilon), a timeout below 0. Code ERR_OUT_OF_RANGE, as the
    RangeError Node throws for the same value (C's integer types cannot hold
    one, so there is no C result for it)."""

    code = "ERR_OUT_OF_RANGE"


class HashOutOfRangeError(RingError, ValueError):
    """A hash given to get_by_hash is wider than the algorithm's key hash
    (32 bits for ketama and nginx, 14 for slots)."""

    code = "RING_HASH_OUT_OF_RANGE"


class EmptyRingError(RingError, LookupError):
    """A lookup on a ring with no node of weight > 0."""

    code = "RING_EMPTY_RING"


class FollowerTimeoutError(RingError, TimeoutError):
    """A follower read no ring from its source, or did not reach a revision,
    within its timeout (code RING_TIMEOUT, as in C and Node)."""

    code = "RING_TIMEOUT"


class SourceError(RingError, ConnectionError):
    """A follower's source failed: etcd did not answer or refused (code
    RING_ETCD), or its config file could not be read (code RING_FILE), as
    Node's follower errors say."""


class RefusedError(SourceError):
    """etcd refused a follower, and waiting will not change that (code
    RING_REFUSED, as in C and Node): ``refusal`` says what it refused,
    ``"tls"`` (etcd's certificate not from the CA given, a client
    certificate refused, missing or expired, TLS against a plain server or
    the reverse), ``"authentication"`` (a wrong user or password) or
    ``"permission"`` (a role without the permission asked for). The
    message names the endpoint and the reason, never a password. A
    ``SourceError``, so a ``ConnectionError``."""

    code = "RING_REFUSED"
    refusal: str = ""


class FollowerClosedError(RingError, ValueError):
    """A call on a follower after ``close()`` (code RING_STOPPED, as Node's)."""

    code = "RING_STOPPED"


class NoLoadError(RingError, ValueError):
    """A load release for a node whose load is already 0 (or a lease released twice)."""

    code = "RING_NO_LOAD"
