"""``radixviz run``: results, final tree and pool, and ``--steps`` with the engine's own lines."""
import linecache
import re
from pathlib import Path

import pytest

CHAPTER = 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match "Hello_world"'
ROOT = Path(__file__).resolve().parents[1]
# the command every test here runs (a later --width or --pool-size wins)
RUN = ("run", "--device", "cpu", "--pool-size", "32", "--width", "100")


class TestRun:
    def test_chapter_example_fixed(self, cli):
        code, out, err = cli(*RUN, "-e", CHAPTER)
        assert (code, err) == (0, "")
        assert out == (
            '  1  insert "Hello_L.A.!"  →  prefix_len 0; new slots 0–10\n'
            '  2  insert "Hello_L.A.!world"  →  prefix_len 11; new slots 22–26; duplicates freed 11–21\n'
            "  3  match \"Hello_world\"  →  6 token(s) 'Hello_' (slots 0–5); the pre-#7 matcher would say 11, \n"
            "wrongly adding slots 22–26\n"
            "\n"
            "root  16 tokens · 16 evictable · matcher fixed\n"
            "└── ▶✂✓ 'Hello_'  slots 0–5  ref 0  t 8\n"
            "    └── ✂ 'L.A.!'  slots 6–10  ref 0  t 5\n"
            "        └── 'world'  slots 22–26  ref 0  t 6\n"
            "▶ current step  ✂ just split  ✓ matched\n"
            "\n"
            "   0 │[■][■][■][■][■][■] ■  ■  ■  ■  ■  ·  ·  ·  ·  · \n"
            "  16 │ ·  ·  ·  ·  ·  ·  ■  ■  ■  ■  ■  ·  ·  ·  ·  · \n"
            "16/32 used  · free  ■ tree  □ request  2 = 2 holders share it  [ ] touched\n")

    def test_buggy_flag_reports_the_wrong_slots(self, cli):
        code, out, _ = cli(*RUN, "--buggy", "-e", CHAPTER)
        assert code == 0
        words = " ".join(out.split())
        assert "WRONG from token 6: slots 22–26 belong to another context (the fixed matcher says 6)" in words
        assert "▶✗ 'world'" in out and "matcher BUGGY (pre-#7)" in out

    def test_script_file_and_matcher_switch(self, cli, tmp_path):
        script = tmp_path / "chapter.rv"
        script.write_text('insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatcher buggy  # pre-#7\n'
                          'match "Hello_world"\n', encoding="utf-8")
        code, out, _ = cli(*RUN, str(script))
        assert code == 0 and "  3  matcher buggy  →  matcher is now buggy" in out
        assert "  4  match \"Hello_world\"  →  11 token(s) 'Hello_world'" in out

    def test_keys_that_look_like_markup_print_as_typed(self, cli):
        _, out, _ = cli(*RUN, "-e", 'insert "[red]x"')
        assert out.startswith('  1  insert "[red]x"  →  prefix_len 0; new slots 0–5\n')
        assert "'[red]x'  slots 0–5" in out

    def test_a_long_match_of_token_ids_is_elided_between_whole_ids(self, cli):
        ids = " ".join(str(i) for i in range(10, 40))
        code, out, _ = cli(*RUN, "--width", "400", "-e", f"insert tokens {ids}; match tokens {ids} 99")
        result = out.splitlines()[1].split("→")[1]
        assert code == 0 and result.startswith("  30 token(s) '⟨10⟩⟨11⟩")
        assert "…⟨35⟩⟨36⟩⟨37⟩⟨38⟩⟨39⟩' (slots 0–29)" in result

    def test_broken_invariant_exits_1(self, cli, monkeypatch):
        from radixviz.cache import InvariantError
        from radixviz.engines.v2024.engine import Engine

        def broken(*args, **kwargs):
            raise InvariantError("node #1 holds slot 3 twice")
        monkeypatch.setattr(Engine, "check_invariants", broken)   # the engine's own check
        code, _, err = cli(*RUN, "-e", "insert abc")
        assert code == 1 and err == "radixviz: invariant broken: node #1 holds slot 3 twice\n"


class TestSteps:
    def test_every_step_with_the_engine_line_it_came_from(self, cli):
        code, out, _ = cli(*RUN, "--steps", "-e", CHAPTER)
        assert code == 0
        lines = out.split("\n\n")[0].splitlines()   # the steps, before the final tree
        split = lines.index("  19   split after 6 tokens: 'Hello_' above 'L.A.!'")
        where = re.match(r"       (radixviz/engines/v2024/cache\.py):(\d+) _split_node: (.*)$", lines[split + 1])
        assert where, lines[split + 1]
        source = linecache.getline(str(ROOT / where.group(1)), int(where.group(2))).strip()
        assert source.startswith(where.group(3).rstrip("…")) and source
        numbered = [int(m.group(1)) for m in (re.match(r"^ {2,3}(\d+) ", l) for l in lines) if m]
        assert numbered == list(range(1, 22))  # steps 1..21, none skipped


class TestNoAbbreviations:
    @pytest.mark.parametrize("argv,option", [
        (["run", "-e", "insert ab", "--step", "3"], "--step"),     # not --steps with a stray 3
        (["export", "-e", "insert ab", "--all", "d"], "--all"),   # not --all-steps
        (["simulate", "--pol", "lpm"], "--pol"),
    ])
    def test_a_prefix_of_an_option_is_refused_in_one_line(self, capsys, argv, option):
        from radixviz.cli import main

        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        err = capsys.readouterr().err
        assert exit_info.value.code == 2
        assert err.count("\n") == 1 and f"unrecognized arguments: {option}" in err
