#!/usr/bin/env bash
# RedisBloom's test_counter_overflow_with_large_number_of_items, timed:
# CF.RESERVE cf 2 BUCKETSIZE 1 EXPANSION 1, then one CF.INSERT cf ITEMS
# with N copies of "1 ", which grows the filter to 65,535 two-slot
# sub-filters. cuckoo serve (--cf-layout redisbloom, no log) and
# redis-server with RedisBloom take turns, ROUNDS rounds; each line is one
# server's seconds for the CF.INSERT and a hash of its replies (DEL's,
# CF.RESERVE's and the CF.INSERT's), which must match across servers.
#
#   go build -o /tmp/cuckoo ./cmd/cuckoo
#   CUCKOO=/tmp/cuckoo REDIS=/tmp/redis8/bin/redis-server \
#     MODULE=/tmp/redis8/redisbloom.so bench/scripts/many-subfilters.sh 5
#
# Needs perl. Ports are the OS's picks; servers are stopped by process id.
set -euo pipefail
ROUNDS=${1:-3}
CUCKOO=${CUCKOO:?set CUCKOO to a cuckoo binary}
REDIS=${REDIS:?set REDIS to a redis-server}
MODULE=${MODULE:?set MODULE to the RedisBloom module, redisbloom.so}
N=${N:-140000}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
port() { perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1:0")->sockport'; }
pr=$(port)
pc=$(port)
"$REDIS" --port "$pr" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" --loadmodule "$MODULE" >"$tmp/redis.log" 2>&1 &
pids+=($!)
"$CUCKOO" serve --addr "127.0.0.1:$pc" --dir "" --cf-layout redisbloom 2>"$tmp/cuckoo.log" &
pids+=($!)
sleep 1

# insert PORT: one round against the server at PORT.
insert() {
	perl -MIO::Socket::INET -MTime::HiRes=time -MDigest::MD5=md5_hex -e '
		my ($port, $n) = @ARGV;
		my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port") or die "connect: $!";
		sub cmd { my $r = "*" . @_ . "\r\n"; $r .= "\$" . length($_) . "\r\n$_\r\n" for @_; $r }
		my $replies = "";
		sub reply { # one reply, its lines kept in $replies
			my $l = <$s>; $replies .= $l;
			if ($l =~ /^\*(\d+)/) { reply() for 1 .. $1 }
			elsif ($l =~ /^\$(\d+)/) { read($s, my $b, $1 + 2); $replies .= $b }
		}
		print $s cmd("DEL", "cf"), cmd("CF.RESERVE", "cf", 2, "BUCKETSIZE", 1, "EXPANSION", 1);
		reply(); reply();
		my $req = cmd("CF.INSERT", "cf", "ITEMS", ("1 ") x $n);
		my $t = time;
		print $s $req;
		reply();
		printf "%.3f s, replies %s\n", time - $t, substr(md5_hex($replies), 0, 12);
	' "$1" "$N"
}
for r in $(seq "$ROUNDS"); do
	echo "round $r redis+redisbloom $(insert "$pr")"
	echo "round $r cuckoo-serve     $(insert "$pc")"
done
