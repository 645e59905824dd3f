#!/usr/bin/env bash
# The README's test command on a busy machine: RUNS times in a row (default 3) while HOGS
# processes (default: one per core) keep every CPU busy, as a shared CI runner or a laptop
# building something else does. Each run must be green; the script prints one JSON line per
# run (seconds, load average, exit status) and exits 1 if any run failed.
#
#   bash scripts/stress-test.sh                 three runs beside a hog per core
#   RUNS=1 HOGS=4 bash scripts/stress-test.sh   one run beside four hogs
#
# The hogs are Debian's stress-ng when it is installed (apt-get install stress-ng), else
# plain busy Python loops; both are stopped when the script ends, however it ends.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
hogs=${HOGS:-$(nproc 2>/dev/null || echo 2)}
hog_pids=()
stop_hogs() { [ ${#hog_pids[@]} -gt 0 ] && kill "${hog_pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap stop_hogs EXIT

if command -v stress-ng >/dev/null 2>&1; then
  stress-ng --cpu "$hogs" --quiet & hog_pids+=($!)
  what="stress-ng --cpu $hogs"
else
  for _ in $(seq "$hogs"); do python3 -c 'while True: pass' & hog_pids+=($!); done
  what="$hogs busy python loops"
fi
echo "stress-test: $runs run(s) of bash scripts/test.sh beside $what" >&2

failed=0
for run in $(seq "$runs"); do
  started=$SECONDS
  log=$(mktemp -t radixviz-stress-XXXX.log)
  bash scripts/test.sh > "$log" 2>&1
  status=$?
  [ $status -eq 0 ] || failed=1
  summary=$(grep -E '^[0-9]+ (passed|failed)|[0-9]+ passed' "$log" | tail -1)
  printf '{"run": %d, "seconds": %d, "status": %d, "load": "%s", "hogs": "%s", "summary": "%s", "log": "%s"}\n' \
    "$run" $((SECONDS - started)) "$status" "$(cut -d' ' -f1-3 /proc/loadavg)" "$what" "$summary" "$log"
done
exit $failed
