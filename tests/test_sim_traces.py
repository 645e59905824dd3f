"""Traces people have: Mooncake-style, OpenAI-style logs, our own timed; detection, timing, streaming."""
import json
from pathlib import Path

import pytest

from radixviz.sim.drive import RunObserver, drive
from radixviz.sim.request import RequestSpec
from radixviz.sim.runner import replay
from radixviz.sim.scheduler import Scheduler
from radixviz.sim.trace import TraceError
from radixviz.sim.traces import StreamedTrace, detect, open_trace
from radixviz.sim.traces.synthetic import mooncake

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def write(tmp_path, rows, name="t.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


class TestDetection:
    @pytest.mark.parametrize("name, fmt", [("mooncake", "mooncake"), ("openai", "openai"),
                                           ("sessions", "radixviz"), ("trace", "radixviz")])
    def test_each_shipped_example_is_named_by_its_fields(self, name, fmt):
        assert detect(EXAMPLES / f"{name}.jsonl") == fmt

    def test_fields_of_two_formats_are_refused_with_the_reason(self, tmp_path):
        path = write(tmp_path, [{"prompt": "hi", "output_len": 2, "hash_ids": [1]}])
        with pytest.raises(TraceError, match="fit mooncake and radixviz: give --format"):
            detect(path)

    def test_fields_of_no_format_are_refused(self, tmp_path):
        with pytest.raises(TraceError, match="cannot tell the format"):
            detect(write(tmp_path, [{"text": "hi"}]))


class TestMooncake:
    def test_equal_block_ids_share_a_prefix_and_the_last_block_is_cut(self, tmp_path):
        path = write(tmp_path, [{"timestamp": 0, "input_length": 7, "output_length": 2, "hash_ids": [5, 9]},
                                {"timestamp": 0, "input_length": 8, "output_length": 2, "hash_ids": [5, 3]}])
        (_, a), (_, b) = list(open_trace(path, block_size=4).arrivals())
        assert len(a.input_ids) == 7 and len(b.input_ids) == 8
        assert a.input_ids[:4] == b.input_ids[:4] and a.input_ids[4] != b.input_ids[4]

    def test_a_block_size_that_does_not_fit_is_refused_naming_one_that_does(self, cli):
        code, out, err = cli("simulate", "--trace", str(EXAMPLES / "mooncake.jsonl"))
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
        assert "mooncake.jsonl:1:" in err and "--block-size (16 fits)" in err

    def test_a_bad_line_met_during_the_stream_is_one_line_and_exit_2(self, tmp_path, cli):
        rows = list(mooncake(5, block_size=16)) + ["{not json"]
        code, _, err = cli("simulate", "--trace", str(write(tmp_path, rows)), "--block-size", "16")
        assert code == 2 and len(err.strip().splitlines()) == 2   # the trace note, then the error
        assert "t.jsonl:6: not JSON" in err


class TestOpenAI:
    LINE = {"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi there"}],
            "max_tokens": 3}

    def test_characters_without_a_tokenizer_and_it_says_so(self, tmp_path):
        trace = open_trace(write(tmp_path, [self.LINE]))
        (_, spec), = trace.arrivals()
        text = "<|system|>\nbe brief\n<|user|>\nhi there\n"
        assert spec.input_ids == tuple(map(ord, text)) and spec.max_new_tokens == 3
        assert "one per character" in trace.note()

    def test_a_local_tokenizer_json_gives_its_ids(self, tmp_path):
        pytest.importorskip("tokenizers", reason="--tokenizer needs the tokenizers package (pip install tokenizers)")
        from tokenizers import Tokenizer
        from tokenizers.models import WordLevel
        from tokenizers.pre_tokenizers import Whitespace

        vocab = {w: i for i, w in enumerate(["[UNK]", "<", "|", ">", "system", "user", "be", "brief",
                                             "hi", "there"])}
        tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
        tokenizer.pre_tokenizer = Whitespace()
        saved = tmp_path / "tokenizer.json"
        tokenizer.save(str(saved))
        trace = open_trace(write(tmp_path, [self.LINE]), tokenizer=str(saved))
        (_, spec), = trace.arrivals()
        ids = list(spec.input_ids)
        start = ids.index(vocab["be"])
        assert ids[start:start + 2] == [vocab["be"], vocab["brief"]] and vocab["hi"] in ids
        assert "tokenizer.json (tokenizers)" in trace.note()

    def test_a_tokenizer_that_is_no_file_is_refused(self, tmp_path):
        with pytest.raises(TraceError, match="no such file"):
            open_trace(write(tmp_path, [self.LINE]), tokenizer=str(tmp_path / "nope.json"))


class TestTiming:
    def shared_pair(self, tmp_path, gap_ms):
        return write(tmp_path, [{"timestamp": 0, "input_length": 64, "output_length": 2, "hash_ids": [1, 2, 3, 4]},
                                {"timestamp": gap_ms, "input_length": 64, "output_length": 2,
                                 "hash_ids": [1, 2, 3, 5]}])

    def test_a_later_arrival_finds_the_earlier_prompt_cached(self, tmp_path):
        late = replay(open_trace(self.shared_pair(tmp_path, 10_000), block_size=16), "lpm", 1024)
        assert late.stats.hit_tokens == 48          # three shared blocks
        assert late.traffic["latency"]["ttft_passes"]["max"] == 1   # neither waited

    def test_arrivals_in_one_pass_share_the_batch_and_both_compute(self, tmp_path):
        together = replay(open_trace(self.shared_pair(tmp_path, 10), ms_per_pass=1000, block_size=16),
                          "lpm", 1024)
        assert together.stats.hit_tokens == 0      # the release's loop: a batch cannot share

    def test_the_driver_pulls_a_request_only_when_its_pass_comes(self):
        sched = Scheduler(1024, "lpm", record=False)
        observer = RunObserver(sched)
        pulled = []

        def arrivals():
            for i in range(50):
                pulled.append(observer.clock())
                yield 30 * i, RequestSpec(tuple(range(i, i + 20)), 3)

        drive(sched, arrivals(), observer)
        # request i is read once the clock has reached request i-1's arrival, never sooner
        assert all(clock >= 30 * (i - 1) for i, clock in enumerate(pulled) if i)
        assert sched.stats.finished == 50


class TestExamplesReplay:
    @pytest.mark.parametrize("argv", [["mooncake.jsonl", "--block-size", "16"], ["openai.jsonl"],
                                      ["sessions.jsonl", "--pass-ms", "40"]])
    def test_each_format_replays_its_example(self, cli, argv):
        code, out, err = cli("simulate", "--trace", str(EXAMPLES / argv[0]), *argv[1:], "--json")
        doc = json.loads(out)
        assert code == 0 and doc["stats"]["finished"] == doc["settings"]["requests"] > 0
        assert doc["settings"]["trace"]["format_from"] == "detected"
        assert 0 < doc["optimum"]["optimal_hit_rate"] < 1 and "trace" in err

    def test_a_streamed_trace_counts_its_lines(self):
        trace = open_trace(EXAMPLES / "openai.jsonl")
        assert isinstance(trace, StreamedTrace) and trace.request_count() == 60


def test_workers_replay_a_streamed_trace_at_their_own_rate(cli):
    code, out, _ = cli("simulate", "--trace", str(EXAMPLES / "openai.jsonl"), "--workers", "2",
                       "--router", "cache-aware", "--json")
    assert code == 0 and json.loads(out)["requests"] == 60
