package cluster_test

import (
	"bytes"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// reply runs write on a RESP2 writer and prints the one reply it wrote.
func reply(t *testing.T, write func(w *resp.Writer)) string {
	t.Helper()
	w := resp.NewWriter(nil)
	write(w)
	r := resptest.NewReader(bytes.NewReader(w.Bytes()))
	v, err := r.ReadReply()
	if err != nil {
		t.Fatal(err)
	}
	if r.Buffered() != 0 {
		t.Fatalf("%d bytes after the reply", r.Buffered())
	}
	return resptest.Sprint(v)
}

// TestKeysInSlot: the key counts and key lists by slot, from the key
// space, bounded by count.
func TestKeysInSlot(t *testing.T) {
	var keys []string
	for i := range 40 {
		keys = append(keys, fmt.Sprintf("{%s}%d", migTag, i), fmt.Sprintf("other%d", i))
	}
	st := newStore(t, false, keys...)
	bySlot := map[int][]string{}
	for _, k := range keys {
		s := topology.KeySlot(k)
		bySlot[s] = append(bySlot[s], k)
	}
	for slot, want := range bySlot {
		if n := cluster.CountKeysInSlot(st, slot); n != len(want) {
			t.Errorf("CountKeysInSlot(%d) = %d, want %d", slot, n, len(want))
		}
		got := cluster.KeysInSlot(st, slot, int64(len(want)+1))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("KeysInSlot(%d) = %q, want %q", slot, got, want)
		}
	}
	if n := cluster.CountKeysInSlot(st, migSlot); n < 40 {
		t.Errorf("CountKeysInSlot(%d) = %d, want at least 40", migSlot, n)
	}
	for _, count := range []int64{0, 1, 7} {
		got := cluster.KeysInSlot(st, migSlot, count)
		if int64(len(got)) != count {
			t.Errorf("KeysInSlot(%d, %d) has %d keys", migSlot, count, len(got))
		}
		for _, k := range got {
			if topology.KeySlot(k) != migSlot {
				t.Errorf("KeysInSlot(%d) gave %q, of slot %d", migSlot, k, topology.KeySlot(k))
			}
		}
	}
	empty := newStore(t, false)
	if n, ks := cluster.CountKeysInSlot(empty, 0), cluster.KeysInSlot(empty, 0, 10); n != 0 || len(ks) != 0 {
		t.Errorf("an empty key space: %d, %q", n, ks)
	}
}

// TestWriteSlots: CLUSTER SLOTS's ranges in slot order, each with its
// primary and replicas; myself, left without an address by the topology,
// has the one the client reached it at. (RESP2 writes the empty map of
// further endpoints as an empty array.)
func TestWriteSlots(t *testing.T) {
	conf := testConfig(idA)
	conf.Nodes[0].Host, conf.Nodes[0].Port = "", 0
	topo := compile(t, conf)
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6390}
	got := reply(t, func(w *resp.Writer) { cluster.WriteSlots(w, topo, local) })
	want := fmt.Sprintf("[[0 8191 [127.0.0.1 6390 %s []] [10.0.0.3 7003 %s []]] [8192 %d [10.0.0.2 7002 %s []]]]", idA, idC, lastB, idB)
	if got != want {
		t.Errorf("CLUSTER SLOTS = %s\nwant %s", got, want)
	}
	// Without the client's address, what the topology has.
	got = reply(t, func(w *resp.Writer) { cluster.WriteSlots(w, topo, nil) })
	if !strings.HasPrefix(got, "[[0 8191 [ 0 "+idA) {
		t.Errorf("CLUSTER SLOTS without an address = %s", got)
	}
}

// TestWriteNodes: CLUSTER NODES's lines, myself's with its migrating
// slot, a replica's with its primary.
func TestWriteNodes(t *testing.T) {
	got := reply(t, func(w *resp.Writer) { cluster.WriteNodes(w, compile(t, testConfig(idA)), nil) })
	want := strings.Join([]string{
		fmt.Sprintf("%s 10.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-8191 [%d->-%s]", idA, migSlot, idB),
		fmt.Sprintf("%s 10.0.0.2:7002@17002 master - 0 0 1 connected 8192-%d", idB, lastB),
		fmt.Sprintf("%s 10.0.0.3:7003@17003 slave %s 0 0 1 connected", idC, idA),
	}, "\n") + "\n"
	if got != want {
		t.Errorf("CLUSTER NODES =\n%s\nwant\n%s", got, want)
	}
	// The importing side shows its slot.
	got = reply(t, func(w *resp.Writer) { cluster.WriteNodes(w, compile(t, testConfig(idB)), nil) })
	if want := fmt.Sprintf(" [%d-<-%s]\n", migSlot, idA); !strings.Contains(got, want) {
		t.Errorf("CLUSTER NODES on the importer lacks %q:\n%s", want, got)
	}
}

// TestWriteInfo: CLUSTER INFO's state is ok only when every slot has an
// owner.
func TestWriteInfo(t *testing.T) {
	got := reply(t, func(w *resp.Writer) { cluster.WriteInfo(w, compile(t, testConfig(idA))) })
	for _, line := range []string{"cluster_state:fail\r\n", fmt.Sprintf("cluster_slots_assigned:%d\r\n", lastB+1),
		"cluster_known_nodes:3\r\n", "cluster_size:2\r\n", "cluster_my_epoch:1\r\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("CLUSTER INFO lacks %q:\n%s", line, got)
		}
	}
	conf := testConfig(idA)
	conf.Nodes[1].Slots = [][2]int{{8192, topology.Slots - 1}}
	if got := reply(t, func(w *resp.Writer) { cluster.WriteInfo(w, compile(t, conf)) }); !strings.Contains(got, "cluster_state:ok\r\n") {
		t.Errorf("CLUSTER INFO with every slot owned:\n%s", got)
	}
}

// TestWriteHelp: CLUSTER HELP is status lines, the first naming the
// command.
func TestWriteHelp(t *testing.T) {
	got := reply(t, cluster.WriteHelp)
	if !strings.HasPrefix(got, "[CLUSTER <subcommand>") || !strings.Contains(got, "CUCKOO.CLUSTER SETCONFIG") {
		t.Errorf("CLUSTER HELP = %s", got)
	}
}
