"""The two pages the classroom server writes itself: the app's page and "the class is full".

The app's page is textual-serve's own, less its web-font link: everything it loads (the
terminal script, its style sheet, the Roboto Mono font) comes from textual-serve's static
folder on this server, so a classroom without internet works.
"""
from __future__ import annotations

from html import escape

APP_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="stylesheet" href="{static}css/xterm.css">
<script src="{static}js/textual.js"></script>
<style>
@font-face {{ font-family: "Roboto Mono"; src: url("{static}fonts/RobotoMono-VariableFont_wght.ttf"); }}
body {{ background: #0c181f; margin: 0; }}
.dialog-container {{ position: absolute; width: 100vw; height: 100vh; display: flex;
  align-items: center; justify-content: center; z-index: 10; }}
.intro {{ width: 640px; padding: 2em; font: 16px "Roboto Mono", menlo, monospace; text-align: center;
  color: rgba(255, 255, 255, .95); background-color: #12232d; z-index: 20; }}
body.-first-byte .intro-dialog {{ display: none; }}
body .textual-terminal {{ opacity: 0; transition: opacity .3s ease-out; }}
body.-first-byte .textual-terminal {{ opacity: 1; }}
.closed-dialog {{ display: none; }}
body.-closed .closed-dialog {{ display: flex; }}
button {{ padding: 12px 28px; background-color: #5e0ba7; color: #fff; border: none; margin: 16px auto 0;
  font: inherit; display: block; cursor: pointer; }}
</style>
</head>
<body>
<div class="dialog-container intro-dialog"><div class="intro">{title}: starting your session…</div></div>
<div class="dialog-container closed-dialog"><div class="intro">
  <div class="message">Session ended.</div>
  <button type="button" onclick="location.reload()">Start again</button>
</div></div>
<div id="terminal" class="textual-terminal" data-session-websocket-url="{websocket}" data-font-size="{font_size}"></div>
</body>
</html>
"""

FULL_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="{retry}">
<title>The class is full · {title}</title>
<style>
body {{ background: #0c181f; color: #e6edf3; font: 18px/1.5 system-ui, sans-serif; display: flex;
  align-items: center; justify-content: center; height: 100vh; margin: 0; }}
main {{ max-width: 36em; padding: 2em; background: #12232d; border-radius: 8px; }}
h1 {{ margin-top: 0; }}
a {{ color: #79c0ff; }}
</style>
</head>
<body>
<main>
<h1>The class is full</h1>
<p>{in_use} of {title} {verb} in use. This page tries again every {retry} seconds,
and opens the app as soon as someone closes a tab.</p>
<p>Teacher: <code>radixviz serve --max-sessions N</code> allows more at once.</p>
<p><a href="/">Try again now</a></p>
</main>
</body>
</html>
"""


def app_page(*, title: str, static: str, websocket: str, font_size: int) -> str:
    return APP_PAGE.format(title=escape(title), static=escape(static), websocket=escape(websocket),
                           font_size=font_size)


def full_page(*, title: str, limit: int, retry: int) -> str:
    in_use = "The one session" if limit == 1 else f"All {limit} sessions"
    return FULL_PAGE.format(title=escape(title), in_use=in_use, verb="is" if limit == 1 else "are",
                            retry=retry)
