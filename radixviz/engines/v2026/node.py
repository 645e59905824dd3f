"""A node of today's radix tree: the 2024 node plus locks, hit counts, priority, birth time,
its namespace and its page hashes."""
from __future__ import annotations

from collections.abc import Hashable

import torch

from radixviz.cache.text import tokens_text


# how many nodes were made: SGLang's class counter, kept in a list and not on the class
_made = [0]


class _CountsNodes(type):
    """Gives ``TreeNode.counter`` (read and set as SGLang's class attribute) without writing the
    class on each node made, as SGLang's ``TreeNode.counter += 1`` does: writing to a class makes
    Python drop the specialized attribute reads of its instances, and a tree reads node fields
    all the time (7 % more instructions in the engine's calls; docs/benchmarks.md)."""

    @property
    def counter(cls) -> int:
        return _made[0]

    @counter.setter
    def counter(cls, value: int) -> None:
        _made[0] = value


class TreeNode(metaclass=_CountsNodes):
    """One edge of the 2026 tree (SGLang's ``TreeNode``, GPU tier only).

    ``key`` holds the edge's tokens (a whole number of pages), ``value`` their KV slots.
    ``lock_ref`` counts the requests using the node (the 2024 ``ref_counter``, renamed);
    ``hit_count`` counts the inserts that passed through it; ``priority`` is the highest
    priority of any insert that did; ``creation_time`` and ``last_access_time`` are ticks of
    the cache's logical clock. ``extra_key`` is the namespace its key belongs to (SGLang keeps
    it on the node's ``RadixKey``; None outside any namespace), ``hash_value`` one hex SHA-256
    a page, or None until something needs them (hashes.py).
    """

    __slots__ = ("id", "key", "value", "children", "parent", "lock_ref", "hit_count",
                 "priority", "creation_time", "last_access_time", "extra_key", "hash_value",
                 "_snap")

    def __init__(self, id: int | None = None, last_access_time: int = 0, creation_time: int = 0,
                 priority: int = 0) -> None:
        # ids for nodes made without one, as SGLang's class counter gives them (it counts every
        # node made, so ``TreeNode(id=42)`` then ``TreeNode()`` gives id 1, as SGLang's tests expect)
        self.id = _made[0] if id is None else id
        _made[0] += 1
        # None until the engine gives the node its edge, as SGLang's (the root gets an empty one)
        self.key: tuple = None  # type: ignore[assignment]
        # None only until the engine gives the new node its slots (the root: an empty tensor)
        self.value: torch.Tensor = None  # type: ignore[assignment]
        self.children: dict = {}
        # None at the root only: every walk up the tree stops at the root
        self.parent: TreeNode = None  # type: ignore[assignment]
        self.lock_ref = 0
        self.hit_count = 0
        self.priority = priority
        self.last_access_time = last_access_time
        self.creation_time = creation_time
        self.extra_key: Hashable | None = None
        self.hash_value: list | None = None
        self._snap: object | None = None  # cached snapshot for views, dropped when this subtree changes

    def is_leaf(self) -> bool:
        return not self.children

    def get_last_hash_value(self) -> str | None:
        """The hash of this node's last page (None before its hashes are computed)."""
        if not self.hash_value:
            return None
        return self.hash_value[-1]

    def __repr__(self) -> str:
        text = tokens_text((self.key or ())[:20])
        space = "" if self.extra_key is None else f" ns={self.extra_key!r}"
        return (f"TreeNode(#{self.id}{space} {text!r} lock={self.lock_ref} hits={self.hit_count} "
                f"prio={self.priority} t={self.last_access_time} born={self.creation_time})")
