"""Operations back to the language ``radixviz run`` reads: what the app saves with ctrl+s.

Every key is written so the parser gives back exactly the same tokens: character keys in
double quotes with the parser's escapes, integer ids after ``tokens``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from .parser import Op

_ESCAPED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}


def key_source(key: tuple) -> str:
    """``"Hello \\"x\\""`` for character tokens, ``tokens 12 7 3`` for integer ids."""
    if key and all(isinstance(t, int) for t in key):
        return "tokens " + " ".join(str(t) for t in key)
    if not all(isinstance(t, str) and len(t) == 1 for t in key):
        raise ValueError(f"key {key!r} mixes ids and characters: the language cannot write it")
    return '"' + "".join(_ESCAPED.get(t, t) for t in key) + '"'


def op_source(op: Op) -> str:
    """One operation as a script line (with its priority and namespace, when it has them)."""
    if op.key is not None:
        line = f"{op.name} {key_source(op.key)}"
        if op.priority is not None:
            line += f" priority {op.priority}"
        if op.ns is not None:
            line += f" ns {op.ns}"
        return line
    if op.count is not None:          # evict N, page-size N
        return f"{op.name} {op.count}"
    if op.mode is not None:
        return f"{op.name} {op.mode}"
    return op.name


def script_source(ops: Iterable[Op], *, buggy: bool = False, note: str = "") -> str:
    """A whole script: an optional comment, the starting matcher when it is the buggy one,
    then one operation a line."""
    lines = [f"# {line}" for line in note.splitlines()]
    if buggy:
        lines.append("matcher buggy   # the operations below start on the pre-#7 matcher")
    lines += [op_source(op) for op in ops]
    return "\n".join(lines) + "\n"
