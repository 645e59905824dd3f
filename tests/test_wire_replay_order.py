"""A replay answered before the live stream's next gap: frames fed to the core in the order a
busy machine delivered them (no sockets, so the order is forced, not hoped for).

The publisher answers a replay request with what its buffer holds *when it answers*. Under
load the watcher seen in ``test_publish_and_watch_as_two_processes_agree_batch_for_batch``
asked for seq 1, the publisher answered [1, 2, end] right after publishing seq 2, then
published 3, 4, (5 dropped) and 6, and the watcher read those live ones before the reply
(its recording: pub 0, 2, 3, 4, 6, 7, 8, 9, then replay 1, 2, -1). Seq 5 did not exist
when the reply was made, so the reply's end says nothing about it: the watcher must ask
again, not call it lost.
"""
from __future__ import annotations

from radixviz.wire.core import ReplayRequest, WatchCore
from radixviz.wire.messages import END_SEQ, EventBatch, encode_batch, encode_message, encode_seq

from test_wire_gaps import chain

BATCHES = chain(10)


def live(core: WatchCore, seq: int):
    return core.live(0, encode_message(b"kv-events", seq, EventBatch(0.0, BATCHES[seq], 0)))


def reply(core: WatchCore, *seqs: int):
    """The replay socket's answer: each seq's batch, then the end; what they applied (a reply
    in order is applied as it comes), and what the end asked for."""
    applied = []
    for seq in seqs:
        done, requests = core.replayed(0, [b"", encode_seq(seq), encode_batch(EventBatch(0.0, BATCHES[seq], 0))])
        assert requests == []
        applied += done
    done, requests = core.replayed(0, [b"", encode_seq(END_SEQ), b""])
    return applied + done, requests


def test_a_gap_after_what_the_reply_covered_is_asked_for_again():
    core = WatchCore(1, replay=True)
    assert live(core, 0)[1] == []
    assert live(core, 2) == ([], [ReplayRequest(0, 1)])
    for seq in (3, 4, 6, 7, 8, 9):        # held while the replay is under way
        assert live(core, seq) == ([], [])
    applied, requests = reply(core, 1, 2)  # answered when the publisher had only up to seq 2
    assert [a.seq for a in applied] == [1, 2, 3, 4]
    assert requests == [ReplayRequest(0, 5)]
    applied, requests = reply(core, 5, 6, 7, 8, 9)
    assert [a.seq for a in applied] == [5, 6, 7, 8, 9] and requests == []
    problems = core.problems
    assert (problems.gaps, problems.recovered, problems.unfilled, problems.duplicates) == (2, 2, 0, 0)
    assert [b.hash for b in core.tree(0).sorted_blocks()] == list(range(1, 11))
    assert any("seq 5 missing: asking replay" in line for line in core.log)


def test_a_gap_the_reply_skipped_is_lost_without_asking_again():
    # the reply starts at 2: the buffer no longer had seq 1, and asking again cannot bring it
    core = WatchCore(1, replay=True)
    live(core, 0)
    assert live(core, 3) == ([], [ReplayRequest(0, 1)])
    applied, requests = reply(core, 2, 3)
    assert [a.seq for a in applied] == [2, 3] and requests == []
    assert (core.problems.unfilled, core.problems.recovered) == (1, 1)


def test_a_replay_given_up_on_does_not_ask_again():
    # no end came (a publisher gone, say): asking once more would wait as long again for nothing
    core = WatchCore(1, replay=True)
    live(core, 0)
    live(core, 2)
    live(core, 4)
    applied, requests = core.finish_replay(0, "gave no end after 5 s")
    assert [a.seq for a in applied] == [2, 4] and requests == []
    assert core.problems.unfilled == 2


def test_each_new_ask_starts_later_so_asking_again_ends():
    # replies that each stop short of the next gap: every ask starts past the last one
    core = WatchCore(1, replay=True)
    live(core, 0)
    live(core, 2)
    for seq in (4, 6, 8):
        live(core, seq)
    starts = []
    answer = reply(core, 1)
    while answer[1]:
        start = answer[1][0].start
        assert not starts or start > starts[-1]
        starts.append(start)
        answer = reply(core, start)
    assert starts == [3, 5, 7]
    assert core.problems.unfilled == 0 and core.streams[0].expected == 9
