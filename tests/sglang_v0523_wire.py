"""A stand-in for SGLang v0.5.23's KV-event publisher, written from its files for the tests.

The structs are ``disaggregation/kv_events.py`` of v0.5.23 (2026-10-30) field for field, in
its order, with its msgspec options: events are maps tagged ``"type"`` that leave out the
None-valued fields that have defaults; the batch stays an array. ``namespaced`` folds a seed
into a hash as ``kv_event_namespace_seed`` and ``namespaced_block_hash`` do. ``Server`` is the
PUB and ROUTER pair of ``ZmqEventPublisher`` without its thread: it publishes
``(topic, seq, payload)`` and answers a replay request with ``(topic, seq, payload)`` per
buffered batch, then ``(b"", -1, b"")``, each after the client's identity and an empty frame.
Nothing here comes from radixviz: the tests hold radixviz's reading to these shapes.
"""
from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import zmq


class EventBatch(msgspec.Struct, array_like=True, gc=False):
    ts: float
    events: list[Any]
    attn_dp_rank: int | None = None


class KVCacheEvent(msgspec.Struct, omit_defaults=True, gc=False, tag=True):
    pass


class BlockStored(KVCacheEvent):
    block_hashes: list[int]
    parent_block_hash: int | None
    token_ids: list[int]
    block_size: int
    lora_id: int | None
    medium: str | None = None
    cache_salt: str | None = None
    session_id: str | None = None
    lora_name: str | None = None


class BlockRemoved(KVCacheEvent):
    block_hashes: list[int]
    medium: str | None = None


class AllBlocksCleared(KVCacheEvent):
    pass


class KVEventBatch(EventBatch):
    events: list[BlockStored | BlockRemoved | AllBlocksCleared]


DECODER = msgspec.msgpack.Decoder(KVEventBatch)
END_SEQ = (-1).to_bytes(8, "big", signed=True)


def namespace_seed(extra_key: str | None, cache_salt: str | None) -> bytes | None:
    if extra_key is None and cache_salt is None:
        return None
    digest = hashlib.sha256(b"sglang-kv-event-namespace-v1")
    for part in (extra_key, cache_salt):
        if part is None:
            digest.update(b"\x00")
            continue
        encoded = part.encode("utf-8")
        digest.update(b"\x01" + len(encoded).to_bytes(8, "little") + encoded)
    return digest.digest()


def namespaced(block_hash: int, seed: bytes | None) -> int:
    if seed is None:
        return block_hash
    digest = hashlib.sha256(seed + block_hash.to_bytes(8, "big", signed=True)).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def payload(events: list, rank: int = 0, ts: float = 1.0) -> bytes:
    return msgspec.msgpack.encode(KVEventBatch(ts, events, rank))


class Server:
    """v0.5.23's publisher sockets on 127.0.0.1, bound, driven by the test."""

    def __init__(self, topic: str = "kv-events", context: zmq.Context | None = None):
        ctx = context or zmq.Context.instance()
        self.topic = topic.encode()
        self.pub = ctx.socket(zmq.XPUB)      # a SUB reads it as the PUB it is in SGLang
        self.pub.bind("tcp://127.0.0.1:*")
        self.replay = ctx.socket(zmq.ROUTER)
        self.replay.bind("tcp://127.0.0.1:*")
        self.endpoint = self.pub.getsockopt_string(zmq.LAST_ENDPOINT)
        self.replay_endpoint = self.replay.getsockopt_string(zmq.LAST_ENDPOINT)
        self.buffer: list[tuple[int, bytes]] = []
        self.seq = 0

    def wait_for_subscriber(self, timeout_s: float) -> bool:
        return bool(self.pub.poll(int(timeout_s * 1000))) and self.pub.recv()[:1] == b"\x01"

    def publish(self, events: list, send: bool = True) -> int:
        """Buffer one batch and, unless ``send`` is False (a batch lost on the way), send it."""
        seq, data = self.seq, payload(events)
        self.seq += 1
        if send:
            self.pub.send_multipart((self.topic, seq.to_bytes(8, "big"), data))
        self.buffer.append((seq, data))
        return seq

    def serve(self, timeout_s: float) -> None:
        """Answer one replay request if one comes within ``timeout_s``."""
        if not self.replay.poll(int(timeout_s * 1000)):
            return
        frame = self.replay.recv_multipart()
        if len(frame) != 3:
            return
        client_id, _, start_bytes = frame
        start = int.from_bytes(start_bytes, "big")
        for seq, buf in self.buffer:
            if seq >= start:
                self.replay.send_multipart((client_id, b"", self.topic, seq.to_bytes(8, "big"), buf))
        self.replay.send_multipart((client_id, b"", b"", END_SEQ, b""))

    def close(self) -> None:
        self.pub.close(linger=0)
        self.replay.close(linger=0)


def chain(pages: list[list[int]], prior: str | None = None) -> list[int]:
    """The event hashes of ``pages`` in a row: each page's SHA-256 over the one before and its
    tokens as 4 bytes little-endian, cut to its first 8 bytes as a signed int."""
    out = []
    for page in pages:
        digest = hashlib.sha256()
        if prior:
            digest.update(bytes.fromhex(prior))
        digest.update(b"".join(t.to_bytes(4, "little") for t in page))
        prior = digest.hexdigest()
        out.append(int.from_bytes(bytes.fromhex(prior[:16]), "big", signed=True))
    return out
