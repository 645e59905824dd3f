"""Traces people have, replayed by ``radixviz simulate --trace FILE --format F``.

- ``radixviz``: our own JSON lines (sim/trace.py), read whole and checked before the run;
- ``mooncake``: ``timestamp``, ``input_length``, ``output_length``, ``hash_ids`` (mooncake.py);
- ``openai``: request bodies with ``messages`` or a text ``prompt`` (openai_log.py).

``--format auto`` (the default) reads the first line and names the format when its fields
say so unambiguously; otherwise it refuses with the reason. The two public formats are
streamed: each policy's run reads the file once, line by line, and the scheduler sees a
request when its arrival pass comes (``ms_per_pass`` of trace time per pass), so memory
is the window of live requests. Without ``ms_per_pass`` (or a line without a time) a
request is queued at once, as today's traces are.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from radixviz.errors import UsageError
from radixviz.files import ReadError
from radixviz.sim.trace import TraceError, load_trace

from . import block_cuts, mooncake, openai_log
from .lines import count_lines, json_lines
from .timed_jsonl import read_timed

if TYPE_CHECKING:
    from pathlib import Path

    from .block_cuts import BlockUnits

FORMATS = ("auto", "radixviz", "mooncake", "openai")
DEFAULT_MS_PER_PASS = 25.0   # a decode step of a loaded server is tens of milliseconds


def detect(path: str | Path) -> str:
    """The format the first line's fields name; TraceError with the reason otherwise."""
    for _, where, obj in json_lines(Path(path)):
        keys = set(obj)
        named = []
        if "hash_ids" in keys or "input_length" in keys:
            named.append("mooncake")
        if "messages" in keys or ("prompt" in keys and "output_len" not in keys):
            named.append("openai")
        if "output_len" in keys:
            named.append("radixviz")
        if len(named) == 1:
            return named[0]
        if not named:
            raise TraceError(f"{where}: cannot tell the format from fields {', '.join(sorted(keys)) or '(none)'}"
                             f": give --format radixviz, mooncake or openai")
        raise TraceError(f"{where}: the fields fit {' and '.join(named)}: give --format")
    raise TraceError(f"{path}: the trace has no requests")


def character_tokens(text: str) -> list:
    return [ord(c) for c in text]


def local_tokenizer(path: str):
    """``encode`` from a local tokenizer.json (the ``tokenizers`` package); never downloads."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise TraceError(f"--tokenizer {path}: the tokenizers package is not installed "
                         "(pip install tokenizers), or leave --tokenizer out to count characters") from None
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as error:  # noqa: BLE001 - a bad file is the user's to fix
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise TraceError(f"--tokenizer {path}: not a tokenizer.json: {first}") from None
    return lambda text: tokenizer.encode(text, add_special_tokens=False).ids


class StreamError(TraceError, UsageError):
    """A bad line met during the run (a stream is checked as it is read): still one line,
    exit 2, naming the line."""


class StreamedTrace:
    """A trace read again for each run: ``arrivals()`` is a fresh one-pass iterator (a
    sim/workloads StreamedWorkload, and CountsItself). A Mooncake trace also offers its
    prompts as block units (``block_units``, sim/block_units.py)."""

    def __init__(self, path: Path, fmt: str, reader, described: dict, block_size: int | None = None):
        self.path, self.format, self._reader, self.described = path, fmt, reader, described
        self._count: int | None = None
        self.block_size = block_size    # a Mooncake trace's: its prompts can be keyed by blocks
        self._units: BlockUnits | None = None

    def block_units(self) -> BlockUnits | None:
        """The trace's blocks as units, cut where its prompts end (the file read once, on first
        asking); None for a trace without blocks, or with ids too large to code."""
        if self.block_size is None:
            return None
        if self._units is None:
            cuts = block_cuts.scan(self.path, self.block_size)
            if cuts is None:
                self.block_size = None
                return None
            self._units = block_cuts.BlockUnits(self.block_size, cuts)
        return self._units

    def arrivals(self, units: BlockUnits | None = None):
        """``(arrival pass or None, RequestSpec)`` from the file's start; prompts as ``units``
        (from ``block_units()``) when given, else as tokens."""
        try:
            yield from self._reader(units)
        except TraceError as error:
            raise StreamError(str(error)) from None

    def __iter__(self):
        """The RequestSpecs alone, in file order (a caller with its own arrivals: --workers' --rate)."""
        return (spec for _, spec in self.arrivals())

    def request_count(self) -> int:
        """Non-blank lines: one request each (counted without parsing them)."""
        if self._count is None:
            try:
                self._count = count_lines(self.path)
            except ReadError as error:
                raise StreamError(f"{self.path}: cannot read the trace: {error}") from None
        return self._count

    def note(self) -> str:
        d = self.described
        parts = [f"trace {self.path}: {d['format']} format ({d['format_from']})"]
        if "block_size" in d:
            parts.append(f"blocks of {d['block_size']} tokens")
        parts.append(f"tokens: {d['tokens']}" if "tokens" in d else "")
        parts.append(f"arrivals: {d['arrivals']}")
        return ", ".join(p for p in parts if p)


def open_trace(path: str | Path, fmt: str = "auto", *, block_size: int | None = None, tokenizer: str | None = None,
               ms_per_pass: float | None = None, hf_tokenizer=None, limits: mooncake.Limits | None = None):
    """The trace at ``path``: a list of RequestSpecs (our format, untimed: as before) or a
    StreamedTrace. ``hf_tokenizer(name)`` loads a Hugging Face name for our own format.
    ``limits`` (the run's pool and context): a Mooncake line that could never run is
    refused from its header, naming its line, before its tokens are built."""
    path = Path(path)
    if fmt not in FORMATS:
        raise TraceError(f"unknown trace format {fmt!r}: choose from {', '.join(FORMATS)}")
    given = fmt != "auto"
    fmt = fmt if given else detect(path)
    if block_size is not None and fmt != "mooncake":
        raise TraceError("--block-size applies to a Mooncake trace's hash_ids")
    encode, tokens = None, None
    if tokenizer is not None and Path(tokenizer).is_file():
        encode, tokens = local_tokenizer(tokenizer), f"{tokenizer} (tokenizers)"
    elif tokenizer is not None and fmt == "radixviz" and hf_tokenizer is not None:
        encode, tokens = hf_tokenizer(tokenizer), f"{tokenizer} (transformers)"
    elif tokenizer is not None:
        raise TraceError(f"--tokenizer {tokenizer}: no such file (give a local tokenizer.json)")
    if fmt == "mooncake" and tokenizer is not None:
        raise TraceError("--tokenizer: a Mooncake trace has block ids, not text")
    if fmt == "radixviz" and ms_per_pass is None:
        return load_trace(path, encode)
    if ms_per_pass is None:   # a public format's times drive the queue unless told otherwise
        ms_per_pass = DEFAULT_MS_PER_PASS
    timing = f"{ms_per_pass:g} ms of trace time a pass" if ms_per_pass else "all at once"
    described: dict = {"format": fmt, "format_from": "given" if given else "detected", "arrivals": timing}
    if fmt == "mooncake":
        size = block_size or mooncake.DEFAULT_BLOCK
        described["block_size"] = size
        reader = lambda units=None: mooncake.read(path, size, ms_per_pass, limits, units)   # noqa: E731
    elif fmt == "openai":
        encode = encode or character_tokens
        described["tokens"] = tokens or "one per character (no --tokenizer)"
        reader = lambda units=None: openai_log.read(path, encode, ms_per_pass)   # noqa: E731
    else:
        described["tokens"] = tokens or "one per UTF-8 byte"
        reader = lambda units=None: read_timed(path, encode, ms_per_pass)   # noqa: E731
    trace = StreamedTrace(path, fmt, reader, described, described.get("block_size"))
    first = next(iter(trace.arrivals()), None)   # the first line's errors, before anything runs
    if first is None:
        raise TraceError(f"{path}: the trace has no requests")
    return trace
