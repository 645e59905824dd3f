"""SGLang v0.5.23's KV-event wire, heard by watch: maps for events, namespaced hashes, salts,
sessions, adapter names, host media, several pages an event, and the three-frame replay answer.

The streams are built with sglang_v0523_wire.py (v0.5.23's structs in its field order), never
with radixviz's own structs, so a reading that drifted from the server's shape fails here."""
from __future__ import annotations

import hashlib
import io
import json
import threading
import time

import msgspec
import pytest

import sglang_v0523_wire as v0523
from radixviz.cli import main
from radixviz.wire import events as structs, messages, recording
from radixviz.wire.blocks import BlockTree
from radixviz.wire.messages import decode_batch, encode_batch
from radixviz.wire.recording import Recorder, read_records
from radixviz.wire.subscriber import Watcher
from radixviz.wire.tree_snapshot import block_snapshot

from wire_helpers import HANG_GUARD_S

PAGES = [[1, 2], [3, 4]]
DEVICE = v0523.chain(PAGES)                                  # the plain prompt's two pages
EXTRA = "a" * 32                                             # an extra key ending in an adapter id
LORA = [v0523.namespaced(h, v0523.namespace_seed(EXTRA, None)) for h in v0523.chain([[1, 2]])]
SALT_SEED = hashlib.sha256(b"sglang-cache-salt-v1\0tenant-a").hexdigest()
SALTED = v0523.chain([[1, 2]], SALT_SEED)                    # default format: the salt seeds the chain


def stream() -> list[list]:
    """What a v0.5.23 server of page size 2 sends, batch by batch: the reset; one prompt of
    two pages (one event); the same first page under an adapter and under a salt; the prompt
    copied to host memory; its device copy evicted (one removal for the node's pages)."""
    S, R = v0523.BlockStored, v0523.BlockRemoved
    return [[v0523.AllBlocksCleared()],
            [S(DEVICE, None, [1, 2, 3, 4], 2, None, "GPU", session_id="chat-1")],
            [S(LORA, None, [1, 2], 2, None, "GPU", lora_name="math")],
            [S(SALTED, None, [1, 2], 2, None, "GPU", cache_salt="tenant-a")],
            [S(DEVICE, None, [1, 2, 3, 4], 2, None, "CPU_PINNED")],
            [R(DEVICE, "GPU")]]


def test_a_v0523_payload_reads_with_its_new_fields_and_is_told_from_its_bytes():
    data = v0523.payload(stream()[2])
    assert msgspec.msgpack.decode(data)[1][0]["type"] == "BlockStored"   # a map, as the server sends
    assert messages.payload_wire(data) == "v0.5.23" and messages.payload_wire(v0523.payload([])) is None
    batch = decode_batch(data)
    stored = batch.events[0]
    assert isinstance(stored, structs.BlockStoredMap) and stored.lora_name == "math" and stored.block_hashes == LORA
    # radixviz writes the same bytes the server does (field order, fields left out)
    assert encode_batch(batch) == data


def test_the_tree_holds_each_namespace_and_tier_apart():
    tree = BlockTree()
    for events in stream():
        assert not tree.apply(decode_batch(v0523.payload(events)))   # no problem line
    held = {(b.medium, b.hash): b for b in tree.blocks.values()}
    assert set(held) == {("CPU_PINNED", DEVICE[0]), ("CPU_PINNED", DEVICE[1]), ("GPU", LORA[0]),
                         ("GPU", SALTED[0])}
    assert held["GPU", LORA[0]].lora_name == "math" and held["GPU", SALTED[0]].cache_salt == "tenant-a"
    assert held["CPU_PINNED", DEVICE[1]].parent == DEVICE[0]          # two pages of one event, chained
    labels = {"".join(map(str, node.key)) for node in block_snapshot(tree).root.children}
    assert {"[adapter math]", "[salt tenant-a]", "[host (CPU_PINNED)]"} <= labels


def test_a_disk_or_external_medium_is_its_own_tier():
    tree = BlockTree()
    for medium, first in (("GPU", 1), ("DISK", 5), ("EXTERNAL", 9)):
        hashes = v0523.chain([[first, first + 1]])
        tree.apply(decode_batch(v0523.payload([v0523.BlockStored(hashes, None, [first, first + 1], 2, None, medium)])))
    labels = {"".join(map(str, node.key)) for node in block_snapshot(tree).root.children}
    assert {"[disk (DISK)]", "[external (EXTERNAL)]"} <= labels


def test_watch_json_and_the_app_figures_name_salts_sessions_and_adapters(tmp_path, capsys):
    path = tmp_path / "v0523.rvkv"
    with open(path, "wb") as out:
        recorder = Recorder(out)
        for seq, events in enumerate(stream()):
            recorder.write(0, "pub", [b"kv-events", seq.to_bytes(8, "big"), v0523.payload(events)])
    with pytest.raises(SystemExit) as exc:
        main(["watch", "--file", str(path), "--json"])
    out, _ = capsys.readouterr()
    last = json.loads(out.splitlines()[-1])
    assert exc.value.code == 0 and last["wire"] == "v0.5.23"
    blocks = {b["hash"]: b for b in last["blocks"]}
    assert blocks[LORA[0]]["lora_name"] == "math" and blocks[SALTED[0]]["cache_salt"] == "tenant-a"
    # the session that stored the prompt travels with its (host) copy's first store only
    from radixviz.wire.live import namespace_lines
    tree = BlockTree()
    for events in stream()[:2]:
        tree.apply(decode_batch(v0523.payload(events)))
    assert namespace_lines(tree) == ["stored by sessions: chat-1 2"]


def test_a_stream_read_as_the_other_wire_is_refused_and_watch_exits_2(tmp_path, capsys):
    path = tmp_path / "v0523.rvkv"
    with open(path, "wb") as out:
        Recorder(out).write(0, "pub", [b"", bytes(8), v0523.payload(stream()[1])])
    with pytest.raises(SystemExit) as exc:
        main(["watch", "--file", str(path), "--json", "--wire", "9fbe6800a"])
    _, err = capsys.readouterr()
    assert exc.value.code == 2 and "none could be read" in err and "--wire" in err


def test_a_gap_is_filled_by_v0523s_three_frame_replay_answer_and_the_recording_says_its_wire():
    server, out = v0523.Server(), io.BytesIO()
    watcher = Watcher(server.endpoint, server.replay_endpoint, "kv-events", recorder=Recorder(out))
    try:
        assert server.wait_for_subscriber(HANG_GUARD_S)
        got: list = []
        for seq, events in enumerate(stream()):
            server.publish(events, send=seq not in (2, 3))             # two batches lost on the way
        deadline = time.monotonic() + HANG_GUARD_S
        while len(got) < len(stream()):
            assert time.monotonic() < deadline, f"only {len(got)} batches applied"
            server.serve(0.01)
            got += watcher.poll(0.05)
    finally:
        watcher.close()
        server.close()
    problems = watcher.core.problems
    assert [a.seq for a in got] == list(range(6)) and problems.unfilled == 0 and problems.recovered == 2
    assert problems.bad_frames == 0
    assert {a.message.topic for a in got} == {b"kv-events"}                # the answer's topic kept
    records = list(read_records(out.getvalue()))
    assert recording.recorded_wires(records) == (["v0.5.23"], None)


def test_exit_after_idle_counts_from_the_last_message_that_arrived_read_or_not(capsys):
    # a v0.5.23 stream read as 9fbe6800a's: every batch is refused, but they keep coming, so
    # the watcher is not idle; once they stop it exits, 2 (nothing could be read)
    server = v0523.Server(topic="")
    stop = threading.Event()

    def send() -> None:
        assert server.wait_for_subscriber(HANG_GUARD_S)
        for _ in range(8):
            server.publish(stream()[1])
            time.sleep(0.15)
        stop.set()

    sender = threading.Thread(target=send)
    sender.start()
    started = time.monotonic()
    try:
        with pytest.raises(SystemExit) as exc:
            main(["watch", server.endpoint, "--json", "--wire", "9fbe6800a", "--exit-after-idle", "0.5",
                  "--exit-after", str(HANG_GUARD_S)])
    finally:
        sender.join()
        server.close()
    _, err = capsys.readouterr()
    assert stop.is_set(), f"watch stopped after {time.monotonic() - started:.1f} s while batches still came"
    assert exc.value.code == 2 and "none could be read" in err


def test_radixviz_publishes_v0523s_wire_as_the_server_does():
    from radixviz.script import Session, parse_script
    from radixviz.wire.from_engine import wire_events
    session = Session(pool_size=64, device="cpu", engine="2026", page_size=2, kv_events=True)
    events = []
    for op in parse_script('insert "abcdef"\nevict 6'):
        events.append(session.apply(op).kv_events)
    stored, removed = (wire_events(batch, "v0.5.23") for batch in events[-2:])
    assert [type(e) for e in stored] == [structs.AllBlocksClearedMap, structs.BlockStoredMap]
    stored = stored[1:]      # the cache's first AllBlocksCleared, then three pages in one event
    assert len(stored[0].block_hashes) == 3 and stored[0].token_ids == [97, 98, 99, 100, 101, 102]
    assert [type(e) for e in removed] == [structs.BlockRemovedMap] and len(removed[0].block_hashes) == 3
    # the server's own structs read what radixviz wrote, and write it back byte for byte
    data = encode_batch(structs.batch_of("v0.5.23", 1.0, stored, 0))
    theirs = v0523.DECODER.decode(data)
    assert theirs.events[0].block_hashes == stored[0].block_hashes
    assert msgspec.msgpack.encode(theirs) == data


def test_an_engine_names_the_wire_it_publishes_and_the_scheduler_it_runs_under():
    # the hooks an engine of v0.5.23's own (the unified tree) sets; --wire and --scheduler override
    from radixviz.cache.engines import engine_spec
    from radixviz.commands.wire_args import wire_for
    assert [engine_spec(n).wire for n in ("2024", "2026", "hicache")] == ["9fbe6800a"] * 3
    assert [engine_spec(n).scheduler for n in ("2024", "2026", "hicache")] == ["2024"] * 3
    assert wire_for(None, "2026") == "9fbe6800a" and wire_for("v0.5.23", "2026") == "v0.5.23"
