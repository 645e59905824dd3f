"""Regenerate the teacher diagrams in this folder: the chapter's example under both matchers.

    python assets/make.py            # needs Graphviz's dot for the SVGs

The script is the chapter's: two inserts that share "Hello_", then a match that leaves the
shared edge inside it. The fixed matcher (#7) splits the edge and stops at 6 tokens; the
pre-#7 matcher walks on into 'world' and returns 11 slots, 5 of them another context's KV.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHAPTER_SCRIPT = 'insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatch "Hello_world"\n'


def chapter_frame(buggy: bool):
    """The last frame of the chapter script (match 'Hello_world') with the chosen matcher."""
    from radixviz.script import Session

    session = Session(pool_size=32, buggy=buggy, device="cpu")
    session.run(CHAPTER_SCRIPT, "chapter")
    return session, session.frames[-1]


def caption(session, buggy: bool) -> str:
    result = session.records[-1].result
    if buggy:
        diff = result["disagreement"]
        return (f"pre-#7 matcher: match 'Hello_world' returns {result['matched']} slots; "
                f"the last {len(diff['wrong_slots'])} belong to 'Hello_L.A.!world'")
    return f"fixed matcher (#7): match 'Hello_world' splits 'Hello_L.A.!' and returns {result['matched']} slots"


def main(folder: Path = HERE) -> list[Path]:
    from radixviz.render.graphviz import write

    written = []
    for buggy in (False, True):
        session, frame = chapter_frame(buggy)
        # a still picture for a page: no 'current step' highlight, the lasting marks only
        marks = dataclasses.replace(frame.marks, current=())
        name = f"chapter-{'buggy' if buggy else 'fixed'}.svg"
        written.append(write(frame.tree, folder / name, marks, title=caption(session, buggy)))
    return written


if __name__ == "__main__":
    for path in main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(f"wrote {path}")
