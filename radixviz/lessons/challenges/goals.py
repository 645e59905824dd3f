"""A challenge's goal: conditions checked on a session the engine really ran.

One condition a line, ``LEFT CMP RIGHT``, with an optional ``# description`` that the app
and ``radixviz challenge --check`` show beside the verdict::

    evict.freed < evict.asked      # the eviction frees fewer tokens than it asked for
    evictable_size == 0            # nothing in the tree can be evicted
    edges == Hello_ L.A.! there    # the tree's edges, in any order

A side is a whole number, a ``subject``, or (for ``edges``) a list of edge texts. Subjects
are measured after the learner's operations:

- the state: ``nodes`` (the root not counted), ``leaves``, ``total_size``,
  ``evictable_size``, ``free_slots``, ``locks`` (locks held), ``locked_nodes``;
  ``edges``, the edge texts as a multiset; ``namespaces`` (under the root, the keys
  without one counting as one), ``namespaces_hit`` (namespaces in which an insert found
  part of its key), ``inserted`` (every key inserted, as a multiset);
- the learner's LAST operation of a kind, ``OP.FIELD``: ``insert.prefix_len``,
  ``insert.created`` (leaves it hung), ``insert.splits``; ``match.matched``,
  ``match.splits``, ``match.foreign`` (slots the pre-#7 matcher would hand out that belong
  to another context), ``match.full_hit`` (the tokens whose full KV the walk reached: more
  than ``match.matched`` where the unified engine's sliding window or Mamba state cut it);
  ``evict.asked``, ``evict.freed``, ``evict.skipped`` (referenced leaves it passed over),
  ``evict.leaves`` (leaves it deleted); ``lock.delta``, ``unlock.delta``, ``evict.slots``
  (the slots it freed, in order). Prefix ``any`` to ask whether ANY such operation meets
  the condition;
- the host tier (engine hicache): ``host_only`` (nodes whose KV is on the host only),
  ``host_used`` (host slots in use), ``in_flight`` (copies not yet acknowledged);
  ``match.host_hit`` (tokens after the device prefix found on the host only),
  ``evict.demoted`` (nodes that lost their device copy and kept the host's; ``evict.leaves``
  counts those deleted outright), ``load-back.loaded`` and ``load-back.host_hit``;
  with SGLang's 9fbe6800a bugs on (``hicache-fixes off``): ``unreachable`` (nodes the cache
  still holds that the root cannot reach) and ``load-back.foreign`` (loaded slots copied
  from host slots that another node holds: another request's KV).

A subject may name a replay: ``lru:evict.slots`` is what the same operations give when
replayed under LRU (any policy name works), ``page1:`` with pages of one token, ``buggy:`` /
``fixed:`` with that matcher. ``evict.slots != lru:evict.slots`` asks for an eviction that
LRU would have made differently.

Nothing here compares text the learner typed: every value comes from the engine.
"""
from __future__ import annotations

import operator
import shlex
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from radixviz.cache import slot_ranges, tokens_text
from radixviz.cache.evict_policy import POLICY_NAMES
from radixviz.script.narrate import node_namespace

if TYPE_CHECKING:
    from collections.abc import Sequence

    from radixviz.script.frames import OpRecord
    from radixviz.script.session import Session


CMPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}

STATE = ("nodes", "leaves", "total_size", "evictable_size", "free_slots", "locks",
         "locked_nodes", "edges", "namespaces", "namespaces_hit", "inserted", "host_only", "host_used",
         "in_flight", "unreachable")
LISTS = ("edges", "inserted")   # compared as multisets of texts
OP_FIELDS = {
    "insert": ("prefix_len", "created", "splits"),
    "match": ("matched", "splits", "foreign", "host_hit", "full_hit"),
    "evict": ("asked", "freed", "skipped", "leaves", "slots", "demoted"),
    "load-back": ("loaded", "host_hit", "foreign"),
    "lock": ("delta",),
    "unlock": ("delta",),
}
POLICIES = POLICY_NAMES   # a goal may ask for a run under any policy the 2026 engine has
VARIANTS = ("page1", "buggy", "fixed") + POLICIES
VARIANT_WORDS = {"page1": "with pages of 1 token", "buggy": "with the pre-#7 matcher",
                 "fixed": "with the fixed matcher", **{p: f"under {p.upper()}" for p in POLICIES}}
SUBJECT_WORDS = {"nodes": "nodes", "leaves": "leaves", "total_size": "total size",
                 "evictable_size": "evictable size", "free_slots": "free slots",
                 "locks": "locks held", "locked_nodes": "locked nodes", "edges": "edges",
                 "namespaces": "namespaces", "namespaces_hit": "namespaces with a hit",
                 "inserted": "keys inserted",
                 "host_only": "nodes on the host only", "host_used": "host slots in use",
                 "in_flight": "copies in flight", "unreachable": "nodes nobody can reach"}


class GoalError(ValueError):
    """A goal line that cannot be read; ``str`` is the reason."""


@dataclass(frozen=True)
class Condition:
    left: str                  # a subject
    cmp: str
    right: int | str | tuple[str, ...]   # int, a subject name, or a list subject's edge texts
    any_op: bool = False       # "any OP.FIELD": some learner operation of that kind, not the last
    description: str = ""
    line: int = 0

    @property
    def text(self) -> str:
        right = " ".join(self.right) if isinstance(self.right, tuple) else self.right
        return f"{'any ' if self.any_op else ''}{self.left} {self.cmp} {right}"

    @property
    def variants(self) -> tuple:
        """The replays this condition compares against (``lru:``, ``page1:``, ``buggy:``...)."""
        sides = [self.left] + ([self.right] if isinstance(self.right, str) else [])
        return tuple(dict.fromkeys(s.rpartition(":")[0] for s in sides if ":" in s))

    @property
    def words(self) -> str:
        return self.description or self.text


@dataclass(frozen=True)
class Check:
    """One condition's verdict on a session."""
    condition: Condition
    held: bool
    actual: str                # what the engine measured, in words

    def __str__(self) -> str:
        mark = "✓" if self.held else "✗"
        return f"{mark} {self.condition.words}  ({self.actual})"


def parse_goal(text: str, first_line: int = 1) -> tuple[Condition, ...]:
    """Every condition of a ```goal block; GoalError names the line and what is wrong."""
    conditions = []
    for offset, raw in enumerate(text.splitlines()):
        code, _, description = raw.partition("#")
        if not code.strip():
            continue
        try:
            conditions.append(_parse_line(code, description.strip(), first_line + offset))
        except GoalError as exc:
            raise GoalError(f"line {first_line + offset}: {exc}") from None
    if not conditions:
        raise GoalError(f"line {first_line}: empty goal: give at least one condition")
    return tuple(conditions)


def _parse_line(code: str, description: str, line: int) -> Condition:
    try:
        words = shlex.split(code)
    except ValueError as exc:
        raise GoalError(f"bad quoting ({exc})") from None
    any_op = bool(words) and words[0] == "any"
    words = words[1:] if any_op else words
    if len(words) < 3 or words[1] not in CMPS:
        raise GoalError(f"expected SUBJECT CMP VALUE with CMP one of {' '.join(CMPS)}: {code.strip()!r}")
    left, cmp, rest = words[0], words[1], words[2:]
    _check_subject(left)
    if any_op and "." not in left:
        raise GoalError(f"'any' needs an operation field such as evict.freed, not {left!r}")
    if left in LISTS:
        if cmp not in ("==", "!="):
            raise GoalError(f"{left} compare with == or != only")
        return Condition(left, cmp, tuple(rest), any_op, description, line)
    if len(rest) != 1:
        raise GoalError(f"one value after {cmp}, got {' '.join(rest)!r}")
    word = rest[0]
    right: int | str = word
    if word.lstrip("-").isdigit():
        if len(word) > 18:     # every measured value fits in 64 bits (and Python reads at most 4,300 digits)
            raise GoalError(f"number too large ({len(word):,} digits; at most 18)")
        right = int(word)
    else:
        _check_subject(word)
    return Condition(left, cmp, right, any_op, description, line)


def _check_subject(name: str) -> None:
    variant, _, name = name.rpartition(":")
    if variant and variant not in VARIANTS:
        raise GoalError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    if name in STATE:
        return
    op, _, field = name.partition(".")
    if field in OP_FIELDS.get(op, ()):
        return
    known = list(STATE) + [f"{o}.{f}" for o, fs in OP_FIELDS.items() for f in fs]
    raise GoalError(f"unknown subject {name!r} (known: {', '.join(known)})")


# ---------------------------------------------------------------- measuring

def op_measures(session: Session, record: OpRecord) -> dict:
    """What the engine did in one operation, by the names goals use."""
    kinds = Counter(frame.kind for frame in session.frames.kept(record.frame_range))
    result, name = record.result, record.op.name
    if name == "insert":
        return {"prefix_len": result["prefix_len"], "created": kinds["create"], "splits": kinds["split"]}
    if name == "match":
        disagreement = result.get("disagreement") or {}
        return {"matched": result["matched"], "splits": kinds["split"],
                "foreign": len(disagreement.get("wrong_slots", ())),
                "host_hit": result.get("host_hit_length", 0),
                # the unified engine's full-KV reach, which another component may cut short;
                # an engine of one kind of memory reuses all it reaches
                "full_hit": result.get("full_hit", result["matched"])}
    if name == "evict":
        return {"asked": record.op.count, "freed": len(result["freed_slots"]),
                "skipped": kinds["skip"], "leaves": kinds["delete"],
                "slots": tuple(result["freed_slots"]), "demoted": kinds["demote"]}
    if name == "load-back":
        return {"loaded": result["loaded"], "host_hit": result["host_hit_length"],
                "foreign": _foreign_loaded(session, record)}
    if name in ("lock", "unlock"):
        return {"delta": result["delta"]}
    return {}


def state_measures(session: Session) -> dict:
    """The session's tree and pool now, by the names goals use."""
    tree = session.cache.snapshot()
    nodes = [n for n in tree.root.walk() if n.id != tree.root.id]
    inserts = [r for r in session.records if r.op.name == "insert"]
    return {
        "nodes": len(nodes),
        "leaves": sum(1 for n in nodes if not n.children),
        "total_size": session.cache.total_size(),
        "evictable_size": session.cache.evictable_size(),
        "free_slots": session.pool.available_size(),
        "locks": sum(len(held) for held in session.locks.values()),
        "locked_nodes": sum(1 for n in nodes if n.ref > 0),
        "edges": tuple(sorted(tokens_text(n.key) for n in nodes)),
        # namespaces under the root (the keys without one count as one), namespaces where an
        # insert found part of its key, and every key inserted (a challenge's requests)
        "namespaces": len({node_namespace(tree, n) for n in tree.root.children}),
        "namespaces_hit": len({r.op.ns for r in inserts if r.result.get("prefix_len", 0) > 0}),
        "inserted": tuple(sorted(tokens_text(r.op.key) for r in inserts)),
        # a second tier's measures (host_only, host_used, in_flight, unreachable): the
        # engine's own (script/ops/), 0 for an engine with one tier
        **session.engine_ops.tier_measures(tree, nodes),
    }


def _foreign_loaded(session: Session, record: OpRecord) -> int:
    """Slots a load-back copied from host slots that, when it ended, another node held: the
    KV it handed out is that node's (only SGLang's 9fbe6800a load-back does this)."""
    frames = session.frames.kept(record.frame_range)
    read = [(f.nodes[0], slot) for f in frames if f.label == "load.assign" for slot in f.data["host_slots"]]
    if not read:
        return 0
    owners = frames[-1].pool.holders(1)   # the host pool: the engine's second (contract.py)
    return sum(1 for node, slot in read if owners[slot] is not None and owners[slot].id != node)


def evaluate(conditions: Sequence[Condition], session: Session, learner_records: Sequence[OpRecord]) -> list[Check]:
    """Each condition's verdict after ``learner_records`` ran on ``session`` (the last records)."""
    start = len(session.records) - len(learner_records)
    views = {"": _measure(session, start)}
    checks = []
    for condition in conditions:
        for variant in condition.variants:
            if variant not in views:
                views[variant] = _measure_variant(session, variant, start)
        checks.append(_evaluate(condition, views))
    return checks


def run_values(session: Session, learner_records: Sequence[OpRecord]) -> dict:
    """Every subject a debrief may name, measured on the learner's run: the state after it,
    and each ``OP.FIELD`` of the learner's last operation of that kind (absent if none)."""
    state, per_op = _measure(session, len(session.records) - len(learner_records))
    values = dict(state)
    for name, fields in per_op:
        values.update({f"{name}.{field}": value for field, value in fields.items()})
    return values


def shown(value: object) -> str:
    """A measured value as the learner reads it: slots as ranges, edges space-separated."""
    if isinstance(value, tuple) and value and isinstance(value[0], str):
        return " ".join(value)
    return _shown(value)


def check_subject(name: str) -> None:
    """GoalError unless ``name`` is a subject goals (and debriefs) may use."""
    _check_subject(name)


def _measure(session: Session, start: int) -> tuple[dict, list]:
    """(state measures, [(op name, op measures)] for the records from ``start`` on)."""
    return state_measures(session), [(r.op.name, op_measures(session, r)) for r in session.records[start:]]


def _measure_variant(session: Session, variant: str, start: int):
    """The same operations replayed with one setting changed, measured; an error line when
    the replay is refused (a str, reported by the conditions that need it)."""
    from radixviz.script import ScriptError, Session   # loads torch: only when grading

    settings = dict(session.initial)
    buggy = session.initial_buggy
    ops = [r.op for r in session.records]
    if variant in ("buggy", "fixed"):
        buggy = variant == "buggy"
        ops = [replace(op, mode=variant) if op.name == "matcher" else op for op in ops]
    elif variant == "page1":
        settings["page_size"] = 1
        ops = [replace(op, count=1) if op.name == "page-size" else op for op in ops]
    else:
        settings["eviction_policy"] = variant
        ops = [replace(op, mode=variant) if op.name == "eviction" else op for op in ops]
    fresh = Session(session.pool_size, buggy, session.device, **settings)
    try:
        for op in ops:
            fresh.apply(op)
    except ScriptError as exc:
        return f"replayed with {VARIANT_WORDS.get(variant, variant)}, {exc.message}"
    return _measure(fresh, start)


def _evaluate(condition: Condition, views: dict) -> Check:
    for variant in condition.variants:
        if isinstance(views[variant], str):
            return Check(condition, False, views[variant])
    sides = [condition.left] + ([condition.right] if isinstance(condition.right, str) else [])
    op = next((_bare(s).partition(".")[0] for s in sides if "." in s), None)
    _state, per_op = views[""]
    if op is None:
        return _compare(condition, lambda subject: _value(views, subject, None))
    where = [i for i, (name, _) in enumerate(per_op) if name == op]
    if not where:
        return Check(condition, False, f"no {op} yet")
    if condition.any_op:
        for index in where:
            check = _compare(condition, lambda subject, index=index: _value(views, subject, index))
            if check.held:
                return check
        return Check(condition, False, f"none of your {len(where)} {op} operations does")
    return _compare(condition, lambda subject: _value(views, subject, where[-1]))


def _bare(subject: str) -> str:
    return subject.partition(":")[2] if ":" in subject else subject


def _value(views: dict, subject: str, index: int | None):
    variant, _, name = subject.rpartition(":")
    state, per_op = views[variant]
    if "." in name:
        return per_op[index][1][name.partition(".")[2]] if index is not None else None
    return state[name]


def _compare(condition: Condition, value_of) -> Check:
    left = value_of(condition.left)
    if condition.left in LISTS:
        assert isinstance(condition.right, tuple)   # _parse_condition gives a list its edge texts
        wanted = tuple(sorted(condition.right))
        held = CMPS[condition.cmp](left, wanted)
        return Check(condition, held, f"{SUBJECT_WORDS[condition.left]} are {' '.join(left) or 'none'}")
    right = condition.right if isinstance(condition.right, int) else value_of(condition.right)
    held = CMPS[condition.cmp](left, right)
    actual = f"{_name(condition.left)} {_shown(left)}"
    if isinstance(condition.right, str):   # a subject (a list subject returned above)
        actual += f", {_name(condition.right)} {_shown(right)}"
    return Check(condition, held, actual)


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        return slot_ranges(list(value)) if value else "none"
    return str(value)


def _name(subject: str) -> str:
    variant, _, subject = subject.rpartition(":")
    if variant:
        return f"{_name(subject)} {VARIANT_WORDS.get(variant, 'under ' + variant)}"
    if subject in SUBJECT_WORDS:
        return SUBJECT_WORDS[subject]
    op, _, field = subject.partition(".")
    return f"{op} {field.replace('_', ' ')}"
