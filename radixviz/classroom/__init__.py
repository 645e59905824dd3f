"""The classroom: the app served to a room's browsers (``radixviz serve``).

A layer beside the Textual app (``radixviz.tui``): it starts the app as one process per
browser tab and never imports it; of the app's package it reads only the rules of a
session's scripts folder (``tui.sandbox_work``). The web server (aiohttp, textual-serve)
is imported by ``server`` and below, never by this package's ``__init__``: ``serve
--report`` and the other commands do not pay for it. What is taken from textual-serve is
in ``textual_serve_adapter``; the students, their folders and the report in ``students``.
"""
