"""The code pane's window over a long function moves by bands of lines, not at every line:
nearby steps show the same rows (and repaint only the marked ones)."""
from __future__ import annotations

import pytest

from radixviz.tui.widgets.code_pane import _steady_window, _window
import itertools


def one_row(index: int) -> int:
    return 1


@pytest.mark.parametrize("count, rows", [(30, 8), (80, 19), (200, 40), (25, 24)])
def test_every_line_is_in_its_window_with_a_line_below_it(count, rows):
    for line in range(count):
        first, last = _steady_window(count, line, rows, one_row)
        assert first <= line <= last and last - first + 1 <= rows
        assert line < last or last == count - 1
        assert last - first + 1 == min(rows, count)   # as many lines as fit


@pytest.mark.parametrize("count, rows", [(80, 19), (200, 40)])
def test_the_window_moves_by_bands_not_at_every_line(count, rows):
    windows = [_steady_window(count, line, rows, one_row) for line in range(count)]
    moves = sum(1 for a, b in itertools.pairwise(windows) if a != b)
    band = rows // 2
    assert moves <= count // band + 1, moves
    # the plain window (the line a third of the way down) moves at nearly every line
    plain = [_window((0, count - 1), line, rows, one_row) for line in range(count)]
    assert sum(1 for a, b in itertools.pairwise(plain) if a != b) > 2 * moves


def test_wrapped_lines_still_show_the_marked_line():
    heights = [3 if line % 4 == 0 else 1 for line in range(60)]   # every fourth line wraps
    for line in range(60):
        first, last = _steady_window(60, line, 12, heights.__getitem__)
        assert first <= line <= last
        assert sum(heights[first:last + 1]) <= 12
