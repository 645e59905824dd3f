"""Page hashes: the name a page of KV goes by outside one worker's tree.

SGLang (``hicache_storage.get_hash_str`` and ``radix_cache.compute_node_hash_values`` at
9fbe6800a) names each page by a SHA-256 digest of its token ids, each written as 4 bytes,
little-endian, unsigned, with the previous page's digest fed in first. The chain makes a
page's name depend on everything before it, so two equal pages at different places in two
prompts get different names, and a router or a storage tier can recognise a whole prefix by
its last page's hash alone. KV events carry the first 16 hex digits as a signed 64-bit int.

A node's hashes start as None and are computed when something needs them (a KV event);
a split divides the list between the two halves. No torch here.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Protocol
from collections.abc import Iterable, Sequence

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping

SHORT = 8  # hex digits a view shows of a hash


class HashedNode(Protocol):
    """What a page hash reads of a tree's node (today's engines' nodes have it): its edge, its
    parent's hashes to chain from and, for a walk, its children."""
    @property
    def key(self) -> Sequence: ...

    @property
    def hash_value(self) -> list[str] | None: ...

    @property
    def parent(self) -> HashedNode | None: ...

    @property
    def children(self) -> Mapping: ...


def token_id(token: Hashable) -> int:
    """The integer a token hashes as: an id as itself, a character as its code point
    (the slot value an insert without slots stores, too). ValueError for anything else."""
    if isinstance(token, int) and not isinstance(token, bool):
        value = token
    elif isinstance(token, str) and len(token) == 1:
        value = ord(token)
    else:
        raise ValueError(f"token {token!r} has no id to hash: use ints or one-character tokens")
    if not 0 <= value < 2 ** 32:
        raise ValueError(f"token id {value} does not fit the 4 bytes a page hash gives each token")
    return value


def check_hashable(key: Iterable) -> None:
    """ValueError, before anything changes, if a token of ``key`` cannot be hashed."""
    for token in key:
        token_id(token)


def get_hash_str(tokens: Sequence, prior_hash: str | None = None) -> str:
    """The hex SHA-256 of one page: ``prior_hash``'s bytes (when there is one), then each
    token id as 4 little-endian bytes."""
    hasher = hashlib.sha256()
    if prior_hash:
        hasher.update(bytes.fromhex(prior_hash))
    hasher.update(b"".join(token_id(t).to_bytes(4, "little") for t in tokens))
    return hasher.hexdigest()


def hash_str_to_int64(hash_str: str) -> int:
    """The block hash a KV event carries: the first 16 hex digits as a signed 64-bit int."""
    value = int(hash_str[:16], 16)
    return value - 2 ** 64 if value >= 2 ** 63 else value


def chain_hashes(key: Sequence, page_size: int, prior_hash: str | None = None) -> list:
    """One hash a page of ``key``, each seeded with the one before (the first with ``prior_hash``)."""
    hashes = []
    for start in range(0, len(key), page_size):
        page = key[start:start + page_size]
        if not page:
            continue
        prior_hash = get_hash_str(page, prior_hash)
        hashes.append(prior_hash)
    return hashes


def compute_node_hash_values(node: HashedNode, page_size: int) -> list:
    """A node's page hashes, chained from its parent's last page. As SGLang computes them:
    the root (empty key) seeds nothing, and neither does a parent whose hashes were never
    computed (the chain then starts afresh, as upstream's does)."""
    parent, prior = node.parent, None
    if parent is not None and parent.hash_value is not None:
        if len(parent.key) > 0 and len(parent.hash_value) > 0:
            prior = parent.hash_value[-1]
    return chain_hashes(node.key, page_size, prior)


def split_node_hash_value(hash_value: list[str] | None, split_len: int, page_size: int) -> tuple:
    """``(upper half's, lower half's)`` hashes when a node is cut ``split_len`` tokens in;
    ``(None, None)`` when they were never computed."""
    if hash_value is None:
        return None, None
    pages = split_len if page_size == 1 else split_len // page_size
    return hash_value[:pages], hash_value[pages:]


def short_hash(hash_str: str | None) -> str:
    """The first few hex digits, as views show a hash."""
    return "" if not hash_str else hash_str[:SHORT]
