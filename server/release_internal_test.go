package server

import "testing"

// TestIdleRelease: a release is considered at the first check that finds
// connections closed since the last consideration and neither a command
// run nor a connection closed since the check before: once for a burst of
// closes, never while commands run or clients leave.
func TestIdleRelease(t *testing.T) {
	var r idleRelease
	check := func(cmds int64, want bool, wantLeft uint64) {
		t.Helper()
		left, ok := r.quietAfterCloses(cmds)
		if ok != want || left != wantLeft {
			t.Errorf("check at %d commands: %v with %d bytes left, want %v with %d", cmds, ok, left, want, wantLeft)
		}
	}
	check(0, false, 0) // quiet, nothing closed
	r.leave(16 << 10)
	r.leave(0)
	check(5, false, 0) // commands ran and clients left since the last check
	check(5, true, 2*connStack+16<<10)
	check(5, false, 0) // considered already
	r.leave(0)
	check(6, false, 0) // busy
	r.leave(0)
	check(7, false, 0) // still busy
	check(7, true, 2*connStack)
	r.leave(0)
	check(7, false, 0) // a client left since the last check: the burst may go on
	r.leave(0)
	check(7, false, 0) // it does
	check(7, true, 2*connStack)
}

// TestWorthReleasing: what clients left and the free pages must pass both
// releaseMin and 1/releaseShare of what a collection scans.
func TestWorthReleasing(t *testing.T) {
	for _, c := range []struct {
		left, free, scan uint64
		want             bool
	}{
		{0, 0, 0, false},
		{releaseMin - 1, 0, 0, false},
		{releaseMin / 2, releaseMin / 2, 0, true},
		{releaseMin, 0, 4 * releaseMin, true},
		{releaseMin, 0, 4*releaseMin + releaseShare, false},
		{1 << 20, 1 << 20, 100 << 20, false}, // a large heap: not worth a collection
		{30 << 20, 0, 100 << 20, true},
	} {
		if got := worthReleasing(c.left, c.free, c.scan); got != c.want {
			t.Errorf("worthReleasing(%d, %d, %d) = %v, want %v", c.left, c.free, c.scan, got, c.want)
		}
	}
}
