#!/usr/bin/env bash
# Where cuckoo serve's CPU time goes under redis-benchmark: perf samples of
# the server process, sorted into kinds of work (the kernel's network path
# and syscalls, the kernel's scheduler, the Go scheduler, memory and GC,
# RESP parsing, dispatch and keys, the log, the filter), each as a share
# of the samples and as µs of CPU a request.
#
#   bench/scripts/profile-serve.sh CF.EXISTS 16
#   LAYOUT=redisbloom bench/scripts/profile-serve.sh CF.ADD 1
#
# Arguments: COMMAND (CF.ADD, CF.EXISTS, CF.MEXISTS or CF.INSERT; the last
# two with 10 items) and PIPELINE depth (default 16). Environment: LAYOUT
# (cuckoo or redisbloom), N (requests measured, default 1000000),
# GOMAXPROCS (for cuckoo serve only), CUCKOO (a binary instead of building
# ./cmd/cuckoo), PERF_DATA (keep perf's data file there).
#
# The filter is CF.RESERVE k 20000000 filled with N random adds first, so
# that lookups run against a table far larger than the caches. Needs perf
# (Debian's linux-perf; /proc/sys/kernel/perf_event_paranoid at most 1, or
# root), redis-benchmark and redis-cli (redis-tools), perl and Go. The
# server listens on a port the OS picks and is stopped by its process id.
set -euo pipefail
CMD=${1:-CF.EXISTS}
P=${2:-16}
LAYOUT=${LAYOUT:-cuckoo}
N=${N:-1000000}
root=$(cd "$(dirname "$0")/../.." && pwd)
gomaxprocs=${GOMAXPROCS:-}
unset GOMAXPROCS

for c in perf redis-benchmark redis-cli perl go getconf; do
	command -v "$c" >/dev/null || {
		echo "$c is not installed" >&2
		exit 2
	}
done
case $CMD in
CF.ADD | CF.EXISTS) args=(k __rand_int__) ;;
CF.MEXISTS) args=(k $(for i in $(seq 10); do printf '__rand_int__ '; done)) ;;
CF.INSERT) args=(k ITEMS $(for i in $(seq 10); do printf '__rand_int__ '; done)) ;;
*)
	echo "COMMAND must be CF.ADD, CF.EXISTS, CF.MEXISTS or CF.INSERT, not $CMD" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
cuckoo=${CUCKOO:-}
if [ -z "$cuckoo" ]; then
	(cd "$root" && go build -o "$tmp/cuckoo" ./cmd/cuckoo)
	cuckoo=$tmp/cuckoo
fi
port=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1:0")->sockport')
GOMAXPROCS=$gomaxprocs "$cuckoo" serve --addr "127.0.0.1:$port" --dir "$tmp/data" \
	--appendfsync everysec --cf-layout "$LAYOUT" >"$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	[ "$(redis-cli -p "$port" PING 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
redis-cli -p "$port" CF.RESERVE k 20000000 >/dev/null
redis-benchmark -p "$port" -n "$N" -c 50 -P 16 -r 100000000 -q CF.ADD k __rand_int__ >/dev/null

tck=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
data=${PERF_DATA:-$tmp/perf.data}
c0=$(cpu)
perf record -q -F 999 -p "$pid" -o "$data" -- \
	redis-benchmark -p "$port" -n "$N" -c 50 -P "$P" -r 100000000 -q "$CMD" "${args[@]}" >"$tmp/bench" 2>&1
c1=$(cpu)
rate=$(tr '\r' '\n' <"$tmp/bench" | sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' | tail -1)
us=$(awk -v a="$c0" -v b="$c1" -v t="$tck" -v n="$N" 'BEGIN {printf "%.2f", (b - a) / t * 1e6 / n}')
echo "cuckoo serve --cf-layout $LAYOUT (GOMAXPROCS ${gomaxprocs:-unset}): $CMD -P $P, $N requests, 50 clients:" \
	"$rate requests a second, $us µs of server CPU a request"
echo

# Each sample's symbol, sorted into a kind of work by the first pattern
# that matches it.
perf report -i "$data" --no-children --sort sym --stdio 2>/dev/null |
	awk -v us="$us" '
	/^ +[0-9.]+%/ {
		pct = $1; sub(/%/, "", pct)
		sym = $0; sub(/^ +[0-9.]+% +\[[.k]\] /, "", sym)
		kernel = $2 == "[k]"
		if (kernel && sym ~ /finish_task_switch|__schedule|schedule|_raw_spin_unlock_irq|try_to_wake_up|futex|nanosleep|hrtimer|ttwu|enqueue_|dequeue_|select_task|update_curr|pick_next|psi_|cpuacct|idle/) k = "kernel: scheduler, sleeps and wake-ups"
		else if (kernel) k = "kernel: network, syscalls and files"
		else if (sym ~ /^runtime\.(mallocgc|gc|scan|mark|sweep|heap|memclr|greyobject|findObject|wbBuf|bulkBarrier|typePointers|tryDefer|spanOf|nextFreeFast|mspan|mcache|mcentral|mheap)/ || sym ~ /^runtime\..*[Gg][Cc]/) k = "Go: memory and GC"
		else if (sym ~ /^runtime\.|^internal\/runtime|^internal\/poll|^syscall\.|^net\.|^__vdso|^time\./) k = "Go: scheduler, netpoll and syscall wrappers"
		else if (sym ~ /server\/internal\/resp\./) k = "RESP parsing and replies"
		else if (sym ~ /keyspace\.\(\*AOF\)|AppendRecord|RecordCRC|crc32|castagnoli|backlog/) k = "the log and replication"
		else if (sym ~ /cuckoo\/(growing|redisbloom|lockfree|filter|internal\/(linhash|written|swar|hashing))|server\/internal\/cf\.|xxh3|MurmurHash/) k = "the filter"
		else if (sym ~ /cuckoo\/server|hashmap|aeshash|mapaccess|indexbyte|memeqbody|EqualFold|memmove|cmpbody/) k = "dispatch, keys and connection"
		else k = "other"
		share[k] += pct
	}
	END {
		n = 0
		for (k in share) order[++n] = k
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (share[order[j]] > share[order[i]]) { t = order[i]; order[i] = order[j]; order[j] = t }
		printf "%-46s %7s %12s\n", "", "share", "µs/request"
		for (i = 1; i <= n; i++) printf "%-46s %6.1f%% %12.2f\n", order[i], share[order[i]], share[order[i]] / 100 * us
	}'
