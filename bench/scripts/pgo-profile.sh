#!/usr/bin/env bash
# A CPU profile of cuckoo serve under the serving benchmarks, for Go's
# profile-guided optimization: cuckoo serve, built without a profile, runs
# under redis-benchmark's serving mix with --cpuprofile, once a layout, and
# the profiles are merged into one. A build reads it with -pgo, or from
# cmd/cuckoo/default.pgo; then compare the two builds side by side:
#
#   bench/scripts/pgo-profile.sh                      # writes ./serve.pgo
#   (cd cmd/cuckoo && go build -pgo=off -o /tmp/cuckoo-nopgo . &&
#     go build -pgo=../../serve.pgo -o /tmp/cuckoo-pgo .)
#   CUCKOO=/tmp/cuckoo-pgo ANCHOR=/tmp/cuckoo-nopgo bench/scripts/serve-vs-redisbloom.sh 3
#
# Measured so (issue 43, docs/performance.md), the profile did not pay
# beyond the noise of this machine, and the repository holds no
# default.pgo.
#
# The mix is what bench/scripts/serve-vs-redisbloom.sh measures: CF.ADD,
# CF.EXISTS, CF.MEXISTS of 10 items and CF.INSERT of 10 items, pipelined 16
# deep and not pipelined, 50 clients, random items, into CF.RESERVE k
# 20000000, with --cf-layout cuckoo and then redisbloom; every core, as a
# user runs it. Environment: N (requests a run, default 300000), OUT (the
# merged profile, default ./serve.pgo).
#
# Needs redis-cli and redis-benchmark (redis-tools) and Go. cuckoo serve
# binds 127.0.0.1:0 and is stopped by SHUTDOWN, which writes the profile;
# its data goes to a temporary directory, removed at the end.
set -euo pipefail
N=${N:-300000}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/bench/scripts/lib.sh"
OUT=${OUT:-serve.pgo}
for c in redis-cli redis-benchmark go; do
	command -v "$c" >/dev/null || {
		echo "$c is not installed (redis-tools for the redis ones)" >&2
		exit 2
	}
done

tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Built without a profile, so that the profile is of the code as it stands.
(cd "$root/cmd/cuckoo" && go build -pgo=off -o "$tmp/cuckoo" .)

commands=("${serving_commands[@]}")
profiles=()
for layout in cuckoo redisbloom; do
	"$tmp/cuckoo" serve --addr 127.0.0.1:0 --dir "$tmp/data-$layout" --appendfsync everysec \
		--cf-layout "$layout" --cpuprofile "$tmp/$layout.pprof" 2>"$tmp/$layout.log" &
	pid=$!
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*ready to accept connections.* addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/$layout.log")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { cat "$tmp/$layout.log" >&2; exit 1; }
	redis-cli -p "$port" CF.RESERVE k 20000000 >/dev/null
	for p in 16 1; do
		for cmd in "${commands[@]}"; do
			# shellcheck disable=SC2086 # the command is split into its words
			redis-benchmark -p "$port" -n "$N" -c 50 -P "$p" -r 100000000 -q $cmd >/dev/null
		done
	done
	redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
	wait "$pid" || true
	pid=
	grep -q "cpu profile written" "$tmp/$layout.log" || { cat "$tmp/$layout.log" >&2; exit 1; }
	profiles+=("$tmp/$layout.pprof")
	echo "--cf-layout $layout profiled" >&2
done
go tool pprof -proto "$tmp/cuckoo" "${profiles[@]}" >"$tmp/merged.pgo" 2>/dev/null
mv "$tmp/merged.pgo" "$OUT"
echo "wrote $OUT ($(wc -c <"$OUT") bytes)"
