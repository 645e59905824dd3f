"""The views' per-frame cache: built once per frame object, by identity, least recent out first."""
from radixviz.tui.frame_cache import per_frame


def test_built_once_per_frame_and_equal_frames_kept_apart():
    built = []

    @per_frame(2)
    def view(frame):
        built.append(frame)
        return len(built)

    first, twin = {"tree": [1, 2]}, {"tree": [1, 2]}   # equal, unhashable, not the same frame
    assert (view(first), view(first), view(twin), view(twin)) == (1, 1, 2, 2)
    assert built == [first, twin] and built[0] is first and built[1] is twin


def test_the_least_recently_used_frame_goes_first():
    built = []

    @per_frame(2)
    def view(frame):
        built.append(id(frame))
        return id(frame)

    a, b, c = [0], [1], [2]
    view(a), view(b), view(a), view(c)     # b is the least recently used when c comes in
    view(a)
    assert built == [id(a), id(b), id(c)]
    view(b)
    assert built[-1] == id(b) and view.cache_info().currsize == 2
    view.cache_clear()
    assert view.cache_info().currsize == 0
