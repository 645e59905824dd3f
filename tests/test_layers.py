"""The layers hold: imports point down only, and no module imports itself in a circle.

Read from the source with ``ast`` (nothing is imported), counting every import: at module
level, inside functions, and under ``if TYPE_CHECKING``. Layers, lowest first; a module may
import its own layer and the layers below it, never one above:

    radixviz (the package), errors   exit codes and UsageError; import nothing of radixviz
    limits                           Limit: the bounds of a typed number (engine options use it)
    files                            safe reading (regular files, a byte limit) and atomic writes
    collector                        the cycle collector held back while many objects are made
    cache, engines                   shared engine parts, the registry; the wings' package (by role below)
    wire                             the KV-event wire: messages, block tree, sockets
    sim                              scheduler simulation, workloads, tiny KV model
    settings                         limits for the numbers and names people type
    script                           the operation language, sessions, the KV session
    render | lessons                 Rich/Graphviz views | lesson content, quizzes, progress
    tui | classroom                  the Textual app | the web front that serves it (one app process
                                     a tab): the classroom reads only the app's scripts-folder rules
    commands                         argparse subcommands
    cli, __main__                    the entry point

Packages that share a layer are siblings: neither imports the other.

The engines' wings (``radixviz/engines/NAME/``, docs/architecture.md) cut across the layers:
each file of a wing belongs to the layer of its role, told by its name (``WING_ROLES``): its
cache, node, invariants, preview, snapshot and engine files are the cache layer (torch only, no
Rich), its ``ops`` and ``narrate`` the script layer, its ``views`` the render layer (Rich, no
Textual), its ``sim`` the simulation, its ``quiz`` and ``checks`` the lessons. A name made of a
role and more words (``cache_heap.py``, ``views_tiers.py``) takes its first word's role; a wing
file of no known role fails. Shared code (everything outside the wings) imports no wing: it asks
the registry (``radixviz/cache/engines.py``), which loads a wing's modules by name; the cache
package's lazy table of public names is the one place besides it that names a wing's modules.
Further rules: only ``tui`` imports Textual; ``cache`` and every layer below the views
import no Rich either; ``commands`` imports no TUI widget (``radixviz.tui.widgets``); and
there is no import cycle between modules. A function-local import (inside a def) is allowed
only where it defers torch, Textual, the web server (aiohttp, textual-serve), jsonschema
(40 ms, and every command imports the progress module), jinja2 (20 ms, for an HTML export
only; the web server's pages come with the web server), or what the app's first paint was
measured to wait for and its first screen does not use (bench/first_paint.py, issue 33):
markdown-it (0.03-0.05 s, until a lesson or challenge file is read), graphviz and Pillow
(exports only), pyzmq and msgspec (a command that publishes); and says so in a comment on its line or on
the imports just above; elsewhere imports go at the top.
An optional package that is not a dependency (``transformers``) is imported where it is used.

To extend: a new file inside an existing package (``cache/pool.py``,
``commands/serve.py``, ``render/html.py``, ``lessons/quiz/generate_router.py``) joins that
package's layer by itself; a new wing file takes the layer of its role (``engines/v2026/views_x.py``:
render). A new top-level module or package fails ``test_every_module_has_a_layer``
until it is added to ``LAYERS`` below, at the height it belongs.
"""
from __future__ import annotations

import ast
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "radixviz"

# lowest first; names in one tuple share a layer (as siblings when they are packages)
LAYERS = [
    ("radixviz", "radixviz.errors", "radixviz.files", "radixviz.limits", "radixviz.collector"),
    ("radixviz.cache", "radixviz.engines"),   # radixviz.engines: the wings' package (its files: WING_ROLES)
    ("radixviz.wire",),
    ("radixviz.sim",),
    ("radixviz.settings",),
    ("radixviz.script",),
    ("radixviz.render", "radixviz.lessons"),
    ("radixviz.tui", "radixviz.classroom"),
    ("radixviz.commands",),
    ("radixviz.cli", "radixviz.__main__"),
]
SIBLINGS = {"radixviz.render", "radixviz.lessons"}
NO_RICH = ("radixviz.errors", "radixviz.collector", "radixviz.cache", "radixviz.wire", "radixviz.sim",
           "radixviz.settings", "radixviz.script", "radixviz.lessons")
# what a function-local import may put off loading, and the words its reason comment uses
DEFERRED = ("torch", "textual", "aiohttp", "textual_serve", "jsonschema", "jinja2",
            # measured to hold up the first paint, unused by the first screen (issue 33): the
            # Markdown reader (and its plugins, which import it), the exports' graphviz and
            # Pillow, pyzmq and the wire's msgspec
            "markdown_it", "mdit_py_plugins", "graphviz", "PIL", "zmq", "msgspec")
# not dependencies: imported (under try) only where they are asked for -- transformers for a
# Hugging Face tokenizer name, tokenizers for a local tokenizer.json (--tokenizer FILE),
# matplotlib for simulate --figure (the [figures] extra)
OPTIONAL = ("transformers", "tokenizers", "matplotlib")
DEFER_WORDS = ("torch", "textual", "the app", "the engine", "web server", "jsonschema", "jinja2",
               "markdown-it", "graphviz", "pillow", "pyzmq", "msgspec")


WINGS = "radixviz.engines"
# a wing's file name -> the layer of its role (a file ``ROLE_MORE.py`` takes ROLE's)
WING_ROLES = {
    "__init__": "radixviz.cache", "engine": "radixviz.cache", "cache": "radixviz.cache",
    "node": "radixviz.cache", "invariants": "radixviz.cache", "preview": "radixviz.cache",
    "snapshot": "radixviz.cache",
    "ops": "radixviz.script", "narrate": "radixviz.script",
    "views": "radixviz.render",
    "sim": "radixviz.sim",
    "quiz": "radixviz.lessons", "checks": "radixviz.lessons",
}


def wing_role(module: str) -> str | None:
    """The role of a wing's module (``radixviz.engines.hicache.views_tiers``: ``views``), by
    its file's name; None for a module outside the wings or a file of no known role."""
    parts = module.split(".")
    if not starts(module, WINGS) or len(parts) not in (3, 4):
        return None
    name = parts[3] if len(parts) == 4 else "__init__"
    if name in WING_ROLES:
        return name
    first, _, more = name.partition("_")
    return first if first in WING_ROLES and more else None


def in_wing(module: str) -> bool:
    """Whether ``module`` is in a wing (``radixviz.engines.NAME`` or below)."""
    return starts(module, WINGS) and module != WINGS


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


class Import:
    """One imported module, where the import is, and what kind of place it is in."""

    def __init__(self, source: str, target: str, line: int, local: bool, type_only: bool):
        self.source, self.target, self.line = source, target, line
        self.local, self.type_only = local, type_only

    def __repr__(self) -> str:
        where = MODULES[self.source].relative_to(ROOT) if self.source in MODULES else self.source
        return f"{where}:{self.line}: imports {self.target}"


@cache
def lazy_names(package: str) -> dict:
    """``{name: submodule}`` for a package whose ``__init__`` loads names on first use from a
    table such as ``{"Session": "session"}`` (script/, sim/, cache/): an import of the name
    from the package is an import of that submodule."""
    path = MODULES.get(package)
    if path is None or path.name != "__init__.py":
        return {}
    names = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            # {"Session": "session"}, or {"ModernRadixCache": ("v2026.cache", "RadixCache")}
            # (a wing's module by its whole name: {"HiRadixCache": ("radixviz.engines.hicache.cache", ...)})
            pairs = [(k, v.elts[0] if isinstance(v, ast.Tuple) and v.elts else v)
                     for k, v in zip(node.value.keys, node.value.values)]
            if pairs and all(isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
                             and _table_module(package, v.value) in MODULES for k, v in pairs):
                names.update({k.value: _table_module(package, v.value) for k, v in pairs})
    return names


def _table_module(package: str, name: object) -> str:
    return name if isinstance(name, str) and name.startswith("radixviz.") else f"{package}.{name}"


def _targets(node, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module
    found = []
    for alias in node.names:
        name = f"{origin}.{alias.name}"
        found.append(name if name in MODULES else lazy_names(origin).get(alias.name, origin))
    return found


@cache
def imports_of(module: str) -> tuple[Import, ...]:
    path = MODULES[module]
    return parse_imports(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")


def parse_imports(source: str, module: str, is_package: bool = False) -> tuple[Import, ...]:
    """Every import in ``source``, read as the text of module ``module`` (which need not exist:
    the rules below are tried on made-up modules too)."""
    tree = ast.parse(source)
    found = []

    def visit(node, local: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend(Import(module, t, child.lineno, local, type_only)
                             for t in _targets(child, module, is_package))
            inner_local = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            inner_type = type_only or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            visit(child, inner_local, inner_type)

    visit(tree, False, False)
    return tuple(found)


ALL_IMPORTS = [imp for module in MODULES for imp in imports_of(module)]
INTERNAL = [imp for imp in ALL_IMPORTS if imp.target.split(".")[0] == "radixviz"]


def home(module: str) -> str:
    """The LAYERS entry a module belongs to (the longest that contains it; a wing's module:
    its role's), or ''."""
    if in_wing(module):
        role = wing_role(module)
        return WING_ROLES[role] if role else ""
    names = [name for layer in LAYERS for name in layer   # "radixviz" is its __init__ alone
             if module == name or (name != "radixviz" and module.startswith(name + "."))]
    return max(names, key=len, default="")


def height(module: str) -> int:
    entry = home(module)
    return next(i for i, layer in enumerate(LAYERS) if entry in layer)


def starts(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_every_module_has_a_layer():
    homeless = [m for m in MODULES if not home(m) and not in_wing(m)]
    assert not homeless, f"add these to LAYERS in {Path(__file__).name}: {homeless}"


def test_every_wing_file_has_a_role():
    unknown = [str(MODULES[m].relative_to(ROOT)) for m in MODULES if in_wing(m) and wing_role(m) is None]
    assert not unknown, (f"name these after a role of WING_ROLES in {Path(__file__).name} "
                         f"({', '.join(WING_ROLES)}; ROLE_MORE.py takes ROLE's): {unknown}")


def test_wing_roles_are_read_from_the_file_name():
    # a made-up wing: each name's layer, and the names that have none
    assert home("radixviz.engines.toy") == "radixviz.cache"           # its __init__
    assert home("radixviz.engines.toy.cache_heap") == "radixviz.cache"
    assert home("radixviz.engines.toy.views") == "radixviz.render"
    assert home("radixviz.engines.toy.views_tiers") == "radixviz.render"
    assert home("radixviz.engines.toy.quiz_head_bugs") == "radixviz.lessons"
    assert home("radixviz.engines") == "radixviz.engines"
    for nameless in ("radixviz.engines.toy.helpers", "radixviz.engines.toy.viewsx",
                     "radixviz.engines.toy.sub.cache", "radixviz.engines.toy.cache_"):
        assert wing_role(nameless) is None, nameless
        assert home(nameless) == ""


def upward(imports) -> list[Import]:
    """The imports of ``imports`` that point up a layer."""
    return [imp for imp in imports
            if imp.target.split(".")[0] == "radixviz" and height(imp.target) > height(imp.source)]


def test_imports_point_down():
    wrong = upward(INTERNAL)
    assert not wrong, "imports that point up a layer:\n" + "\n".join(map(repr, wrong))


def test_a_wing_file_keeps_to_the_layer_of_its_role():
    # made up: a wing's cache may not import a view; its views may import the script layer
    cache = parse_imports("from radixviz.render.pool import PoolGrid", "radixviz.engines.toy.cache_x")
    views = parse_imports("from radixviz.script.narrate import node_name", "radixviz.engines.toy.views_x")
    assert [imp.target for imp in upward(cache)] == ["radixviz.render.pool"]
    assert upward(views) == []


# shared modules that use the public contract (docs/architecture.md) by name (``from radixviz.cache import
# RadixCache``), with the reason: for the registry's stage 2 to remove
THROUGH_THE_FACE = {
    # #2442's scratch tree is the first release's RadixCache, as SGLang's scheduler built one
    ("radixviz.sim.policies", "radixviz.engines.v2024.cache"),
}


def shared_imports_of_wings(imports) -> list[Import]:
    """The imports of ``imports`` by shared code (outside the wings) of a wing's module."""
    return [imp for imp in imports if not in_wing(imp.source) and in_wing(imp.target)
            and (imp.source, imp.target) not in THROUGH_THE_FACE]


def test_shared_code_imports_no_wing():
    # every kind of import counts: at the top, in a function, under TYPE_CHECKING, and a name
    # of the cache package's lazy table (``from radixviz.cache import HiRadixCache``) too: a
    # shared module asks the registry (engine_spec(name).part("views")), never a wing
    wrong = shared_imports_of_wings(INTERNAL)
    assert not wrong, "shared modules that import a wing:\n" + "\n".join(map(repr, wrong))


def test_the_wing_rule_sees_every_way_of_importing_a_wing():
    made_up = parse_imports(
        "from typing import TYPE_CHECKING\n"
        "from radixviz.engines.hicache.views_pool import pool_rows\n"
        "import radixviz.engines.v2026.cache\n"
        "from radixviz.cache import HiRadixCache\n"
        "from radixviz.cache.pool import TokenToKVPool\n"
        "if TYPE_CHECKING:\n    from radixviz.engines.v2026.node import TreeNode\n"
        "def later():\n    from radixviz.engines import v2024\n",
        "radixviz.render.made_up")
    assert [(imp.line, imp.target) for imp in shared_imports_of_wings(made_up)] == [
        (2, "radixviz.engines.hicache.views_pool"), (3, "radixviz.engines.v2026.cache"),
        (4, "radixviz.engines.hicache.cache"), (7, "radixviz.engines.v2026.node"), (9, "radixviz.engines.v2024")]
    # a wing importing shared code, or another wing (the host tier builds on today's), is fine
    wing = parse_imports("from radixviz.cache.pool import TokenToKVPool\n"
                         "from radixviz.engines.v2026.node import TreeNode", "radixviz.engines.hicache.node")
    assert shared_imports_of_wings(wing) == []


def test_siblings_do_not_import_each_other():
    across = [imp for imp in INTERNAL if home(imp.source) in SIBLINGS and home(imp.target) in SIBLINGS
              and home(imp.source) != home(imp.target) and height(imp.source) == height(imp.target)]
    assert not across, "\n".join(map(repr, across))


# Inside radixviz.lessons, lowest first: each part imports itself and the layers below it,
# never a sibling (quiz and challenges; the shared modules). The package's __init__, which
# re-exports the lesson API, stands above them all.
LESSONS_INSIDE = [
    ("radixviz.lessons.progress",),
    ("radixviz.lessons.grading", "radixviz.lessons.scenario", "radixviz.lessons.markdown_file",
     "radixviz.lessons.route_checks"),
    ("radixviz.lessons.lesson",),
    ("radixviz.lessons.quiz", "radixviz.lessons.challenges"),
]


def inside_lessons(module: str) -> tuple[int, str] | None:
    """(height, part) of a module of radixviz.lessons in LESSONS_INSIDE, or None."""
    for height, layer in enumerate(LESSONS_INSIDE):
        for part in layer:
            if starts(module, part):
                return height, part
    return None


def test_every_module_of_the_lessons_package_has_a_place():
    homeless = [m for m in MODULES if starts(m, "radixviz.lessons") and m != "radixviz.lessons"
                and inside_lessons(m) is None]
    assert not homeless, f"add these to LESSONS_INSIDE in {Path(__file__).name}: {homeless}"


def test_the_lessons_subpackages_import_down_and_siblings_apart():
    wrong = []
    for imp in INTERNAL:
        source, target = inside_lessons(imp.source), inside_lessons(imp.target)
        if source is None or target is None or source[1] == target[1]:
            continue
        if target[0] >= source[0]:     # up, or across to a sibling
            wrong.append(imp)
    assert not wrong, "\n".join(map(repr, wrong))


def test_sim_does_not_import_script():
    wrong = [imp for imp in INTERNAL if home(imp.source) == "radixviz.sim" and home(imp.target) == "radixviz.script"]
    assert not wrong, "\n".join(map(repr, wrong))


def test_commands_import_no_tui_widget():
    wrong = [imp for imp in INTERNAL if starts(imp.source, "radixviz.commands", "radixviz.cli")
             and starts(imp.target, "radixviz.tui.widgets")]
    assert not wrong, "\n".join(map(repr, wrong))


# the classroom sits beside the app: it starts app processes and never imports the app; of
# the tui package it reads the rules of a session's scripts folder only (a model, no Textual)
CLASSROOM_READS_OF_TUI = {"radixviz.tui", "radixviz.tui.sandbox_work"}


def test_the_classroom_and_the_app_stay_apart():
    wrong = [imp for imp in INTERNAL
             if (starts(imp.source, "radixviz.tui") and starts(imp.target, "radixviz.classroom"))
             or (starts(imp.source, "radixviz.classroom") and starts(imp.target, "radixviz.tui")
                 and imp.target not in CLASSROOM_READS_OF_TUI)]
    assert not wrong, "\n".join(map(repr, wrong))


def test_only_the_adapter_imports_textual_serve():
    # the classroom overrides private parts of textual-serve: one module holds them all
    wrong = [imp for imp in ALL_IMPORTS if starts(imp.target, "textual_serve")
             and imp.source != "radixviz.classroom.textual_serve_adapter"]
    assert not wrong, "\n".join(map(repr, wrong))


def test_only_the_tui_imports_textual():
    wrong = [imp for imp in ALL_IMPORTS if starts(imp.target, "textual") and not starts(imp.source, "radixviz.tui")]
    assert not wrong, "\n".join(map(repr, wrong))


def rich_below_the_views(imports) -> list[Import]:
    """The imports of Rich in ``imports`` by a module of a layer below the views (a wing's by
    its role: its cache and node files are the cache layer)."""
    return [imp for imp in imports if starts(imp.target, "rich") and starts(home(imp.source), *NO_RICH)]


def test_model_layers_import_no_rich():
    wrong = rich_below_the_views(ALL_IMPORTS)
    assert not wrong, "\n".join(map(repr, wrong))


def test_a_wing_cache_importing_rich_is_caught():
    text = "from rich.text import Text"
    assert len(rich_below_the_views(parse_imports(text, "radixviz.engines.toy.node"))) == 1
    assert len(rich_below_the_views(parse_imports(text, "radixviz.engines.toy.cache_heap"))) == 1
    assert rich_below_the_views(parse_imports(text, "radixviz.engines.toy.views")) == []


def _cycle_through(start: str, edges: dict) -> list[str] | None:
    """The shortest import path from ``start`` back to itself, or None."""
    paths, seen = [[start]], {start}
    while paths:
        nxt = []
        for path in paths:
            for target in edges.get(path[-1], ()):
                if target == start:
                    return path + [start]
                if target not in seen:
                    seen.add(target)
                    nxt.append(path + [target])
        paths = nxt
    return None


def test_no_import_cycles():
    # every import ties the two modules together, so each counts: one inside a function
    # (it runs when called), and one under TYPE_CHECKING too -- it never runs, but a type
    # that names the module above is the same circle in the design (mypy follows it), and
    # the mend is the same: move the shared piece down (a Protocol, a base class) that both
    # sides import
    edges: dict = {}
    where: dict = {}
    for imp in INTERNAL:
        if imp.target in MODULES and imp.target != imp.source:
            # a submodule importing its own package (``from radixviz.cache import x`` in
            # cache/pool.py) leans on the package __init__ having run: not a cycle to report
            if imp.source.startswith(imp.target + "."):
                continue
            edges.setdefault(imp.source, set()).add(imp.target)
            where.setdefault((imp.source, imp.target), imp)
    cycles = {tuple(sorted(set(c))): c for m in MODULES if (c := _cycle_through(m, edges))}
    named = ["  " + " -> ".join(c) + "".join(f"\n      {where[a, b]!r}" for a, b in pairwise(c))
             for c in cycles.values()]
    assert not cycles, "import cycles:\n" + "\n".join(named)


@cache
def pulls_in(module: str, wanted: str) -> bool:
    """Whether importing ``module`` (its top-level imports, followed through radixviz)
    loads ``wanted`` (a third-party top-level package such as torch)."""
    todo, seen = [module], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if current.split(".")[0] == wanted:
            return True
        if current in MODULES:
            todo.extend(imp.target for imp in imports_of(current) if not imp.local and not imp.type_only)
            # a submodule runs its package's __init__ first
            parent = current.rsplit(".", 1)[0]
            if parent in MODULES and parent != current:
                todo.append(parent)
    return False


def reason(module: str, line: int) -> str:
    """The comments on an import's line and on the lines of imports and comments above it."""
    source = MODULES[module].read_text(encoding="utf-8").splitlines()
    found, index = [], line - 1
    while index >= 0:
        text = source[index].strip()
        if index < line - 1 and not text.startswith(("#", "from ", "import ")):
            break
        if "#" in text:
            found.append(text[text.index("#"):])
        index -= 1
    return " ".join(found)


def local_import_problems() -> tuple[list, list]:
    """(imports that defer nothing heavy, imports that defer it without saying so)."""
    statements: dict = {}    # one import statement may name several modules
    for imp in ALL_IMPORTS:
        if imp.local:
            statements.setdefault((imp.source, imp.line), []).append(imp)
    habit, silent = [], []
    for (module, line), imps in statements.items():
        if all(imp.target.split(".")[0] in OPTIONAL for imp in imps):
            continue
        if not any(pulls_in(imp.target, heavy) for imp in imps for heavy in DEFERRED):
            habit.append(imps[0])
            continue
        if not any(word in reason(module, line).lower() for word in DEFER_WORDS):
            silent.append(imps[0])
    return habit, silent


def test_function_local_imports_only_defer_torch_or_textual():
    habit, silent = local_import_problems()
    assert not habit, ("function-local imports that defer neither torch nor Textual "
                       "(move them to the top):\n" + "\n".join(map(repr, habit)))
    assert not silent, ("function-local imports without a comment naming what they defer:\n"
                        + "\n".join(map(repr, silent)))


ENGINE_NAMES = {"2024", "2026", "hicache"}


def _engine_probes(module: str) -> list[str]:
    """Where ``module`` compares a value with an engine's name, or asks ``hasattr``."""
    found = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            values = [node.left, *node.comparators]
            values += [e for v in values if isinstance(v, (ast.Tuple, ast.List, ast.Set)) for e in v.elts]
            if any(isinstance(v, ast.Constant) and v.value in ENGINE_NAMES for v in values):
                found.append(f"{MODULES[module].relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr" \
                and not (isinstance(node.args[0], ast.Name) and node.args[0].id == "os"):   # a platform's call
            found.append(f"{MODULES[module].relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_caller_asks_which_engine_it_has():
    # a view, the narration or a lesson asks the registry what an engine has
    # (engine_spec(tree.engine).pages), never compares its name or probes its objects
    probes = [p for module in MODULES if module != "radixviz.cache.engines" for p in _engine_probes(module)]
    assert not probes, "\n".join(probes)


@pytest.mark.parametrize("module", ["radixviz.cli", "radixviz.commands.run", "radixviz.settings",
                                    "radixviz.cache", "radixviz.cache.text", "radixviz.cache.engines",
                                    "radixviz.cache.evict_policy", "radixviz.script.narrate",
                                    "radixviz.script.parser", "radixviz.lessons"])
def test_start_up_modules_load_no_torch(module):
    # ``radixviz --help`` imports every command module; each may need torch, later. The
    # cache package loads its names lazily: a text helper, the policy names or the list of
    # engines never load it
    assert not pulls_in(module, "torch")
