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

from dataclasses import dataclass, field, fields, replace

from .events import stored_metadata
from .tiers import namespace_name
from .messages import AllBlocksCleared, BlockRemoved, BlockStored, EventBatch

DEFAULT_MAX_BLOCKS = 2_000_000   # blocks held per rank before new ones are counted, not kept
DEFAULT_MAX_TOKENS = 16_000_000  # tokens held per rank: a block past it is counted, not kept


@dataclass(slots=True)
class Block:
    """A page as the stream stored it. Never changed once held (a second copy replaces it
    with one whose ``copies`` is 2), so the history and the view's tree can share it."""
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
    over_capacity: int = 0       # blocks not kept: the rank held max_blocks (or max_tokens) already
    gaps: int = 0                # times a sequence number was skipped
    recovered: int = 0           # batches a replay filled in
    unfilled: int = 0            # batches lost for good (replay had not got them, or no replay)
    duplicates: int = 0          # batches seen twice (kept once)
    restarts: int = 0            # the publisher began again at sequence 0
    implausible: int = 0         # sequence numbers past what the stream could have sent (ignored)
    ranks_refused: int = 0       # batches from a DP rank past --max-ranks (not applied)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class Budget:
    """Tokens the trees sharing it may hold together (a watcher's ranks share one)."""
    limit: int = DEFAULT_MAX_TOKENS
    held: int = 0


# One change to a tree: (key, the block before or None, the block after or None). A batch's
# changes, applied in order, turn the tree before it into the tree after; undone in reverse
# order, back. The watch app keeps these for its history, not whole trees.
Change = tuple


@dataclass
class BlockTree:
    """One rank's blocks; ``apply`` takes a batch in sequence order. Every change goes
    through ``_put``, which keeps the indexes (children by parent, media, counts) and, when
    ``changes`` is a list, appends the change to it for whoever reads them."""
    problems: Problems = field(default_factory=Problems)
    max_blocks: int = DEFAULT_MAX_BLOCKS
    budget: Budget = field(default_factory=Budget)
    blocks: dict = field(default_factory=dict)     # (medium, hash) -> Block
    tiers: dict = field(default_factory=dict)      # hash -> how many media hold it
    counts: dict = field(default_factory=dict)     # medium -> [blocks, tokens] held there
    seen_media: set = field(default_factory=set)
    tokens: int = 0                                # tokens held, every medium
    stored_total: int = 0
    removed_total: int = 0
    last_seq: int | None = None
    changes: list | None = None                    # appended to by _put when a list
    # kept once ensure_index asked for them (a view)
    indexed: bool = False
    kids: dict = field(default_factory=dict)       # (medium, parent hash) -> {hash: None}, in order
    loose: set = field(default_factory=set)        # keys of ``kids`` whose parent is not held there
    spaces: dict = field(default_factory=dict)     # namespace (tiers.namespace_name) -> blocks held
    sessions: dict = field(default_factory=dict)   # session_id -> blocks held
    unprintable: int = 0                           # held blocks with a token that is not printable ASCII

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
                                            limit=self.max_blocks, tokens=self.budget.limit)
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
                self._put(key, replace(held, copies=held.copies + 1))
            elif len(self.blocks) >= self.max_blocks:
                self.problems.over_capacity += 1
                _met(met, "full", block_hash)
            elif self.budget.held + len(tokens) > self.budget.limit:
                self.problems.over_capacity += 1
                _met(met, "tokens", block_hash)
            else:
                self._put(key, Block(block_hash, parent, tokens, len(tokens), event.medium, event.lora_id, 1, meta))
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
            self._put(key, replace(block, copies=block.copies - 1) if block.copies > 1 else None)

    def _put(self, key: tuple, block: Block | None) -> None:
        """Hold ``block`` under ``key`` (None: hold nothing there), indexes and counts kept.
        (Every page of every batch passes here: the counting is written out, not called.)"""
        blocks = self.blocks
        old = blocks.get(key)
        if old is block:
            return
        if self.changes is not None:
            self.changes.append((key, old, block))
        medium, block_hash = key
        count = self.counts.get(medium)
        if count is None:
            count = self.counts[medium] = [0, 0]
        if old is not None:
            del blocks[key]
            left = self.tiers.pop(block_hash) - 1
            if left:
                self.tiers[block_hash] = left
            count[0] -= 1
            count[1] -= len(old.token_ids)
            self.tokens -= len(old.token_ids)
            self.budget.held -= len(old.token_ids)
            if self.indexed:
                self._unindex(key, old)
        if block is not None:
            blocks[key] = block
            self.tiers[block_hash] = self.tiers.get(block_hash, 0) + 1
            self.seen_media.add(medium)
            count[0] += 1
            count[1] += len(block.token_ids)
            self.tokens += len(block.token_ids)
            self.budget.held += len(block.token_ids)
            if self.indexed:
                self._index(key, block)

    # -------------------------------------------------------- what only a view needs

    def ensure_index(self) -> None:
        """Keep, from now on, what drawing the tree needs: the children of each block, the
        blocks whose parent is not held, the namespaces and sessions held, whether every
        token is printable. Made on a view's first look (watch --json never makes it)."""
        if self.indexed:
            return
        self.indexed = True
        self.kids, self.loose, self.spaces, self.sessions, self.unprintable = {}, set(), {}, {}, 0
        for key, block in self.blocks.items():
            self._index(key, block)

    def _index(self, key: tuple, block: Block) -> None:
        kids, medium = self.kids, key[0]
        under = (medium, block.parent)
        siblings = kids.get(under)
        if siblings is None:
            siblings = kids[under] = {}
            if under not in self.blocks:
                self.loose.add(under)
        siblings[key[1]] = None
        self.loose.discard(key)
        self._view_count(block, 1)

    def _unindex(self, key: tuple, block: Block) -> None:
        kids, under = self.kids, (key[0], block.parent)
        siblings = kids[under]
        del siblings[key[1]]
        if not siblings:
            del kids[under]
            self.loose.discard(under)
        if key in kids:
            self.loose.add(key)      # its children lost their parent
        self._view_count(block, -1)

    def _view_count(self, block: Block, sign: int) -> None:
        if block.meta is not None or block.lora_id is not None:   # a namespace, a session
            _tally(self.spaces, namespace_name(block), sign)
            _tally(self.sessions, block.session_id, sign)
        token_ids = block.token_ids   # min and max, not a loop in Python: 100,000 blocks a batch
        if token_ids and (min(token_ids) < 32 or max(token_ids) > 126):
            self.unprintable += sign

    def replay(self, changes: list, undo: bool = False) -> None:
        """Make the changes of some batch to this tree (``undo``: take them back)."""
        if undo:
            for key, before, _after in reversed(changes):
                self._put(key, before)
        else:
            for key, _before, after in changes:
                self._put(key, after)

    def _find(self, medium: str | None, block_hash: int):
        if (medium, block_hash) in self.blocks:
            return (medium, block_hash)
        if medium is None and block_hash in self.tiers:   # no medium named: whichever tier holds it
            return next((m, block_hash) for m in self.seen_media if (m, block_hash) in self.blocks)
        return None

    def holds(self, block_hash: int) -> bool:
        """Whether any medium holds the block."""
        return block_hash in self.tiers

    def children(self, medium: str | None, block_hash: int | None) -> dict:
        """The hashes of the blocks held on ``medium`` under ``block_hash``, in the order stored."""
        return self.kids.get((medium, block_hash), _NONE)

    def media(self) -> list:
        return sorted(self.seen_media, key=lambda m: m or "")

    def clear(self) -> None:
        for key in list(self.blocks):
            self._put(key, None)

    def copy(self) -> BlockTree:
        """Another tree holding the same blocks (shared: a block is never changed in place)."""
        # the copy is a view of this tree: it counts against no limit
        return BlockTree(self.problems, self.max_blocks, Budget(2 ** 62, self.tokens), dict(self.blocks),
                         dict(self.tiers), {m: list(c) for m, c in self.counts.items()}, set(self.seen_media),
                         self.tokens, self.stored_total, self.removed_total, self.last_seq, None,
                         self.indexed, {k: dict(v) for k, v in self.kids.items()}, set(self.loose),
                         dict(self.spaces), dict(self.sessions), self.unprintable)

    def sorted_blocks(self) -> list[Block]:
        return [self.blocks[k] for k in sorted(self.blocks, key=lambda k: (k[0] or "", k[1]))]

    def orphans(self) -> int:
        """Held blocks whose parent is not held (the tree shows them under a '?' node)."""
        return sum(1 for b in self.blocks.values() if b.parent is not None and not self.holds(b.parent))

    def tier_figures(self) -> dict:
        """medium -> (blocks, tokens) held."""
        return {medium: (n, tokens) for medium, (n, tokens) in self.counts.items() if n}


_NONE: dict = {}


_PROBLEM_LINES = {
    "parent": "{n:,} block{s} stored under a parent not held (first parent {first:#x})",
    "removed": "{n:,} BlockRemoved of block{s} not held (first {first:#x})",
    "full": "{n:,} block{s} not kept: {limit:,} held already (first {first:#x}; --max-blocks raises it)",
    "tokens": "{n:,} block{s} not kept: {tokens:,} tokens held already (first {first:#x}; --max-tokens raises it)",
}


def _tally(counts: dict, name, sign: int) -> None:
    if name is None:
        return
    left = counts.get(name, 0) + sign
    if left:
        counts[name] = left
    else:
        counts.pop(name, None)


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
