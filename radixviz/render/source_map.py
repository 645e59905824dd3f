"""Where a traced step lives in the source: the views' map from step labels to lines.

Engines (and the session) name each step; the line that does it ends with a marker comment
``# step: LABEL`` (see radixviz/cache/trace.py). This module finds those markers once per
file, and the function around each line, so the code pane and ``run --steps`` can show the
line that ran. An install without ``.py`` files (only compiled ``.pyc``) has no lines to
show: ``locate`` then answers with the step's label instead of failing.
"""
from __future__ import annotations

import ast
import linecache
import re
import sys
from dataclasses import dataclass
from functools import lru_cache, cache
from pathlib import Path

MARKER = re.compile(r"#\s*step:\s*([\w.\-]+(?:\s*,\s*[\w.\-]+)*)\s*$")


@dataclass(frozen=True)
class StepSite:
    source: str           # the module that named the step, e.g. "radixviz.engines.v2024.cache"
    step: str             # its label, e.g. "match.compare"
    file: str | None      # the module's .py file; None when the install has none
    line: int | None      # the marked line; None when unknown
    function: str         # the function around it ('' when unknown)

    @property
    def text(self) -> str:
        """The stripped source line, or ``step LABEL`` when there is no line to show."""
        if self.file is None or self.line is None:
            return f"step {self.step}"
        return strip_marker(linecache.getline(self.file, self.line)).strip()

    @property
    def where(self) -> str:
        """``radixviz/engines/v2024/cache.py:123 _split_node``, or the module and the label."""
        if self.file is None or self.line is None:
            return f"{self.source} [{self.step}]"
        return f"{short_path(self.file)}:{self.line} {self.function}".rstrip()


def source_file(module: str) -> str | None:
    """The ``.py`` file of an imported module, or None (a .pyc-only install, a built-in)."""
    mod = sys.modules.get(module)
    file = getattr(mod, "__file__", None)
    if not file or not file.endswith(".py") or not linecache.getlines(file):
        return None
    return file


def strip_marker(text: str) -> str:
    """A source line without its ``# step:`` marker (the label is shown elsewhere)."""
    hit = MARKER.search(text)
    if not hit:
        return text
    return text[:hit.start()].rstrip() + ("\n" if text.endswith("\n") else "")


@cache
def markers(file: str) -> dict:
    """Step label -> line number, for every ``# step:`` marker in ``file``."""
    found: dict = {}
    for number, text in enumerate(linecache.getlines(file), start=1):
        hit = MARKER.search(text)
        if hit:
            for label in hit.group(1).split(","):
                found.setdefault(label.strip(), number)
    return found


@lru_cache(maxsize=64)
def functions(file: str) -> tuple:
    """(first line, last line, name) of every function in ``file``, sorted by first line."""
    source = "".join(linecache.getlines(file))
    if not source:
        return ()
    spans = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            spans.append((first, node.end_lineno, node.name))
    return tuple(sorted(spans))


def function_span(file: str, line: int) -> tuple[int, int, str] | None:
    """The innermost function of ``file`` containing ``line``."""
    best = None
    for first, last, name in functions(file):
        if first <= line <= last and (best is None or first >= best[0]):
            best = (first, last, name)
    return best


def locate(source: str, step: str) -> StepSite:
    """Where ``step`` of module ``source`` is written; file and line None when unknown."""
    file = source_file(source)
    line = markers(file).get(step) if file else None
    if file is None or line is None:
        return StepSite(source, step, file, None, "")
    span = function_span(file, line)
    return StepSite(source, step, file, line, span[2] if span else "")


def _is_reporting(stmt: ast.stmt) -> bool:
    """A statement there for the viewer, not for the algorithm: ``if tr.active: tr.emit(...)``
    (``if tr.active and ...:`` too), a bare ``invalidate(node)`` (snapshots), a session's
    ``self._step(...)``, the tracer's bookkeeping (``tr = self.tracer``, ``tr.op = ...``,
    ``outer = tr.op``), and
    an ``if`` whose whole body is such statements (``if node._snap is not None: invalidate(node)``)."""
    if isinstance(stmt, ast.If):
        return not stmt.orelse and (_tests_active(stmt.test) or all(map(_is_reporting, stmt.body)))
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return (isinstance(func, ast.Name) and func.id == "invalidate") or \
            (isinstance(func, ast.Attribute) and func.attr in ("_step", "emit"))
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        # ``tr = self.tracer`` and ``tr.op = "insert"``: the tracer's own bookkeeping
        target, value = stmt.targets[0], stmt.value
        return (isinstance(target, ast.Attribute) and target.attr == "op" and _is_tracer(target.value)) \
            or (isinstance(target, ast.Name) and target.id == "tr" and _is_tracer(value)) \
            or (isinstance(target, ast.Name) and isinstance(value, ast.Attribute) and value.attr == "op"
                and _is_tracer(value.value))
    return False


def _is_tracer(node: ast.expr) -> bool:
    # ``self.tracer``, or a module's branch of it (``self.transfer_tracer``)
    return (isinstance(node, ast.Name) and node.id == "tr") or \
        (isinstance(node, ast.Attribute) and node.attr.endswith("tracer"))


def _tests_active(test: ast.expr) -> bool:
    """``tr.active``, or ``tr.active and ...``: a test that holds only while someone watches."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return _tests_active(test.values[0])
    return isinstance(test, ast.Attribute) and test.attr == "active"


@lru_cache(maxsize=64)
def reporting_lines(file: str) -> frozenset:
    """Lines of a source file that only report steps or keep snapshots true (the code pane
    hides them unless asked, so the algorithm stands out; the HTML page dims them)."""
    source = "".join(linecache.getlines(file))
    if not source:
        return frozenset()
    lines: set = set()
    for stmt in ast.walk(ast.parse(source)):
        if isinstance(stmt, ast.stmt) and _is_reporting(stmt):
            lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return frozenset(lines)


_PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def short_path(file: str) -> str:
    """``radixviz/engines/v2024/cache.py`` for the package's own files, else the base name."""
    full = Path(file).resolve()
    try:
        return full.relative_to(_PACKAGE_PARENT).as_posix()
    except ValueError:
        return full.name
