"""Websocket frames the page never sends, from a raw client: each is dropped and the
session goes on (its keys still answered), the server logs one line for the first and a
count at the end, never a traceback. A frame the websocket protocol forbids (too large,
text that is not UTF-8) closes that one connection with its RFC 6455 code, in one line;
the other students' sessions go on."""
from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import WSMsgType

from serve_helpers import load, start, teacher_home

pytestmark = pytest.mark.slow
WAIT = 180
HOSTILE_FRAMES = [
    "[" * 200_000,                                   # RecursionError in json.loads (was: the session ended)
    "[" * 100_000 + "]" * 100_000,
    '{"stdin": "x"',                                 # not JSON
    "\"just a string\"",
    '{"stdin": "x"}',
    '["stdin", 5]',
    '["resize", "huge"]',
    '["ping", {"a": 1}]',
    '["exec", "rm -rf /"]',
    '[]',
    '["stdin", "a", "b", "c"]',
]


async def pong(tab, token: str) -> bool:
    await tab.ws.send_str(json.dumps(["ping", token]))
    for _ in range(2400):   # 120 s: only a hang guard, it answers as soon as the frame is read
        if json.dumps(["pong", token]) in tab.texts:
            return True
        await asyncio.sleep(0.05)
    return False


async def test_unexpected_frames_are_dropped_and_the_session_goes_on(tmp_path):
    proc, base = start(teacher_home(tmp_path), 3)
    victim, rude, broken = load.Session(base, "Vic"), load.Session(base, "Rude"), load.Session(base, "Broken")
    try:
        await victim.open(width=100, height=30)
        await rude.open(width=100, height=30)
        await asyncio.gather(victim.wait_for(load.HOME_MARK, WAIT), rude.wait_for(load.HOME_MARK, WAIT))
        for frame in HOSTILE_FRAMES:
            await rude.ws.send_str(frame)
        await rude.ws.send_bytes(b"\x00\xff" * 1000)
        assert await pong(rude, "after-the-frames"), "the session stopped answering"
        mark = len(rude.chunks)
        await rude.keys("c")                                 # the app still takes keys
        await rude.wait_for("A first hit", 60, after=mark)
        assert rude.closed is None and len(load.children(proc.pid)) == 2

        # a frame over the message limit (1 MiB): that connection closes with 1009, in one line
        await broken.open(width=100, height=30)
        await broken.wait_for(load.HOME_MARK, WAIT)
        await broken.ws.send_str(json.dumps(["stdin", "x" * (2 << 20)]))
        await asyncio.wait_for(broken._reader, 60)
        assert broken.closed[0] == 1009
        # and text that is not UTF-8: 1007
        broken.ws, broken.chunks, broken.closed = None, [], None
        await load.wait_children(proc.pid, 2, WAIT)         # its place is free again
        await broken.open(width=100, height=30)
        await broken.ws._writer.send_frame(b"[\"stdin\", \"\xff\xfe\"]", WSMsgType.TEXT)
        await asyncio.wait_for(broken._reader, 60)
        assert broken.closed[0] == 1007
        assert await pong(victim, "the-others-go-on") and await pong(rude, "still-here")
        await rude.ws.close()
        await load.wait_children(proc.pid, 1, WAIT)
    finally:
        for tab in (victim, rude, broken):
            await tab.close()
        load.stop_server(proc)
    log = proc.stdout.read()
    assert "Traceback" not in log and "RecursionError" not in log, log[-3000:]
    assert log.count("dropped a websocket frame") == 1, log[-3000:]
    assert f"dropped {len(HOSTILE_FRAMES) + 1} websocket frames" in log
    assert log.count("closed a session from") == 2, log[-3000:]
    assert max(len(line) for line in log.splitlines()) < 400
