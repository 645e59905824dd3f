"""Keys: the child-key rule, the one comparison the whole tree is built on, the stop rule.

How keys read as text is text.py's business (re-exported here for older imports).
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

from .text import escape_token, token_text, tokens_text  # noqa: F401

Key = tuple  # a tuple of hashable tokens


def as_key(key: str | Sequence[Hashable]) -> Key:
    """Return ``key`` as a tuple of tokens; a str is one token per character."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, (str, list, range)):
        return tuple(key)
    try:
        return tuple(key)
    except TypeError:
        raise TypeError(f"a key must be a str, list or tuple of tokens, not {type(key).__name__}") from None


def get_child_key(key: Key, page_size: int = 1, start: int = 0, extra_key: Hashable | None = None):
    """The key a node files the child whose edge is ``key[start:]`` under: the edge's first
    token, or its first page (a tuple) when pages are longer than one token; in a namespace
    (``extra_key`` not None: a LoRA adapter, a cache salt) the pair ``(extra_key, that)``.

    Sibling edges never share a first token (or page) within a namespace, so this finds the
    one child that can share a prefix with a query, and a query in one namespace never finds
    another's. SGLang's ``get_child_key`` (#4356 made it page-aware, the extra key came with
    ``RadixKey``); every engine and check here asks this function, none writes the rule inline.
    """
    plain = key[start] if page_size == 1 else key[start:start + page_size]
    if extra_key is None:
        return plain
    return (extra_key, plain)


def key_match_paged(edge: Key, key: Key, page_size: int) -> int:
    """Tokens ``edge`` and ``key`` share, counted in whole pages (both hold whole pages)."""
    common = match(edge, key)
    return common - common % page_size


def match(edge: Key, key: Key, start: int = 0, end: int | None = None) -> int:
    """Length of the common prefix of ``edge`` and ``key[start:end]``.

    The release compared token by token in Python; comparing tuple slices does the same
    work in C, and a bisection finds the first difference without a Python-level loop
    over long shared prefixes. The usual answer, the whole edge, costs one slice of the
    key and one comparison (``end`` bounds the key without copying it first).
    """
    limit = len(key) if end is None else end
    n = len(edge)
    if start + n <= limit:
        if key[start:start + n] == edge:
            return n
    else:
        n = limit - start
        if n <= 0:
            return 0
        if edge[:n] == key[start:limit]:
            return n
    return first_difference(edge, key, start, n)


def first_difference(edge: Key, key: Key, start: int, n: int) -> int:
    """Where ``edge`` and ``key[start:]`` first differ, known to be within their first ``n``
    tokens (a caller that already compared the whole edge skips comparing it again)."""
    lo, hi = 0, n  # edge[:lo] agrees; the first difference lies in [lo, hi)
    while hi - lo > 8:
        mid = (lo + hi) // 2
        if edge[lo:mid] == key[start + lo:start + mid]:
            lo = mid
        else:
            hi = mid
    while edge[lo] == key[start + lo]:
        lo += 1
    return lo


def match_stops_here(common: int, edge_len: int, rest: int, buggy: bool) -> bool:
    """The matcher's one rule: does a walk that shares ``common`` tokens with an edge of
    ``edge_len`` tokens, with ``rest`` tokens of the key left, end at this edge?

    Fixed (#7): whenever the edge is not taken whole, and the edge is cut there. Before #7:
    only when the key itself runs out inside the edge; a key that parts ways inside the
    edge walked on below it. The engine and the preview both ask this function.
    """
    if buggy:
        return common == rest and common != edge_len
    return common < edge_len
