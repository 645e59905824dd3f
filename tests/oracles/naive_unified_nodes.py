"""The building blocks of the unified tree's reference (see naive_unified_tree.py): SGLang's
float clock and id counter, ``ComponentData``, the node, an auxiliary component's LRU list,
and the key rules (a child filed under its first token or page; edges compared a token at a
time, rounded down to whole pages)."""
from __future__ import annotations

FULL, SWA, MAMBA = 0, 1, 2
NUM_TYPES = 3
PRIORITY_KEYS = {
    "lru": lambda n: n.last_access_time,
    "lfu": lambda n: (n.hit_count, n.last_access_time),
    "fifo": lambda n: n.creation_time,
    "mru": lambda n: -n.last_access_time,
    "filo": lambda n: -n.creation_time,
    "priority": lambda n: (n.priority, n.last_access_time),
    "slru": lambda n: (int(n.hit_count >= 2), n.last_access_time),
}


class Clock:
    def __init__(self):
        self.t = 1.0
        self.ids = 0
        self.uuid = 100_000_000_000_000  # SGLang's SWA range starts here

    def read(self) -> float:
        t = self.t
        self.t += 1.0
        return t


class CD:
    def __init__(self):
        self.value = None
        self.lock_ref = 0
        self.metadata = {}


class RefNode:
    def __init__(self, clock: Clock, priority: int = 0):
        self.children = {}
        self.parent = None
        self.key = None
        self.component_data = [CD() for _ in range(NUM_TYPES)]
        self.last_access_time = clock.read()
        self.creation_time = clock.read()
        self.hit_count = 0
        self.priority = priority
        self.lru_prev = [None] * NUM_TYPES
        self.lru_next = [None] * NUM_TYPES
        self.id = clock.ids
        clock.ids += 1

    @property
    def evicted(self):
        return self.parent is not None and self.component_data[FULL].value is None

    def __lt__(self, other):
        return self.last_access_time < other.last_access_time


class LRU:
    def __init__(self, ct, clock):
        self.ct = ct
        self.head = RefNode(clock)
        self.tail = RefNode(clock)
        self.head.lru_next[ct] = self.tail
        self.tail.lru_prev[ct] = self.head
        self.cache = {}

    def _after(self, prev, node):
        ct = self.ct
        node.lru_prev[ct] = prev
        node.lru_next[ct] = prev.lru_next[ct]
        prev.lru_next[ct].lru_prev[ct] = node
        prev.lru_next[ct] = node

    def _unlink(self, node):
        ct = self.ct
        node.lru_prev[ct].lru_next[ct] = node.lru_next[ct]
        node.lru_next[ct].lru_prev[ct] = node.lru_prev[ct]
        node.lru_prev[ct] = node.lru_next[ct] = None

    def insert_mru(self, node):
        assert node.id not in self.cache
        self.cache[node.id] = node
        self._after(self.head, node)

    def insert_after(self, prev, node):
        assert prev.id in self.cache and node.id not in self.cache
        self.cache[node.id] = node
        self._after(prev, node)

    def remove_node(self, node):
        del self.cache[node.id]
        self._unlink(node)

    def reset_node_mru(self, node):
        assert node.id in self.cache
        self._unlink(node)
        self._after(self.head, node)

    def reset_window(self, node, root, window, include):
        prev = self.head
        acc = 0
        while node != root and acc < window:
            if include(node):
                assert node.id in self.cache
                self._unlink(node)
                self._after(prev, node)
                prev = node
            acc += len(node.key)
            node = node.parent

    def in_list(self, node):
        return node is not None and node.id in self.cache

    def prev_unlocked(self, node):
        x = node.lru_prev[self.ct]
        while x.component_data[self.ct].lock_ref > 0:
            x = x.lru_prev[self.ct]
        return None if x == self.head else x

    def lru_unlocked(self):
        return self.prev_unlocked(self.tail)

    def mru_to_lru(self):
        out, x = [], self.head.lru_next[self.ct]
        while x is not self.tail:
            out.append(x)
            x = x.lru_next[self.ct]
        return out


def child_key(key, page, start=0):
    return key[start] if page == 1 else tuple(key[start:start + page])


def match_len(edge, key, start, page):
    n = 0
    while n < len(edge) and start + n < len(key) and edge[n] == key[start + n]:
        n += 1
    return n if page == 1 else n // page * page


