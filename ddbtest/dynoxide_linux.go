package ddbtest

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the Dynoxide process if the test
// process dies without stopping it (a test binary killed at its timeout).
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
