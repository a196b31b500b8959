//go:build !linux

package testproc

import "os/exec"

// DieWithParent is a no-op where the kernel offers no parent-death signal.
func DieWithParent(*exec.Cmd) {}
