"""``radixviz verify-kv``: exit codes, table, JSON, one-line errors."""
import json

import pytest


CHAPTER = 'insert "Hello_L.A.!"; insert "Hello_L.A.!world"; match Hello_world'
VERIFY = ("verify-kv", "--device", "cpu")   # the command every test here runs


def test_fixed_matcher_agrees_exit_0(cli):
    code, out, _ = cli(*VERIFY, "-e", CHAPTER)
    assert code == 0
    assert "ok  agree" in out and "all 1 match agree" in out


def test_buggy_matcher_diverges_exit_1(cli):
    code, out, _ = cli(*VERIFY, "--buggy", "-e", CHAPTER)
    assert code == 1
    assert "diverges from token 6 'w'" in out


def test_script_file_and_json(tmp_path, cli):
    script = tmp_path / "fork.rv"
    script.write_text('insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\n'
                      'matcher buggy\nmatch Hello_world   # the #7 case\n')
    code, out, _ = cli(*VERIFY, str(script), "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False
    (match,) = data["matches"]
    assert match["where"] == f"{script}:4:1"
    assert match["matched"] == 11 and match["first_diverging_token"] == 6
    assert match["diff_at_first_diverging"] > 0.1


@pytest.mark.parametrize("argv, message", [
    ((), "radixviz: give a SCRIPT file or -e OPS"),
    (("-e", "inser x"), "<-e>:1:1: unknown operation 'inser'"),
    (("-e", "match a", "--device", "tpu"), "radixviz verify-kv: argument --device: tpu: use auto, cpu or cuda"),
    (("-e", "match a", "--pool-size", "0"),
     "radixviz verify-kv: argument --pool-size: must be between 1 and 1000000, not 0"),
    (("-e", "match a", "--seed", "-1"), "radixviz verify-kv: argument --seed: must be between 0 and"),
    (("-e", "match a", "--seed", "x"), "radixviz verify-kv: argument --seed: must be a whole number, not 'x'"),
    (("missing.rv",), "missing.rv:1:1: cannot read"),
])
def test_bad_input_is_one_line_exit_2(cli, argv, message):
    code, out, err = cli(*VERIFY, *argv)
    assert code == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err


def test_a_refused_operation_keeps_the_checks_before_it(cli):
    code, out, err = cli(*VERIFY, "-e", "insert ab; match ab; insert ab€; match ab")
    assert code == 2
    assert out.count("ok  agree") == 1 and "all 1 match agree" in out
    assert err == "<-e>:1:22: token '€' at position 2 is outside the model's vocabulary " \
                  "(one byte: characters U+0000..U+00FF or ids 0..255)\n"
