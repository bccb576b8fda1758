#!/usr/bin/env bash
# Start a Dask scheduler and N single-threaded workers on 127.0.0.1 (Ctrl-C stops them all).
set -euo pipefail
WORKERS=${1:-2}
PORT=${PORT:-8786}
BIN=$(dirname "$(command -v gameforge || echo .venv/bin/gameforge)")
trap 'kill 0' EXIT
"$BIN/dask" scheduler --host 127.0.0.1 --port "$PORT" --dashboard-address 127.0.0.1:8787 &
sleep 2
NUMBA_NUM_THREADS=1 "$BIN/dask" worker "tcp://127.0.0.1:$PORT" --host 127.0.0.1 \
    --nworkers "$WORKERS" --nthreads 1 --dashboard-address 127.0.0.1:0 &
echo "scheduler tcp://127.0.0.1:$PORT, dashboard http://127.0.0.1:8787"
wait
