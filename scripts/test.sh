#!/usr/bin/env bash
# Install radixviz with its test tools into .venv, check it with ruff and mypy, run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
# torch is pinned here to the CPU build; pyproject.toml keeps a range for users
.venv/bin/pip install -q --disable-pip-version-check torch==2.13.0 numpy
.venv/bin/pip install -q --disable-pip-version-check -e '.[dev]'
# lint (ruff) and types (mypy on radixviz/cache) first: seconds, and they name the line at fault
.venv/bin/ruff check --quiet
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
