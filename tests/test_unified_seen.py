"""Issue 54 item 3, the unified engine seen: ``run`` (text and ``--json``), ``export`` (Graphviz
and HTML) and the sandbox draw its components as it declares them, a tombstone in monochrome
too, a pool a component, each component's sizes, which component cut a match and why, and the
engine's own lines in the code pane. Its facade is SGLang's allocator (slot 0 never handed
out, a freed slot to the back of the list) and keeps the counts of every pool right.
"""
from __future__ import annotations

import json
import random

import pytest

from radixviz.engines.unified.cache import UnifiedRadixCache
from radixviz.engines.unified.cache_params import EvictParams, InsertParams
from radixviz.script import ScriptError, Session

from tui_helpers import code_text, narration, painted_text, status, stepper, wait_until

HYBRID = ("--engine", "unified", "--components", "full,swa,mamba", "--window", "4", "--mamba-chunk", "2")
# window 4: the long leaf is cut so its last part, 'ghij', is one window; the lock holds the SWA KV
# of that window only, so evicting SWA leaves 'abcdef' a tombstone; 'abcdefgh' then ends two
# tokens past it, short of a window: the match is cut by the sliding window
SWA_CUT = 'insert "abcdefghij"; lock "abcdefghij"; evict 6 swa; match "abcdefgh"'


@pytest.fixture
def run(cli):
    return cli.bound("run", "--device", "cpu", "--pool-size", "24", "--width", "130")


class TestRun:
    def test_the_text_shows_each_component_and_the_tombstone(self, run):
        code, out, err = run(*HYBRID, "-e", SWA_CUT)
        assert (code, err) == (0, "")
        assert "  4  match \"abcdefgh\"  →  0 token(s)" in out
        assert "'abcdef'  slots 1–6  lock 1  hits 0  t 899999  swa ⊘  state ⊘" in out   # the tombstone, in words
        # the match cut 'ghij' after 'gh', where it stopped: the window's stamp stays on the older part
        assert "'gh'  slots 7–8  lock 1  hits 1  t 1000000  swa 7–8 lock 1  state ⊘  stamp #1" in out
        assert "'ij'  slots 9–10  lock 1  hits 1  t 1200000  swa 9–10 lock 1  state 1 lock 1" in out
        assert "swa: 0 evictable, 4 protected · mamba: 0 evictable, 1 protected · ⊘ tombstone" in out
        assert "SWA KV pool" in out and "Mamba state pool" in out

    def test_json_carries_the_components_the_parts_and_why_a_match_stopped(self, run):
        code, out, _ = run(*HYBRID, "--json", "-e", SWA_CUT)
        doc = json.loads(out)
        assert code == 0 and doc["engine"] == "unified" and doc["components"][0]["name"] == "full"
        assert [(c["name"], c["unit"]) for c in doc["components"]] == [("full", "token"), ("swa", "token"),
                                                                        ("mamba", "state")]
        (abcdef,) = doc["tree"]["children"]
        assert abcdef["parts"]["swa"] == {"slots": None, "locks": 0}          # a tombstone
        gh = abcdef["children"][0]
        assert gh["parts"]["swa"] == {"slots": [7, 8], "locks": 1} and gh["swa_stamp"] == 1
        assert gh["children"][0]["parts"]["mamba"] == {"slots": [1], "locks": 1}
        match = doc["ops"][3]["result"]
        assert (match["matched"], match["full_hit"], match["stopped_by"]) == (0, 8, ["mamba", "swa"])
        assert match["refused"][0]["by"]["swa"] == "a tombstone: its sliding-window KV is gone"
        assert match["refused"][1]["by"]["swa"] == "only 2 of the 4 window tokens since the last tombstone"

    def test_the_document_is_the_schemas(self, run):
        from test_run_json import schema, validate
        script = (f"{SWA_CUT}; unlock \"abcdefghij\"; evict 2 mamba; window 3; components full,swa,mamba; "
                  "mamba-chunk 2; swa-pool 16; mamba-pool 4; events on; insert \"abcdef\" priority 1; "
                  "evict 1; reset")
        code, out, _ = run(*HYBRID, "--json", "-e", script)
        doc = json.loads(out)
        assert code == 0 and doc["error"] is None
        validate(doc, schema(), schema())

    @pytest.mark.parametrize("argv, message", [
        (("--components", "swa,mamba"), "full (full-attention KV) is the tree's backbone"),
        (("--components", "full,swa"), "the swa component needs its sliding window: --window N"),
        (("--components", "full,mamba", "--page-size", "3"), "state spacing (64) and the page size (3) must divide"),
        (("--window", "0"), "argument --window: must be between 1 and 4096, not 0"),
    ])
    def test_refusals_are_one_line_and_exit_2(self, run, argv, message):
        code, _, err = run("--engine", "unified", *argv, "-e", 'insert "ab"')
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1

    def test_a_script_option_that_does_not_fit_changes_nothing(self, run):
        code, out, err = run("--engine", "unified", "-e", 'insert "ab"; components full,swa')
        assert code == 2 and "<-e>:1:14: the swa component needs its sliding window" in err
        assert "'ab'  slots 1–2" in out                      # the tree before it stays


def test_export_draws_the_parts_and_the_components(cli, tmp_path):
    code, _, err = cli("export", "--device", "cpu", "--pool-size", "24", *HYBRID, "-e", SWA_CUT,
                       "-o", tmp_path / "u.dot")
    dot = (tmp_path / "u.dot").read_text(encoding="utf-8")
    assert (code, err) == (0, "")
    assert "swa: 0 evictable, 4 protected · mamba: 0 evictable, 1 protected" in dot   # the caption
    assert "swa ⊘" in dot and "rounded,filled,dashed" in dot and "stamp #1" in dot
    code, _, _ = cli("export", "--device", "cpu", "--pool-size", "24", *HYBRID, "-e", SWA_CUT,
                     "-o", tmp_path / "u.html")
    page = (tmp_path / "u.html").read_text(encoding="utf-8")
    assert code == 0 and "SWA KV pool" in page and "swa ⊘" in page


class TestTheFacadeIsSGLangsAllocator:
    def test_slots_come_in_sglangs_order(self):
        """A session's inserts get the slots SGLang's allocator hands out: from 1, and a freed
        slot at the back of the free list (page 1), a freed page at the front (pages)."""
        session = Session(8, device="cpu", engine="unified")
        session.run('insert "abc"; insert "xy"; evict 3; insert "pqrs"')
        assert [r.result.get("new_slots") for r in session.records] == [[1, 2, 3], [4, 5], None, [6, 7, 8, 1]]
        paged = Session(16, device="cpu", engine="unified", page_size=4)
        paged.run('insert "abcd"; insert "wxyz"; evict 4; insert "pqrs"')
        assert paged.records[-1].result["new_slots"] == [4, 5, 6, 7]     # the freed page, at the front

    @pytest.mark.parametrize("components, page", [(("full",), 1), (("full", "swa"), 2), (("full", "swa", "mamba"), 1),
                                                  (("full", "mamba"), 4)])
    def test_the_session_and_the_bare_cache_build_the_same_tree(self, components, page):
        """The same inserts and evictions through a session and straight into SGLang's calls
        (tests/test_unified_differential.py checks those against the reference)."""
        rng = random.Random(7)
        options = dict(components=components, page_size=page, window=4, mamba_chunk=4, mamba_pool=6)
        session = Session(40, device="cpu", engine="unified", **options)
        bare = UnifiedRadixCache(components=components, page_size=page, sliding_window_size=4,
                                 mamba_cache_chunk_size=4, kv_size=40, mamba_size=6)
        for _ in range(40):
            key = "".join(rng.choice("ab") for _ in range(rng.randrange(page, 12)))
            if rng.random() < 0.2:
                session.run("evict 4")
                bare.evict(EvictParams(num_tokens=4))
                continue
            room = min(session.pool.available_size(), bare.token_to_kv_pool_allocator.full_available_size())
            if len(key) > room:
                continue
            session.run(f'insert "{key}"')
            slots = bare.token_to_kv_pool_allocator.alloc(len(key))
            state = bare.mamba_pool.alloc(1) if bare.mamba_pool is not None else None
            if bare.mamba_pool is not None and state is None:
                bare.evict_for_alloc(EvictParams(mamba_num=1))
                state = bare.mamba_pool.alloc(1)
            whole = len(key) // page * page
            result = bare.insert(InsertParams(key=tuple(key[:whole]), value=slots[:whole], mamba_value=state))
            bare.token_to_kv_pool_allocator.free_segment(slots[whole:])
            if state is not None and result.mamba_exist:
                bare.mamba_pool.free(state)
            assert session.cache.snapshot().root == bare.snapshot().root
            session.check_invariants()


class TestRefusals:
    def test_a_full_swa_pool_refuses_the_insert_and_loses_nothing(self):
        session = Session(16, device="cpu", engine="unified", components=("full", "swa"), window=2, swa_pool=4)
        session.run('insert "ab"; lock "ab"')
        before = session.cache.snapshot().root
        # the smaller pool (SWA: 2 free) is what an insert has
        with pytest.raises(ScriptError, match=r"pool full: 4 slots needed, 2 free and 0 evictable"):
            session.run('insert "wxyz"')
        assert session.cache.snapshot().root == before
        session.check_invariants()

    def test_a_lock_holds_a_copy_of_the_state_until_it_is_released(self):
        session = Session(16, device="cpu", engine="unified", components=("full", "mamba"), mamba_pool=2)
        session.run('insert "abcd"; lock "abcd"')
        (held,) = session.engine.held.values()
        pool = session.cache.mamba_pool
        assert held[0].mamba_slot is not None and pool.available_size() == 0
        assert pool.states[int(held[0].mamba_slot)].tolist() == pool.states[1].tolist()   # a copy
        with pytest.raises(ScriptError, match="Mamba pool full"):
            session.run('lock "abcd"')
        session.run('unlock "abcd"')
        assert pool.available_size() == 1 and not session.engine.held
        session.check_invariants()


async def test_the_sandbox_paints_the_components_a_tombstone_and_why_a_match_stopped(tmp_path):
    options = {"engine": "unified", "components": ("full", "swa", "mamba"), "window": 4, "mamba_chunk": 2}
    async with stepper(tmp_path, None, size=(150, 46), pool_size=24, engine_options=options) as (app, pilot):
        await pilot.press("colon")
        for line in SWA_CUT.split("; "):
            await pilot.press(*line, "enter")
        session = app.screen.model.session
        await wait_until(pilot, lambda: len(session.records) == 4, timeout=60)
        await pilot.press("escape", "right_square_bracket")     # to the end of the match
        await pilot.pause()
        tree = "\n".join(painted_text(app, "#tree-pane"))
        pools = "\n".join(painted_text(app, "#pool-pane"))
        assert "'abcdef'" in tree and "swa ⊘" in tree and "state ⊘" in tree          # the tombstone, in words
        assert "swa 7–8 lock 1" in tree and "state 1 lock 1" in tree
        assert "Full KV pool" in pools and "SWA KV pool" in pools and "Mamba state pool" in pools
        assert "swa 4/25 (0 evictable, 4 protected)" in status(app)
        assert ("the Full KV held 8, cut by swa (only 2 of the 4 window tokens since the last tombstone) "
                "and mamba (no Mamba state was kept at its end)") in " ".join(narration(app).split())
        for _ in range(6):                                      # back to the walk's last verdict
            if "judge 'gh'" in narration(app):
                break
            await pilot.press("left")
            await pilot.pause()
        assert "swa ✗ (only 2 of the 4 window tokens since the last tombstone)" in narration(app)
        assert "cache_tree.py" in code_text(app) and "update_best_if_valid" in code_text(app)   # the engine's own line


def test_the_allocation_step_says_v0523_frees_only_the_shortfall():
    # v0.5.23's allocator (allocator/base.py evict_to_free_tokens) evicts the shortfall, as the
    # session does; the first release's words ("asked ... the whole number") are not its
    from radixviz.script import parse_script
    from radixviz.script.narrate import explain
    session = Session(64, device="cpu", engine="unified")
    for op in parse_script('insert "abcd"'):
        session.apply(op)
    words = [explain(frame) for frame in session.frames if frame.kind == "alloc"]
    assert words and all("evict_to_free_tokens evicts the shortfall" in w for w in words)
    assert not any("whole number of new tokens" in w for w in words)
