"""A session: operations applied to a live cache and pool, every micro-step kept as a frame.

Each operation is checked before anything changes, so a refused one loses nothing. The
session's own steps are labelled like the engine's (``# step: LABEL`` on the line that does
it, source ``radixviz.script.session``); an operation's first frame is ``op.NAME``, marked
on its handler's ``def``.
"""
from __future__ import annotations

from types import MappingProxyType

import radixviz.cache as engines
from radixviz.cache import ModernRadixCache, RadixCache, TokenToKVPool, compare_matchers, tokens_text

from .frames import EMPTY, Frame, Marks, OpRecord, PoolSnapshot
from .parser import Op, ScriptError, parse_script
from .narrate import key_text

DEFAULT_POOL_SIZE = 128


class Session:
    def __init__(self, pool_size: int = DEFAULT_POOL_SIZE, buggy: bool = False, device="auto",
                 engine: str = "2024", page_size: int = 1, eviction_policy: str = "lru"):
        self.pool_size, self.device = pool_size, device
        self.pool = TokenToKVPool(pool_size, device=device)
        # the 2026 engine's settings stay here while the 2024 engine runs: 'engine 2026' uses them
        self.engine, self.page_size, self.eviction_policy = engine, page_size, eviction_policy
        self.release_inserts = False   # insert-slots release: one slot fewer than tokens
        self.knowingly_broken = False  # a short value is in the tree (#4) until the next reset
        self.cache = self._new_cache(buggy)
        self.initial_buggy = buggy
        self.initial = dict(engine=engine, page_size=page_size, eviction_policy=eviction_policy)
        self.frames: list[Frame] = []
        self.records: list[OpRecord] = []
        self.locks: dict = {}            # key -> nodes locked under that name, newest last
        self._record: OpRecord | None = None
        self._marks: dict = {}
        self._pool_refs: tuple = ()
        self._pool_version = None
        self._disagreement: dict | None = None
        self._wrong_ahead: set = set()

    # ------------------------------------------------------------------ running

    def run(self, text: str, file: str = "<input>") -> list[OpRecord]:
        """Parse all of ``text``, then apply it; raises ScriptError at the first refused operation
        (the operations before it stay applied)."""
        return [self.apply(op) for op in parse_script(text, file)]

    def apply(self, op: Op) -> OpRecord:
        """Apply one operation; raise ScriptError (and change nothing) if it cannot be done."""
        self._precheck(op)
        record = OpRecord(len(self.records), op, first_frame=len(self.frames))
        self._record, self._marks, self._wrong_ahead = record, {}, set()
        if op.name == "match" and self.engine == "2024":
            self._mark_wrong(op.key)  # on the tree before the walk: after its split both matchers agree
        elif op.name == "match":
            self._disagreement = None  # the #7 comparison is about the 2024 matcher
        handler = getattr(self, f"_do_{op.name.replace('-', '_')}")
        self._step("op", f"op.{op.name}", text=op.text, name=op.name)
        try:
            record.result = handler(op)
        finally:
            self._record = None
        record.last_frame = len(self.frames) - 1
        self.records.append(record)
        return record

    def skip(self, op: Op, why: str) -> OpRecord:  # step: op.skip
        """Record ``op`` without applying it (a compare column it does not concern): one frame,
        the result ``{"skipped": why}``; the cache and pool are untouched."""
        record = OpRecord(len(self.records), op, first_frame=len(self.frames))
        self._record, self._marks = record, {}
        try:
            self._step("op", "op.skip", text=op.text, name=op.name, skipped=why)
        finally:
            self._record = None
        record.result, record.last_frame = {"skipped": why}, len(self.frames) - 1
        self.records.append(record)
        return record

    @property
    def ops(self) -> list[Op]:
        return [r.op for r in self.records]

    def replay(self, upto: int | None = None, buggy: bool | None = None) -> "Session":
        """A fresh session that applies the first ``upto`` operations again (all by default),
        starting with the matcher ``buggy`` names (this session's starting one by default);
        a ``matcher`` operation in the history still switches where it stands. Raises
        ScriptError if an operation is refused on the way."""
        fresh = Session(self.pool_size, self.initial_buggy if buggy is None else buggy, self.device,
                        **self.initial)
        for op in self.ops[:upto]:
            fresh.apply(op)
        return fresh

    def live_frame(self) -> Frame:
        """The cache and pool as they are now, unmarked: what a view shows before any step."""
        tree = self.cache.snapshot()
        return Frame(-1, len(self.records), "start", EMPTY, tree,
                     PoolSnapshot(self.pool.refcounts(), tree), Marks(), "", "")

    def held_slots(self) -> tuple:
        """Slots held outside the tree (for check_invariants): script locks hold none."""
        return ()

    # --------------------------------------------------------------- operations

    def precheck(self, op: Op) -> None:
        """Raise ScriptError, changing nothing, if ``op`` would be refused now."""
        self._precheck(op)

    def _precheck(self, op: Op) -> None:
        def refuse(message):
            raise ScriptError(op.file, op.line, op.col, message)
        if op.name == "insert":
            need = len(op.key)
            if need > self.pool.available_size() + self.cache.evictable_size():
                refuse(f"pool full: {need} slots needed, {self.pool.available_size()} free and "
                       f"{self.cache.evictable_size()} evictable (evict, unlock or reset)")
        elif op.name == "unlock" and not self.locks.get(op.key):
            held = ", ".join(key_text(k) for k in self.locks) or "none"
            refuse(f"no lock on {key_text(op.key)} to release (locks held: {held})")
        elif op.name == "evict" and getattr(self.cache, "disable", False):
            refuse("the cache is disabled")
        modern = self.engine == "2026"
        if op.name in ("page-size", "eviction") and not modern:
            refuse(f"{op.name} belongs to today's cache: start with 'engine 2026'")
        elif op.name == "matcher" and modern:
            refuse("the matcher switch belongs to the 2024 engine: 'engine 2024' first")
        elif op.name == "insert" and op.priority is not None and not modern:
            refuse("priorities belong to today's cache: start with 'engine 2026'")

    def _do_insert(self, op: Op) -> dict:  # step: op.insert
        key, need = op.key, len(op.key)
        shortfall = need - self.pool.available_size()
        evicted = self._evict(shortfall) if shortfall > 0 else []
        if self.release_inserts:
            # the release's scheduler stored seq_len = len - 1 slots: the last token's K/V is
            # not computed yet (#4); the tree still takes the whole key
            need -= 1
        self.knowingly_broken |= self.release_inserts
        slots = self.pool.alloc(need)  # step: alloc
        self._step("alloc", "alloc", slots=tuple(slots.tolist()))
        if self.engine == "2026":
            return self._insert_pages(op, slots, evicted)
        prefix_len = self.cache.insert(key, slots)
        duplicates = slots[:prefix_len]
        if prefix_len:
            self.pool.free(duplicates)  # step: free_dup
            self._step("free_dup", "free_dup", slots=tuple(duplicates.tolist()))
        return {"prefix_len": prefix_len, "new_slots": slots[prefix_len:].tolist(),
                "freed_duplicates": duplicates.tolist(), "evicted_first": evicted}

    def _insert_pages(self, op: Op, slots, evicted) -> dict:
        """Today's callers insert whole pages only; the partial last page goes back to the pool."""
        whole = len(op.key) - len(op.key) % self.page_size
        prefix_len = self.cache.insert(op.key[:whole], slots[:whole], priority=op.priority or 0)
        duplicates, tail = slots[:prefix_len], slots[whole:]
        if prefix_len:
            self.pool.free(duplicates)  # step: free_dup
            self._step("free_dup", "free_dup", slots=tuple(duplicates.tolist()))
        if len(tail):
            self.pool.free(tail)  # step: free_tail
            self._step("free_tail", "free_tail", slots=tuple(tail.tolist()), page_size=self.page_size)
        return {"prefix_len": prefix_len, "new_slots": slots[prefix_len:whole].tolist(),
                "freed_duplicates": duplicates.tolist(), "freed_tail": tail.tolist(),
                "evicted_first": evicted, "priority": op.priority or 0}

    def _do_match(self, op: Op) -> dict:  # step: op.match
        value, last_node = self.cache.match_prefix(op.key)
        matched = len(value)
        result = {"matched": matched, "matched_text": tokens_text(op.key[:matched]),
                  "slots": value.tolist(), "last_node": last_node.id,
                  "disagreement": self._disagreement}
        if any(len(n.value) < len(n.key) for n in _path(last_node)):
            # a node holding fewer slots than tokens (insert-slots release, #4): shifted slots
            result["misaligned"] = {"tokens": _depth(last_node), "slots": matched,
                                    "from": _first_short(last_node)}
        return result

    def _do_lock(self, op: Op) -> dict:  # step: op.lock
        value, last_node = self.cache.match_prefix(op.key)
        lock = self.cache.inc_lock_ref if self.engine == "2026" else self.cache.inc_ref_counter
        delta = lock(last_node)
        self.locks.setdefault(op.key, []).append(last_node)
        return {"delta": delta, "matched": len(value), "node": last_node.id}

    def _do_unlock(self, op: Op) -> dict:  # step: op.unlock
        node = self.locks[op.key][-1]
        unlock = self.cache.dec_lock_ref if self.engine == "2026" else self.cache.dec_ref_counter
        delta = unlock(node)
        self.locks[op.key].pop()
        if not self.locks[op.key]:
            del self.locks[op.key]
        return {"delta": delta, "node": node.id}

    def _do_evict(self, op: Op) -> dict:  # step: op.evict
        freed = self._evict(op.count)
        return {"evicted": len(freed), "freed_slots": freed}

    def _do_matcher(self, op: Op) -> dict:  # step: op.matcher
        self.cache.buggy_match = op.mode == "buggy"  # step: matcher
        self._step("matcher", "matcher", mode=op.mode)
        return {"mode": op.mode}

    def _do_engine(self, op: Op) -> dict:  # step: op.engine
        self.engine = op.mode
        self._fresh_cache()  # step: engine
        self._step("engine", "engine", engine=op.mode, page_size=self.page_size,
                   eviction_policy=self.eviction_policy)
        return {"engine": op.mode}

    def _do_page_size(self, op: Op) -> dict:  # step: op.page-size
        self.page_size = op.count
        self._fresh_cache()  # step: page_size
        self._step("page_size", "page_size", page_size=op.count)
        return {"page_size": op.count}

    def _do_eviction(self, op: Op) -> dict:  # step: op.eviction
        self.eviction_policy = op.mode
        self.cache.set_eviction_policy(op.mode)  # step: eviction
        self._step("eviction", "eviction", policy=op.mode)
        return {"eviction_policy": op.mode}

    def _new_cache(self, buggy: bool = False):
        if self.engine == "2026":
            cache = ModernRadixCache(self.page_size, self.eviction_policy, device=self.pool.device)
        else:
            # strict=False only lets ``insert-slots release`` hand it short values (#4)
            cache = RadixCache(buggy_match=buggy, device=self.pool.device, strict=False)
        cache.observer = self._on_event
        return cache

    def _fresh_cache(self) -> None:
        """Another engine or page size: a new, empty cache on a new pool (locks are gone)."""
        self.pool = TokenToKVPool(self.pool_size, device=self.device)
        self._pool_version = None
        self.cache = self._new_cache()
        self.locks.clear()

    def check_invariants(self) -> None:
        """Raise InvariantError if the cache or pool is inconsistent (either engine)."""
        # looked up on the package at call time, so a test can stand in for either check
        check = engines.check_modern_invariants if self.engine == "2026" else engines.check_invariants
        check(self.cache, self.pool, self.held_slots())
    def _do_insert_slots(self, op: Op) -> dict:  # step: op.insert-slots
        self.release_inserts = op.mode == "release"  # step: insert_slots
        self._step("insert_slots", "insert_slots", mode=op.mode)
        return {"mode": op.mode}

    def _do_reset(self, op: Op) -> dict:  # step: op.reset
        self.pool = TokenToKVPool(self.pool_size, device=self.device)
        self._pool_version = None  # a new pool object may reuse an old one's id
        self.cache.reset()  # step: reset
        self.cache.observer = self._on_event
        self.locks.clear()
        self.knowingly_broken = False
        self._step("reset", "reset")
        return {}

    def _evict(self, num_tokens: int) -> list:
        freed: list = []

        def release(slots):
            freed.extend(slots.tolist())
            return self.pool.free(slots)
        self.cache.evict(num_tokens, release)
        return freed

    # ------------------------------------------------------------------ frames

    def _mark_wrong(self, key) -> None:
        tree = self.cache.snapshot()
        diff = compare_matchers(tree, key)
        self._disagreement = None
        if diff is None:
            return
        wrong, pos = [], 0
        for node_id, taken in diff.buggy.path:
            if pos + taken > diff.wrong_from:
                wrong.append(node_id)
            pos += taken
        self._disagreement = {"fixed": diff.fixed.matched, "buggy": diff.buggy.matched,
                              "wrong_from": diff.wrong_from, "wrong_slots": list(diff.wrong_slots)}
        if self.cache.buggy_match:
            self._wrong_ahead = set(wrong)  # marked as the walk reaches them

    def _on_event(self, event) -> None:
        marks, kind = self._marks, event.kind.value
        if kind == "append":
            marks["path"] = marks.get("path", ()) + event.nodes
            if event.nodes[0] in self._wrong_ahead:
                marks["wrong"] = marks.get("wrong", ()) + event.nodes
            if event.data.get("partial"):  # the buggy walk took only the start of this edge
                marks["partial"] = marks.get("partial", ()) + ((event.nodes[0], len(event["slots"])),)
        elif kind == "split":
            marks["split"] = event.nodes  # the path needs no change: the next append adds the upper half
        elif kind == "create":
            marks["created"] = marks.get("created", ()) + event.nodes
        elif kind == "delete":
            marks["evicted"] = marks.get("evicted", ()) + ((event["leaf"], event["key"]),)
        slots = event.data.get("slots", ())
        self._add_frame(kind, event.data, event.tree, event.source, event.step, event.nodes, slots, event)

    def _step(self, kind: str, step: str, **data) -> None:
        """A session-level step, labelled ``step`` (the line that did it carries the marker)."""
        slots = data.get("slots", ())
        self._add_frame(kind, MappingProxyType(data) if data else EMPTY, self.cache.snapshot(),
                        __name__, step, (), slots, None)

    def _add_frame(self, kind, data, tree, source, step, nodes, slots, event) -> None:
        # torch bumps a tensor's version on every in-place change: reuse the last copy until then
        version = (id(self.pool), self.pool.mem_state._version)
        if version != self._pool_version:
            self._pool_refs, self._pool_version = self.pool.refcounts(), version
        # one current node: a split's lower half keeps its ✂ mark, a heap shows its top
        marks = Marks(current=tuple(nodes[:1]), slots=tuple(slots), **self._marks)
        op_index = self._record.index if self._record is not None else len(self.records)
        self.frames.append(Frame(len(self.frames), op_index, kind, data, tree,
                                 PoolSnapshot(self._pool_refs, tree), marks, source, step,
                                 nodes, event))


def _path(node) -> list:
    nodes = []
    while node.parent is not None:
        nodes.append(node)
        node = node.parent
    return nodes[::-1]


def _depth(node) -> int:
    """Tokens on the way from the root to ``node``."""
    return sum(len(n.key) for n in _path(node))


def _first_short(node) -> int:
    """Position of the first token whose slot is missing on the way to ``node``: from there
    on every returned slot belongs to a later token."""
    position = 0
    for n in _path(node):
        if len(n.value) < len(n.key):
            return position + len(n.value)
        position += len(n.key)
    return position
