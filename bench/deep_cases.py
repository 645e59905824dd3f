"""Issue 52's deep trees and busy streams, each run as a person runs it, against any checkout.

Every case starts ``radixviz`` of the checkout ``--tree`` (its own ``.venv``) as a child process:
a script through ``run``, or ``watch`` in a pseudo-terminal of its own (the app) or with
``--text``, fed by a publisher on a loopback socket (this checkout's, which speaks SGLang's
wire). Run it once with ``--tree`` a checkout from before the fix and once with this one, in
the same minutes, to have each case's figures before and after:

- ``seconds``: the case's own clock (each case says which: until painted, until it exited);
- ``peak_mb``: the child's peak resident memory, its own ``VmHWM`` (written by the child at
  exit, or read from /proc while it runs when it must be killed), never ``wait4``'s figure
  (a forked child inherits its parent's high-water mark);
- ``exit``: the exit code (None: killed at ``--limit``); ``said``: what it said or painted.

    python bench/deep_cases.py --tree PATH [--case NAME ...] [--limit 120]

Prints one JSON document.
"""
from __future__ import annotations

import argparse
import json
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import zmq  # noqa: E402

from radixviz.wire.events import AllBlocksCleared, BlockStored  # noqa: E402
from radixviz.wire.messages import EventBatch, encode_batch, encode_seq  # noqa: E402
from radixviz.wire.publisher import Publisher  # noqa: E402
from serve_load import free_port  # noqa: E402 - bench/ is the script's own folder
from watch_stream import chains, comb  # noqa: E402

# the child: its own peak memory written at exit, then radixviz's entry point
CHILD = ("import atexit, os, sys\n"
         "def peak():\n"
         "    with open(os.environ['DEEP_CASES_PEAK'], 'w') as out:\n"
         "        out.write(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n"
         "atexit.register(peak)\n"
         "from radixviz.cli import main\n"
         "main(sys.argv[1:])\n")
ANSI = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78DEHMc])")
BLOCKS = re.compile(r"GPU\)?: ([0-9,]+) blocks")
LEFT, RIGHT, QUIT = b"\x1b[D", b"\x1b[C", b"q"


class Child:
    """``radixviz ARGV`` of ``tree`` (in a pseudo-terminal with ``terminal``), read as it runs."""

    def __init__(self, tree: Path, argv: list[str], terminal: bool = False) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.peak_file = os.path.join(self.folder.name, "peak")
        env = {**os.environ, "PYTHONPATH": str(tree), "DEEP_CASES_PEAK": self.peak_file,
               "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        command = [str(tree / ".venv" / "bin" / "python"), "-c", CHILD, *argv]
        self.text, self.lock, self.polled_kb = "", threading.Lock(), 0
        if terminal:
            self.main, other = pty.openpty()
            self.proc = subprocess.Popen(command, stdin=other, stdout=other, stderr=other, env=env,
                                         cwd=tree, close_fds=True)
            os.close(other)
            source = self.main
        else:
            self.main = None
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, env=env, cwd=tree)
            source = self.proc.stdout.fileno()
        self.started = time.monotonic()
        threading.Thread(target=self._read, args=(source,), daemon=True).start()

    def _read(self, fd: int) -> None:
        while True:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    data = os.read(fd, 1 << 16)
                except OSError:
                    return
                if not data:
                    return
                with self.lock:
                    self.text += data.decode("utf-8", "replace")
            self._poll_peak()

    def _poll_peak(self) -> None:
        try:
            with open(f"/proc/{self.proc.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        self.polled_kb = max(self.polled_kb, int(line.split()[1]))
        except OSError:
            pass

    def plain(self) -> str:
        with self.lock:
            return ANSI.sub("", self.text)

    def wait_for(self, check, limit: float) -> float | None:
        """Seconds until ``check(plain text)`` holds or the child exits; None past ``limit``."""
        start = time.monotonic()
        while time.monotonic() - start < limit:
            if check(self.plain()) or self.proc.poll() is not None:
                return time.monotonic() - start if check(self.plain()) else None
            time.sleep(0.01)
        return None

    def send(self, data: bytes) -> None:
        if self.main is not None:
            os.write(self.main, data)

    def finish(self, limit: float) -> dict:
        """Wait for the exit (killed past ``limit``): seconds waited, exit code, peak MB."""
        start = time.monotonic()
        try:
            code = self.proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            self._poll_peak()
            self.proc.kill()
            self.proc.wait()
            code = None
        waited = time.monotonic() - start
        time.sleep(0.2)   # the reader takes the last bytes
        if self.main is not None:
            os.close(self.main)
        try:
            with open(self.peak_file) as peak:
                kb = int(peak.read())
        except (OSError, ValueError):
            kb = self.polled_kb   # killed: the high-water mark read while it ran
        self.folder.cleanup()
        return {"waited_s": round(waited, 2), "exit": code, "peak_mb": round(kb / 1024, 1) if kb else None}


def said(text: str, *needles: str) -> str:
    """The last line holding the first of ``needles`` found, else the last line that is not blank."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for needle in needles:
        for line in reversed(lines):
            if needle in line:
                return line[:200]
    return lines[-1][:200] if lines else ""


def shown_blocks(text: str) -> int:
    counts = [int(n.replace(",", "")) for n in BLOCKS.findall(text)]
    return max(counts) if counts else 0


# ---------------------------------------------------------------- the cases

def watch_comb(tree: Path, limit: float, levels: int = 3_000) -> dict:
    """The app on one batch describing a comb ``levels`` deep: painted, then ← and q."""
    port = free_port()
    pub = Publisher(f"tcp://*:{port}", None, "kv-events")
    child = Child(tree, ["watch", f"tcp://127.0.0.1:{port}", "--topic", "kv-events"], terminal=True)
    try:
        pub.wait_for_subscriber(limit)
        sent = time.monotonic()
        pub.publish(comb(levels))
        painted = child.wait_for(lambda t: shown_blocks(t) >= 2 * levels, limit)
        out = {"seconds": None if painted is None else round(time.monotonic() - sent, 2)}
        if painted is not None:
            pub.publish([BlockStored([7 * 10 ** 9], levels, [90], 1, None, "GPU")])
            child.wait_for(lambda t: shown_blocks(t) > 2 * levels, limit)
            # a person looks at the screen before a key: half a second, then ← three times
            keys = []
            for key, shows in ((LEFT, "kept"), (RIGHT, "live"), (LEFT, "kept")):
                time.sleep(0.5)
                mark = len(child.plain())
                child.send(key)
                seen = child.wait_for(lambda t, mark=mark, shows=shows: shows in t[mark:], 10)
                keys.append(None if seen is None else round(seen, 3))
            out["key_s"] = keys
        child.send(QUIT)
        out.update(child.finish(limit))
        out["quit_s"] = out.pop("waited_s")
    finally:
        pub.close(linger=0)
    text = child.plain()
    out["said"] = said(text, "RecursionError", "Traceback") if "Traceback" in text else \
        f"drew {shown_blocks(text):,} blocks"
    return out


def watch_stream(tree: Path, limit: float, blocks: int = 100_000, small: int = 400, gap_s: float = 0.05) -> dict:
    """The app on a server's stream: ``blocks`` blocks (chains of 100) in two batches, then
    ``small`` one-block batches ``gap_s`` apart: ``seconds`` until the figures count the
    first two batches' blocks (to within one gap), whether the last batch is shown, then q."""
    port = free_port()
    pub = Publisher(f"tcp://*:{port}", None, "kv-events")
    child = Child(tree, ["watch", f"tcp://127.0.0.1:{port}", "--topic", "kv-events"], terminal=True)
    try:
        pub.wait_for_subscriber(limit)
        sent = time.monotonic()
        pub.publish([AllBlocksCleared()] + chains(blocks // 2, 100, 0))
        pub.publish(chains(blocks // 2, 100, blocks // 2))
        published = time.monotonic() - sent   # this side's making and sending of the two batches
        parent, painted = None, None
        for index in range(small):
            pub.publish([BlockStored([blocks + index + 1], parent, [5], 1, None, "GPU")])
            parent = blocks + index + 1
            time.sleep(gap_s)
            if painted is None and shown_blocks(child.plain()) >= blocks:
                painted = time.monotonic() - sent
        streamed = time.monotonic() - sent
        if painted is None and child.wait_for(lambda t: shown_blocks(t) >= blocks, max(1.0, limit - streamed)):
            painted = time.monotonic() - sent
        out = {"published_s": round(published, 2), "stream_s": round(streamed, 2),
               "seconds": None if painted is None else round(painted, 2),
               "last_shown": child.wait_for(lambda t: shown_blocks(t) >= blocks + small, 5) is not None}
        child.send(QUIT)
        out.update(child.finish(limit))
        out["quit_s"] = out.pop("waited_s")
    finally:
        pub.close(linger=0)
    out["said"] = f"drew {shown_blocks(child.plain()):,} blocks"
    return out


def run_comb(tree: Path, limit: float, levels: int) -> dict:
    """``radixviz run`` of the comb script as the issue wrote it (``insert "a^k X"``, k = 1..n)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "comb.txt"
        path.write_text("".join(f'insert "{"a" * k}X"\n' for k in range(1, levels + 1)))
        child = Child(tree, ["run", str(path), "--pool-size", str(3 * levels + 64)])
        out = child.finish(limit)
        out["seconds"] = out.pop("waited_s") if out["exit"] is not None else None
        out["script_bytes"] = path.stat().st_size
    text = child.plain()
    out["said"] = said(text, "rror") if "rror" in text else f"printed the tree ({len(text.splitlines()):,} lines)"
    return out


def replay_endless(tree: Path, limit: float) -> dict:
    """``watch --text --exit-after 8`` while a replay server answers forever, never ending."""
    pub = Publisher("tcp://127.0.0.1:*", None, "kv-events")
    router = zmq.Context.instance().socket(zmq.ROUTER)
    router.bind("tcp://127.0.0.1:*")
    stop = threading.Event()

    def endless() -> None:
        poller, peers, seq = zmq.Poller(), [], 0
        poller.register(router, zmq.POLLIN)
        while not stop.is_set():
            if poller.poll(1):
                peers.append(router.recv_multipart()[0])
            for peer in peers:
                batch = EventBatch(0.0, [BlockStored([seq + 1], seq or None, [5], 1, None, "GPU")], 0)
                router.send_multipart([peer, b"", encode_seq(seq), encode_batch(batch)])
                seq += 1
    server = threading.Thread(target=endless, daemon=True)
    server.start()
    child = Child(tree, ["watch", pub.endpoint, "--replay", router.getsockopt_string(zmq.LAST_ENDPOINT),
                         "--topic", "kv-events", "--text", "--exit-after", "8"])
    try:
        pub.wait_for_subscriber(limit)
        pub.seq = 5
        pub.publish([BlockStored([10 ** 6], None, [1], 1, None, "GPU")])   # joins late: asks for history
        out = child.finish(limit)
    finally:
        stop.set()
        server.join(5)
        router.close(linger=0)
        pub.close(linger=0)
    out["seconds"] = round(time.monotonic() - child.started, 2) if out["exit"] is not None else None
    out["said"] = said(child.plain(), "gave no end", "replay")
    return out


def text_watch(tree: Path, limit: float, send, *flags: str, needles: tuple = ()) -> dict:
    """``watch --text`` (exiting 3 s after the last message) while ``send(publisher)`` publishes."""
    pub = Publisher("tcp://127.0.0.1:*", None, "kv-events")
    child = Child(tree, ["watch", pub.endpoint, "--topic", "kv-events", "--text", "--exit-after-idle", "3", *flags])
    try:
        pub.wait_for_subscriber(limit)
        send(pub)
        out = child.finish(limit)
    finally:
        pub.close(linger=0)
    out["seconds"] = round(time.monotonic() - child.started, 2) if out["exit"] is not None else None
    out["said"] = said(child.plain(), *needles)
    return out


def big_blocks(pub: Publisher) -> None:
    # 13 one-block batches of 15.7 M tokens (token 7: one byte each, under the 16 MiB frame limit)
    for block in range(1, 14):
        pub.publish([BlockStored([block], None, [7] * 15_700_000, 15_700_000, None, "GPU")])


def many_ranks(pub: Publisher, ranks: int = 200_000) -> None:
    for rank in range(ranks):
        pub.rank = rank
        pub.publish([BlockStored([rank + 1], None, [1], 1, None, "GPU")])


def bad_frame(pub: Publisher) -> None:
    # a damaged payload claiming seq 1, then the genuine seq 1 and seq 2
    def send(seq: int, payload: bytes) -> None:
        pub.pub.send_multipart([b"kv-events", encode_seq(seq), payload])
    send(0, encode_batch(EventBatch(0.0, [BlockStored([1], None, [1], 1, None, "GPU")], 0)))
    send(1, b"\xc1 damaged")
    send(1, encode_batch(EventBatch(0.0, [BlockStored([2], 1, [2], 1, None, "GPU")], 0)))
    send(2, encode_batch(EventBatch(0.0, [BlockStored([3], 2, [3], 1, None, "GPU")], 0)))


def far_jump(pub: Publisher) -> None:
    def send(seq: int, block: int) -> None:
        batch = EventBatch(0.0, [BlockStored([block], None, [block], 1, None, "GPU")], 0)
        pub.pub.send_multipart([b"kv-events", encode_seq(seq), encode_batch(batch)])
    send(0, 1)
    send(2 ** 64 - 2, 99)
    for seq in range(1, 11):
        send(seq, seq + 1)


CASES = {
    "watch_comb_3000": watch_comb,
    "watch_stream_100k": watch_stream,
    "run_comb_100": lambda tree, limit: run_comb(tree, limit, 100),
    "run_comb_200": lambda tree, limit: run_comb(tree, limit, 200),
    "run_comb_399": lambda tree, limit: run_comb(tree, limit, 399),
    "run_comb_1380": lambda tree, limit: run_comb(tree, limit, 1_380),   # 966 KB, as the issue's
    "replay_endless": replay_endless,
    "max_tokens": lambda tree, limit: text_watch(tree, limit, big_blocks, needles=("not kept", "rror")),
    "many_ranks": lambda tree, limit: text_watch(tree, limit, many_ranks, needles=("not kept", "rror")),
    "bad_frame": lambda tree, limit: text_watch(tree, limit, bad_frame, needles=("blocks",)),
    "far_jump": lambda tree, limit: text_watch(tree, limit, far_jump, needles=("blocks",)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="the checkout to run (with its .venv)")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="a case to run (default: all)")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds any one wait may take")
    args = parser.parse_args()
    tree = args.tree.resolve()
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    out: dict = {"tree": commit}
    for name in args.case or list(CASES):
        load = os.getloadavg()[0]
        out[name] = {**CASES[name](tree, args.limit), "load": round(load, 2)}
        print(f"{name}: {out[name]}", file=sys.stderr)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
