"""Mooncake-style traces (Kimi's published request traces): one JSON object a line::

    {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 2, 3]}

``hash_ids`` names the prompt's blocks of ``block_size`` tokens (512 in the published
traces): equal ids are equal content. We turn block ``b`` into a run of tokens of its own
(``b * block_size + i``), so two prompts share exactly the blocks their ids share, and cut
the last block to ``input_length``. ``timestamp`` is in milliseconds.

A line's size is checked from its header before anything is built: the ids must be as
many as ``input_length`` needs, and a request that could never run (more tokens than the
pool or the context holds, ``Limits``) is refused naming its line, where expanding it
first cost 1.4 GB for one 120 KB line. A block met again is the same tuple of the same
token objects (``Blocks``, a bounded cache): a prompt is built by joining them, and the
tree compares a shared block object by object.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from collections import OrderedDict
from itertools import chain

from radixviz.sim.request import RequestSpec
from radixviz.sim.trace import TraceError

from .lines import Clock, parse_object, shown, text_lines, time_of, whole
from .mooncake_line import UNSET, fast_line

if TYPE_CHECKING:
    from pathlib import Path

    from .block_cuts import BlockUnits

FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")
DEFAULT_BLOCK = 512
CACHED_TOKENS = 1 << 19     # the blocks kept for reuse, in tokens (about 20 MB)


def block_tokens(block_id: int, block_size: int) -> range:
    return range(block_id * block_size, (block_id + 1) * block_size)


class Limits(NamedTuple):
    """What a request may need to run at all: the pool's slots and the context length."""
    pool_size: int
    context_len: int

    def refusal(self, tokens: int, where: str) -> str | None:
        """Why a request of ``tokens`` (prompt + output) could never run, or None."""
        if tokens >= self.pool_size:
            return (f"{where}: the request needs {tokens:,} slots (input_length + output_length) but "
                    f"the pool has {self.pool_size:,}: it could never run (raise --pool-size)")
        if tokens > self.context_len:
            return (f"{where}: the request needs {tokens:,} tokens of context, more than "
                    f"{self.context_len:,} (raise --context-len)")
        return None


class Blocks:
    """Block id -> its tokens as one tuple, the same object each time the block comes back,
    the least recently used dropped past ``CACHED_TOKENS``."""

    def __init__(self, block_size: int):
        self.block_size = block_size
        self.tuples: OrderedDict = OrderedDict()

    def __call__(self, block: int) -> tuple:
        tuples = self.tuples
        tokens = tuples.get(block)
        if tokens is None:
            tokens = tuples[block] = tuple(block_tokens(block, self.block_size))
            if len(tuples) * self.block_size > CACHED_TOKENS:
                tuples.popitem(last=False)
        else:
            tuples.move_to_end(block)
        return tokens


def parse(obj: dict, where: str, block_size: int, limits: Limits | None = None,
          blocks: Blocks | None = None, units: BlockUnits | None = None) -> RequestSpec:
    """The line's request: its prompt as tokens, or as block units when ``units`` is given."""
    unknown = [k for k in obj if k not in FIELDS]
    if unknown:
        raise TraceError(f"{where}: unknown field {shown(unknown[0])} for a Mooncake trace: "
                         f"use {', '.join(FIELDS)}")
    length = whole(obj, "input_length", where, 1)
    output = whole(obj, "output_length", where, 1)
    ids = obj.get("hash_ids")
    if not isinstance(ids, list) or not ids or any(
            isinstance(b, bool) or not isinstance(b, int) or b < 0 for b in ids):
        raise TraceError(f"{where}: hash_ids must be a non-empty list of whole numbers >= 0")
    return request(length, output, ids, where, block_size, limits, blocks, units)


def request(length: int, output: int, ids: list, where: str, block_size: int, limits: Limits | None = None,
            blocks: Blocks | None = None, units: BlockUnits | None = None) -> RequestSpec:
    """The request of a line whose fields are each well formed: checked as a whole, then built."""
    count = -(-length // block_size)
    if count != len(ids):
        fits = [size for size in (16, 32, 64, 128, 256, 512, 1024) if -(-length // size) == len(ids)]
        hint = f" ({fits[0]} fits)" if fits else ""
        raise TraceError(f"{where}: {len(ids)} hash_ids for {length} tokens, but blocks of "
                         f"{block_size} need {count}: give --block-size{hint}")
    refusal = limits.refusal(length + output, where) if limits is not None else None
    if refusal:
        raise TraceError(refusal)
    if units is not None:
        return RequestSpec(units.prompt(ids, length, where), output)
    blocks = blocks or Blocks(block_size)
    tokens = tuple(chain.from_iterable(map(blocks, ids)))
    return RequestSpec(tokens if len(tokens) == length else tokens[:length], output)


def read(path: Path, block_size: int = DEFAULT_BLOCK, ms_per_pass: float | None = None,
         limits: Limits | None = None, units: BlockUnits | None = None):
    """``(arrival pass or None, RequestSpec)`` per line, streamed (prompts as ``units`` when given)."""
    clock = Clock(ms_per_pass, unit_ms=1.0)
    blocks = Blocks(block_size)
    for _, where, line in text_lines(path):
        fields = fast_line(line)
        if fields is None:
            obj = parse_object(line, where)
            # the time first: a line refused for its size still says when it came
            when = clock.pass_of(time_of(obj, ("timestamp",), where), where)
            yield when, parse(obj, where, block_size, limits, blocks, units)
            continue
        time = fields.timestamp
        when = clock.pass_of(None if time is UNSET else time, where)
        yield when, request(fields.input_length, fields.output_length, fields.hash_ids, where, block_size,
                            limits, blocks, units)
