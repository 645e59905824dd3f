"""What reading a KV-event batch costs, per wire: decode and apply to a block tree.

Batches as a busy server sends them: ``--pages`` pages of ``--page-size`` tokens stored per
batch (one BlockStored a page at 9fbe6800a; one joined event in v0.5.23's), a removal every
other batch. Prints JSON: microseconds per batch for decoding alone and for decoding plus
applying, best of ``--repeat``. Run it on two checkouts to compare (9fbe6800a's wire is the
one both read).

    python bench/wire_decode.py --batches 2000 --pages 16
"""
from __future__ import annotations

import argparse
import json
import time

from radixviz.wire.blocks import BlockTree
from radixviz.wire.events import AllBlocksCleared, BlockRemoved, BlockStored, EventBatch
from radixviz.wire.messages import decode_batch, encode_batch


def arrays(batches: int, pages: int, page: int) -> list[bytes]:
    out, next_hash = [encode_batch(EventBatch(0.0, [AllBlocksCleared()], 0))], 1
    for index in range(batches):
        events: list = []
        parent = None
        for _ in range(pages):
            events.append(BlockStored([next_hash], parent, list(range(page)), page, None, "GPU"))
            parent, next_hash = next_hash, next_hash + 1
        if index % 2:
            events.append(BlockRemoved([next_hash - 2 * pages], "GPU"))
        out.append(encode_batch(EventBatch(float(index), events, 0)))
    return out


def maps(batches: int, pages: int, page: int) -> list[bytes] | None:
    try:
        from radixviz.wire.events import BlockRemovedMap, BlockStoredMap, EventBatchMaps
    except ImportError:       # a checkout before v0.5.23's wire
        return None
    out, next_hash = [], 1
    for index in range(batches):
        hashes = list(range(next_hash, next_hash + pages))
        next_hash += pages
        events: list = [BlockStoredMap(hashes, None, list(range(page)) * pages, page, None, "GPU",
                                       session_id="s")]
        if index % 2:
            events.append(BlockRemovedMap(hashes[:1], "GPU"))
        out.append(encode_batch(EventBatchMaps(float(index), events, 0)))
    return out


def timed(payloads: list[bytes], apply: bool, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        tree = BlockTree()
        start = time.perf_counter()
        for payload in payloads:
            batch = decode_batch(payload)
            if apply:
                tree.apply(batch)
        best = min(best, time.perf_counter() - start)
    return best / len(payloads) * 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", type=int, default=2000)
    p.add_argument("--pages", type=int, default=16)
    p.add_argument("--page-size", type=int, default=16)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--only", choices=("9fbe6800a", "v0.5.23"), default=None,
                   help="time one wire (an A/B of whole processes: farm-bench)")
    args = p.parse_args()
    result = {"batches": args.batches, "pages_a_batch": args.pages, "page_size": args.page_size}
    makers = (("9fbe6800a", arrays), ("v0.5.23", maps))
    for name, payloads in ((n, make(args.batches, args.pages, args.page_size)) for n, make in makers
                           if args.only in (None, n)):
        if payloads is None or args.only not in (None, name):
            continue
        result[name] = {"decode_us_per_batch": round(timed(payloads, False, args.repeat), 2),
                        "decode_apply_us_per_batch": round(timed(payloads, True, args.repeat), 2)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
