"""The blocks a KV-event stream says a rank holds, rebuilt from the events alone.

A ``BlockStored`` names its pages by hash, the first under ``parent_block_hash`` and each
next one under the page before it (9fbe6800a's SGLang sends one page an event; v0.5.23 joins
a chain of them into one, as vLLM does). Blocks are kept by (medium, hash): the same page on
the GPU and in host memory is two blocks, and the same page stored twice on one medium (the
same prompt under two extra keys that leave the hash alone: every extra key at 9fbe6800a,
any but an adapter's in v0.5.23) is one block with ``copies`` 2, which one ``BlockRemoved``
brings back to 1. A removal of a block not held, a parent that never arrived and a stored
block past ``max_blocks`` are counted in ``Problems``, never raised.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from .events import stored_metadata
from .messages import AllBlocksCleared, BlockRemoved, BlockStored, EventBatch

DEFAULT_MAX_BLOCKS = 2_000_000   # blocks held per rank before new ones are counted, not kept


@dataclass(slots=True)
class Block:
    hash: int
    parent: int | None
    token_ids: tuple
    block_size: int
    medium: str | None
    lora_id: int | None
    copies: int = 1
    # v0.5.23's (cache_salt, session_id, lora_name); None for a block that came without them,
    # as every block of 9fbe6800a's wire does (one field: a block is made per page stored)
    meta: tuple | None = None

    @property
    def cache_salt(self) -> str | None:
        return self.meta[0] if self.meta else None

    @property
    def session_id(self) -> str | None:
        return self.meta[1] if self.meta else None

    @property
    def lora_name(self) -> str | None:
        return self.meta[2] if self.meta else None


@dataclass
class Problems:
    """What a stream got wrong or lost, counted (one log line each, too)."""
    bad_frames: int = 0          # frames that did not decode (the batch is skipped)
    unknown_removals: int = 0    # BlockRemoved of a block not held
    missing_parents: int = 0     # BlockStored whose parent was not held when it arrived
    over_capacity: int = 0       # blocks not kept: the rank held max_blocks already
    gaps: int = 0                # times a sequence number was skipped
    recovered: int = 0           # batches a replay filled in
    unfilled: int = 0            # batches lost for good (replay had not got them, or no replay)
    duplicates: int = 0          # batches seen twice (kept once)
    restarts: int = 0            # the publisher began again at sequence 0

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class BlockTree:
    """One rank's blocks; ``apply`` takes a batch in sequence order."""
    problems: Problems = field(default_factory=Problems)
    max_blocks: int = DEFAULT_MAX_BLOCKS
    blocks: dict = field(default_factory=dict)     # (medium, hash) -> Block
    tiers: dict = field(default_factory=dict)      # hash -> how many media hold it
    seen_media: set = field(default_factory=set)
    stored_total: int = 0
    removed_total: int = 0
    last_seq: int | None = None

    def apply(self, batch: EventBatch, seq: int | None = None) -> list[str]:
        """Apply every event of ``batch``; return one line for each kind of problem it met
        (with how many and the first block), so a flood of them is a few lines, not many."""
        met: dict = {}    # kind -> [count, first hash]
        for event in batch.events:
            if isinstance(event, BlockStored):
                self._stored(event, met)
            elif isinstance(event, BlockRemoved):
                self._removed(event, met)
            elif isinstance(event, AllBlocksCleared):
                self.clear()
        self.last_seq = seq
        return [_PROBLEM_LINES[kind].format(n=n, first=first, s="" if n == 1 else "s",
                                            limit=self.max_blocks)
                for kind, (n, first) in met.items()]

    def _stored(self, event: BlockStored, met: dict) -> None:
        size = event.block_size if event.block_size > 0 else max(1, len(event.token_ids))
        parent = event.parent_block_hash
        if parent is not None and not self.holds(parent):
            self.problems.missing_parents += 1
            _met(met, "parent", parent)
        meta = stored_metadata(event)
        for index, block_hash in enumerate(event.block_hashes):
            key = (event.medium, block_hash)
            tokens = tuple(event.token_ids[index * size:(index + 1) * size])
            self.stored_total += 1
            held = self.blocks.get(key)
            if held is not None:
                held.copies += 1
            elif len(self.blocks) >= self.max_blocks:
                self.problems.over_capacity += 1
                _met(met, "full", block_hash)
            else:
                self.blocks[key] = Block(block_hash, parent, tokens, len(tokens), event.medium, event.lora_id,
                                         1, meta)
                self.tiers[block_hash] = self.tiers.get(block_hash, 0) + 1
                self.seen_media.add(event.medium)
            parent = block_hash

    def _removed(self, event: BlockRemoved, met: dict) -> None:
        for block_hash in event.block_hashes:
            key = self._find(event.medium, block_hash)
            self.removed_total += 1
            if key is None:
                self.problems.unknown_removals += 1
                _met(met, "removed", block_hash)
                continue
            block = self.blocks[key]
            block.copies -= 1
            if block.copies <= 0:
                del self.blocks[key]
                left = self.tiers.pop(block_hash) - 1
                if left:
                    self.tiers[block_hash] = left

    def _find(self, medium: str | None, block_hash: int):
        if (medium, block_hash) in self.blocks:
            return (medium, block_hash)
        if medium is None and block_hash in self.tiers:   # no medium named: whichever tier holds it
            return next((m, block_hash) for m in self.seen_media if (m, block_hash) in self.blocks)
        return None

    def holds(self, block_hash: int) -> bool:
        """Whether any medium holds the block."""
        return block_hash in self.tiers

    def media(self) -> list:
        return sorted(self.seen_media, key=lambda m: m or "")

    def clear(self) -> None:
        self.blocks.clear()
        self.tiers.clear()

    def sorted_blocks(self) -> list[Block]:
        return [self.blocks[k] for k in sorted(self.blocks, key=lambda k: (k[0] or "", k[1]))]

    def orphans(self) -> int:
        """Held blocks whose parent is not held (the tree shows them under a '?' node)."""
        return sum(1 for b in self.blocks.values() if b.parent is not None and not self.holds(b.parent))

    def tier_figures(self) -> dict:
        """medium -> (blocks, tokens) held."""
        out: dict = {}
        for (medium, _), block in self.blocks.items():
            count, tokens = out.get(medium, (0, 0))
            out[medium] = (count + 1, tokens + len(block.token_ids))
        return out


_PROBLEM_LINES = {
    "parent": "{n:,} block{s} stored under a parent not held (first parent {first:#x})",
    "removed": "{n:,} BlockRemoved of block{s} not held (first {first:#x})",
    "full": "{n:,} block{s} not kept: {limit:,} held already (first {first:#x})",
}


def _met(met: dict, kind: str, block_hash: int) -> None:
    if kind in met:
        met[kind][0] += 1
    else:
        met[kind] = [1, block_hash]


def block_json(block: Block) -> dict:
    return {"hash": block.hash, "parent": block.parent, "token_ids": list(block.token_ids),
            "block_size": block.block_size, "medium": block.medium, "lora_id": block.lora_id,
            "copies": block.copies, "cache_salt": block.cache_salt, "session_id": block.session_id,
            "lora_name": block.lora_name}
