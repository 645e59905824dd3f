"""The op language for today's cache: engine, page-size, eviction, insert ... priority N."""
import pytest

from radixviz.script.parser import ScriptError, parse_script


def test_new_operations_parse_with_their_arguments():
    ops = parse_script('engine 2026\npage-size 4\neviction LFU\ninsert "abcd" priority 2\n'
                       'tokens 1 2 3 4 priority -1\nengine 2024')
    assert [(op.name, op.args) for op in ops] == [
        ("engine", ("2026",)), ("page-size", (4,)), ("eviction", ("lfu",)),
        ("insert", (tuple("abcd"), 2)), ("insert", ((1, 2, 3, 4), -1)), ("engine", ("2024",))]


def test_priority_is_only_a_keyword_at_the_end_of_an_insert():
    plain = parse_script("insert priority")        # the key is the word itself
    assert plain[0].key == tuple("priority") and plain[0].priority is None
    with pytest.raises(ScriptError, match="extra argument"):
        parse_script('insert "x" "priority" 3')     # a quoted word is a key, not the keyword


@pytest.mark.parametrize("line, col, message", [
    ("engine 2025", 8, "unknown engine '2025'"),
    ("page-size 0", 11, "page size 0"),
    ("page-size four", 11, "bad number"),
    ("eviction random", 10, "unknown eviction policy 'random'"),
    ('insert "abc" priority high', 23, "priority is a whole number"),
    ("engine", 1, "missing argument"),
])
def test_bad_lines_name_the_column(line, col, message):
    with pytest.raises(ScriptError) as exc:
        parse_script(line, "s.rv")
    assert exc.value.col == col and message in exc.value.message
    assert str(exc.value).startswith(f"s.rv:1:{col}: ")


# --------------------------------------------------------------------- running them

import json  # noqa: E402

from radixviz.cli import main  # noqa: E402
from radixviz.script import Session  # noqa: E402
from test_run_json import schema, validate  # noqa: E402


def test_a_session_switches_engines_and_cuts_inserts_to_whole_pages():
    session = Session(pool_size=32, device="cpu")
    records = session.run('engine 2026\npage-size 4\ninsert "abcdefghij" priority 2\n'
                          'insert "abcdxyzw"\nlock "abcd"\neviction mru\nevict 1\nunlock "abcd"')
    insert = records[2].result
    assert insert["new_slots"] == list(range(8)) and insert["freed_tail"] == [8, 9]
    assert records[3].result["prefix_len"] == 4 and records[4].result["delta"] == -4
    assert records[6].result["freed_slots"] == [12, 13, 14, 15]   # mru: the newest leaf, "xyzw"
    session.check_invariants()
    assert session.pool.used_size() == session.cache.total_size() == 8
    kinds = {f.kind for f in session.frames}
    assert {"engine", "page_size", "eviction", "free_tail", "hit", "priority", "heap"} <= kinds
    # the same operations replay to the same tree
    assert session.replay().cache.snapshot().root == session.cache.snapshot().root


@pytest.mark.parametrize("text, message", [
    ("page-size 4", "start with 'engine 2026'"),
    ("eviction lfu", "start with 'engine 2026'"),
    ('insert "ab" priority 1', "start with 'engine 2026'"),
    ("engine 2026\nmatcher buggy", "belongs to the 2024 engine"),
])
def test_refused_operations_change_nothing(text, message):
    session = Session(pool_size=16, device="cpu")
    with pytest.raises(ScriptError, match=message):
        session.run(text)
    assert session.cache.total_size() == 0 and session.pool.used_size() == 0


def test_run_json_with_steps_validates_and_carries_the_new_fields(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--json", "--steps", "--engine", "2026", "--page-size", "2",
              "--eviction-policy", "slru", "-e",
              'insert "abcde" priority 1; insert "abxy"; match "abcdz"; lock ab; evict 2; '
              "unlock ab; eviction lfu; engine 2024; insert ab"])
    out = capsys.readouterr().out
    doc = json.loads(out)
    validate(doc, schema(), schema())
    assert exc.value.code == 0 and doc["engine"] == "2024"   # the script ends on the 2024 engine
    ops = {op["name"] for op in doc["ops"]}
    assert {"eviction", "engine"} <= ops
    kinds = {step["kind"] for op in doc["ops"] for step in op["steps"]}
    assert {"page_cut", "hit", "priority", "free_tail"} <= kinds
    steps = [step for op in doc["ops"] for step in op["steps"]]
    assert any(s["file"].endswith("v2026/cache.py") and s["line"] for s in steps)


def test_run_ends_with_a_2026_tree_in_json(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--json", "--engine", "2026", "--page-size", "2", "-e", 'insert "abcd" priority 3; lock ab'])
    doc = json.loads(capsys.readouterr().out)
    validate(doc, schema(), schema())
    node = doc["tree"]["children"][0]
    assert (doc["page_size"], doc["protected_size"]) == (2, 2)
    assert (node["key"], node["lock_ref"], node["hit_count"], node["priority"]) == ("ab", 1, 1, 3)


@pytest.mark.parametrize("argv", [["--page-size", "4"], ["--engine", "2026", "--buggy"],
                                  ["--engine", "2026", "--page-size", "4097"],
                                  ["--engine", "2026", "--eviction-policy", "random"]])
def test_bad_engine_options_exit_2_with_one_line(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(["run", *argv, "-e", "insert ab"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
