"""The compare view steps by micro-step too: . and , move both sides one step inside an
operation, each showing its own step of the same number (#7's walk against the fixed one)."""
from __future__ import annotations

from test_tui_compare import opened
from tui_helpers import plain, stepper


def headline(app) -> str:
    return plain(app.screen.query_one("#compare-status").content, width=200)


def step_line(app, name: str) -> str:
    return plain(app.screen.query_one(f"#result-{name}").content, width=200).splitlines()[0]


async def test_dot_and_comma_step_both_matchers_through_the_match(tmp_path):
    async with stepper(tmp_path, size=(140, 40)) as (app, pilot):
        await pilot.press("end", "c")
        await opened(app, pilot)
        assert "step" not in headline(app)          # a whole operation, as before
        await pilot.press("left", "full_stop")      # op 2's outcome, then on into op 3
        assert "op 3/3" in headline(app) and "step 1/" in headline(app)
        assert step_line(app, "fixed").startswith('step 1/') and '▶ match "Hello_world"' in step_line(app, "fixed")
        assert '▶ match "Hello_world"' in step_line(app, "buggy")
        total = int(headline(app).split("step 1/")[1].split()[0])
        fixed, buggy = [], []
        for number in range(2, total + 1):
            await pilot.press("full_stop")
            assert f"step {number}/{total}" in headline(app)
            fixed.append(step_line(app, "fixed"))
            buggy.append(step_line(app, "buggy"))
        # the fixed walk splits the edge it stops in; the buggy one takes part of it and goes on
        assert any("split after 6 tokens" in line for line in fixed)
        assert any("only part of the edge, yet the walk goes on below" in line for line in buggy)
        assert "returns 6 token(s)" in fixed[-1] and "returns 11 token(s)" in buggy[-1]
        await pilot.press("full_stop")                # the last step of the last operation stays
        assert f"step {total}/{total}" in headline(app)
        for _ in range(total):
            await pilot.press("comma")                # back through op 3 into op 2's last step
        assert "op 2/3" in headline(app)
        await pilot.press("right")                    # → goes back to whole operations
        assert "op 3/3" in headline(app) and "step" not in headline(app)
