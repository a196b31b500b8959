package sqstest

import (
	"os/exec"
	"syscall"
)

// setProcAttr has the kernel kill the emulator if the test binary dies
// without running its cleanups (a test timeout, kill -9).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
