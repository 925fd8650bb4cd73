package acl

import (
	"sync"
	"time"
)

// LogEntry is one ACL LOG entry: a denied command, key or authentication.
type LogEntry struct {
	Count      int
	Reason     string // "command", "key", "channel" or "auth"
	Context    string // "toplevel" or "multi"
	Object     string // the command, the key, or "AUTH"
	Username   string
	ClientInfo string
	ID         int64
	Created    time.Time
	Updated    time.Time
}

// Log keeps the most recent denials, newest first, merging a denial into
// an equal one (same reason, context, object and user) less than a minute
// old, as Redis does.
type Log struct {
	mu      sync.Mutex
	entries []LogEntry
	max     int
	nextID  int64
}

// NewLog returns a log of at most max entries (Redis's acllog-max-len).
func NewLog(max int) *Log { return &Log{max: max} }

// Add records a denial.
func (l *Log) Add(e LogEntry, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range min(len(l.entries), 10) {
		o := &l.entries[i]
		if o.Reason == e.Reason && o.Context == e.Context && o.Object == e.Object && o.Username == e.Username &&
			now.Sub(o.Updated) < time.Minute {
			o.Count++
			o.Updated = now
			o.ClientInfo = e.ClientInfo
			moved := *o
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = moved
			return
		}
	}
	e.Count, e.ID, e.Created, e.Updated = 1, l.nextID, now, now
	l.nextID++
	l.entries = append([]LogEntry{e}, l.entries...)
	if len(l.entries) > l.max {
		l.entries = l.entries[:l.max]
	}
}

// Entries returns at most n entries, newest first.
func (l *Log) Entries(n int) []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LogEntry(nil), l.entries[:min(n, len(l.entries))]...)
}

// Reset empties the log.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}
