"""The host tier in the operation language, on the command line and in the exports: each
transfer is a step with its own words, refusals change nothing, and every view says where
each node's KV lives."""
import json

import pytest

from radixviz.cli import main
from radixviz.script import ScriptError, Session, parse_script
from radixviz.script.narrate import describe, explain


def session(**options) -> Session:
    return Session(32, device="cpu", engine="hicache", **options)


def words(s: Session, start: int = 0) -> list:
    return [describe(f) for f in s.frames[start:]]


class TestOperations:
    def test_parse_the_host_tier_operations(self):
        ops = parse_script('host-size 300; write-policy write-back; sync; auto-sync off; '
                           'load-back "Hello"; evict-host 8')
        assert [(o.name, o.args) for o in ops] == [
            ("host-size", (300,)), ("write-policy", ("write_back",)), ("sync", ()),
            ("auto-sync", ("off",)), ("load-back", (tuple("Hello"),)), ("evict-host", (8,))]
        for bad, message in (("write-policy sometimes", "unknown write policy"), ("auto-sync maybe", "use on or off"),
                             ("sync now", "sync takes none"), ("host-size 1", "host size 1")):
            with pytest.raises(ScriptError, match=message):
                parse_script(bad)

    def test_auto_sync_acknowledges_before_the_next_operation(self):
        s = session()
        s.run('insert "Hello_world!"')
        assert s.engine.in_flight() == 1 and "copy started" in " ".join(words(s))
        record = s.run("evict 12")[0]
        assert record.result["acknowledged_first"] == 1 and record.result["evicted"] == 12
        told = words(s, record.first_frame)
        assert told.index("the write to the host of 'Hello_world!' is acknowledged: unlock it") < \
            told.index("free 'Hello_world!''s device slots 0–11; its host copy 0–11 stays (evicted and backed up)")

    def test_with_auto_sync_off_the_eviction_finds_the_write_still_running(self):
        s = session()
        s.run('auto-sync off; insert "Hello_world!"')
        record = s.run("evict 12")[0]
        assert record.result["evicted"] == 0
        assert any("locked by a write in flight" in w for w in words(s, record.first_frame))
        assert s.run("sync")[0].result == {"acknowledged": 1}
        assert s.run("evict 12")[0].result["evicted"] == 12
        s.check_invariants()

    def test_load_back_narrates_the_threshold_and_the_copy(self):
        s = session()
        s.run('insert "Hello_world!"; evict 12')
        short = s.run('load-back "Hello_wo"')[0]
        assert short.result["loaded"] == 0
        assert "below the threshold of 10" in " ".join(words(s, short.first_frame))
        full = s.run('load-back "Hello_world!"')[0]
        assert full.result["loaded"] == 12 and full.result["loaded_text"] == "Hello_world!"
        told = words(s, full.first_frame)
        assert "start copying 12 token(s) from host to device" in told
        frame = next(f for f in s.frames[full.first_frame:] if f.kind == "load")
        assert "all of it or none" in explain(frame)

    @pytest.mark.parametrize("line, message", [
        ("host-size 32", r"must be larger than the device pool \(32 slots\)"),
        ("host-size 66", None),
        ("write-policy write_back", "copies are in flight"),
    ])
    def test_refusals_change_nothing(self, line, message):
        s = session()
        s.run('auto-sync off; insert "Hello_world!"')
        before = (s.engine.snapshot(), s.pool.refcounts(), len(s.records))
        if message is None:
            s.run(line)
            return
        with pytest.raises(ScriptError, match=message):
            s.run(line)
        assert (s.engine.snapshot(), s.pool.refcounts(), len(s.records)) == before

    def test_the_host_tier_operations_belong_to_the_hicache_engine(self):
        s = Session(32, device="cpu", engine="2026")
        with pytest.raises(ScriptError, match="belongs to the hicache engine"):
            s.run("sync")


class TestCommandLine:
    def test_run_json_says_where_each_node_lives(self, cli):
        code, out, _ = cli("run", "--device", "cpu", "--engine", "hicache", "--pool-size", "32",
                           "--json", "-e", 'insert "Hello_"; insert "Hello_world!"; evict 6')
        doc = json.loads(out)
        assert code in (0, None) and doc["engine"] == "hicache" and doc["host_pool"]["size"] == 65
        (hello,) = doc["tree"]["children"]
        (world,) = hello["children"]
        assert (hello["tier"], world["tier"]) == ("both", "host")
        assert world["value"] == [] and world["host_value"] == [6, 7, 8, 9, 10, 11]
        assert doc["ops"][2]["result"]["acknowledged_first"] == 1

    def test_run_prints_both_pools(self, cli):
        code, out, _ = cli("run", "--device", "cpu", "--engine", "hicache", "--pool-size", "32",
                           "--host-size", "40", "-e", 'insert "Hello_world!"; evict 12')
        assert code in (0, None)
        assert "'Hello_world!'  [CPU]  slots — · host 0–11" in out
        assert "host pool (CPU)" in out and "12/40 used" in out

    def test_host_options_need_the_hicache_engine(self, cli):
        code, _, err = cli("run", "--engine", "2026", "--write-policy", "write_back", "-e", "sync")
        assert code == 2 and "--write-policy needs an engine with a host tier: --engine hicache" in err

    def test_the_html_export_draws_the_host_pool(self, cli, tmp_path):
        pytest.importorskip("graphviz")
        import shutil
        if shutil.which("dot") is None:
            pytest.skip("Graphviz's dot is not installed")
        page = tmp_path / "page.html"
        code, _, _ = cli("export", "--device", "cpu", "--engine", "hicache", "--pool-size", "32",
                         "-e", 'insert "Hello_world!"; evict 12; load-back "Hello_world!"', "-o", str(page))
        html = page.read_text()
        assert code in (0, None) and "host pool (CPU)" in html and "h-writing" in html
        from html import unescape   # the page escapes quotes: read it as a browser shows it
        assert "[CPU] on the host (CPU) only" in unescape(html) and "load 'Hello_world!' back" in unescape(html)


def test_every_host_tier_operation_validates_against_the_json_schema(capsys):
    from test_run_json import schema, validate
    script = ('engine hicache; host-size 80; insert "Hello_world!"; match "Hello_world!"; lock "Hello_"; '
              'unlock "Hello_"; auto-sync off; insert "Hello_there"; evict 100; sync; evict 100; '
              'match "Hello_world!"; load-back "Hello_world!"; sync; write-policy write_back; evict-host 5; '
              'auto-sync on; eviction lfu')
    with pytest.raises(SystemExit) as done:
        main(["run", "--device", "cpu", "--pool-size", "32", "--json", "--steps", "-e", script])
    assert done.value.code in (0, None)
    doc = json.loads(capsys.readouterr().out)
    rules = schema()
    validate(doc, rules, rules)
    assert {op["name"] for op in doc["ops"]} >= {"host-size", "sync", "auto-sync", "load-back", "evict-host",
                                                 "write-policy"}
