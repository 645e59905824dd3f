"""A Mooncake trace's blocks as units (sim/block_units.py): where each block must be cut.

The token path turns block ``b`` into tokens ``b * block_size + i``; a unit run stands for
a stretch of them. A block is cut (its runs end) at every length at which some prompt of
the trace ends inside it, so that the part-filled last block of one prompt and the same
block, longer, in another share exactly their common tokens, as the token path shares
them. Those lengths are read from the trace's headers before the run (``scan``): one pass
over the file, keeping one 8-byte code per part-filled block (a list of ints, bisected
faster, while the run replays it). Where some request has more
than one output token (so output tokens enter the tree), a block's tokens below the
model's vocabulary (``VOCAB_SIZE``: only the first ids' blocks) stay single tokens, since an
output token may equal one of them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from array import array
from bisect import bisect_left
from itertools import pairwise
from typing import NamedTuple

from radixviz.sim.block_units import BlockPrompt
from radixviz.sim.model_api import VOCAB_SIZE
from radixviz.sim.trace import TraceError

from .lines import parse_object, text_lines
from .mooncake_line import fast_line

if TYPE_CHECKING:
    from pathlib import Path

CACHED_BLOCKS = 1 << 16     # the blocks whose units are kept for reuse
LARGEST_CODE = 2**63 - 1    # codes are int64


class Cuts(NamedTuple):
    """What ``scan`` read: ``codes``, sorted, ``b * block_size + L`` for each block ``b`` some
    prompt ends inside, ``L`` tokens in (0 < L < block_size); ``outputs_cached``: some request
    has more than one output token, so output tokens enter the tree."""
    codes: array
    outputs_cached: bool


def scan(path: Path, block_size: int) -> Cuts | None:
    """The trace's cuts. Lines the run would refuse are passed over (the run stops there with
    its own message); None when a code does not fit 64 bits."""
    codes, outputs = set(), False
    try:
        for _, where, line in text_lines(path):
            fields = fast_line(line)
            if fields is None:
                obj = parse_object(line, where)
                ids, length, output = obj.get("hash_ids"), obj.get("input_length"), obj.get("output_length")
            else:
                ids, length, output = fields.hash_ids, fields.input_length, fields.output_length
            outputs = outputs or not isinstance(output, int) or output > 1
            if not isinstance(ids, list) or not ids or not isinstance(length, int) or isinstance(length, bool):
                continue
            last, part = ids[-1], length - (len(ids) - 1) * block_size
            if isinstance(last, int) and not isinstance(last, bool) and last >= 0 and 0 < part < block_size:
                codes.add(last * block_size + part)
    except TraceError:
        pass    # the run stops at this line: no line after it is replayed
    if codes and max(codes) > LARGEST_CODE:
        return None
    return Cuts(array("q", sorted(codes)), outputs)


class BlockUnits:
    """Block id -> its units (runs cut at the block's cut lengths), kept for up to
    ``CACHED_BLOCKS`` blocks; ``prompt(ids, length)`` joins them into a BlockPrompt."""

    def __init__(self, block_size: int, cuts: Cuts):
        # a list: bisecting an array makes an int object of each element it looks at
        self.block_size, self.codes = block_size, cuts.codes.tolist()
        self.vocab = VOCAB_SIZE if cuts.outputs_cached else 0   # tokens below it stay single
        self.blocks: dict = {}    # id -> (units, token offset after each), tuples

    def of(self, block: int) -> tuple:
        found = self.blocks.get(block)
        if found is not None:
            return found
        size = self.block_size
        base = block * size
        # tokens an output token could equal
        singles = 0 if base >= self.vocab else min(size, self.vocab - base)
        # the lengths at which some prompt ends inside the block, ascending (most blocks: none)
        codes = self.codes
        at = bisect_left(codes, base + 1)
        cuts = [c - base for c in codes[at:bisect_left(codes, base + size, at)]] \
            if at < len(codes) and codes[at] < base + size else ()
        # tuples of ints only, which the collector stops tracking: the blocks kept are many
        if not singles and not cuts:    # most blocks: one run
            found = ((base, size),), (size,)
        elif not singles:
            bounds = (0, *cuts, size)
            found = tuple([(base + start, end - start) for start, end in pairwise(bounds)]), bounds[1:]
        else:
            units: list = list(range(base, base + singles))
            edges = [singles, *(c for c in cuts if c > singles)]
            edges += [size] if singles < size else []
            units += [(base + start, end - start) for start, end in pairwise(edges)]
            found = tuple(units), (*range(1, singles + 1), *edges[1:])
        if len(self.blocks) >= CACHED_BLOCKS:
            self.blocks.clear()     # start afresh: cheaper than keeping an order of use
        self.blocks[block] = found
        return found

    def prompt(self, ids: list, length: int, where: str) -> BlockPrompt:
        """The prompt of ``length`` tokens over blocks ``ids`` (its last block cut to fit)."""
        units: list = []
        blocks, of = self.blocks, self.of
        for block in ids[:-1]:
            units += (blocks.get(block) or of(block))[0]
        last, ends = of(ids[-1])
        part = length - (len(ids) - 1) * self.block_size
        k = bisect_left(ends, part)
        if ends[k] != part:   # the scan saw this line, so its length is a cut: the file changed since
            raise TraceError(f"{where}: the trace changed while it was replayed (block {ids[-1]} ends at "
                             f"{part} tokens here, not when the file was first read)")
        units += last[:k + 1]
        return BlockPrompt(tuple(units), length)
