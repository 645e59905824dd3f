"""The pages the classroom server writes itself, from Jinja2 templates (autoescaped: a
student's name or the class's title is text, never HTML).

The app's page is textual-serve's own, less its web-font link: everything it loads (the
terminal script, its style sheet, the Roboto Mono font) comes from textual-serve's static
folder on this server, so a classroom without internet works. It adds an "upload a script"
link and shows why a session was refused on its closed card.
"""
from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

_PAGES = Environment(loader=FileSystemLoader(Path(__file__).with_name("templates")),
                     autoescape=select_autoescape(default=True, default_for_string=True))


def page(template: str, /, **values: object) -> str:
    """The page ``templates/TEMPLATE.html`` filled with ``values`` (escaped)."""
    return _PAGES.get_template(f"{template}.html").render(**values)


def app_page(*, title: str, static: str, websocket: str, font_size: int, student: str = "") -> str:
    return page("app", title=title, static=static, websocket=websocket, font_size=font_size, student=student)


def full_page(*, title: str, limit: int, retry: int) -> str:
    return page("full", title=title, limit=limit, retry=retry)
