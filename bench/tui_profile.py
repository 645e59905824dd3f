"""Profile the stepper's steps with pyinstrument (the same session as bench/tui.py) and print
the top functions by own time while stepping, as JSON.

    python bench/tui_profile.py [--nodes 1000] [--steps 40] [--size 120x40] [--top 10] [--direct]

Steps are Pilot's press and pause, as bench/tui.py's ``pilot_*`` figures (Pilot's own walks
over the widgets rank high); ``--direct`` sends each key as a terminal does and waits for the
frame, as its ``key_to_frame_*`` figures: the app's own work alone (the next step's prefetch,
done in idle time, included). Needs ``pip install pyinstrument``. Time spent idle (the event
loop waiting in ``select``) is left out of the ranking.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tui  # noqa: E402  (bench/tui.py: the session, Pilot's settings, the timed step)

IDLE = {"select", "poll", "epoll.poll", "select.select", "sleep", "wait"}


async def _direct_step(app) -> None:
    """A key as the terminal driver sends it, then wait until its frames have been painted."""
    tui.send_key(app, "right")
    await asyncio.sleep(0.04)


async def profile_steps(nodes: int, steps: int, size: tuple, top: int, text: str | None,
                        direct: bool = False) -> dict:
    from pyinstrument import Profiler

    from radixviz.tui.app import wait_until_ready
    app = tui.stepper_app(nodes)
    async with app.run_test(size=size) as pilot:
        await wait_until_ready(app, pilot)
        model = app.screen.model
        app.screen.position = 0   # the screen's reactive position moves the model
        await pilot.pause()
        profiler = Profiler(interval=0.0005, async_mode="disabled")
        profiler.start()
        for _ in range(min(steps, len(model.frames) - 1)):
            if direct:
                await _direct_step(app)
            else:
                await tui._timed_step(pilot, "right")
        profiler.stop()
    if text:
        from pyinstrument.renderers import ConsoleRenderer   # idle is most of the run: a finer cut
        renderer = ConsoleRenderer(unicode=True, processor_options={"filter_threshold": 0.002})
        Path(text).write_text(profiler.output(renderer))
    own: dict = {}
    total = [0.0]

    ours: dict = {}   # radixviz's functions by total time (children included), once a path

    def walk(frame, seen=frozenset()) -> None:
        if frame.is_synthetic:   # pyinstrument's [self] frames: counted in their parent's own time
            return
        key = f"{frame.function} ({Path(frame.file_path or '?').name}:{frame.line_no})"
        if "radixviz" in (frame.file_path or "") and key not in seen:
            ours[key] = ours.get(key, 0.0) + frame.time
            seen = seen | {key}
        if frame.function not in IDLE:
            mine = frame.total_self_time
            if mine > 0:
                own[key] = own.get(key, 0.0) + mine
                total[0] += mine
        for child in frame.children:
            walk(child, seen)

    root = profiler.last_session.root_frame() if profiler.last_session else None
    if root is not None:
        walk(root)
    ranked = sorted(own.items(), key=lambda item: -item[1])[:top]
    return {"tree_nodes": nodes, "steps": steps, "busy_s": round(total[0], 3),
            "top_own_time": [{"function": name, "ms_per_step": round(1000 * t / max(1, steps), 2),
                              "share": round(t / max(total[0], 1e-9), 3)} for name, t in ranked],
            "top_radixviz_total": [{"function": name, "ms_per_step": round(1000 * t / max(1, steps), 2)}
                                   for name, t in sorted(ours.items(), key=lambda item: -item[1])[:top]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--size", default="120x40")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--text", help="write pyinstrument's call tree to this file")
    parser.add_argument("--direct", action="store_true", help="keys as a terminal sends them, no Pilot")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    if not args.direct:
        tui.quicker_pilot()
    result = {"load_average": os.getloadavg(), "steps_sent": "as a terminal does" if args.direct else "Pilot",
              **asyncio.run(profile_steps(args.nodes, args.steps, size, args.top, args.text, args.direct)),
              "load_average_after": os.getloadavg()}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
