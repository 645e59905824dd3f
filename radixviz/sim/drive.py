"""Step a Scheduler over traffic that arrives in time, and watch what each request got.

``drive`` feeds ``(arrival_pass, RequestSpec)`` pairs to the queue when the pass clock
reaches their arrival (``None``: at once, today's default of everything queued at pass
0), steps the loop, and when the loop is idle jumps the clock to the next arrival. It
pulls one pair ahead from the iterator, so a trace read lazily stays lazy: memory is the
window of live requests, not the file.

``RunObserver`` wraps the scheduler's ``submit`` and ``admit`` (instance attributes, so
the loop's own code is untouched) to learn, for each request, the pass it entered the
queue and the pass of its first prefill, and its prompt for the optimum (optimum.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from radixviz.collector import fewer_collections

from .latency import LatencyTally
from .optimum import PromptTree

if TYPE_CHECKING:
    from collections.abc import Iterable
    from .request import RequestSpec

# a long stream keeps at most this many events (refusals, follow-ups, ...) and counts the rest
MAX_EVENTS = 10_000
# young collections between two full ones while a long run is driven (the collector's
# third threshold; Python's default is 10)
FULL_COLLECTION_EVERY = 1000
LONG_RUN = 5_000    # requests: a run this long (or of unknown length) makes full collections rare


@contextmanager
def rare_full_collections(long: bool = True) -> Iterator[None]:
    """For a ``long`` run, one full collection now, then full collections a hundred times
    rarer while the block runs; as before after it. A short run keeps the collector as it is.

    A run makes few cycles but promotes many short-lived objects past the young
    generations, which triggers full collections; each walked every object the process
    holds (torch's, the trace's block cache) to free next to nothing (docs/benchmarks.md
    measures it). What an earlier run left is freed first: a finished run's scheduler,
    tree and pool are cycles, which only a full collection frees. The young generations
    run as before."""
    if not long:
        yield
        return
    gc.collect()
    with fewer_collections(full=FULL_COLLECTION_EVERY):
        yield


class RunObserver:
    def __init__(self, sched, optimum: bool = True):
        """``optimum=False`` skips the prompts' tree, the one thing here that grows with the
        trace's distinct content rather than the live window (a long stream's choice)."""
        self.sched = sched
        self.offset = 0                  # passes the clock jumped while the loop was idle
        self.in_step = False
        self.tree = PromptTree(getattr(sched.engine, "page_size", 1)) if optimum else None
        self.latency = LatencyTally()
        self.work = 0                    # tokens the loop has computed: the second clock
        self.entered: dict = {}          # rid -> (pass, work) it entered the queue, until first prefill
        self._pending: dict = {}         # rid -> the request, admitted in the pass under way
        self._running: dict = {}         # rid -> request, admitted and not finished (live window)
        self.dropped_events = 0
        self.timed = False               # a request arrived at a pass of its own (drive sets it)
        self.dropped = 0                 # arrivals dropped because the waiting queue was full
        self.max_waiting: int | None = None
        submit, admit = sched.submit, sched.admit

        def watched_submit(specs: Iterable[RequestSpec]):
            queued = submit(specs)
            # a request queued during a pass (a follow-up) can be scheduled from the next one
            when = (self.clock() + (1 if self.in_step else 0), self.work)
            for req in queued:
                self.entered.setdefault(req.rid, when)
            return queued

        def watched_admit(ordered, last=()):
            admitted, decisions = admit(ordered, last)
            for req in admitted:
                if req.rid in self.entered:   # its first prefill (a retracted one comes back)
                    self._pending[req.rid] = req
            return admitted, decisions

        sched.submit, sched.admit = watched_submit, watched_admit

    def drop(self) -> None:
        """An arrival the full queue turned away (drive's ``max_waiting``)."""
        self.dropped += 1

    def clock(self) -> int:
        return self.sched._pass + self.offset

    def after(self, record) -> None:
        """Note the first prefills of the pass just run (a deferred admission is not one)."""
        self.work += record.computed_tokens
        for rid in record.admitted:
            req = self._pending.get(rid)
            if req is None or rid not in self.entered:
                continue
            passes, work = self.entered.pop(rid)
            self.latency.add(record.index + self.offset - passes, self.work - work, req.prefix_len)
            if self.tree is not None:
                self.tree.add(req.input_ids, req.max_new_tokens)
        for rid, req in self._pending.items():
            self._running[rid] = req
        self._pending.clear()
        for rid in record.finished:
            req = self._running.pop(rid, None)
            if req is not None and req.output_ids and self.tree is not None:   # the newest token has no KV
                self.tree.add_decoded(req.input_ids + tuple(req.output_ids[:-1]))
        events = self.sched.events
        if len(events) > MAX_EVENTS:
            self.dropped_events += len(events) - MAX_EVENTS
            del events[MAX_EVENTS:]

    def report(self, hit_rate: float) -> dict:
        out: dict = {"latency": self.latency.report()}
        if self.tree is not None:
            out["optimum"] = self.tree.report(self.sched.pool.size, self.sched.stats.refused, hit_rate,
                                              self.timed)
        if self.dropped_events:
            out["events_dropped"] = self.dropped_events
        if self.dropped:
            out["dropped"] = {"requests": self.dropped, "max_waiting": self.max_waiting,
                              "why": "arrived while the waiting queue was full"}
        return out


def drive(sched, arrivals: Iterable, observer: RunObserver, progress: Callable | None = None,
          total: int | None = None, keep_outputs: bool = True, max_waiting: int | None = None) -> None:
    """Run ``sched`` to the end over ``arrivals`` (``(pass or None, RequestSpec)``, sorted).

    ``keep_outputs=False`` forgets each finished request's generated tokens (a long stream:
    they are the one thing the scheduler keeps per request). ``max_waiting`` bounds the
    queue, and so the memory, whatever the trace: a timed arrival that finds it full is
    dropped and counted (``observer.dropped``), as a server sheds load; an untimed one
    stays in the file until there is room (it has no time to miss)."""
    with rare_full_collections(total is None or total >= LONG_RUN):
        _drive(sched, arrivals, observer, progress, total, keep_outputs, max_waiting)


def _drive(sched, arrivals: Iterable, observer: RunObserver, progress: Callable | None, total: int | None,
           keep_outputs: bool, max_waiting: int | None) -> None:
    pending = iter(arrivals)
    upcoming = next(pending, None)
    while True:
        clock = observer.clock()
        while upcoming is not None and (upcoming[0] is None or upcoming[0] <= clock):
            observer.timed = observer.timed or (upcoming[0] is not None and upcoming[0] > 0)
            if max_waiting is not None and len(sched.waiting) >= max_waiting:
                if upcoming[0] is None:
                    break       # read on when the queue has room
                observer.drop()
            else:
                sched.submit(upcoming[1])
            upcoming = next(pending, None)
        observer.in_step = True
        record = sched.step()
        observer.in_step = False
        if record is None:
            if upcoming is None:
                return
            observer.offset += upcoming[0] - clock   # idle until the next request arrives
            continue
        observer.after(record)
        if not keep_outputs:
            sched.outputs.clear()
        if progress is not None:
            progress(sched.stats.finished, total if total is not None else sched.stats.requests)
