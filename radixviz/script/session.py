"""A session: operations applied to a live cache and pool, every micro-step kept as a frame.

Each operation is checked before anything changes, so a refused one loses nothing. The
session's own steps are labelled like the engine's (``# step: LABEL`` on the line that does
it, source ``radixviz.script.session``); an operation's first frame is ``op.NAME``, marked
on its handler's ``def``.
"""
from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from radixviz.cache import TokenToKVPool, tokens_text
from radixviz.cache.options import EngineSettings
from radixviz.cache.engines import all_options, engine_spec, engines_with, op_owners, option_ops, option_owners
from radixviz.cache.snapshot import unshared_bytes

from .frame_history import DEFAULT_LIMIT_MB, FrameHistory
from .frames import EMPTY, Frame, Marks, OpRecord, PoolSnapshot
from .ops import EngineOps, engine_ops
from .parser import Op, ScriptError, parse_script
from .narrate import key_text

if TYPE_CHECKING:
    from typing import Any
    from radixviz.cache.engines import EngineSpec

DEFAULT_POOL_SIZE = 128
# the facade frees an insert's duplicates and partial page: those frames show its lines
FACADE = "radixviz.cache.facade"
# a frame's own objects (Frame, Marks, Event, the two snapshots' shells, its data), in bytes,
# as tracemalloc measures them on bench/memory.py's sessions
FRAME_BYTES = 1024


class Session:
    def __init__(self, pool_size: int = DEFAULT_POOL_SIZE, buggy: bool = False, device: str = "auto",
                 engine: str = "2024", history_mb: float | None = DEFAULT_LIMIT_MB,
                 settings: EngineSettings | None = None, **options: Any):
        """A session on engine ``engine`` (engines.py) with its ``settings`` (the command
        line's, made once from the declared options) or those engine ``options``
        (``page_size=4``, ``eviction_policy="lfu"``); ``buggy`` starts the 2024 engine with
        the pre-#7 matcher. Options of other engines are kept for a later ``engine`` line.
        Past ``history_mb`` MiB of frames (estimated; None: no limit) the oldest frames are
        dropped (frame_history.py)."""
        self.pool_size, self.device = pool_size, device
        spec = engine_spec(engine)
        # one value for every engine's options: 'engine 2026' in a 2024 session uses these
        self.options = {**all_options(), **options, **(settings or {}), "buggy": buggy}
        self.options["strict"] = False  # the 2024 engine takes a short value from insert-slots release (#4)
        self.release_inserts = False   # insert-slots release: one slot fewer than tokens
        self.knowingly_broken = False  # a short value is in the tree (#4) until the next reset
        self._engine_ops: dict[str, EngineOps] = {}   # engine name -> its own operations (ops/)
        self.engine = self._open(spec, TokenToKVPool(pool_size, device=device))
        self.initial_buggy = buggy
        self.initial = dict(engine=spec.name, **{k: v for k, v in self.options.items()
                                                  if k not in ("buggy", "strict")})
        self.history_mb = history_mb
        self.frames = FrameHistory(history_mb)
        self._last_root = None           # the tree root of the newest frame
        self._last_host: tuple = ()      # the host pool picture of the newest frame
        self.records: list[OpRecord] = []
        self.locks: dict = {}            # (key, namespace) -> nodes locked under that name, newest last
        self._record: OpRecord | None = None
        self._marks: dict = {}
        self._pool_refs: Any = None      # the pool's last SlotCounts
        self._pool_version: tuple | None = None
        self._host_picture: tuple = (None, ())
        self._disagreement: dict | None = None
        self._wrong_ahead: set = set()
        # called with an insert's fresh slots before the engine sees them (a KV session fills
        # them there, so a write to the host tier copies the request's real K/V)
        self.before_insert: Callable[[Any], None] | None = None

    @property
    def cache(self):
        """The engine's own live cache object (views and tests read it)."""
        return self.engine.cache

    @property
    def pool(self) -> TokenToKVPool:
        return self.engine.pool

    @property
    def engine_ops(self) -> EngineOps:
        """The operations and hooks the session's engine brings (script/ops/), made once per engine."""
        spec = self.engine.spec
        if spec.name not in self._engine_ops:
            self._engine_ops[spec.name] = engine_ops(spec, self)
        return self._engine_ops[spec.name]

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
        if op.name == "match":
            self.engine_ops.before_match(op)
        handler = getattr(self, f"_do_{op.name.replace('-', '_')}", None) or self.engine_ops.handler(op.name)
        label = f"op.{op.name}"
        if handler is None:          # an option a registered engine declares (``window 4``)
            handler, label = self._do_option, "op.option"
        # the handler's def carries the marker: the session's, or the engine's (script/ops/)
        self._step("op", label, handler.__module__, text=op.text, name=op.name)
        try:
            synced = self.engine_ops.sync_first(op)
            record.result = handler(op)
            if synced:
                record.result["acknowledged_first"] = synced
            # what the cache told the outside world during this operation (KV events on)
            record.kv_events = tuple(self.engine.take_events())
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

    def replay(self, upto: int | None = None, buggy: bool | None = None) -> Session:
        """A fresh session that applies the first ``upto`` operations again (all by default),
        starting with the matcher ``buggy`` names (this session's starting one by default);
        a ``matcher`` operation in the history still switches where it stands. Raises
        ScriptError if an operation is refused on the way."""
        fresh = Session(self.pool_size, self.initial_buggy if buggy is None else buggy, self.device,
                        history_mb=self.history_mb, **self.initial)
        for op in self.ops[:upto]:
            fresh.apply(op)
        return fresh

    def live_frame(self) -> Frame:
        """The cache and pool as they are now, unmarked: what a view shows before any step."""
        tree = self.engine.snapshot()
        return Frame(-1, len(self.records), "start", EMPTY, tree,
                     PoolSnapshot(self.pool.refcounts(), tree, self._host_states()), Marks(), "", "")

    def held_slots(self) -> tuple:
        """Slots held outside the tree (for check_invariants): script locks hold none."""
        return ()

    def check_invariants(self) -> None:
        """Raise InvariantError if the cache or pool is inconsistent (the engine's own checks)."""
        self.engine.check_invariants(self.held_slots())

    # --------------------------------------------------------------- operations

    def precheck(self, op: Op) -> None:
        """Raise ScriptError, changing nothing, if ``op`` would be refused now."""
        self._precheck(op)

    def _precheck(self, op: Op) -> None:
        def refuse(message: str):
            raise ScriptError(op.file, op.line, op.col, message)
        spec = self.engine.spec
        if op.name == "insert":
            need = len(_key(op))
            if need > self.pool.available_size() + self.engine.evictable_size():
                refuse(f"pool full: {need} slots needed, {self.pool.available_size()} free and "
                       f"{self.engine.evictable_size()} evictable ({self.engine_ops.ways_to_room})")
            if op.priority is not None and not self.engine_ops.takes_priority:
                refuse(f"priorities belong to {_owners('priorities')}")
        elif op.name == "unlock" and not self.locks.get((op.key, op.ns)):
            held = ", ".join(lock_name(*k) for k in self.locks) or "none"
            refuse(f"no lock on {lock_name(op.key, op.ns)} to release (locks held: {held})")
        elif op_owners(op.name) and op.name not in spec.ops:
            refuse(f"{op.name} belongs to {_named(op_owners(op.name))}")
        elif not op_owners(op.name) and op.name in option_ops() and not spec.takes(option_ops()[op.name].name):
            owners = " or ".join(option_owners(option_ops()[op.name].name))
            refuse(f"{op.name} belongs to the {owners} engine")
        if op.ns is not None and not self.engine_ops.takes_namespace:
            refuse(f"namespaces (ns {op.ns}) belong to {_owners('namespaces')}")
        self.engine_ops.precheck(op, refuse)

    def _do_insert(self, op: Op) -> dict:  # step: op.insert
        key = _key(op)
        need = len(key)
        shortfall = need - self.pool.available_size()
        evicted = self._evict(shortfall) if shortfall > 0 else []
        if self.release_inserts:
            # the release's scheduler stored seq_len = len - 1 slots: the last token's K/V is
            # not computed yet (#4); the tree still takes the whole key
            need -= 1
        self.knowingly_broken |= self.release_inserts
        slots = self.pool.alloc(need)  # step: alloc
        self._step("alloc", "alloc", slots=tuple(slots.tolist()))
        if self.before_insert is not None:
            self.before_insert(slots)  # the KV check computes the request's K/V here
        done = self.engine.insert(key, slots, op.priority, freed=self._freed, extra_key=op.ns)
        result = {"prefix_len": done.prefix_len, "new_slots": done.new_slots.tolist(),
                  "freed_duplicates": done.duplicates.tolist(), "evicted_first": evicted}
        self.engine_ops.insert_result(result, done, op)
        if op.ns is not None:
            result["ns"] = op.ns
        return result

    def _freed(self, what: str, slots) -> None:
        """A frame for each release the facade's insert makes (its lines carry the markers)."""
        if what == "duplicates":
            self._step("free_dup", "free_dup", FACADE, slots=tuple(slots.tolist()))
        else:
            self._step("free_tail", "free_tail", FACADE, slots=tuple(slots.tolist()),
                       page_size=self.engine.page_size)

    def _do_match(self, op: Op) -> dict:  # step: op.match
        value, last_node, extra = self.engine_ops.match(op)
        matched = len(value)
        result = {"matched": matched, "matched_text": tokens_text(_key(op)[:matched]),
                  "slots": value.tolist(), "last_node": last_node.id,
                  "disagreement": self._disagreement}
        if op.ns is not None:
            result["ns"] = op.ns
        result.update(extra)
        return result

    def _do_lock(self, op: Op) -> dict:  # step: op.lock
        value, last_node = self.engine.match(op.key, op.ns)
        delta = self.engine.lock(last_node)
        self.locks.setdefault((op.key, op.ns), []).append(last_node)
        return {"delta": delta, "matched": len(value), "node": last_node.id}

    def _do_unlock(self, op: Op) -> dict:  # step: op.unlock
        name = (op.key, op.ns)
        node = self.locks[name][-1]
        delta = self.engine.unlock(node)
        self.locks[name].pop()
        if not self.locks[name]:
            del self.locks[name]
        return {"delta": delta, "node": node.id}

    def _do_evict(self, op: Op) -> dict:  # step: op.evict
        freed = self._evict(op.count or 0)   # the parser gives evict its count
        return {"evicted": len(freed), "freed_slots": freed}

    def _do_engine(self, op: Op) -> dict:  # step: op.engine
        # the first release's switches (#7, #4) start off on a fresh engine
        self.options["buggy"], self.release_inserts = False, False
        self._fresh_engine(engine_spec(str(op.mode)))  # step: engine
        self._step("engine", "engine", engine=op.mode, **self.engine.spec.pick(self.options))
        return {"engine": op.mode}

    def _do_option(self, op: Op) -> dict:  # step: op.option
        """A registered engine's own option (options.py): changed on the live cache where the
        option says it can be, else on a fresh cache (locks are gone), as ``page-size`` does."""
        option = option_ops()[op.name]
        value = op.count if option.limit is not None else (op.mode == "on" if option.is_switch else op.mode)
        self.options[option.name] = value
        if option.live:  # step: option
            self.engine.change(option.name, value)
        else:
            self._fresh_engine(self.engine.spec)
        changed: dict[str, Any] = {option.name: value}
        self._step("option", "option", **changed)
        return {option.name: value}

    def _do_reset(self, op: Op) -> dict:  # step: op.reset
        self._pool_version = None  # a new pool object may reuse an old one's id
        self.engine.reset(TokenToKVPool(self.pool_size, device=self.device))  # step: reset
        self.locks.clear()
        self.knowingly_broken = False
        self._step("reset", "reset")
        return {}

    def _open(self, spec: EngineSpec, pool: TokenToKVPool):
        # the session keeps one value per option (a script line changes them): the engine
        # gets its own, as one frozen object
        settings = spec.settings_type(**{option.name: self.options[option.name] for option in spec.options})
        engine = spec.engine_class(spec, pool, settings)
        engine.observer = self._on_event
        return engine

    def _fresh_engine(self, spec: EngineSpec) -> None:
        """Another engine or page size: a new, empty cache on a new pool (locks are gone)."""
        self._pool_version = None
        self.engine = self._open(spec, TokenToKVPool(self.pool_size, device=self.device))
        self.locks.clear()

    def _evict(self, num_tokens: int) -> list:
        freed: list = []
        self.engine.evict(num_tokens, lambda slots: freed.extend(slots.tolist()))
        return freed

    # ------------------------------------------------------------------ frames

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

    def _step(self, kind: str, step: str, source: str = __name__, **data) -> None:
        """A step outside the engine, labelled ``step`` (the line of module ``source`` that
        did it carries the marker)."""
        slots = data.get("slots", ())
        self._add_frame(kind, MappingProxyType(data) if data else EMPTY, self.engine.snapshot(),
                        source, step, (), slots, None)

    def _host_states(self) -> tuple:
        """The host pool per slot (0 free, 1 used), () for an engine without a host tier."""
        self._host_picture, states = self.engine_ops.host_states(self._host_picture)
        return states

    def _add_frame(self, kind, data, tree, source, step, nodes, slots, event) -> None:
        # the pool's version changes with every count: reuse the last copy until then
        version = (id(self.pool), self.pool.version)
        # what keeping this frame costs: its own objects, and what it shares with no frame before
        cost = FRAME_BYTES + 8 * (len(nodes) + len(slots)) + unshared_bytes(tree.root, self._last_root)
        self._last_root = tree.root
        if version != self._pool_version:
            # chunks of slots that did not change are shared with the picture before
            self._pool_refs = self.pool.shared_refcounts(self._pool_refs or None)
            self._pool_version = version
            cost += self._pool_refs.new_bytes
        host = self._host_states()
        if host and host is not self._last_host:   # a new host picture
            cost += 8 * len(host)
            self._last_host = host
        # one current node: a split's lower half keeps its ✂ mark, a heap shows its top
        marks = Marks(current=tuple(nodes[:1]), slots=tuple(slots),
                      host_slots=tuple(data.get("host_slots", ())), **self._marks)
        op_index = self._record.index if self._record is not None else len(self.records)
        self.frames.append(Frame(len(self.frames), op_index, kind, data, tree,
                                 PoolSnapshot(self._pool_refs, tree, host), marks, source, step,
                                 nodes, event), cost)


def lock_name(key, ns) -> str:
    """``'Hello_'`` or ``'Hello_' ns lora-a``: a script lock as messages name it."""
    return key_text(key) if ns is None else f"{key_text(key)} ns {ns}"


def _owners(capability: str) -> str:
    """``the 2026 engine: start with 'engine 2026'``: where a refused operation belongs."""
    return _named(tuple(spec.name for spec in engines_with(capability)))


def _named(owners: tuple) -> str:
    names = list(owners) or ["no"]
    return f"the {' or '.join(names)} engine: start with 'engine {names[0]}'"


def _key(op: Op) -> tuple:
    """The key of a key operation (the parser gives every one of them its key)."""
    if op.key is None:
        raise ValueError(f"{op.name} has no key")
    return op.key
