"""``json.dump(value, out, ensure_ascii=False, indent=2)`` written with a loop.

The standard encoder recurses once per level of nesting, and ``run --json`` nests a node's
children inside it: a tree a few hundred levels deep (a long conversation that branches at
every turn) ends in ``RecursionError``. This writer keeps its place in a list instead, and
writes the same text down to ``FLAT_BELOW`` levels of nesting; deeper, on one line (an
indented line at level d starts with 2d spaces: a tree 100,000 levels deep would be tens of
gigabytes of them).
"""
from __future__ import annotations

import json
from typing import IO, Any
from collections.abc import Iterator

_END = object()
FLAT_BELOW = 64   # nesting levels written indented, as json.dump does; deeper ones on one line
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


def iter_json(value: Any, indent: int = 2, flat_below: int = FLAT_BELOW) -> Iterator[str]:
    """The pieces of ``value`` as JSON text, indented as ``json.dumps(indent=indent)`` does
    for its first ``flat_below`` levels."""
    stack: list = []   # [items, level, closing bracket, is a dict, an item written]
    current, level = value, 0
    while True:
        if isinstance(current, dict) and current:
            yield "{"
            stack.append([iter(current.items()), level, "}", True, False])
        elif isinstance(current, (list, tuple)) and current:
            yield "["
            stack.append([iter(current), level, "]", False, False])
        elif isinstance(current, dict):
            yield "{}"
        elif isinstance(current, (list, tuple)):
            yield "[]"
        else:
            yield _ENCODE(current)
        while stack:
            frame = stack[-1]
            item: Any = next(frame[0], _END)
            flat = frame[1] >= flat_below
            if item is _END:
                stack.pop()
                yield frame[2] if flat else "\n" + " " * (indent * frame[1]) + frame[2]
                continue
            if flat:
                yield ", " if frame[4] else ""
            else:
                yield ("," if frame[4] else "") + "\n" + " " * (indent * (frame[1] + 1))
            frame[4] = True
            if frame[3]:
                key, current = item
                yield _ENCODE(_key(key)) + ": "
            else:
                current = item
            level = frame[1] + 1
            break
        else:
            return


def write_json(value: Any, out: IO[str], indent: int = 2) -> None:
    """Write ``value`` to ``out`` as ``json.dump(value, out, ensure_ascii=False, indent=indent)``."""
    chunk: list = []
    for piece in iter_json(value, indent):
        chunk.append(piece)
        if len(chunk) >= 4096:
            out.write("".join(chunk))
            chunk.clear()
    out.write("".join(chunk))


def _key(key: Any) -> str:
    """A dict key as the json module writes it: strings as they are, others converted."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, float):
        return json.dumps(key)
    return str(key)
