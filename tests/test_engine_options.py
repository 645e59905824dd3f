"""An engine's options are data: a toy engine registered here declares its options, ``copies``
among them (tests/toy_window.py, ``Option``s and a spec), and gets its flag in ``run``, ``export``,
``sandbox`` and ``simulate``, its script operation ``copies N``, its limits, help and refusals;
its nodes' own field (``depth``) is drawn by its own views (tests/toy_window_views.py, named in
its spec) in the tree, the diagram and the JSON: with no other change to radixviz."""
from __future__ import annotations

import json

import pytest

from radixviz.cache.engines import engine_names, register, unregister
from radixviz.cli import build_parser
from radixviz.commands.engine_args import engine_options
from radixviz.render.graphviz import to_dot
from radixviz.script import ScriptError, Session, parse_script

import toy_window


@pytest.fixture(autouse=True)
def toyw():
    register(toy_window.SPEC)   # the one registry line
    yield
    unregister("toyw")


def run(cli, *argv):
    return cli("run", "--device", "cpu", "--pool-size", "16", "--width", "100", *argv)


def test_the_flag_reaches_the_engine(cli):
    code, out, err = run(cli, "--engine", "toyw", "--copies", "4", "--json", "-e", 'insert "abc"')
    doc = json.loads(out)
    assert (code, err) == (0, "") and doc["engine"] == "toyw"
    assert doc["copies"] == 4     # the toy's snapshot reports its setting


def test_without_the_flag_the_declared_default_holds(cli):
    code, out, _ = run(cli, "--engine", "toyw", "--json", "-e", 'insert "ab"')
    assert code == 0 and json.loads(out)["copies"] == toy_window.WINDOW.default


def test_the_script_operation_sets_it_on_a_fresh_cache(cli):
    code, out, err = run(cli, "--engine", "toyw", "--json", "-e", 'insert "ab"; copies 3; insert "cd"')
    doc = json.loads(out)
    assert (code, err) == (0, "")
    assert doc["ops"][1]["result"] == {"copies": 3} and doc["copies"] == 3
    assert [n["key"] for n in doc["tree"]["children"]] == ["c"]   # a fresh trie: "ab" is gone


def test_the_limits_are_the_declared_ones(cli):
    code, _, err = run(cli, "--engine", "toyw", "--copies", "65", "-e", 'insert "ab"')
    assert code == 2 and "argument --copies: must be between 1 and 64, not 65" in err
    with pytest.raises(ScriptError, match=r"<input>:1:8: copies must be between 1 and 64, not 0"):
        parse_script("copies 0")


def test_another_engine_refuses_the_flag_and_the_operation(cli):
    code, _, err = run(cli, "--engine", "2026", "--copies", "4", "-e", 'insert "ab"')
    assert code == 2 and "--copies needs an engine with window copies: --engine toyw" in err
    session = Session(16, device="cpu")
    with pytest.raises(ScriptError, match="copies belongs to the toyw engine"):
        session.apply(parse_script("copies 4")[0])


def test_help_offers_it_with_its_default(cli):
    code, out, _ = cli("run", "--help")
    assert code == 0 and "--copies N" in out and "tokens of each path the window pool keeps a copy of" in out
    assert "--engine toyw; default 8" in " ".join(out.split())


def test_its_node_field_is_shown_by_its_own_views(cli):
    code, out, _ = run(cli, "--engine", "toyw", "--copies", "4", "-e", 'insert "abc"')
    assert code == 0 and "root  3 tokens · 3 evictable · toyw, copies 4" in out
    assert "'c'  slots 2  ref 0  t 1  win 2  depth 3" in out    # the tree view (its copy: the shared view)
    code, out, _ = run(cli, "--engine", "toyw", "--json", "-e", 'insert "ab"')
    (a,) = json.loads(out)["tree"]["children"]
    assert (a["depth"], a["children"][0]["depth"]) == (1, 2)     # run --json
    session = Session(16, device="cpu", engine="toyw", copies=4)
    session.run('insert "ab"')
    dot = to_dot(session.engine.snapshot())
    assert "depth 2" in dot and "toyw engine, copies 4" in dot  # the Graphviz box and caption


def test_export_and_sandbox_take_it():
    parser = build_parser()
    for command in ("export", "sandbox"):
        args = parser.parse_args([command, "--engine", "toyw", "--copies", "5"])
        assert engine_options(args, command) == {"engine": "toyw", "copies": 5}


def test_simulate_takes_it(cli):
    code, out, _ = cli("simulate", "--engine", "toyw", "--copies", "6", "--workload", "few-shot",
                       "--requests", "8", "--pool-size", "600", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["settings"]["copies"] == 6 and doc["stats"]["finished"] == 8


def test_gone_with_its_engine():
    unregister("toyw")
    assert "toyw" not in engine_names()
    with pytest.raises(ScriptError, match="unknown operation"):
        parse_script("copies 4")
