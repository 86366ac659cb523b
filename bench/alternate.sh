#!/usr/bin/env bash
# Alternating A/B of two built checkouts (each with node_modules and dist): one bench run of A, one of B,
# ROUNDS times, so that the machine's drift falls on both sides. Every run takes /tmp/bench.lock, so that
# two benches never share the machine. Prints each run's Switchyard rows; the reports go to OUT/A and OUT/B.
#
#   DATABASE_URL=postgres://… bench/alternate.sh DIR_A DIR_B ROUNDS OUT --targets direct,switchyard \
#     --variants pg-default --phases buffered:closed:32,buffered:open:300 --duration 6
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
A=$(cd "$1" && pwd); B=$(cd "$2" && pwd); ROUNDS=$3; OUT=$4; shift 4
mkdir -p "$OUT"
for round in $(seq 1 "$ROUNDS"); do
  for side in A B; do
    dir=$A; [ "$side" = B ] && dir=$B
    log="$OUT/$side-$round.log"
    (cd "$dir" && flock /tmp/bench.lock node dist/bench/runner.js "$@" --out "$OUT/$side" >"$log" 2>&1) || { echo "$side round $round failed: see $log"; exit 1; }
    echo "$side round $round: $(grep -E '^\| Switchyard' "$log" | tr '\n' ' ' | tr -s ' ')"
  done
done
