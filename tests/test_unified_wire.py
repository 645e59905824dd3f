"""Issue 55's parts that waited on the unified engine: its KV events on v0.5.23's wire (what
v0.5.23's ``KVCacheEventRecorder`` sends for a hybrid model: Full KV pages only, nothing for
SWA or Mamba), a watcher rebuilding them, and ``why-miss`` naming a sliding window's cut and
a missing Mamba state with the tokens each cost.
"""
from __future__ import annotations

import msgspec
import pytest

import sglang_v0523_wire as v0523
from radixviz.script import Session, parse_script
from radixviz.sim.why_miss import explain
from radixviz.wire.from_engine import engine_blocks, wire_events
from radixviz.wire.messages import encode_batch
from radixviz.wire import events as structs
from radixviz.wire.publisher import Publisher
from radixviz.wire.subscriber import Watcher

from wire_helpers import close, receive, tree_json

HYBRID = dict(components=("full", "swa", "mamba"), window=2, mamba_chunk=2, page_size=2)
# 'abcd' keeps a state, then sits inside the tree: evicting a state or SWA KV there leaves a
# tombstone (nothing sent); evicting Full KV takes a leaf with its pages (one removal)
SCRIPT = ['insert "abcd"', 'insert "abcdefgh"', 'insert "abxy"', "evict 1 mamba", "evict 2 swa", "evict 2", "reset"]


def _batches(session: Session) -> list:
    return [session.apply(op).kv_events for op in parse_script("\n".join(SCRIPT))]


class TestItsEvents:
    def test_only_full_kv_pages_are_sent(self):
        session = Session(64, device="cpu", engine="unified", kv_events=True, **HYBRID)
        kinds = [[e.kind for e in batch] for batch in _batches(session)]
        assert kinds == [["cleared", "stored", "stored"],      # the constructor's reset; 'abcd', a page each
                         ["stored", "stored"],                  # 'efgh'
                         ["stored"],                            # 'xy': the split of 'abcd' sends nothing
                         [], [],                                # a Mamba and an SWA tombstone: nothing
                         ["removed"],                           # a leaf's Full KV, its pages in one event
                         ["cleared"]]

    def test_with_only_full_kv_it_sends_what_the_2026_engine_sends(self):
        """The same page hashes and events as SGLang's radix cache, joined by v0.5.23's wire."""
        unified = Session(64, device="cpu", engine="unified", kv_events=True, page_size=2)
        today = Session(64, device="cpu", engine="2026", kv_events=True, page_size=2)
        for op in parse_script('insert "abcdefgh"\ninsert "abcdxy"\nevict 2'):
            ours, theirs = unified.apply(op).kv_events, today.apply(op).kv_events
            assert wire_events(ours, "v0.5.23") == wire_events(theirs, "v0.5.23")

    def test_the_servers_structs_read_them(self):
        session = Session(64, device="cpu", engine="unified", kv_events=True, **HYBRID)
        first = wire_events(_batches(session)[0], "v0.5.23")
        assert [type(e) for e in first] == [structs.AllBlocksClearedMap, structs.BlockStoredMap]
        assert len(first[1].block_hashes) == 2                       # v0.5.23 joins a chain of pages
        data = encode_batch(structs.batch_of("v0.5.23", 1.0, first, 0))
        assert msgspec.msgpack.encode(v0523.DECODER.decode(data)) == data


def test_a_watcher_rebuilds_what_a_hybrid_server_holds():
    """``publish --engine unified`` as the server plays it, ``watch`` as it listens: after each
    batch the watcher's blocks are the engine's Full KV pages."""
    session = Session(64, device="cpu", engine="unified", kv_events=True, **HYBRID)
    pub = Publisher("tcp://127.0.0.1:*", None, "", wire="v0.5.23")
    watcher = Watcher(pub.endpoint, None, "")
    seen, held = [], []
    watcher.core.listeners.append(lambda item: seen.append(tree_json(watcher)))
    try:
        assert pub.wait_for_subscriber(10)
        for op in parse_script("\n".join(SCRIPT)):
            batch = session.apply(op).kv_events
            if batch:
                pub.publish(wire_events(batch, pub.wire))
                held.append(engine_blocks(session.cache.root_node))
        receive(pub, watcher, len(held))
    finally:
        close(pub, watcher)
    assert [[b["hash"] for b in tree] for tree in seen] == [[b["hash"] for b in tree] for tree in held]
    assert [len(tree) for tree in held] == [2, 4, 5, 4, 0]


def test_publish_speaks_v0523_for_the_unified_engine(cli):
    code, _, err = cli("publish", "tcp://127.0.0.1:*", "--engine", "unified", "--components", "full,swa",
                       "--window", "2", "--device", "cpu", "-e", 'insert "abcd"', "--wait", "0", "--linger", "0")
    assert code == 0 and "sent 1 batches" in err


class TestWhyMiss:
    PREFIX = "You are a helpful assistant. "

    def test_a_missing_mamba_state_costs_the_shared_prefix(self):
        a = tuple((self.PREFIX + "Tell me about radix trees.").encode())
        b = tuple((self.PREFIX + "What is an LRU list?").encode())
        plain = explain(a, b)
        assert plain.reused == 29 and "unified engine" in plain.not_checked
        hybrid = explain(a, b, hybrid={"components": ("full", "mamba"), "mamba_chunk": 8})
        (cause,) = [c for c in hybrid.causes if c.kind == "mamba_state"]
        assert (hybrid.reused, cause.tokens_lost, hybrid.not_checked) == (0, 29, "")
        assert "on B's path: none on its path" in cause.message and "branching point (token 24" in cause.message

    def test_a_sliding_windows_tombstone_cuts_the_match(self):
        a = tuple((self.PREFIX + "Tell me about radix trees and caches.").encode())
        c = tuple((self.PREFIX + "Summarize the history of Rome in brief.").encode())
        d = tuple(b"z" * 49)
        b = tuple((self.PREFIX + "What is a sliding window?").encode())
        roomy = explain(a, b, between=[(c, None), (d, None)], pool_size=400,
                        hybrid={"components": ("full", "swa"), "window": 8})
        assert roomy.reused == 29 and not [x for x in roomy.causes if x.kind == "sliding_window"]
        tight = explain(a, b, between=[(c, None), (d, None)], pool_size=400,
                        hybrid={"components": ("full", "swa"), "window": 8, "swa_pool": 100})
        (cause,) = [x for x in tight.causes if x.kind == "sliding_window"]
        assert (tight.reused, cause.tokens_lost) == (0, 29)     # the Full KV stayed: no eviction cause
        assert "eviction" not in tight.kinds() and "an SWA tombstone" in cause.message

    @pytest.mark.parametrize("argv, message", [
        (("--swa-pool", "8"), "--swa-pool and --mamba-pool go with --window and --mamba-chunk"),
        (("--window", "4", "--host-size", "200"), "are not replayed together"),
    ])
    def test_refusals(self, cli, argv, message):
        code, _, err = cli("why-miss", "abcd", "abxy", *argv)
        assert code == 2 and message in err
