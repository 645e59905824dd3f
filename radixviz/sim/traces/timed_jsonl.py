"""Our own JSON-lines format with its ``arrival`` field driving the queue (``--pass-ms``).

Arrivals are read as milliseconds here. The file is read whole and checked first, as
without timing (sim/trace.py): sessions chain requests across the file, so it cannot be
streamed; each chain is queued at its first request's arrival.
"""
from __future__ import annotations

from radixviz.files import ReadError, read_text
from radixviz.sim.trace import MAX_TRACE_BYTES, TraceError, _chain_sessions, _parse_line

from .lines import Clock


def read_timed(path, encode, ms_per_pass: float):
    try:
        text = read_text(path, MAX_TRACE_BYTES)
    except ReadError as error:
        raise TraceError(f"{path}: cannot read the trace: {error}") from None
    entries: list = []
    arrival = 0
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            given, session, spec = _parse_line(line, f"{path}:{number}", encode)
            arrival = given if given is not None else arrival
            entries.append((arrival, session, spec, number))
    entries.sort(key=lambda e: (e[0], e[3]))
    heads, seen = [], set()    # the arrival of each chain, in the order _chain_sessions gives
    for when, session, _, _ in entries:
        if session is None or ("session", session) not in seen:
            heads.append(when)
            if session is not None:
                seen.add(("session", session))
    clock = Clock(ms_per_pass, unit_ms=1.0)
    for when, spec in zip(heads, _chain_sessions(entries)):
        yield clock.pass_of(when, str(path)), spec
