"""The operation language: what parses, and the one-line error for each bad input."""
import pytest

from radixviz.script import ScriptError, load_script, parse_script


class TestGoodScripts:
    def test_chapter_example_with_comments_and_semicolons(self):
        ops = parse_script('insert "Hello_L.A.!"  # first\ninsert "Hello_L.A.!world"; match Hello_world')
        assert [op.name for op in ops] == ["insert", "insert", "match"]
        assert ops[2].key == tuple("Hello_world")
        assert (ops[2].line, ops[2].col) == (2, 28)
        assert ops[2].text == "match Hello_world"

    def test_each_character_is_a_token_and_quotes_keep_spaces(self):
        (op,) = parse_script("insert 'a b#;c'")
        assert op.key == ("a", " ", "b", "#", ";", "c")

    def test_explicit_token_ids(self):
        ops = parse_script("insert tokens 12 7 7 3\ntokens 1 2\nmatch tokens 12 7")
        assert ops[0].key == (12, 7, 7, 3)
        assert ops[1].name == "insert" and ops[1].key == (1, 2)
        assert ops[2].key == (12, 7)

    def test_quoted_tokens_word_is_a_plain_key(self):
        (op,) = parse_script('insert "tokens"')
        assert op.key == tuple("tokens")

    def test_escapes_in_double_quotes(self):
        (op,) = parse_script(r'insert "a\"b\n"')
        assert op.key == ("a", '"', "b", "\n")

    def test_other_operations(self):
        ops = parse_script("evict 5\nmatcher BUGGY\nmatcher fixed\nreset\nlock x\nunlock x")
        assert [(op.name, op.args) for op in ops] == [
            ("evict", (5,)), ("matcher", ("buggy",)), ("matcher", ("fixed",)), ("reset", ()),
            ("lock", (("x",),)), ("unlock", (("x",),))]

    def test_blank_lines_and_comments_only(self):
        assert parse_script("\n  # nothing\n\n") == []


@pytest.mark.parametrize("text, where, message", [
    ("insrt abc", "s.rv:1:1", "unknown operation 'insrt' (did you mean 'insert'?)"),
    ("explode abc", "s.rv:1:1", "unknown operation 'explode' (operations:"),
    ("insert", "s.rv:1:1", "missing argument: insert needs a key"),
    ("match Hello world", "s.rv:1:13", "extra argument 'world'"),
    ("evict", "s.rv:1:1", "missing argument"),
    ("evict 3 4", "s.rv:1:9", "extra argument '4'"),
    ("evict five", "s.rv:1:7", "bad number 'five'"),
    ("evict -2", "s.rv:1:7", "negative eviction -2"),
    ('insert "abc', "s.rv:1:8", "unterminated quote"),
    ("matcher sloppy", "s.rv:1:9", "unknown matcher 'sloppy': use fixed or buggy"),
    ("insert tokens 1 x", "s.rv:1:17", "bad number 'x'"),
    ("insert tokens", "s.rv:1:8", "missing argument: tokens needs ids"),
    ("tokens 3 -1", "s.rv:1:10", "bad token id -1"),
    ("reset now", "s.rv:1:7", "extra argument 'now'"),
    ("insert a\n\n  match", "s.rv:3:3", "missing argument: match needs a key"),
])
def test_bad_lines_name_file_line_and_column(text, where, message):
    with pytest.raises(ScriptError) as info:
        parse_script(text, "s.rv")
    assert str(info.value).startswith(f"{where}: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


class TestFiles:
    def test_empty_file(self, tmp_path):
        path = tmp_path / "empty.rv"
        path.write_text("# only a comment\n")
        with pytest.raises(ScriptError, match=r"empty\.rv:1:1: empty script"):
            load_script(path)

    def test_binary_file(self, tmp_path):
        path = tmp_path / "blob.rv"
        path.write_bytes(b"insert a\n\x00\x01\x02")
        with pytest.raises(ScriptError, match=r"blob\.rv:1:1: binary file"):
            load_script(path)

    def test_not_utf8(self, tmp_path):
        path = tmp_path / "latin.rv"
        path.write_bytes(b"insert a\ninsert \xff\xfe\n")
        with pytest.raises(ScriptError, match=r"latin\.rv:2:1: binary file"):
            load_script(path)

    def test_too_large(self, tmp_path):
        path = tmp_path / "big.rv"
        path.write_text("insert a\n" * 200_000)
        with pytest.raises(ScriptError, match=r"big\.rv:1:1: file too large"):
            load_script(path)

    def test_missing_file(self, tmp_path):
        with pytest.raises(ScriptError, match=r"cannot read"):
            load_script(tmp_path / "nope.rv")

    def test_good_file_keeps_its_name_in_locations(self, tmp_path):
        path = tmp_path / "ok.rv"
        path.write_text("insert abc\nmatch abd\n")
        ops = load_script(path)
        assert ops[1].where() == f"{path}:2:1"


class TestWriterRoundTrip:
    """What the app saves (ctrl+s) reads back as the very same operations."""

    @pytest.mark.parametrize("line", [
        'insert "Hello_L.A.!"', 'match "a b"', 'insert "q\\"uote\\\\back"', 'insert "tab\\there"',
        'lock "Hello_"', 'unlock "Hello_"', "evict 5", "matcher buggy", "reset",
        "tokens 12 7 7 3", 'match "#;not a comment"', "insert \"it's\"",
    ])
    def test_parse_write_parse_gives_the_same_op(self, line):
        from radixviz.script.writer import op_source

        (op,) = parse_script(line)
        (again,) = parse_script(op_source(op))
        assert (again.name, again.key, again.count, again.mode) == (op.name, op.key, op.count, op.mode)

    def test_a_buggy_start_is_written_as_a_matcher_line(self):
        from radixviz.script.writer import script_source

        ops = parse_script('insert "ab"\nmatch "a"')
        text = script_source(ops, buggy=True, note="saved from the sandbox")
        assert text.splitlines()[0] == "# saved from the sandbox"
        assert [o.name for o in parse_script(text)] == ["matcher", "insert", "match"]
