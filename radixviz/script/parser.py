"""The operation language: one operation a line (or ``;``-separated), shell-like quoting.

    insert "Hello_L.A.!"      match Hello_world      lock "Hello_"     unlock "Hello_"
    evict 5                   matcher buggy          reset             insert tokens 12 7 3
    engine 2026               page-size 4            eviction lfu      insert "Hi" priority 2
    insert-slots release      (inserts keep one slot fewer than their tokens, as before #4)
    insert "Hi" ns lora-a     match "Hi" ns lora-a   events on         (2026: namespaces, KV events)
    engine hicache            host-size 300          write-policy write_back
    sync                      auto-sync off          load-back "Hello_"        evict-host 8
    hicache-fixes off         (SGLang's two write_back bugs of 9fbe6800a back; on: fixed)

A key is one word, each character a token, or ``tokens`` followed by integer ids.
A bare ``tokens 12 7 3`` line inserts those ids. ``engine 2024|2026`` picks the cache (a
fresh one), ``page-size N`` starts a fresh 2026 cache with pages of N tokens, ``eviction
NAME`` sets the 2026 cache's eviction policy, and an insert may end with ``priority N``.
A key operation may end with ``ns NAME``: the key lives in namespace NAME (SGLang's
``extra_key``), and ``events on`` starts a fresh 2026 cache that queues KV events.
The host-tier engine (``engine hicache``) adds ``host-size N`` (a fresh cache whose host pool
holds N tokens), ``write-policy P``, ``sync`` (wait for the copies in flight and acknowledge
them), ``auto-sync on|off`` (acknowledge them before each operation, as the scheduler checks
every round; on by default), ``load-back KEY`` (match, then bring the host-only part back to
the device) and ``evict-host N``. ``evict N COMPONENT`` evicts a component the engine
declares other than its first (contract.py: ``evict 8 host``, a window's ``evict 2 window``):
its data leaves the nodes, which stay. An option a registered engine declares with an operation
of its own (radixviz/cache/options.py: ``window 4``) is parsed by that option's limits or words.
``hicache-fixes on|off|load-back-unprotected|host-leaf-by-evicted`` (off brings back both of
SGLang's 9fbe6800a write_back bugs, a bug's name just that one).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from radixviz.cache.engines import engine_names, op_owners, option_ops
from radixviz.cache.evict_policy import POLICY_NAMES as EVICTION_POLICIES
from radixviz.cache.write_policy import WRITE_POLICY_NAMES
from radixviz.files import BOM, ReadError, excerpt, read_bytes, strip_controls
from radixviz.settings import HOST_SLOTS, PAGE_SIZE

MAX_SCRIPT_BYTES = 1_000_000
KEY_OPS = ("insert", "match", "lock", "unlock", "load-back")
OP_NAMES = KEY_OPS + ("evict", "matcher", "insert-slots", "reset", "tokens", "engine", "page-size", "eviction",
                      "host-size", "write-policy", "sync", "auto-sync", "evict-host", "events", "hicache-fixes")
MODES = {"matcher": ("fixed", "buggy"), "insert-slots": ("fixed", "release"), "auto-sync": ("on", "off"),
         "events": ("on", "off"),
         # which 9fbe6800a bugs are back (engines/hicache/cache_head_bugs.py FIX_MODES: same words)
         "hicache-fixes": ("on", "off", "load-back-unprotected", "host-leaf-by-evicted")}
COUNT_OPS = ("evict", "page-size", "host-size", "evict-host")
MODE_OPS = ("matcher", "insert-slots", "engine", "eviction", "write-policy", "auto-sync", "events",
            "hicache-fixes")
NAMESPACE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,39}")
COMPONENT = re.compile(r"[a-z][a-z0-9_-]{0,23}")   # a declared component's name: ``evict 2 host``
MAX_DIGITS = 18          # every number in the language fits in 64 bits
USAGE = {
    "insert": 'insert "Hello"', "match": 'match "Hello"', "lock": 'lock "Hello"',
    "unlock": 'unlock "Hello"', "evict": "evict 5", "matcher": "matcher fixed|buggy",
    "insert-slots": "insert-slots release|fixed",
    "reset": "reset", "tokens": "tokens 12 7 7 3", "engine": "engine " + "|".join(engine_names()),
    "page-size": "page-size 4", "eviction": "eviction " + "|".join(EVICTION_POLICIES),
    "events": "events on|off",
    "load-back": 'load-back "Hello"', "host-size": "host-size 300", "sync": "sync",
    "write-policy": "write-policy " + "|".join(WRITE_POLICY_NAMES), "auto-sync": "auto-sync on|off",
    "evict-host": "evict-host 8",
    "hicache-fixes": "hicache-fixes on|off|load-back-unprotected|host-leaf-by-evicted",
}


class ScriptError(Exception):
    """A bad line: ``FILE:LINE:COL: message``."""

    def __init__(self, file: str, line: int, col: int, message: str):
        super().__init__(f"{file}:{line}:{col}: {message}")
        self.file, self.line, self.col, self.message = file, line, col, message


@dataclass(frozen=True)
class Op:
    name: str                 # insert, match, lock, unlock, evict, matcher, reset
    key: tuple | None = None  # for the key operations
    count: int | None = None  # for evict, and page-size
    mode: str | None = None   # matcher (fixed, buggy), insert-slots (fixed, release), engine, eviction
    priority: int | None = None  # for insert ... priority N (None: not given, the engine's 0)
    ns: str | None = None     # for the key operations: ... ns NAME (None: no namespace)
    text: str = ""            # the operation as written
    file: str = "<input>"
    line: int = 1
    col: int = 1

    @property
    def args(self) -> tuple:
        if self.name == "insert" and self.priority is not None:
            return (self.key, self.priority)
        if self.name in KEY_OPS:
            return (self.key,)
        if self.name in COUNT_OPS:
            return (self.count,) if self.mode is None else (self.count, self.mode)   # evict 2 host
        if self.name in MODE_OPS or self.mode is not None:   # a registered option's word too
            return (self.mode,)
        if self.count is not None:
            return (self.count,)
        return ()

    def where(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class _Word:
    text: str
    col: int       # 1-based column of the first character
    end: int       # index just past the last character
    quoted: bool


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


def _split_line(line: str, file: str, lineno: int) -> list[list[_Word]]:
    """Words of each ``;``-separated part of one line; comments dropped."""
    parts: list[list[_Word]] = [[]]
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch in " \t\r\f\v":
            i += 1
        elif ch == "#":
            break
        elif ch == ";":
            parts.append([])
            i += 1
        else:
            start, buf, quoted = i, [], False
            while i < n and line[i] not in " \t\r\f\v;#":
                if line[i] in "\"'":
                    quote, qstart, quoted = line[i], i, True
                    i += 1
                    while i < n and line[i] != quote:
                        if line[i] == "\\" and quote == '"' and i + 1 < n:
                            buf.append(_ESCAPES.get(line[i + 1], "\\" + line[i + 1]))
                            i += 2
                        else:
                            buf.append(line[i])
                            i += 1
                    if i >= n:
                        raise ScriptError(file, lineno, qstart + 1, f"unterminated quote {quote}")
                    i += 1
                else:
                    buf.append(line[i])
                    i += 1
            parts[-1].append(_Word("".join(buf), start + 1, i, quoted))
    return [p for p in parts if p]


def _int(word: _Word, file: str, lineno: int, what: str) -> int:
    if len(word.text) > MAX_DIGITS and word.text.lstrip("+-").isdigit():
        raise ScriptError(file, lineno, word.col, f"number too large ({len(word.text):,} digits; "
                                                  f"at most {MAX_DIGITS}): {what}")
    try:
        return int(word.text, 10)
    except ValueError:
        raise ScriptError(file, lineno, word.col, f"bad number {excerpt(word.text)}: {what}") from None


def _key(name: str, args: list[_Word], file: str, lineno: int, col: int) -> tuple:
    if not args:
        raise ScriptError(file, lineno, col, f"missing argument: {name} needs a key, e.g. {USAGE[name]}")
    if args[0].text == "tokens" and not args[0].quoted:
        return _token_ids(args[1:], file, lineno, args[0].col)
    if len(args) > 1:
        raise ScriptError(file, lineno, args[1].col, f"extra argument {excerpt(args[1].text)}: "
                          f"quote a key that has spaces, e.g. {name} \"Hello world\"")
    return tuple(args[0].text)


def _token_ids(args: list[_Word], file: str, lineno: int, col: int) -> tuple:
    if not args:
        raise ScriptError(file, lineno, col, "missing argument: tokens needs ids, e.g. tokens 12 7 7 3")
    ids = tuple(_int(w, file, lineno, "token ids are integers") for w in args)
    for word, value in zip(args, ids):
        if value < 0:
            raise ScriptError(file, lineno, word.col, f"bad token id {value}: ids are >= 0")
    return ids


def _parse_op(words: list[_Word], raw: str, file: str, lineno: int) -> Op:
    head, args = words[0], words[1:]
    name, col = head.text, head.col
    text = raw[col - 1:words[-1].end]
    where: dict[str, Any] = dict(text=text, file=file, line=lineno, col=col)
    if name not in OP_NAMES:
        if name in option_ops():     # a registered engine's own option: ``window 4``
            return _option_op(option_ops()[name], args, file, lineno, where)
        if op_owners(name):          # a registered engine's own operation: ``slide``
            return _engine_op(name, args, file, lineno, where)
        known = OP_NAMES + tuple(op for op in option_ops() if op not in OP_NAMES)
        close = difflib.get_close_matches(name.lower(), known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else f" (operations: {', '.join(known)})"
        raise ScriptError(file, lineno, col, f"unknown operation {excerpt(name)}{hint}")
    priority = ns = None
    # trailing modifiers, in either order: priority N (inserts), ns NAME (key operations)
    while len(args) >= 2 and not args[-2].quoted and args[-2].text in ("priority", "ns"):
        word, value = args[-2], args[-1]
        if word.text == "priority" and name in ("insert", "tokens") and priority is None:
            priority = _int(value, file, lineno, "priority is a whole number, e.g. priority 2")
        elif word.text == "ns" and (name in KEY_OPS or name == "tokens") and ns is None:
            if not NAMESPACE.fullmatch(value.text):
                raise ScriptError(file, lineno, value.col, f"bad namespace {excerpt(value.text)}: letters, digits "
                                  "and _ . : / - (up to 40), e.g. ns lora-a")
            ns = value.text
        else:
            break
        args = args[:-2]
    if (name in KEY_OPS or name == "tokens") and len(args) >= 2 and args[-1].text == "ns" \
            and not args[-1].quoted:
        raise ScriptError(file, lineno, args[-1].col, "missing argument: ns needs a name, e.g. ns lora-a")
    if name in KEY_OPS:
        return Op(name, key=_key(name, args, file, lineno, col), priority=priority, ns=ns, **where)
    if name == "tokens":
        return Op("insert", key=_token_ids(args, file, lineno, col), priority=priority, ns=ns, **where)
    if name in ("reset", "sync"):
        if args:
            raise ScriptError(file, lineno, args[0].col, f"extra argument {excerpt(args[0].text)}: {name} takes none")
        return Op(name, **where)
    if not args:
        raise ScriptError(file, lineno, col, f"missing argument: e.g. {USAGE[name]}")
    if name == "evict" and len(args) == 2 and not args[1].quoted and COMPONENT.fullmatch(args[1].text):
        # ``evict 2 window``: a component the engine declares (contract.py), checked by the session
        return replace(_parse_op(words[:-1], raw, file, lineno), text=text, mode=args[1].text)
    if len(args) > 1:
        raise ScriptError(file, lineno, args[1].col, f"extra argument {excerpt(args[1].text)}: e.g. {USAGE[name]}")
    if name in ("evict", "evict-host"):
        count = _int(args[0], file, lineno, f"{name} takes a token count, e.g. {USAGE[name]}")
        if count < 0:
            raise ScriptError(file, lineno, args[0].col, f"negative eviction {count}: {name} takes a count >= 0")
        return Op(name, count=count, **where)
    if name == "host-size":
        size = _int(args[0], file, lineno, "host-size takes a token count, e.g. host-size 300")
        if not HOST_SLOTS.low <= size <= HOST_SLOTS.high:
            raise ScriptError(file, lineno, args[0].col, f"host size {size}: use {HOST_SLOTS.low} to {HOST_SLOTS.high}")
        return Op("host-size", count=size, **where)
    if name == "page-size":
        size = _int(args[0], file, lineno, "page-size takes a token count, e.g. page-size 4")
        if not PAGE_SIZE.low <= size <= PAGE_SIZE.high:
            raise ScriptError(file, lineno, args[0].col, f"page size {size}: use {PAGE_SIZE.low} to {PAGE_SIZE.high}")
        return Op("page-size", count=size, **where)
    mode = args[0].text.lower()
    if name == "engine":
        if mode not in engine_names():
            raise ScriptError(file, lineno, args[0].col,
                              f"unknown engine {excerpt(args[0].text)}: use {' or '.join(engine_names())}")
        return Op("engine", mode=mode, **where)
    if name == "write-policy":
        mode = mode.replace("-", "_")
        if mode not in WRITE_POLICY_NAMES:
            raise ScriptError(file, lineno, args[0].col, f"unknown write policy {excerpt(args[0].text)}: "
                              f"use {', '.join(WRITE_POLICY_NAMES)}")
        return Op("write-policy", mode=mode, **where)
    if name == "eviction":
        if mode not in EVICTION_POLICIES:
            raise ScriptError(file, lineno, args[0].col, f"unknown eviction policy {excerpt(args[0].text)}: "
                              f"use {', '.join(EVICTION_POLICIES)}")
        return Op("eviction", mode=mode, **where)
    modes = MODES[name]
    if mode not in modes:
        what = {"matcher": "matcher", "insert-slots": "insert-slots mode",
                "events": "events switch", "hicache-fixes": "hicache-fixes mode"}.get(name, f"{name} mode")
        raise ScriptError(file, lineno, args[0].col,
                          f"unknown {what} {excerpt(args[0].text)}: use {' or '.join(modes)}")
    return Op(name, mode=mode, **where)


def _option_op(option, args: list[_Word], file: str, lineno: int, where: dict) -> Op:
    """``NAME VALUE`` for an option declared in the registry (options.py): its value parsed
    by the option itself, a number into ``count``, a word or a switch into ``mode``."""
    name, col = option.op_name, where["col"]
    if len(args) != 1:
        word = args[1] if args else None
        raise ScriptError(file, lineno, word.col if word else col,
                          f"{'extra' if word else 'missing'} argument: e.g. {option.usage()}")
    try:
        value = option.parse(args[0].text)
    except ValueError as exc:
        raise ScriptError(file, lineno, args[0].col, f"{exc} (e.g. {option.usage()})") from None
    if option.limit is not None:
        return Op(name, count=value, **where)
    return Op(name, mode=args[0].text.lower() if option.is_switch else value, **where)


def _engine_op(name: str, args: list[_Word], file: str, lineno: int, where: dict) -> Op:
    """``NAME`` or ``NAME N`` for an operation a registered engine's spec lists in ``ops``
    and its script module handles (which refuses a count it takes none of)."""
    if len(args) > 1:
        raise ScriptError(file, lineno, args[1].col, f"extra argument {excerpt(args[1].text)}: "
                          f"{name} takes at most one number")
    if not args:
        return Op(name, **where)
    count = _int(args[0], file, lineno, f"{name} takes a whole number, or none")
    if count < 0:
        raise ScriptError(file, lineno, args[0].col, f"negative count {count}: {name} takes a count >= 0")
    return Op(name, count=count, **where)


def parse_script(text: str, file: str = "<input>", first_line: int = 1) -> list[Op]:
    """Parse a whole script; raise ScriptError at the first bad line (nothing is applied)."""
    if "\x00" in text:
        raise ScriptError(file, 1, 1, "binary file: a script is plain text")
    if text.startswith(BOM):
        text = text[1:]   # editors on Windows start a UTF-8 file with one
    ops: list[Op] = []
    # lines end at \n only: str.splitlines would also cut at U+2028, \x1c or \x85 inside a key
    for offset, raw in enumerate(text.split("\n")):
        lineno = first_line + offset
        for words in _split_line(raw, file, lineno):
            ops.append(_parse_op(words, raw, file, lineno))
    return ops


def load_script(path: str | Path) -> list[Op]:
    """Read and parse a script file, refusing binary, empty and oversized files and
    anything that is not a regular file (a device or a FIFO is never read). A file comes
    from anyone (an upload, a download): its terminal control characters are stripped, so
    that a line echoed back (``radixviz run``) cannot drive the terminal."""
    name = str(path)
    try:
        data = read_bytes(path, MAX_SCRIPT_BYTES)
    except ReadError as exc:
        reason = str(exc)
        raise ScriptError(name, 1, 1, reason if reason.startswith("file too large")
                          else f"cannot read: {reason}") from None
    if b"\x00" in data:
        raise ScriptError(name, 1, 1, "binary file: a script is plain text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ScriptError(name, line, 1, "binary file: not UTF-8 text") from None
    ops = parse_script(strip_controls(text), name)
    if not ops:
        raise ScriptError(name, 1, 1, "empty script: no operations (see radixviz run --help)")
    return ops
