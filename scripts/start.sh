#!/usr/bin/env bash
# Install radixviz into .venv (the first time, and again only when pyproject.toml changes)
# and start the app; arguments go to radixviz (e.g. `bash scripts/start.sh lesson 1`).
# How torch is chosen: scripts/install.sh (keep yours, or name the index of the build you want).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install.sh
install_radixviz app
exec .venv/bin/radixviz "$@"
