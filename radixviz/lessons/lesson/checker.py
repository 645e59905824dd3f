"""``--check``: play a lesson on a real Session and hold each prediction to the engine."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial, singledispatch
from typing import TYPE_CHECKING, Any

from radixviz.cache.engines import engine_names, engine_spec
from radixviz.script.parser import ScriptError

from .block_checks import NAMES as BLOCK_CHECKS, block_value, is_block_check
from .model import Lesson, LessonError, Narrative, Predict
from .pointers import pointer_problem
from ..scenario import edge_text

if TYPE_CHECKING:
    from collections.abc import Sequence
    from ...cache.snapshot import TreeSnapshot
    from ...script.frames import OpRecord, PoolSnapshot
    from ...script.session import Session


def _tree_count(session: Session, name: str) -> object:
    frame = session.live_frame()
    return tree_counts(frame.tree, frame.pool)[name]


# what each name a lesson's `check` may predict reads from a Session
STATE_CHECKS: dict[str, Callable[[Any], object]] = {
    "evictable_size": lambda s: s.engine.evictable_size(),
    "total_size": lambda s: s.engine.total_size(),
    "free_slots": lambda s: s.pool.available_size(),
    "nodes": lambda s: len(s.engine.snapshot().nodes) - 1,   # the root is not counted
    # tokens on locked nodes, where the engine counts them apart (0 elsewhere)
    "protected_size": lambda s: s.engine.protected_size(),
    # what the tree's type holds (tree_counts): its namespaces, its host tier; with SGLang's
    # 9fbe6800a write_back bugs (hicache-fixes off), host-eviction candidates and host slots in
    # use that no node the root reaches holds (0 where the cache has no host tier)
    **{name: partial(_tree_count, name=name)
       for name in ("namespaces", "host_used", "in_flight", "host_only_nodes", "double_freed",
                    "host_leaves", "stray_host_slots")},
}


# what a lesson may predict of one declared component (the contract's ``held`` and ``parts``,
# and its pool's picture): ``protected.swa``, ``evictable.swa``, ``tombstones.swa`` (nodes that
# lost that component's data and stayed), ``holders.mamba`` (nodes holding that component's
# data: Mamba states), ``used.mamba`` (its pool's slots in use, the tree's and the requests')
COMPONENT_CHECKS = ("evictable", "protected", "tombstones", "holders", "used")


def _component_value(check: str, session: Session) -> int:
    """``KIND.COMPONENT`` (COMPONENT_CHECKS) read from the live tree; KeyError for another
    name, or a component the engine does not declare."""
    kind, _, name = check.partition(".")
    if kind not in COMPONENT_CHECKS or not name:
        raise KeyError(check)
    frame = session.live_frame()
    tree = frame.tree
    names = [component.name for component in tree.components]
    if name not in names:
        raise KeyError(check)
    at = names.index(name)
    if kind == "used":
        component = tree.components[at]
        if at and component not in frame.pool.pooled:
            raise KeyError(check)
        index = frame.pool.pooled.index(component) + 1 if at else 0
        return sum(1 for count in frame.pool.counts(index) if count)
    if kind in ("evictable", "protected"):
        return getattr(tree.held[at], kind)
    parts = [node.parts[at] for node in tree.root.walk() if node is not tree.root]
    if kind == "tombstones":
        return sum(1 for part in parts if part.tombstone)
    return sum(1 for part in parts if not part.tombstone)


def _frames_of(record: OpRecord, session: Session, kind: str) -> list:
    return [f for f in session.frames[record.first_frame:record.last_frame + 1] if f.kind == kind]


def _loaded_wrong_kv(record: OpRecord, session: Session) -> int:
    """How many slots the operation loaded back from the host hold K/V computed for other
    tokens: a host slot holds what the last write into it copied (the tokens from the root
    to that position), and a loaded slot should hold the key's own."""
    frames = session.frames
    if frames.first > 0:
        raise KeyError("loaded_wrong_kv: the history before this operation was dropped for memory")
    holds: dict[int, tuple] = {}    # host slot -> the tokens its K/V were computed for
    key, first = tuple(record.op.key or ()), record.result.get("matched", 0)
    wrong = loaded = 0
    for at, frame in enumerate(frames[:record.last_frame + 1]):
        slots = frame.data.get("host_slots")
        if not slots or not frame.data.get("issued"):
            continue
        if frame.kind == "write":
            tree = frame.tree
            path = [tree.nodes[i] for i in tree.path_to(frame.nodes[0])]
            written = tuple(t for node in path for t in node.key)
            start = len(written) - len(path[-1].key)
            for offset, slot in enumerate(slots):
                holds[slot] = written[:start + offset + 1]
        elif frame.kind == "load" and at >= record.first_frame:
            for slot in slots:
                loaded += 1
                wrong += holds.get(slot) != key[:first + loaded]
    return wrong


# what each name a lesson's `check` may predict reads from the first operation's frames
RECORD_CHECKS: dict[str, Callable[[Any, Any], object]] = {
    # the edge text of each leaf the operation deleted, in order (either tier)
    "evicted_leaves": lambda r, s: [edge_text(f.data["key"]) for f in _frames_of(r, s, "delete")],
    # the leaves host eviction deleted, in order ("none" when it deleted none)
    "host_deleted": lambda r, s: [edge_text(f.data["key"]) for f in _frames_of(r, s, "delete")
                                  if f.data.get("tier") == "host"] or "none",
    # nodes that lost their device copy, host copy kept, in order
    "demoted_leaves": lambda r, s: [edge_text(f.tree.nodes[f.nodes[0]].key) for f in _frames_of(r, s, "demote")],
    "loaded_wrong_kv": _loaded_wrong_kv,
}


@singledispatch
def tree_counts(tree: TreeSnapshot, pool: PoolSnapshot | None = None) -> dict:
    """The counts a lesson may predict that depend on the tree's type (and the step's
    ``pool``): the subtrees of different namespaces under the root (1 where keys carry none)
    and the host tier's host slots in use, copies not yet acknowledged, host-only nodes,
    host-eviction candidates and stray host slots (0 without a host tier)."""
    return {"namespaces": 1, "host_used": 0, "in_flight": 0, "host_only_nodes": 0, "double_freed": 0,
            "host_leaves": 0, "stray_host_slots": 0}


def _register_tree_counts() -> None:
    """The counts of the trees an engine's wing knows (its ``checks`` module, named by its
    registry line, registers them here): imported when a lesson is first checked, its session
    (and torch) already loaded; every engine's, since a lesson may switch engines."""
    for name in engine_names():
        engine_spec(name).part("checks")


def check_lesson(lesson: Lesson, device: str = "cpu") -> list[LessonError]:
    """Every problem in ``lesson``: refused operations, broken invariants, predictions
    without a check, and wrong ones (each judged by ``hold_to_engine``, as the app and
    ``lessons --read`` judge them)."""
    # the engine and its session load torch: only once a lesson is checked
    from radixviz.cache.invariants import InvariantError
    from radixviz.script.session import Session

    session = Session(device=device)
    problems: list[LessonError] = []
    pending: list[Predict] = []
    name = str(lesson.path)
    for block in lesson.blocks:
        if isinstance(block, Predict):
            pending.append(block)
            continue
        if isinstance(block, Narrative):   # shown beside the frame of the operations before
            problems.extend(LessonError(name, pointer.line, problem) for pointer in block.pointers
                            if (problem := pointer_problem(pointer, session.live_frame())))
            continue
        records, stop = [], False
        for op in block.ops:
            try:
                records.append(session.apply(op))
                if not session.knowingly_broken:   # a #4 section breaks them on purpose
                    session.check_invariants()  # the 2024 or the 2026 engine's checks
            except ScriptError as exc:
                problems.append(LessonError(name, exc.line, f"operation refused: {exc.message}"))
                stop = True        # later operations depend on this one's state
                break
            except InvariantError as exc:
                problems.append(LessonError(name, op.line, f"invariant broken after {op.text!r}: {exc}"))
                stop = True
                break
        if records:
            for predict in pending:
                held = hold_to_engine(predict, records, session)
                if held.problem is not None:
                    problems.append(LessonError(name, predict.line, held.problem))
        if stop:
            return sorted(problems, key=lambda p: p.line)
        pending = []
    return problems


@dataclass(frozen=True)
class Held:
    """A prediction held to the engine once the operations that answer it have run.

    ``value``: what the engine gives for its ``check``, as text (None without a check or
    for an unknown one); ``problem``: what is wrong with the lesson file here, in
    ``--check``'s words, or None when the engine gives the lesson's answer."""
    value: str | None
    problem: str | None
    wrong_answer: bool = False   # the engine gives another answer than the lesson's

    def warning(self, predict: Predict) -> str | None:
        """The line a learner reads under the verdict when the lesson's answer is not the
        engine's (None when it is, or when there is nothing to compare)."""
        if not self.wrong_answer:
            return None
        return (f"⚠ The engine gives {self.value} here, not the lesson's answer {predict.answer}: "
                "the lesson file is wrong (radixviz lessons --check finds it).")


def hold_to_engine(predict: Predict, records: Sequence[OpRecord], session: Session) -> Held:
    """Judge ``predict``'s answer by the engine, after the block whose ``records`` just ran
    on ``session``. The one judge: ``lessons --check``, ``lessons --read`` and the app's
    lesson player all ask it, so none can see the engine differently."""
    if predict.check is None:
        return Held(None, "prediction without a check: add 'check: NAME' so the engine holds "
                    "its answer to what it does (lessons/README.md lists the names)")
    if not records:
        return Held(None, None)
    _register_tree_counts()   # before any count is read: the app reads them before a --check does
    record = records[0]
    try:
        value = _as_text(engine_value(predict.check, record, session, records))
    except KeyError:
        known = sorted(set(record.result) | set(STATE_CHECKS) | set(RECORD_CHECKS) | set(BLOCK_CHECKS)
                       | {f"{kind}.COMPONENT" for kind in COMPONENT_CHECKS})
        return Held(None, f"unknown check {predict.check!r} (here: {', '.join(known)})")
    # the engine's value, read by the same grader as a learner's reply, must be the answer
    if predict.grade(value).correct:
        return Held(value, None)
    return Held(value, f"predicted answer {predict.answer!r} but the engine gives {value!r} for "
                f"{predict.check}", wrong_answer=True)


def engine_value(check: str, record: OpRecord, session: Session, records: Sequence[OpRecord] = ()):
    """What the engine says for a predict's ``check`` (KeyError when the name is unknown);
    ``records``: the whole block's, for the checks in block_checks.py."""
    if is_block_check(check):
        return block_value(check, records or [record], session)
    if check in STATE_CHECKS:
        return STATE_CHECKS[check](session)
    if check.partition(".")[0] in COMPONENT_CHECKS:
        return _component_value(check, session)
    if check in RECORD_CHECKS:
        return RECORD_CHECKS[check](record, session)
    value = record.result
    for part in check.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(check)
        value = value[part]
    return value


def _as_text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value) or "none"
    return str(value)
