"""Compare across time in the app: a script opened in the sandbox, C, the 2024 and the 2026
engine side by side, stepping together, d to the first difference."""
from __future__ import annotations

from radixviz.tui.app import RadixvizApp
from radixviz.tui.screens.compare import CompareScreen
from test_tui_compare import headline, opened, returned
from tui_helpers import plain, wait_ready, watch_notifications

SCRIPT = 'insert "Hello_world"\ninsert "Hello_there"\nmatch "Hello_wor"\nlock "Hello_wo"\nevict 100\n'


def column(app, name: str) -> str:
    return plain(app.screen.query_one(f"#tree-{name}").content, width=100)


def title(app, name: str) -> str:
    return str(app.screen.query_one(f"#side-{name}").border_title)


async def open_script(tmp_path, text: str, size=(140, 40), **engine):
    path = tmp_path / "s.rv"
    path.write_text(text, encoding="utf-8")
    app = RadixvizApp("sandbox", script=str(path), device="cpu", export_dir=tmp_path / "export",
                      engine_options=engine or None)
    watch_notifications(app)
    return app


async def test_a_2026_script_on_both_engines(tmp_path):
    app = await open_script(tmp_path, SCRIPT, engine="2026", page_size=4, eviction_policy="lru")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("home", "C")
        await opened(app, pilot)
        assert title(app, "2024") == "2024 engine, fixed matcher (#7)"
        assert title(app, "2026") == "2026 engine, page 4, lru"
        # the first insert already differs: pages of 4 keep 8 of the 11 tokens
        assert "op 1/5" in headline(app) and "◀ first divergence: the engines part ways" in headline(app)
        assert "'Hello_world'" in column(app, "2024") and "'Hell|o_wo'" in column(app, "2026")
        assert "partial page freed 8–10" in returned(app, "2026")
        note = plain(app.screen.query_one("#compare-note").content, width=200)
        assert "not compared: times, hits, priorities" in note
        await pilot.press("right", "right")                 # both columns step together
        assert "op 3/5: match \"Hello_wor\"" in headline(app) and "≠ still different" in headline(app)
        assert "9 token(s)" in returned(app, "2024") and "8 token(s)" in returned(app, "2026")
        await pilot.press("end")
        assert "† evicted 'there'" in column(app, "2024") and "† evicted 'o_th'" in column(app, "2026")
        assert "lock 1  hits 2" in column(app, "2026") and "ref 1" in column(app, "2024")
        await pilot.press("d")
        assert "op 1/5" in headline(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen) and app.screen.model is not None


async def test_lfu_parts_ways_at_the_evict(tmp_path):
    app = await open_script(tmp_path, "insert aaa\ninsert aaa\ninsert bbb\nevict 3\n",
                            engine="2026", page_size=1, eviction_policy="lfu")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("home", "C")
        await opened(app, pilot)
        assert "op 1/4" in headline(app) and "they part ways at op 4 (d)" in headline(app)
        await pilot.press("d")
        assert "op 4/4: evict 3" in headline(app) and "◀ first divergence" in headline(app)
        assert "slots 0–2" in returned(app, "2024") and "slots 3–5" in returned(app, "2026")
        assert "† evicted 'aaa'" in column(app, "2024") and "† evicted 'bbb'" in column(app, "2026")
        await pilot.press("left")
        assert "op 3/4" in headline(app) and "same so far" in headline(app)


async def test_a_2024_sandbox_compares_with_todays_defaults(tmp_path):
    app = await open_script(tmp_path, 'engine 2026\npage-size 2\ninsert "abcde"\nmatch "abcde"\n')
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("end", "C")
        await opened(app, pilot)
        # the script's own setting lines set up the 2026 column; the 2024 one keeps its engine
        assert title(app, "2026") == "2026 engine, page 2, lru"
        assert "op 4/4" in headline(app)
        assert "5 token(s)" in returned(app, "2024") and "4 token(s)" in returned(app, "2026")
        await pilot.press("home")
        assert "empty tree, every slot free" in returned(app, "2024")
        assert "an empty 2026 cache" in returned(app, "2026")


async def test_c_on_a_2026_sandbox_compares_across_time(tmp_path):
    app = await open_script(tmp_path, "insert abcde\nmatch abcde\n", engine="2026", page_size=2,
                            eviction_policy="fifo")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("end", "c")
        await opened(app, pilot)
        assert title(app, "2024") == "2024 engine, fixed matcher (#7)"
        assert title(app, "2026") == "2026 engine, page 2, fifo"
        assert "4 token(s)" in returned(app, "2026") and "5 token(s)" in returned(app, "2024")


async def test_home_opens_the_readme_comparison_across_time():
    app = RadixvizApp("home", device="cpu")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("t")
        await opened(app, pilot)
        assert title(app, "2026") == "2026 engine, page 2, lru"
        assert "op 4/4: evict 100" in headline(app)
        assert "† evicted 'rld'" in column(app, "2024") and "† evicted 'ther'" in column(app, "2026")
        await pilot.press("d")
        assert "op 1/4" in headline(app) and "◀ first divergence" in headline(app)
