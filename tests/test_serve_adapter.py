"""textual-serve's private parts the classroom overrides or reads are still there, with the
signatures the adapter was written for (radixviz/classroom/textual_serve_adapter.py).

pyproject.toml pins textual-serve below its next minor version; before widening the pin,
run this test against the new one: it fails on any name that moved or changed."""
from __future__ import annotations

import inspect
from importlib.metadata import version

import pytest

pytest.importorskip("textual_serve")

from radixviz.classroom.textual_serve_adapter import PRIVATE, DownloadManager, ServedApp  # noqa: E402


async def _write(*_args) -> None:
    return None


@pytest.mark.parametrize("owner,name,signature", PRIVATE, ids=[name for _, name, _ in PRIVATE])
def test_private_name_is_where_the_adapter_expects(owner, name, signature):
    if signature is None:
        # an attribute set by __init__: one made with the documented arguments has it
        made = DownloadManager() if owner is DownloadManager else owner(
            "true", write_bytes=_write, write_str=_write, close=_write, download_manager=DownloadManager())
        assert name in vars(made), f"textual-serve {version('textual-serve')}: {owner.__name__} no longer sets {name}"
    else:
        found = getattr(owner, name, None)
        assert found is not None, f"textual-serve {version('textual-serve')}: {owner.__name__}.{name} is gone"
        assert str(inspect.signature(found)) == signature, (
            f"textual-serve {version('textual-serve')}: {owner.__name__}.{name}{inspect.signature(found)}")


def test_the_adapter_overrides_exactly_what_it_lists():
    # a new override (or a removed one) must be listed in PRIVATE, so the test above covers it
    overridden = {name for name in vars(ServedApp) if name.startswith("_") and not name.startswith("__")
                  and any(name in vars(base) for base in ServedApp.__mro__[1:])}
    listed = {name for _, name, signature in PRIVATE if signature is not None and name.startswith("_")}
    assert overridden == listed


def test_the_pipe_protocol_the_reader_rewrites_is_unchanged():
    # ServedApp.run rewrites textual-serve's reader: the prelude line and the packet kinds
    source = inspect.getsource(ServedApp.__mro__[1].run)
    for mark in ('b"__GANGLION__\\n"', 'b"M"', 'b"D"', 'b"P"', "readexactly(1)", "readexactly(4)"):
        assert mark in source, f"textual-serve {version('textual-serve')}: AppService.run no longer has {mark}"
