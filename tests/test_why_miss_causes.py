"""``radixviz why-miss``: each cause of issue 55, built and named with the tokens it cost, on the
engines, on a server's recording, and for two chat turns a template and a tokenizer render."""
from __future__ import annotations

import json

import pytest

import sglang_v0523_wire as v0523
from radixviz.sim.why_miss import Sent, explain

P = tuple(range(100, 125))        # 25 shared tokens
X, Y, Z = tuple(range(200, 205)), tuple(range(300, 305)), (7, 8, 9)
SYSTEM = tuple(range(100, 130))


def costs(result) -> dict:
    return {c.kind: c.tokens_lost for c in result.causes}


class TestOnTheEngines:
    def test_another_rank(self):
        result = explain(Sent(SYSTEM + (1,), rank=0), Sent(SYSTEM + (1, 2), rank=1))
        assert costs(result) == {"another_rank": 31} and result.reused == 0

    @pytest.mark.parametrize("a, b, words", [
        ({"adapter": "math"}, {}, "adapter 'math' for A, none for B"),
        ({"salt": "s1"}, {"salt": "s2"}, "cache salt 's1' for A, 's2' for B"),
        ({"extra_key": "k"}, {}, "extra_key 'k' for A, none for B"),
    ])
    def test_each_part_of_a_namespace(self, a, b, words):
        result = explain(Sent(SYSTEM + (1,), **a), Sent(SYSTEM + (1, 2), **b))
        assert costs(result) == {"namespace": 31} and words in result.causes[0].message

    def test_not_inserted_yet_when_b_shares_a_batch_with_a(self):
        result = explain(SYSTEM + (1,), SYSTEM + (1, 2), same_batch=True)
        assert costs(result) == {"not_inserted": 31} and result.reused == 0
        assert explain(SYSTEM + (1,), SYSTEM + (1, 2)).reused == 31

    def test_the_last_token_and_a_logprob_start(self):
        assert costs(explain(SYSTEM, SYSTEM)) == {"last_token": 1}
        result = explain(SYSTEM + (1, 2, 3), Sent(SYSTEM + (1, 2, 3, 4), logprob_start=10))
        assert costs(result) == {"logprob_start": 23} and result.reused == 10

    def test_a_page_remainder_after_the_cap(self):
        # 32 tokens held whole, pages of 16: the cap at 31 drops the whole second page
        result = explain(tuple(range(32)), tuple(range(32)), page_size=16)
        assert costs(result) == {"last_token": 1, "page_floor": 15} and result.reused == 16

    def test_evicted_and_by_whom(self):
        filler = [(tuple(range(1000 + 40 * i, 1040 + 40 * i)), None) for i in range(2)]
        result = explain(SYSTEM + (1,), SYSTEM + (2,), between=filler, pool_size=80)
        assert "request 2 of the 2" in result.causes[-1].message and costs(result)["eviction"] == 30 - result.reused

    def test_on_the_host_only_and_under_the_load_back_threshold(self):
        # C = P + Y keeps P on the device; A's tail X (5 tokens) is demoted to the host only
        between = [(P + Y, None), (tuple(range(1000, 1010)), None)]
        result = explain(P + X, P + X + Z, between=between, pool_size=40, host_size=200)
        assert costs(result) == {"host_only": 5} and result.reused == 25
        # a longer stretch on the host is loaded back: no miss
        loaded = explain(SYSTEM + (1,), SYSTEM + (2,), between=[(tuple(range(1000 + 40 * i, 1040 + 40 * i)), None)
                                                                 for i in range(3)], pool_size=80, host_size=200)
        assert loaded.reused == 30 and loaded.loaded_back == 30 and "host_only" not in costs(loaded)

    def test_the_hybrid_causes_are_said_to_be_unchecked(self):
        result = explain(SYSTEM, SYSTEM)
        assert "sliding window" in result.not_checked and "Mamba" in result.not_checked


def recording(tmp_path):
    """A v0.5.23 server of page size 2 on two ranks: rank 0 holds [1..4] on the device, [1..8]
    under the adapter "math", [1..6] on the host, and stored then removed [5, 6]; rank 1 holds
    [1..10]."""
    from radixviz.wire.recording import Recorder
    S, R = v0523.BlockStored, v0523.BlockRemoved
    plain = v0523.chain([[1, 2], [3, 4], [5, 6]])
    math = [v0523.namespaced(h, v0523.namespace_seed("a" * 32, None))
            for h in v0523.chain([[1, 2], [3, 4], [5, 6], [7, 8]])]
    rank0 = [[S(plain, None, [1, 2, 3, 4, 5, 6], 2, None, "GPU")], [S(math, None, list(range(1, 9)), 2, None, "GPU",
                                                                      lora_name="math")],
             [S(plain, None, [1, 2, 3, 4, 5, 6], 2, None, "CPU_PINNED")], [R(plain[2:], "GPU")]]
    rank1 = [[S(v0523.chain([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]), None, list(range(1, 11)), 2, None, "GPU")]]
    path = tmp_path / "server.rvkv"
    with open(path, "wb") as out:
        recorder = Recorder(out)
        for stream, batches in ((0, rank0), (1, rank1)):
            for seq, events in enumerate(batches):
                recorder.write(stream, "pub", [b"kv-events", seq.to_bytes(8, "big"), v0523.payload(events, stream)])
    return path


class TestOnARecording:
    def run(self, cli, path, *argv):
        code, out, err = cli("why-miss", "--recording", str(path), "[1,2,3,4,5,6,7,8,9,10,11]", "--json", *argv)
        assert code == 0, err
        return json.loads(out)

    def test_each_holder_of_b_is_found_and_the_first_missing_page_is_explained(self, cli, tmp_path):
        path = recording(tmp_path)
        doc = self.run(cli, path)
        held = {(h["rank"], h["medium"], h["namespace"]): h["pages"] for h in doc["settings"]["held"]}
        assert held == {(0, "GPU", None): 2, (0, "GPU", "adapter math"): 4, (0, "CPU_PINNED", None): 3,
                        (1, "GPU", None): 5}
        # the page at token 4 is on the host only (2 tokens past the device's: no load back);
        # the adapter "math" and rank 1 hold more, each out of B's reach
        assert doc["reused"] == 4 and doc["causes"][0]["kind"] == "host_only"
        assert doc["causes"][0]["tokens_lost"] == 2
        assert self.run(cli, path, "--adapter-b", "math")["reused"] == 8
        assert self.run(cli, path, "--rank-b", "1")["reused"] == 10

    def test_an_earlier_batch_and_an_eviction(self, cli, tmp_path):
        path = recording(tmp_path)
        before = self.run(cli, path, "--at-seq", "0")      # rank 0 had stored only the plain prompt
        assert before["reused"] == 6 and before["causes"][0]["kind"] == "another_rank"
        salted = self.run(cli, path, "--salt-b", "nobody")   # nothing under that salt: out of reach
        assert salted["reused"] == 0 and salted["causes"][0]["kind"] == "namespace"

    def test_an_eviction_names_the_batch_that_removed_the_page(self, cli):
        from pathlib import Path
        shipped = Path(__file__).resolve().parent.parent / "examples" / "kv-events-v0.5.23.rvkv"
        code, out, err = cli("why-miss", "--recording", str(shipped), "The capital of Spain is Madrid. Yes", "--json")
        doc = json.loads(out)
        assert code == 0, err
        assert doc["reused"] == 14 and doc["causes"] == [{"kind": "eviction", "tokens_lost": 20, "message": (
            "the server stored B's page at token 14 and removed it in batch 6: evicted (the stream does not "
            "say for which request)")}]


def test_two_chat_turns_part_where_the_template_drops_the_reasoning(cli, tmp_path):
    tokenizers = pytest.importorskip("tokenizers", reason="--tokenizer needs the tokenizers package")
    from tokenizers import decoders, models, pre_tokenizers, trainers
    template = ("{% for m in messages %}<|{{ m.role }}|>{% if m.role == 'assistant' and not loop.last %}"
                "{{ m.content.split('</think>')[-1] }}{% else %}{{ m.content }}{% endif %}\n{% endfor %}"
                "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    first = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Capital of France?"},
             {"role": "assistant", "content": "<think>Easy: it is Paris.</think>Paris."}]
    second = first + [{"role": "user", "content": "And of Spain?"}]
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.train_from_iterator([json.dumps(second)] * 4, trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    files = {"tokenizer.json": None, "t.jinja": template, "a.json": json.dumps(first), "b.json": json.dumps(second)}
    for name, text in files.items():
        if text is None:
            tokenizer.save(str(tmp_path / name))
        else:
            (tmp_path / name).write_text(text)
    code, out, err = cli("why-miss", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json",
                         "--chat-template", str(tmp_path / "t.jinja"), "--tokenizer", str(tmp_path / "tokenizer.json"))
    doc = json.loads(out)
    assert code == 0, err
    assert doc["causes"][0]["kind"] == "differ" and doc["parting"]["message"] == "message 3 (assistant)"
    assert "reasoning" in doc["parting"]["reason"] and doc["parting"]["a_after"].startswith("<think>")


def test_lesson_20_checks_out_and_walks_through_every_cause(cli):
    from pathlib import Path

    from radixviz.lessons import check_lesson, load_lessons
    lesson = next(lesson for lesson in load_lessons() if lesson.number == 20)
    assert lesson.id == "why-miss" and check_lesson(lesson) == []
    text = " ".join(lesson.path.read_text(encoding="utf-8").split())
    for heading in ("One token short", "Another namespace", "Evicted in between", "too little to load back",
                    "Not inserted yet", "Another worker, another rank", "A prompt that changed",
                    "A sliding window or a Mamba state", "On a server's recording", "How a server reports its hits"):
        assert heading in text
    for fact in ("`usage.prompt_tokens_details.cached_tokens`", "`--enable-cache-report`",
                 "`sglang:cache_hit_rate`", "`/flush_cache`"):
        assert fact in text
    # the recording's figures the lesson quotes
    shipped = Path(__file__).resolve().parent.parent / "examples" / "kv-events-v0.5.23.rvkv"
    prompt = "The capital of Spain is Madrid. Yes"
    end, before = (json.loads(cli("why-miss", "--recording", str(shipped), prompt, "--json", *more)[1])
                   for more in ((), ("--at-seq", "5")))
    assert f"It reuses {end['reused']} of {end['b_tokens']} tokens" in text and "batch 6" in text
    assert before["reused"] > end["reused"]
