"""Headless Chromium for the browser tests: Debian's ``chromium`` driven by playwright.

The tests skip, saying why, only when no Chromium is installed (``.ci/run`` installs it);
playwright's own browser download is not used.
"""
from __future__ import annotations

import os
import shutil

import pytest

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def chromium_path() -> str | None:
    """Where Chromium is: ``$RADIXVIZ_CHROMIUM``, Debian's path, or on PATH."""
    for path in (os.environ.get("RADIXVIZ_CHROMIUM"), *CANDIDATES):
        if path and os.access(path, os.X_OK):
            return path
    return shutil.which("chromium") or shutil.which("chromium-browser")


def launch_browser(playwright):
    """A headless Chromium; the test is skipped when none is installed."""
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium installed (apt-get install chromium); .ci/run installs it")
    return playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])


@pytest.fixture(scope="module")
def browser():
    """One browser for a test module (starting one takes a second or two)."""
    from playwright.sync_api import sync_playwright   # a dev dependency: pip install -e '.[dev]'

    with sync_playwright() as playwright:
        chrome = launch_browser(playwright)
        yield chrome
        chrome.close()
