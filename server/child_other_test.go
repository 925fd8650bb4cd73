//go:build !linux

package server_test

import "os/exec"

// dieWithTest is a no-op where the kernel has no parent-death signal.
func dieWithTest(cmd *exec.Cmd) {}
