"""Long simulations: a trace holds at most as many requests as ``--requests`` allows, and a
long run says on the terminal how far it is."""
import io

import pytest

from radixviz.cli import main
from radixviz.commands.simulate_progress import progress_for
from radixviz.sim.defaults import MAX_REQUESTS


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_trace_over_the_requests_cap_is_refused_at_its_line(tmp_path, capsys):
    trace = tmp_path / "big.jsonl"
    trace.write_text('{"prompt": [1, 2], "output_len": 1}\n' * (MAX_REQUESTS + 1))
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--trace", str(trace)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and f"{trace}:{MAX_REQUESTS + 1}: more than 100,000 requests" in err


def test_a_long_run_shows_its_progress_on_a_terminal(monkeypatch, capsys):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr("radixviz.commands.simulate_progress.AFTER", 0.0)   # a long run, in short
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--workload", "no-sharing", "--requests", "2000", "--pool-size", "65536"])
    shown = terminal.getvalue()
    assert info.value.code == 0
    assert "simulating lpm:" in shown and "of 2,000 requests finished" in shown
    assert "requests/s" in shown and " MB" in shown       # the rate and the memory
    assert "simulating" not in capsys.readouterr().out


def test_no_progress_when_stderr_is_not_a_terminal_and_none_in_a_runs_first_seconds():
    assert progress_for("lpm", 2000, io.StringIO()) is None
    terminal = Terminal()
    progress = progress_for("lpm", 2000, terminal)
    assert progress is not None
    progress(10, 2000)                                    # the run is younger than AFTER
    progress.done()
    assert terminal.getvalue() == ""
