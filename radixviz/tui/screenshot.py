"""Save the README's screenshot of the stepper: ``python -m radixviz.tui.screenshot [PATH]``.

Re-runnable: the chapter's example with the buggy matcher, stopped on the match's result,
at a fixed size, so the picture only changes when the app's look does.
"""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path

SCRIPT = ('insert "Hello_L.A.!"\ninsert "Hello_L.A.!world"\nmatcher buggy\n'
          'match "Hello_world"\n')
SIZE = (110, 34)


async def save(path: Path) -> Path:
    from radixviz.tui.app import RadixvizApp, wait_until_ready  # Textual: only to take one
    from radixviz.tui.screens.stepper import StepperScreen
    app = RadixvizApp("sandbox", script_text=SCRIPT, device="cpu")
    app.title = "radixviz"
    async with app.run_test(size=SIZE) as pilot:
        await wait_until_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, StepperScreen) and screen.model is not None   # the sandbox, loaded
        screen.position = screen.model.session.records[-1].last_frame
        await pilot.pause()
        app.save_screenshot(filename=path.name, path=str(path.parent))
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0] if argv else "assets/stepper.svg")
    path.parent.mkdir(parents=True, exist_ok=True)
    print(asyncio.run(save(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
