"""Every engine, named once: how to open it, the options it takes and what it has.

Callers never ask "is this the 2026 engine?": they open an engine by name
(``open_engine("2026", pool, page_size=4)``) and get the same verbs from every one
(facade.py), and where a view or a script must know what an engine has (a #7 switch, pages,
priorities), it asks this table: ``engine_spec(tree.engine).pages``.

Adding an engine is a new wing, ``radixviz/engines/NAME/`` beside ``v2024/``, ``v2026/`` and
``hicache/`` (its cache, nodes, invariants, preview, and an ``Engine`` in its ``__init__``: the
facade subclass that maps the verbs onto it; then, as it needs them, its ``ops``, ``views``,
``sim``, ``quiz`` and ``checks`` modules: docs/architecture.md) and one ``register(...)`` line at
the bottom of this file, the one list of wings: shared code imports no wing, it asks this table. Its options are
``Option`` declarations (options.py), each once, named in its spec: the command line's flags,
the script's operations, their limits, defaults, help and refusals are made from them. Nothing
here loads torch, so the parser and the command line read names and capabilities before any
engine does.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

from .options import (COMPONENTS, EVICTION, HEAD_BUGS, HOST_SIZE, HOST_TO_DEVICE_RATIO, KV_EVENTS, MAMBA_CHUNK,
                      MAMBA_PER_PATH, MAMBA_POOL, MATCHER, PAGE, SHAPE, STRICT, SWA_POOL, WINDOW, WRITE_POLICY,
                      EngineSettings, Option, check_components, check_host_size, settings_type)

if TYPE_CHECKING:
    from .facade import CacheEngine
    from .pool import TokenToKVPool


@dataclass(frozen=True)
class EngineSpec:
    """One engine: its name, where it lives, its options and its capabilities.

    The capabilities are what callers branch on, never the name: ``matcher_switch`` the #7
    switch (``matcher buggy``), ``release_insert`` the #4 switch (``insert-slots release``),
    ``pages`` a page size (keys are cut to whole pages), ``priorities`` an insert priority,
    ``eviction_policies`` a choice of eviction order, ``node_stats`` nodes that count hits,
    keep a priority and a creation time and locks counted as a protected size, ``host_tier``
    a second tier of KV in host memory, ``namespaces`` keys with an extra key (``insert "…" ns
    lora-a``) that never share nodes across namespaces, ``kv_events`` page hashes and KV events
    (the option ``kv_events`` turns them on). The host-tier engine's option ``head_bugs``
    brings back SGLang's two write_back bugs of 9fbe6800a (``hicache-fixes off``).
    """
    name: str                       # as a person types it: ``engine 2026``, ``--engine 2026``
    package: str                    # the module whose ``Engine`` opens it (a wing's engine.py)
    title: str                      # one line for help texts and narration
    options: tuple[Option[object], ...] = ()     # each declared once (options.py): flag, limits, default
    words: Callable[[Mapping], tuple] = lambda settings: ()   # settings -> ("page 4", "lfu")
    # the options checked together, with the pool size (ValueError: one line), when the settings
    # object is made (options.py EngineSettings.__post_init__); None: no such check
    check: Callable[[EngineSettings], None] | None = None
    # the wing's module that registers the views of this engine's snapshot types on the
    # shared ones (render/views/), imported when one of its trees is first drawn; None: the
    # shared views of plain snapshots
    views: str | None = None
    # the wing's modules that bring the rest of this engine, one in each layer, imported by
    # name on first use as ``views`` is (none loads torch before the engine does): its script
    # operations and their narration (``ops``, on script/ops/'s EngineOps), its hooks in the
    # scheduler loop and its ``simulate`` (``sim``, on sim/engines/), its quiz generators
    # (``quiz``: GENERATORS and LESSON_TOPICS, read by lessons/quiz/generate.py) and the counts
    # a lesson may predict of its trees (``checks``, on lessons/lesson/checker.py's tree_counts)
    script: str | None = None
    sim: str | None = None
    quiz: str | None = None
    checks: str | None = None
    # the script operation words this engine's script module handles (another engine refuses them)
    ops: tuple[str, ...] = ()
    # the kinds of step its cache emits beyond the shared ones (trace.py EventKind), each with
    # the words a view says of it: ``{"tombstone": "one component's data left a node; it stays"}``
    kinds: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    matcher_switch: bool = False
    release_insert: bool = False
    pages: bool = False
    priorities: bool = False
    eviction_policies: bool = False
    node_stats: bool = False
    host_tier: bool = False
    namespaces: bool = False
    kv_events: bool = False
    # the SGLang whose scheduler ``simulate`` runs this engine under by default (sim/
    # schedule_v0523.py): the release's loop for the engines of 2024 and March 2026; an engine
    # of v0.5.23's own (the unified tree) names "v0.5.23"; ``--scheduler`` overrides it
    scheduler: str = "2024"
    # the SGLang whose KV-event wire ``publish`` speaks for this engine by default (docs/wire.md):
    # 9fbe6800a's arrays for the engines of March 2026; an engine of v0.5.23's own names
    # "v0.5.23"; ``--wire`` / ``--publish-wire`` override it
    wire: str = "9fbe6800a"

    def has(self, capability: str) -> bool:
        """Whether this engine has ``capability`` (one of the flags above, by name)."""
        if capability not in CAPABILITIES:
            raise ValueError(f"no capability {capability!r}: {', '.join(CAPABILITIES)}")
        return getattr(self, capability)

    @property
    def defaults(self) -> dict[str, object]:
        """Option name -> its default, for every option this engine takes."""
        return {option.name: option.default for option in self.options}

    def takes(self, name: str) -> bool:
        return any(option.name == name for option in self.options)

    @property
    def settings_type(self) -> type[EngineSettings]:
        """The settings dataclass of this engine: the pool size and a field per declared
        option, checked (each value, then ``check``) whenever one is made."""
        return settings_type(self.name, self.options, self.check)

    def make_settings(self, pool_size: int, **options: object) -> EngineSettings:
        """The engine's settings for a pool of ``pool_size`` slots: its defaults, overridden by
        ``options``; ValueError (one line) names an option this engine does not take or a value
        it refuses."""
        unknown = sorted(set(options) - {option.name for option in self.options})
        if unknown:
            raise ValueError(f"engine {self.name} takes no option {unknown[0]!r} "
                             f"(it takes: {', '.join(self.defaults) or 'none'})")
        return self.settings_type(pool_size, **options)

    def pick(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The part of ``options`` (values meant for any engine) this engine takes."""
        return {option.name: options[option.name] for option in self.options if option.name in options}

    @property
    def engine_class(self) -> type[CacheEngine]:
        """The facade subclass that opens this engine (loads its subpackage, and torch)."""
        made: type[CacheEngine] = import_module(self.package).Engine
        return made

    def open(self, pool: TokenToKVPool, settings: EngineSettings | None = None, **options: object) -> CacheEngine:
        """This engine, empty, on ``pool``, behind the facade (facade.Engine), with
        ``settings`` (else those ``options`` make for the pool). Loads its subpackage (and
        torch) on first use; ValueError for a bad option."""
        return self.engine_class(self, pool, self.make_settings(pool.size, **options) if settings is None else settings)

    def lacks(self, capability: str) -> str:
        """The refusal of something only engines with ``capability`` do: ``engine 2024 has no
        namespaces: that is the 2026 or hicache engine's``."""
        owners = " or ".join(spec.name for spec in _with(capability)) or "no"
        return f"engine {self.name} has no {capability.replace('_', ' ')}: that is the {owners} engine's"

    def part(self, kind: str) -> ModuleType | None:
        """This engine's module for ``kind`` (``views``, ``script``, ``sim``, ``quiz`` or ``checks``),
        imported on first use; None where the engine brings none (the shared code serves it)."""
        name = getattr(self, kind) if kind in PARTS else None
        if kind not in PARTS:
            raise ValueError(f"no part {kind!r}: {', '.join(PARTS)}")
        return None if name is None else import_module(name)

    def badge(self, settings: Mapping) -> str:
        """``2026 · page 4 · lfu``: the engine and its settings in a few words."""
        return " · ".join((self.name, *self.words(settings)))


PARTS = ("views", "script", "sim", "quiz", "checks")
CAPABILITIES = ("matcher_switch", "release_insert", "pages", "priorities", "eviction_policies",
                "node_stats", "host_tier", "namespaces", "kv_events")
_ENGINES: dict[str, EngineSpec] = {}


def register(spec: EngineSpec) -> EngineSpec:
    """Add an engine; return its spec. ValueError for a name already taken: two engines
    under one name would silently change what every script with ``engine NAME`` runs."""
    if spec.name in _ENGINES:
        raise ValueError(f"engine {spec.name!r} is registered already ({_ENGINES[spec.name].package}): "
                         "unregister it first or pick another name")
    _ENGINES[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Take an engine out of the table (tests that register a toy engine clean up with it)."""
    _ENGINES.pop(name, None)


def engine_names() -> tuple:
    """The names of every engine, in the order they were registered."""
    return tuple(_ENGINES)


def engine_spec(name: str) -> EngineSpec:
    """The spec of engine ``name``; ValueError names the engines there are."""
    try:
        return _ENGINES[str(name)]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}: use {' or '.join(_ENGINES)}") from None


def open_engine(name: str, pool: TokenToKVPool, **options: object) -> CacheEngine:
    """Engine ``name``, empty, on ``pool``, behind the facade (see ``EngineSpec.open``)."""
    return engine_spec(name).open(pool, None, **options)


def default_engine() -> str:
    """The engine a session, a run and the scheduler loop open when none is named: the first
    registered, the first release's cache (the one the chapter reads)."""
    return next(iter(_ENGINES))


def engine_with(capability: str, without: str | None = None) -> str:
    """The first registered engine that has ``capability`` (and not ``without``): what a
    feature that needs it opens (``engine_with("pages", without="host_tier")``: today's cache)."""
    return next(spec.name for spec in _with(capability) if without is None or not spec.has(without))


def _with(capability: str) -> tuple[EngineSpec, ...]:
    return tuple(spec for spec in _ENGINES.values() if spec.has(capability))


def owners_of(capability: str) -> str:
    """``the 2026 or hicache engine: start with 'engine 2026'``: where something only engines
    with ``capability`` do belongs, as a refusal says it."""
    names = [spec.name for spec in _with(capability)] or ["no"]
    return f"the {' or '.join(names)} engine: start with 'engine {names[0]}'"


def flag_owners(capability: str, without: str | None = None) -> str:
    """``2026|hicache``: the engines with ``capability`` (and not ``without``), as a command
    line's refusal names them."""
    return "|".join(spec.name for spec in _with(capability) if without is None or not spec.has(without))


def all_options() -> dict[str, object]:
    """Every engine's options with their defaults (a session keeps one value for each)."""
    return {option.name: option.default for option in declared_options()}


def op_owners(op_name: str) -> tuple[str, ...]:
    """The names of the engines whose script module handles operation ``op_name``
    (``sync``: the host tier's); () for an operation every engine takes."""
    return tuple(spec.name for spec in _ENGINES.values() if op_name in spec.ops)


def declared_options(command: str | None = None) -> tuple[Option, ...]:
    """Every registered engine's options, each once (the first engine to name it declares
    it), in registry order; only those ``command`` offers, when given."""
    found: dict[str, Option] = {}
    for spec in _ENGINES.values():
        for option in spec.options:
            if command is None or command in option.commands:
                found.setdefault(option.name, option)
    return tuple(found.values())


def option_owners(name: str) -> tuple[str, ...]:
    """The names of the engines that take option ``name``."""
    return tuple(spec.name for spec in _ENGINES.values() if spec.takes(name))


def option_ops() -> dict[str, Option]:
    """Script operation word -> the option it sets, for every option that has one."""
    return {option.op_name: option for option in declared_options() if option.op_name}


def _matcher(settings: Mapping) -> tuple:
    return ("matcher BUGGY (pre-#7)" if settings.get("buggy") else "matcher fixed (#7)",)


def _pages_and_policy(settings: Mapping) -> tuple:
    words = (f"page {settings.get('page_size', PAGE.default)}", settings.get("eviction_policy", EVICTION.default))
    return words + ("kv events",) if settings.get("kv_events") else words


# the host tier's 9fbe6800a bugs (engines/hicache/cache_head_bugs.py, which loads torch: named again here)
_HEAD_BUG_WORDS = {"load_back_unprotected": "load-back", "host_leaf_by_evicted": "host-leaf"}


def _host_tier(settings: Mapping) -> tuple:
    host = settings.get("host_size")
    bugs = settings.get("head_bugs") or ()
    # first, so a narrow status line that keeps only the badge's first words keeps this
    flagged = (f"BUGS 9fbe6800a: {', '.join(_HEAD_BUG_WORDS.get(b, b) for b in bugs)}",) if bugs else ()
    return (*flagged, *_pages_and_policy(settings), settings.get("write_policy", WRITE_POLICY.default),
            f"host {host}" if host else f"host {HOST_TO_DEVICE_RATIO:g}x")


_TODAYS_OPS = ("page-size", "eviction", "events")
# ``strict=False`` lets the 2024 engine take a value shorter than its key, as the release's
# scheduler handed it one before #4 (``insert-slots release``, ``simulate --insert release``)
register(EngineSpec("2024", "radixviz.engines.v2024.engine", "the first release's cache (SGLang, January 2024)",
                    (MATCHER, STRICT), _matcher, script="radixviz.engines.v2024.ops", sim="radixviz.engines.v2024.sim",
                    ops=("matcher", "insert-slots"), matcher_switch=True, release_insert=True))
register(EngineSpec("2026", "radixviz.engines.v2026.engine", "today's cache (SGLang, March 2026)",
                    (PAGE, EVICTION, KV_EVENTS), _pages_and_policy, views="radixviz.engines.v2026.views",
                    script="radixviz.engines.v2026.ops", sim="radixviz.engines.v2026.sim",
                    quiz="radixviz.engines.v2026.quiz", checks="radixviz.engines.v2026.checks", ops=_TODAYS_OPS,
                    pages=True, priorities=True, eviction_policies=True, node_stats=True,
                    namespaces=True, kv_events=True))
register(EngineSpec("hicache", "radixviz.engines.hicache.engine",
                    "today's cache with a host-memory tier (SGLang's HiRadixCache, March 2026)",
                    (PAGE, EVICTION, KV_EVENTS, HOST_SIZE, WRITE_POLICY, HEAD_BUGS), _host_tier, check_host_size,
                    views="radixviz.engines.hicache.views", script="radixviz.engines.hicache.ops",
                    sim="radixviz.engines.hicache.sim", quiz="radixviz.engines.hicache.quiz",
                    checks="radixviz.engines.hicache.checks",
                    ops=(*_TODAYS_OPS, "host-size", "write-policy", "sync", "auto-sync", "load-back",
                         "evict-host", "hicache-fixes"),
                    pages=True, priorities=True, eviction_policies=True, node_stats=True,
                    namespaces=True, kv_events=True, host_tier=True))


def _components(settings: Mapping) -> tuple:
    parts = tuple(settings.get("components") or COMPONENTS.default)
    words = ["+".join(parts)]
    if "swa" in parts:
        words.append(f"window {settings.get('window')}")
    if "mamba" in parts:
        words.append(f"state every {settings.get('mamba_chunk', MAMBA_CHUNK.default)}")
    return (*words, f"page {settings.get('page_size', PAGE.default)}", settings.get("eviction_policy", EVICTION.default))


# the unified tree's own kinds of step (engines/unified/cache_kinds.py), in the words views say
_UNIFIED_KINDS = MappingProxyType({
    "validate": "each component's rule says whether a match may end on this node",
    "walk": "the walk passes this node's Full KV; the match returns it only if a node at or below is accepted",
    "tombstone": "one component's data left this node; the node stays, with its Full KV",
    "cascade": "evicting one component took a lower one's data on the same node with it",
    "recover": "an insert gave an SWA tombstone inside its window its sliding-window KV back",
    "state": "a component's data was attached to this node (SWA KV, or a Mamba state)",
    "copy": "the request gets its own Mamba slot holding a copy of the matched state",
    "window": "an SWA lock stamped the node where the window it holds begins",
    "branch": "where the request should keep a window or a state so the next request can reuse more",
})
register(EngineSpec("unified", "radixviz.engines.unified.engine",
                    "SGLang v0.5.23's unified tree: full, sliding-window and Mamba components (October 2026)",
                    (COMPONENTS, WINDOW, PAGE, MAMBA_CHUNK, EVICTION, KV_EVENTS, SWA_POOL, MAMBA_POOL, MAMBA_PER_PATH,
                     SHAPE),
                    _components, check_components, views="radixviz.engines.unified.views",
                    script="radixviz.engines.unified.ops", sim="radixviz.engines.unified.sim",
                    quiz="radixviz.engines.unified.quiz", ops=("page-size", "eviction", "events"), kinds=_UNIFIED_KINDS,
                    pages=True, priorities=True, eviction_policies=True, node_stats=True, kv_events=True,
                    scheduler="v0.5.23", wire="v0.5.23"))
