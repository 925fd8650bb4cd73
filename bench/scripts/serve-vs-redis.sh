#!/usr/bin/env bash
# Pipelined CF.ADD and CF.EXISTS of `cuckoo serve` against redis-server's
# SADD and SISMEMBER, in interleaved rounds (this machine is shared and
# noisy: compare within a round). With a second binary (OLD=path), it is
# measured in the same rounds, to compare two builds of the server.
#
#   go build -o /tmp/cuckoo ./cmd/cuckoo
#   CUCKOO=/tmp/cuckoo bench/scripts/serve-vs-redis.sh 4
#   CUCKOO=/tmp/cuckoo OLD=/tmp/cuckoo-old bench/scripts/serve-vs-redis.sh 4
#
# Needs redis-server and redis-benchmark (Debian's redis-server and
# redis-tools). Ports 6390-6392; data in temporary directories.
set -euo pipefail
ROUNDS=${1:-3}
CUCKOO=${CUCKOO:?set CUCKOO to a cuckoo binary}
N=${N:-500000}
P=${P:-16}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	redis-cli -p 6390 shutdown nosave >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
"$CUCKOO" serve --addr 127.0.0.1:6391 --dir "$tmp/new" 2>"$tmp/new.log" & pids+=($!)
if [ -n "${OLD:-}" ]; then "$OLD" serve --addr 127.0.0.1:6392 --dir "$tmp/old" 2>"$tmp/old.log" & pids+=($!); fi
mkdir -p "$tmp/redis"
redis-server --port 6390 --dir "$tmp/redis" --appendonly yes --appendfsync everysec --save "" --daemonize yes >/dev/null
sleep 1
redis-cli -p 6391 CF.RESERVE k 20000000 >/dev/null
[ -n "${OLD:-}" ] && redis-cli -p 6392 CF.RESERVE k 20000000 >/dev/null
rate() {
	redis-benchmark -p "$1" -n "$N" -c 50 -P "$P" -r 100000000 -q "$2" "$3" __rand_int__ 2>/dev/null |
		tr '\r' '\n' | grep -o '[0-9.]* requests per second' | awk '{printf "%d", $1}'
}
for r in $(seq "$ROUNDS"); do
	for pair in "CF.ADD k SADD s" "CF.EXISTS k SISMEMBER s"; do
		set -- $pair
		new=$(rate 6391 "$1" "$2")
		old=""; [ -n "${OLD:-}" ] && old=$(rate 6392 "$1" "$2")
		red=$(rate 6390 "$3" "$4")
		line=$(awk -v n="$new" -v r="$red" 'BEGIN{printf "%.2fx redis-server", n/r}')
		[ -n "$old" ] && line="$line, $(awk -v n="$new" -v o="$old" 'BEGIN{printf "%.2fx old", n/o}')"
		echo "round $r: $1 $new/s, $3 $red/s${old:+, old $old/s}: $line"
	done
done
