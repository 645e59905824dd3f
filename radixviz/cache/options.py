"""An engine's options as data: each is declared once, here or in the module of the engine
that brings it, and named in that engine's registry line (engines.py).

From an ``Option`` the command line builds its flag (``--page-size N``, with the limits, the
default and the help line), refuses it for an engine that does not take it, and the script
parses its operation (``page-size 4``); a session keeps one value per option name. Nothing
here loads torch.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, make_dataclass
from functools import cache
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar, cast

from radixviz.limits import HOST_SLOTS, PAGE_SIZE, Limit

from .evict_policy import POLICY_NAMES
from .write_policy import WRITE_POLICY_NAMES

# SGLang's --hicache-ratio default: the host pool holds twice the device pool's tokens
# (engines/hicache/cache_host_pool.py sizes it; help texts and badges say it from here)
HOST_TO_DEVICE_RATIO = 2.0
COMMANDS = ("run", "export", "sandbox", "simulate")   # where an option may apply
SWITCH_WORDS = ("on", "off")                          # a yes/no option's script words


T = TypeVar("T")
V = TypeVar("V", covariant=True)   # an option's value: an Option[int] is an Option[object]


@dataclass(frozen=True)
class Option(Generic[V]):
    """One setting an engine takes. Its kind comes from what it declares: ``limit`` a whole
    number in bounds, ``choices`` one of a few words, else a yes/no switch (a bool default).
    Typed by its value: an engine reads ``settings.of(PAGE)`` as an int."""
    name: str                   # the settings key, as the engine reads it: ``page_size``
    default: V                  # the one default there is (None: the engine works it out)
    help: str                   # one line, for --help and the script's usage
    limit: Limit | None = None
    choices: tuple[str, ...] = ()
    what: str = ""              # what an engine taking it has, for a refusal: "pages"
    flag: str | None = ""       # the command-line flag ("": from the name; None: no flag)
    op: str | None = ""         # the script operation ("": from the name; None: none)
    commands: tuple[str, ...] = COMMANDS   # the commands that offer the flag
    live: bool = False          # the live cache changes it in place (Engine.change); else a fresh cache
    many: bool = False          # with ``choices``: any of them, comma-separated ("all": every one)

    @property
    def flag_name(self) -> str | None:
        """``--page-size`` (None: the option has no flag)."""
        if self.flag is None:
            return None
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def op_name(self) -> str | None:
        """The script operation that sets it, ``page-size`` (None: no operation)."""
        if self.op is None:
            return None
        return self.op or self.name.replace("_", "-")

    @property
    def is_switch(self) -> bool:
        return self.limit is None and not self.choices

    def metavar(self) -> str:
        if self.many:
            return "all|" + ",".join(self.choices)
        return "N" if self.limit is not None else "|".join(self.choices) or ""

    def usage(self) -> str:
        """The operation as a person types it: ``window 4``, ``eviction lru|lfu``."""
        if self.limit is not None:
            example = self.default if self.default is not None else max(self.limit.low, 4)
            return f"{self.op_name} {example}"
        return f"{self.op_name} {'|'.join(self.choices or SWITCH_WORDS)}"

    def parse(self, text: str) -> V:
        """The value ``text`` names; ValueError with the words of a one-line refusal."""
        word = str(text).strip()
        if self.many:
            return cast(V, self._parse_names(word))
        if self.limit is not None:
            return cast(V, self.limit.check(word))
        words = self.choices or SWITCH_WORDS
        value = word.lower().replace("-", "_") if self.choices else word.lower()
        if value not in words:
            raise ValueError(f"unknown {self.name.replace('_', ' ')} {word!r}: use {', '.join(words)}")
        return cast(V, value == "on" if self.is_switch else value)

    def check(self, value: object) -> None:
        """ValueError, in ``parse``'s words, unless ``value`` is one this option takes (the
        settings object checks every value it is made with, whoever parsed it)."""
        if value is None and self.default is None:
            return
        if self.many:
            if not isinstance(value, tuple) or not set(value) <= set(self.choices):
                raise ValueError(f"unknown {self.name.replace('_', ' ')} {value!r}: use all or "
                                 f"{', '.join(self.choices)}")
        elif self.limit is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{self.limit.label} must be a whole number, not {value!r}")
            self.limit.check(value)
        elif self.choices:
            if value not in self.choices:
                raise ValueError(f"unknown {self.name.replace('_', ' ')} {value!r}: use {', '.join(self.choices)}")
        elif not isinstance(value, bool):
            raise ValueError(f"{self.name.replace('_', ' ')} is on or off, not {value!r}")

    def _parse_names(self, word: str) -> tuple[str, ...]:
        names = {part.strip().replace("-", "_").lower() for part in word.split(",") if part.strip()}
        if "all" in names:
            return self.choices
        unknown = sorted(names - set(self.choices))
        if unknown or not names:
            shown = unknown[0] if unknown else word
            raise ValueError(f"unknown {self.name.replace('_', ' ')} {shown!r}: use all or {', '.join(self.choices)}")
        return tuple(name for name in self.choices if name in names)

    @property
    def kind(self) -> object:
        """The type of its value: a whole number, a word, several words or a yes/no."""
        if self.many:
            return tuple[str, ...]
        kind: type = int if self.limit is not None else str if self.choices else bool
        return kind | None if self.default is None else kind

    def default_text(self) -> str:
        if self.many:
            return ",".join(cast("tuple[str, ...]", self.default)) or "none"
        return "off" if self.default is False else "on" if self.default is True else str(self.default)


class EngineSettings(Mapping[str, object]):
    """One engine's settings: the pool it opens on and a field per declared option, made as a
    ``@dataclass(frozen=True, slots=True)`` per engine (``settings_type``) and checked once, in
    ``__post_init__``, where it is made (the command line, a script line, the scheduler form):
    each value against its option, then the engine's check of them together. Passed whole to
    the engine; a live change (``replace``) makes a new one, checked the same way. A Mapping
    of the options too, so badges read ``settings["page_size"]`` as they read a snapshot's."""

    __slots__ = ()
    pool_size: int                                    # the device pool's slots (a field of each type)
    engine: ClassVar[str] = ""                        # the registry's name of the engine they are for
    declared: ClassVar[tuple[Option[object], ...]] = ()
    names: ClassVar[tuple[str, ...]] = ()             # the declared options' names, in order
    together: ClassVar[tuple[Callable[[EngineSettings], None], ...]] = ()

    if TYPE_CHECKING:   # what settings_type's dataclasses take
        def __init__(self, pool_size: int, **options: object) -> None: ...

    def __post_init__(self) -> None:
        if isinstance(self.pool_size, bool) or not isinstance(self.pool_size, int) or self.pool_size < 1:
            raise ValueError(f"pool size must be a positive whole number, not {self.pool_size!r}")
        for option in self.declared:
            option.check(getattr(self, option.name))
        for check in self.together:
            check(self)

    def of(self, option: Option[T]) -> T:
        """The value of ``option`` (one this engine declares), typed by the option."""
        return cast(T, getattr(self, option.name))

    def replace(self, **changes: object) -> EngineSettings:
        """These settings with ``changes``, checked as new ones are (ValueError)."""
        values: dict[str, object] = {name: getattr(self, name) for name in self.names}
        values.update(changes)
        pool_size = values.pop("pool_size", self.pool_size)
        if not isinstance(pool_size, int):
            raise ValueError(f"pool size must be a positive whole number, not {pool_size!r}")
        return type(self)(pool_size, **values)

    def __getitem__(self, name: str) -> object:
        if name not in self.names:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


@cache
def settings_type(engine: str, options: tuple[Option[object], ...],
                  check: Callable[[EngineSettings], None] | None = None) -> type[EngineSettings]:
    """The settings dataclass of an engine with these options and this check of them
    together (made once per engine)."""
    title = "".join(part.capitalize() for part in engine.replace("-", "_").split("_")) or "Engine"
    made = make_dataclass(f"Settings{title}", [("pool_size", int),
                                               *((o.name, o.kind, field(default=o.default)) for o in options)],
                          bases=(EngineSettings,), frozen=True, slots=True,
                          namespace={"engine": engine, "declared": options, "names": tuple(o.name for o in options),
                                     "together": (check,) if check else ()})
    return made


# The options today's engines share: one declaration, so one default, limits and help each.
MATCHER: Option[bool] = Option("buggy", False, "start with the pre-#7 matcher", what="the #7 matcher switch",
                               op="matcher", commands=("run", "export", "sandbox"), live=True)
STRICT: Option[bool] = Option("strict", True, "refuse a value shorter than its key (False: as before #4)",
                              flag=None, op=None)
PAGE: Option[int] = Option("page_size", PAGE_SIZE.default or 1, f"tokens per page, {PAGE_SIZE.low} to {PAGE_SIZE.high}",
                           limit=PAGE_SIZE, what="pages")
EVICTION: Option[str] = Option("eviction_policy", "lru", f"the eviction order: {', '.join(POLICY_NAMES)}",
                               choices=POLICY_NAMES, what="eviction policies", op="eviction", live=True)
KV_EVENTS: Option[bool] = Option("kv_events", False, "KV events on: the cache hashes its pages and reports each "
                                 "page stored and removed", what="KV events", flag="--events", op="events",
                                 commands=("run", "export", "sandbox"))
HOST_SIZE: Option[int | None] = Option("host_size", None, f"host pool slots, more than --pool-size (default: "
                                       f"{HOST_TO_DEVICE_RATIO:g}x the pool, plus a page, as SGLang's ratio gives)",
                                       limit=HOST_SLOTS, what="a host tier")
WRITE_POLICY: Option[str] = Option("write_policy", "write_through", f"when a node is copied to the host: "
                                   f"{', '.join(WRITE_POLICY_NAMES)}", choices=WRITE_POLICY_NAMES,
                                   what="a host tier", live=True)

# SGLang's two write_back bugs of 9fbe6800a the host tier can bring back (engines/hicache/cache_head_bugs.py,
# which loads torch, holds the same names); the script's ``hicache-fixes`` sets them too
HEAD_BUG_NAMES = ("load_back_unprotected", "host_leaf_by_evicted")
HEAD_BUGS: Option[tuple[str, ...]] = Option("head_bugs", (), "bring back SGLang's write_back bugs of 9fbe6800a: all (when "
                                            "given alone) or " + ", ".join(HEAD_BUG_NAMES), choices=HEAD_BUG_NAMES, many=True,
                                            what="a host tier", op=None, live=True)


def check_host_size(settings: EngineSettings) -> None:
    """ValueError unless the host pool is larger than the device pool and whole pages, as
    SGLang requires (the hicache engine's check of its options together)."""
    host, page, pool_size = settings.of(HOST_SIZE), settings.of(PAGE), settings.pool_size
    if host is None:
        return
    if host <= pool_size:
        raise ValueError(f"host size {host}: the host pool must be larger than the device pool "
                         f"({pool_size} slots), as SGLang requires")
    if host % page:
        raise ValueError(f"host size {host} is not whole pages of {page}")


# SGLang v0.5.23's unified tree (engines/unified/): which components a node holds data for,
# the sliding window, where Mamba states are kept, and the two further pools' sizes
COMPONENT_NAMES = ("full", "swa", "mamba")
COMPONENTS: Option[tuple[str, ...]] = Option("components", ("full",), "what the tree's nodes hold: full (always), and "
                                             "swa (sliding-window KV, needs --window) and mamba (a recurrent state)",
                                             choices=COMPONENT_NAMES, many=True, what="components")
WINDOW: Option[int | None] = Option("window", None, "the sliding window in tokens (the swa component's W)",
                                    limit=Limit("window", 1, 4096), what="a sliding window")
MAMBA_CHUNK: Option[int] = Option("mamba_chunk", 64, "tokens between the points a Mamba state may be kept "
                                  "(SGLang's chunk: 64; a small one shows the branching points)",
                                  limit=Limit("Mamba state spacing", 1, 4096), what="Mamba states")
SWA_POOL: Option[int | None] = Option("swa_pool", None, "slots in the sliding-window KV pool (default: --pool-size)",
                                      limit=Limit("swa pool", 1, 1 << 20), what="a sliding window")
MAMBA_POOL: Option[int | None] = Option("mamba_pool", None, "Mamba state slots (default: a sixteenth of --pool-size, "
                                        "at least 8)", limit=Limit("mamba pool", 1, 1 << 16), what="Mamba states")
MAMBA_PER_PATH: Option[int | None] = Option("mamba_per_path", None, "the most Mamba states kept on one path "
                                            "(default: no limit)", limit=Limit("Mamba states a path", 1, 4096),
                                            what="Mamba states")

# a model's layout, as ``simulate`` runs it on the unified engine (engines/unified/sim.py SHAPES)
SHAPE_NAMES = ("full", "swa_5to1", "linear", "hybrid")
SHAPE: Option[str | None] = Option("shape", None, "a model's layout for the unified tree: full (attention only), "
                                   "swa-5to1 (five sliding-window layers to one full one), linear (linear "
                                   "attention, a state every --mamba-chunk tokens), hybrid (both); sets the "
                                   "components, window and pools you do not give", choices=SHAPE_NAMES,
                                   what="model shapes", op=None, commands=("simulate",))


def default_mamba_pool(pool_size: int) -> int:
    """The Mamba pool a unified engine gets when none is named (``MAMBA_POOL``'s help says it)."""
    return max(8, pool_size // 16)


def check_components(settings: EngineSettings) -> None:
    """ValueError unless the unified engine's options fit together: full among the components,
    a window with swa, a state spacing and page that divide one another, pools of a page."""
    components, page = settings.of(COMPONENTS), settings.of(PAGE)
    if "full" not in components:
        raise ValueError("components: full (full-attention KV) is the tree's backbone and must be one of them")
    if "swa" in components and settings.of(WINDOW) is None:
        raise ValueError("the swa component needs its sliding window: --window N (script: window N first)")
    chunk = settings.of(MAMBA_CHUNK)
    if "mamba" in components and max(chunk, page) % min(chunk, page):
        raise ValueError(f"the Mamba state spacing ({chunk}) and the page size ({page}) must divide one another")
    for name, size in (("pool size", settings.pool_size), ("swa pool", settings.of(SWA_POOL))):
        if size is not None and size < page:
            raise ValueError(f"{name} {size} holds no whole page of {page}")
