"""A Mooncake trace's line decoded in one call (msgspec) when it is well formed.

``mooncake.parse`` checks a line field by field after ``json`` has read it, to name what is
wrong; a long trace's lines are almost all right, and this reads one of those several
times faster. It accepts exactly the lines those checks accept; for any other, a bad one
included, it says None and the caller reads the line the checking way.
"""
from __future__ import annotations

from typing import Annotated

import math

import msgspec

from radixviz.sim.trace import MAX_ID

UNSET = msgspec.UNSET


class Line(msgspec.Struct, forbid_unknown_fields=True):
    """A line as the fast decoder reads it: exactly the lines ``parse`` accepts field by field
    (whole numbers in range, no bool for an int, a finite time). Any other line, a bad one
    included, is read again by ``json`` and ``parse``, whose message names what is wrong."""
    input_length: Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]
    output_length: Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]
    hash_ids: list[Annotated[int, msgspec.Meta(ge=0)]]
    timestamp: int | float | msgspec.UnsetType = msgspec.UNSET


decode_line = msgspec.json.Decoder(Line).decode


def fast_line(line: str) -> Line | None:
    """The line decoded, or None when ``parse`` must read it (to accept it or say why not)."""
    try:
        fields = decode_line(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    time = fields.timestamp
    if not fields.hash_ids or (time.__class__ is float and not math.isfinite(time)):
        return None
    return fields
