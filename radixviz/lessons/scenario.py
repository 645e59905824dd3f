"""Scenarios for questions: run operation text on a real Session and read the tree back."""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache import tokens_text
from radixviz.script import parse_script, slot_ranges

if TYPE_CHECKING:
    from ..cache.snapshot import TreeSnapshot
    from ..script.session import Session

QUIZ_POOL_SIZE = 128


def run_scenario(text: str, file: str = "<quiz>"):
    """A CPU Session with ``text`` applied (raises ScriptError if an operation is refused)."""
    from radixviz.script import Session   # loads torch (the engine): only when a scenario runs
    session = Session(pool_size=QUIZ_POOL_SIZE, device="cpu")
    session.run(text, file)
    return session


def apply_text(session: Session, text: str, file: str = "<quiz>"):
    """Apply one operation line to ``session``; return its OpRecord."""
    (op,) = parse_script(text, file)
    return session.apply(op)


def edge_text(key: tuple) -> str:
    """An edge as a learner types it: unquoted, unescaped (``cache.tokens_text``)."""
    return tokens_text(key)


def node_choices(tree: TreeSnapshot) -> tuple:
    """(id, edge text, whole key from the root) of every node but the root, in drawing order."""
    return tuple((n.id, edge_text(n.key), whole_key(tree, n.id)) for n in tree.root.walk() if n.key)


def whole_key(tree: TreeSnapshot, node_id: int) -> str:
    """The tokens from the root down to the end of node ``node_id``'s edge."""
    return "".join(edge_text(tree.nodes[i].key) for i in tree.path_to(node_id) if tree.nodes[i].key)


def tree_text(tree: TreeSnapshot, show_time: bool = False, show_slots: bool = True, parts: bool = False) -> str:
    """The tree as indented plain text: id, edge, slots, reference count (and access time);
    with ``parts``, each further component's part too (its slots and locks, ``⊘`` where the
    node is a tombstone for it)."""
    lines = ["(root)"]
    with_parts = parts

    def visit(node, prefix: str) -> None:
        kids = [tree.nodes[c] if isinstance(c, int) else c for c in node.children]
        for index, child in enumerate(kids):
            last = index == len(kids) - 1
            parts = [f"#{child.id}", f'"{edge_text(child.key)}"']
            if show_slots:
                parts.append(f"slots {slot_ranges(child.value)}")
            parts.append(f"ref {child.ref}")
            if with_parts:
                parts.extend(_part_text(part) for part in child.parts[1:])
            if show_time:
                parts.append(f"used at t={child.last_access}")
            lines.append(prefix + ("└─ " if last else "├─ ") + "  ".join(parts))
            visit(child, prefix + ("   " if last else "│  "))

    visit(tree.root, "")
    return "\n".join(lines)


def _part_text(part) -> str:
    """``swa 3-6 lock 1``, ``mamba ⊘``: one further component's part of a node."""
    held = "⊘" if part.tombstone else slot_ranges(part.slots)
    return f"{part.component.name} {held}" + (f" lock {part.locks}" if part.locks else "")


def first_evicted_leaf(session: Session, count: int) -> tuple[int | None, object]:
    """Run ``evict count`` on ``session``; return (id of the first leaf deleted, the record)."""
    before = len(session.frames)
    record = apply_text(session, f"evict {count}")
    for frame in session.frames[before:]:
        if frame.kind == "delete":
            return frame.data["leaf"], record
    return None, record


def indent(text: str) -> str:
    """``text`` with four spaces before every line, as prompts show scripts and trees."""
    return "\n".join("    " + line for line in text.splitlines())
