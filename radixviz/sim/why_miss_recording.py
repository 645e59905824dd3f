"""Why B misses on a real server: B's pages looked up in what a recorded KV-event stream held.

The recording (``watch --record``) is played to its end, or to sequence ``at_seq`` (when B
arrived). B's prompt, cut as v0.5.23 cuts a match (its length minus one, then whole pages of
the stream's block size), is walked page by page through the blocks each rank held, by their
tokens and parent links, once for every medium and namespace the stream names. So a page the
server keeps under another adapter or salt, on the host only, or on another rank is found
too, and a page that was stored and later removed is reported with the batch that removed it
(the stream says when, not for which request).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from radixviz.cache.write_policy import LOAD_BACK_THRESHOLD
from radixviz.wire.events import BlockRemoved, BlockStored
from radixviz.wire.playback import core_for, feed
from radixviz.wire.tiers import TIERS, namespace_name

from .why_miss import Cause, Explanation


@dataclass
class Held:
    """How many of B's leading pages one (rank, medium, namespace) holds."""
    rank: int
    medium: str | None
    namespace: str | None
    leading_pages: int


@dataclass
class _Seen:
    removed_at: dict = field(default_factory=dict)   # (rank, block hash) -> seq of its last removal
    stored: dict = field(default_factory=dict)       # (rank, page tokens, parent) -> block hash


def held_chains(tree, rank: int, pages: list[tuple]) -> list[Held]:
    """For each medium and namespace of ``tree``, the leading pages of ``pages`` it holds."""
    under: dict = {}
    for block in tree.blocks.values():
        under.setdefault((block.medium, namespace_name(block), block.parent), []).append(block)
    out = []
    for medium, space in sorted({(b.medium, namespace_name(b)) for b in tree.blocks.values()},
                                key=lambda x: (x[0] or "", x[1] or "")):
        parent, count = None, 0
        for page in pages:
            nxt = next((b for b in under.get((medium, space, parent), ()) if b.token_ids == page), None)
            if nxt is None:
                break
            parent, count = nxt.hash, count + 1
        if count:
            out.append(Held(rank, medium, space, count))
    return out


def explain_recorded(records, b: tuple, *, rank: int = 0, namespace: str | None = None,
                     at_seq: int | None = None) -> Explanation:
    """Why ``b`` reuses what it does on the server ``records`` recorded (``rank``: the DP rank
    it went to; ``namespace``: "adapter NAME" or "salt S" as watch names them)."""
    core, seen = core_for(records), _Seen()

    def note(item) -> None:
        for event in item.message.batch.events:
            if isinstance(event, BlockRemoved):
                for block_hash in event.block_hashes:
                    seen.removed_at[item.rank, block_hash] = item.seq
            elif isinstance(event, BlockStored):
                size, parent = max(1, event.block_size), event.parent_block_hash
                for index, block_hash in enumerate(event.block_hashes):
                    tokens = tuple(event.token_ids[index * size:(index + 1) * size])
                    seen.stored.setdefault((item.rank, tokens, parent), block_hash)
                    parent = block_hash

    core.listeners.append(note)
    for record in records:
        if at_seq is not None and record.channel == "pub" and len(record.frames) == 3 \
                and int.from_bytes(record.frames[1], "big") > at_seq:
            continue   # a later batch of this stream; another stream's may still come
        feed(core, record)
    page = _block_size(core) or 1
    n = len(b)
    full = [tuple(b[i:i + page]) for i in range(0, n - n % page, page)]
    usable = (n - 1) // page                       # pages a match may take (v0.5.23's cap)
    held = [h for r in sorted(core.trees) for h in held_chains(core.tree(r), r, full)]
    own = next((h.leading_pages for h in held if (h.rank, h.namespace) == (rank, namespace) and _device(h)), 0)
    mine = min(own, usable)
    out = Explanation((), b, own * page, mine * page, settings={
        "recording": True, "page_size": page, "rank": rank, "namespace": namespace, "at_seq": at_seq,
        "held": [{"rank": h.rank, "medium": h.medium, "namespace": h.namespace, "pages": h.leading_pages}
                 for h in held]})
    if own > mine:
        cut = (own - mine) * page
        out.causes.append(Cause("last_token", 1, f"the server holds all {own * page} of B's whole-page "
                                "tokens, but a request matches at most its length minus one"))
        if cut > 1:
            out.causes.append(Cause("page_floor", cut - 1, f"pages of {page} tokens: cut one token short, "
                                    f"the match drops the rest of the last page, {cut - 1} token(s)"))
    elif mine < usable:
        _missing(out, held, mine, usable, page, rank, namespace, seen, full)
    return out


def _device(h: Held) -> bool:
    return TIERS.get(h.medium or "GPU") == "device"


def _block_size(core) -> int | None:
    for tree in core.trees.values():
        for block in tree.blocks.values():
            return block.block_size
    return None


def _missing(out: Explanation, held: list[Held], mine: int, usable: int, page: int, rank: int,
             namespace: str | None, seen: _Seen, pages: list[tuple]) -> None:
    """The cause of the first page B does not find on its rank's device, in its namespace."""
    others = [h for h in held
              if h.leading_pages > mine and not ((h.rank, h.namespace) == (rank, namespace) and _device(h))]
    if others:
        best = max(others, key=lambda h: (h.rank == rank, h.namespace == namespace, h.leading_pages))
        extra = (min(best.leading_pages, usable) - mine) * page
        if best.rank != rank:
            out.causes.append(Cause("another_rank", extra, f"rank {best.rank} of the server holds {extra} more "
                                    f"of B's tokens, a cache rank {rank} cannot read"))
        elif best.namespace != namespace:
            out.causes.append(Cause("namespace", extra, f"the server holds {extra} more of B's tokens under "
                                    f"{best.namespace or 'no namespace'}: B, sent "
                                    f"{'in ' + namespace if namespace else 'in none'}, cannot use them"))
        elif extra < LOAD_BACK_THRESHOLD:
            out.causes.append(Cause("host_only", extra, f"{extra} more of B's tokens are on the "
                                    f"{TIERS.get(best.medium or '', best.medium)} tier only, fewer than the "
                                    f"{LOAD_BACK_THRESHOLD} a load back needs: computed again"))
        else:
            out.reused += extra
            out.causes.append(Cause("loaded_back", 0, f"{extra} more of B's tokens are on the "
                                    f"{TIERS.get(best.medium or '', best.medium)} tier only: a load back brings "
                                    "them (not a miss)"))
        return
    parent = None
    for index in range(mine):
        parent = seen.stored.get((rank, pages[index], parent))
    block_hash = seen.stored.get((rank, pages[mine], parent))
    removed = seen.removed_at.get((rank, block_hash)) if block_hash is not None else None
    left = (usable - mine) * page
    if removed is not None:
        out.causes.append(Cause("eviction", left, f"the server stored B's page at token {mine * page} and "
                                f"removed it in batch {removed}: evicted (the stream does not say for which "
                                "request)"))
    else:
        out.causes.append(Cause("not_stored", left, f"no request before B stored its page at token "
                                f"{mine * page}: B parts there from everything the server had seen"))
