"""``radixviz publish`` and ``radixviz watch`` as a person runs them, and recordings."""
from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from radixviz.cli import main
from radixviz.script import Session, load_script
from radixviz.wire.from_engine import engine_blocks
from radixviz.wire.messages import BlockStored
from radixviz.wire.playback import core_for, play
from radixviz.wire.publisher import Publisher
from radixviz.wire.recording import Recorder, read_records
from radixviz.wire.subscriber import Watcher

from wire_helpers import HANG_GUARD_S, close, joined, receive, tree_json
from test_wire_gaps import chain

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "kv-events.rvkv"
EXAMPLE_V0523 = ROOT / "examples" / "kv-events-v0.5.23.rvkv"
EXAMPLE_SCRIPT = ROOT / "examples" / "kv-events.txt"
EXAMPLE_OPTIONS = dict(engine="2026", page_size=2, pool_size=256)   # how the example was recorded


def cli(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def lines(text: str) -> list:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def engine_trees(script: Path, pool_size: int, **options) -> list:
    """The engine's blocks after each operation that queued events (one batch each)."""
    session = Session(pool_size=pool_size, device="cpu", kv_events=True, **options)
    trees = []
    for op in load_script(str(script)):
        if session.apply(op).kv_events:
            trees.append(engine_blocks(session.cache.root_node))
    return trees


def test_publish_and_watch_as_two_processes_agree_batch_for_batch(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = [sys.executable, "-m", "radixviz"]
    # its lines go to a file: a pipe nobody reads until the end would fill and stop it
    engine_out = open(tmp_path / "engine.jsonl", "w")
    publisher = subprocess.Popen(
        run + ["publish", "tcp://127.0.0.1:*", str(EXAMPLE_SCRIPT), "--replay", "tcp://127.0.0.1:*",
               "--page-size", "2", "--pool-size", "256", "--device", "cpu", "--drop", "1,5",
               "--wait", str(HANG_GUARD_S), "--linger", str(HANG_GUARD_S), "--json"],
        stdout=engine_out, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        first = publisher.stderr.readline()   # "publishing on tcp://127.0.0.1:P, replay on ..., topic ..."
        endpoint = first.split("publishing on ")[1].split(",")[0]
        replay = first.split("replay on ")[1].split(",")[0]
        watched = subprocess.run(
            run + ["watch", endpoint, "--replay", replay, "--json", "--batches", "10",
                   "--exit-after", str(2 * HANG_GUARD_S), "--record", str(tmp_path / "rec.rvkv")],
            capture_output=True, text=True, env=env, timeout=3 * HANG_GUARD_S, cwd=tmp_path)
        # The publisher answers replay requests until the watcher is done (a short --linger
        # was a race: a watcher slower than it would lose a batch it asks for again), then
        # Ctrl-C, once its "sent N batches" line shows that every batch line is written.
        while (said := publisher.stderr.readline()) and not said.startswith("sent "):
            pass
        publisher.send_signal(signal.SIGINT)
        # its own --linger ends it too: under a heavy load the full suite once saw Ctrl-C take
        # effect only then, and the exit after it pass a guard of the same length
        publisher.communicate(timeout=2 * HANG_GUARD_S)
    finally:
        publisher.kill()
        engine_out.close()
    published = (tmp_path / "engine.jsonl").read_text()
    assert watched.returncode == 0, watched.stderr
    theirs, ours = lines(published), lines(watched.stdout)
    assert len(theirs) == len(ours) == 10
    for engine_line, watch_line in zip(theirs, ours):
        assert {k: watch_line[k] for k in engine_line} == engine_line
    assert ours[-1]["problems"]["unfilled"] == 0 and ours[-1]["problems"]["recovered"] >= 2
    assert "asking replay" in watched.stderr
    # the recording it made replays to the same lines
    code = subprocess.run(run + ["watch", "--file", str(tmp_path / "rec.rvkv"), "--json"],
                          capture_output=True, text=True, env=env, timeout=HANG_GUARD_S)
    assert code.returncode == 0 and lines(code.stdout) == ours


@pytest.mark.parametrize("recording, wire", [(EXAMPLE, "9fbe6800a"), (EXAMPLE_V0523, "v0.5.23")])
def test_the_shipped_recording_replays_to_the_engines_trees(capsys, recording, wire):
    # both made by publish (--wire for the second) and watch --record, with --drop 3 on the second:
    # its gap is filled by v0.5.23's replay answer (topic, seq, payload), recorded as it came
    code, out, _ = cli(capsys, "watch", "--file", str(recording), "--json", "--speed", "0")
    assert code == 0
    got = [line["blocks"] for line in lines(out)]
    assert [line["wire"] for line in lines(out)] == [wire] * len(got)
    assert got == engine_trees(EXAMPLE_SCRIPT, **EXAMPLE_OPTIONS)


def test_a_recording_with_a_gap_replays_to_the_same_trees():
    out = io.BytesIO()
    pub = Publisher("tcp://127.0.0.1:*", "tcp://127.0.0.1:*", "kv-events", drop={2, 4})
    watcher = Watcher(pub.endpoint, pub.replay_endpoint, "kv-events", recorder=Recorder(out))
    live, played = [], []
    watcher.core.listeners.append(lambda item: live.append((item.seq, tree_json(watcher))))
    try:
        assert pub.wait_for_subscriber(HANG_GUARD_S)
        for batch in chain(6):
            pub.publish(batch)
        receive(pub, watcher, 6)
    finally:
        close(pub, watcher)
    records = list(read_records(out.getvalue()))
    core = core_for(records)
    core.listeners.append(lambda item: played.append(
        (item.seq, [b["hash"] for b in map(_json, core.tree(item.rank).sorted_blocks())])))
    for _ in play(core, records):
        pass
    assert [(seq, [b["hash"] for b in tree]) for seq, tree in live] == played
    assert core.problems.recovered == watcher.core.problems.recovered == 2


def _json(block):
    from radixviz.wire.blocks import block_json
    return block_json(block)


def free_port_pair() -> int:
    """A port on 127.0.0.1 that is free, with the one after it free too."""
    while True:
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
        try:
            with socket.socket() as second:
                second.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue


def test_dp_ranks_each_publish_on_their_own_port_to_a_watcher_that_binds():
    # SGLang's publisher connects when its endpoint names a host: the watcher binds, rank R
    # on the port + R; each batch carries its rank and lands in that rank's tree
    import zmq
    # rank 1 binds the port after a free one, which another test may hold; the ports are found
    # with plain sockets, which close at once (a ZeroMQ probe's close finishes later, in its I/O
    # thread, and the watcher's bind of the same port failed on a busy machine)
    for _ in range(50):
        port = free_port_pair()
        endpoint = f"tcp://127.0.0.1:{port}"
        try:
            watcher = Watcher(endpoint, None, "", ranks=2, bind=True)
            break
        except zmq.ZMQError as error:
            if error.errno != zmq.EADDRINUSE:
                raise
    else:
        pytest.fail("no two free ports next to each other on 127.0.0.1")
    pubs = [Publisher(endpoint, None, "", rank=rank) for rank in (0, 1)]
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while not all(pub.subscribers for pub in pubs):   # the watcher subscribes each as it joins
            assert time.monotonic() < deadline, "a publisher never saw the watcher's subscription"
            watcher.poll(0.05)
            for pub in pubs:
                pub.serve(0.01)
        pubs[0].publish([BlockStored([10], None, [1], 1, None, "GPU")])
        pubs[1].publish([BlockStored([20], None, [2], 1, None, "GPU")])
        got = []
        while len(got) < 2:
            got += watcher.poll(HANG_GUARD_S)
        assert sorted((a.rank, a.seq) for a in got) == [(0, 0), (1, 0)]
        assert tree_json(watcher, 0)[0]["hash"] == 10 and tree_json(watcher, 1)[0]["hash"] == 20
    finally:
        close(*pubs, watcher)


@pytest.mark.parametrize("content, message", [
    (b"not a recording", "not a radixviz recording"),
    (None, "cut off"),
])
def test_a_bad_recording_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "bad.rvkv"
    path.write_bytes(content if content is not None else EXAMPLE.read_bytes()[:-7])
    code, _, err = cli(capsys, "watch", "--file", str(path), "--json")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    ([], "one of the two"),
    (["tcp://127.0.0.1:5557", "--file", "x"], "one of the two"),
    (["tcp://127.0.0.1:5557", "--speed", "2"], "--speed is for --file"),
    (["localhost:5557"], "ZeroMQ endpoint"),
])
def test_watch_refuses_bad_usage_in_one_line(capsys, argv, message):
    code, _, err = cli(capsys, "watch", *argv, "--json")
    assert code == 2 and message in err


def test_joined_helper_works_with_topics():
    pub, watcher = joined(topic="kv")
    try:
        pub.publish(chain(1)[0])
        assert [a.seq for a in receive(pub, watcher, 1)] == [0]
    finally:
        close(pub, watcher)
