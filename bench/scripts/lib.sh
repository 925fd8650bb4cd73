# Sourced by the serving benchmarks (serve-vs-redisbloom.sh, rss-vs-redis.sh,
# pgo-profile.sh): what they share.

# serving_commands: the CF.* commands the serving benchmarks run, one
# redis-benchmark command line each, with its random items: CF.ADD,
# CF.EXISTS, and CF.MEXISTS and CF.INSERT of 10 items.
items10=$(printf ' __rand_int__%.0s' $(seq 10))
serving_commands=(
	"CF.ADD k __rand_int__"
	"CF.EXISTS k __rand_int__"
	"CF.MEXISTS k$items10"
	"CF.INSERT k ITEMS$items10"
)

# stats_awk: awk functions over a list of numbers in a string, separated by
# spaces, to put before a program that uses them. sorted(s) puts them in
# order into v[1..n] and returns n (mawk has no asort); med, lo and hi are
# the median, least and greatest; spread(s, unit) is "median (least-
# greatest)", each divided by unit, to two places.
# shellcheck disable=SC2016 # awk's program, not the shell's
stats_awk='
function sorted(s,   n, i, j, x) {
	n = split(s, v, " ")
	for (i = 2; i <= n; i++) {
		x = v[i] + 0
		for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]
		v[j + 1] = x
	}
	return n
}
function med(s,   n) { n = sorted(s); return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
function lo(s) { sorted(s); return v[1] }
function hi(s,   n) { n = sorted(s); return v[n] }
function spread(s, unit) { return sprintf("%.2f (%.2f-%.2f)", med(s) / unit, lo(s) / unit, hi(s) / unit) }
'
