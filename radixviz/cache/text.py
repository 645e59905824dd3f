"""How keys, edges and slots read as text: the one formatter every view and lesson uses.

Plain text only (no UI library): a caller that lays text out in terminal cells passes its
own width function.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
from collections.abc import Callable, Hashable

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

ELLIPSIS = "…"
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}


def token_text(token: Hashable) -> str:
    """How one token reads in a view: a character as itself, an id as ``⟨id⟩``."""
    if isinstance(token, str):
        return token
    return f"⟨{token}⟩"


def tokens_text(tokens: Iterable[Hashable]) -> str:
    """A run of tokens as one unquoted, unescaped string (what a learner types as an answer)."""
    return "".join(token_text(t) for t in tokens)


def escape_token(token: Hashable) -> str:
    """One token as printable text: control characters become ``\\n``, ``\\x1b`` and so on, and a
    backslash doubles so that ``\\n`` typed as two characters stays distinct from a newline."""
    text = token_text(token)
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(_ESCAPES.get(c) or (c if c.isprintable() else repr(c)[1:-1]) for c in text)


def key_text(key: Sequence[Hashable], limit: int = 24, *, width: Callable[[str], int] | None = None) -> str:
    """A key quoted and escaped; a long one keeps whole tokens at both ends around ``…``.

    Without ``width`` the limit counts tokens: past it the head keeps ``limit - 8`` tokens and
    the tail 5 (the step log and summaries). With ``width`` (text -> terminal cells) the
    limit is the cells the whole quoted text may take, a third of them for the tail (tree
    and diagram labels, which must fit a column); below 8 cells nothing is cut.
    """
    parts = [escape_token(t) for t in key]
    if width is None:
        if len(parts) <= limit:
            return f"'{''.join(parts)}'"
        return _elided(parts, limit - 3, 5, lambda part: 1)
    if width("".join(parts)) + 2 <= limit or limit < 8:
        return f"'{''.join(parts)}'"
    budget = limit - 3  # two quotes and the ellipsis
    return _elided(parts, budget, max(1, budget // 3), width)


def _elided(parts: list, budget: int, tail_budget: int, width: Callable[[str], int]) -> str:
    head, tail, used = [], [], 0
    for part in reversed(parts):
        if used + width(part) > tail_budget:
            break
        tail.append(part)
        used += width(part)
    for part in parts:
        if used + width(part) > budget:
            break
        head.append(part)
        used += width(part)
    return f"'{''.join(head)}{ELLIPSIS}{''.join(reversed(tail))}'"


def slot_runs(slots: Iterable[int]) -> list:
    """Runs of consecutive slots as ``(first, last)`` pairs."""
    slots = list(slots)
    if not slots:
        return []
    runs, start, prev = [], slots[0], slots[0]
    for s in slots[1:]:
        if s == prev + 1:
            prev = s
            continue
        runs.append((start, prev))
        start = prev = s
    runs.append((start, prev))
    return runs


def slot_ranges(slots: Iterable[int], *, compact: bool = False, max_runs: int = 3) -> str:
    """``0–5, 22–26`` for runs of consecutive slots (``none`` when there are none).

    ``compact`` (tree and diagram labels): ``0–5,22–26``, ``-`` for none, and a badly
    fragmented value shows its first ``max_runs`` runs and how many more.
    """
    runs = slot_runs(slots)
    if not runs:
        return "-" if compact else "none"
    shown = [str(a) if a == b else f"{a}–{b}" for a, b in (runs[:max_runs] if compact else runs)]
    if compact and len(runs) > max_runs:
        shown.append(f"{ELLIPSIS}+{len(runs) - max_runs}")
    return ("," if compact else ", ").join(shown)


def node_label(tree, node_id: int | None) -> str:
    """How words name node ``node_id`` of snapshot ``tree``: its key quoted, as the tree's line
    shows it ("the root" for the root). A node the root no longer reaches (SGLang's 9fbe6800a
    bugs, as the host tier's snapshot lists them) keeps its key; one gone from the tree is
    called so (a node's number is nowhere on screen)."""
    node = tree.nodes.get(node_id)
    if node is not None:
        return "the root" if not node.key else key_text(node.key)
    lost = next((key for number, key, *_ in getattr(tree, "unreachable", ()) if number == node_id), None)
    return f"{key_text(lost)} (out of the tree)" if lost is not None else "a node no longer in the tree"
