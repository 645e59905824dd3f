"""A plain re-reading of SGLang's hierarchical cache of March 2026, kept as the reference.

Written from upstream ``mem_cache/hiradix_cache.py``, ``managers/cache_controller.py`` and
``mem_cache/memory_pool_host.py`` (commit 9fbe6800a) in their shape, on top of the 2026
reference (naive_modern.py) as SGLang's ``HiRadixCache`` sits on its ``RadixCache``. It
shares no code with ``radixviz.cache``: tests run the two side by side.

What it models and what it leaves out:

- slots only, no KV: a copy is the slot bookkeeping, and every copy has finished by the
  time anybody checks (the CPU's case); ``check_hicache_events`` then acknowledges them all;
- the device allocator hands out its lowest free slots (radixviz's pool); the host pool is
  SGLang's queue of free slots (``alloc`` takes the front, ``free`` appends);
- one logical clock read per match and per insert, two per node built (as the engine);
- radixviz's five deliberate differences, so the two can agree on every step: ``reset``
  forgets the copies in flight, ``load_back`` protects the host copy it loads while it makes
  room, a write-back that finds no host room keeps its node on the device, and a host-only
  node with a child that has a host copy is no host-eviction candidate (9fbe6800a asks
  whether the child is evicted; ``head_host_leaf_rule=True`` brings that back), and
  ``init_load_back`` loads nothing for a node deleted since it was matched.

``head_load_back=True`` brings back 9fbe6800a's ``load_back`` and ``init_load_back``: the
copy being loaded is not protected while ``load_back`` makes room, and a node deleted since
its match is loaded all the same. With either switch on, SGLang's ``assert v == x`` in
``evict_host`` stays an assert here (the engine reports it instead: cache_head_bugs.py).
"""
from __future__ import annotations

import heapq

import torch

from .naive_modern import NaiveModernRadixCache, RefNode, first_of, policy_value


class HiRefNode(RefNode):
    def __init__(self, clock, number, priority=0):
        super().__init__(clock, number, priority)
        self.host_value = None
        self.host_ref_counter = 0

    @property
    def evicted(self):
        return self.value is None

    @property
    def backuped(self):
        return self.host_value is not None

    def protect_host(self):
        self.host_ref_counter += 1

    def release_host(self):
        if self.host_ref_counter > 0:
            self.host_ref_counter -= 1
        else:
            raise RuntimeError("Host reference counter is already zero.")


class LowestFirstAllocator:
    """The device side: a slot is free or taken; ``alloc`` takes the lowest free ones."""

    def __init__(self, size):
        self.size = size
        self.free_set = set(range(size))

    def alloc(self, need):
        if need > len(self.free_set):
            return None
        chosen = sorted(self.free_set)[:need]
        self.free_set.difference_update(chosen)
        return torch.tensor(chosen, dtype=torch.int64)

    def free(self, indices):
        for slot in indices.tolist():
            assert slot not in self.free_set, f"device slot {slot} freed twice"
            self.free_set.add(slot)

    def available_size(self):
        return len(self.free_set)


class HostQueuePool:
    """SGLang's ``HostKVCache`` allocator: a queue of free slots."""

    def __init__(self, size, page_size):
        self.size, self.page_size = size, page_size
        self.clear()

    def clear(self):
        self.free_slots = torch.arange(self.size, dtype=torch.int64)

    def available_size(self):
        return len(self.free_slots)

    def alloc(self, need_size):
        assert need_size % self.page_size == 0
        if need_size > self.available_size():
            return None
        select_index = self.free_slots[:need_size]
        self.free_slots = self.free_slots[need_size:]
        return select_index

    def free(self, indices):
        self.free_slots = torch.cat([self.free_slots, indices])
        return len(indices)


class RefController:
    """``HiCacheController`` without streams: every copy is finished when it is checked."""

    def __init__(self, device, host, write_policy):
        self.mem_pool_device_allocator, self.mem_pool_host = device, host
        self.write_policy = write_policy
        self.load_queue, self.ack_write_queue, self.ack_load_queue = [], [], []

    def reset(self):
        self.load_queue.clear()
        self.ack_write_queue.clear()
        self.ack_load_queue.clear()

    def write(self, device_indices, node_id=-1):
        host_indices = self.mem_pool_host.alloc(len(device_indices))
        if host_indices is None:
            return None
        self.ack_write_queue.append([node_id])
        return host_indices

    def load(self, host_indices, node_id=-1):
        device_indices = self.mem_pool_device_allocator.alloc(len(host_indices))
        if device_indices is None:
            return None
        self.load_queue.append(node_id)
        return device_indices

    def start_loading(self):
        if self.load_queue:
            self.ack_load_queue.append(list(self.load_queue))
            self.load_queue.clear()

    def evict_device(self, device_indices):
        self.mem_pool_device_allocator.free(device_indices)
        return len(device_indices)

    def evict_host(self, host_indices):
        self.mem_pool_host.free(host_indices)
        return len(host_indices)


class NaiveHiRadixCache(NaiveModernRadixCache):
    def __init__(self, device_size, host_size, page_size=1, eviction_policy="lru",
                 write_policy="write_through", check_ties=False, head_host_leaf_rule=False,
                 head_load_back=False):
        # head_host_leaf_rule: decide host leaves as 9fbe6800a does (by child.evicted), to show
        # what radixviz's rule prevents
        self.device = LowestFirstAllocator(device_size)
        self.host = HostQueuePool(host_size, page_size)
        self.cache_controller = RefController(self.device, self.host, write_policy)
        self.ongoing_write_through = {}
        self.ongoing_load_back = {}
        self.write_through_threshold = 1 if write_policy == "write_through" else 2
        self.load_back_threshold = 10
        self.evictable_host_leaves = set()
        self.head_host_leaf_rule = head_host_leaf_rule
        self.head_load_back = head_load_back
        super().__init__(page_size, eviction_policy, check_ties)

    def _node(self, priority=0):
        self.numbers += 1
        return HiRefNode(self.clock, self.numbers, priority)

    def reset(self):
        if hasattr(self, "cache_controller"):
            self.cache_controller.reset()
            self.host.clear()
            self.evictable_host_leaves.clear()
            self.ongoing_write_through.clear()
            self.ongoing_load_back.clear()
        super().reset()
        self.root_node.host_value = []

    # ------------------------------------------------------------ write / acks

    def write_backup(self, node, write_back=False):
        host_indices = self.cache_controller.write(device_indices=node.value, node_id=node.number)
        if host_indices is None:
            self.evict_host(len(node.value))
            host_indices = self.cache_controller.write(device_indices=node.value, node_id=node.number)
        if host_indices is not None:
            node.host_value = host_indices
            assert len(node.host_value) > 0
            self.ongoing_write_through[node.number] = node
            if not write_back:
                self.inc_lock_ref(node)
        else:
            return 0
        return len(host_indices)

    def _inc_hit_count(self, node, chunked=False):
        if self.cache_controller.write_policy == "write_back" or chunked:
            return
        node.hit_count += 1
        if not node.backuped:
            if node.hit_count >= self.write_through_threshold:
                self.write_backup(node)

    def writing_check(self, write_back=False):
        if write_back:
            while len(self.ongoing_write_through) > 0:
                for ack_list in self.cache_controller.ack_write_queue:
                    for ack_id in ack_list:
                        self.ongoing_write_through.pop(ack_id)
                self.cache_controller.ack_write_queue.clear()
                assert len(self.ongoing_write_through) == 0
            return
        if len(self.ongoing_write_through) == 0:
            return
        finish_count = len(self.cache_controller.ack_write_queue)
        while finish_count > 0:
            ack_list = self.cache_controller.ack_write_queue.pop(0)
            for ack_id in ack_list:
                backuped_node = self.ongoing_write_through.pop(ack_id)
                self.dec_lock_ref(backuped_node)
            finish_count -= 1

    def loading_check(self):
        finish_count = 0
        for ack_list in self.cache_controller.ack_load_queue:
            finish_count += 1
            for ack_id in ack_list:
                end_node = self.ongoing_load_back.pop(ack_id)
                self.dec_lock_ref(end_node)
        del self.cache_controller.ack_load_queue[:finish_count]

    def check_hicache_events(self):
        self.writing_check()
        self.loading_check()

    # ------------------------------------------------------------------ locks

    def inc_lock_ref(self, node):
        delta = 0
        while node != self.root_node:
            if node.lock_ref == 0:
                self.evictable_size_ -= len(node.key)
                self.protected_size_ += len(node.key)
                delta -= len(node.key)
            node.lock_ref += 1
            self._update_leaf_status(node)
            self._update_host_leaf_status(node)
            node = node.parent
        return delta

    def dec_lock_ref(self, node):
        delta = 0
        while node != self.root_node:
            if node.lock_ref == 1:
                self.evictable_size_ += len(node.key)
                self.protected_size_ -= len(node.key)
                delta += len(node.key)
            node.lock_ref -= 1
            self._update_leaf_status(node)
            self._update_host_leaf_status(node)
            node = node.parent
        return delta

    def _update_host_leaf_status(self, node):
        if not node.evicted or node.lock_ref > 0:
            if node in self.evictable_host_leaves:
                self.evictable_host_leaves.remove(node)
            return
        for child in node.children.values():
            # radixviz's fourth difference (see the engine): 9fbe6800a tests child.evicted
            if (child.evicted if self.head_host_leaf_rule else child.backuped):
                if node in self.evictable_host_leaves:
                    self.evictable_host_leaves.remove(node)
                return
        if node not in self.evictable_host_leaves:
            self.evictable_host_leaves.add(node)

    def _update_leaf_status(self, node):
        if node.evicted or node.lock_ref > 0:
            if node in self.evictable_leaves:
                self.evictable_leaves.remove(node)
            return
        for child in node.children.values():
            if not child.evicted:
                if node in self.evictable_leaves:
                    self.evictable_leaves.remove(node)
                return
        if node not in self.evictable_leaves:
            self.evictable_leaves.add(node)

    # --------------------------------------------------------------- eviction

    def _heap_of(self, nodes):
        heap = [(policy_value(self.eviction_policy, n), n) for n in nodes]
        if self.check_ties:
            keys = [entry[0] for entry in heap]
            assert len(set(keys)) == len(keys), f"two eviction candidates tie: {sorted(keys)}"
        heapq.heapify(heap)
        return heap

    def evict(self, num_tokens, evict_callback=None):
        eviction_heap = self._heap_of(list(self.evictable_leaves))
        num_evicted = 0
        write_back_nodes = []
        while num_evicted < num_tokens and len(eviction_heap):
            _priority, x = heapq.heappop(eviction_heap)
            if x.lock_ref > 0:
                continue
            if not x.backuped:
                if self.cache_controller.write_policy == "write_back":
                    written = self.write_backup(x, write_back=True)
                    num_evicted += written
                    if written:  # radixviz's difference: no host room keeps it on the device
                        write_back_nodes.append(x)
                else:
                    num_evicted += self._evict_regular(x)
            else:
                num_evicted += self._evict_backuped(x)
            for child in x.parent.children.values():
                if child in write_back_nodes:
                    continue
                if not child.evicted:
                    break
            else:
                heapq.heappush(eviction_heap, (policy_value(self.eviction_policy, x.parent), x.parent))
        if self.cache_controller.write_policy == "write_back":
            self.writing_check(write_back=True)
            for node in write_back_nodes:
                assert node.backuped
                self._evict_backuped(node)
        return num_evicted

    def _evict_backuped(self, node):
        num_evicted = self.cache_controller.evict_device(node.value)
        assert num_evicted > 0
        self.evictable_size_ -= num_evicted
        node.value = None
        self._update_leaf_status(node)
        self._update_host_leaf_status(node)
        self._update_leaf_status(node.parent)
        return num_evicted

    def _evict_regular(self, node):
        self.device.free(node.value)
        num_evicted = len(node.value)
        self._delete_leaf(node)
        return num_evicted

    def _delete_leaf(self, node):
        v = node.parent.children.pop(first_of(node.key, self.page_size), None)
        assert v is node
        self.evictable_size_ -= len(node.key)
        if node in self.evictable_leaves:
            self.evictable_leaves.remove(node)
        self._update_leaf_status(node.parent)

    def evict_host(self, num_tokens):
        eviction_heap = self._heap_of(list(self.evictable_host_leaves))
        num_evicted = 0
        while num_evicted < num_tokens and len(eviction_heap):
            _priority, x = heapq.heappop(eviction_heap)
            if x == self.root_node:
                break
            if not x.evicted:
                continue
            if x.host_ref_counter > 0:
                continue
            num_evicted += self.cache_controller.evict_host(x.host_value)
            v = x.parent.children.pop(first_of(x.key, self.page_size), None)
            assert v == x
            if x in self.evictable_host_leaves:
                self.evictable_host_leaves.remove(x)
            self._update_host_leaf_status(x.parent)
            if len(x.parent.children) == 0 and x.parent.evicted:
                heapq.heappush(eviction_heap, (policy_value(self.eviction_policy, x.parent), x.parent))
        return num_evicted

    # ------------------------------------------------------------- load back

    def load_back(self, node, mem_quota=None):
        last_hit_node = node
        nodes_to_load = []
        while node.evicted:
            assert node.backuped
            nodes_to_load.insert(0, node)
            node = node.parent
        ancester_node = node
        delta = self.inc_lock_ref(ancester_node)
        host_indices = torch.cat([n.host_value for n in nodes_to_load])
        if len(host_indices) < self.load_back_threshold or (
            len(host_indices) > mem_quota + delta if mem_quota is not None else False
        ):
            self.dec_lock_ref(ancester_node)
            return None
        device_indices = self.cache_controller.load(host_indices=host_indices, node_id=last_hit_node.number)
        if device_indices is None and self.head_load_back:
            self.evict(len(host_indices))   # 9fbe6800a: nothing keeps the copy being loaded
            device_indices = self.cache_controller.load(host_indices=host_indices, node_id=last_hit_node.number)
        elif device_indices is None:
            last_hit_node.protect_host()  # radixviz's difference: the copy being loaded stays
            self.evict(len(host_indices))
            last_hit_node.release_host()
            device_indices = self.cache_controller.load(host_indices=host_indices, node_id=last_hit_node.number)
        self.dec_lock_ref(ancester_node)
        if device_indices is None:
            return None
        self.ongoing_load_back[last_hit_node.number] = last_hit_node
        offset = 0
        for node in nodes_to_load:
            node.value = device_indices[offset: offset + len(node.host_value)].clone()
            offset += len(node.host_value)
        self.evictable_size_ += len(device_indices)
        self.inc_lock_ref(last_hit_node)
        return device_indices

    def init_load_back(self, last_host_node, mem_quota=None):
        last_node = last_host_node
        if not self._attached(last_node) and not self.head_load_back:   # radixviz's fifth difference
            while not self._attached(last_node) or last_node.evicted:
                last_node = last_node.parent
            return torch.empty((0,), dtype=torch.int64), last_node
        if last_node.evicted:
            loading_values = self.load_back(last_node, mem_quota)
            if loading_values is not None:
                return loading_values, last_node
            while last_node.evicted:
                last_node = last_node.parent
        return torch.empty((0,), dtype=torch.int64), last_node

    def _attached(self, node):
        while node != self.root_node:
            if node.parent is None or node.parent.children.get(first_of(node.key, self.page_size)) is not node:
                return False
            node = node.parent
        return True

    def ready_to_load_host_cache(self):
        self.cache_controller.start_loading()

    # ------------------------------------------------------------- matching

    def match_prefix(self, key):
        key = list(key)
        empty = torch.empty((0,), dtype=torch.int64)
        if self.page_size != 1:
            key = key[:len(key) // self.page_size * self.page_size]
        if len(key) == 0:
            return empty, self.root_node, self.root_node, 0
        value, last_node = self._match_prefix_helper(self.root_node, key)
        value = torch.cat(value) if value else empty
        host_hit_length = 0
        last_host_node = last_node
        while last_node.evicted:
            host_hit_length += len(last_node.host_value)
            last_node = last_node.parent
        while not last_host_node.backuped:
            last_host_node = last_host_node.parent
        return value, last_node, last_host_node, host_hit_length

    def _match_prefix_helper(self, node, key):
        access_time = self.clock.read()
        node.last_access_time = access_time
        child_key = first_of(key, self.page_size)
        value = []
        while len(key) > 0 and child_key in node.children:
            child = node.children[child_key]
            child.last_access_time = access_time
            prefix_len = self._match_len(child.key, key)
            if prefix_len < len(child.key):
                new_node = self._split_node(child.key, child, prefix_len)
                if not new_node.evicted:
                    value.append(new_node.value)
                node = new_node
                break
            if not child.evicted:
                value.append(child.value)
            node = child
            key = key[prefix_len:]
            if len(key):
                child_key = first_of(key, self.page_size)
        return value, node

    def _split_node(self, key, child, split_len):
        new_node = self._node(priority=child.priority)
        new_node.children = {first_of(key[split_len:], self.page_size): child}
        new_node.parent = child.parent
        new_node.lock_ref = child.lock_ref
        new_node.key = child.key[:split_len]
        new_node.hit_count = child.hit_count
        if child.evicted:
            new_node.value = None
        else:
            new_node.value = child.value[:split_len].clone()
            child.value = child.value[split_len:].clone()
        if child.backuped:
            new_node.host_value = child.host_value[:split_len].clone()
            child.host_value = child.host_value[split_len:].clone()
        child.parent = new_node
        child.key = child.key[split_len:]
        new_node.parent.children[first_of(key, self.page_size)] = new_node
        return new_node

    # -------------------------------------------------------------- insertion

    def insert(self, key, value=None, priority=0, chunked=False):
        key = list(key)
        if priority is None:
            priority = 0
        if len(key) == 0:
            return 0
        access_time = self.clock.read()
        node = self.root_node
        child_key = first_of(key, self.page_size)
        total_prefix_length = 0
        while len(key) > 0 and child_key in node.children:
            node = node.children[child_key]
            node.last_access_time = access_time
            node.priority = max(node.priority, priority)
            prefix_len = self._match_len(node.key, key)
            if prefix_len == len(node.key):
                if node.evicted:
                    node.value = value[:prefix_len].clone()
                    self.evictable_size_ += len(node.value)
                    self._update_leaf_status(node)
                    self._update_host_leaf_status(node)
                    self._update_leaf_status(node.parent)
                else:
                    self._inc_hit_count(node, chunked)
                    total_prefix_length += prefix_len
            else:
                new_node = self._split_node(node.key, node, prefix_len)
                new_node.priority = max(new_node.priority, priority)
                if new_node.evicted:
                    new_node.value = value[:prefix_len].clone()
                    self.evictable_size_ += len(new_node.value)
                    self._update_leaf_status(new_node)
                    self._update_host_leaf_status(new_node)
                    self._update_leaf_status(new_node.parent)
                else:
                    self._inc_hit_count(new_node, chunked)
                    total_prefix_length += prefix_len
                node = new_node
            key = key[prefix_len:]
            value = value[prefix_len:]
            if len(key):
                child_key = first_of(key, self.page_size)
        if len(key):
            new_node = self._node(priority=priority)
            new_node.parent = node
            new_node.key = key
            new_node.value = value.clone()
            node.children[child_key] = new_node
            self.evictable_size_ += len(value)
            self._update_leaf_status(node)
            self._update_leaf_status(new_node)
            if self.cache_controller.write_policy != "write_back":
                self._inc_hit_count(new_node, chunked)
        return total_prefix_length

    # ------------------------------------------------------------ for the tests

    def total_size(self):
        return self.evictable_size_ + self.protected_size_

    def structure(self, node=None) -> tuple:
        """The whole tree as nested tuples: edge, device slots (None: evicted), host slots
        (None: not backed up), lock, host refs, hits, priority, times, children."""
        node = self.root_node if node is None else node
        if node is self.root_node:
            value, host = (), ()
        else:
            value = None if node.value is None else tuple(node.value.tolist())
            host = None if node.host_value is None else tuple(node.host_value.tolist())
        return (tuple(node.key), value, host, node.lock_ref, node.host_ref_counter, node.hit_count,
                node.priority, node.creation_time, node.last_access_time,
                tuple(self.structure(child) for child in node.children.values()))
