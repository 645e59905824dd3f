"""A lesson's first screen against a bare Textual app's, in one run, in a real terminal (tmux).

Each round starts, one after the other: a bare Textual app (two bordered panes and a line of
text: Python, Textual and a first frame, nothing of radixviz), ``radixviz lesson N`` and
``radixviz sandbox``. Each is timed from Enter until the screen shows its text, its panes
(the lesson: its first paragraph's words beside the tree and pool panes), and until it is
ready to step (the engine loaded: the status line's "no steps yet"). Prints JSON: medians,
the lesson's panes over the bare app's, and the load average before and after.

    python bench/lesson_paint.py [--rounds 5] [--lesson 1]

Goal (issue 51): a lesson's text and panes within 1 s, and within 3x the bare app's.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from first_paint import RADIXVIZ, SESSION, SIZE, screen, tmux  # noqa: E402 - a sibling script

BARE_APP = '''
from textual.app import App
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

class Bare(App):
    CSS = "Horizontal > * { width: 1fr; } Static { border: round $primary; height: 1fr; }"

    def compose(self):
        with Horizontal():
            with Vertical():
                yield Static("root", id="tree")
                yield Static("slots", id="pool")
            yield Static("bare Textual app: its words beside two panes", id="words")

    def on_mount(self):
        self.query_one("#tree").border_title = "tree"
        self.query_one("#pool").border_title = "KV pool"

Bare().run()
'''
READY = "no steps yet"


def first_words(number: int) -> str:
    """The first words of lesson ``number``'s first paragraph, as the pane shows them."""
    from radixviz.lessons import Narrative, load_lessons
    lesson = next(l for l in load_lessons() if l.number == number)
    text = next(b.in_app for b in lesson.blocks if isinstance(b, Narrative))
    line = next(line for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return " ".join(line.split()[:3])


def timed(command: list[str], text: str, panes: tuple[str, ...], engine_free: bool = False,
          timeout: float = 60.0) -> dict:
    """Seconds from Enter to: any text on screen, ``text`` on screen, ``text`` with every
    one of ``panes`` (their titles), and "no steps yet" (None where never seen, and for an
    ``engine_free`` app)."""
    env = [arg for name in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "RADIXVIZ_DATA_DIR") if name in os.environ
           for arg in ("-e", f"{name}={os.environ[name]}")]
    tmux("new-session", "-d", "-s", SESSION, "-x", str(SIZE[0]), "-y", str(SIZE[1]), *env,
         f"sh -c 'read _; {shlex.join(command)}; sleep 30'")
    try:
        time.sleep(0.3)   # the shell waits at read: tmux's own start is not counted
        start = time.perf_counter()
        tmux("send-keys", "-t", SESSION, "Enter")
        seen: dict = {"first_paint_s": None, "text_s": None, "panes_s": None, "ready_s": None}
        # the bare app has no engine: it is never "ready"
        wanted = [key for key in seen if key != "ready_s" or not engine_free]
        while time.perf_counter() - start < timeout and any(seen[key] is None for key in wanted):
            shown, now = screen(), round(time.perf_counter() - start, 3)
            marks = {"first_paint_s": bool(shown.strip()), "text_s": text in shown,
                     "panes_s": text in shown and all(p in shown for p in panes), "ready_s": READY in shown}
            for key, there in marks.items():
                if there and seen[key] is None:
                    seen[key] = now
            time.sleep(0.005)
        return seen
    finally:
        tmux("kill-session", "-t", SESSION)


def median(runs: list[dict], key: str) -> float | None:
    values = [r[key] for r in runs if r[key] is not None]
    return round(statistics.median(values), 3) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lesson", type=int, default=1)
    args = parser.parse_args()
    words = first_words(args.lesson)
    with tempfile.TemporaryDirectory() as folder:
        bare = Path(folder) / "bare.py"
        bare.write_text(BARE_APP, encoding="utf-8")
        os.environ.setdefault("RADIXVIZ_DATA_DIR", folder)   # no saved place: the lesson starts
        commands = {
            "bare textual": ([sys.executable, str(bare)], "bare Textual app", ("tree", "KV pool")),
            f"lesson {args.lesson}": ([RADIXVIZ, "lesson", str(args.lesson)], words, ("tree", "KV pool")),
            "sandbox": ([RADIXVIZ, "sandbox"], "The cache is empty", ("tree", "KV pool")),
        }
        result: dict = {"load_average": os.getloadavg(), "terminal": f"tmux {SIZE[0]}x{SIZE[1]}",
                        "rounds": args.rounds}
        runs: dict = {name: [] for name in commands}
        tmux("new-session", "-d", "-s", "keep", "sleep 3600")
        try:
            for _ in range(args.rounds):   # interleaved: each round sees the same load
                for name, (command, text, panes) in commands.items():
                    runs[name].append(timed(command, text, panes, engine_free=name == "bare textual"))
        finally:
            tmux("kill-server")
    for name, found in runs.items():
        result[name] = {f"{key.removesuffix('_s')}_median_s": median(found, key) for key in found[0]}
        result[name]["runs"] = found
    lesson, bare_panes = result[f"lesson {args.lesson}"], result["bare textual"]["panes_median_s"]
    if lesson["panes_median_s"] is not None and bare_panes:
        result["lesson_panes_over_bare"] = round(lesson["panes_median_s"] / bare_panes, 2)
        result["goal_met"] = lesson["panes_median_s"] <= 1.0 and result["lesson_panes_over_bare"] <= 3.0
    result["load_average_after"] = os.getloadavg()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
