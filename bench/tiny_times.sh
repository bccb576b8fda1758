#!/bin/bash
# Each flow at its tiny preset into a fresh store under OUT (default /tmp/tinyt): wall time and
# the store's size (du, run records left out). Run it twice to measure with numba's cache warm.
set -u
cd "$(dirname "$0")/.."
out=${1:-/tmp/tinyt}
mkdir -p "$out"
for flow in ${FLOWS:-solve-lossless lhe-abstraction lhe-abstraction-pa lhe-solve lhe-league nlhe-cnn \
    hearts-falcon blokus-bootstrap blokus-zero}; do
  store=$out/$flow
  rm -rf "$store"
  t0=$(date +%s.%N)
  COLUMNS=100 .venv/bin/gameforge run "$flow" --preset tiny --store "$store" > "$out/$flow.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  size=$(du -sb "$store" --exclude=runs | cut -f1)
  # the 1-minute load average: above 2, something else shared the two cores
  printf "%s rc=%s wall=%.1f s store=%.1f MB load=%s\n" "$flow" "$rc" "$(echo "$t1 - $t0" | bc)" \
    "$(echo "$size / 1048576" | bc -l)" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/times.txt"
done
