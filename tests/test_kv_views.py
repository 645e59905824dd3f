"""Namespaces, page hashes and KV events where a person sees them: the operation language,
``radixviz run --events`` (text and JSON), the tree view, Graphviz, the app's events log.

Every hash shown is recomputed here with hashlib from the tokens it names.
"""
from __future__ import annotations

import hashlib
import json

import pytest

from radixviz.render.graphviz import to_dot
from radixviz.render.tree import TreeView
from radixviz.script import ScriptError, Session, parse_script, script_source
from radixviz.script.kv_text import block_short
from test_run_json import schema, validate
from tui_helpers import plain, stepper

SCRIPT = 'insert "aabbcc" ns lora-a; insert "aabbdd"; insert "aabbee"; match "aabbcc" ns lora-a; evict 2'


def page_hash(tokens: str, prior: str | None = None) -> str:
    data = (bytes.fromhex(prior) if prior else b"") + b"".join(ord(t).to_bytes(4, "little") for t in tokens)
    return hashlib.sha256(data).hexdigest()


AA = page_hash("aa")
BB = page_hash("bb", AA)
CC = page_hash("cc", BB)
DD = page_hash("dd", BB)
EE = page_hash("ee", BB)
RUN = ("run", "--device", "cpu")   # the command most tests here run


def test_the_language_reads_namespaces_and_the_events_switch():
    ops = parse_script('insert "Hi" ns lora-a priority 2; match Hi ns t/1; lock Hi ns a; '
                       'tokens 1 2 ns b; events on; events off')
    assert [(op.name, op.ns, op.priority) for op in ops] == [
        ("insert", "lora-a", 2), ("match", "t/1", None), ("lock", "a", None),
        ("insert", "b", None), ("events", None, None), ("events", None, None)]
    assert [op.mode for op in ops[-2:]] == ["on", "off"]
    def fields(op):
        return (op.name, op.key, op.ns, op.priority)
    assert list(map(fields, parse_script(script_source(ops)))) == list(map(fields, ops))
    assert 'insert "Hi" priority 2 ns lora-a' in script_source(ops[:1])
    for bad, message in (("insert Hi ns", "ns needs a name"), ('insert Hi ns "a b"', "bad namespace"),
                         ("events maybe", "use on or off"), ("evict 3 ns a", "extra argument")):
        with pytest.raises(ScriptError, match=message):
            parse_script(bad)


def test_a_2024_session_refuses_namespaces_and_events_and_keeps_its_state():
    session = Session(pool_size=32, device="cpu")
    session.run("insert abc")
    for line in ("insert abd ns a", "match abc ns a", "events on"):
        with pytest.raises(ScriptError, match="2026"):
            session.run(line)
    assert session.pool.used_size() == 3 and len(session.records) == 1


def test_locks_are_held_per_namespace():
    session = Session(pool_size=32, device="cpu", engine="2026")
    session.run("insert abc ns a; insert abc ns b; lock abc ns a")
    with pytest.raises(ScriptError, match="no lock on 'abc' ns b"):
        session.run("unlock abc ns b")
    assert session.cache.protected_size() == 3
    session.run("unlock abc ns a")
    assert session.cache.protected_size() == 0


def test_run_events_prints_every_event_with_its_hash(cli):
    code, out, _ = cli(*RUN, "--events", "--page-size", "2", "--width", "140", "-e", SCRIPT)
    assert code == 0
    lines = out.splitlines()
    events = [line.strip() for line in lines if "⇢" in line]
    def short(h):
        return "#" + h[:8]
    assert events[:4] == [
        "⇢ cleared  every page is gone",
        f"⇢ stored   {short(AA)}  after —  'aa' (2 tokens)",
        f"⇢ stored   {short(BB)}  after {short(AA)}  'bb' (2 tokens)",
        f"⇢ stored   {short(CC)}  after {short(BB)}  'cc' (2 tokens)"]
    # the second prompt's first two pages hash the same: the hash does not name the namespace
    assert events[4:8] == [f"⇢ stored   {short(AA)}  after —  'aa' (2 tokens)",
                           f"⇢ stored   {short(BB)}  after {short(AA)}  'bb' (2 tokens)",
                           f"⇢ stored   {short(DD)}  after {short(BB)}  'dd' (2 tokens)",
                           f"⇢ stored   {short(EE)}  after {short(BB)}  'ee' (2 tokens)"]
    # lru: the 'dd' leaf is older than lora-a's, touched again by the match
    assert events[8:] == [f"⇢ removed  {short(DD)}"]
    tree = out[out.index("root "):]
    assert "kv events" in tree.splitlines()[0]
    assert "⟪ns lora-a⟫" in tree and "⟪no namespace⟫" in tree
    assert f"#{AA[:8]}…#{CC[:8]}" in tree and f"#{AA[:8]} #{BB[:8]}" in tree


def test_run_events_picks_the_engine_with_events_and_refuses_one_without(cli):
    code, _, err = cli(*RUN, "--events", "--engine", "2024", "-e", "insert a")
    assert code == 2 and "--events needs an engine with KV events" in err
    code, out, _ = cli(*RUN, "--events", "-e", "insert ab")
    assert code == 0 and "2026" in out and f"#{page_hash('a')[:8]}" in out


def test_run_json_carries_namespaces_hashes_and_events(cli):
    code, out, _ = cli(*RUN, "--json", "--events", "--page-size", "2", "-e", SCRIPT)
    doc = json.loads(out)
    validate(doc, schema(), schema())
    assert code == 0 and doc["kv_events"] is True
    first = doc["ops"][0]
    assert first["ns"] == "lora-a" and first["result"]["ns"] == "lora-a"
    stored = [e for e in first["kv_events"] if e["kind"] == "stored"]
    assert [e["token_ids"] for e in stored] == [["a", "a"], ["b", "b"], ["c", "c"]]
    assert [e["block_hashes"][0] for e in stored] == [_int64(AA), _int64(BB), _int64(CC)]
    assert [e["parent_block_hash"] for e in stored] == [None, _int64(AA), _int64(BB)]
    lora = next(n for n in doc["tree"]["children"] if n["extra_key"] == "lora-a")
    assert lora["hash_value"] == [AA, BB, CC]
    assert doc["ops"][-1]["kv_events"] == [{"kind": "removed", "block_hashes": [_int64(DD)], "medium": "GPU"}]
    assert block_short(_int64(AA)) == "#" + AA[:8]


def _int64(hex_hash: str) -> int:
    value = int(hex_hash[:16], 16)
    return value - 2 ** 64 if value >= 2 ** 63 else value


def test_the_graphviz_diagram_puts_each_namespace_in_a_labelled_cluster():
    session = Session(pool_size=64, device="cpu", engine="2026", page_size=2, kv_events=True)
    session.run(SCRIPT)
    dot = to_dot(session.cache.snapshot())
    assert 'label="⟪ns lora-a⟫"' in dot and 'label="⟪no namespace⟫"' in dot
    assert dot.count("subgraph cluster_ns") == 2
    assert f"#{AA[:8]}…#{CC[:8]}" in dot


def test_a_tree_without_namespaces_is_drawn_as_before():
    session = Session(pool_size=64, device="cpu", engine="2026")
    session.run("insert abc; insert abd")
    text = plain(TreeView(session.cache.snapshot()))
    assert "⟪" not in text and "#" not in text


async def test_k_opens_the_events_log_up_to_the_step_shown(tmp_path):
    script = 'events on\npage-size 2\ninsert "aabb" ns t1\ninsert "aacc"\n'
    async with stepper(tmp_path, script, size=(110, 36), engine_options={"engine": "2026"}) as (app, pilot):
        await pilot.press("end", "k")
        log = plain(app.screen.query_one("#kv-log").content, width=100)
        assert "3  insert \"aabb\" ns t1" in log and "4  insert \"aacc\"" in log
        assert f"stored   #{page_hash('cc', AA)[:8]}  after #{AA[:8]}  'cc'" in log
        assert "4 stored, 0 removed so far" in log
        await pilot.press("escape", "left_square_bracket")   # back to the start of the last insert
        await pilot.press("k")
        log = plain(app.screen.query_one("#kv-log").content, width=100)
        assert "aacc" not in log and "2 stored, 0 removed so far" in log
        await pilot.press("escape", "end")
        tree = "\n".join(line.plain for line in app.screen.query_one("#tree-pane").lines)
        assert "⟪ns t1⟫" in tree and "⟪no namespace⟫" in tree


async def test_k_without_events_says_how_to_turn_them_on(tmp_path):
    async with stepper(tmp_path, "insert ab\n", engine_options={"engine": "2026"}) as (app, pilot):
        await pilot.press("k")
        log = plain(app.screen.query_one("#kv-log").content, width=100)
        assert "KV events are off" in log and "events on" in log
