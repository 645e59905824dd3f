"""``simulate --sweep`` and ``simulate --trace``: the numbers a person reads, and bad input."""
import json
import re
from pathlib import Path

import pytest

from radixviz.sim import Scheduler, simulate
from radixviz.sim.runner import replay
from radixviz.sim.trace import TraceError, load_trace

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "trace.jsonl"


class TestSweep:
    def test_the_table_has_a_row_per_pool_and_a_column_per_policy(self, cli):
        code, out, _ = cli("simulate", "--workload", "tree-of-thought", "--requests", "30",
                           "--sweep", "pool=512,1024,2048")
        assert code == 0
        header = next(line for line in out.splitlines() if "pool slots" in line and "lpm" in line)
        assert re.findall(r"lpm|fcfs|random|weight", header) == ["lpm", "fcfs", "random", "weight"]
        expected = simulate("tree-of-thought", "weight", 30, 1024).stats.hit_rate
        row = next(line for line in out.splitlines() if re.match(r"│\s+1,024 │", line))
        assert f"{expected:.1%}" in row.split("│")[-2]
        assert out.count("█") > 0 and "* best policy" in out

    def test_json_gives_every_point(self, cli):
        code, out, _ = cli("simulate", "--workload", "few-shot", "--sweep", "requests=16,32",
                           "--compare", "lpm,fcfs", "--pool-size", "768", "--json")
        doc = json.loads(out)
        assert code == 0 and doc["sweep"] == {"requests": [16, 32]}
        points = {(p["requests"], p["policy"]): p for p in doc["results"]}
        assert set(points) == {(16, "lpm"), (16, "fcfs"), (32, "lpm"), (32, "fcfs")}
        again = simulate("few-shot", "fcfs", 32, 768).stats
        assert points[32, "fcfs"]["hit_rate"] == round(again.hit_rate, 6)
        assert points[32, "fcfs"]["finished"] == 32

    @pytest.mark.parametrize("sweep, message", [
        ("pool=512,x", "'x' is not a whole number"),
        ("size=1,2", "NAME one of pool, requests"),
        ("pool=8,512", "between 16 and"),
        ("pool=512,512", "given twice"),
    ])
    def test_a_bad_sweep_is_one_line_and_exit_2(self, cli, sweep, message):
        code, out, err = cli("simulate", "--sweep", sweep)
        assert code == 2 and out == ""
        assert message in err and len(err.strip().splitlines()) == 1
        assert len(err) < 300            # the input is never echoed in full


class TestTraceFile:
    def test_the_example_replays_every_request(self, cli):
        code, out, _ = cli("simulate", "--trace", str(EXAMPLE), "--pool-size", "1024", "--json")
        stats = json.loads(out)["stats"]
        lines = [line for line in EXAMPLE.read_text().splitlines() if line.strip()]
        assert code == 0 and stats["requests"] == len(lines) == stats["finished"]
        assert stats["hit_tokens"] > 0   # the shared system prompt is reused

    def test_a_trace_sweeps_pool_sizes(self, cli):
        code, out, _ = cli("simulate", "--trace", str(EXAMPLE), "--sweep", "pool=256,1024")
        assert code == 0 and "trace.jsonl" in out and "pool slots" in out

    def test_text_is_bytes_and_ids_are_kept(self, tmp_path):
        trace = tmp_path / "t.jsonl"
        trace.write_text('{"prompt": "café", "output_len": 3}\n\n'
                         '{"prompt": [300, 7], "output_len": 2}\n')
        first, second = load_trace(trace)
        assert first.input_ids == tuple("café".encode()) and len(first.input_ids) == 5
        assert second.input_ids == (300, 7) and second.max_new_tokens == 2

    def test_arrival_orders_and_a_session_waits_for_its_previous_answer(self, tmp_path):
        trace = tmp_path / "t.jsonl"
        trace.write_text("\n".join([
            '{"prompt": "b-late", "output_len": 2, "arrival": 5}',
            '{"prompt": "s1-first", "output_len": 4, "arrival": 1, "session": "s"}',
            '{"prompt": "a-early", "output_len": 2, "arrival": 0}',
            '{"prompt": "s1-second", "output_len": 2, "arrival": 2, "session": "s"}',
        ]) + "\n")
        specs = load_trace(trace)
        assert [bytes(s.input_ids) for s in specs] == [b"a-early", b"s1-first", b"b-late"]
        assert bytes(specs[1].then.input_ids) == b"s1-second"
        sched = Scheduler(512, "fcfs", seed=0)
        sched.submit(specs)
        finished_at, admitted_at = {}, {}
        while (record := sched.step()) is not None:
            for rid in record.finished:
                finished_at[rid] = record.index
            for rid in record.admitted:
                admitted_at[rid] = record.index
        # rid 3 is the session's second request: queued only once rid 1 had its answer
        assert admitted_at[3] > finished_at[1]
        assert [e.kind for e in sched.events] == ["follow-up"]
        assert replay(specs, "fcfs", 512).stats.finished == 4

    @pytest.mark.parametrize("line, message", [
        ("not json", "not JSON"),
        ('["prompt"]', "must be a JSON object"),
        ('{"output_len": 3}', "missing 'prompt'"),
        ('{"prompt": "x"}', "missing 'output_len'"),
        ('{"prompt": "x", "output_len": 0}', "output_len must be a whole number from 1 to"),
        ('{"prompt": "", "output_len": 2}', "the prompt is empty"),
        ('{"prompt": [1, -2], "output_len": 2}', "token ids must be whole numbers from 0 to"),
        ('{"prompt": 5, "output_len": 2}', "prompt must be text or a list of token ids"),
        ('{"prompt": "x", "output_len": 2, "arrival": "soon"}', "arrival must be a finite number"),
        ('{"prompt": "x", "output_len": 2, "user": 1}', "unknown field 'user'"),
        ('{"prompt": "x", "output_len": ' + "9" * 4400 + "}", "a number of more than 4,300 digits"),
        ('{"prompt": "x", "output_len": ' + "9" * 4000 + "}", "output_len must be a whole number"),
        ("[" * 100_000, "JSON nested too deeply"),
    ])
    def test_a_bad_line_names_file_and_line_and_nothing_runs(self, cli, tmp_path, line, message):
        trace = tmp_path / "mine.jsonl"
        trace.write_text('{"prompt": "fine", "output_len": 2}\n\n' + line + "\n")
        code, out, err = cli("simulate", "--trace", str(trace))
        assert code == 2 and out == ""
        assert err.strip().endswith(f"{trace}:3: " + err.split(f"{trace}:3: ", 1)[1].strip())
        assert message in err and len(err.strip().splitlines()) == 1

    def test_an_empty_trace_is_refused(self, tmp_path):
        trace = tmp_path / "empty.jsonl"
        trace.write_text("\n\n")
        with pytest.raises(TraceError, match="no requests"):
            load_trace(trace)

    def test_a_tokenizer_without_transformers_is_one_clear_line(self, cli):
        try:
            import transformers  # noqa: F401
            pytest.skip("transformers is installed here")
        except ImportError:
            pass
        code, out, err = cli("simulate", "--trace", str(EXAMPLE), "--tokenizer", "gpt2")
        assert code == 2 and out == ""
        assert "transformers package is not installed" in err
        assert len(err.strip().splitlines()) == 1

    def test_trace_and_workload_together_is_refused(self, cli):
        code, _, err = cli("simulate", "--trace", str(EXAMPLE), "--workload", "few-shot")
        assert code == 2 and "drop --workload" in err

    def test_ids_outside_the_tiny_model_are_refused_before_running(self, cli, tmp_path):
        trace = tmp_path / "ids.jsonl"
        trace.write_text('{"prompt": [1, 2, 999], "output_len": 2}\n')
        code, out, err = cli("simulate", "--trace", str(trace), "--model", "tiny")
        assert code == 2 and out == "" and "token id 999" in err
