#!/usr/bin/env bash
# The CF.* commands of `cuckoo serve` against the same commands of a real
# RedisBloom module loaded into redis-server, in interleaved rounds (this
# machine is shared and noisy: compare within a round; which server goes
# first alternates from round to round). Each run is one redis-benchmark
# (50 clients, random items) of CF.ADD, CF.EXISTS, CF.MEXISTS of 10 items
# or CF.INSERT of 10 items, pipelined 16 deep and not pipelined; for each
# it records the requests a second and the server's CPU time a request.
# It runs twice, each with servers of its own, and prints a table each:
# one core each (both servers pinned to CPU 0 with taskset, cuckoo serve
# with GOMAXPROCS=1, redis-benchmark pinned to CPU 1), then unpinned, as a
# user runs them (cuckoo serve with every core, redis-benchmark beside).
#
#   bench/scripts/serve-vs-redisbloom.sh 3
#   MODES=pinned LAYOUT=redisbloom N=200000 bench/scripts/serve-vs-redisbloom.sh 2
#   MEMORY="10000 100000 1000000 20000000 30000000" bench/scripts/serve-vs-redisbloom.sh
#
# Argument: ROUNDS (default 3). Environment:
#   MODES       the tables to print, in order: "pinned unpinned" (default),
#               "pinned" (one core each; needs 2 CPUs) or "unpinned"
#   LAYOUT      cuckoo serve's --cf-layout: cuckoo (default) or redisbloom
#   GOMAXPROCS  passed to cuckoo serve only, when unpinned (unset: every
#               core); pinned, it is 1
#   PIPELINES   the pipeline depths to run (default "16 1")
#   MEMORY      sizes to measure memory at instead (below)
#   OPTIONS     CF.RESERVE's options there ("EXPANSION 0")
#   N           requests a run (default 300000); CAPACITY of CF.RESERVE k
#               (default 20000000), reserved afresh each round so that every
#               round starts from an empty filter
#   CUCKOO      a cuckoo binary to use instead of building ./cmd/cuckoo
#   ANCHOR      8.6: redis-server 8.6.3 with RedisBloom 8.6.2, the default
#               when it is built (REDIS8_SERVER, default
#               /tmp/redis8/bin/redis-server, and REDIS8_SO, default
#               /tmp/redis8/redisbloom.so); 2.6: Debian's redis-server 7.0
#               with the RedisBloom 2.6.28 module, the default otherwise;
#               or the path of another cuckoo binary, run as cuckoo serve
#               is (two builds side by side: ANCHOR=/tmp/cuckoo-old). The
#               heading says which.
#   REDISBLOOM_SO  the 2.6 module (default /tmp/redisbloom-build/redisbloom.so);
#               when it is missing it is built, offline, with
#               ../shared/tools/redisbloom/build-module from the GitHub
#               snapshots under MIRROR (default /work/.mirror)
#
# Both servers log every write and flush the log once a second:
# redis-server --appendonly yes --appendfsync everysec --save '' (no RDB
# snapshots; the AOF is still rewritten once it has grown past 64mb, by a
# forked child), and cuckoo serve --appendfsync everysec (it always logs)
# with its default save schedule, which snapshots and truncates the log
# once it has grown past --snapshot-log-size 64mb.
#
# CPU time is utime+stime of /proc/PID/stat, all threads, plus
# cutime+cstime: redis-server's AOF rewrites run in a child process whose
# time is added to its parent's when the child is reaped (cuckoo serve has
# no children). Clock ticks are getconf CLK_TCK (usually 10 ms), so a run
# should take a second or more.
#
# Needs redis-server, redis-cli and redis-benchmark (Debian's redis-server
# and redis-tools, 7.0), taskset (util-linux), perl (to ask the OS for a
# free port) and Go.
# Ports are chosen by the OS on 127.0.0.1; data goes to a temporary
# directory, removed with the servers, which are stopped by process id.
set -euo pipefail
ROUNDS=${1:-3}
LAYOUT=${LAYOUT:-cuckoo}
N=${N:-300000}
CAPACITY=${CAPACITY:-20000000}
MIRROR=${MIRROR:-/work/.mirror}
redis8=${REDIS8_SERVER:-/tmp/redis8/bin/redis-server}
redis8_so=${REDIS8_SO:-/tmp/redis8/redisbloom.so}
ANCHOR=${ANCHOR:-}
if [ -z "$ANCHOR" ]; then
	ANCHOR=2.6
	if [ -x "$redis8" ] && [ -f "$redis8_so" ]; then ANCHOR=8.6; fi
fi
case $ANCHOR in
8.6) redis_server=$redis8 so=$redis8_so ;;
2.6) redis_server=redis-server so=${REDISBLOOM_SO:-/tmp/redisbloom-build/redisbloom.so} ;;
*/*)
	[ -x "$ANCHOR" ] || { echo "ANCHOR $ANCHOR is not an executable" >&2; exit 2; }
	redis_server= so=
	;;
*)
	echo "ANCHOR must be 8.6, 2.6 or the path of a cuckoo binary, not $ANCHOR" >&2
	exit 2
	;;
esac
# The second server's name in the tables.
anchor=redisbloom
[ -z "$so" ] && anchor=anchor
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/bench/scripts/lib.sh"
gomaxprocs=${GOMAXPROCS:-} # for cuckoo serve alone, not go build
unset GOMAXPROCS

case $LAYOUT in cuckoo | redisbloom) ;; *)
	echo "LAYOUT must be cuckoo or redisbloom, not $LAYOUT" >&2
	exit 2
	;;
esac
MODES=${MODES:-pinned unpinned}
for m in $MODES; do
	case $m in pinned | unpinned) ;; *)
		echo "MODES holds pinned and unpinned, not $m" >&2
		exit 2
		;;
	esac
done
for c in redis-server redis-cli redis-benchmark taskset perl go getconf; do
	command -v "$c" >/dev/null || {
		echo "$c is not installed (redis-server and redis-tools for the redis ones)" >&2
		exit 2
	}
done

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The module: built from the snapshots when they are there. build-module
# sits in the shared folder beside the main checkout; from a worktree, that
# is beside the directory holding the common git dir.
if [ -n "$so" ] && [ ! -f "$so" ]; then
	build=${BUILD_MODULE:-$root/../shared/tools/redisbloom/build-module}
	if [ ! -x "$build" ]; then
		common=$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
		[ -n "$common" ] && build=$(dirname "$(dirname "$common")")/shared/tools/redisbloom/build-module
	fi
	if [ -x "$build" ] && [ -d "$MIRROR/RedisBloom+RedisBloom/repo" ]; then
		echo "building $so with $build (log: $so.build.log)" >&2
		mkdir -p "$(dirname "$so")"
		OUT=$(dirname "$so") MIRROR=$MIRROR "$build" >"$so.build.log" 2>&1 || {
			tail -20 "$so.build.log" >&2
			exit 2
		}
	fi
	if [ ! -f "$so" ]; then
		cat >&2 <<-EOF
			no RedisBloom module at $so. Set REDISBLOOM_SO to one built for this
			redis-server, or fetch the snapshots RedisBloom/RedisBloom,
			RedisBloom/t-digest-c, RedisLabsModules/RedisModulesSDK and
			RedisLabsModules/readies into \$MIRROR ($MIRROR) and run this again:
			it builds the module with ../shared/tools/redisbloom/build-module.
		EOF
		exit 2
	fi
fi

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
		[ "$(redis-cli -p "$1" PING 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
	done
	return 1
}

# start MODE: redis-server and cuckoo serve on ports the OS picked, each
# with an empty data directory; pinned, both run on CPU 0 and cuckoo serve
# with GOMAXPROCS=1. Sets rport, rpid, cport and cpid.
start() {
	local pin=() procs=$gomaxprocs try
	if [ "$1" = pinned ]; then pin=(taskset -c 0) procs=1; fi
	rm -rf "$tmp/redis-data" "$tmp/cuckoo-data" "$tmp/anchor-data"
	mkdir -p "$tmp/redis-data"
	if [ -z "$so" ]; then
		serve_cuckoo "$ANCHOR" anchor "$procs" "${pin[@]}"
		rport=$port rpid=$pid
	else
		# Tried again if another process took the port between pick and bind.
		for try in 1 2 3; do
			rport=$(freeport)
			"${pin[@]}" "$redis_server" --port "$rport" --bind 127.0.0.1 --dir "$tmp/redis-data" --loadmodule "$so" \
				--appendonly yes --appendfsync everysec --save '' >"$tmp/redis.log" 2>&1 &
			rpid=$!
			pids+=("$rpid")
			ready "$rport" && break
			kill "$rpid" 2>/dev/null || true
			[ "$try" = 3 ] && { cat "$tmp/redis.log" >&2; exit 1; }
		done
	fi
	serve_cuckoo "$cuckoo" cuckoo "$procs" "${pin[@]}"
	cport=$port cpid=$pid
}

# serve_cuckoo BIN NAME GOMAXPROCS [PIN...]: cuckoo serve, which binds
# 127.0.0.1:0 itself and logs the address it got. Sets port and pid.
serve_cuckoo() {
	local bin=$1 name=$2 procs=$3
	shift 3
	env ${procs:+GOMAXPROCS=$procs} "$@" "$bin" serve --addr 127.0.0.1:0 --dir "$tmp/$name-data" \
		--appendfsync everysec --snapshot-log-size 64mb --cf-layout "$LAYOUT" 2>"$tmp/$name.log" &
	pid=$!
	pids+=("$pid")
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*ready to accept connections.* addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/$name.log")
		[ -n "$port" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$port" ] || ! ready "$port"; then
		cat "$tmp/$name.log" >&2
		exit 1
	fi
}

# stop: both servers, by process id.
stop() {
	kill "$rpid" "$cpid" 2>/dev/null || true
	wait "$rpid" "$cpid" 2>/dev/null || true
}

hz=$(getconf CLK_TCK)
cputicks() { # pid: utime+stime+cutime+cstime, from the fields after "(comm)"
	sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13 + $14 + $15}'
}
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; } # kB
anon() { awk '/^RssAnon:/ {print $2}' "/proc/$1/status"; } # kB: RSS less the file pages (the binary's, shared and clean)

# MEMORY="n ...": instead of the benchmark, one filter a size on each
# server: CF.RESERVE mN N, N distinct items added, then CF.INFO's Size, the
# growth of the server's resident memory while it filled, and the rate of
# false positives among a million items never added (bench/cmd/servemem).
# The filters are kept, so that none is filled into memory an earlier one
# freed: each growth is its own filter's.
if [ -n "${MEMORY:-}" ]; then
	start unpinned
	servemem=$tmp/servemem
	(cd "$root/bench" && go build -o "$servemem" ./cmd/servemem)
	resident() { # when
		awk -v w="$1" -v cr="$(rss "$cpid")" -v ca="$(anon "$cpid")" -v rr="$(rss "$rpid")" -v ra="$(anon "$rpid")" 'BEGIN {
			printf "resident %s: cuckoo serve %.1f MiB (%.1f MiB of it private), redis-server with RedisBloom %.1f MiB (%.1f MiB private)\n",
				w, cr / 1024, ca / 1024, rr / 1024, ra / 1024 }'
	}
	resident "at rest"
	printf "| n | Size, cuckoo | Size, RedisBloom | ratio | RSS growth, cuckoo | RSS growth, RedisBloom | ratio | false positives, cuckoo | RedisBloom |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"
	for n in $MEMORY; do
		declare -A size rate grew refused
		for name in cuckoo redisbloom; do
			if [ $name = cuckoo ]; then port=$cport pid=$cpid; else port=$rport pid=$rpid; fi
			before=$(rss "$pid")
			out=$("$servemem" --addr "127.0.0.1:$port" --key "m$n" --n "$n" --options "${OPTIONS:-}")
			grew[$name]=$(($(rss "$pid") - before))
			size[$name]=$(echo "$out" | awk '{print $4}')
			rate[$name]=$(echo "$out" | awk '{print $NF}')
			refused[$name]=$(echo "$out" | awk '{print $12}')
		done
		awk -v n="$n" -v sc="${size[cuckoo]}" -v sr="${size[redisbloom]}" -v gc="${grew[cuckoo]}" -v gr="${grew[redisbloom]}" \
			-v fc="${rate[cuckoo]}" -v fr="${rate[redisbloom]}" 'BEGIN {
			ratio = "-"
			if (gr > 0) ratio = sprintf("%.2f×", gc / gr)
			printf "| %d | %d | %d | %.2f× | %.1f MiB | %.1f MiB | %s | %.3f%% | %.3f%% |\n", n, sc, sr, sc / sr,
				gc / 1024, gr / 1024, ratio, 100 * fc, 100 * fr }'
		if [ "${refused[cuckoo]}" != 0 ] || [ "${refused[redisbloom]}" != 0 ]; then
			echo "  (full: cuckoo serve refused ${refused[cuckoo]} of the $n items, RedisBloom ${refused[redisbloom]})"
		fi
	done
	resident "at the end"
	exit 0
fi

commands=("${serving_commands[@]}")

# run NAME PORT PID P ROUND CMD: one redis-benchmark; appends
# "round cmd P name rps µs/req" to the results.
run() {
	local name=$1 port=$2 pid=$3 p=$4 round=$5 cmd=$6 before after out rps
	before=$(cputicks "$pid")
	# shellcheck disable=SC2086 # the command is split into its words
	out=$("${bench_pin[@]}" redis-benchmark -p "$port" -n "$N" -c 50 -P "$p" -r 100000000 --csv $cmd 2>/dev/null)
	after=$(cputicks "$pid")
	rps=$(echo "$out" | awk -F'","' 'NR == 2 {print $2}')
	[ -n "$rps" ] || { echo "redis-benchmark against $name failed: $out" >&2; exit 1; }
	echo "$round|${cmd%% *}|$p|$name|$rps|$(awk -v t=$((after - before)) -v hz="$hz" -v n="$N" 'BEGIN {printf "%.3f", t / hz * 1e6 / n}')" >>"$tmp/results"
}

# table: one row per command and pipeline depth: median (min-max) over
# the rounds of each server's rate, of the ratio within a round, and of CPU
# time a request (ratio: cuckoo serve's over RedisBloom's, lower is less
# CPU).
table() {
awk -F'|' "$stats_awk"'
function k(x) { return sprintf("%.0fk", x / 1000) }
function rate(s) { return sprintf("%s (%s-%s)", k(med(s)), k(lo(s)), k(hi(s))) }
{
	row = $2 " -P " $3
	if (!(row in seen)) { seen[row] = 1; rows[++nrows] = row }
	rps[row, $4] = rps[row, $4] " " $5; cpu[row, $4] = cpu[row, $4] " " $6
	key[row, $1, $4] = $5 "|" $6
}
END {
	for (i = 1; i <= nrows; i++) {
		row = rows[i]
		for (rk in key) {
			split(rk, f, SUBSEP)
			if (f[1] != row || f[3] != "cuckoo" || !((row, f[2], "redisbloom") in key)) continue
			split(key[rk], c, "|"); split(key[row, f[2], "redisbloom"], b, "|")
			rr[row] = rr[row] " " c[1] / b[1]
			if (b[2] > 0) cr[row] = cr[row] " " c[2] / b[2]
		}
	}
	printf "%-17s %-19s %-19s %-18s %-21s %-21s %s\n", "", "cuckoo req/s", anchor " req/s", "ratio", "cuckoo µs/req", anchor " µs/req", "ratio"
	for (i = 1; i <= nrows; i++) {
		row = rows[i]
		printf "%-17s %-19s %-19s %-18s %-20s %-20s %s\n", row, rate(rps[row, "cuckoo"]), rate(rps[row, "redisbloom"]),
			spread(rr[row], 1), spread(cpu[row, "cuckoo"], 1), spread(cpu[row, "redisbloom"], 1),
			cr[row] == "" ? "-" : spread(cr[row], 1)
	}
}' anchor=$anchor "$tmp/results"
}

# The filters and the processes after the last round.
info() { # port field
	redis-cli -p "$1" CF.INFO k | awk -v f="$2" 'prev == f {print; exit} {prev = $0}'
}
after() { # name port pid
	printf "%-11s CF.INFO Size %s bytes, %s filters, %s items; RSS %d MiB\n" "$1" \
		"$(info "$2" Size)" "$(info "$2" "Number of filters")" "$(info "$2" "Number of items inserted")" \
		$(($(rss "$3") / 1024))
}

# bench MODE: the rounds, then the table.
bench() {
	local mode=$1 r port p cmd
	bench_pin=()
	if [ "$mode" = pinned ]; then
		[ "$(nproc)" -ge 2 ] || { echo "pinned needs 2 CPUs, this machine has $(nproc)" >&2; exit 2; }
		bench_pin=(taskset -c 1)
	fi
	start "$mode"
	rm -f "$tmp/results"
	local against heading
	against="another cuckoo serve, $ANCHOR"
	if [ -n "$so" ]; then
		# MODULE LIST names Redis 8's own vectorset module too: RedisBloom is bf.
		against="redis-server $("$redis_server" --version | sed 's/.*v=\([^ ]*\).*/\1/') with RedisBloom $(redis-cli -p "$rport" MODULE LIST |
			awk '$0 == "name" {getline; n = $0} $0 == "ver" && n == "bf" {getline; print; exit}')"
	fi
	heading="unpinned: cuckoo serve with GOMAXPROCS ${gomaxprocs:-unset} on $(nproc) CPUs, redis-benchmark beside them"
	[ "$mode" = pinned ] && heading="one core each: both servers on CPU 0 (cuckoo serve with GOMAXPROCS=1), redis-benchmark on CPU 1"
	echo
	echo "## $heading"
	echo "cuckoo serve (--cf-layout $LAYOUT) against $against (ANCHOR=$ANCHOR);" \
		"CF.RESERVE k $CAPACITY, $ROUNDS rounds of $N requests a run, 50 clients"
	for r in $(seq "$ROUNDS"); do
		for port in "$cport" "$rport"; do
			redis-cli -p "$port" DEL k >/dev/null
			[ "$(redis-cli -p "$port" CF.RESERVE k "$CAPACITY")" = OK ] || {
				echo "CF.RESERVE k $CAPACITY failed on port $port" >&2
				exit 1
			}
		done
		for p in ${PIPELINES:-16 1}; do
			for cmd in "${commands[@]}"; do
				if [ $((r % 2)) = 1 ]; then
					run cuckoo "$cport" "$cpid" "$p" "$r" "$cmd"
					run redisbloom "$rport" "$rpid" "$p" "$r" "$cmd"
				else
					run redisbloom "$rport" "$rpid" "$p" "$r" "$cmd"
					run cuckoo "$cport" "$cpid" "$p" "$r" "$cmd"
				fi
			done
		done
		echo "round $r done" >&2
	done
	echo
	table
	echo
	after cuckoo "$cport" "$cpid"
	after "$anchor" "$rport" "$rpid"
	stop
}

for m in $MODES; do bench "$m"; done
