"""The layers hold: imports point down only, and no module imports itself in a circle.

Read from the source with ``ast`` (nothing is imported), counting every import: at module
level, inside functions, and under ``if TYPE_CHECKING``. Layers, lowest first; a module may
import its own layer and the layers below it, never one above:

    radixviz (the package), errors   exit codes and UsageError; import nothing of radixviz
    limits                           Limit: the bounds of a typed number (engine options use it)
    files                            safe reading (regular files, a byte limit) and atomic writes
    cache                            the engines, pools, tracing, invariants
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

To extend: a new file inside an existing package (``cache/v2026/cache.py``,
``commands/serve.py``, ``render/html.py``, ``lessons/quiz/generate_router.py``) joins that
package's layer by itself. A new top-level module or package fails ``test_every_module_has_a_layer``
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
    ("radixviz", "radixviz.errors", "radixviz.files", "radixviz.limits"),
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
NO_RICH = ("radixviz.errors", "radixviz.cache", "radixviz.wire", "radixviz.sim", "radixviz.settings",
           "radixviz.script", "radixviz.lessons")
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
        return f"{MODULES[self.source].relative_to(ROOT)}:{self.line}: imports {self.target}"


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
            pairs = [(k, v.elts[0] if isinstance(v, ast.Tuple) and v.elts else v)
                     for k, v in zip(node.value.keys, node.value.values)]
            if pairs and all(isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
                             and f"{package}.{v.value}" in MODULES for k, v in pairs):
                names.update({k.value: f"{package}.{v.value}" for k, v in pairs})
    return names


def _targets(node, module: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
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
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []

    def visit(node, local: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend(Import(module, t, child.lineno, local, type_only)
                             for t in _targets(child, module))
            inner_local = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            inner_type = type_only or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            visit(child, inner_local, inner_type)

    visit(tree, False, False)
    return tuple(found)


ALL_IMPORTS = [imp for module in MODULES for imp in imports_of(module)]
INTERNAL = [imp for imp in ALL_IMPORTS if imp.target.split(".")[0] == "radixviz"]


def home(module: str) -> str:
    """The LAYERS entry a module belongs to (the longest that contains it), or ''."""
    names = [name for layer in LAYERS for name in layer   # "radixviz" is its __init__ alone
             if module == name or (name != "radixviz" and module.startswith(name + "."))]
    return max(names, key=len, default="")


def height(module: str) -> int:
    entry = home(module)
    return next(i for i, layer in enumerate(LAYERS) if entry in layer)


def starts(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_every_module_has_a_layer():
    homeless = [m for m in MODULES if not home(m)]
    assert not homeless, f"add these to LAYERS in {Path(__file__).name}: {homeless}"


def test_imports_point_down():
    upward = [imp for imp in INTERNAL if height(imp.target) > height(imp.source)]
    assert not upward, "imports that point up a layer:\n" + "\n".join(map(repr, upward))


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
    wrong = [imp for imp in INTERNAL if starts(imp.source, "radixviz.sim") and starts(imp.target, "radixviz.script")]
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


def test_model_layers_import_no_rich():
    wrong = [imp for imp in ALL_IMPORTS if starts(imp.target, "rich") and starts(imp.source, *NO_RICH)]
    assert not wrong, "\n".join(map(repr, wrong))


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
