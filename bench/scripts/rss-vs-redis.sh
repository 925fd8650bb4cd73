#!/usr/bin/env bash
# Resident memory of `cuckoo serve` against redis-server 8 with RedisBloom,
# each run as a user runs it: at rest, and its growth under N CF.ADDs.
#
#   bench/scripts/rss-vs-redis.sh 5
#   SIZES="10000" SETTLE=5 CUCKOO=/tmp/cuckoo bench/scripts/rss-vs-redis.sh 3
#
# Argument: ROUNDS (default 3). Environment:
#   SIZES    the numbers of adds N, each measured on fresh servers
#            (default "10000 100000")
#   SETTLE   seconds between the last client's disconnect and the settled
#            reading (default 3)
#   PER_KEY  adds a key (default 10000): N adds go to keys k1, k2, ... in
#            turn, PER_KEY each, one redis-benchmark run a key
#   CUCKOO   a cuckoo binary to use instead of building ./cmd/cuckoo
#   REDIS8_SERVER, REDIS8_SO, REDIS8_BENCHMARK, REDIS8_CLI
#            redis-server 8, its RedisBloom module, redis-benchmark and
#            redis-cli (default /tmp/redis8/bin/... and /tmp/redis8/redisbloom.so)
#
# The servers: redis-server --appendonly yes --appendfsync everysec
# --save '' --loadmodule redisbloom.so; cuckoo serve with its defaults
# (it logs every write, flushed once a second, to --dir). Both on
# 127.0.0.1, on ports the OS picked, with data in a temporary directory
# removed at the end; stopped by process id.
#
# The method, the same for both, for each round and each N, on a fresh pair
# of servers:
#   rest     VmRSS (/proc/PID/status) 2 s after the server first answers PING;
#   after    VmRSS right after the adds, less rest: for each key kI of
#            ceil(N / PER_KEY), redis-benchmark -c 50 -n PER_KEY
#            -r 1000000000 CF.ADD kI __rand_int__ (its 50 clients connect,
#            add, and disconnect), one key after the other;
#   settled  VmRSS SETTLE s after the last run, less rest.
# The keys do not exist before: CF.ADD creates each with the server's
# default shape (RedisBloom: capacity 1024, bucket size 2, expansion 1,
# which stops growing at cf-max-expansions 32 sub-filters of 1024, so that
# one key holds fewer than 10^5 items and N is spread over keys; cuckoo
# serve: its cf-initial-size 1024, expansion 1). Which server is loaded
# first alternates from round to round, and each server's settle is timed
# from its own benchmark's end. The table gives medians (min-max) over the
# rounds, and the median of the ratio within a round (cuckoo serve's over
# redis-server's). VmRSS counts the pages of the binaries and libraries a
# process has mapped as well as its private memory; "rest, private" is
# RssAnon alone.
set -euo pipefail
ROUNDS=${1:-3}
SIZES=${SIZES:-10000 100000}
SETTLE=${SETTLE:-3}
PER_KEY=${PER_KEY:-10000}
redis_server=${REDIS8_SERVER:-/tmp/redis8/bin/redis-server}
redis_so=${REDIS8_SO:-/tmp/redis8/redisbloom.so}
redis_benchmark=${REDIS8_BENCHMARK:-/tmp/redis8/bin/redis-benchmark}
redis_cli=${REDIS8_CLI:-/tmp/redis8/bin/redis-cli}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/bench/scripts/lib.sh"

for f in "$redis_server" "$redis_benchmark" "$redis_cli"; do
	[ -x "$f" ] || { echo "$f is missing (set REDIS8_SERVER, REDIS8_BENCHMARK, REDIS8_CLI)" >&2; exit 2; }
done
[ -f "$redis_so" ] || { echo "$redis_so is missing (set REDIS8_SO)" >&2; exit 2; }
for c in perl go; do
	command -v "$c" >/dev/null || { echo "$c is not installed" >&2; exit 2; }
done

tmp=$(mktemp -d)
pids=()
stop() { # pid...: TERM, then KILL after 5 s
	for p in "$@"; do kill "$p" 2>/dev/null || true; done
	for p in "$@"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}
cleanup() {
	stop "${pids[@]}"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cuckoo=${CUCKOO:-}
if [ -z "$cuckoo" ]; then
	cuckoo=$tmp/cuckoo
	(cd "$root" && go build -o "$cuckoo" ./cmd/cuckoo)
fi

freeport() {
	perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0) or die "$!\n"; print $s->sockport'
}
ready() { # port: waits up to 10 s for PONG
	for _ in $(seq 100); do
		[ "$("$redis_cli" -p "$1" PING 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
	done
	return 1
}
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }   # kB
anon() { awk '/^RssAnon:/ {print $2}' "/proc/$1/status"; } # kB

# start_redis DIR and start_cuckoo DIR set rport/rpid and cport/cpid.
start_redis() {
	mkdir -p "$1"
	for try in 1 2 3; do
		rport=$(freeport)
		"$redis_server" --port "$rport" --bind 127.0.0.1 --dir "$1" --appendonly yes --appendfsync everysec \
			--save '' --loadmodule "$redis_so" >"$1.log" 2>&1 &
		rpid=$!
		pids+=("$rpid")
		ready "$rport" && return 0
		stop "$rpid" # another process took the port between the pick and the bind
	done
	cat "$1.log" >&2
	exit 1
}
start_cuckoo() { # cuckoo serve binds 127.0.0.1:0 itself and logs the address it got
	: >"$1.log" # there before the loop below reads it
	"$cuckoo" serve --addr 127.0.0.1:0 --dir "$1" 2>>"$1.log" &
	cpid=$!
	pids+=("$cpid")
	cport=
	for _ in $(seq 100); do
		cport=$(sed -n 's/.*ready to accept connections.* addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$1.log")
		[ -n "$cport" ] && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$cport" ] || ! ready "$cport"; then
		cat "$1.log" >&2
		exit 1
	fi
}

# load NAME PORT PID N ROUND: N adds, then the readings; appends
# "round|N|name|rest|rest anon|after|settled" (kB) to the results.
load() {
	local name=$1 port=$2 pid=$3 n=$4 round=$5 after key
	for key in $(seq $(((n + PER_KEY - 1) / PER_KEY))); do
		"$redis_benchmark" -p "$port" -c 50 -n "$((n < PER_KEY ? n : PER_KEY))" -r 1000000000 -q CF.ADD "k$key" __rand_int__ \
			>"$tmp/bench.out" 2>&1 && ! grep -q 'Error from server' "$tmp/bench.out" ||
			{ echo "redis-benchmark against $name failed:" >&2; cat "$tmp/bench.out" >&2; exit 1; }
	done
	after=$(rss "$pid")
	sleep "$SETTLE"
	echo "$round|$n|$name|${rest[$name]}|${restanon[$name]}|$after|$(rss "$pid")" >>"$tmp/results"
}

echo "cuckoo serve ($cuckoo) against redis-server" \
	"$("$redis_server" --version | sed 's/.*v=\([^ ]*\).*/\1/') with $redis_so; $ROUNDS rounds," \
	"adds: $SIZES, 50 clients, settle $SETTLE s, $(nproc) CPUs"
declare -A rest restanon
for r in $(seq "$ROUNDS"); do
	for n in $SIZES; do
		start_redis "$tmp/redis-$r-$n"
		start_cuckoo "$tmp/cuckoo-$r-$n"
		sleep 2
		rest[redis]=$(rss "$rpid") restanon[redis]=$(anon "$rpid")
		rest[cuckoo]=$(rss "$cpid") restanon[cuckoo]=$(anon "$cpid")
		if [ $((r % 2)) = 1 ]; then
			load cuckoo "$cport" "$cpid" "$n" "$r"
			load redis "$rport" "$rpid" "$n" "$r"
		else
			load redis "$rport" "$rpid" "$n" "$r"
			load cuckoo "$cport" "$cpid" "$n" "$r"
		fi
		stop "$cpid" "$rpid"
	done
	echo "round $r done" >&2
done

echo
awk -F'|' "$stats_awk"'
function add(row, name, kb) {
	if (!(row in seen)) { seen[row] = 1; rows[++nrows] = row }
	val[row, name] = val[row, name] " " kb
}
{
	# $1 round, $2 N, $3 name, $4 rest, $5 rest anon, $6 after, $7 settled
	add("rest", $3, $4); add("rest, private", $3, $5)
	add("after " $2 " adds, growth", $3, $6 - $4)
	add("settled after " $2 " adds, growth", $3, $7 - $4)
	r[$1, $2, $3] = $4 "|" $5 "|" $6 - $4 "|" $7 - $4
	rounds[$1 "|" $2] = 1
}
END {
	for (k in rounds) {
		split(k, f, "|")
		if (!((f[1], f[2], "cuckoo") in r) || !((f[1], f[2], "redis") in r)) continue
		split(r[f[1], f[2], "cuckoo"], c, "|"); split(r[f[1], f[2], "redis"], b, "|")
		if (b[1] > 0) ratio["rest"] = ratio["rest"] " " c[1] / b[1]
		if (b[2] > 0) ratio["rest, private"] = ratio["rest, private"] " " c[2] / b[2]
		if (b[3] > 0) ratio["after " f[2] " adds, growth"] = ratio["after " f[2] " adds, growth"] " " c[3] / b[3]
		if (b[4] > 0) ratio["settled after " f[2] " adds, growth"] = ratio["settled after " f[2] " adds, growth"] " " c[4] / b[4]
	}
	printf "| MiB | cuckoo serve | redis-server 8 + RedisBloom | ratio |\n|---|--:|--:|--:|\n"
	for (i = 1; i <= nrows; i++) {
		row = rows[i]
		rt = "-"
		if (ratio[row] != "") rt = spread(ratio[row], 1)
		printf "| %s | %s | %s | %s |\n", row, spread(val[row, "cuckoo"], 1024), spread(val[row, "redis"], 1024), rt
	}
}' "$tmp/results"
