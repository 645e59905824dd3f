"""``radixviz watch`` against streams a real server (or a hostile one) sends, driven from
outside: a publisher on a loopback socket, a recording file, or the command in a terminal
of its own (issue 52).

- a comb thousands of levels deep (a conversation that branches at every turn) is drawn,
  folded, and stepped through; 100,000 levels too;
- a stream of 100,000 blocks and then a batch every millisecond is drawn and followed;
- a sequence number is used up only by a batch that applied, and one far past what the
  publisher could have sent does not freeze the stream;
- a replay that never ends does not hold the watcher past --exit-after;
- limits count tokens and ranks; silence from the publisher is said on screen.
"""
from __future__ import annotations

import argparse
import os
import pty
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq

from radixviz.tui.watch_app import WatchApp
from radixviz.wire.events import AllBlocksCleared, BlockStored
from radixviz.wire.messages import EventBatch, encode_batch, encode_seq
from radixviz.wire.core import WatchCore
from radixviz.wire.playback import core_for
from radixviz.wire.publisher import Publisher
from radixviz.wire.recording import read_records
from radixviz.wire.subscriber import Watcher

from wire_helpers import HANG_GUARD_S, LOCAL, close, joined, receive

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from watch_stream import comb, write_recording  # noqa: E402 - the benchmark's streams


def app_args(**given) -> argparse.Namespace:
    return argparse.Namespace(**{**dict(endpoint="tcp://test", file=None, speed=None, tokenizer=None,
                                        exit_after=None, exit_after_idle=None, batches=None, history_mb=None),
                                 **given})


def figures(app) -> str:
    return str(app.screen_.query_one("#figures").content)


async def wait_for(pilot, check, what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD_S
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        await pilot.pause(0.05)


def screen_text(app) -> str:
    from tui_helpers import screen_rows
    return "\n".join(screen_rows(app))


class TestADeepComb:
    async def _watch_comb(self, levels: int, step: bool = True) -> None:
        pub = Publisher(LOCAL, None, "kv-events")
        watcher = Watcher(pub.endpoint, None, "kv-events")
        assert pub.wait_for_subscriber(HANG_GUARD_S)
        app = WatchApp(app_args(), watcher.core, watcher=watcher)
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                pub.publish(comb(levels))
                held = f"device (GPU): {2 * levels:,} blocks"
                await wait_for(pilot, lambda: held in figures(app), "the comb's figures")
                painted = screen_text(app)
                assert f"deepest shared prefixes: {levels - 1} tokens (2 ways)" in figures(app)
                assert "more nodes" in painted          # folded past the view's depth
                if not step:
                    return
                pub.publish([BlockStored([7 * 10 ** 9], levels, [90], 1, None, "GPU")])   # one more leaf, at the bottom
                one_more = f"device (GPU): {2 * levels + 1:,} blocks"
                await wait_for(pilot, lambda: one_more in figures(app), "the next batch")
                await pilot.press("left")
                await wait_for(pilot, lambda: "batch 1 of 2 kept" in figures(app), "a step back")
                assert held in figures(app)
                await pilot.press("right")
                await wait_for(pilot, lambda: "live" in figures(app), "following again")
        finally:
            close(pub)
        assert app.return_code in (None, 0)

    async def test_3000_levels_are_drawn_and_stepped_through(self):
        await self._watch_comb(3_000)

    @pytest.mark.slow
    async def test_100000_levels_are_drawn(self):
        await self._watch_comb(100_000, step=False)   # a step at its bottom remakes 100,000 levels

    @pytest.mark.slow
    def test_the_command_in_a_terminal_draws_it_and_exits_0_without_a_traceback(self):
        port = _free_port()
        pub = Publisher(f"tcp://*:{port}", None, "kv-events")
        try:
            code, output = _in_terminal(["watch", f"tcp://127.0.0.1:{port}", "--exit-after", "6"],
                                        lambda: pub.wait_for_subscriber(HANG_GUARD_S) and pub.publish(comb(3_000)))
        finally:
            close(pub)
        assert code == 0 and "Traceback" not in output and "RecursionError" not in output


class TestAServersStream:
    @pytest.mark.slow
    async def test_100000_blocks_then_a_batch_a_millisecond_are_drawn_and_followed(self, tmp_path):
        # issue 52's stream, from a recording played as fast as it goes: the app draws it
        # and takes every batch (the release before could not: each batch rebuilt the tree)
        args = argparse.Namespace(blocks=100_000, chain=100, batches=1_000, rate=1_000.0, comb=0)
        from watch_stream import stream_batches
        path = tmp_path / "stream.rvkv"
        write_recording(path, stream_batches(args))
        records = list(read_records(path.read_bytes()))
        app = WatchApp(app_args(endpoint=None, file=str(path), speed=0.0), core_for(records), records=records)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: f"seq {len(records) - 1} " in figures(app), "the last batch")
            assert "device (GPU): 101,000 blocks, 101,000 tokens" in figures(app)
            assert "1,002 batches" in figures(app)
            await pilot.press("q")
        assert app.return_code in (None, 0)


class TestSequenceNumbers:
    def test_a_bad_payload_does_not_use_up_its_seq(self):
        # a corrupt payload claiming seq 1, then the genuine seq 1: the genuine one is applied
        pub, watcher = joined(replay=False)
        try:
            good = [BlockStored([1], None, [1], 1, None, "GPU")]
            pub.pub.send_multipart([b"kv-events", encode_seq(0), encode_batch(EventBatch(0.0, good, 0))])
            pub.pub.send_multipart([b"kv-events", encode_seq(1), b"\xc1 not msgpack"])
            genuine = [BlockStored([2], 1, [2], 1, None, "GPU")]
            pub.pub.send_multipart([b"kv-events", encode_seq(1), encode_batch(EventBatch(0.0, genuine, 0))])
            assert [a.seq for a in receive(pub, watcher, 2)] == [0, 1]
            assert sorted(watcher.core.tree(0).blocks) == [("GPU", 1), ("GPU", 2)]
            assert watcher.core.problems.duplicates == 0 and watcher.core.problems.bad_frames == 1
        finally:
            close(pub, watcher)

    def test_a_bad_payload_is_a_gap_replay_fills(self):
        pub, watcher = joined(replay=True)
        try:
            pub.publish([AllBlocksCleared(), BlockStored([1], None, [1], 1, None, "GPU")])
            receive(pub, watcher, 1)
            pub.drop = frozenset({1})   # kept in the replay buffer, sent damaged instead
            pub.publish([BlockStored([2], 1, [2], 1, None, "GPU")])
            pub.pub.send_multipart([b"kv-events", encode_seq(1), b"\xc1"])
            pub.publish([BlockStored([3], 2, [3], 1, None, "GPU")])
            receive(pub, watcher, 2)
            assert sorted(h for _, h in watcher.core.tree(0).blocks) == [1, 2, 3]
            assert watcher.core.problems.recovered == 1 and watcher.core.problems.unfilled == 0
        finally:
            close(pub, watcher)

    def test_a_jump_past_what_the_publisher_could_send_is_said_and_the_stream_goes_on(self):
        pub, watcher = joined(replay=False)
        try:
            def send(seq: int, block: int) -> None:
                batch = EventBatch(0.0, [BlockStored([block], None, [block], 1, None, "GPU")], 0)
                pub.pub.send_multipart([b"kv-events", encode_seq(seq), encode_batch(batch)])
            send(0, 1)
            send(2 ** 64 - 2, 99)
            send(1, 2)
            send(2, 3)
            assert [a.seq for a in receive(pub, watcher, 3)] == [0, 1, 2]
            assert ("GPU", 99) not in watcher.core.tree(0).blocks
            assert watcher.core.problems.implausible == 1
            assert any("more than the publisher could have sent" in line for line in watcher.core.log)
        finally:
            close(pub, watcher)


class TestReplay:
    @pytest.mark.slow
    def test_a_replay_that_never_ends_does_not_hold_the_watcher_past_exit_after(self):
        # a ROUTER that answers every request with replies and never the end marker
        ctx = zmq.Context.instance()
        pub = Publisher(LOCAL, None, "kv-events")
        router = ctx.socket(zmq.ROUTER)
        router.bind("tcp://127.0.0.1:*")
        replay = router.getsockopt_string(zmq.LAST_ENDPOINT)
        stop = threading.Event()

        def endless() -> None:
            poller = zmq.Poller()
            poller.register(router, zmq.POLLIN)
            peers, seq = [], 0
            while not stop.is_set():
                if poller.poll(1):
                    peers.append(router.recv_multipart()[0])
                for peer in peers:
                    batch = EventBatch(0.0, [BlockStored([seq + 1], seq or None, [5], 1, None, "GPU")], 0)
                    router.send_multipart([peer, b"", encode_seq(seq), encode_batch(batch)])
                    seq += 1

        server = threading.Thread(target=endless, daemon=True)
        server.start()
        try:
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            watch = subprocess.Popen([sys.executable, "-m", "radixviz", "watch", pub.endpoint, "--replay", replay,
                                      "--topic", "kv-events", "--text", "--exit-after", "8"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            assert pub.wait_for_subscriber(HANG_GUARD_S)
            pub.seq = 5
            pub.publish([BlockStored([10 ** 6], None, [1], 1, None, "GPU")])   # joins late: asks for history
            try:
                code = watch.wait(timeout=30)
            except subprocess.TimeoutExpired:
                watch.kill()
                pytest.fail("the watcher was still merging an endless replay 30 s later")
            assert code == 0
            assert b"gave no end" in watch.stderr.read()
        finally:
            stop.set()
            server.join(5)
            router.close(linger=0)
            close(pub)

    def test_10000_replayed_batches_are_merged_in_order(self):
        core = WatchCore(1, replay=True)
        live = [b"kv-events", encode_seq(10_001), encode_batch(EventBatch(0.0, [], 0))]
        assert core.live(0, live)[1][0].start == 0
        applied = []
        for seq in range(10_001):
            batch = EventBatch(0.0, [BlockStored([seq + 1], seq or None, [5], 1, None, "GPU")], 0)
            applied += core.replayed(0, [b"", encode_seq(seq), encode_batch(batch)])[0]
        applied += core.replayed(0, [b"", b"\xff" * 8, b""])[0]
        assert [a.seq for a in applied] == list(range(10_002))
        assert len(core.tree(0).blocks) == 10_001 and core.streams[0].held == []


class TestLimits:
    def _text_watch(self, pub: Publisher, *flags: str, send) -> str:
        """``watch --text`` with ``flags`` while ``send()`` publishes; what it said on stderr."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        watch = subprocess.Popen([sys.executable, "-m", "radixviz", "watch", pub.endpoint, "--topic", "kv-events",
                                  "--text", "--exit-after-idle", "2", *flags],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        try:
            assert pub.wait_for_subscriber(HANG_GUARD_S)
            send()
            _, err = watch.communicate(timeout=HANG_GUARD_S)
        finally:
            if watch.poll() is None:
                watch.kill()
        assert watch.returncode == 0, err
        return err.decode()

    def test_tokens_are_counted_against_max_tokens(self):
        # 13 blocks of 100,000 tokens: past 500,000 tokens the rest are counted, not kept
        pub = Publisher(LOCAL, None, "kv-events")
        try:
            big = [BlockStored([i], None, [7] * 100_000, 100_000, None, "GPU") for i in range(1, 14)]
            err = self._text_watch(pub, "--max-tokens", "500000", send=lambda: pub.publish(big))
        finally:
            close(pub)
        assert "8 blocks not kept: 500,000 tokens held already" in err and "--max-tokens raises it" in err

    def test_ranks_past_max_ranks_are_counted_not_kept(self):
        pub = Publisher(LOCAL, None, "kv-events")

        def every_rank() -> None:
            for rank in range(6):
                pub.rank = rank
                pub.publish([BlockStored([rank + 1], None, [1], 1, None, "GPU")])
        try:
            err = self._text_watch(pub, "--max-ranks", "4", send=every_rank)
        finally:
            close(pub)
        assert "rank 4: not kept, 4 DP ranks held already (--max-ranks raises it)" in err
        assert "rank 5: not kept" in err


class TestFailures:
    @pytest.mark.slow
    def test_a_message_over_zeromqs_limit_is_said_in_one_line(self):
        # ZeroMQ drops the connection of a peer whose message is over the socket's limit
        # (256 MiB), without a word to the program: the watcher's socket monitor says it
        pub = Publisher(LOCAL, None, "kv-events")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        watch = subprocess.Popen([sys.executable, "-m", "radixviz", "watch", pub.endpoint, "--topic", "kv-events",
                                  "--text", "--exit-after", "8"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        try:
            assert pub.wait_for_subscriber(HANG_GUARD_S)
            pub.publish([BlockStored([1], None, [1], 1, None, "GPU")])
            pub.pub.send_multipart([b"kv-events", encode_seq(1), bytes(257 * 2 ** 20)], copy=False)
            out, err = watch.communicate(timeout=HANG_GUARD_S)
        finally:
            if watch.poll() is None:
                watch.kill()
            close(pub)
        dropped = [line for line in err.decode().splitlines() if "connection to the publisher dropped" in line]
        assert len(dropped) == 1 and "over 256 MiB" in dropped[0]
        assert watch.returncode == 0 and b"seq 0" in out

    @pytest.mark.slow
    def test_an_app_that_crashes_exits_non_zero(self):
        # a fault planted in the screen from outside the package: the app prints its
        # traceback and the command's exit code says it failed (Textual's run() returns None)
        plant = ("import radixviz.tui.screens.watch as w\n"
                 "def boom(self):\n    raise RuntimeError('planted')\n"
                 "w.WatchScreen.refresh_view = boom\n"
                 "from radixviz.cli import main\n"
                 f"main(['watch', '--file', {str(ROOT / 'examples' / 'kv-events.rvkv')!r}, '--speed', '0'])\n")
        code, output = _in_terminal(["-c", plant], lambda: None, module=False)
        assert code != 0 and "planted" in output


class TestSilence:
    @pytest.mark.slow
    async def test_nothing_from_the_publisher_is_said_on_screen(self):
        pub, watcher = joined(replay=False)
        app = WatchApp(app_args(), watcher.core, watcher=watcher)
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                pub.publish([AllBlocksCleared(), BlockStored([1], None, [1], 1, None, "GPU")])
                await wait_for(pilot, lambda: "device (GPU): 1 blocks" in figures(app), "the batch")
                await wait_for(pilot, lambda: "nothing from the publisher for" in figures(app), "the silence said")
        finally:
            close(pub)


def _free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _in_terminal(argv: list, then, module: bool = True) -> tuple[int, str]:
    """Run ``radixviz ARGV`` (``module=False``: ``python ARGV``) in a pseudo-terminal of its
    own (the app needs one), call ``then()`` once it runs, read everything it draws; its exit
    code and what it drew."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    main, child = pty.openpty()
    command = [sys.executable, "-m", "radixviz", *argv] if module else [sys.executable, *argv]
    proc = subprocess.Popen(command, stdin=child, stdout=child, stderr=child, env=env, close_fds=True)
    os.close(child)
    drawn = bytearray()
    started = False
    deadline = time.monotonic() + HANG_GUARD_S
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([main], [], [], 0.1)[0]:
                try:
                    drawn += os.read(main, 1 << 16)
                except OSError:
                    break
            if not started:
                started = True
                threading.Thread(target=then, daemon=True).start()
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    return code, drawn.decode("utf-8", "replace")


def test_one_poll_holds_a_bounded_burst_of_big_batches():
    # each batch a poll applied is held, decoded, until the caller showed it: 13 batches of
    # 15.7 M tokens read in one burst held them all (2 GB); a poll hands back past 16 MiB read
    from radixviz.wire.subscriber import BURST_BYTES
    from wire_helpers import joined
    pub, watcher = joined(replay=False)
    try:
        tokens = BURST_BYTES // 3   # one byte a token: a payload a third of the bound
        for block in range(1, 7):
            pub.publish([BlockStored([block], None, [7] * tokens, tokens, None, "GPU")])
        polls = []
        deadline = time.monotonic() + HANG_GUARD_S
        while sum(polls) < 6:
            assert time.monotonic() < deadline, f"only {sum(polls)} of 6 batches arrived"
            if got := len(watcher.poll(0.5)):
                polls.append(got)
        assert max(polls) <= 4 and len(polls) >= 2
    finally:
        close(pub, watcher)


async def test_a_still_screen_makes_ahead_what_left_shows_so_the_keys_remake_nothing(monkeypatch):
    # a step at the bottom of a 3,000-level comb changes every edge above it: made when the
    # key came, it took 70-210 ms of CPU a key; made while the screen is still, the key finds it
    from radixviz.wire import tree_snapshot
    levels = 3_000
    pub = Publisher(LOCAL, None, "kv-events")
    watcher = Watcher(pub.endpoint, None, "kv-events")
    assert pub.wait_for_subscriber(HANG_GUARD_S)
    app = WatchApp(app_args(), watcher.core, watcher=watcher)
    made: list = []
    edge = tree_snapshot.TreeBuilder._edge
    monkeypatch.setattr(tree_snapshot.TreeBuilder, "_edge", lambda self, *a: made.append(1) or edge(self, *a))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            pub.publish(comb(levels))
            await wait_for(pilot, lambda: f"{2 * levels:,} blocks" in figures(app), "the comb")
            for leaf in range(3):   # three one-leaf batches at the bottom
                pub.publish([BlockStored([7 * 10 ** 9 + leaf], levels, [90 + leaf], 1, None, "GPU")])
                shown = f"{2 * levels + leaf + 1:,} blocks"
                await wait_for(pilot, lambda shown=shown: shown in figures(app), "a leaf")
            for key, place in (("left", "batch 3 of 4 kept"), ("left", "batch 2 of 4 kept"),
                               ("right", "batch 3 of 4 kept")):
                await wait_for(pilot, lambda: app.view._ahead is not None, "the picture made ahead")
                made.clear()
                await pilot.press(key)
                await wait_for(pilot, lambda place=place: place in figures(app), place)
                assert made == [], f"{key} made {len(made)} pictures of edges again"
    finally:
        close(pub)
