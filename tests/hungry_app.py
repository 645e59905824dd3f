"""A Textual app for the classroom tests, served in place of radixviz (RADIXVIZ_SERVE_APP):
it draws "hungry app ready", answers ``p`` with "pong N", and on the key ``m`` takes memory until it has none (a list
of 64 MB blocks, touched); ``python hungry_app.py crash`` fails while it starts instead."""
import sys

from textual.app import App
from textual.widgets import Static


class Hungry(App):
    def compose(self):
        yield Static("hungry app ready")

    def on_mount(self) -> None:
        if sys.argv[1:] == ["crash"]:
            raise RuntimeError("the app's own start failed here")

    def on_key(self, event) -> None:
        if event.key == "p":
            self.pings = getattr(self, "pings", 0) + 1
            self.query_one(Static).update(f"pong {self.pings}")
        if event.key == "m":
            held = []
            while True:
                held.append(bytearray(64 << 20))


if __name__ == "__main__":
    app = Hungry()
    app.run()
    sys.exit(app.return_code or 0)
