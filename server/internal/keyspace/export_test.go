package keyspace

import "slices"

// Hooks for the black-box tests (package keyspace_test).

// SnapVisited reports whether the snapshot being written has taken key
// k's position (or found it missing).
func (st *Store) SnapVisited(k string) bool {
	st.snap.mu.Lock()
	defer st.snap.mu.Unlock()
	return slices.Contains(st.snap.queue[:st.snap.visits], k)
}
