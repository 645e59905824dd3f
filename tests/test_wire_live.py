"""``--publish`` on ``simulate`` and ``sandbox``: the engine's KV events leave as it runs, and
a real watcher on 127.0.0.1 rebuilds exactly the engine's tree from them."""
from __future__ import annotations

import socket
import threading
import time

import pytest

from radixviz.cli import main
from radixviz.script import Session, parse_script
from radixviz.sim.pass_hooks import after_each_pass
from radixviz.sim.runner import simulate
from radixviz.wire.from_engine import engine_blocks
from radixviz.wire.live_publish import LivePublisher, publish_as_applied, publish_each_pass
from radixviz.wire.subscriber import Watcher

from wire_helpers import HANG_GUARD_S, LOCAL, tree_json

SIM = dict(workload="few-shot", policy="lpm", requests=10, pool_size=512, seed=1,
           engine="2026", engine_options={"page_size": 2})


def engine_of_run(**kw):
    """The same run with events on but no publisher: its scheduler's cache at the end."""
    seen = []

    def events_on(sched):
        sched.engine.cache.enable_kv_events = True   # page hashes: what engine_blocks reads
        seen.append(sched)
        return lambda finished, total: sched.engine.take_events()
    with after_each_pass(events_on):
        simulate(**{**SIM, **kw})
    return seen[-1].engine.cache


def drain(watcher: Watcher, until) -> list:
    """Poll until ``until()`` holds and nothing arrived for a moment (hang guard only)."""
    got, quiet, deadline = [], 0, time.monotonic() + HANG_GUARD_S
    while not (until() and quiet >= 3):
        assert time.monotonic() < deadline, f"{len(got)} batches, then nothing"
        new = watcher.poll(0.05)
        got += new
        quiet = 0 if new else quiet + 1
    return got


def test_simulate_publishes_every_pass_and_the_watcher_has_the_engines_tree():
    live = LivePublisher(LOCAL, LOCAL, "kv-events", wait_s=HANG_GUARD_S)
    watcher = Watcher(live.endpoint, live.replay_endpoint, "kv-events")
    scheds = []
    try:
        def remember(sched):
            scheds.append(sched)
            return publish_each_pass(live)(sched)
        with after_each_pass(remember):
            result = simulate(**SIM)
        live.close()
        got = drain(watcher, lambda: True)
    finally:
        watcher.close()
    assert result.stats.finished == 10
    assert len(got) == live.sent > 3          # the opening clear plus the passes with events
    expected = engine_blocks(scheds[0].engine.cache.root_node)
    assert expected and tree_json(watcher) == expected
    assert expected == engine_blocks(engine_of_run().root_node)   # publishing changed nothing


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_simulate_publish_on_the_command_line(capsys):
    port = free_port()
    codes: list = []
    argv = ["simulate", "--engine", "2026", "--page-size", "2", "--workload", "few-shot",
            "--requests", "10", "--pool-size", "512", "--seed", "1", "--json",
            "--publish", f"tcp://*:{port}", "--publish-wait", str(HANG_GUARD_S)]

    def command():
        try:
            main(argv)
        except SystemExit as exc:
            codes.append(exc.code)
    watcher = Watcher(f"tcp://127.0.0.1:{port}", None, "kv-events")
    thread = threading.Thread(target=command)
    thread.start()
    try:
        drain(watcher, lambda: not thread.is_alive())
    finally:
        thread.join(HANG_GUARD_S)
        watcher.close()
    assert codes == [0]
    assert tree_json(watcher) == engine_blocks(engine_of_run().root_node) != []


@pytest.mark.parametrize("argv, message", [
    (["--publish", "tcp://127.0.0.1:1"], "--publish sends KV events: add --engine 2026|hicache"),
    (["--engine", "2026", "--workers", "2", "--publish", "tcp://127.0.0.1:1"], "drop --workers and --app"),
    (["--engine", "2026", "--publish", "udp://x"], "a ZeroMQ endpoint is"),
])
def test_simulate_publish_refuses_in_one_line(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_sandbox_session_publishes_each_operation():
    """What ``sandbox --publish`` hooks into the app's session (tui/app.py's on_session)."""
    live = LivePublisher(LOCAL, None, "kv-events", wait_s=HANG_GUARD_S)
    watcher = Watcher(live.endpoint, None, "kv-events")
    session = Session(pool_size=64, device="cpu", engine="2026", page_size=2, kv_events=True)
    publish_as_applied(session, live)
    queued = 0
    try:
        for op in parse_script('insert "hello world"\ninsert "hello there"\nevict 4\n'
                               'insert "help me"\n', "<test>"):
            queued += bool(session.apply(op).kv_events)
            drain(watcher, lambda want=queued: live.sent >= want)
            assert tree_json(watcher) == engine_blocks(session.cache.root_node), op.text
    finally:
        live.close()
        watcher.close()
    assert live.sent == 4


def test_sandbox_takes_publish():
    from radixviz.cli import build_parser
    args = build_parser().parse_args(["sandbox", "--publish", "tcp://127.0.0.1:5557",
                                      "--publish-replay", "tcp://*:5558"])
    assert args.publish == "tcp://127.0.0.1:5557" and args.publish_replay == "tcp://*:5558"
