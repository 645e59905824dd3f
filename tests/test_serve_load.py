"""A class of 20 on localhost (bench/serve_load.py): every session paints its home screen,
none loads torch until it opens a stepper, a tab past the cap is told the class is full,
and closing the tabs ends every app process. Memory is measured there, not checked here."""
import asyncio
import importlib.util
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[1] / "bench" / "serve_load.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_serve_load", _BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_twenty_sessions_at_once():
    report = asyncio.run(load_bench().classroom(20, timeout=240))
    assert report["processes"] == 20            # every tab its own app process, all painted
    assert report["sessions_with_torch_at_home"] == 0
    assert report["sandbox_session_with_torch"] == 1
    assert report["tab_past_the_cap"] == {"status": 503, "says_full": True}
    assert report["all_processes_gone_after_close_s"] >= 0


def test_a_lesson_number_reaches_every_session():
    bench = load_bench()

    async def open_one():
        proc, base = bench.start_server(1, "2")
        tab = bench.Session(base)
        try:
            await tab.open()
            await tab.wait_for("lesson 2", 120)
            await tab.close()
            await bench.wait_children(proc.pid, 0, 60)
        finally:
            await tab.close()
            bench.stop_server(proc)
    asyncio.run(open_one())
