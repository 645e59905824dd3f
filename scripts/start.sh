#!/usr/bin/env bash
# Install radixviz into .venv and start the app.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check torch==2.13.0 numpy
.venv/bin/pip install -q --disable-pip-version-check -e .
exec .venv/bin/radixviz "$@"
