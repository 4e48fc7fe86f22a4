//go:build unix

package testenv

import (
	"os/exec"
	"syscall"
	"testing"
)

// Start starts cmd, a server of the test's own, and kills it when the test
// ends, after a SIGCONT should the test have frozen it (SIGSTOP).
func Start(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}
