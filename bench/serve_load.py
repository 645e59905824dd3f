"""A classroom on localhost: N sessions of ``radixviz serve`` at once. Prints JSON.

Each session is a websocket client speaking the browser's protocol (join by name, the page's
address, then its websocket with the page's Origin), so no browser is needed.

    python bench/serve_load.py [--sessions 20] [--timeout 180]
        every tab paints its home screen; memory per session
    python bench/serve_load.py --worst [--sessions 30] [--seconds 60]
        30 tabs each doing the worst a served session allows (the biggest terminal, lines
        of the most operations up to the session's cap, undo/redo/matcher replays of the
        whole history, pastes of the longest keystroke messages) while two more tabs step
        through the chapter's example: how long their keys take to answer (p50/p95)

Memory is read from /proc for each session's app process: PSS (shared pages split between
the processes sharing them: what a session really adds) and RSS (what ``top`` shows).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from radixviz.classroom.keepers import is_keeper   # standard library only, as the keeper

HOME_MARK = "Sandbox: an empty cache"
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(max_sessions: int, *extra: str, port: int | None = None, env: dict | None = None):
    """``radixviz serve`` on 127.0.0.1; returns (process, base url) once it listens.
    ``env``: the server's environment (a test's fake HOME); one computer may hold every
    session unless ``extra`` says ``--per-client``, and join as many students a minute
    unless it says ``--joins-per-minute`` (every tab here comes from this one computer)."""
    port = port or free_port()
    per_client = [] if "--per-client" in extra else ["--per-client", str(max_sessions)]
    joins = [] if "--joins-per-minute" in extra else ["--joins-per-minute", "1000"]
    proc = subprocess.Popen([sys.executable, "-m", "radixviz", "serve", "--port", str(port),
                             "--max-sessions", str(max_sessions), *per_client, *joins, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    return proc, wait_listening(proc, port)


def wait_listening(proc, port: int, timeout: float = 60.0) -> str:
    """The base URL of the server ``proc`` once it accepts connections on ``port``;
    RuntimeError (the process killed) if it exits first or never listens."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"serve exited: {proc.stdout.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"serve did not start listening within {timeout:g} s")


def stop_server(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def direct_children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int(stat_fields(int(entry.name))[1])
        except OSError:
            continue
        if parent == pid:
            found.append(int(entry.name))
    return found


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name, from the state on (``[0]``;
    ``[1]`` the parent, ``[19]`` the start time); OSError if the process is gone. The
    command name may hold spaces and parentheses: the fields follow the last ')'."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def described(pids: list[int]) -> str:
    """Each pid with its state and command line, for a failure that names what is left."""
    rows = []
    for pid in pids:
        try:
            state = stat_fields(pid)[0]
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            state, command = "gone", ""
        rows.append(f"{pid} {state} {command[:120]!r}")
    return "; ".join(rows)


def keepers(pid: int) -> list[int]:
    """The keepers the server started (its children; each holds one app: keeper.py)."""
    return [child for child in direct_children(pid) if is_keeper(child)]


def ended(pid: int) -> bool:
    """Whether ``pid`` has ended (or is ending): gone, a zombie its parent has not reaped
    yet, or a process whose memory is already freed on its way out (its command line
    reads empty). None of these is a running app, nor a keeper."""
    try:
        state = stat_fields(pid)[0]
        return state in ("Z", "X") or not Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


def children(pid: int) -> list[int]:
    """The app processes the server started, running: its keepers' children (or its own,
    for a server that starts its apps itself). A keeper that has just ended is not an app:
    until the server reaps it, its command line is empty and would pass for one."""
    found = []
    for child in direct_children(pid):
        if not ended(child):
            found += direct_children(child) if is_keeper(child) else [child]
    return [app for app in found if not ended(app)]


def under(pid: int) -> list[int]:
    """Every process under ``pid``, all the way down, zombies too: what a server still
    holds (a keeper, ending or not, until it is reaped; the apps under it)."""
    found, todo = [], [pid]
    while todo:
        for child in direct_children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def started(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), None if it is gone (reaped): with
    its pid, it names one process even after the pid is reused."""
    try:
        return int(stat_fields(pid)[19])
    except (OSError, IndexError, ValueError):
        return None


def memory_mb(pid: int) -> dict:
    """PSS and RSS of one process in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Rss", "Pss"):
            fields[name.lower()] = int(rest.split()[0]) / 1024
    return fields


def has_torch(pid: int) -> bool:
    """Whether torch's shared library is mapped into the process."""
    try:
        return "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def screen_text(chunks: list) -> str:
    """What the app drew so far, escape sequences removed."""
    raw = b"".join(chunks).decode("utf-8", "replace")
    return ANSI.sub("", raw)


class Session:
    """One tab of one student: join by name (once), fetch the page, connect its websocket
    with the page's Origin, collect what the app draws and the files it delivers."""

    count = 0

    def __init__(self, base: str, name: str | None = None):
        import aiohttp   # the web client: only the bench and the serve tests load it
        Session.count += 1
        self.base, self.name = base, name or f"student {Session.count} {os.getpid()}"
        # a cookie jar of its own: each tab is its own student (unsafe: cookies for an IP host)
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.chunks, self.texts, self.ws, self.status, self.page, self.closed = [], [], None, None, "", None
        self.received = asyncio.Event()
        self.keep = True              # False: count what arrives, keep none of it (a hog's tab)

    @property
    def origin(self) -> dict:
        return {"Origin": self.base}

    async def join(self) -> None:
        async with self.http.post(self.base + "/join", data={"name": self.name}, headers=self.origin) as response:
            self.status = response.status
            self.page = await response.text()

    async def open(self, width: int = 100, height: int = 30, join: bool = True) -> None:
        from yarl import URL   # aiohttp's own URL type
        if join and not self.http.cookie_jar.filter_cookies(URL(self.base)).get("radixviz_student"):
            await self.join()
        async with self.http.get(self.base + "/") as response:
            self.status = response.status
            self.page = await response.text()
        if response.status != 200 or "data-session-websocket-url" not in self.page:
            return
        url = re.search(r'data-session-websocket-url="([^"]+)"', self.page).group(1)
        self.ws = await self.http.ws_connect(f"{url}?width={width}&height={height}", headers=self.origin,
                                             max_msg_size=0)
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            if isinstance(message.data, bytes):
                if self.keep:
                    self.chunks.append(message.data)
                self.received.set()
            elif isinstance(message.data, str):
                self.texts.append(message.data)
        self.closed = (self.ws.close_code, self.ws._close_message if hasattr(self.ws, "_close_message") else None)

    def text(self) -> str:
        return screen_text(self.chunks)

    async def wait_for(self, needle: str, timeout: float, after: int = 0) -> float:
        """Seconds until ``needle`` is on screen (TimeoutError after ``timeout``); ``after``:
        only what was drawn after the first ``after`` chunks counts."""
        start = time.monotonic()
        while needle not in screen_text(self.chunks[after:]):
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"{needle!r} not drawn within {timeout} s")
            await asyncio.sleep(0.05)
        return time.monotonic() - start

    async def keys(self, text: str) -> None:
        await self.ws.send_str(json.dumps(["stdin", text]))

    async def resize(self, width: int, height: int) -> None:
        await self.ws.send_str(json.dumps(["resize", {"width": width, "height": height}]))

    async def answer_time(self, key: str, timeout: float = 30) -> float:
        """Seconds from sending ``key`` until the app draws something in answer."""
        self.received.clear()
        start = time.monotonic()
        await self.keys(key)
        await asyncio.wait_for(self.received.wait(), timeout)
        return time.monotonic() - start

    async def deliveries(self, timeout: float, count: int = 1) -> list[str]:
        """The download keys the app has delivered so far, waiting up to ``timeout`` for
        there to be ``count`` of them."""
        start = time.monotonic()
        while True:
            keys = [json.loads(t)[1] for t in self.texts if t.startswith('["deliver_file_start"')]
            if len(keys) >= count or time.monotonic() - start > timeout:
                return keys
            await asyncio.sleep(0.1)

    async def download(self, key: str) -> tuple[int, bytes]:
        async with self.http.get(f"{self.base}/download/{key}") as response:
            return response.status, await response.read()

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self._reader.cancel()
            self.ws = None
        if not self.http.closed:
            await self.http.close()


async def wait_children(pid: int, count: int, timeout: float) -> float:
    """Seconds until the server has ``count`` app processes (TimeoutError after ``timeout``)."""
    start = time.monotonic()
    while len(children(pid)) != count:
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"{len(children(pid))} app processes, expected {count}")
        await asyncio.sleep(0.2)
    return time.monotonic() - start


async def torch_loaded(pid: int, timeout: float) -> list[int]:
    """The app processes that have loaded torch, once at least one has (or [] after ``timeout``)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        loaded = [child for child in children(pid) if has_torch(child)]
        if loaded:
            return loaded
        await asyncio.sleep(0.2)
    return []


async def classroom(sessions: int, timeout: float) -> dict:
    """Open ``sessions`` tabs at once, wait for every home screen, measure, then close them."""
    proc, base = start_server(sessions)
    tabs = [Session(base) for _ in range(sessions)]
    extra = Session(base)
    try:
        started = time.monotonic()
        await asyncio.gather(*(tab.open() for tab in tabs))
        paint = await asyncio.gather(*(tab.wait_for(HOME_MARK, timeout) for tab in tabs))
        all_painted = time.monotonic() - started
        pids = children(proc.pid)
        idle = [memory_mb(pid) for pid in pids]
        torch_at_home = sum(has_torch(pid) for pid in pids)
        # one student opens the sandbox: that session alone loads the engine and torch
        await tabs[0].keys("s")
        await tabs[0].wait_for("no steps yet", timeout)
        with_torch = await torch_loaded(proc.pid, timeout)
        sandbox = memory_mb(with_torch[0]) if with_torch else {}
        await extra.open()
        for tab in tabs:
            await tab.close()
        freed = await wait_children(proc.pid, 0, timeout)
    finally:
        await extra.close()
        stop_server(proc)
    return {
        "sessions": sessions,
        "processes": len(pids),
        "all_painted_s": round(all_painted, 2),
        "paint_s": {"median": round(statistics.median(paint), 2), "max": round(max(paint), 2)},
        "home_pss_mb": {"median": round(statistics.median(m["pss"] for m in idle), 1),
                        "max": round(max(m["pss"] for m in idle), 1)},
        "home_rss_mb": {"median": round(statistics.median(m["rss"] for m in idle), 1)},
        "sessions_with_torch_at_home": torch_at_home,
        "sandbox_session_with_torch": len(with_torch),
        "sandbox_pss_mb": round(sandbox.get("pss", 0), 1),
        "sandbox_rss_mb": round(sandbox.get("rss", 0), 1),
        "tab_past_the_cap": {"status": extra.status, "says_full": "The class is full" in extra.page},
        "all_processes_gone_after_close_s": round(freed, 2),
    }


# --------------------------------------------------------------------- the worst a tab may do

def worst_line(n: int, seed: int) -> str:
    """The most operations a served line takes, with the longest keys the pool holds."""
    import random
    rng = random.Random(seed)
    return "; ".join('insert "' + "".join(rng.choice("abcdefgh") for _ in range(rng.randint(60, 120))) + '"'
                     for _ in range(n))


async def hog(tab: Session, caps, stop: asyncio.Event, index: int, filled: list) -> dict:
    """One tab doing the worst allowed until ``stop``: the biggest terminal, the sandbox
    filled to the session's cap with lines of the most operations, then undo, redo and the
    matcher switch (each replays the whole history), jumps across every frame and pastes of
    the longest keystroke message, as fast as the app takes them."""
    await tab.resize(caps.columns, caps.rows)
    await tab.keys("s")
    await tab.wait_for("no steps yet", 300)
    await tab.keys(":")
    for n in range(caps.ops_per_session // caps.ops_per_line):
        await tab.keys(worst_line(caps.ops_per_line, index * 1000 + n) + "\r")
        await asyncio.sleep(0.2)
    await tab.keys("\x1b")
    tab.keep, tab.chunks = False, []   # from here on nobody reads this tab's screen
    filled.append(index)
    sent = 0
    keys = ["u", "U", "b", "\x1b[F", "\x1b[H", ":" + "x" * 4000, "\x1b"]
    while not stop.is_set():
        await tab.keys(keys[sent % len(keys)])
        sent += 1
        await asyncio.sleep(0.1)
    return {"keys_sent": sent}


async def observe(tab: Session, stop: asyncio.Event, samples: list) -> None:
    """A student stepping through the chapter's example: the time each step takes to answer."""
    await tab.keys("x")                      # the #7 example in the sandbox
    await tab.wait_for("step 1/", 300)
    while not stop.is_set():
        for key in ("\x1b[C", "\x1b[D"):   # right, left: one step on, one back
            try:
                samples.append(await tab.answer_time(key, timeout=10))
            except asyncio.TimeoutError:
                samples.append(10.0)
            await asyncio.sleep(0.25)


def load_average() -> list:
    return [round(x, 2) for x in os.getloadavg()]


def available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return float("inf")


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used."""
    try:
        fields = stat_fields(pid)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def guard_memory(stop: asyncio.Event, floor_mb: float, note: dict) -> None:
    """Stop the hogs early if the machine runs short of memory (it is shared)."""
    while not stop.is_set():
        if available_mb() < floor_mb:
            note["stopped_early"] = f"memory available fell under {floor_mb:.0f} MB"
            stop.set()
        await asyncio.sleep(1)


async def worst(sessions: int, observers: int, seconds: float) -> dict:
    """``sessions`` hog tabs and ``observers`` stepping tabs: the observers' answer times,
    before the hogs start (baseline) and while they run; memory of the biggest session."""
    from radixviz.settings import SERVED_CAPS

    proc, base = start_server(sessions + observers)
    watchers = [Session(base) for _ in range(observers)]
    hogs = [Session(base) for _ in range(sessions)]
    try:
        for tab in watchers + hogs:
            await tab.open(width=120, height=36)
        await asyncio.gather(*(tab.wait_for(HOME_MARK, 300) for tab in watchers + hogs))
        stop, baseline = asyncio.Event(), []
        watching = [asyncio.ensure_future(observe(tab, stop, baseline)) for tab in watchers]
        await asyncio.sleep(min(20, seconds / 3))
        stop.set()
        await asyncio.gather(*watching)
        load_before = load_average()

        stop, loaded, note = asyncio.Event(), [], {}
        guard = asyncio.ensure_future(guard_memory(stop, 5000, note))
        filled: list = []
        hogging = [asyncio.ensure_future(hog(tab, SERVED_CAPS, stop, i, filled)) for i, tab in enumerate(hogs)]
        started = time.monotonic()
        while len(filled) < sessions and time.monotonic() - started < 600 and not stop.is_set():
            await asyncio.sleep(1)           # every hog has loaded torch and filled its history
        note["hogs_filled_after_s"] = round(time.monotonic() - started)
        await asyncio.sleep(20)              # the steady state: the server has sorted the busy ones out
        pids = children(proc.pid)
        server_cpu, app_cpu = cpu_s(proc.pid), {pid: cpu_s(pid) for pid in pids}
        bench_cpu = cpu_s(os.getpid())
        watching = [asyncio.ensure_future(observe(tab, stop, loaded)) for tab in watchers]
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not stop.is_set():
            await asyncio.sleep(1)
        load_during = load_average()
        memory = [memory_mb(pid) for pid in pids if Path(f"/proc/{pid}").exists()]
        server_cpu, app_cpu = cpu_s(proc.pid) - server_cpu, sum(cpu_s(p) - c for p, c in app_cpu.items())
        bench_cpu = cpu_s(os.getpid()) - bench_cpu
        alive = [pid for pid in pids if Path(f"/proc/{pid}").exists()]
        confined = sum(len(os.sched_getaffinity(pid)) < os.cpu_count() for pid in alive)
        lowered = sum(os.getpriority(os.PRIO_PROCESS, pid) == 19 for pid in alive)
        stop.set()
        hogged = await asyncio.gather(*hogging, return_exceptions=True)
        await asyncio.gather(*watching)
        guard.cancel()
    finally:
        for tab in watchers + hogs:
            await tab.close()
        stop_server(proc)

    def spread(values):
        values = sorted(values)
        return {"n": len(values), "p50_ms": round(1000 * statistics.median(values)),
                "p95_ms": round(1000 * values[int(0.95 * (len(values) - 1))]), "max_ms": round(1000 * values[-1])}
    return {
        "hog_sessions": sessions, "observer_sessions": observers, "seconds": seconds,
        "caps": {k: getattr(SERVED_CAPS, k) for k in SERVED_CAPS.__dataclass_fields__},
        "answer_alone": spread(baseline), "load_average_alone": load_before,
        "answer_with_hogs": spread(loaded), "load_average_with_hogs": load_during,
        "keys_sent_per_hog": statistics.median(h["keys_sent"] for h in hogged if isinstance(h, dict)),
        "hogs_that_failed": sum(not isinstance(h, dict) for h in hogged),
        "sessions_confined_to_the_hog_cores": confined,
        "sessions_lowered_to_nice_19": lowered,
        "cpu_s_while_observed": {"server": round(server_cpu, 1), "sessions": round(app_cpu, 1),
                                 "this_bench": round(bench_cpu, 1)},
        **note,
        "session_pss_mb": {"median": round(statistics.median(m["pss"] for m in memory), 1),
                           "max": round(max(m["pss"] for m in memory), 1)},
        "session_rss_mb_max": round(max(m["rss"] for m in memory), 1),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=None, help="tabs (default 20; with --worst, 30 hogs)")
    parser.add_argument("--timeout", type=float, default=180)
    parser.add_argument("--worst", action="store_true", help="the load test: hogs at the caps, observers timed")
    parser.add_argument("--observers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args(argv)
    if args.worst:
        report = asyncio.run(worst(args.sessions or 30, args.observers, args.seconds))
    else:
        report = asyncio.run(classroom(args.sessions or 20, args.timeout))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
