#!/usr/bin/env bash
# Build cuckoo from this worktree and run RedisBloom's CF flow tests against
# all three targets: RedisBloom itself, cuckoo serve's redisbloom layout and
# its own layout. Each target's table goes to stdout, one after another.
#
#   bench/scripts/redisbloom-flow/run.sh [TAG] [runner.py options]
#
# The anchor (the redisbloom target, and the release cuckoo-rb answers as)
# is Redis 8.6.3 with RedisBloom 8.6.2 when it is built, else Redis 7 with
# the 2.6.28 module; ANCHOR=8.6 or 2.6 chooses (with-server.sh). TAG
# defaults to the anchor's (v8.6.2 or v2.6.28).
#
# The binary is built into a temporary directory (a shared /tmp/cuckoo may
# be rebuilt from another checkout meanwhile); CUCKOO=path uses that binary
# instead, unbuilt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tag=${1:-} # with-server.sh takes the anchor's tag for ""
shift $(($# < 1 ? $# : 1))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${CUCKOO:-}" ]; then
	CUCKOO=$tmp/cuckoo
	(cd "$here/../../.." && go build -o "$CUCKOO" ./cmd/cuckoo)
	echo "cuckoo built from $(git -C "$here" describe --always --dirty)"
fi
export CUCKOO
status=0
for target in redisbloom cuckoo-rb cuckoo; do
	echo "=== $target"
	"$here/with-server.sh" "$target" "$tag" "$@" || status=$?
	echo
done
exit "$status"
