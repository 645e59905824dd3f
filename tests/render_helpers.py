"""Helpers for the render tests: sessions for the chapter example and monochrome capture."""
import io

from rich.console import Console

from radixviz.script import Session

CHAPTER = 'insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatch "Hello_world"\n'


def capture(renderable, width: int = 60) -> str:
    """What a monochrome terminal ``width`` columns wide shows for ``renderable``."""
    console = Console(file=io.StringIO(), color_system=None, width=width, legacy_windows=False)
    console.print(renderable)
    return console.file.getvalue()


def session_after(script: str, *, buggy: bool = False, pool_size: int = 32) -> Session:
    """A CPU session that has applied ``script``."""
    session = Session(pool_size=pool_size, buggy=buggy, device="cpu")
    session.run(script, "test")
    return session
