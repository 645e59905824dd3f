"""What an engine declares of its memory, and what a snapshot says of it (the data half of
the engine contract, contract.py, which re-exports these; imports nothing, so snapshots and
the registry read it without loading torch)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class Component:
    """One kind of memory an engine keeps, as views name and draw it."""
    name: str               # how a person names it: ``evict 2 window``, a JSON key: "device", "host"
    title: str              # the heading of its pool's grid: "device KV pool"
    word: str               # a node's part of it in a tree line: "slots", "host", "win"
    unit: str = "token"     # what one slot of its pool holds ("token"; a Mamba pool: "state")
    touched: str = "slots"  # the key of a step's data that lists the slots it touches in this pool
    pooled: bool = True     # the engine keeps a pool of slots for it (a grid in the pool pane)


# The backbone of every engine with one pool: the device KV slots the facade's pool holds.
DEVICE = Component("device", "device KV pool", "slots")


class NodePart(NamedTuple):
    """What a node holds of one component."""
    component: Component
    slots: tuple[int, ...] | None   # its slots there; None: a tombstone (the data left, the node stays)
    locks: int                      # requests holding this component's data here

    @property
    def tombstone(self) -> bool:
        return self.slots is None


class Held(NamedTuple):
    """What the whole tree holds of one component, in its units."""
    component: Component
    evictable: int          # on nodes no lock holds: what its eviction could free
    protected: int          # on locked nodes
