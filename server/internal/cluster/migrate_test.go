package cluster_test

import (
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/peer"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// target is a fake MIGRATE target on 127.0.0.1: it records every command
// it reads and answers each with answer's reply (a whole line).
type target struct {
	addr   string
	mu     sync.Mutex
	cmds   [][]string
	answer func(cmd []string) string
}

func newTarget(t *testing.T, answer func(cmd []string) string) *target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tg := &target{addr: ln.Addr().String(), answer: answer}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go tg.serve(nc)
		}
	}()
	return tg
}

func (tg *target) serve(nc net.Conn) {
	defer nc.Close()
	lim := resp.Limits{MaxArgs: 16, MaxBulk: 1 << 20, QueryBuffer: 2 << 20}
	rd := resp.NewReader(nc)
	for {
		args, err := rd.Next(true, lim)
		if err == nil && args == nil {
			if err = rd.Fill(lim); err == nil {
				continue
			}
		}
		if err != nil {
			return
		}
		cmd := make([]string, len(args))
		for i, a := range args {
			cmd[i] = string(a)
		}
		tg.mu.Lock()
		tg.cmds = append(tg.cmds, cmd)
		tg.mu.Unlock()
		io.WriteString(nc, tg.answer(cmd))
	}
}

// names is the commands received, by name, in order.
func (tg *target) names() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	var n []string
	for _, c := range tg.cmds {
		n = append(n, c[0])
	}
	return n
}

func ok([]string) string { return "+OK\r\n" }

func mover(st *keyspace.Store, n *cluster.Node, pool *peer.Pool, whole uint64) *cluster.Mover {
	return &cluster.Mover{Store: st, Node: n, Pool: pool, Whole: whole, Log: quiet,
		Dial: func(addr string, _ bool, timeout time.Duration) (net.Conn, error) {
			return net.DialTimeout("tcp", addr, timeout)
		}}
}

// TestMoveWhole: a key goes in one RESTORE-ASKING, after AUTH and SELECT
// as asked, while its slot's lock is held exclusively; it is dropped here
// once the target said OK, or kept with COPY.
func TestMoveWhole(t *testing.T) {
	n := newNode(t, "")
	slot := topology.KeySlot(kA)
	var unlockedDuringSend atomic.Bool
	tg := newTarget(t, func(cmd []string) string {
		if cmd[0] == "RESTORE-ASKING" {
			l := n.SlotLock(slot)
			if l.TryRLock() {
				l.RUnlock()
				unlockedDuringSend.Store(true)
			}
		}
		return "+OK\r\n"
	})
	var pool peer.Pool
	defer pool.CloseAll()
	st := newStore(t, false, kA, kB)
	var w keyspace.Writer
	m := &cluster.Migration{Addr: tg.addr, Timeout: time.Second, DB: 3, Replace: true,
		Auth: [][]byte{[]byte("AUTH"), []byte("pw")}, Keys: [][]byte{[]byte(kA)}}
	if err := mover(st, n, &pool, cluster.MaxWhole).Move(&w, m); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tg.names(), " "); got != "AUTH SELECT RESTORE-ASKING" {
		t.Errorf("the target received %s", got)
	}
	tg.mu.Lock()
	restore := tg.cmds[2]
	tg.mu.Unlock()
	if len(restore) != 5 || restore[1] != kA || restore[2] != "0" || restore[4] != "REPLACE" {
		t.Errorf("RESTORE-ASKING has %d arguments; key, ttl: %q", len(restore), restore[1:min(3, len(restore))])
	}
	// The payload is DUMP's: another key space restores it.
	other := newStore(t, false)
	if err := other.Restore(&w, []byte(kA), []byte(restore[3]), 0, false); err != nil {
		t.Errorf("the payload does not restore: %v", err)
	}
	if unlockedDuringSend.Load() {
		t.Error("the slot's lock could be taken shared while its key was sent")
	}
	if st.Present([]byte(kA)) || !st.Present([]byte(kB)) {
		t.Errorf("after the move: %s here %v, %s here %v", kA, st.Present([]byte(kA)), kB, st.Present([]byte(kB)))
	}
	if l := n.SlotLock(slot); !l.TryLock() {
		t.Error("the slot's lock is still held after the move")
	} else {
		l.Unlock()
	}

	// COPY keeps the key here.
	m = &cluster.Migration{Addr: tg.addr, Timeout: time.Second, Copy: true, Keys: [][]byte{[]byte(kB)}}
	if err := mover(st, n, &pool, cluster.MaxWhole).Move(&w, m); err != nil {
		t.Fatal(err)
	}
	if !st.Present([]byte(kB)) {
		t.Error("COPY dropped the key")
	}
}

// TestMoveChunked: a filter over Whole goes in CF.LOADCHUNKs, each after
// ASKING in cluster mode (the target imports the slot) and alone without.
func TestMoveChunked(t *testing.T) {
	for _, clustered := range []bool{true, false} {
		tg := newTarget(t, ok)
		var pool peer.Pool
		var n *cluster.Node
		if clustered {
			n = newNode(t, "")
		}
		st := newStore(t, false, kA)
		var w keyspace.Writer
		m := &cluster.Migration{Addr: tg.addr, Timeout: time.Second, Keys: [][]byte{[]byte(kA)}}
		if err := mover(st, n, &pool, 0).Move(&w, m); err != nil {
			t.Fatal(err)
		}
		pool.CloseAll()
		names := tg.names()
		loads := 0
		for i, name := range names {
			switch {
			case name == "CF.LOADCHUNK":
				loads++
				if clustered && (i == 0 || names[i-1] != "ASKING") {
					t.Errorf("cluster mode: CF.LOADCHUNK %d not after ASKING: %q", loads, names)
				}
			case name == "ASKING" && clustered:
			default:
				t.Errorf("cluster mode %v: unexpected %s in %q", clustered, name, names)
			}
		}
		if loads < 2 {
			t.Errorf("cluster mode %v: %d CF.LOADCHUNKs, want a header and a chunk at least", clustered, loads)
		}
		if st.Present([]byte(kA)) {
			t.Errorf("cluster mode %v: the key is still here", clustered)
		}
		if l := st.Inflight.Load(); l != 0 {
			t.Errorf("cluster mode %v: %d bytes of chunks still charged", clustered, l)
		}
	}
}

// TestMoveRefused: the target's refusals are MIGRATE's replies, and the
// key stays here.
func TestMoveRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		whole  uint64
		answer func([]string) string
		want   string
	}{
		{"restore refused", cluster.MaxWhole, func([]string) string { return "-BUSYKEY Target key name already exists.\r\n" },
			"ERR Target instance replied with error: BUSYKEY Target key name already exists."},
		{"header refused", 0, func(cmd []string) string {
			if cmd[0] == "CF.LOADCHUNK" {
				return "-ERR item exists\r\n"
			}
			return "+OK\r\n"
		}, "ERR Target instance replied with error: BUSYKEY Target key name already exists."},
		{"auth refused", cluster.MaxWhole, func([]string) string { return "-WRONGPASS invalid username-password pair\r\n" },
			"ERR Target instance replied with error: WRONGPASS invalid username-password pair"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := newTarget(t, tc.answer)
			var pool peer.Pool
			defer pool.CloseAll()
			st := newStore(t, false, kA)
			var w keyspace.Writer
			m := &cluster.Migration{Addr: tg.addr, Timeout: time.Second, Keys: [][]byte{[]byte(kA)}}
			if tc.name == "auth refused" {
				m.Auth = [][]byte{[]byte("AUTH"), []byte("wrong")}
			}
			err := mover(st, newNode(t, ""), &pool, tc.whole).Move(&w, m)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Move = %v, want %q", err, tc.want)
			}
			if !st.Present([]byte(kA)) {
				t.Error("a refused key was dropped")
			}
		})
	}
	// No target: IOERR, as Redis's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var pool peer.Pool
	m := &cluster.Migration{Addr: addr, Timeout: time.Second, Keys: [][]byte{[]byte(kA)}}
	if err := mover(newStore(t, false, kA), nil, &pool, cluster.MaxWhole).Move(new(keyspace.Writer), m); err != peer.ErrConnect {
		t.Errorf("Move to no target = %v, want %v", err, peer.ErrConnect)
	}
}
