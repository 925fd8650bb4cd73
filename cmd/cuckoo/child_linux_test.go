package main

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd's process receive SIGKILL when the test process
// ends, so that a test killed before its Cleanup ran (a timeout, a Ctrl-C)
// leaves no server behind.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
