"""The node description accepted and returned by :class:`shardring.Ring`."""

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Node:
    """A ring member.

    id: non-empty str, compared as UTF-8 bytes (no Unicode normalisation).
    weight: relative capacity, finite and >= 0; a node owns
        round(vnodes * weight) points (at least 1 when weight > 0), so weight 2
        holds about twice the keys of weight 1. 0 means drained: still a
        member, owning no keys.
    zone: optional failure-domain label (rack, availability zone); preference
        lists take nodes of distinct zones first.
    """

    id: str
    weight: float = 1.0
    zone: Optional[str] = None
