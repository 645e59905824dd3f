"""Keys that arrive in one burst (a browser's packet, a busy machine) are applied to a text
field in the order typed: its editing keys do not wait behind the letters that follow."""
from textual import events
from textual.app import App, ComposeResult

from radixviz.tui.widgets.ordered_input import OrderedInput

BURST = ["ctrl+a", "ctrl+k", "n", "o", "t", "e", "s", "backspace", "x", "left", "left", "delete", "enter"]


class FieldApp(App):
    def __init__(self, field_class):
        super().__init__()
        self.field_class, self.submitted = field_class, []

    def compose(self) -> ComposeResult:
        yield self.field_class("draft.rv", id="field")

    def on_input_submitted(self, event) -> None:
        self.submitted.append(event.value)


async def typed_in_one_burst(field_class) -> tuple[str, list]:
    app = FieldApp(field_class)
    async with app.run_test() as pilot:
        app.query_one("#field").focus()
        await pilot.pause()
        # every key queued before any is handled, as a burst from the terminal arrives
        for key in BURST:
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await pilot.pause()
        await pilot.pause()
        return app.query_one("#field").value, app.submitted


async def test_a_burst_of_editing_keys_and_letters_acts_in_typing_order():
    # home, delete to the end, "notes", backspace, x, two left, delete: "notx"
    value, submitted = await typed_in_one_burst(OrderedInput)
    assert value == "notx"
    assert submitted == ["notx"]


class SteppingApp(App):
    """A field that esc closes, and → that steps, as in the stepper."""
    BINDINGS = [("escape", "close"), ("right", "step")]

    def __init__(self):
        super().__init__()
        self.steps = 0

    def compose(self) -> ComposeResult:
        yield OrderedInput(id="field")

    def action_close(self) -> None:
        field = self.query_one("#field")
        field.display = False
        self.set_focus(None)

    def action_step(self) -> None:
        self.steps += 1


async def test_a_key_queued_behind_the_one_that_closed_the_field_goes_where_the_focus_is_now():
    app = SteppingApp()
    async with app.run_test() as pilot:
        app.query_one("#field").focus()
        await pilot.pause()
        for key, character in [("a", "a"), ("escape", None), ("right", None), ("right", None)]:
            app.post_message(events.Key(key, character))
        await pilot.pause()
        await pilot.pause()
        assert app.query_one("#field").value == "a"
        assert app.steps == 2
