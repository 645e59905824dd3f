"""What the engines ask of the interpreter per cache call: a speed guard that reads no clock.

bench/core.py's ratios move by half from one run to the next on a shared machine (the load
alone moved the 2024 engine's from 2.5x to 5.1x in one afternoon), so a drop of a fifth cannot
be told from noise by timing. The work itself is exact: this drives bench/workload.py's seeded
workload through an engine, the way bench/core.py does, and counts inside each cache call

  lines  lines of radixviz's own source that ran
  calls  calls those lines made: Python functions, builtins, torch's methods (``len`` of a
         tensor is two: the builtin and torch's ``Tensor.__len__``)

and it names any class attribute a cache call wrote (``class_state``), which costs no line.

The eviction callback's pool work is left out, as bench/core.py leaves out its time. The same
code gives the same counts on every run and machine; only a change to the engines or the
shared helpers they call (keys, values, checks, snapshot, trace) moves them.

    python bench/op_counts.py            # the counts per request, by operation
    python bench/op_counts.py --check    # exit 1 if an engine does more work than op_budget.json allows
    python bench/op_counts.py --record   # write the counts as the new budget (after a change that
                                         # makes an engine faster, or one worth its cost)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from workload import QUICK, make_workload  # noqa: E402

BUDGET_FILE = Path(__file__).resolve().parent / "op_budget.json"
# a count may rise this much over its budget before --check fails: a line or two added to a
# helper passes, an extra walk or call per node does not (docs/benchmarks.md). Another Python
# counts a few lines and calls differently (3.12 inlines comprehensions), hence the wider margin
TOLERANCE = 0.03
OTHER_PYTHON_TOLERANCE = 0.10
REQUESTS = 300       # bench's quick workload: splits, evictions and locked paths all occur
ENGINES = ("2024", "2026", "2026_page16")
_PACKAGE = str(Path(__import__("radixviz").__file__).resolve().parent)


class Counter:
    """Counts lines and calls of radixviz's code while ``op`` names the cache call running."""

    def __init__(self) -> None:
        self.counts: dict = {}   # op -> [calls of the op, lines, calls]
        self.op: list | None = None
        self.paused = 0          # inside the eviction callback: the pool's work is not counted
        self._ours: dict = {}    # code object -> is it radixviz's

    def ours(self, code) -> bool:
        known = self._ours.get(code)
        if known is None:
            known = self._ours[code] = code.co_filename.startswith(_PACKAGE)
        return known

    def _profile(self, frame, event, arg) -> None:
        if self.paused or self.op is None:
            return
        if event == "c_call":
            caller = frame
        elif event == "call":
            caller = frame.f_back
        else:
            return
        if caller is not None and self.ours(caller.f_code):
            self.op[2] += 1

    def _trace(self, frame, event, arg):
        # the global trace function sees each new frame: follow radixviz's frames line by line
        return self._lines if self.ours(frame.f_code) else None

    def _lines(self, frame, event, arg):
        if event == "line" and not self.paused and self.op is not None:
            self.op[1] += 1
        return self._lines

    def call(self, op: str, fn, *args):
        """``fn(*args)`` with its work counted under ``op``."""
        self.op = self.counts.setdefault(op, [0, 0, 0])
        self.op[0] += 1
        sys.setprofile(self._profile)
        sys.settrace(self._trace)
        try:
            return fn(*args)
        finally:
            sys.settrace(None)
            sys.setprofile(None)
            self.op = None


def make_cache(engine: str):
    from radixviz.cache import ModernRadixCache, RadixCache

    if engine == "2024":
        return RadixCache()
    return ModernRadixCache(page_size=16 if engine.endswith("page16") else 1)


def drive(engine: str, workload, pool_size: int) -> dict:
    """bench/core.py's request loop (modern_core.py's for 2026: whole pages), counted."""
    from radixviz.cache import TokenToKVPool

    cache = make_cache(engine)
    page = getattr(cache, "page_size", 1)
    lock, unlock = ("inc_lock_ref", "dec_lock_ref") if engine != "2024" else ("inc_ref_counter", "dec_ref_counter")
    pool = TokenToKVPool(pool_size, device="cpu")
    counter = Counter()

    def free(slots):
        counter.paused += 1
        try:
            return pool.free(slots)
        finally:
            counter.paused -= 1

    classes = None
    for prompt, output in workload:
        if classes is None and counter.counts:   # after the first request: lazy set-ups are done
            classes = class_state()
        prefix, last = counter.call("match_prefix", cache.match_prefix, prompt)
        counter.call("lock", getattr(cache, lock), last)
        need = len(prompt) + len(output) - len(prefix)
        short = need - pool.available_size()
        if short > 0:
            counter.call("evict", cache.evict, short, free)
        new = pool.alloc(need)
        if new is not None:
            pool.add_refs(prefix)
            sequence, slots = prompt + output, torch.cat((prefix, new))
            whole = len(sequence) - len(sequence) % page
            held = counter.call("insert", cache.insert, sequence[:whole], slots[:whole])
            pool.free(slots[:held])
            if whole < len(sequence):
                pool.free(slots[whole:])
        counter.call("unlock", getattr(cache, unlock), last)
    ops = {op: dict(times=n, lines=lines, calls=calls) for op, (n, lines, calls) in sorted(counter.counts.items())}
    total = {what: sum(o[what] for o in ops.values()) for what in ("lines", "calls")}
    written = sorted(name for name, value in class_state().items() if classes.get(name, value) is not value)
    return dict(requests=len(workload), total=total, ops=ops, class_writes=written)


def class_state() -> dict:
    """``Class.attribute`` -> its value, for every class radixviz's loaded modules define.

    A cache call must not write to a class (SGLang's ``TreeNode.counter += 1`` does, per node):
    Python then drops the specialized attribute reads of the class's instances, which cost the
    2026 engine 7 % more instructions without one more line or call to count."""
    out = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("radixviz"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name:
                out.update((f"{name}.{value.__qualname__}.{attr}", held) for attr, held in vars(value).items())
    return out


def measure(engines=ENGINES, requests: int = REQUESTS) -> dict:
    """Counts for each engine on the seeded quick workload (seed 0)."""
    torch.set_num_threads(1)
    params = dict(QUICK, requests=requests)
    workload = make_workload(0, **params)
    return {engine: drive(engine, workload, params["pool"]) for engine in engines}


def python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def over_budget(measured: dict, budget: dict) -> list:
    """One line per count (engine, operation, lines or calls) that rose past its budget by more
    than the tolerance; empty when every count is within."""
    same_python = budget.get("python") == python_version()
    tolerance = TOLERANCE if same_python else OTHER_PYTHON_TOLERANCE
    out = []
    for engine, run in measured.items():
        out.extend(f"{engine}: a cache call wrote the class attribute {name}" for name in run["class_writes"])
        allowed = budget["engines"].get(engine)
        if allowed is None or allowed["requests"] != run["requests"]:
            out.append(f"{engine}: {BUDGET_FILE.name} has no budget for {run['requests']} requests")
            continue
        for op, counts in run["ops"].items():
            for what in ("lines", "calls"):
                have, limit = counts[what], allowed["ops"].get(op, {}).get(what, 0)
                if have > limit * (1 + tolerance):
                    rise = f"+{have / limit - 1:.1%}" if limit else "new"
                    out.append(f"{engine} {op}: {have:,} {what} against a budget of {limit:,} ({rise}, "
                               f"{run['requests']} requests, Python {python_version()})")
    return out


def per_request(measured: dict) -> dict:
    """The counts per request, by operation and in total: the figures a person compares."""
    def share(counts: dict, requests: int) -> dict:
        return {what: round(counts[what] / requests, 1) for what in ("lines", "calls")}

    return {engine: {**{op: share(o, run["requests"]) for op, o in run["ops"].items()},
                     "total": share(run["total"], run["requests"])}
            for engine, run in measured.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help=f"exit 1 if a count exceeds {BUDGET_FILE.name}")
    mode.add_argument("--record", action="store_true", help=f"write the counts to {BUDGET_FILE.name}")
    args = parser.parse_args(argv)
    measured = measure()
    if args.record:
        budget = dict(python=python_version(), engines=measured)
        BUDGET_FILE.write_text(json.dumps(budget, indent=1) + "\n", encoding="utf-8")
    report: dict = dict(per_request=per_request(measured))
    if args.check:
        report["over_budget"] = over_budget(measured, json.loads(BUDGET_FILE.read_text(encoding="utf-8")))
    print(json.dumps(report, indent=2))
    return 1 if report.get("over_budget") else 0


if __name__ == "__main__":
    sys.exit(main())
