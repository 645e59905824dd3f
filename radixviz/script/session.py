"""A session: operations applied to a live cache and pool, every micro-step kept as a frame.

Each operation is checked before anything changes, so a refused one loses nothing. The
session's own steps are labelled like the engine's (``# step: LABEL`` on the line that does
it, source ``radixviz.script.session``); an operation's first frame is ``op.NAME``, marked
on its handler's ``def``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from radixviz.cache import TokenToKVPool, tokens_text
from radixviz.cache.options import EngineSettings
from radixviz.cache.engines import (all_options, default_engine, engine_spec, op_owners, option_ops,
                                    option_owners, owners_of)
from radixviz.cache.snapshot import LazyTree, built_bytes, unshared_bytes
from radixviz.cache.trace import EventKind, kind_name
from radixviz.collector import fewer_collections

from .frame_history import DEFAULT_LIMIT_MB, FrameHistory
from .frames import EMPTY, Frame, Marks, OpRecord, PoolSnapshot
from .ops import EngineOps, engine_ops
from .parser import Op, ScriptError, parse_script
from .narrate import key_text

if TYPE_CHECKING:
    from radixviz.cache.contract import SlotPool
    from radixviz.cache.engines import EngineSpec
    from radixviz.cache.facade import CacheEngine

DEFAULT_POOL_SIZE = 128
# the facade frees an insert's duplicates and partial page: those frames show its lines
FACADE = "radixviz.cache.facade"
# a frame's own objects (Frame, Marks, Event, the two snapshots' shells, its data), in bytes,
# as tracemalloc measures them on bench/memory.py's sessions
FRAME_BYTES = 1024
FEWER_COLLECTIONS = 20_000   # allocations between the collector's young passes during an operation
_KIND_WORDS = {kind: kind.value for kind in EventKind}   # an enum's .value is a slow property
LAZY_BYTES = 400   # a step's LazyTree: itself and its tree's header (its nodes are made when read)


class Session:
    def __init__(self, pool_size: int = DEFAULT_POOL_SIZE, buggy: bool = False, device: str = "auto",
                 engine: str | None = None, history_mb: float | None = DEFAULT_LIMIT_MB,
                 settings: EngineSettings | None = None, **options: object):
        """A session on engine ``engine`` (engines.py) with its ``settings`` (the command
        line's: one object, made and checked once, which names its engine and pool size and
        goes to the engine whole) or those engine ``options`` (``page_size=4``,
        ``eviction_policy="lfu"``); ``buggy`` starts the 2024 engine with the pre-#7 matcher.
        Options of other engines are kept for a later ``engine`` line. Past ``history_mb`` MiB
        of frames (estimated; None: no limit) the oldest frames are dropped (frame_history.py)."""
        if settings is not None:
            engine, pool_size = settings.engine, settings.pool_size
        self.pool_size, self.device = pool_size, device
        spec = engine_spec(engine or default_engine())
        # one value for every engine's options: 'engine 2026' in a 2024 session uses these
        self.options: dict[str, object] = {**all_options(), **options, **(settings or {})}
        self.options["buggy"] = bool(buggy or self.options["buggy"])
        self.knowingly_broken = False  # a step broke the tree's invariants on purpose (#4, a head bug) until a reset
        self._engine_ops: dict[str, EngineOps] = {}   # engine name -> its own operations (ops/)
        self.settings = settings if settings is not None and not buggy else self._settings_for(spec)
        self.engine: CacheEngine = self._open(spec, TokenToKVPool(pool_size, device=device))
        self.initial_buggy = bool(self.options["buggy"])   # the #7 matcher the session started with
        self.initial: dict[str, Any] = dict(engine=spec.name, **{k: v for k, v in self.options.items() if k != "buggy"})
        self.history_mb = history_mb
        self.frames = FrameHistory(history_mb)
        self._last_root = None           # the tree root of the newest frame
        self.records: list[OpRecord] = []
        self.locks: dict = {}            # (key, namespace) -> nodes locked under that name, newest last
        self._record: OpRecord | None = None
        self._marks: dict = {}
        # per pool (the facade's, then the engine's further ones): (version, last picture)
        self._pictures: list[tuple[object, Sequence[int] | None]] = []
        self._new_bytes = 0              # what the pictures taken last cost beyond those before
        # called with an insert's fresh slots before the engine sees them (a KV session fills
        # them there, so a write to the host tier copies the request's real K/V)
        self.before_insert: Callable[[Any], None] | None = None

    @property
    def spec(self) -> EngineSpec:
        """The registry line of the session's engine now."""
        return engine_spec(self.engine.name)

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
        spec = self.spec
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
        self._record, self._marks = record, {}
        self.engine_ops.wrong_ahead = set()
        if op.name == "match":
            self.engine_ops.before_match(op)
        handler = getattr(self, f"_do_{op.name.replace('-', '_')}", None) or self.engine_ops.handler(op.name)
        label = f"op.{op.name}"
        if handler is None:          # an option a registered engine declares (``window 4``)
            handler, label = self._do_option, "op.option"
        # the handler's def carries the marker: the session's, or the engine's (script/ops/)
        self._step("op", label, handler.__module__, text=op.text, name=op.name)
        # an operation on a deep path records thousands of frames, each a few small objects
        # that live as long as the history: the collector's young passes over them were half
        # the time of a step (bench/comb.py); they are freed by their counts, not by it
        try:
            with fewer_collections(young=FEWER_COLLECTIONS):
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
        counts = self._picture()
        return Frame(-1, len(self.records), "start", EMPTY, tree, PoolSnapshot(counts[0], tree, tuple(counts[1:])),
                     Marks(), "", "")

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
        spec = self.spec
        if op.name == "insert":
            need = len(_key(op))
            if need > self.pool.available_size() + self.engine.evictable_size():
                refuse(f"pool full: {need} slots needed, {self.pool.available_size()} free and "
                       f"{self.engine.evictable_size()} evictable ({self.engine_ops.ways_to_room})")
            if op.priority is not None and not self.engine_ops.takes_priority:
                refuse(f"priorities belong to {owners_of('priorities')}")
        elif op.name == "unlock" and not self.locks.get((op.key, op.ns)):
            held = ", ".join(lock_name(*k) for k in self.locks) or "none"
            refuse(f"no lock on {lock_name(op.key, op.ns)} to release (locks held: {held})")
        elif op_owners(op.name) and op.name not in spec.ops:
            refuse(f"{op.name} belongs to {_named(op_owners(op.name))}")
        elif not op_owners(op.name) and op.name in option_ops() and not spec.takes(option_ops()[op.name].name):
            owners = " or ".join(option_owners(option_ops()[op.name].name))
            refuse(f"{op.name} belongs to the {owners} engine")
        if op.ns is not None and not self.engine_ops.takes_namespace:
            refuse(f"namespaces (ns {op.ns}) belong to {owners_of('namespaces')}")
        elif op.name == "evict" and op.mode is not None and op.mode not in (c.name for c in self.engine.memory):
            refuse(f"engine {spec.name} keeps no {op.mode!r} memory to evict: its components are "
                   f"{', '.join(c.name for c in self.engine.memory)}")
        self.engine_ops.precheck(op, refuse)

    def _do_insert(self, op: Op) -> dict:  # step: op.insert
        key = _key(op)
        need = len(key)
        shortfall = need - self.pool.available_size()
        evicted = self._evict(shortfall) if shortfall > 0 else []
        need = self.engine_ops.slots_for(need)   # one fewer under the 2024 release's insert (#4)
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
                  "disagreement": None}   # the two matchers' (#7): the 2024 engine's match says
        if op.ns is not None:
            result["ns"] = op.ns
        result.update(extra)
        return result

    def _do_lock(self, op: Op) -> dict:  # step: op.lock
        value, last_node = self.engine.match(_key(op), op.ns)
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
        # the parser gives evict its count, and the component when one is named (``evict 2 host``)
        freed = self._evict(op.count or 0, op.mode)
        result: dict[str, object] = {"evicted": len(freed), "freed_slots": freed}
        if op.mode is not None:
            result["component"] = op.mode
        return result

    def _do_engine(self, op: Op) -> dict:  # step: op.engine
        # the first release's switches (#7, #4) start off on a fresh engine
        self.options["buggy"] = False
        spec = engine_spec(str(op.mode))
        self._fresh_engine(spec, self._settings_for(spec))  # step: engine
        self.engine_ops.opened()
        self._step("engine", "engine", engine=op.mode, **self.spec.pick(self.options))
        return {"engine": op.mode}

    def _do_option(self, op: Op) -> dict:  # step: op.option
        """A registered engine's own option (options.py): changed on the live cache where the
        option says it can be, else on a fresh cache (locks are gone), as ``page-size`` does."""
        option = option_ops()[op.name]
        value = op.count if option.limit is not None else (op.mode == "on" if option.is_switch else op.mode)
        self.set_option(option.name, value)  # step: option
        changed: dict[str, Any] = {option.name: value}
        self._step("option", "option", **changed)
        return {option.name: value}

    def _do_reset(self, op: Op) -> dict:  # step: op.reset
        self._pictures = []  # a new pool object may reuse an old one's id
        self.engine.reset(TokenToKVPool(self.pool_size, device=self.device))  # step: reset
        self.locks.clear()
        self.knowingly_broken = False
        self._step("reset", "reset")
        return {}

    def set_option(self, name: str, value: object) -> None:
        """Set the engine's option ``name``: on the live cache where the option says it can
        change in place (``Engine.change``), else on a fresh cache whose settings are the
        engine's with that one value replaced (checked as they are made; locks are gone)."""
        live = next(option.live for option in self.spec.options if option.name == name)
        if live:
            self.engine.change(name, value)
        else:
            self._fresh_engine(self.spec, self.engine.settings.replace(**{name: value}))
        self.options[name] = value   # kept for a later ``engine`` line

    def _settings_for(self, spec: EngineSpec) -> EngineSettings:
        """Engine ``spec``'s settings from the values this session keeps for every option."""
        return spec.settings_type(self.pool_size, **spec.pick(self.options))

    def _open(self, spec: EngineSpec, pool: TokenToKVPool) -> CacheEngine:
        # the engine gets the session's settings object whole (made and checked once)
        engine = spec.engine_class(spec, pool, self.settings)
        engine.observer = self._on_event
        return engine

    def _fresh_engine(self, spec: EngineSpec, settings: EngineSettings | None = None) -> None:
        """Another engine or page size: a new, empty cache on a new pool (locks are gone),
        with ``settings`` (checked as they were made) or the engine's own now."""
        self._pictures = []
        self.settings = settings if settings is not None else self.engine.settings
        self.engine = self._open(spec, TokenToKVPool(self.pool_size, device=self.device))
        self.locks.clear()

    def _evict(self, num_tokens: int, component: str | None = None) -> list:
        freed: list = []
        self.engine.evict(num_tokens, lambda slots: freed.extend(slots.tolist()), component)
        return freed

    # ------------------------------------------------------------------ frames

    def _on_event(self, event) -> None:
        marks = self._marks
        kind = _KIND_WORDS.get(event.kind) or kind_name(event.kind)   # an engine's own kind: its name
        if kind == "append":
            marks["path"] = marks.get("path", ()) + event.nodes
            if event.nodes[0] in self.engine_ops.wrong_ahead:
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
        self._add_frame(kind, event.data, event.picture, event.source, event.step, event.nodes, slots, event)

    def _step(self, kind: str, step: str, source: str = __name__, **data) -> None:
        """A step outside the engine, labelled ``step`` (the line of module ``source`` that
        did it carries the marker)."""
        slots = data.get("slots", ())
        self._add_frame(kind, MappingProxyType(data) if data else EMPTY, self.engine.snapshot(),
                        source, step, (), slots, None)

    def _picture(self) -> list[Sequence[int]]:
        """Every pool as it is now (the facade's, then the engine's further ones, in declared
        order), each picture reused until its pool changes."""
        pools: tuple[SlotPool, ...] = (self.pool, *self.engine.extra_pools())
        if len(self._pictures) != len(pools):
            self._pictures = [(None, None)] * len(pools)
        self._new_bytes = 0
        for i, pool in enumerate(pools):
            version, last = self._pictures[i]
            now = pool.picture_version()
            if now != version or last is None:
                # chunks of slots that did not change are shared with the picture before
                last = pool.picture(last)
                self._pictures[i] = (now, last)
                self._new_bytes += getattr(last, "new_bytes", 8 * len(last))
        return [picture for _, picture in self._pictures if picture is not None]

    def _add_frame(self, kind, data, tree, source, step, nodes, slots, event) -> None:
        # what keeping this frame costs: its own objects, and what it shares with no frame before
        cost = FRAME_BYTES + 8 * (len(nodes) + len(slots))
        made = built_bytes()   # the node snapshots made since the last frame: this one's own
        if isinstance(tree, LazyTree):   # its header and the one node it changed
            cost += LAZY_BYTES + made + (unshared_bytes(tree.changed, None) if tree.changed is not None else 0)
        else:
            # an engine whose snapshot does not go through snapshot_subtree: compare the trees
            cost += made if made or tree.root is self._last_root else unshared_bytes(tree.root, self._last_root)
            self._last_root = tree.root
        counts = self._picture()
        cost += self._new_bytes
        # one current node: a split's lower half keeps its ✂ mark, a heap shows its top
        more = tuple(tuple(data.get(c.touched, ())) for c in self.engine.memory[1:] if c.pooled) \
            if len(counts) > 1 else ()
        marks = Marks(current=tuple(nodes[:1]), slots=tuple(slots), more_slots=more, **self._marks) \
            if self._marks else Marks(tuple(nodes[:1]), slots=tuple(slots), more_slots=more)
        op_index = self._record.index if self._record is not None else len(self.records)
        self.frames.append(Frame(len(self.frames), op_index, kind, data, tree,
                                 PoolSnapshot(counts[0], tree, tuple(counts[1:])), marks, source, step,
                                 nodes, event), cost)


def lock_name(key, ns) -> str:
    """``'Hello_'`` or ``'Hello_' ns lora-a``: a script lock as messages name it."""
    return key_text(key) if ns is None else f"{key_text(key)} ns {ns}"


def _named(owners: tuple) -> str:
    names = list(owners) or ["no"]
    return f"the {' or '.join(names)} engine: start with 'engine {names[0]}'"


def _key(op: Op) -> tuple:
    """The key of a key operation (the parser gives every one of them its key)."""
    if op.key is None:
        raise ValueError(f"{op.name} has no key")
    return op.key
