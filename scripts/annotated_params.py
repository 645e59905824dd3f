"""Print the share of function parameters that carry a type annotation, per package.

    python scripts/annotated_params.py [root]     (default: radixviz)

`self` and `cls` (a method's first parameter) are not counted: their type is the class.
*args and **kwargs count as parameters. Prints JSON: {"total": [annotated, all, share], pkg: ...}.
"""
from __future__ import annotations

import ast
import json
import sys
from pathlib import Path


def count(tree: ast.AST) -> tuple[int, int]:
    annotated = total = 0
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Lambda):
            continue  # a lambda cannot be annotated
        a = node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        params += [p for p in (a.vararg, a.kwarg) if p is not None]
        for i, p in enumerate([*a.posonlyargs, *a.args]):
            if i == 0 and p.arg in ("self", "cls"):
                params.remove(p)
        total += len(params)
        annotated += sum(p.annotation is not None for p in params)
    return annotated, total


def main(root: str = "radixviz") -> None:
    per: dict[str, list[int]] = {}
    for path in sorted(Path(root).rglob("*.py")):
        rel = path.relative_to(root).parts
        pkg = rel[0] if len(rel) > 1 else rel[0].removesuffix(".py")
        a, t = count(ast.parse(path.read_text(encoding="utf-8")))
        got = per.setdefault(pkg, [0, 0])
        got[0] += a
        got[1] += t
    all_a = sum(v[0] for v in per.values())
    all_t = sum(v[1] for v in per.values())
    out: dict[str, list[float]] = {"total": [all_a, all_t, round(all_a / max(all_t, 1), 3)]}
    for pkg, (a, t) in per.items():
        out[pkg] = [a, t, round(a / max(t, 1), 3)]
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:])
