package server_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
)

// TestCommandInfoAsRedis8: COMMAND INFO of every CF command is Redis
// 8.6.3's with RedisBloom 8.6.2, reply for reply, but CF.COMPACT's, which
// RedisBloom calls readonly and fast though it changes the filter: here it
// is a write, logged and replicated, and refused to read-only users.
func TestCommandInfoAsRedis8(t *testing.T) {
	redis8 := resptest.Dial(t, redistest.StartRedis8(t))
	_, addr := start(t, server.Config{})
	ours := resptest.Dial(t, addr)
	names, ok := redis8.Do("COMMAND", "LIST", "FILTERBY", "PATTERN", "cf.*").([]any)
	if !ok || len(names) < 14 {
		t.Fatalf("Redis 8 lists the CF commands as %v", names)
	}
	for _, n := range names {
		name := fmt.Sprint(n)
		want, got := redis8.Do("COMMAND", "INFO", name), ours.Do("COMMAND", "INFO", name)
		same := reflect.DeepEqual(want, got)
		switch {
		case name == "cf.compact" && same:
			t.Errorf("COMMAND INFO cf.compact is Redis 8's; it should say write")
		case name != "cf.compact" && !same:
			t.Errorf("COMMAND INFO %s:\n got %v\nwant %v", name, got, want)
		}
	}
}
