//go:build !linux

package redistest

import "os/exec"

// DieWithTest does nothing where the kernel has no parent-death signal.
func DieWithTest(cmd *exec.Cmd) {}
