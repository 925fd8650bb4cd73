#!/usr/bin/env bash
# Start one server on a port the OS picks, run RedisBloom's CF flow tests
# against it (runner.py), and stop the server by its process id.
#
#   ./with-server.sh redisbloom|cuckoo-rb|cuckoo [TAG] [runner.py options]
#
#   redisbloom  the anchor: redis-server with the RedisBloom module
#   cuckoo-rb   cuckoo serve --cf-layout redisbloom (CUCKOO, default /tmp/cuckoo)
#   cuckoo      cuckoo serve with its default layout
#
# The anchor is RedisBloom 8.6.2 in Redis 8.6.3 when it is built
# (CUCKOO_REDIS8_SERVER, default /tmp/redis8/bin/redis-server, and
# CUCKOO_REDIS8_MODULE, default /tmp/redis8/redisbloom.so), else the
# RedisBloom 2.6.28 module (CUCKOO_REDISBLOOM_MODULE, default
# /tmp/redisbloom-build/redisbloom.so) in the redis-server on the PATH;
# ANCHOR=8.6 or ANCHOR=2.6 chooses. cuckoo serve answers as the anchor's
# release (--redisbloom-compat), and under 8.6 the tests' version checks
# compare with 8.6.3 (runner.py --as-version), as cuckoo serve reports 7.2.0.
# The script says which anchor it took.
#
# TAG is the RedisBloom tag the tests are taken from (default the anchor's:
# v8.6.2 or v2.6.28).
# REPLICA=1 also starts a replica of the same kind, for the tests that ask
# for one (Env(useSlaves=True)); without it they are skipped.
# Exit status: runner.py's (0 all passed or skipped, 1 a test failed, 2 the
# run could not start); 3 when a server was gone at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${1:?usage: with-server.sh redisbloom|cuckoo-rb|cuckoo [TAG] [runner options]}

redis8=${CUCKOO_REDIS8_SERVER:-/tmp/redis8/bin/redis-server}
redis8_module=${CUCKOO_REDIS8_MODULE:-/tmp/redis8/redisbloom.so}
anchor=${ANCHOR:-}
if [ -z "$anchor" ]; then
	anchor=2.6
	if [ -x "$redis8" ] && [ -f "$redis8_module" ]; then anchor=8.6; fi
fi
as_version=()
case $anchor in
8.6)
	redis_bin=$redis8 module=$redis8_module default_tag=v8.6.2
	as_version=(--as-version 8.6.3)
	echo "with-server.sh: anchor RedisBloom 8.6.2 in Redis 8.6.3 ($redis8); ANCHOR=2.6 for 2.6.28" >&2
	;;
2.6)
	redis_bin=redis-server module=${CUCKOO_REDISBLOOM_MODULE:-/tmp/redisbloom-build/redisbloom.so} default_tag=v2.6.28
	echo "with-server.sh: anchor RedisBloom 2.6.28 in $(redis-server --version | cut -d' ' -f3) (no Redis 8 at $redis8, or ANCHOR=2.6)" >&2
	;;
*)
	echo "with-server.sh: ANCHOR=$anchor: want 8.6 or 2.6" >&2
	exit 2
	;;
esac
tag=${2:-$default_tag}
shift $(($# < 2 ? $# : 2))

tmp=$(mktemp -d)
pids=() names=() # the servers started, and their names (server, replica)
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# start_redis NAME [ARGS]: redis-server with the module, data in $tmp/NAME,
# on a port the OS picked for a socket closed at once; sets addr.
# enable-debug-command as RLTest starts it: dumpAndReload runs DEBUG RELOAD.
start_redis() {
	local name=$1 port
	shift
	port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$tmp/$name"
	"$redis_bin" --port "$port" --bind 127.0.0.1 --loadmodule "$module" --save '' --appendonly no \
		--dir "$tmp/$name" --enable-debug-command local "$@" >"$tmp/$name.log" 2>&1 &
	pids+=($!)
	names+=("$name")
	addr=127.0.0.1:$port
}

# start_cuckoo NAME [ARGS]: cuckoo serve, data in $tmp/NAME, on port 0 (it
# binds a free port and logs the address it got); sets addr.
start_cuckoo() {
	local name=$1 pid
	shift
	"$bin" serve --addr 127.0.0.1:0 --dir "$tmp/$name" --cf-layout "$layout" "${debug[@]}" "$@" \
		>"$tmp/$name.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	names+=("$name")
	addr=""
	for _ in $(seq 100); do
		addr=$(sed -n 's/.*ready to accept connections.* addr=\([^ ]*\).*/\1/p' "$tmp/$name.log")
		if [ -n "$addr" ] || ! kill -0 "$pid" 2>/dev/null; then break; fi
		sleep 0.1
	done
	if [ -z "$addr" ]; then
		echo "with-server.sh: cuckoo serve did not start:" >&2
		cat "$tmp/$name.log" >&2
		exit 2
	fi
}

replica=()
case $target in
redisbloom)
	as_version=()
	if [ ! -f "$module" ]; then
		echo "with-server.sh: no RedisBloom module at $module (set CUCKOO_REDISBLOOM_MODULE or CUCKOO_REDIS8_MODULE)" >&2
		exit 2
	fi
	start_redis server
	primary=$addr
	if [ "${REPLICA:-}" = 1 ]; then
		start_redis replica --replicaof 127.0.0.1 "${primary##*:}"
		replica=(--replica "$addr")
	fi
	;;
cuckoo | cuckoo-rb)
	bin=${CUCKOO:-/tmp/cuckoo}
	if [ ! -x "$bin" ]; then
		echo "with-server.sh: no cuckoo binary at $bin (go build -o /tmp/cuckoo ./cmd/cuckoo, or set CUCKOO)" >&2
		exit 2
	fi
	layout=cuckoo
	[ "$target" = cuckoo-rb ] && layout=redisbloom
	# The help is read whole first: grep -q on a pipe exits at the match, and
	# under pipefail the writer's broken pipe would fail the test at random.
	help=$("$bin" serve --help 2>&1 || true)
	# DEBUG RELOAD for dumpAndReload, where this build has it (as for redis-server).
	debug=()
	if grep -q enable-debug-command <<<"$help"; then debug=(--enable-debug-command local); fi
	# The anchor's replies, where this build can give either.
	if grep -q redisbloom-compat <<<"$help"; then debug+=(--redisbloom-compat "$anchor"); fi
	start_cuckoo server
	primary=$addr
	if [ "${REPLICA:-}" = 1 ]; then
		start_cuckoo replica --replicaof "127.0.0.1 ${primary##*:}"
		replica=(--replica "$addr")
	fi
	;;
*)
	echo "with-server.sh: unknown target $target (redisbloom, cuckoo-rb or cuckoo)" >&2
	exit 2
	;;
esac

status=0
/usr/bin/python3 "$here/runner.py" --addr "$primary" "${replica[@]}" "${as_version[@]}" --tag "$tag" --label "$target" "$@" || status=$?
for i in "${!pids[@]}"; do
	if ! kill -0 "${pids[$i]}" 2>/dev/null; then
		echo "with-server.sh: the ${names[$i]} (pid ${pids[$i]}) was gone at the end; its log's last lines:" >&2
		tail -n 20 "$tmp/${names[$i]}.log" >&2
		status=3
	fi
done
exit "$status"
