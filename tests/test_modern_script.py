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
