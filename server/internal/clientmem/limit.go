package clientmem

import (
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/limits"
)

// Class is a client's client-output-buffer-limit class, as Redis's
// getClientType: a replica's link, a client with a subscription, or normal.
func Class(replicaLink, subscribed bool) int {
	switch {
	case replicaLink:
		return limits.ClassReplica
	case subscribed:
		return limits.ClassPubSub
	}
	return limits.ClassNormal
}

// Verdict is Check's decision.
type Verdict uint8

const (
	Under       Verdict = iota // below the soft limit, or no limit
	Soft                       // at the soft limit, for soft-seconds or less: marked
	SoftExpired                // at the soft limit for more than soft-seconds: close
	Hard                       // at the hard limit: close at once
)

// Over reports whether v closes the client.
func (v Verdict) Over() bool { return v >= SoftExpired }

// String names v.
func (v Verdict) String() string {
	return [...]string{"under", "soft", "soft-expired", "hard"}[v]
}

// Check decides on the client's output, out bytes at now, against lim, its
// class's limit: Hard at the hard limit; at the soft limit it marks now as
// the moment the client reached it, if not marked yet, and says
// SoftExpired if the mark is more than lim.SoftSeconds old, Soft if not;
// Under below it (the mark is left as it is: see CheckPublished). Safe for
// concurrent use: the first of concurrent markers wins.
func (u *Usage) Check(lim limits.OutputLimit, out int64, now time.Time) Verdict {
	switch {
	case lim.Hard > 0 && out >= lim.Hard:
		return Hard
	case lim.Soft > 0 && out >= lim.Soft:
		if u.softExpired(lim, now) {
			return SoftExpired
		}
		return Soft
	}
	return Under
}

// CheckPublished is the cron's Check of what the client published (its
// Output), which also clears the mark of a client below its soft limit.
func (u *Usage) CheckPublished(lim limits.OutputLimit, now time.Time) (Verdict, int64) {
	out := u.Output()
	v := u.Check(lim, out, now)
	if v == Under {
		u.softSince.Store(0)
	}
	return v, out
}

// softExpired marks now as the moment the output reached its soft limit,
// if not marked yet, and reports whether the mark is more than soft-seconds
// old.
func (u *Usage) softExpired(lim limits.OutputLimit, now time.Time) bool {
	since := u.softSince.Load()
	if since == 0 {
		u.softSince.CompareAndSwap(0, now.UnixNano())
		return false
	}
	return now.Sub(time.Unix(0, since)) > time.Duration(lim.SoftSeconds)*time.Second
}

// ReplyWritten clears the soft limit's mark once a pipeline's replies are
// written, unless pushes waiting keep the client at lim.Soft: below it, the
// time at it is no longer continuous. (A mark left would close the client
// the next time it reaches the limit, should the cron not check its class.)
func (u *Usage) ReplyWritten(lim limits.OutputLimit) {
	if u.softSince.Load() == 0 {
		return
	}
	if u.push.Load() < lim.Soft || lim.Soft == 0 {
		u.softSince.Store(0)
	}
}
