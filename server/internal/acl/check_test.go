package acl_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
)

// keyAt is a KeySpec of fixed positions: read keys, then write keys.
type keyAt struct{ read, write []int }

func (k keyAt) KeyAccess(args [][]byte, fn func(pos int, read, write bool) bool) {
	for _, p := range k.read {
		if !fn(p, true, false) {
			return
		}
	}
	for _, p := range k.write {
		if !fn(p, false, true) {
			return
		}
	}
}

func request(words ...string) [][]byte {
	args := make([][]byte, len(words))
	for i, w := range words {
		args[i] = []byte(w)
	}
	return args
}

// TestDenial: the command is checked first, then its keys (with the access
// each needs), then its channels, and the first of them refused is named.
func TestDenial(t *testing.T) {
	cat := catalog()
	u, err := acl.NewUser("u", cat).Apply("on", "+cf.add", "+cf.exists", "~a:*", "%R~r:*", "&news.*")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		id      int
		keys    acl.KeySpec
		args    []string
		chans   []string
		pattern bool
		reason  string
		object  string
	}{
		{"allowed", 0, keyAt{write: []int{1}}, []string{"cf.add", "a:1", "x"}, nil, false, "", ""},
		{"command", 5, nil, []string{"flushall"}, nil, false, acl.DeniedCommand, ""},
		{"command before key", 3, keyAt{write: []int{1}}, []string{"client", "b:1"}, nil, false, acl.DeniedCommand, ""},
		{"key", 0, keyAt{write: []int{1}}, []string{"cf.add", "b:1", "x"}, nil, false, acl.DeniedKey, "b:1"},
		{"read-only key read", 1, keyAt{read: []int{1}}, []string{"cf.exists", "r:1", "x"}, nil, false, "", ""},
		{"read-only key written", 0, keyAt{write: []int{1}}, []string{"cf.add", "r:1", "x"}, nil, false, acl.DeniedKey, "r:1"},
		{"first key refused", 0, keyAt{write: []int{1, 2, 3}}, []string{"cf.add", "a:1", "b:2", "c:3"}, nil, false, acl.DeniedKey, "b:2"},
		{"channel", 0, nil, []string{"cf.add", "x"}, []string{"news.1", "sport"}, false, acl.DeniedChannel, "sport"},
		{"channel matched", 0, nil, []string{"cf.add", "x"}, []string{"news.1", "news.2"}, false, "", ""},
		{"pattern literal", 0, nil, []string{"cf.add", "x"}, []string{"news.*"}, true, "", ""},
		{"pattern not literal", 0, nil, []string{"cf.add", "x"}, []string{"news.1*"}, true, acl.DeniedChannel, "news.1*"},
		{"key before channel", 0, keyAt{write: []int{1}}, []string{"cf.add", "b:1"}, []string{"sport"}, false, acl.DeniedKey, "b:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var chans [][]byte
			if tc.chans != nil {
				chans = request(tc.chans...)
			}
			reason, object := u.Denial(tc.id, tc.keys, request(tc.args...), chans, tc.pattern)
			if reason != tc.reason || string(object) != tc.object {
				t.Errorf("Denial = %q, %q; want %q, %q", reason, object, tc.reason, tc.object)
			}
		})
	}
	// An unrestricted user is never denied, nor are its keys listed.
	all, err := acl.NewUser("all", cat).Apply("on", "+@all", "allkeys", "allchannels")
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	spy := keyFunc(func() { listed = true })
	if reason, _ := all.Denial(5, spy, request("flushall"), request("any"), true); reason != "" || listed {
		t.Errorf("unrestricted user: Denial = %q, keys listed %v", reason, listed)
	}
}

// keyFunc is a KeySpec that calls f and lists no keys.
type keyFunc func()

func (f keyFunc) KeyAccess([][]byte, func(int, bool, bool) bool) { f() }

// TestChannelsOf: the channels of each pub/sub command ACL checks, and none
// for the others, nor for a request too short to name one.
func TestChannelsOf(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		chans   string
		pattern bool
	}{
		{[]string{"publish", "ch", "msg"}, "ch", false},
		{[]string{"spublish", "ch", "msg"}, "ch", false},
		{[]string{"subscribe", "a", "b"}, "a b", false},
		{[]string{"ssubscribe", "a"}, "a", false},
		{[]string{"psubscribe", "a*", "b?"}, "a* b?", true},
		{[]string{"unsubscribe", "a"}, "", false},
		{[]string{"punsubscribe", "a*"}, "", false},
		{[]string{"cf.add", "k", "x"}, "", false},
		{[]string{"publish"}, "", false},
		{[]string{"subscribe"}, "", false},
	} {
		chans, pattern := acl.Channels(tc.args[0], request(tc.args...))
		var got []string
		for _, c := range chans {
			got = append(got, string(c))
		}
		if strings.Join(got, " ") != tc.chans || pattern != tc.pattern {
			t.Errorf("Channels(%q) = %q, %v; want %q, %v", tc.args, got, pattern, tc.chans, tc.pattern)
		}
	}
}

// TestGenPass: a password has (bits+3)/4 hex digits, a fresh one each
// time; bits out of [1, 4096] are refused.
func TestGenPass(t *testing.T) {
	for _, bits := range []int{1, 4, 5, 8, 255, 256, 4096} {
		a, err := acl.GenPass(bits)
		if err != nil {
			t.Fatalf("GenPass(%d): %v", bits, err)
		}
		b, _ := acl.GenPass(bits)
		if len(a) != (bits+3)/4 {
			t.Errorf("GenPass(%d) = %q: %d digits", bits, a, len(a))
		}
		if _, err := hex.DecodeString(a + strings.Repeat("0", len(a)%2)); err != nil {
			t.Errorf("GenPass(%d) = %q: not hex", bits, a)
		}
		if bits >= 64 && a == b {
			t.Errorf("GenPass(%d) twice gave %q", bits, a)
		}
	}
	for _, bits := range []int{0, -1, acl.MaxGenPassBits + 1} {
		if p, err := acl.GenPass(bits); !errors.Is(err, acl.ErrGenPassBits) || p != "" {
			t.Errorf("GenPass(%d) = %q, %v; want ErrGenPassBits", bits, p, err)
		}
	}
	if want := "ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"; acl.ErrGenPassBits.Error() != want {
		t.Errorf("ErrGenPassBits = %q", acl.ErrGenPassBits)
	}
}

func ExampleUser_Denial() {
	cat := acl.NewCatalog([]acl.Command{{ID: 0, Name: "publish", Categories: []string{"pubsub"}}})
	u, _ := acl.NewUser("alice", cat).Apply("on", "+publish", "&news.*")
	args := [][]byte{[]byte("publish"), []byte("sport"), []byte("goal")}
	chans, pattern := acl.Channels("publish", args)
	reason, object := u.Denial(0, nil, args, chans, pattern)
	fmt.Println(reason, string(object))
	// Output: channel sport
}
