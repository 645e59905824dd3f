"""KV events and page hashes in plain words, for every view: the step log, ``run --events``,
the app's events log and the lessons.

A block hash is a signed 64-bit number; views show it as 16 hex digits (its two's
complement, the same digits the page's SHA-256 starts with), shortened to the first 8.
"""
from __future__ import annotations

from radixviz.cache.hashes import SHORT
from radixviz.cache.text import key_text


def block_hex(block_hash: int | None) -> str:
    """The 16 hex digits a block hash came from (the page's SHA-256 starts with them)."""
    if block_hash is None:
        return ""
    return f"{block_hash & (2 ** 64 - 1):016x}"


def block_short(block_hash: int | None) -> str:
    """``#1a2b3c4d``: a block hash as the views show it; ``—`` for none (a page under the root)."""
    return "—" if block_hash is None else "#" + block_hex(block_hash)[:SHORT]


def event_line(event) -> str:
    """One KV event (an object from kv_events.py, or its ``as_dict``) in a line."""
    data = event if isinstance(event, dict) else event.as_dict()
    kind = data["kind"]
    if kind == "stored":
        return (f"stored   {block_short(data['block_hashes'][0])}  after {block_short(data['parent_block_hash'])}"
                f"  {key_text(tuple(data['token_ids']))} ({data['block_size']} token"
                f"{'' if data['block_size'] == 1 else 's'})")
    if kind == "removed":
        return f"removed  {block_short(data['block_hashes'][0])}"
    return "cleared  every page is gone"


def hash_text(hashes) -> str:
    """A node's page hashes as the tree shows them: ``#1a2b3c4d`` for one page, the first and
    last for more (``#1a2b3c4d…#99aa00ff``); empty when they were never computed."""
    if not hashes:
        return ""
    if len(hashes) == 1:
        return "#" + hashes[0][:SHORT]
    joint = " #" if len(hashes) == 2 else "…#"
    return "#" + hashes[0][:SHORT] + joint + hashes[-1][:SHORT]
