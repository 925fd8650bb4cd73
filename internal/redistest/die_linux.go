package redistest

import (
	"os/exec"
	"syscall"
)

// DieWithTest makes cmd's process receive SIGKILL when the test process
// ends, so that a test killed before its Cleanup ran (a timeout, a Ctrl-C)
// leaves no server behind.
func DieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
