"""Your own traffic: a JSON-lines trace turned into RequestSpecs for the scheduler.

One JSON object a line (blank lines are skipped)::

    {"prompt": "You are a helpful assistant. Q: ...", "output_len": 32}
    {"prompt": [101, 2023, 2003], "output_len": 16, "arrival": 3, "session": "user-7"}

- ``prompt`` (required): text, or a list of token ids (whole numbers >= 0). Text becomes
  its UTF-8 bytes, one token per byte, unless a tokenizer is named.
- ``output_len`` (required): how many tokens the request generates (>= 1).
- ``arrival`` (optional number): requests are replayed in arrival order, equal arrivals
  in file order; a line without one arrives with the line before it (the first at 0).
- ``session`` (optional string or number): requests of one session are sent one after
  another: the next is queued when the previous one finishes, as a user waits for an
  answer before asking again.
- ``priority`` (optional whole number, default 0): the request's priority, as SGLang's API
  takes it. Today's cache (``--engine 2026``) stores it at insert and its ``priority``
  eviction policy evicts low values first; the 2024 engine ignores it.

The whole file is checked before anything runs; the first bad line raises TraceError
``FILE:LINE: message``. A trace holds at most ``MAX_REQUESTS`` requests (as ``--requests``)
and ``MAX_TRACE_BYTES`` bytes, and is read only from a regular file.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from radixviz.files import ReadError, excerpt, read_text

from .defaults import MAX_REQUESTS
from .request import RequestSpec

FIELDS = ("prompt", "output_len", "arrival", "session", "priority")
MAX_TRACE_BYTES = 200_000_000
MAX_ID = 2**63 - 1             # token ids and output lengths: what an int64 tensor holds
MAX_LINE_CHARS = 1_000_000     # one request's line; a longer one is refused before json reads it


class TraceError(ValueError):
    """A trace that cannot be replayed; the message is ``FILE:LINE: what is wrong``."""


def load_tokenizer(name: str):
    """A Hugging Face tokenizer's ``encode``; TraceError (one line) when it cannot load."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise TraceError(f"--tokenizer {name}: the transformers package is not installed "
                         "(pip install transformers), or leave --tokenizer out to use bytes") from None
    try:
        tokenizer = AutoTokenizer.from_pretrained(name)
    except Exception as error:  # noqa: BLE001 - any load failure is the user's to fix
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise TraceError(f"--tokenizer {name}: cannot load it: {first}") from None
    return lambda text: tokenizer.encode(text, add_special_tokens=False)


def load_trace(path, encode=None) -> list[RequestSpec]:
    """The trace at ``path`` as RequestSpecs in arrival order, sessions chained.

    ``encode(text) -> list[int]`` tokenizes text prompts (default: UTF-8 bytes).
    """
    path = Path(path)
    try:
        text = read_text(path, MAX_TRACE_BYTES)
    except ReadError as error:
        raise TraceError(f"{path}: cannot read the trace: {error}") from None
    entries: list = []  # (arrival, session, RequestSpec, line number)
    arrival = 0
    # lines end at \n only: JSON strings may hold U+2028 and other characters splitlines cuts at
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if len(entries) == MAX_REQUESTS:
            raise TraceError(f"{path}:{number}: more than {MAX_REQUESTS:,} requests, the most a "
                             "simulation runs (as --requests): split the trace")
        given, session, spec = _parse_line(line, f"{path}:{number}", encode)
        # a line without an arrival comes with the line before it
        arrival = given if given is not None else arrival
        entries.append((arrival, session, spec, number))
    if not entries:
        raise TraceError(f"{path}: the trace has no requests")
    entries.sort(key=lambda e: (e[0], e[3]))
    return _chain_sessions(entries)


def _parse_line(line: str, where: str, encode):
    if len(line) > MAX_LINE_CHARS:
        raise TraceError(f"{where}: line too long ({len(line):,} characters; at most {MAX_LINE_CHARS:,})")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as error:
        raise TraceError(f"{where}: not JSON: {error.msg} (column {error.colno})") from None
    except RecursionError:
        raise TraceError(f"{where}: not a request: JSON nested too deeply") from None
    except ValueError:   # Python refuses to read an integer of more than 4,300 digits
        raise TraceError(f"{where}: not a request: a number of more than 4,300 digits") from None
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: each line must be a JSON object with prompt and output_len")
    unknown = [k for k in obj if k not in FIELDS]
    if unknown:
        raise TraceError(f"{where}: unknown field {excerpt(unknown[0])}: use {', '.join(FIELDS)}")
    for name in ("prompt", "output_len"):
        if name not in obj:
            raise TraceError(f"{where}: missing {name!r}")
    prompt = _tokens(obj["prompt"], where, encode)
    output_len = obj["output_len"]
    if isinstance(output_len, bool) or not isinstance(output_len, int) or not 1 <= output_len <= MAX_ID:
        raise TraceError(f"{where}: output_len must be a whole number from 1 to {MAX_ID}, not {_shown(output_len)}")
    arrival = obj.get("arrival")
    if arrival is not None and (isinstance(arrival, bool) or not isinstance(arrival, (int, float))
                                or not math.isfinite(arrival)):
        raise TraceError(f"{where}: arrival must be a finite number, not {_shown(arrival)}")
    session = obj.get("session")
    if session is not None and (isinstance(session, bool) or not isinstance(session, (str, int))):
        raise TraceError(f"{where}: session must be a string or a whole number, not {_shown(session)}")
    priority = obj.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int) or abs(priority) > MAX_ID:
        raise TraceError(f"{where}: priority must be a whole number, not {_shown(priority)}")
    return arrival, session, RequestSpec(prompt, output_len, priority=priority)


def _tokens(prompt, where: str, encode) -> tuple:
    if isinstance(prompt, str):
        tokens = tuple(encode(prompt)) if encode else tuple(prompt.encode("utf-8"))
    elif isinstance(prompt, list):
        bad = [t for t in prompt if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= MAX_ID]
        if bad:
            raise TraceError(f"{where}: prompt token ids must be whole numbers from 0 to {MAX_ID}, "
                             f"not {_shown(bad[0])}")
        tokens = tuple(prompt)
    else:
        raise TraceError(f"{where}: prompt must be text or a list of token ids, "
                         f"not {type(prompt).__name__}")
    if not tokens:
        raise TraceError(f"{where}: the prompt is empty")
    return tokens


def _shown(value) -> str:
    """A value as Python writes it, cut short: an error never echoes a whole line back."""
    text = repr(value)
    return text if len(text) <= 24 else text[:23] + "…"


def _chain_sessions(entries) -> list[RequestSpec]:
    """Requests without a session stand alone; a session becomes one chain via ``then``."""
    sessions: dict = {}
    order = []  # a standalone spec, or the key of a session at its first request
    for _, session, spec, _ in entries:
        if session is None:
            order.append(spec)
            continue
        key = ("session", session)
        if key not in sessions:
            sessions[key] = []
            order.append(key)
        sessions[key].append(spec)
    out = []
    for item in order:
        if isinstance(item, RequestSpec):
            out.append(item)
            continue
        chain: RequestSpec | None = None
        for spec in reversed(sessions[item]):
            chain = RequestSpec(spec.input_ids, spec.max_new_tokens, then=chain,
                                priority=spec.priority)
        if chain is not None:   # a session listed in ``order`` has at least one request
            out.append(chain)
    return out
