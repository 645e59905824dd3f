"""Argument types and shared pieces of ``radixviz publish`` and ``radixviz watch``."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from radixviz.cache.engines import engine_names, engine_spec
from radixviz.errors import UsageError
from radixviz.settings import arg_type

if TYPE_CHECKING:
    import argparse
    from radixviz.wire.publisher import Publisher


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"must be a number of seconds, not {text!r}") from None
    if not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"must be 0 or more seconds, not {text}")
    return value


def _seq_list(text: str) -> frozenset:
    try:
        seqs = frozenset(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"must be sequence numbers separated by commas, not {text!r}") from None
    if any(seq < 0 for seq in seqs):
        raise ValueError("sequence numbers start at 0")
    return seqs


def _endpoint(text: str) -> str:
    if not text.startswith(("tcp://", "ipc://", "inproc://")):
        raise ValueError(f"a ZeroMQ endpoint is tcp://HOST:PORT, ipc://PATH or inproc://NAME, not {text!r}")
    return text


# the wires a publisher speaks (radixviz.wire.events; named here so a parser loads no msgspec)
PUBLISH_WIRES = ("9fbe6800a", "v0.5.23")
WIRE_HELP = ("9fbe6800a: SGLang of March 2026, each event an array; v0.5.23: SGLang v0.5.23 "
             "(2026-10-30), each event a map with cache_salt, session_id and lora_name, a chain of "
             "pages in one BlockStored, the topic in replay answers")

SECONDS = arg_type(_seconds)
SEQ_LIST = arg_type(_seq_list)
ENDPOINT = arg_type(_endpoint)


def add_publisher_args(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """The publisher's options; ``prefix`` ("publish-") where a command has its own --topic."""
    p.add_argument(f"--{prefix}replay", type=ENDPOINT, default=None, metavar="ENDPOINT",
                   help="bind a ROUTER replay socket here (e.g. tcp://*:5558): a watcher that "
                        "missed batches asks for them again")
    p.add_argument(f"--{prefix}topic", default="kv-events", metavar="T",
                   help="the topic frame (default kv-events, as SGLang's test subscribes)")
    p.add_argument(f"--{prefix}wait", type=SECONDS, default=5.0, metavar="S",
                   help="wait up to S seconds for a subscriber before the first batch (default 5)")
    p.add_argument(f"--{prefix}wire", choices=PUBLISH_WIRES, default=None,
                   help=f"which SGLang's wire to speak (default: the engine's, {PUBLISH_WIRES[0]} for the "
                        f"engines of March 2026). {WIRE_HELP}")


def wire_for(given: str | None, engine: str | None) -> str:
    """The wire a publisher speaks: the one given, else the engine's (the first engine's when
    none is named)."""
    return given or engine_spec(engine or engine_names()[0]).wire


def open_publisher(endpoint: str, replay, topic: str, **kw) -> Publisher:
    # pyzmq: loaded only by a command that publishes, not by every command's parser
    import zmq
    from radixviz.wire.publisher import Publisher
    try:
        return Publisher(endpoint, replay, topic, **kw)
    except zmq.ZMQError as exc:
        raise UsageError(f"cannot open {endpoint}{' / ' + replay if replay else ''}: {exc}") from None
