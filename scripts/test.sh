#!/usr/bin/env bash
# Install radixviz with its test tools into .venv (the first time, and again only when
# pyproject.toml changes) check it with ruff and mypy, and run the tests.
#
#   bash scripts/test.sh                   every test, spread over a few processes
#   bash scripts/test.sh --fast            all but the slow and browser tests
#   bash scripts/test.sh --changed         only the tests that ran code changed since the last
#                                          --changed run (pytest-testmon; the first run runs all),
#                                          slow and browser tests left out (--changed --slow: in)
#   bash scripts/test.sh tests/test_x.py   pytest's own arguments; named files run in one process
#
# RADIXVIZ_TEST_WORKERS=N sets the number of processes (default: CPU cores + 1, since a TUI
# test spends much of its time waiting for the app to settle). The tests run in a new random
# order each time (pytest-randomly), so a test that needs another to run first shows up; the
# order's seed is printed at the end, and RADIXVIZ_TEST_SEED=N runs that order again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install.sh
install_radixviz dev
# some machines set PYTHONDONTWRITEBYTECODE: then each of the workers (and each command a test
# starts) compiled the package and pytest rewrote every test file again, 9 s of collection
# per worker instead of 6
unset PYTHONDONTWRITEBYTECODE

args=() named=0 parallel=1 changed=0 slow=0
for arg in "$@"; do
  case "$arg" in
    --fast) args+=(-m "not slow and not browser") ;;
    # testmon keeps which code each test ran in .testmondata; tests started as a child process
    # (the CLI's own runs) are followed by the files they name, not by the code they run
    --changed) changed=1 ;;
    --slow) slow=1 ;;   # with --changed: the slow and browser tests too
    -n|-n[0-9]*|--numprocesses*|--snapshot-update|--pdb|--trace) parallel=0; args+=("$arg") ;;
    *) [[ "$arg" != -* && ( -e "${arg%%::*}" ) ]] && named=1; args+=("$arg") ;;
  esac
done
if [ "$changed" = 1 ]; then
  # One pytest (one process on a busy machine): testmon itself skips collecting a test file none
  # of whose tests ran changed code, deselects the other tests that ran none, and records what the
  # chosen ones run. The old way (a --collect-only pytest to count the pick, a second one to run
  # it, through xdist above 150 tests) paid pytest, torch and the collection twice, and each xdist
  # worker collected once more. At load 6-10 on 2 cores (README has the figures): a line in the
  # 2026 engine's _split_node, 130 tests, took 36 s of CPU that way, 30 s now; a line in the 2024
  # engine's, 517 tests, 129 s of CPU and 245 s wall through xdist, 87 s and 131 s in one process.
  # The first run (no .testmondata: every test to learn) always uses xdist. forceselect: a marker
  # narrows testmon's choice instead of turning it off. The slow and browser tests (seconds each)
  # stay out unless --slow is given.
  [ "$slow" = 1 ] || [[ " ${args[*]} " == *" -m "* ]] || args=(-m "not slow and not browser" "${args[@]}")
  if [ -e .testmondata ]; then
    # With a core free (1-minute load average under cores - 0.5), one xdist worker per core:
    # the pick's tests are CPU-bound under testmon's tracing (Python 3.11: coverage's C
    # tracer sees every line, Textual's too), so two cores halve them. Measured on 2 idle
    # cores (load 0-1.2): 2024 _split_node, 517 tests, 81 s wall / 80 s CPU in one process,
    # 54 s / 96 s with -n 2; cache/hashes.py, 49 tests, 19 s -> 16 s. On a busy machine the
    # workers only share the same cores (last session, load 9-10: three workers 245 s, one 131 s).
    cores=${RADIXVIZ_TEST_WORKERS:-$(nproc 2>/dev/null || echo 1)}
    if [ "$parallel" = 1 ] && [ "$named" = 0 ] && [ "$cores" -ge 2 ] &&
       awk -v load="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 99)" -v cores="$cores" \
           'BEGIN { exit !(load < cores - 0.5) }'; then
      args=(-n "$cores" --dist loadgroup "${args[@]}")
    fi
    parallel=0
  fi
  args=(--testmon-forceselect "${args[@]}")
fi
if [ "$parallel" = 1 ] && [ "$named" = 0 ]; then
  workers=${RADIXVIZ_TEST_WORKERS:-$(( $(nproc 2>/dev/null || echo 2) + 1 ))}
  # browser tests share one process and one Chromium (tests/conftest.py groups them)
  args=(-n "$workers" --dist loadgroup "${args[@]}")
fi
# lint (ruff) and types (mypy on radixviz, see pyproject.toml) first: seconds, and they name the line at fault
.venv/bin/ruff check --quiet
.venv/bin/mypy
seed=${RADIXVIZ_TEST_SEED:-$(( (RANDOM << 15) | RANDOM ))}
[[ " ${args[*]} " == *" no:randomly "* ]] || args=("--randomly-seed=$seed" "${args[@]}")
started=$SECONDS
status=0
.venv/bin/python -m pytest "${args[@]}" || status=$?
# nothing picked: testmon 2.2 exits 0 with "N deselected" (pytest alone would exit 5, which
# for --changed means the same: no test ran code that changed)
if [ "$changed" = 1 ] && [ "$status" = 5 ]; then
  echo "--changed: no test ran code that changed since the last --changed run"; status=0
fi
echo "tests: $((SECONDS - started)) s wall, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')," \
     "order seed $seed (RADIXVIZ_TEST_SEED=$seed runs this order again)"
exit $status
