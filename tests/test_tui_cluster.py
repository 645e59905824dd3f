"""``simulate --app --workers N``: the workers' trees side by side, one at a time with 1-9,
and the log of where each request went and why, read off the painted screen."""
from __future__ import annotations

import pytest

from radixviz.cli import main
from radixviz.tui.app import RadixvizApp
from tui_helpers import plain, wait_until



def _app(monkeypatch, *argv) -> RadixvizApp:
    opened = {}
    monkeypatch.setattr(RadixvizApp, "run", lambda app: opened.update(app=app))
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--app", *argv])
    assert exc.value.code == 0
    return opened["app"]


async def _loaded(app, pilot):
    await wait_until(pilot, lambda: app.screen.ticks)



async def test_the_cluster_screen_shows_each_worker_and_each_route(monkeypatch):
    app = _app(monkeypatch, "--workers", "3", "--router", "cache-aware", "--workload", "multi-tenant",
               "--requests", "24")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(app, pilot)
        await pilot.press("right", "right", "right")
        status = plain(app.screen.query_one("#cluster-status").content)
        assert "pass 4/" in status and "3 workers · cache-aware" in status
        titles = [box.border_title for box in app.screen.query(".cluster-tree")]
        assert [t.split(" ·")[0] for t in titles] == ["worker 0", "worker 1", "worker 2"]
        log = plain(app.screen.query_one("#cluster-log-body").content, width=118)
        routes = app.screen.cluster.routes
        first = routes[0]
        assert f"#{first.number:<4}→ worker {first.worker}" in log
        assert "nobody" not in log and ("○" in log or "◆" in log)
        tree = plain(app.screen.query(".cluster-tree-body").first().content, width=60)
        assert tree.startswith("root")
        await pilot.press("2")
        shown = [box.display for box in app.screen.query(".cluster-tree")]
        assert shown == [False, True, False]
        await pilot.press("0", "end")
        assert all(box.display for box in app.screen.query(".cluster-tree"))
        log = plain(app.screen.query_one("#cluster-log-body").content, width=118)
        last = routes[-1]                   # long after the last arrival, the log still shows it
        assert f"#{last.number:<4}→ worker {last.worker}" in log and "no arrivals yet" not in log
        assert f"pass {len(app.screen.ticks)}/{len(app.screen.ticks)}" in \
            plain(app.screen.query_one("#cluster-status").content)
