"""What a recorded server held when its recording ended, as prompts a cache can take again.

``simulate --workers N --router-events FILE,...`` starts each worker holding what one recorded
stream (one server, or one data-parallel rank of it) held: the device-tier blocks left at the
end of the recording, each leaf's tokens read from the root down through its parents (a
recording of either SGLang wire: v0.5.23's several pages an event chain the same way). The
workers' inserts then send their own KV events, so a router that reads events learns the
recorded state the way it would from a server it had just connected to, and a router that
keeps its own guesses starts knowing nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

from radixviz.cache.kv_events import MEDIUM_GPU

from .blocks import Block, BlockTree
from .playback import core_for, play
from .recording import Record

DEVICE_MEDIA = (MEDIUM_GPU, None)   # None: a publisher that leaves the medium out (vLLM's older events)


@dataclass(frozen=True)
class HeldPrompts:
    """One stream's device-tier blocks as root-to-leaf token paths, in the order first stored."""
    paths: tuple[tuple[int, ...], ...]
    blocks: int               # device-tier blocks held at the end
    tokens: int               # their tokens, each block counted once
    broken: int = 0           # paths starting at a block whose parent was never held
    namespaced: int = 0       # blocks in a namespace (an adapter, a cache salt): left out, the workload has none


def held_prompts(tree: BlockTree) -> HeldPrompts:
    """The prompts ``tree`` holds on the device tier."""
    device: dict[int, Block] = {}
    namespaced = 0
    for (medium, block_hash), block in tree.blocks.items():
        if medium not in DEVICE_MEDIA:
            continue
        if block.lora_id is not None or block.lora_name is not None or block.cache_salt is not None:
            namespaced += 1
            continue
        device[block_hash] = block
    parents = {block.parent for block in device.values()}
    paths, broken = [], 0
    for block_hash, block in device.items():
        if block_hash in parents:
            continue                       # not a leaf: a longer path holds its tokens
        chain = [block]
        while chain[-1].parent is not None and chain[-1].parent in device:
            chain.append(device[chain[-1].parent])
        broken += chain[-1].parent is not None
        paths.append(tuple(token for link in reversed(chain) for token in link.token_ids))
    return HeldPrompts(tuple(paths), len(device), sum(len(b.token_ids) for b in device.values()),
                       broken, namespaced)


def recorded_servers(records: list[Record]) -> list[HeldPrompts]:
    """Every stream of a recording, played to its end: what each held then (a gap the
    recording could not fill is counted by the player, not raised)."""
    core = core_for(records)
    for _ in play(core, records):
        pass
    return [held_prompts(core.tree(rank)) for rank in range(len(core.streams))]
