package repl_test

import (
	"fmt"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/repl"
)

// A primary keeps no backlog until a replica connects, and WAIT with no
// replica counts none, at once or at its timeout.
func ExampleNode_Status() {
	n := repl.New(repl.Config{Store: keyspace.NewStore(0, 1<<30)})
	n.Feed([]byte{keyspace.OpReplPing}) // no replica ever listened: not kept
	st := n.Status()
	fmt.Println(st.Primary == nil, len(st.ID), st.Offset, st.BacklogActive, st.BacklogSize)
	fmt.Println(n.Wait(1, 10*time.Millisecond))
	// Output:
	// true 40 0 false 1048576
	// 0
}
