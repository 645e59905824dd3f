"""Hostile and huge traces replayed from outside (issue 52): every size is checked before
anything is built, memory stays bounded, and each refusal is one line naming FILE:LINE with
exit 2. Each test runs ``radixviz simulate`` as a child process on a file it writes, and
reads the child's own peak memory: its ``VmHWM`` at exit, written by the child. Not
``os.wait4``'s ``ru_maxrss``: Linux carries the parent's high-water mark into a forked child
across its exec, so a child of a pytest worker that once grew to 1.2 GB reports 1.2 GB."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

MB = 2**20
CHILD_MB = 500      # the bound on peak memory for every trace case


def simulate(*argv: str, prelude: str = "") -> tuple[int, str, float]:
    """(exit code, stderr, peak resident MB) of ``radixviz simulate ARGV`` in a child."""
    with tempfile.TemporaryDirectory() as folder:
        peak_file = os.path.join(folder, "peak")
        code = (f"import atexit\n"
                f"atexit.register(lambda: open({peak_file!r}, 'w').write(next(line.split()[1] for line in "
                f"open('/proc/self/status') if line.startswith('VmHWM:'))))\n"
                f"{prelude}\nimport sys\nfrom radixviz.cli import main\n"
                f"sys.argv = ['radixviz', 'simulate', *{list(argv)!r}]\nmain()")
        child = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
        with open(peak_file) as peak:
            return child.returncode, child.stderr, int(peak.read()) / 1024


def lines(path, objects) -> None:
    with open(path, "w") as out:
        for obj in objects:
            out.write(json.dumps(obj) + "\n")


def one_line(err: str) -> str:
    shown = [line for line in err.splitlines() if line.strip() and not line.startswith("trace ")]
    assert len(shown) == 1, err
    return shown[0]


class TestSizedFromTheHeader:
    def test_a_line_of_thirty_million_tokens_is_refused_before_it_is_built(self, tmp_path):
        trace = tmp_path / "huge.jsonl"
        lines(trace, [{"timestamp": 0, "input_length": 30_720_000, "output_length": 1,
                       "hash_ids": list(range(60_000))}])
        code, err, peak = simulate("--trace", str(trace), "--pool-size", "131072")
        assert code == 2 and peak < CHILD_MB
        assert one_line(err).startswith(f"radixviz: {trace}:1: the request needs 30,720,001 slots")

    def test_a_request_longer_than_the_context_is_refused_naming_its_line(self, tmp_path):
        trace = tmp_path / "long.jsonl"
        lines(trace, [{"timestamp": t, "input_length": n, "output_length": 4, "hash_ids": list(range(n // 16))}
                      for t, n in ((0, 64), (10, 2048))])
        code, err, _ = simulate("--trace", str(trace), "--block-size", "16", "--pool-size", "65536")
        assert code == 2
        assert f"{trace}:2: the request needs 2,052 tokens of context, more than 1,024" in one_line(err)


class TestLinesReadWithABound:
    def test_a_two_gigabyte_line_is_refused_after_its_first_megabyte(self, tmp_path):
        trace = tmp_path / "one-line.jsonl"
        with open(trace, "w") as out:   # sparse: the 2 GB in the middle take no disk
            out.write('{"timestamp": 0, "input_length": 16, "output_length": 1, "hash_ids": [')
            out.seek(2 * 10**9)
            out.write("1]}\n")
        code, err, peak = simulate("--trace", str(trace), "--format", "mooncake")
        assert code == 2 and peak < CHILD_MB
        assert one_line(err) == f"radixviz: {trace}:1: line too long (over 1,000,000 characters)"


class TestTheClock:
    def test_timestamps_the_clock_cannot_hold_are_refused_at_their_line(self, tmp_path):
        trace = tmp_path / "far.jsonl"
        lines(trace, [{"timestamp": t, "input_length": 16, "output_length": 1, "hash_ids": [i]}
                      for i, t in enumerate((-1e308, 1e308))])
        code, err, _ = simulate("--trace", str(trace), "--block-size", "16")
        assert code == 2
        assert f"{trace}:2: time 1e+308 is too far from the first line's (-1e+308)" in one_line(err)


class TestTheQueueIsBounded:
    def test_arrivals_past_max_waiting_are_dropped_and_counted(self, tmp_path):
        trace = tmp_path / "burst.jsonl"   # every request at once: the queue would hold them all
        lines(trace, [{"timestamp": 0, "input_length": 32, "output_length": 2, "hash_ids": [i % 7, i]}
                      for i in range(20_000)])
        out = tmp_path / "out.json"
        code, err, peak = simulate("--trace", str(trace), "--block-size", "16", "--max-waiting", "300",
                                   "--policy", "fcfs", "--json",
                                   prelude=f"import sys; sys.stdout = open({str(out)!r}, 'w')")
        assert code == 0, err
        report = json.loads(out.read_text())
        assert report["dropped"] == {"requests": 19_700, "max_waiting": 300,
                                     "why": "arrived while the waiting queue was full"}
        assert report["stats"]["finished"] == 300 and peak < CHILD_MB


class TestOutOfMemory:
    def test_running_out_of_memory_is_one_line_naming_what_grew(self, tmp_path):
        # 4,000 prompts of 40,960 tokens, all waiting at once, held as tokens (as blocks they are small)
        trace = tmp_path / "all-at-once.jsonl"
        lines(trace, [{"timestamp": 0, "input_length": 40_960, "output_length": 1, "hash_ids": list(range(80))}
                      for _ in range(4_000)])
        # the cap is set once torch is loaded: 300 MB more than the child holds then
        cap = ("import resource, radixviz.sim.runner\n"
               "size = int(open('/proc/self/status').read().split('VmSize:')[1].split()[0]) * 1024\n"
               "resource.setrlimit(resource.RLIMIT_AS, (size + 300 * 2**20, resource.RLIM_INFINITY))")
        code, err, _ = simulate("--trace", str(trace), "--pool-size", "131072", "--context-len", "131072",
                                "--max-waiting", "100000", "--no-block-units", prelude=cap)
        assert code == 2
        line = one_line(err)
        assert line.startswith(f"radixviz: out of memory replaying {trace}: its requests (up to "
                               "--max-waiting 100,000 waiting")
