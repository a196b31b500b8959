package testproc

import (
	"os/exec"
	"syscall"
)

// DieWithParent has the kernel kill the child if the test binary dies
// without running its cleanups (a test timeout, kill -9).
func DieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
