"""Mooncake-style traces (Kimi's published request traces): one JSON object a line::

    {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 2, 3]}

``hash_ids`` names the prompt's blocks of ``block_size`` tokens (512 in the published
traces): equal ids are equal content. We turn block ``b`` into a run of tokens of its own
(``b * block_size + i``), so two prompts share exactly the blocks their ids share, and cut
the last block to ``input_length``. ``timestamp`` is in milliseconds.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.sim.request import RequestSpec
from radixviz.sim.trace import TraceError

from .lines import Clock, json_lines, shown, time_of, whole

if TYPE_CHECKING:
    from pathlib import Path

FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")
DEFAULT_BLOCK = 512


def block_tokens(block_id: int, block_size: int) -> range:
    return range(block_id * block_size, (block_id + 1) * block_size)


def parse(obj: dict, where: str, block_size: int) -> RequestSpec:
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
    blocks = -(-length // block_size)
    if blocks != len(ids):
        fits = [size for size in (16, 32, 64, 128, 256, 512, 1024) if -(-length // size) == len(ids)]
        hint = f" ({fits[0]} fits)" if fits else ""
        raise TraceError(f"{where}: {len(ids)} hash_ids for {length} tokens, but blocks of "
                         f"{block_size} need {blocks}: give --block-size{hint}")
    tokens: list = []
    for block in ids:
        tokens.extend(block_tokens(block, block_size))
    return RequestSpec(tuple(tokens[:length]), output)


def read(path: Path, block_size: int = DEFAULT_BLOCK, ms_per_pass: float | None = None):
    """``(arrival pass or None, RequestSpec)`` per line, streamed."""
    clock = Clock(ms_per_pass, unit_ms=1.0)
    for _, where, obj in json_lines(path):
        spec = parse(obj, where, block_size)
        yield clock.pass_of(time_of(obj, ("timestamp",), where), where), spec
