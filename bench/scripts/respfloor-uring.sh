#!/usr/bin/env bash
# One core against one core: respfloor's loops (a goroutine a connection,
# gnet's epoll loop, the io_uring loop) against Debian's redis-server
# answering PING and GET (an empty database: GET answers nil), in
# interleaved rounds (the order of the servers rotates from round to round).
# Each server is pinned to core 0 with GOMAXPROCS=1 and one loop;
# redis-benchmark runs on core 1. For each run it records the requests a
# second and the server's CPU time a request (utime+stime from /proc).
#
#   bench/scripts/respfloor-uring.sh 3
#   N=100000 CLIENTS="50" PIPELINES="1" bench/scripts/respfloor-uring.sh 2
#
# Argument: ROUNDS (default 3). Environment: N requests a test (default
# 200000), CLIENTS (default "50 500"), PIPELINES (default "1 16"),
# SERVERS (default "redis uring net gnet").
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
N=${N:-200000}
CLIENTS=${CLIENTS:-50 500}
PIPELINES=${PIPELINES:-1 16}
SERVERS=${SERVERS:-redis uring net gnet}
BIN=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$BIN"' EXIT
go build -o "$BIN/respfloor" ./cmd/respfloor
ulimit -n 65536 2>/dev/null || true
PORT=6420
tick() { awk '{print $14+$15}' /proc/$1/stat; }
start() { # name -> PID, waiting until it answers
	case $1 in
	redis) taskset -c 0 redis-server --port $PORT --save '' --appendonly no --maxclients 10000 >/dev/null & ;;
	uring) GOMAXPROCS=1 taskset -c 0 "$BIN/respfloor" --mode uring --loops 1 --addr 127.0.0.1:$PORT & ;;
	net) GOMAXPROCS=1 taskset -c 0 "$BIN/respfloor" --mode net --addr 127.0.0.1:$PORT & ;;
	gnet) GOMAXPROCS=1 taskset -c 0 "$BIN/respfloor" --mode gnet --multicore=false --addr 127.0.0.1:$PORT 2>/dev/null & ;;
	esac
	PID=$!
	for _ in $(seq 100); do redis-cli -p $PORT ping >/dev/null 2>&1 && return; sleep 0.05; done
	echo "$1 did not start" >&2; exit 1
}
HZ=$(getconf CLK_TCK)
echo "round server clients pipeline test rps server_us_per_req"
for r in $(seq "$ROUNDS"); do
	set -- $SERVERS
	for _ in $(seq $(( (r - 1) % $# ))); do set -- "${@:2}" "$1"; done # rotate
	for s in "$@"; do
		start "$s"
		for c in $CLIENTS; do for p in $PIPELINES; do for t in ping_mbulk get; do
			t0=$(tick $PID)
			b=$(date +%s.%N)
			out=$(taskset -c 1 redis-benchmark -p $PORT -c "$c" -n "$N" -P "$p" -t "$t" --csv 2>/dev/null | grep -i "\"${t^^}\"" | head -1)
			t1=$(tick $PID)
			rps=$(echo "$out" | cut -d, -f2 | tr -d '"')
			us=$(awk -v d=$((t1 - t0)) -v hz="$HZ" -v n="$N" 'BEGIN{printf "%.2f", d / hz * 1e6 / n}')
			echo "$r $s $c $p $t $rps $us"
		done; done; done
		kill "$PID"; wait "$PID" 2>/dev/null || true
		sleep 0.3
	done
done
